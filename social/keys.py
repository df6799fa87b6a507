"""Every Redis key name the site uses, and nothing else.

This is the only module that spells a key string. The first block is the reference Retwis
layout and must keep its exact names, types and fields so that a database written by the PHP
Retwis works here and the PHP Retwis can read ours. Everything after it is an addition,
documented in docs/data-layout.md (type, contents, writer, reader, bound).

Per-user keys take the numeric user id; ids are ints so a typo cannot silently build a new
key family (rq's warning: a mistyped format becomes permanent once data uses it).
"""

from __future__ import annotations

import re
from datetime import date

# --- Reference Retwis layout -----------------------------------------------------------


def next_user_id() -> str:
    """String counter (INCR): the last user id handed out."""
    return "next_user_id"


def user(user_id: int) -> str:
    """Hash: username, password (Django hash; legacy plain text), auth (secret), plus ours."""
    return f"user:{int(user_id)}"


def user_key_prefix() -> str:
    """What user(id) puts before the id: for a Lua script that reads the hashes of ids it
    found itself (pages.MUTUALS_SCRIPT, one server only)."""
    return "user:"


def users() -> str:
    """Hash: username (as typed at sign-up) -> user id."""
    return "users"


def auths() -> str:
    """Hash: auth secret -> user id. May hold stale secrets; user:<id>.auth is the truth."""
    return "auths"


def users_by_time() -> str:
    """Sorted set: username scored by sign-up unix time."""
    return "users_by_time"


def followers(user_id: int) -> str:
    """Sorted set: ids of users following user_id, scored by unix time of the follow."""
    return f"followers:{int(user_id)}"


def following(user_id: int) -> str:
    """Sorted set: ids of users user_id follows, scored by unix time of the follow."""
    return f"following:{int(user_id)}"


def next_post_id() -> str:
    """String counter (INCR): the last post id handed out."""
    return "next_post_id"


def post(post_id: int) -> str:
    """Hash: user_id, time (unix seconds), body; plus ours: a reply's parent, mentions,
    tags, the `replies`, `likes` and `reposts` counters (loading.COUNT_FIELDS, mended by
    `manage.py repair`), a repost's `repost_of` and the moderation fields."""
    return f"post:{int(post_id)}"


def home_feed(user_id: int) -> str:
    """List: post ids of the user's home feed (own + followed), newest first, capped."""
    return f"posts:{int(user_id)}"


def timeline() -> str:
    """List: post ids of the global timeline, newest first, exactly the newest 1000."""
    return "timeline"


# --- Additions ---------------------------------------------------------------------------


def usernames_lower() -> str:
    """Hash: lower-cased username -> user id; HSETNX here claims a name ignoring case."""
    return "users_lower"


def username_index() -> str:
    """Sorted set, all scores 0: lower-cased usernames, for ZRANGEBYLEX prefix search."""
    return "users_lex"


def own_posts(user_id: int) -> str:
    """List: ids of the posts user_id wrote, newest first (the profile page). Uncapped."""
    return f"user_posts:{int(user_id)}"


def staff_users() -> str:
    """Sorted set: usernames of staff, scored by the time staff was granted."""
    return "staff_users"


def suspended_users() -> str:
    """Sorted set: usernames of suspended users, scored by the time of suspension."""
    return "suspended_users"


def visibility_version() -> str:
    """String: a counter moved after every write that hides or shows posts already listed
    (a post deleted by its author or by staff, an account suspended, unsuspended or
    deleted, an author promoted to fan-out on read): RepositoryBase.send moves it for the
    pipelines queue_hiding marked. A web process trusts the posts it remembers only at the
    version it checked them at (social/repository/cache.py)."""
    return "visibility_version"


def front_version() -> str:
    """String: a counter moved by every write that changes what the latest posts show (a
    post or reply, a like, a repost, their undoing, a repair of counters): with
    visibility_version, what a visitor's front page was rendered at (social/front.py). Not
    written on a cluster, where the front page is not remembered."""
    return "front_version"


def celebrities() -> str:
    """Sorted set: ids of accounts whose posts are merged into followers' home pages when
    read instead of copied into every follower's feed (fan-out on read), scored by the unix
    time they joined. An author joins on posting with at least RETWIS_FANOUT_READ_THRESHOLD
    followers and stays (membership only grows; see docs/scaling.md). Bounded by the number
    of such accounts."""
    return "celebrities"


