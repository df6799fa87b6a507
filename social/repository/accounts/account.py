"""Owning your account: changing your password, deleting your account, and purging deleted
accounts once their grace period is over.

Deleting is in two steps. At once (delete_account): the account is marked deleted (hidden
everywhere a suspended one is: profile 404, posts gone from every feed at read time), it
is logged out everywhere and can no longer log in, its follows are removed on both sides,
its likes are taken back, and the deletion is in the staff audit log. Its name stays
taken. After keys.DELETED_ACCOUNT_GRACE_DAYS, `manage.py repair` purges it
(purge_deleted_accounts): the posts' text, the account's lists and the name go; the user
hash shrinks to a tombstone (`status` deleted) so ids left in other people's lists stay
dangling and are skipped.
"""

from __future__ import annotations

from typing import Unpack, cast

from django.utils.translation import gettext_noop

from social import keys

from ..base import (
    STATUS_DELETED,
    Client,
    Members,
    Pipe,
    RepositoryBase,
    StoreSettings,
    as_int,
    decode_hash,
    now,
    queue_hiding,
    s,
)
from ..clients.oauth import Authorisation, OAuthStore
from ..errors import NotAllowed, UserNotFound
from ..models import User
from ..moderation.audit import AuditDraft, AuditStore
from ..posts.media_files import forget_account
from ..posts.posting import queue_post_deletion
from ..posts.reposts import RepostStore
from .emails import EmailStore
from .name_words import queue_name_words
from .profiles import ProfileStore
from .users import UserStore

BATCH = 1000  # ids read or written per round trip when walking a user's lists
PURGED = "Its author's account was deleted."  # the reason on a purged account's posts
UNUSABLE_PASSWORD = "!deleted"  # no hasher accepts it: the account cannot log in


