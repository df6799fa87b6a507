"""Settings for the Retwis site, read from the environment through strict helpers.

Every value a deployment changes comes from an environment variable. Outside DEBUG the
insecure development defaults (secret key, hosts) are refused rather than silently used.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def envbool(name: str, default: str) -> bool:
    """Return the boolean env var `name`; anything but true/false raises."""
    value = os.environ.get(name, default).strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off", ""}:
        return False
    raise ImproperlyConfigured(f"{name} must be true or false, not {value!r}")


def envint(name: str, default: int, *, minimum: int = 0) -> int:
    """Return the integer env var `name`, at least `minimum`; junk raises."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, not {raw!r}") from None
    if value < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, not {value}")
    return value


def envlist(name: str, default: str) -> list[str]:
    """Return the comma-separated env var `name` as a list of non-empty items."""
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


def envseconds(name: str, default: float, *, minimum: float = 0.01) -> float:
    """Return the env var `name` as seconds (a number, fractions allowed); junk raises."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number of seconds, not {raw!r}") from None
    if not minimum <= value <= 3600:  # also refuses nan and inf
        raise ImproperlyConfigured(f"{name} must be between {minimum} and 3600 s, not {raw}")
    return value


_RATE_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


def envrate(name: str, default: str) -> tuple[int, int]:
    """Return the rate env var `name`, "COUNT/WINDOW" (e.g. "30/10m"; WINDOW in seconds or
    with s, m, h or d), as (count, window seconds); junk raises."""
    raw = os.environ.get(name, "").strip() or default
    count, _, window = raw.partition("/")
    number, unit = window.rstrip("smhd"), window[len(window.rstrip("smhd")) :]
    if not (count.isdigit() and number.isdigit() and unit in _RATE_UNITS):
        raise ImproperlyConfigured(f'{name} must look like "30/10m" (count/window), not {raw!r}')
    seconds = int(number) * _RATE_UNITS[unit]
    if int(count) < 1 or not 1 <= seconds <= 7 * 86400:
        raise ImproperlyConfigured(f"{name}: at least 1 attempt in 1 s to 7 days, not {raw!r}")
    return int(count), seconds


DEBUG = envbool("DEBUG", "false")

_DEV_SECRET = "insecure-dev-only-secret-key-change-me"
SECRET_KEY = os.environ.get("SECRET_KEY", _DEV_SECRET if DEBUG else "")
if not SECRET_KEY or (SECRET_KEY == _DEV_SECRET and not DEBUG):
    raise ImproperlyConfigured("Set SECRET_KEY (only DEBUG=true may use the development key).")

ALLOWED_HOSTS = envlist("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver" if DEBUG else "")
if not ALLOWED_HOSTS:
    raise ImproperlyConfigured("Set ALLOWED_HOSTS (comma-separated) when DEBUG is off.")
CSRF_TRUSTED_ORIGINS = envlist("CSRF_TRUSTED_ORIGINS", "")
CSRF_FAILURE_VIEW = "social.errors.csrf_failure"

INSTALLED_APPS = [
    # contrib.auth is installed only for its mixins, password hashers and validators.
    # Its models are never queried: there is no SQL database (DATABASES is empty).
    "django.contrib.contenttypes",
    "django.contrib.auth",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "social",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Answers /static/ (collectstatic's hashed, gzipped copies) before the site's middleware.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "social.middleware.ContentSecurityPolicyMiddleware",
    "social.middleware.RedisUnavailableMiddleware",
    "social.middleware.RateLimitMiddleware",  # a refused post, follow or report: 429
    # The language of each request: the `django_language` cookie (the footer's switch),
    # else Accept-Language, else LANGUAGE_CODE. Where sessions would be if there were any:
    # before CommonMiddleware, and before every view, template and error page renders.
    "social.middleware.LocaleMiddleware",
    # A body social.bodies refused (retwis_site/wsgi.py): answered before anything reads it.
    "social.middleware.BodyRefusedMiddleware",
    # A form with pictures from someone at their limit: 429 before its body is parsed.
    "social.middleware.UploadLimitMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "social.middleware.RedisAuthMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "retwis_site.urls"
WSGI_APPLICATION = "retwis_site.wsgi.application"

TEMPLATES = [
    {
        # Jinja2 through Django's own backend: feeds are the hot loop, and Jinja2 renders them
        # several times faster than Django's engine (docs/benchmarks.md). Helpers and filters
        # (url, static, querystring, intcomma, naturaltime, ...) live in social/templating/.
        "BACKEND": "django.template.backends.jinja2.Jinja2",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": False,
        "OPTIONS": {
            "environment": "social.templating.environment",
            "context_processors": [
                "django.contrib.messages.context_processors.messages",
                "social.context_processors.script_prefix",
                "social.context_processors.csrf",
                "social.context_processors.user",
            ],
        },
    },
]

# Form widgets render with Jinja2 too (Django's own widget templates for it): a few times
# faster than Django's engine on the sign-up and log-in forms of the welcome page.
FORM_RENDERER = "django.forms.renderers.Jinja2"

# No SQL database at all: every piece of state lives in Redis.
DATABASES: dict = {}

# One Redis configuration: django-redis (the cache) and the repository share it.
# Required, even under DEBUG: a default would quietly point manage.py at whatever Redis the
# machine runs (someone's data). scripts/run-site starts its own Redis and sets it.
REDIS_URL = os.environ.get("REDIS_URL", "")
if not REDIS_URL:
    raise ImproperlyConfigured(
        "Set REDIS_URL (e.g. redis://127.0.0.1:6379/0). scripts/run-site starts a Redis of "
        "its own and prints the URL to use."
    )
# Seconds to wait for Redis: a command's reply, a new connection, and /healthz's own PING
# (short, on a connection of its own, so a frozen Redis is reported before a load balancer's
# probe gives up; docs/deploy.md).
REDIS_SOCKET_TIMEOUT = envseconds("REDIS_SOCKET_TIMEOUT", 2.0)
REDIS_CONNECT_TIMEOUT = envseconds("REDIS_CONNECT_TIMEOUT", 1.0)
REDIS_HEALTH_TIMEOUT = envseconds("REDIS_HEALTH_TIMEOUT", 0.5)
# A Redis Cluster instead: REDIS_URL names any one node; the repository uses redis-py's
# RedisCluster (social/redis_client.py, docs/scaling.md). The cache below is not used then.
REDIS_CLUSTER = envbool("REDIS_CLUSTER", "false")
REDIS_CLUSTER_OPTIONS: dict = {}  # more RedisCluster keyword arguments (tests count with it)
CACHES: dict[str, dict[str, Any]] = {
    "default": {
        "BACKEND": "django_redis.cache.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": "cache",
        "OPTIONS": {
            "CLIENT_CLASS": "django_redis.client.DefaultClient",
            "SOCKET_CONNECT_TIMEOUT": REDIS_CONNECT_TIMEOUT,
            "SOCKET_TIMEOUT": REDIS_SOCKET_TIMEOUT,
            "CONNECTION_POOL_KWARGS": {"health_check_interval": 30},
        },
    }
}

# Messages travel in a signed cookie: there is no session store.
MESSAGE_STORAGE = "social.message_storage.CookieStorage"

# The password hash lives in the user's Redis hash; Django's hashers make and check it.
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# New hashes: Argon2id sized for a web worker (social/hashers.py). The others only check
# older hashes (Django's PBKDF2 of earlier versions of the site); a login re-hashes them, and
# the reference Retwis's plain text, with the first (social/auth.py). Only one hasher per
# algorithm may be listed: a second "argon2" would re-hash every login.
PASSWORD_HASHERS = [
    "social.hashers.WorkerArgon2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2SHA1PasswordHasher",
    "django.contrib.auth.hashers.ScryptPasswordHasher",
]
LOGIN_URL = "social:login"
LOGIN_REDIRECT_URL = "social:home"

# Rate limits, "COUNT/WINDOW" (social/repository/moderation/limits.py; docs/deploy.md). The password
# of an account is never refused for failures from other addresses: login failures count
# per client address and per (username, address) only.
RETWIS_LIMIT_LOGIN_ADDRESS = envrate("RETWIS_LIMIT_LOGIN_ADDRESS", "20/15m")  # failures
RETWIS_LIMIT_LOGIN_NAME = envrate("RETWIS_LIMIT_LOGIN_NAME", "10/15m")  # failures, per address
# Every password check from an address, right or wrong: each costs an Argon2 hash.
RETWIS_LIMIT_LOGIN_ATTEMPTS = envrate("RETWIS_LIMIT_LOGIN_ATTEMPTS", "60/15m")
RETWIS_LIMIT_SIGNUP = envrate("RETWIS_LIMIT_SIGNUP", "10/1h")  # new accounts per address
RETWIS_LIMIT_APPS = envrate("RETWIS_LIMIT_APPS", "30/1h")  # client API apps per address
RETWIS_LIMIT_POSTS = envrate("RETWIS_LIMIT_POSTS", "30/10m")  # per user
RETWIS_LIMIT_MEDIA = envrate("RETWIS_LIMIT_MEDIA", "60/10m")  # pictures uploaded, per user
RETWIS_LIMIT_FOLLOWS = envrate("RETWIS_LIMIT_FOLLOWS", "100/1h")  # follows + unfollows, per user
RETWIS_LIMIT_REPORTS = envrate("RETWIS_LIMIT_REPORTS", "10/1h")  # per user
# searches that ask other servers for an account (@name@domain, a URL), per user
RETWIS_LIMIT_RESOLVES = envrate("RETWIS_LIMIT_RESOLVES", "30/10m")
# blocks, unblocks, mutes and unmutes, per user
RETWIS_LIMIT_RELATIONS = envrate("RETWIS_LIMIT_RELATIONS", "100/1h")
RETWIS_LIMIT_REPOSTS = envrate("RETWIS_LIMIT_REPOSTS", "100/1h")  # reposts + undos, per user
RETWIS_LIMIT_LIKES = envrate("RETWIS_LIMIT_LIKES", "200/1h")  # likes + unlikes, per user
# Mail the site sends when asked: password reset links per client address and per e-mail
# address (asked for, whether or not an account has it), confirmation links per user.
RETWIS_LIMIT_RESET_ADDRESS = envrate("RETWIS_LIMIT_RESET_ADDRESS", "10/1h")
RETWIS_LIMIT_RESET_EMAIL = envrate("RETWIS_LIMIT_RESET_EMAIL", "3/1h")
RETWIS_LIMIT_EMAIL = envrate("RETWIS_LIMIT_EMAIL", "5/1h")
# Profile saves (each may store two pictures), per user: pages and client API alike.
RETWIS_LIMIT_PROFILE = envrate("RETWIS_LIMIT_PROFILE", "30/1h")
# The request header a reverse proxy puts the client's address in (e.g. X-Forwarded-For,
# its last entry is used, or X-Real-IP). Off by default: REMOTE_ADDR is the client. Set it
# only when every request comes through a proxy that sets or appends it.
_proxy_header = os.environ.get("TRUSTED_PROXY_HEADER", "").strip()
if _proxy_header and not (_proxy_header.isascii() and _proxy_header.replace("-", "").isalnum()):
    raise ImproperlyConfigured(f"TRUSTED_PROXY_HEADER must be a header name, not {_proxy_header!r}")
TRUSTED_PROXY_HEADER = _proxy_header and "HTTP_" + _proxy_header.upper().replace("-", "_")

# Mail: confirmation and password reset links (social/mail.py), through Django's SMTP backend
# unless EMAIL_BACKEND names another (scripts/run-site: the console's, which prints them).
EMAIL_BACKEND = os.environ.get("EMAIL_BACKEND", "").strip() or (
    "django.core.mail.backends.smtp.EmailBackend"
)
if not re.fullmatch(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)+", EMAIL_BACKEND):
    raise ImproperlyConfigured(f"EMAIL_BACKEND must be a dotted class path, not {EMAIL_BACKEND!r}")
EMAIL_HOST = os.environ.get("EMAIL_HOST", "localhost").strip()
EMAIL_PORT = envint("EMAIL_PORT", 25, minimum=1)
if EMAIL_PORT > 65535:
    raise ImproperlyConfigured(f"EMAIL_PORT must be a port (1-65535), not {EMAIL_PORT}")
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = envbool("EMAIL_USE_TLS", "false")
EMAIL_USE_SSL = envbool("EMAIL_USE_SSL", "false")
if EMAIL_USE_TLS and EMAIL_USE_SSL:
    raise ImproperlyConfigured("Set EMAIL_USE_TLS or EMAIL_USE_SSL, not both.")
# Short: a person waits for it, and a web worker serves no one else meanwhile.
EMAIL_TIMEOUT = envseconds("EMAIL_TIMEOUT", 5.0)
DEFAULT_FROM_EMAIL = (
    os.environ.get("DEFAULT_FROM_EMAIL", "").strip() or "Retwis <noreply@localhost>"
)
if "@" not in DEFAULT_FROM_EMAIL or "\n" in DEFAULT_FROM_EMAIL:
    raise ImproperlyConfigured(f"DEFAULT_FROM_EMAIL must be an address, not {DEFAULT_FROM_EMAIL!r}")
SERVER_EMAIL = DEFAULT_FROM_EMAIL
# Whom people write to about the site (a suspended account is told it at login). Empty:
# nobody is named.
RETWIS_CONTACT_EMAIL = os.environ.get("RETWIS_CONTACT_EMAIL", "").strip()
if RETWIS_CONTACT_EMAIL and (
    "@" not in RETWIS_CONTACT_EMAIL or any(ch.isspace() for ch in RETWIS_CONTACT_EMAIL)
):
    raise ImproperlyConfigured(
        f"RETWIS_CONTACT_EMAIL must be an e-mail address, not {RETWIS_CONTACT_EMAIL!r}"
    )
# The site's address for links in mail ("https://example.org"). Mail is written by the
# worker, away from any request, and a request's Host (port and all) is no address to mail
# out, so it is required when DEBUG is off (scripts/run-site sets http://127.0.0.1:$PORT).
SITE_URL = os.environ.get("SITE_URL", "").strip().rstrip("/")
if not SITE_URL and not DEBUG:
    raise ImproperlyConfigured(
        "Set SITE_URL, the site's address for links in mail (e.g. https://example.org), "
        "when DEBUG is off."
    )
SITE_URL = SITE_URL or "http://127.0.0.1:8000"  # DEBUG: runserver's
if not re.fullmatch(r"https?://[^/?#\s]+(/[^?#\s]*)?", SITE_URL):
    raise ImproperlyConfigured(f"SITE_URL must look like https://example.org, not {SITE_URL!r}")


# Federation's one HTTP client (social/federation/fetch.py), told how to reach test peers.
# FEDERATION_HOSTS (tests and two-instance runs only): "alpha.test=127.0.0.1:18001,..." sends
# a name's requests to that address (and port, else the URL's) with the name still its Host
# and TLS name; the address is still checked against the ranges below. FEDERATION_ALLOW_HTTP:
# peers may be reached and named over plain http. FEDERATION_ALLOW_ADDRESSES: ranges
# ("127.0.0.0/8,::1") the client may connect to despite the private-address rule.
def _federation_hosts(raw: str) -> dict[str, tuple[str, int | None]]:
    """Return FEDERATION_HOSTS as {name: (address, port or None)}; a malformed entry raises."""
    import ipaddress

    hosts: dict[str, tuple[str, int | None]] = {}
    for entry in (item.strip() for item in raw.split(",") if item.strip()):
        name, _, target = entry.partition("=")
        name = name.strip().lower()
        # An IPv4 address or a bracketed IPv6 one, then perhaps a port.
        found = re.fullmatch(r"(\[[0-9a-fA-F:.]+\]|[0-9.]+)(?::([0-9]{1,5}))?", target.strip())
        try:
            address = str(ipaddress.ip_address(found[1].strip("[]"))) if found else ""
        except ValueError:
            address = ""
        port = int(found[2]) if found and found[2] else None
        label = r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?"
        name_ok = len(name) <= 253 and re.fullmatch(rf"{label}(\.{label})*", name)
        if not (name_ok and address and (port is None or 1 <= port <= 65535)):
            raise ImproperlyConfigured(
                "FEDERATION_HOSTS must look like alpha.test=127.0.0.1:18001,beta.test=[::1]:18002 "
                f"(a host name, =, an IP address and optionally :port), not {entry!r}"
            )
        hosts[name] = (address, port)
    return hosts


def _federation_ranges(items: list[str]) -> list[str]:
    """Return FEDERATION_ALLOW_ADDRESSES's ranges normalised ("127.0.0.0/8"); junk raises."""
    import ipaddress

    try:
        return [str(ipaddress.ip_network(item, strict=False)) for item in items]
    except ValueError as error:
        raise ImproperlyConfigured(
            f"FEDERATION_ALLOW_ADDRESSES must be IP ranges like 127.0.0.0/8,::1/128: {error}"
        ) from None