def fanouts_in_progress() -> str:
    """Sorted set: ids of posts whose copy into followers' feeds has begun and not ended,
    scored by the unix time it began. A process killed mid-fan-out leaves its post here;
    `manage.py repair` finishes it. Bounded by the posts being fanned out at once."""
    return "fanouts"


def post_token(user_id: int, token: str) -> str:
    """String: the id of the post a form submission (its one-off token) created, so a
    retried submission returns that post instead of posting twice. Expires after a day.
    `token` is validated by the caller (URL-safe, at most 64 characters)."""
    return f"post_token:{int(user_id)}:{token[:64]}"


def replies(post_id: int) -> str:
    """List: ids of the direct replies to post_id, oldest first (RPUSH). Uncapped: the
    conversation's record, 8-10 bytes a reply; read a page at a time."""
    return f"replies:{int(post_id)}"


def mentions(user_id: int) -> str:
    """Sorted set: ids of posts that @mention user_id, scored by post time; the newest
    MENTIONS_CAP are kept. The user hash's `unread_mentions` counts those not yet seen."""
    return f"mentions:{int(user_id)}"


MENTIONS_CAP = 1000


def _checked_tag(tag: str) -> str:
    if not tag or len(tag) > 50 or not tag.replace("_", "").isalnum():
        raise ValueError(f"bad tag {tag!r}")
    return tag


def tag_posts(tag: str) -> str:
    """List: ids of the newest posts with #tag (normalised by social.text.normal_tag),
    newest first, capped like the timeline (TAG_CAP)."""
    return f"tag:{_checked_tag(tag)}"


TAG_CAP = 1000


def trending_hour(hour: str) -> str:
    """Sorted set: tag -> posts with it in that UTC hour ("yyyymmddhh"); expires after 25
    hours. The {trending} hash tag keeps every bucket in one cluster slot, so the day's
    buckets can be summed with one ZUNIONSTORE."""
    if not (len(hour) == 10 and hour.isdigit()):
        raise ValueError(f"bad hour {hour!r}")
    return f"{{trending}}:{hour}"


def trending_day() -> str:
    """Sorted set: the last 24 hourly buckets summed (ZUNIONSTORE), rebuilt by a timeline
    page at most once a minute per process; expires after two minutes."""
    return "{trending}:day"


def likes(post_id: int) -> str:
    """Sorted set: ids of users who like post_id, scored by when. Bounded by users."""
    return f"likes:{int(post_id)}"


def user_likes(user_id: int) -> str:
    """Sorted set: ids of posts user_id likes, scored by when (the Likes tab). Bounded by
    the posts they like; unliking removes."""
    return f"user_likes:{int(user_id)}"


def deleted_users() -> str:
    """Sorted set: ids of accounts their owners deleted, scored by the time. The name
    stays taken (and the account hidden everywhere) until `manage.py repair` purges the
    account, DELETED_ACCOUNT_GRACE_DAYS later. Bounded by deletions in that window."""
    return "deleted_users"


DELETED_ACCOUNT_GRACE_DAYS = 30


def notices(user_id: int) -> str:
    """List: JSON notices for a user (e.g. "your post was removed"), newest first, capped."""
    return f"notices:{int(user_id)}"


def moderation_notes(user_id: int) -> str:
    """List: JSON staff notes on an account, newest first, capped."""
    return f"notes:{int(user_id)}"


def next_report_id() -> str:
    """String counter (INCR): the last report id handed out."""
    return "next_report_id"


def report(report_id: int) -> str:
    """Hash: post_id, reporter_id, reason, text, time, status, resolved_by, resolved_at."""
    return f"report:{int(report_id)}"


def open_reports() -> str:
    """Sorted set: ids of open reports scored by report time (oldest first)."""
    return "reports:open"


def resolved_reports() -> str:
    """Sorted set: ids of resolved reports scored by resolution time."""
    return "reports:resolved"


def post_reports(post_id: int) -> str:
    """Hash: reporter user id -> open report id; HSETNX keeps one open report per user."""
    return f"post_reports:{int(post_id)}"


