"""The deliver queue's `fanout` handler: one of our accounts acted (a page queued it,
social/federation/outgoing.py); here its activity is built and one delivery queued per
distinct inbox that should hear of it (deliver.py). Who hears what is Mastodon's:

| action | activity | to the inboxes of |
|---|---|---|
| post | Create{Note} | remote followers, accounts mentioned, author answered |
| delete a post | Delete{Tombstone} | the same |
| repost | Announce | remote followers, the remote author reposted |
| take a repost back | Undo{Announce} | the same |
| like, unlike (a remote post) | Like, Undo{Like} | its author (personal inbox) |
| follow, unfollow (a remote account) | Follow, Undo{Follow} | that account |
| block, unblock | (Undo{Follow},) Block; Undo{Block} | that account |
| profile change | Update{Person} | remote followers |

Followers, mentions and answered authors are reached at their server's shared inbox when
it has one; the rest at the account's own inbox, as Mastodon addresses them.

Each runs on what is true when it runs, not when it was queued: a like taken back before
its fan-out ran sends nothing, and neither does its unlike (nothing was sent to undo).
An activity that may be undone is remembered by id once sent (DeliveryStore.sent); its
Undo names that id and forgets it. A job run twice queues its deliveries twice, and the
receivers drop the second by the activity's id (at least once, as everywhere here).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from social import work
from social.federation import documents as doc
from social.federation import our_activities as ours
from social.federation import outgoing
from social.federation.deliver import FANOUT, QUEUE, deliver
from social.repository import (
    ANONYMOUS,
    WITH_HIDDEN,
    Listed,
    Post,
    Repository,
    User,
    get_repository,
)
from social.repository.federation.actors import RemoteActor
from social.repository.federation.deliveries import DeliveryStore
from social.templating.links import profile_url


@dataclass(frozen=True)
class Sending:
    """One activity and where it goes (prefer shared inboxes: DeliveryStore)."""

    activity: dict[str, Any]
    inboxes: frozenset[str]


@dataclass(frozen=True)
class Act:
    """One action as the fan-out reads it: the repository, the local account that acted,
    the object's id (a post's or an account's; 0 for none) and when (ms)."""

    repo: Repository
    user: User
    obj: int
    at: int

    @property
    def actor(self) -> str:
        return doc.actor_id(self.user.id)

    @property
    def deliveries(self) -> DeliveryStore:
        return self.repo.federation_deliveries


Fanout = Callable[[Act], list[Sending]]
FANOUTS: dict[str, Fanout] = {}


def fans_out(action: str) -> Callable[[Fanout], Fanout]:
    def register(function: Fanout) -> Fanout:
        FANOUTS[action] = function
        return function

    return register


@work.handler(QUEUE, FANOUT)
def fan_out(payload: dict[str, str]) -> None:
    """Build payload's action's activities and queue their deliveries."""
    action = payload.get("action", "")
    function = FANOUTS.get(action)
    numbers = [payload.get(name, "0") or "0" for name in ("actor", "object", "at")]
    if function is None or not all(text.isdigit() for text in numbers):
        raise work.Permanent(f"not a fan-out: {payload!r}"[:300])
    actor, obj, at = (int(text) for text in numbers)
    repo = get_repository()
    user, _ = repo.federation_keys.account_and_public_key(actor)
    if user is None or user.domain or user.is_suspended:
        return  # no local account to speak for (gone, or staff stopped it)
    for sending in function(Act(repo, user, obj, at)):
        if sending.inboxes:
            try:
                deliver(sending.activity, signer=user.id, inboxes=sorted(sending.inboxes))
            except work.QueueFull as error:  # those queued stay: a retry may repeat them
                raise work.Retry("the deliver queue is full") from error


# --- Reading ------------------------------------------------------------------------------


def load_post(repo: Repository, post_id: int) -> Post | None:
    """post_id as the read path loads it, hidden or not (the caller decides), or None."""
    if post_id <= 0:
        return None
    return repo.reader.page(Listed((post_id,)), ANONYMOUS, 1, 1, shows=WITH_HIDDEN).loaded.get(
        post_id
    )


def remote_ids(act: Act, accounts: Iterable[int], posts: Iterable[int]) -> dict[str, str]:
    """Our addresses of the remote accounts and posts among these -> their own ids
    (our_activities.with_ids), and our pages of those accounts -> their pages on their
    servers (our_activities.with_links: a mention in a post's HTML). Two round trips at
    most."""
    found = act.deliveries.remote_accounts(set(accounts))
    ids = {doc.actor_id(i): actor.uri for i, actor in found.items()}
    ids.update(
        {doc.absolute(path): actor.profile_url
         for actor in found.values() if (path := profile_url(actor.username))}
    )  # fmt: skip
    ids.update({doc.post_id(i): uri for i, uri in act.deliveries.object_ids(set(posts)).items()})
    return ids