FEDERATION_HOSTS = _federation_hosts(os.environ.get("FEDERATION_HOSTS", ""))
FEDERATION_ALLOW_HTTP = envbool("FEDERATION_ALLOW_HTTP", "false")
FEDERATION_ALLOW_ADDRESSES = _federation_ranges(envlist("FEDERATION_ALLOW_ADDRESSES", ""))

# The `auth` cookie carries the user's secret, as in the reference Retwis.
AUTH_COOKIE_NAME = "auth"
AUTH_COOKIE_AGE = envint("AUTH_COOKIE_AGE", 60 * 60 * 24 * 365, minimum=60)
SECURE_COOKIES = envbool("SECURE_COOKIES", "false")
CSRF_COOKIE_SECURE = SECURE_COOKIES
CSRF_COOKIE_HTTPONLY = True
CSRF_COOKIE_SAMESITE = "Lax"
MESSAGES_COOKIE_SAMESITE = "Lax"
if SECURE_COOKIES:
    # Served over HTTPS (behind a proxy that sets X-Forwarded-Proto): redirect plain HTTP and
    # ask browsers to stay on HTTPS. HSTS starts short; raise it once HTTPS is known good.
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = envbool("SECURE_SSL_REDIRECT", "true")
    SECURE_HSTS_SECONDS = envint("SECURE_HSTS_SECONDS", 3600)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = envbool("SECURE_HSTS_INCLUDE_SUBDOMAINS", "false")
    SECURE_HSTS_PRELOAD = envbool("SECURE_HSTS_PRELOAD", "false")