class AccountStore(RepositoryBase):
    """What a user does to their own account."""

    def __init__(
        self,
        client: Client,
        *,
        audit: AuditStore,
        users: UserStore,
        reposts: RepostStore,
        oauth: OAuthStore,
        emails: EmailStore,
        profiles: ProfileStore,
        **config: Unpack[StoreSettings],
    ) -> None:
        super().__init__(client, **config)
        self.profiles = profiles
        self.audit = audit
        self.emails = emails
        self.users = users
        self.reposts = reposts
        self.oauth = oauth

    def change_password(self, user_id: int, password_hash: str) -> str:
        """Store a new password hash and log out every other device: return the new auth
        secret (the caller's device keeps working with it). One round trip after one read.
        """
        old = s(self.r.hget(keys.user(user_id), "auth"))
        pipe = self._pipe()
        pipe.hset(keys.user(user_id), "password", password_hash)
        secret = self.users.queue_secret_rotation(pipe, user_id, old)
        pipe.execute()
        return secret

    def reset_password(self, user_id: int, password_hash: str) -> list[Authorisation]:
        """Store a new password hash after a reset by mail link, as Mastodon does: every
        device logged out and every client API token revoked (whoever read the mail or
        knew the old password may hold one). Return the apps that lost their access.

        The password and the secret first, then the tokens: a crash between leaves tokens
        that the account's Apps page lists and revokes.
        """
        apps = self.oauth.authorisations(user_id)
        self.change_password(user_id, password_hash)
        self.oauth.revoke_all(user_id)
        return apps

    def delete_account(self, user: User, *, at: int | None = None) -> None:
        """Delete user's account (see the module docstring). Raise UserNotFound, or
        NotAllowed for staff (an owner revokes staff first, so no moderator vanishes).

        Order: the audit entry and the `deleted` status first (from then on the account
        and its posts are hidden and it cannot log in), then the follow edges and likes in
        batches. A crash part-way leaves edges to a hidden account, which readers skip;
        running purge (or deleting again) finishes them.
        """
        h = decode_hash(self.r.hgetall(keys.user(user.id)))
        if not h.get("username") or h.get("status") == STATUS_DELETED:
            raise UserNotFound(user.id)
        if h.get("staff") == "1":
            raise NotAllowed(gettext_noop("Staff accounts cannot be deleted here: ask an owner."))
        draft = AuditDraft(
            actor=user, action="delete_account", target_id=user.id, target_name=user.username
        )

        def queue(pipe: Pipe, ts: int) -> None:
            pipe.hset(
                keys.user(user.id),
                mapping={"status": STATUS_DELETED, "deleted_at": ts, "password": UNUSABLE_PASSWORD},
            )
            self.users.queue_secret_rotation(pipe, user.id, h.get("auth"))
            self.emails.queue_forget(pipe, user.id, h)  # the address is free at once
            pipe.zadd(keys.deleted_users(), {str(user.id): ts})
            pipe.zrem(keys.users_by_time(), h["username"])
            queue_name_words(pipe, user.id, "")  # no longer found by its display name
            queue_hiding(pipe)  # its posts leave every page

        self.audit.run_audited([draft], queue, at=now() if at is None else at)
        self._cut_ties(user.id)

    def _cut_ties(self, user_id: int) -> None:
        """Remove user_id's follow edges, blocks and mutes on both sides (no one is kept
        from a deleted account, nor it from anyone), take back its likes and reposts and
        revoke its client API tokens."""
        removed = 0  # follow edges, for the dashboard's total
        for key, other_side in (
            (keys.following(user_id), keys.followers),
            (keys.followers(user_id), keys.following),
            (keys.blocks(user_id), keys.blocked_by),
            (keys.blocked_by(user_id), keys.blocks),
            (keys.mutes(user_id), keys.muted_by),
            (keys.muted_by(user_id), keys.mutes),
        ):
            while ids := cast(Members, self.r.zrange(key, 0, BATCH - 1)):
                pipe = self._pipe()
                for other in ids:
                    pipe.zrem(other_side(int(other)), user_id)
                    if other_side is keys.followers:  # a remote account's follows
                        pipe.zrem(keys.remote_followers(int(other)), user_id)
                pipe.zrem(key, *ids)  # after the other sides: a crash leaves work to redo
                pipe.execute()
                if other_side in (keys.followers, keys.following):
                    removed += len(ids)
        while liked := cast(Members, self.r.zrange(keys.user_likes(user_id), 0, BATCH - 1)):
            pipe = self._pipe()
            for post_id in liked:
                pipe.zrem(keys.likes(int(post_id)), user_id)
            pipe.zrem(keys.user_likes(user_id), *liked)
            removed_likes = pipe.execute()[:-1]
            pipe = self._pipe()  # each post's counter, where the like was there to take
            for post_id, gone in zip(liked, removed_likes):
                if gone:
                    pipe.hincrby(keys.post(int(post_id)), "likes", -1)
            pipe.execute()
        self.r.delete(keys.remote_followers(user_id))  # its followers are gone above
        if removed:
            self.r.decrby(keys.follows_total(), removed)
        self.reposts.cut_reposts(user_id)
        self.oauth.revoke_all(user_id)

    def deleted_accounts_due(self, *, at: int | None = None) -> list[int]:
        """Return the ids of deleted accounts whose grace period is over."""
        cutoff = (now() if at is None else at) - keys.DELETED_ACCOUNT_GRACE_DAYS * 86400
        due = cast(Members, self.r.zrangebyscore(keys.deleted_users(), "-inf", cutoff))
        return [int(i) for i in due]

    def purge_deleted_accounts(self, *, at: int | None = None) -> list[int]:
        """Purge every deleted account past its grace period; return their ids.

        Each: ties cut again (in case a crash interrupted the deletion), its posts' hashes
        reduced to their author and time (the text goes; ids elsewhere stay dangling and
        are skipped), its own lists and mentions deleted, its name freed (users,
        users_lower, users_lex), the user hash reduced to a tombstone, and its entry in
        deleted_users removed last.
        """
        purged = []
        for user_id in self.deleted_accounts_due(at=at):
            h = decode_hash(self.r.hgetall(keys.user(user_id)))
            if h.get("status") != STATUS_DELETED:  # restored by hand: leave it
                self.r.zrem(keys.deleted_users(), user_id)
                continue
            self._cut_ties(user_id)
            self.profiles.forget_pictures(user_id)  # the files too (social/media.py)
            forget_account(self, user_id)  # its posts' pictures and uploads, files too
            while posts := self.r.lrange(keys.own_posts(user_id), 0, BATCH - 1):
                pipe = self._pipe()
                for post_id in posts:
                    queue_post_deletion(
                        pipe, int(post_id), user_id, PURGED, ts=now(), keep_text=False
                    )
                pipe.ltrim(keys.own_posts(user_id), len(posts), -1)
                self.send(pipe)
            name = h.get("username") or ""
            if h.get("email"):  # gone at deletion, unless that was cut short
                self.emails.release(user_id, h["email"])
            pipe = self._pipe()
            for key in (
                keys.own_posts(user_id),
                keys.home_feed(user_id),
                keys.mentions(user_id),
                keys.notices(user_id),
                keys.user_likes(user_id),
                keys.user_reposts(user_id),
                keys.user_reported(user_id),
                keys.filters(user_id),
                keys.notifications(user_id),
                keys.notified(user_id),
                keys.markers(user_id),
                keys.actor_key(user_id),  # its ActivityPub key pair
                keys.activities_sent(user_id),  # what it sent that it might undo
            ):
                pipe.delete(key)
            if name:
                pipe.hdel(keys.users(), name)
                pipe.zrem(keys.username_index(), name.lower())
            pipe.execute()
            if name and as_int(self.r.hget(keys.usernames_lower(), name.lower())) == user_id:
                self.r.hdel(keys.usernames_lower(), name.lower())
            pipe = self._pipe()
            pipe.delete(keys.user(user_id))
            pipe.hset(keys.user(user_id), mapping={"status": STATUS_DELETED, "username": ""})
            pipe.zrem(keys.deleted_users(), user_id)
            pipe.execute()
            purged.append(user_id)
        return purged