def conversation_inboxes(act: Act, post: Post) -> frozenset[str]:
    """Where a post of act.user's goes: its remote followers' inboxes, and those of the
    remote accounts it mentions and of the remote author it answers (not those blocked)."""
    named = {user_id for _name, user_id in post.mentions}
    parent = load_post(act.repo, post.reply_to) if post.reply_to else None
    if parent is not None:
        named.add(parent.author_id)
    blocked = {i for i in named if act.deliveries.relation(act.user.id, "blocks", i) is not None}
    accounts = act.deliveries.remote_accounts(named - blocked)
    inboxes = {actor.delivery_inbox for actor in accounts.values()}
    return frozenset(inboxes | act.deliveries.follower_inboxes(act.user.id))


def own_post(act: Act, *, deleted: bool) -> Post | None:
    """act.obj as a post of act.user's (a repost or not), deleted or standing as asked."""
    post = load_post(act.repo, act.obj)
    if post is None or post.author_id != act.user.id or post.is_deleted != deleted:
        return None
    return post


# --- Posts ----------------------------------------------------------------------------


@fans_out(outgoing.CREATE)
def create(act: Act) -> list[Sending]:
    post = own_post(act, deleted=False)
    if post is None or post.repost_of is not None:
        return []
    mentioned = [user_id for _name, user_id in post.mentions]
    ids = remote_ids(act, mentioned, [post.reply_to] if post.reply_to else [])
    activity = ours.with_ids(doc.create(post), ids)
    # A mention links the account's page on its server, as Mastodon's HTML does (its
    # client opens a mention in the app by that link; our inbox makes a link to one of
    # our accounts our own page: templating/remote.py).
    activity["object"]["content"] = ours.with_links(activity["object"]["content"], ids)
    return [Sending(activity, conversation_inboxes(act, post))]


@fans_out(outgoing.DELETE)
def delete(act: Act) -> list[Sending]:
    post = own_post(act, deleted=True)
    if post is None or post.repost_of is not None:
        return []
    activity = ours.delete_note(act.actor, doc.post_id(post.id))
    return [Sending(activity, conversation_inboxes(act, post))]


# --- Reposts --------------------------------------------------------------------------


def announce_of(act: Act, repost: Post, original: Post) -> tuple[dict[str, Any], frozenset[str]]:
    """The Announce of repost (of original) and its inboxes: act.user's remote followers
    and original's author when remote."""
    ids = remote_ids(act, [original.author_id], [original.id])
    activity = ours.with_ids(doc.announce(replace(repost, original=original)), ids)
    author = act.deliveries.remote_accounts([original.author_id]).get(original.author_id)
    inboxes = act.deliveries.follower_inboxes(act.user.id)
    if author is not None:
        inboxes.add(author.delivery_inbox)
    return activity, frozenset(inboxes)


@fans_out(outgoing.REPOST)
def repost(act: Act) -> list[Sending]:
    post = own_post(act, deleted=False)
    if post is None or post.repost_of is None:
        return []  # taken back already (its hash is gone), or no repost
    original = load_post(act.repo, post.repost_of)
    if original is None or original.is_hidden:
        return []
    activity, inboxes = announce_of(act, post, original)
    act.deliveries.record_sent(act.user.id, f"announce:{original.id}", str(post.id))
    return [Sending(activity, inboxes)]


@fans_out(outgoing.UNREPOST)
def unrepost(act: Act) -> list[Sending]:
    original = load_post(act.repo, act.obj)
    if original is not None and original.repost_of is not None:  # a repost's id: its post
        original = load_post(act.repo, original.repost_of)
    if original is None:
        return []
    about = f"announce:{original.id}"
    repost_id = act.deliveries.sent(act.user.id, about)
    if repost_id is None or act.deliveries.relation(act.user.id, "reposts", original.id):
        return []  # never announced, or reposted again since
    gone = Post(id=int(repost_id), author_id=act.user.id, author_name="", time=0, body="",
                repost_of=original.id)  # fmt: skip
    activity, inboxes = announce_of(act, gone, original)
    del activity["published"]  # not known any more; the id says which Announce
    act.deliveries.forget_sent(act.user.id, about)
    return [Sending(ours.undo(activity), inboxes)]