def user_reported(user_id: int) -> str:
    """Sorted set: ids of posts user_id holds an open report on, scored by report time; a
    card's Report link reads "Reported" for them. Added with the report, removed when it
    is resolved. Bounded by the user's open reports (at most 20 filed a day)."""
    return f"user_reported:{int(user_id)}"


def user_reports(user_id: int) -> str:
    """Sorted set: ids of reports against posts by user_id, scored by report time."""
    return f"user_reports:{int(user_id)}"


def audit_log() -> str:
    """Stream: one entry per staff action (actor, action, target user/post, reason)."""
    return "audit"


def audit_by_actor(user_id: int) -> str:
    """Sorted set: audit stream ids of entries by staff member user_id (score = ms time)."""
    return f"audit:actor:{int(user_id)}"


def audit_by_target(user_id: int) -> str:
    """Sorted set: audit stream ids of entries whose target user is user_id (score = ms)."""
    return f"audit:target:{int(user_id)}"


def audit_by_action(action: str) -> str:
    """Sorted set: audit stream ids of entries of one action (score = ms time)."""
    if not action.replace("_", "").isalnum():
        raise ValueError(f"bad audit action name {action!r}")
    return f"audit:action:{action}"


def daily_counter(metric: str, day: date) -> str:
    """String counter (INCR) of `metric` events on `day`; expires after STATS_TTL_DAYS."""
    if not metric.isalpha():
        raise ValueError(f"bad metric name {metric!r}")
    return f"stats:{metric}:{day:%Y%m%d}"


def daily_active(day: date) -> str:
    """HyperLogLog of user ids active (logged in or posted) on `day`; expires like counters."""
    return f"stats:active:{day:%Y%m%d}"


# Counters and HyperLogLogs older than this are let go (the dashboard shows 60 days).
STATS_TTL_DAYS = 90


def rate_limit(scope: str, subject: str) -> str:
    """String counter (INCR) of attempts in the current window; expires with the window.

    Policies (social/auth.py; sizes are settings, defaults here): "login_ip" 20 failed
    logins per client address per 15 minutes; "login_user_ip" 10 failed logins per
    "<address>|<lower-cased username>" per 15 minutes (never per username alone: the owner is
    never locked out from elsewhere); "signup_ip" 10 sign-ups per address per hour;
    "app_ip" 30 client API apps registered per address per hour; "post_user" 30 posts,
    "follow_user" 100 follows and unfollows, "report_user" 10 reports, "relation_user" 100
    blocks, mutes, their undos and filters, "repost_user" 100 reposts and undos, "like_user"
    200 likes and unlikes per user id per 10 minutes, hour, hour, hour, hour, hour;
    "reset_ip" 10 and "reset_email" 3 password reset links asked for per address and per
    e-mail address (its digest) an hour, "email_user" 5 confirmation links per user id an
    hour, "profile_user" 30 profile saves per user id an hour; "media_user" 60 pictures
    uploaded for posts per user id per 10 minutes. An address is an IPv4 address or an
    IPv6 /64.
    `subject` is built by the caller from validated, length-limited parts.
    """
    if not scope.replace("_", "").isalpha():
        raise ValueError(f"bad rate-limit scope {scope!r}")
    return f"ratelimit:{scope}:{subject[:64]}"


def report_quota(user_id: int, day: date) -> str:
    """String counter (INCR) of reports user_id filed on `day`; expires after two days."""
    return f"report_quota:{int(user_id)}:{day:%Y%m%d}"


def follows_total() -> str:
    """String counter: follow edges in the graph (INCR on follow, DECR on unfollow)."""
    return "stats:follows"


def usernames_lower_checked() -> str:
    """String: the highest user id whose name sign-up has claimed in users_lower (accounts
    the reference Retwis writes have no claim; see UserStore.claim_legacy_names)."""
    return "users_lower_checked"


def owners() -> str:
    """Sorted set: ids of the staff who are owners (alone grant and revoke staff), scored by
    the time `manage.py createstaff --owner` made them owners."""
    return "staff_owners"