# `check --deploy` warns while those two are off (security.W005, W021). Both commit the whole
# registered domain, not this site (every subdomain HTTPS-only for the HSTS lifetime; a place
# in browsers' built-in preload list), so the operator opts in with the variables above
# (docs/deploy.md) rather than the site turning them on for everyone.
SILENCED_SYSTEM_CHECKS = ["security.W005", "security.W021"]

SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# No inline script or style anywhere, nothing from other origins (charts are inline SVG)
# but the pictures of other servers' posts, which readers' browsers load from those servers
# over https (the site keeps them as links: federation/objects.py), as Pleroma's policy
# allows them with its media proxy off.
CONTENT_SECURITY_POLICY = os.environ.get(
    "CONTENT_SECURITY_POLICY",
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: https:; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
)

# Request bodies (social/bodies.py, before Django reads any): at most RETWIS_MAX_BODY bytes
# (a number, or with K or M: KiB, MiB), enough for a post of four 10 MB pictures and its
# fields, and all of it within RETWIS_BODY_TIMEOUT seconds of the request's headers.
_body_raw = os.environ.get("RETWIS_MAX_BODY", "").strip() or "42M"
_body = re.fullmatch(r"([0-9]{1,10})([KM]?)", _body_raw)
RETWIS_MAX_BODY = int(_body[1]) * {"": 1, "K": 1024, "M": 1024**2}[_body[2]] if _body else 0
if not 64 * 1024 <= RETWIS_MAX_BODY <= 1024**3:
    raise ImproperlyConfigured(
        f"RETWIS_MAX_BODY must be bytes from 64K to 1024M (e.g. 42M or 65536), not {_body_raw!r}"
    )
