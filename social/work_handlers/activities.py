"""What each incoming activity does here, one small function a type (Mastodon's
app/lib/activitypub/activity/*.rb): run by the inbox's job (inbox.py) once the activity is
verified, its actor is the key's owner and its id is seen for the first time.

Every write goes through the site's own write path with the remote account as the actor
(graph, likes, reposts, posting: their resolve and write steps), so an incoming follow,
like, repost or post is stored, counted, told and fanned out exactly as a local one; the
resolve step refuses (a block, a post gone) before anything is written. An activity that
is not for us, or not allowed, raises Dropped with the counter it is counted under.

- Follow (of a local account): written at once, an Accept sent back (a Reject across
  a block).
- Undo{Follow, Like, Announce}: the follow, like or repost taken back.
- Accept{Follow}, Reject{Follow} (answers to ours): nothing to mark (our follows are
  written when sent); our follow removed.
- Like, Announce (of a local post, or a remote one we keep): a like, a repost.
- Create{Note} (public, and concerning someone here): a post by the remote account.
- Delete (a note, a repost, the actor itself): the post deleted, the repost undone, the
  account deleted as its owner deletes one here.
- Update{Person}, Update{Note}: the account stored again; the note's content replaced.

A note is kept when it concerns someone here: its author has a follower here, it answers
a post we keep, or it mentions a local account (one that does not block its author). A
note not addressed to the public (a followers-only or direct one) is dropped and counted:
until audiences exist nothing could keep it from readers it was not for.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from social import work
from social.federation import activities as ap
from social.federation.actor_documents import ACTOR_TYPES, InvalidActor, parse_actor
from social.federation.deliver import deliver
from social.federation.documents import AS_PROFILE, actor_id
from social.repository import NotAllowed, PostNotFound, Repository, User, UserNotFound
from social.repository.federation.actors import RemoteActor
from social.repository.federation.objects import note_fields
from social.repository.posts.posting import ResolvedPost


class Dropped(Exception):
    """The activity is not applied: `reason` names its counter, `detail` says why."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True)
class Context:
    """One verified activity: the repository, its actor (the key's owner) and the JSON."""

    repo: Repository
    actor: RemoteActor
    activity: Mapping[str, Any]

    @property
    def user(self) -> User:
        """The actor as the write path's steps take an account (they read its id)."""
        return User(id=self.actor.id, username=self.actor.username, domain=self.actor.domain)

    @property
    def object(self) -> Any:
        return self.activity.get("object")


Applier = Callable[[Context], str]
APPLIERS: dict[str, Applier] = {}


def applies(kind: str) -> Callable[[Applier], Applier]:
    def register(function: Applier) -> Applier:
        APPLIERS[kind] = function
        return function

    return register


def apply(repo: Repository, actor: RemoteActor, activity: Mapping[str, Any]) -> str:
    """Apply a verified activity of actor's; return what it did (a counter's name), or
    raise Dropped."""
    kind = str(activity.get("type"))
    applier = APPLIERS.get(kind)
    if applier is None:
        raise Dropped("unsupported", f"{kind[:40]} activities are not taken")
    return applier(Context(repo, actor, activity))


def post_for(repo: Repository, uri: str | None) -> int | None:
    """Our post id for an object id: a local post's, or a remote note or repost we keep
    (not deleted); None for any other."""
    if (local := ap.local_post(uri)) is not None:
        return local
    found = repo.remote_objects.find(uri) if uri else None
    return found.post_id if found is not None and not found.deleted else None


def queue_delivery(inbox: str, activity: Mapping[str, Any], signer: int) -> None:
    """Queue activity's delivery to inbox, signed by the local account signer
    (deliver.py); a full queue retries this job later."""
    try:
        deliver(activity, signer=signer, inboxes=[inbox])
    except work.QueueFull as error:
        raise work.Retry("the deliver queue is full") from error


# Follows.


def answer_follow(ctx: Context, local_id: int, kind: str) -> None:
    """Send the actor an Accept or Reject (kind) of its Follow, from local_id."""
    follow = {
        "id": ctx.activity["id"],
        "type": "Follow",
        "actor": ctx.actor.uri,
        "object": actor_id(local_id),
    }
    answer = {
        "@context": AS_PROFILE,
        "id": f"{actor_id(local_id)}#{kind.lower()}s/follows/{ctx.actor.id}",
        "type": kind,
        "actor": actor_id(local_id),
        "object": follow,
    }
    queue_delivery(ctx.actor.inbox, answer, local_id)


def followed_account(ctx: Context, target: Any) -> int:
    """The local account a Follow names (target: its `object`), or Dropped."""
    local_id = ap.local_actor(ap.object_id(target))
    if local_id is None:
        raise Dropped("not_ours", "the follow is of no account here")
    account = ctx.repo.users.get_user(local_id)
    if account is None or account.is_suspended:
        raise Dropped("no_account", "the followed account does not exist or is hidden")
    return local_id