def name_trigram(trigram: str) -> str:
    """Sorted set, all scores 0 (so ordered by member): "<lower-cased name> <user id>" of
    every account whose lower-cased name holds `trigram` (three of a-z, 0-9, _), for the
    staff "contains" search. A 3-character query pages its one set (ZRANGE); a longer one
    intersects its trigrams' sets (ZINTER, in a script). The {names} hash tag keeps every
    such set in one cluster slot, so the intersection works on a cluster too. Written by
    DirectoryStore.index_new_names (the ids above name_trigrams_checked); a purged
    account's members go when a search meets them. Bounded by (name length - 2) members an
    account and 37**3 sets."""
    allowed = "abcdefghijklmnopqrstuvwxyz0123456789_"
    if len(trigram) != 3 or any(c not in allowed for c in trigram):
        raise ValueError(f"bad trigram {trigram!r}")
    return f"{{names}}:tri:{trigram}"


def name_trigrams_checked() -> str:
    """String: the highest user id whose name is in the name_trigram sets; the next staff
    "contains" search indexes the ids above it (and looks again at the 50 below it: a
    sign-up in flight). One integer."""
    return "{names}:checked"


# --- OAuth (social/repository/oauth.py) ----------------------------------------------------
# The client API's OAuth 2 state (docs/api.md). Secrets are never stored: a token, a code
# and an app's client secret are kept as the SHA-256 of their text (hex), so a copy of the
# database lets no one call the API as anyone.


def _checked_digest(digest: str) -> str:
    if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
        raise ValueError(f"bad digest {digest!r}")
    return digest


def _checked_client_id(client_id: str) -> str:
    if not 16 <= len(client_id) <= 64 or not client_id.replace("-", "").replace("_", "").isalnum():
        raise ValueError(f"bad client id {client_id!r}")
    return client_id


def oauth_app(client_id: str) -> str:
    """Hash: a registered client application: name, website, redirect_uris (one per
    line), scopes, secret (SHA-256 of the client secret), created. Expires
    OAUTH_APP_UNUSED_TTL after registration until someone authorises it (then PERSIST).
    Bound: registrations are rate-limited per address."""
    return f"oauth:app:{_checked_client_id(client_id)}"


OAUTH_APP_UNUSED_TTL = 24 * 60 * 60


def oauth_code(digest: str) -> str:
    """Hash: an authorization code (by the SHA-256 of its text): client_id, user_id,
    redirect_uri, scopes, challenge, challenge_method. Used once (deleted when exchanged);
    expires after OAUTH_CODE_TTL."""
    return f"oauth:code:{_checked_digest(digest)}"


OAUTH_CODE_TTL = 10 * 60


def oauth_token(digest: str) -> str:
    """Hash: an access token (by the SHA-256 of its text): client_id, user_id (empty for
    an app's own token, client_credentials), scopes, created. A user's token lives until
    revoked (it is in oauth_user_tokens, at most OAUTH_TOKENS_CAP a user); an app's own
    token expires after OAUTH_APP_TOKEN_TTL."""
    return f"oauth:token:{_checked_digest(digest)}"


OAUTH_APP_TOKEN_TTL = 24 * 60 * 60


def oauth_user_tokens(user_id: int) -> str:
    """Sorted set: the SHA-256 of each access token user_id authorised, scored by when
    (/settings/apps/, the staff account page, revoking). At most OAUTH_TOKENS_CAP: a new
    token past it revokes the oldest. Deleting the account revokes them all."""
    return f"oauth:user:{int(user_id)}"


OAUTH_TOKENS_CAP = 200


# --- Blocks and mutes (social/repository/relations.py) ------------------------------------
# Each relation is kept from both sides: the reader's own set (read with every page they
# read, RELATIONS_CAP entries at most) and the other account's reverse set (staff see how
# many accounts block or mute an account; a blocked account is kept from the blocker).


def blocks(user_id: int) -> str:
    """Sorted set: ids of the accounts user_id blocks, scored by when; at most
    RELATIONS_CAP (a block past it is refused)."""
    return f"blocks:{int(user_id)}"


def blocked_by(user_id: int) -> str:
    """Sorted set: ids of the accounts that block user_id, scored by when. Bounded by
    accounts."""
    return f"blocked_by:{int(user_id)}"


def mutes(user_id: int) -> str:
    """Sorted set: ids of the accounts user_id mutes, scored by when; at most
    RELATIONS_CAP."""
    return f"mutes:{int(user_id)}"