RETWIS_BODY_TIMEOUT = envseconds("RETWIS_BODY_TIMEOUT", 10, minimum=0.1)
# Each uploaded file is kept to one byte past the pictures' limit (social/uploads.py): the
# forms refuse it with their own message, and the rest never reaches /tmp.
FILE_UPLOAD_HANDLERS = [
    "social.uploads.CappedUploadHandler",
    "django.core.files.uploadhandler.MemoryFileUploadHandler",
    "django.core.files.uploadhandler.TemporaryFileUploadHandler",
]

# Feed shapes.
RETWIS_HOME_FEED_CAP = envint("RETWIS_HOME_FEED_CAP", 1000, minimum=10)
RETWIS_TIMELINE_CAP = 1000  # the reference Retwis keeps exactly the newest 1000
RETWIS_FANOUT_BATCH = envint("RETWIS_FANOUT_BATCH", 1000, minimum=1)
# An author posting with at least this many followers is no longer copied into each
# follower's feed: their posts are merged into followers' home pages when read
# (docs/scaling.md, "Celebrities", for the measurements behind the default).
RETWIS_FANOUT_READ_THRESHOLD = envint("RETWIS_FANOUT_READ_THRESHOLD", 10_000, minimum=1)
# The streaming API (social/streaming/, docs/api.md): the URL the instance names for it
# (empty: this site's own origin, as ws:// or wss://, the proxy joining both), the seconds
# between heartbeats, the messages queued for a connection before a client that does not
# read is dropped.
RETWIS_STREAMING_URL = os.environ.get("RETWIS_STREAMING_URL", "").strip().rstrip("/")
if RETWIS_STREAMING_URL and not re.fullmatch(r"(wss?|https?)://[^/\s]+", RETWIS_STREAMING_URL):
    raise ImproperlyConfigured(
        f"RETWIS_STREAMING_URL must be ws(s)://host[:port], not {RETWIS_STREAMING_URL!r}"
    )
