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
    """What user(id) puts before the id (for pages.MUTUALS_SCRIPT, one server only)."""
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
    """Hash: user_id, time (unix seconds), body; plus ours (docs/data-layout.md)."""
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
    """String: a counter moved by every write that hides or shows listed posts; a web
    process trusts the posts it remembers only at the version it checked (cache.py)."""
    return "visibility_version"


def front_version() -> str:
    """String: a counter moved by every write that changes what the latest posts show."""
    return "front_version"


def celebrities() -> str:
    """Sorted set: ids of the fan-out-on-read authors, by when they joined."""
    return "celebrities"


def fanouts_in_progress() -> str:
    """Sorted set: ids of posts whose fan-out began and has not ended, by its start."""
    return "fanouts"


def post_token(user_id: int, token: str) -> str:
    """String: the id of the post a form submission's one-off token created (a day).
    `token` is validated by the caller (URL-safe, at most 64 characters)."""
    return f"post_token:{int(user_id)}:{token[:64]}"


def replies(post_id: int) -> str:
    """List: ids of the direct replies to post_id, oldest first (RPUSH). Uncapped."""
    return f"replies:{int(post_id)}"


def mentions(user_id: int) -> str:
    """Sorted set: ids of posts that @mention user_id, by post time; MENTIONS_CAP kept."""
    return f"mentions:{int(user_id)}"


MENTIONS_CAP = 1000


def _checked_tag(tag: str) -> str:
    if not tag or len(tag) > 50 or not tag.replace("_", "").isalnum():
        raise ValueError(f"bad tag {tag!r}")
    return tag


def tag_posts(tag: str) -> str:
    """List: ids of the newest posts with #tag (text.normal_tag), newest first; TAG_CAP."""
    return f"tag:{_checked_tag(tag)}"


TAG_CAP = 1000
TAG_PATTERN = "tag:*"  # SCAN's match for every tag's post list (manage.py repair)


def trending_hour(hour: str) -> str:
    """Sorted set: tag -> posts with it in that UTC hour ("yyyymmddhh"); 25 hours."""
    if not (len(hour) == 10 and hour.isdigit()):
        raise ValueError(f"bad hour {hour!r}")
    return f"{{trending}}:{hour}"


def trending_day() -> str:
    """Sorted set: the last 24 hourly buckets summed (ZUNIONSTORE); two minutes."""
    return "{trending}:day"


def likes(post_id: int) -> str:
    """Sorted set: ids of users who like post_id, scored by when. Bounded by users."""
    return f"likes:{int(post_id)}"


def user_likes(user_id: int) -> str:
    """Sorted set: ids of posts user_id likes, scored by when (the Likes tab)."""
    return f"user_likes:{int(user_id)}"


def deleted_users() -> str:
    """Sorted set: ids of accounts their owners deleted, by when (purged after the grace)."""
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
    """Sorted set: ids of posts user_id holds an open report on, by report time."""
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


STATS_TTL_DAYS = 90  # counters and HyperLogLogs older are let go (the dashboard shows 60)


def rate_limit(scope: str, subject: str) -> str:
    """String counter (INCR) of attempts in the current window; expires with it (scopes:
    social/auth.py). `subject` is built by the caller from validated, bounded parts."""
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
    """String: the highest user id whose name sign-up has claimed in users_lower."""
    return "users_lower_checked"


def owners() -> str:
    """Sorted set: ids of the staff who are owners (alone grant and revoke staff), by when."""
    return "staff_owners"


def name_trigram(trigram: str) -> str:
    """Sorted set, all scores 0: "<lower-cased name> <user id>" of every account whose
    name holds `trigram` (three of a-z, 0-9, _): the "contains" search (directory.py)."""
    allowed = "abcdefghijklmnopqrstuvwxyz0123456789_"
    if len(trigram) != 3 or any(c not in allowed for c in trigram):
        raise ValueError(f"bad trigram {trigram!r}")
    return f"{{names}}:tri:{trigram}"


def name_trigrams_checked() -> str:
    """String: the highest user id whose name is in the name_trigram sets."""
    return "{names}:checked"


def name_words() -> str:
    """Sorted set, all scores 0: "<word> <user id>" for every word of every display name,
    folded (social/search_words.py): people found by the start of any word of their name."""
    return "{names}:words"


def name_words_of() -> str:
    """Hash: user id -> the words name_words holds for it (space-separated): what to take
    out when the name changes, and the other words a search of several checks."""
    return "{names}:words_of"


# --- OAuth (social/repository/clients/oauth.py) ------------------------------------------
# Secrets (a token, a code, a client secret) are kept as the SHA-256 of their text (hex).