def muted_by(user_id: int) -> str:
    """Sorted set: ids of the accounts that mute user_id, scored by when. Bounded by
    accounts."""
    return f"muted_by:{int(user_id)}"


RELATIONS_CAP = 5000


def filters(user_id: int) -> str:
    """Sorted set: user_id's word filters, one member each, scored by when it expires
    (unix seconds; +inf: never): "<id>|<phrase>" (the phrase case-folded; the first form,
    still written for a filter of one whole-word phrase that hides in FILTER_CONTEXTS'
    first four), else a JSON object {"id", "title", "context", "action", "keywords":
    [[id, keyword, whole_word], ...]} (repository/filters.py). Read with the reader's pages
    (an expired one stops acting by itself and is dropped when the set is next written).
    At most FILTERS_CAP members and FILTER_KEYWORDS_CAP keywords in all."""
    return f"filters:{int(user_id)}"


FILTERS_CAP = 100
FILTER_KEYWORDS_CAP = 100  # keywords of all of a user's filters together
FILTER_MAX = 100  # characters of one phrase, keyword or title
# Where a filter acts (Mastodon's contexts): home, notifications (the mentions and
# notifications), public (the timeline and tags), thread (a conversation), account (a
# profile).
FILTER_CONTEXTS = ("home", "notifications", "public", "thread", "account")


def tag_index() -> str:
    """Sorted set: every tag a post was filed under (social.text.normal_tag), all scored 0,
    for search by prefix (ZRANGEBYLEX). Filed with the post; `manage.py repair` adds the
    tags of posts written before it existed. Bounded by the tags in use."""
    return "tags_lex"


def notifications(user_id: int) -> str:
    """List: the user's notifications, newest first, each "<kind>|<actor id>|<post id or
    empty>|<unix time>" (kind: follow, like, reply, mention, repost); grouped per post and kind
    when read. The newest NOTIFICATIONS_CAP (LTRIM on every push); older than
    NOTIFICATIONS_DAYS are not shown. The user hash's `unread_notifications` counts the
    pushes since the page was last seen."""
    return f"notifications:{int(user_id)}"


def notified(user_id: int) -> str:
    """Sorted set: what the user was told of that can be done again (a like, a repost, a
    follow, undone and made again), "<kind>|<actor id>|<post id or empty>" scored by when;
    a member there tells no one again (repository.notifications.queue_notification_claim).
    Each claim drops members older than NOTIFICATIONS_DAYS, keeps the newest
    NOTIFICATIONS_CAP and sets the key to expire NOTIFICATIONS_DAYS after it; deleted with
    the account."""
    return f"notified:{int(user_id)}"


NOTIFICATIONS_CAP = 1000
NOTIFICATIONS_DAYS = 90


def markers(user_id: int) -> str:
    """Hash: where the user stopped reading, as Mastodon's markers: for each timeline
    (`home`, `notifications`) `<timeline>` (the last read id), `<timeline>:version` (a
    counter, one more each save) and `<timeline>:at` (unix time of the save). The
    notifications page saves `notifications` when it is seen, and so do apps
    (POST /api/v1/markers). At most six fields; deleted with the account."""
    return f"markers:{int(user_id)}"


# --- Reposts (social/repository/reposts.py) ----------------------------------------------
# A repost is a post of its own (post:<id> with `repost_of`, the reposter as `user_id` and
# "RT @author" as its body, so the reference Retwis shows it sensibly), listed where its
# reposter's posts go: their own list, their home feed and their followers' (never the
# timeline, a tag or mentions). The read path shows the post it shares in its place.


def reposts(post_id: int) -> str:
    """Sorted set: ids of the accounts that repost post_id, scored by the id of their
    repost (ids grow with time: by when). The post hash's `reposts` field counts it.
    Bounded by the accounts."""
    return f"reposts:{int(post_id)}"


def user_reposts(user_id: int) -> str:
    """Sorted set: ids of the posts user_id reposts, scored by the id of the repost (a
    reader's "Reposted" state on every card: one ZMSCORE a page). Bounded by their reposts
    (RETWIS_LIMIT_REPOSTS an hour); undoing removes."""
    return f"user_reposts:{int(user_id)}"