@applies("Follow")
def follow(ctx: Context) -> str:
    """Follow a local account: written at once (locked accounts come later), accepted."""
    local_id = followed_account(ctx, ctx.object)
    graph = ctx.repo.graph
    try:
        graph.resolve_follow(ctx.user, local_id)
    except NotAllowed:  # a block, either way
        answer_follow(ctx, local_id, "Reject")
        return "rejected:Follow"
    except UserNotFound:
        raise Dropped("no_account", "the followed account is gone") from None
    graph.write_follow(ctx.user, local_id)  # None: a follow again, accepted again
    answer_follow(ctx, local_id, "Accept")
    return "applied:Follow"


def own_follow(ctx: Context) -> int:
    """The local follower whose Follow of the actor an Accept or Reject answers, or
    Dropped (an answer to a follow we did not send)."""
    inner = ctx.object
    if ap.kind_of(inner) != "Follow":
        raise Dropped("unsupported", "the answer does not embed the Follow it answers")
    follower = ap.local_actor(ap.actor_of(inner))
    if follower is None or ap.object_id(inner.get("object")) != ctx.actor.uri:
        raise Dropped("not_ours", "the Follow answered is not ours of this actor")
    return follower


@applies("Accept")
def accept(ctx: Context) -> str:
    """Our follow of the actor accepted: it is written when sent, so nothing changes."""
    own_follow(ctx)
    return "applied:Accept"


@applies("Reject")
def reject(ctx: Context) -> str:
    """Our follow of the actor refused: taken back."""
    ctx.repo.graph.unfollow(own_follow(ctx), ctx.actor.id)
    return "applied:Reject"


# Likes and reposts.


@applies("Like")
def like(ctx: Context) -> str:
    """Like a post we keep (a local one, or a remote one)."""
    post_id = post_for(ctx.repo, ap.object_id(ctx.object))
    if post_id is None:
        raise Dropped("unknown_object", "the liked post is none we keep")
    likes = ctx.repo.likes
    try:
        likes.write_like(ctx.user, likes.resolve_like(ctx.user, post_id))
    except PostNotFound:
        raise Dropped("unknown_object", "the liked post is gone") from None
    except NotAllowed:
        raise Dropped("refused", "a block between the actor and the author") from None
    return "applied:Like"


@applies("Announce")
def announce(ctx: Context) -> str:
    """Repost a post we keep; the Announce's id is kept for its Undo."""
    if not ap.is_public(ctx.activity):
        raise Dropped("not_public", "the Announce is not public")
    post_id = post_for(ctx.repo, ap.object_id(ctx.object))
    if post_id is None:  # Mastodon fetches it; we keep only what concerns someone here
        raise Dropped("unknown_object", "the reposted post is none we keep")
    reposts = ctx.repo.reposts
    try:
        found = reposts.resolve_repost(ctx.user, post_id)
    except PostNotFound:
        raise Dropped("unknown_object", "the reposted post is gone") from None
    except NotAllowed:
        raise Dropped("refused", "a block, or the actor's own post") from None
    if isinstance(found, int):
        repost_id = found
    else:
        delivery = reposts.write_repost(found)
        if delivery is not None:
            ctx.repo.fanouts.deliver(delivery)
        repost_id = found.id
    ctx.repo.remote_objects.index(str(ctx.activity["id"]), repost_id)
    return "applied:Announce"


@applies("Undo")
def undo(ctx: Context) -> str:
    """Take back the actor's Follow, Like or Announce."""
    inner = ctx.object
    if isinstance(inner, str):  # an Announce named by its id alone
        found = ctx.repo.remote_objects.find(inner)
        if found is None or found.repost_of is None or found.author_id != ctx.actor.id:
            raise Dropped("unsupported", "an Undo of an id we do not know")
        ctx.repo.reposts.unrepost(ctx.actor.id, found.post_id)
        return "applied:Undo"
    if ap.actor_of(inner) != ctx.actor.uri:
        raise Dropped("not_own", "the undone activity is not the actor's")
    kind = ap.kind_of(inner)
    if kind == "Follow":
        local_id = ap.local_actor(ap.object_id(inner.get("object")))
        if local_id is None:
            raise Dropped("not_ours", "the undone follow is of no account here")
        ctx.repo.graph.unfollow(ctx.actor.id, local_id)
    elif kind in ("Like", "Announce"):
        post_id = post_for(ctx.repo, ap.object_id(inner.get("object")))
        if post_id is None:
            raise Dropped("unknown_object", "the post is none we keep")
        if kind == "Like":
            ctx.repo.likes.unlike(ctx.actor.id, post_id)
        else:
            ctx.repo.reposts.unrepost(ctx.actor.id, post_id)
    else:
        raise Dropped("unsupported", f"an Undo of {kind[:40] or 'an unknown type'}")
    return f"applied:Undo:{kind}"


# Notes.