# --- Likes ----------------------------------------------------------------------------


def liked_post(act: Act) -> tuple[Post, str, str] | None:
    """The remote post act.obj stands for (a repost's id: the post it shares), its id on
    its server and its author's inbox; None for a post of ours (no one to tell)."""
    post = load_post(act.repo, act.obj)
    if post is not None and post.repost_of is not None:
        post = load_post(act.repo, post.repost_of)
    if post is None:
        return None
    uri = act.deliveries.object_ids([post.id]).get(post.id)
    author = act.deliveries.remote_accounts([post.author_id]).get(post.author_id)
    if uri is None or author is None:
        return None
    return post, uri, author.inbox


@fans_out(outgoing.LIKE)
def like(act: Act) -> list[Sending]:
    found = liked_post(act)
    if found is None:
        return []
    post, uri, inbox = found
    if act.deliveries.relation(act.user.id, "likes", post.id) is None:
        return []  # unliked since
    activity = ours.like(act.actor, uri, post=post.id, at=act.at)
    act.deliveries.record_sent(act.user.id, f"like:{post.id}", activity["id"])
    return [Sending(activity, frozenset([inbox]))]


@fans_out(outgoing.UNLIKE)
def unlike(act: Act) -> list[Sending]:
    found = liked_post(act)
    if found is None:
        return []
    post, uri, inbox = found
    about = f"like:{post.id}"
    sent = act.deliveries.sent(act.user.id, about)
    if sent is None or act.deliveries.relation(act.user.id, "likes", post.id) is not None:
        return []  # never sent, or liked again since
    like = ours.rebuilt("Like", sent, act.actor, uri)
    act.deliveries.forget_sent(act.user.id, about)
    return [Sending(ours.undo(like), frozenset([inbox]))]


# --- Accounts -------------------------------------------------------------------------


def remote_account(act: Act) -> RemoteActor | None:
    """act.obj as a remote account (not suspended), or None."""
    return act.deliveries.remote_accounts([act.obj]).get(act.obj)


def undo_sent(act: Act, kind: str, target: str, inbox: str) -> list[Sending]:
    """The Undo of act.user's Follow or Block of target (act.obj) when one was sent."""
    about = f"{kind.lower()}:{act.obj}"
    sent = act.deliveries.sent(act.user.id, about)
    if sent is None:
        return []
    act.deliveries.forget_sent(act.user.id, about)
    return [Sending(ours.undo(ours.rebuilt(kind, sent, act.actor, target)), frozenset([inbox]))]


@fans_out(outgoing.FOLLOW)
def follow(act: Act) -> list[Sending]:
    account = remote_account(act)
    if account is None or act.deliveries.relation(act.user.id, "following", act.obj) is None:
        return []
    activity = ours.follow(act.actor, account.uri, target_id=account.id, at=act.at)
    act.deliveries.record_sent(act.user.id, f"follow:{account.id}", activity["id"])
    return [Sending(activity, frozenset([account.inbox]))]


@fans_out(outgoing.UNFOLLOW)
def unfollow(act: Act) -> list[Sending]:
    account = remote_account(act)
    if account is None or act.deliveries.relation(act.user.id, "following", act.obj) is not None:
        return []
    return undo_sent(act, "Follow", account.uri, account.inbox)


@fans_out(outgoing.BLOCK)
def block(act: Act) -> list[Sending]:
    account = remote_account(act)
    if account is None or act.deliveries.relation(act.user.id, "blocks", act.obj) is None:
        return []
    # A block ends our follow (blocks.py): its Undo first, as Mastodon's BlockService
    # unfollows; their follow of us ends at their server on the Block.
    undone = undo_sent(act, "Follow", account.uri, account.inbox)
    activity = ours.block(act.actor, account.uri, target_id=account.id, at=act.at)
    act.deliveries.record_sent(act.user.id, f"block:{account.id}", activity["id"])
    return [*undone, Sending(activity, frozenset([account.inbox]))]


@fans_out(outgoing.UNBLOCK)
def unblock(act: Act) -> list[Sending]:
    account = remote_account(act)
    if account is None or act.deliveries.relation(act.user.id, "blocks", act.obj) is not None:
        return []
    return undo_sent(act, "Block", account.uri, account.inbox)


@fans_out(outgoing.UPDATE)
def update(act: Act) -> list[Sending]:
    person = doc.person(act.user, act.repo.federation_keys.for_account(act.user.id).public_pem)
    activity = ours.update_person(person, at=act.at)
    return [Sending(activity, frozenset(act.deliveries.follower_inboxes(act.user.id)))]