def _checked_digest(digest: str) -> str:
    if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
        raise ValueError(f"bad digest {digest!r}")
    return digest


def _checked_client_id(client_id: str) -> str:
    if not 16 <= len(client_id) <= 64 or not client_id.replace("-", "").replace("_", "").isalnum():
        raise ValueError(f"bad client id {client_id!r}")
    return client_id


def oauth_app(client_id: str) -> str:
    """Hash: a registered client app; expires OAUTH_APP_UNUSED_TTL until authorised."""
    return f"oauth:app:{_checked_client_id(client_id)}"


OAUTH_APP_UNUSED_TTL = 24 * 60 * 60


def oauth_code(digest: str) -> str:
    """Hash: an authorization code (by its SHA-256); used once, OAUTH_CODE_TTL."""
    return f"oauth:code:{_checked_digest(digest)}"


OAUTH_CODE_TTL = 10 * 60


def oauth_token(digest: str) -> str:
    """Hash: an access token (by its SHA-256): a user's until revoked, an app's a day."""
    return f"oauth:token:{_checked_digest(digest)}"


OAUTH_APP_TOKEN_TTL = 24 * 60 * 60


def oauth_user_tokens(user_id: int) -> str:
    """Sorted set: the SHA-256 of each token user_id authorised, by when."""
    return f"oauth:user:{int(user_id)}"


OAUTH_TOKENS_CAP = 200


# --- Blocks and mutes (social/repository/relations/blocks.py) ------------------------------------


def blocks(user_id: int) -> str:
    """Sorted set: ids of the accounts user_id blocks, by when; at most RELATIONS_CAP."""
    return f"blocks:{int(user_id)}"


def blocked_by(user_id: int) -> str:
    """Sorted set: ids of the accounts that block user_id, by when."""
    return f"blocked_by:{int(user_id)}"


def mutes(user_id: int) -> str:
    """Sorted set: ids of the accounts user_id mutes, by when; at most RELATIONS_CAP."""
    return f"mutes:{int(user_id)}"


def muted_by(user_id: int) -> str:
    """Sorted set: ids of the accounts that mute user_id, by when."""
    return f"muted_by:{int(user_id)}"


RELATIONS_CAP = 5000


def filters(user_id: int) -> str:
    """Sorted set: user_id's word filters (two forms: filters.py) by expiry (+inf: never)."""
    return f"filters:{int(user_id)}"


FILTERS_CAP = 100
FILTER_KEYWORDS_CAP = 100  # keywords of all of a user's filters together
FILTER_MAX = 100  # characters of one phrase, keyword or title
# Where a filter acts (Mastodon's contexts; the filters page names them: forms.FILTER_PLACES).
FILTER_CONTEXTS = ("home", "notifications", "public", "thread", "account")


def tag_index() -> str:
    """Sorted set, all scores 0: every tag a post was filed under (search by prefix)."""
    return "tags_lex"


def notifications(user_id: int) -> str:
    """List: the user's notifications, newest first (notification_events.entry_of)."""
    return f"notifications:{int(user_id)}"


def notified(user_id: int) -> str:
    """Sorted set: each like, repost or follow told, by when (notifications.CLAIM_SCRIPT)."""
    return f"notified:{int(user_id)}"


NOTIFICATIONS_CAP = 1000
NOTIFICATIONS_DAYS = 90


def markers(user_id: int) -> str:
    """Hash: where the user stopped reading, per timeline, as Mastodon's markers."""
    return f"markers:{int(user_id)}"


# --- Reposts (social/repository/posts/reposts.py) ----------------------------------------------


def reposts(post_id: int) -> str:
    """Sorted set: ids of the accounts that repost post_id, scored by their repost's id."""
    return f"reposts:{int(post_id)}"


def user_reposts(user_id: int) -> str:
    """Sorted set: ids of the posts user_id reposts, scored by the repost's id."""
    return f"user_reposts:{int(user_id)}"


# --- E-mail and account recovery (social/repository/accounts/emails.py) ---------------------------
# Links mailed out are secrets: kept, like OAuth's, as the SHA-256 of their text.


def emails() -> str:
    """Hash: confirmed address (lower-cased) -> user id; user:<id>.email is the truth."""
    return "emails"


def email_confirmation(digest: str) -> str:
    """Hash: an address's confirmation link (by the SHA-256 of its token); used once."""
    return f"email_confirm:{_checked_digest(digest)}"


EMAIL_CONFIRMATION_TTL = 24 * 60 * 60


def password_reset(digest: str) -> str:
    """Hash: a password reset link (by the SHA-256 of its token); used once."""
    return f"password_reset:{_checked_digest(digest)}"