@applies("Create")
def create(ctx: Context) -> str:
    """Keep a public note that concerns someone here, as a post of the remote account."""
    if ap.kind_of(ctx.object) not in ap.NOTE_TYPES:
        raise Dropped("unsupported", "a Create of something other than a note")
    note = parsed_note(ctx)
    if not note.public:
        raise Dropped("not_public", "a followers-only or direct note")
    objects = ctx.repo.remote_objects
    if objects.find(note.uri) is not None:
        return "duplicate"
    post = resolved_post(ctx, note)
    claim = objects.claim(note.uri, post.id)
    if claim.post_id != post.id:
        if claim.written:
            return "duplicate"
        post = replace(post, id=claim.post_id)  # a run cut short claimed this id for it
    ctx.repo.fanouts.deliver(ctx.repo.posts.write_post(post))
    return "applied:Create"


def parsed_note(ctx: Context) -> ap.NoteDocument:
    try:
        return ap.parse_note(ctx.object, actor=ctx.actor.uri)
    except ap.InvalidObject as error:
        raise Dropped("invalid_object", error.reason) from None


def resolved_post(ctx: Context, note: ap.NoteDocument) -> ResolvedPost:
    """The note settled as a post of the actor's (posting's resolve step: its id, reach,
    the parent it answers, the local accounts it mentions and which of them are told, all
    by the local rules), or Dropped when it concerns no one here or a block refuses it."""
    repo = ctx.repo
    parent = post_for(repo, note.in_reply_to)
    names = mentioned_names(repo, note)
    # The step reads mentions from a text: given the local names alone, it looks them
    # up and leaves out those who block the author, as for a local post.
    text = " ".join(f"@{name}" for name in names)
    now = int(time.time())
    ts = min(note.published or now, now)
    try:
        post = repo.posts.resolve_post(
            ctx.user, text, at=ts, reply_to=parent, spoiler_text=note.summary,
            sensitive=note.sensitive,
        )  # fmt: skip
    except PostNotFound:  # the parent went meanwhile: kept as a reply to a post we lack
        parent = None
        post = repo.posts.resolve_post(
            ctx.user, text, at=ts, spoiler_text=note.summary, sensitive=note.sensitive
        )
    except NotAllowed:
        raise Dropped("refused", "a block between the author and the post it answers") from None
    if parent is None and not post.told and not post.reach.followers:
        raise Dropped(
            "unconcerned", "no one here follows its author, and it answers or names no one here"
        )
    fields = {**post.fields, **note_fields(note)}
    fields.pop("tags", None)
    if note.hashtags:
        fields["tags"] = " ".join(note.hashtags)
    if note.in_reply_to and parent is None:
        fields["in_reply_to_uri"] = note.in_reply_to
    return replace(post, body=note.text, fields=fields)


def mentioned_names(repo: Repository, note: ap.NoteDocument) -> list[str]:
    """The names of the local accounts (shown ones) note mentions."""
    names = []
    for href in note.mentions:
        local_id = ap.local_actor(href)
        account = repo.users.get_user(local_id) if local_id is not None else None
        if account is not None and not account.is_suspended:
            names.append(account.username)
    return names


# Deletes and updates.


@applies("Delete")
def delete(ctx: Context) -> str:
    """Delete the actor's note (or undo its repost), or the actor's account itself."""
    target = ap.object_id(ctx.object)
    if target is None:
        raise Dropped("invalid_object", "the Delete names no object")
    if target == ctx.actor.uri:
        with contextlib.suppress(UserNotFound):  # deleted already
            ctx.repo.accounts.delete_account(ctx.user)
        return "applied:Delete:actor"
    if not ap.same_host(target, ctx.actor.uri):
        raise Dropped("foreign_object", "the deleted object is not on the actor's server")
    found = ctx.repo.remote_objects.find(target)
    if found is None or found.deleted:
        return "ignored"  # never kept, or deleted already
    if found.author_id != ctx.actor.id:
        raise Dropped("not_own", "the deleted post is not the actor's")
    if found.repost_of is not None:
        ctx.repo.reposts.unrepost(ctx.actor.id, found.post_id)
    else:
        ctx.repo.posts.delete_own_post(ctx.actor.id, found.post_id)
    return "applied:Delete"


@applies("Update")
def update(ctx: Context) -> str:
    """Store the actor again from its new document, or replace its note's content."""
    kind = ap.kind_of(ctx.object)
    if kind in ACTOR_TYPES:
        if ap.object_id(ctx.object) != ctx.actor.uri:
            raise Dropped("not_own", "the updated actor is not the activity's actor")
        try:
            document = parse_actor(ctx.object, fetched_from=ctx.actor.uri, domain=ctx.actor.domain)
        except InvalidActor as error:
            raise Dropped("invalid_object", error.reason) from None
        ctx.repo.remote_actors.upsert(document)
        return "applied:Update:actor"
    if kind not in ap.NOTE_TYPES:
        raise Dropped("unsupported", f"an Update of {kind[:40] or 'an unknown type'}")
    note = parsed_note(ctx)
    found = ctx.repo.remote_objects.find(note.uri)
    if found is None or found.deleted or found.repost_of is not None:
        return "ignored"
    if found.author_id != ctx.actor.id:
        raise Dropped("not_own", "the updated note is not the actor's")
    ctx.repo.remote_objects.edit_note(found.post_id, ctx.actor.id, note)
    return "applied:Update:note"