# Where the site's own pages listen (static/js/site.js, by the `auth` cookie): that URL
# as http(s), else this origin's, the proxy joining both (docs/deploy.md); the policy's
# connect-src allows exactly it beside the site's own origin.
_live_origin = re.sub(r"^ws", "http", RETWIS_STREAMING_URL)
RETWIS_LIVE_URL = _live_origin + "/api/v1/streaming"
if "CONTENT_SECURITY_POLICY" not in os.environ:
    CONTENT_SECURITY_POLICY += f"; connect-src 'self'{' ' + _live_origin if _live_origin else ''}"
RETWIS_STREAMING_HEARTBEAT = envseconds("RETWIS_STREAMING_HEARTBEAT", 15, minimum=0.05)
RETWIS_STREAMING_BUFFER = envint("RETWIS_STREAMING_BUFFER", 200, minimum=1)
# Connections per address (an IPv6 /64 counted as one, social.auth.address_subject; a
# household shares one) and per account.
RETWIS_STREAMING_PER_ADDRESS = envint("RETWIS_STREAMING_PER_ADDRESS", 100, minimum=1)
RETWIS_STREAMING_PER_ACCOUNT = envint("RETWIS_STREAMING_PER_ACCOUNT", 20, minimum=1)
# What a web process remembers between requests (social/repository/cache.py): posts'
# unchanging parts (about 0.6 KB each), auth secrets' users and client API tokens' users.
RETWIS_POST_CACHE_SIZE = envint("RETWIS_POST_CACHE_SIZE", 20_000)
RETWIS_SECRET_CACHE_SIZE = envint("RETWIS_SECRET_CACHE_SIZE", 10_000)
RETWIS_TOKEN_CACHE_SIZE = envint("RETWIS_TOKEN_CACHE_SIZE", 10_000)
# A profile URL's name -> user id, and the ids each page of posts listed last (its counts
# ride on the page's next first pipeline): social/repository/cache.py.
RETWIS_NAME_CACHE_SIZE = envint("RETWIS_NAME_CACHE_SIZE", 10_000)
RETWIS_SHOWN_CACHE_SIZE = envint("RETWIS_SHOWN_CACHE_SIZE", 10_000)
# Rendered pages a visitor sees alike, by what they show (social/remembered.py).
RETWIS_PAGE_CACHE_SIZE = envint("RETWIS_PAGE_CACHE_SIZE", 256)
# Rendered post cards, and rendered page parts (the layout's header per reader, a reader's
# blank composer, pagers, side columns) by what they show (social/templating/).
RETWIS_CARD_CACHE_SIZE = envint("RETWIS_CARD_CACHE_SIZE", 10_000)
RETWIS_PART_CACHE_SIZE = envint("RETWIS_PART_CACHE_SIZE", 4096)
RETWIS_FEED_PAGE_SIZE = 10
RETWIS_TIMELINE_PAGE_SIZE = 50
RETWIS_LIST_PAGE_SIZE = 50