PASSWORD_RESET_TTL = 60 * 60

MAIL_ID_RE = r"[0-9a-f]{32}"


def mail_sent(mail_id: str) -> str:
    """String: `sending` while a worker sends one queued mail (social/work_handlers/mail.py),
    then `sent`: a mail job run twice sends once."""
    if not re.fullmatch(MAIL_ID_RE, mail_id):
        raise ValueError(f"not a mail id: {mail_id!r}")
    return f"mail_sent:{mail_id}"


MAIL_SENDING_TTL = 5 * 60  # a worker that died sending: its mail is tried again after this
MAIL_SENT_TTL = 3 * 24 * 60 * 60  # longer than the mail queue's retries (about 12 hours)
# --- The server's own words (social/repository/clients/instance.py) -------------------------------


def instance_about() -> str:
    """Hash: the server's rules and extended description, as staff wrote them."""
    return "instance:about"


# --- Pictures (social/media.py, social/repository/accounts/profiles.py) ---------------------
# The bytes live in Django's storage; a picture is named by a random token (16 hex digits).

IMAGE_TOKEN_RE = r"[0-9a-f]{16}"


def image(token: str) -> str:
    """Hash: one stored picture (owner, kind, state, sizes...: docs/data-layout.md)."""
    if not re.fullmatch(IMAGE_TOKEN_RE, token):
        raise ValueError(f"not an image token: {token!r}")
    return f"image:{token}"


IMAGE_PATTERN = "image:*"  # SCAN's match for every image hash (manage.py repair)


MEDIA_PER_POST = 4
MEDIA_ALT_MAX = 1500


def media_unattached() -> str:
    """Sorted set: tokens of post pictures not yet in a post, by upload time."""
    return "media_unattached"


def user_media(user_id: int) -> str:
    """Sorted set: tokens of every post picture user_id uploaded, by upload time."""
    return f"user_media:{int(user_id)}"


def post_draft(token: str) -> str:
    """String (JSON): a composer's post waiting for its pictures (attachments.py); a day."""
    if not re.fullmatch(IMAGE_TOKEN_RE, token):
        raise ValueError(f"not a draft token: {token!r}")
    return f"post_draft:{token}"


POST_DRAFT_TTL = 24 * 60 * 60


# --- The live bus (social/repository/live/live.py) --------------------------------------------


def live_events() -> str:
    """Stream: one entry per event the streaming API tells (bus.py); ~LIVE_EVENTS_CAP."""
    return "live:events"


LIVE_EVENTS_CAP = 10000


# --- The worker tier (social/repository/work/jobs.py, social/work/) -------------------------
# Every key of one queue carries the hash tag {jobs:<queue>}: on a Redis Cluster they share
# a slot, so a job moves between them in one script or MULTI.

QUEUE_RE = r"[a-z][a-z0-9_]{0,31}"


def _queue_tag(queue: str) -> str:
    if not re.fullmatch(QUEUE_RE, queue):
        raise ValueError(f"not a queue name: {queue!r}")
    return f"jobs:{{{queue}}}"


def job_stream(queue: str) -> str:
    """Stream (consumer group "workers"): jobs ready to run; an entry is deleted when done."""
    return f"{_queue_tag(queue)}:ready"


def job_delayed(queue: str) -> str:
    """Sorted set: jobs (JSON) waiting for a retry or their destination, by due time (ms)."""
    return f"{_queue_tag(queue)}:delayed"


def job_dead(queue: str) -> str:
    """List: jobs (JSON, with their last error) that used up their attempts, newest first."""
    return f"{_queue_tag(queue)}:dead"


def job_totals(queue: str) -> str:
    """Hash: done, retried, dead: counters since the queue began (the staff dashboard)."""
    return f"{_queue_tag(queue)}:totals"


def job_destination(queue: str, destination: str) -> str:
    """Hash: failures, until (ms): one destination's backoff (a federation peer's domain)."""
    return f"{_queue_tag(queue)}:dest:{_checked_destination(destination)}"


def job_leases(queue: str, destination: str) -> str:
    """Sorted set: leases (tokens) of jobs running for one destination, by expiry (ms)."""
    return f"{_queue_tag(queue)}:leases:{_checked_destination(destination)}"


def job_destinations(queue: str) -> str:
    """Sorted set: destinations in backoff, by the time (ms) their backoff ends."""
    return f"{_queue_tag(queue)}:backoff"


def _checked_destination(destination: str) -> str:
    if not re.fullmatch(r"[a-z0-9.:\[\]_-]{1,255}", destination):
        raise ValueError(f"not a destination: {destination!r}")
    return destination


JOB_DEAD_CAP = 1000  # dead letters kept per queue