# --- E-mail and account recovery (social/repository/emails.py) ---------------------------
# An account's confirmed address is the user hash's `email` field (an address waiting for
# its confirmation: `email_pending`). Links mailed out are secrets: like OAuth's, they are
# kept as the SHA-256 of their text, so a copy of the database confirms and resets nothing.


def emails() -> str:
    """Hash: confirmed address (lower-cased) -> user id; HSETNX claims an address, so one
    address belongs to one account. user:<id>.email is the truth: a claim whose account
    holds another address (a change cut short) is stale and may be taken over. Confirming
    writes it; a change, removal, account deletion and purge remove it. One per account."""
    return "emails"


def email_confirmation(digest: str) -> str:
    """Hash: a confirmation link (by the SHA-256 of its token): user_id, email (as typed),
    created. Used once (taken with HGETALL and DEL in one MULTI); a newer request replaces
    the account's `email_pending`, so older links confirm nothing. Expires after
    EMAIL_CONFIRMATION_TTL."""
    return f"email_confirm:{_checked_digest(digest)}"


EMAIL_CONFIRMATION_TTL = 24 * 60 * 60


def password_reset(digest: str) -> str:
    """Hash: a password reset link (by the SHA-256 of its token): user_id, stamp (a digest
    of the password field when it was made: any change of password, the reset's own
    included, kills every link made before it), email, created. Used once; expires after
    PASSWORD_RESET_TTL. Bounded by the reset limits (RETWIS_LIMIT_RESET_*)."""
    return f"password_reset:{_checked_digest(digest)}"


PASSWORD_RESET_TTL = 60 * 60
# --- Pictures (social/media.py, social/repository/profiles.py) -----------------------------
# The bytes live in Django's storage (files under MEDIA_ROOT, or a bucket); Redis keeps
# what each picture is. A picture is named by a random token (16 hex digits) that its
# files' names carry and its owner's user hash holds (`avatar`, `header`).

IMAGE_TOKEN_RE = r"[0-9a-f]{16}"


def image(token: str) -> str:
    """Hash: one stored picture: `owner` (user id), `kind` (avatar, header, post), `state`
    (`live` for a profile's; a post's `unattached`, then `attached`), `sizes`
    (`<name>:<w>x<h>` of each file, space-separated), `bytes` (of all its files), `time`;
    a post's also `post` (the id, once attached), `alt` (up to MEDIA_ALT_MAX characters),
    `blurhash` and `full_bytes`. A profile's is written with the owner's `avatar`/`header` field and
    deleted with the files when replaced, removed or the account purged; a post's is
    written on upload (in media_unattached and user_media), claimed by one post
    (repository/media.py) and copied into its hash's `media` field. One per picture."""
    if not re.fullmatch(IMAGE_TOKEN_RE, token):
        raise ValueError(f"not an image token: {token!r}")
    return f"image:{token}"


IMAGE_PATTERN = "image:*"  # SCAN's match for every image hash (manage.py repair)


MEDIA_PER_POST = 4
MEDIA_ALT_MAX = 1500


def media_unattached() -> str:
    """Sorted set: tokens of post pictures uploaded and not yet in a post, scored by upload
    time (the lifecycle deletes those older than a day). Removed from when a post claims
    one. Bounded by a day's uploads."""
    return "media_unattached"


def user_media(user_id: int) -> str:
    """Sorted set: tokens of every post picture user_id uploaded (attached or not), scored
    by upload time: what an account's deletion, export and repair walk. Bounded by their
    uploads."""
    return f"user_media:{int(user_id)}"


# --- The live bus (social/repository/live.py) --------------------------------------------
# Streaming processes (social/streaming/) read every event from one Redis stream; the writes
# that make an event XADD it on the pipeline they send anyway (docs/architecture.md).


def live_events() -> str:
    """Stream: one entry per event the streaming API tells (a post or repost in home feeds,
    a notification, a post deleted or hidden, a filter changed), its fields the event's kind
    and ids (repository.live.queue_event). Capped near LIVE_EVENTS_CAP entries (XADD MAXLEN
    ~): a streaming process that lost Redis for a while resumes after the last id it read."""
    return "live:events"


LIVE_EVENTS_CAP = 10000