# Two languages (locale/: the Simplified Chinese catalogue, compiled and kept in the repo;
# scripts/messages regenerates it). English is the default and what a client asking for
# no language we have gets.
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
LOCALE_PATHS = [BASE_DIR / "locale"]
USE_I18N = True
# The language switch in the footer (Django's set_language view) remembers the choice for
# a year in a cookie the pages' scripts never need.
LANGUAGE_COOKIE_AGE = 60 * 60 * 24 * 365
LANGUAGE_COOKIE_SAMESITE = "Lax"
LANGUAGE_COOKIE_HTTPONLY = True
LANGUAGE_COOKIE_SECURE = SECURE_COOKIES
TIME_ZONE = os.environ.get("TIME_ZONE", "UTC")
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
# Outside DEBUG, `manage.py collectstatic` (scripts/run-site runs it) writes content-hashed,
# gzipped copies to STATIC_ROOT; WhiteNoise serves them with far-future Cache-Control.
# Under DEBUG files are served from static/ as they are, with no collectstatic needed.
# Uploaded pictures (social/media.py): files under MEDIA_ROOT served at MEDIA_URL by the
# site's own view (far-future caching, nosniff), or with MEDIA_STORAGE=s3 an S3-compatible
# bucket through django-storages, so that many web servers share them (docs/deploy.md).
MEDIA_STORAGE = os.environ.get("MEDIA_STORAGE", "local")
if MEDIA_STORAGE not in ("local", "s3"):
    raise ImproperlyConfigured("MEDIA_STORAGE must be local or s3")
