"""Domain exceptions the repository raises; views turn them into form errors or 4xx."""


class RepositoryError(Exception):
    """Base for every domain error."""


class UsernameTaken(RepositoryError):
    """The username (ignoring case) already belongs to someone."""


class UserNotFound(RepositoryError):
    """No user has that id or name."""


class CannotFollowSelf(RepositoryError):
    """A user tried to follow themselves."""


class PostNotFound(RepositoryError):
    """No post has that id."""


class NotAllowed(RepositoryError):
    """The acting user may not do this (suspended, own post, ...)."""


class Refused(NotAllowed):
    """A block between the actor and the account acted on refuses a follow, reply, like or
    repost (visibility.interaction_refused); the message says which way."""


class PostPending(RepositoryError):
    """A retried form submission whose first attempt claimed a post id but has not stored
    the post (yet): it may still be on its way, or it died before writing anything."""