MEDIA_ROOT = Path(os.environ.get("MEDIA_ROOT", BASE_DIR / "var" / "media"))
MEDIA_URL = os.environ.get("MEDIA_URL", "/media/")
if not MEDIA_URL.endswith("/"):
    raise ImproperlyConfigured("MEDIA_URL must end with /")
MEDIA_CACHE_CONTROL = "public, max-age=31536000, immutable"  # names are never reused
if MEDIA_STORAGE == "s3":
    # django-storages reads these (its S3 settings); boto3 reads the credentials from
    # AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or an instance role) itself.
    AWS_STORAGE_BUCKET_NAME = os.environ.get("S3_BUCKET", "")
    if not AWS_STORAGE_BUCKET_NAME:
        raise ImproperlyConfigured("MEDIA_STORAGE=s3 needs S3_BUCKET")
    AWS_S3_ENDPOINT_URL = os.environ.get("S3_ENDPOINT_URL") or None
    AWS_S3_REGION_NAME = os.environ.get("S3_REGION") or None
    # Public pictures at plain URLs (a CDN's with S3_CUSTOM_DOMAIN), never signed.
    AWS_S3_CUSTOM_DOMAIN = os.environ.get("S3_CUSTOM_DOMAIN") or None
    AWS_QUERYSTRING_AUTH = False
    AWS_S3_FILE_OVERWRITE = False
    AWS_S3_OBJECT_PARAMETERS = {
        "CacheControl": MEDIA_CACHE_CONTROL,
        "ContentDisposition": "inline",
    }
    MEDIA_BACKEND = "storages.backends.s3.S3Storage"
else:
    # MEDIA_ROOT and MEDIA_URL are its defaults (and follow them when tests change them).
    MEDIA_BACKEND = "django.core.files.storage.FileSystemStorage"
STORAGES = {
    "default": {"BACKEND": MEDIA_BACKEND},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}

# Pictures from a bucket come from its origin: the default policy lets images load from it.
if MEDIA_STORAGE == "s3" and "CONTENT_SECURITY_POLICY" not in os.environ:
    _media_origin = (
        f"https://{AWS_S3_CUSTOM_DOMAIN}"
        if AWS_S3_CUSTOM_DOMAIN
        else AWS_S3_ENDPOINT_URL or f"https://{AWS_STORAGE_BUCKET_NAME}.s3.amazonaws.com"
    )
    CONTENT_SECURITY_POLICY = CONTENT_SECURITY_POLICY.replace(
        "img-src 'self' data:", f"img-src 'self' data: {_media_origin}"
    )

# Error reports (the DEBUG page) mask the password in REDIS_URL and any other URL.
DEFAULT_EXCEPTION_REPORTER_FILTER = "social.debug.RedactingExceptionReporterFilter"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    # Django's own loggers would also print through Django's default console handler:
    # send them to the root handler only, so each line appears once.
    "loggers": {"django": {"handlers": [], "propagate": True, "level": "INFO"}},
}
