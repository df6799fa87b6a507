"""Settings for the Retwis site, read from the environment through strict helpers.

Every value a deployment changes comes from an environment variable. Outside DEBUG the
insecure development defaults (secret key, hosts) are refused rather than silently used.
"""

from __future__ import annotations

import os
from pathlib import Path

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
        # (url, static, querystring, intcomma, naturaltime, ...) live in social/templating.py.
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
REDIS_SOCKET_TIMEOUT = float(os.environ.get("REDIS_SOCKET_TIMEOUT", "2"))
CACHES = {
    "default": {
        "BACKEND": "django_redis.cache.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": "cache",
        "OPTIONS": {
            "CLIENT_CLASS": "django_redis.client.DefaultClient",
            "SOCKET_CONNECT_TIMEOUT": 1,
            "SOCKET_TIMEOUT": REDIS_SOCKET_TIMEOUT,
            "CONNECTION_POOL_KWARGS": {"health_check_interval": 30},
        },
    }
}

# Messages travel in a signed cookie: there is no session store.
MESSAGE_STORAGE = "django.contrib.messages.storage.cookie.CookieStorage"

# The password hash lives in the user's Redis hash; Django's hashers make and check it.
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "social:login"
LOGIN_REDIRECT_URL = "social:home"

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
# No inline script or style anywhere, nothing from other origins (charts are inline SVG).
CONTENT_SECURITY_POLICY = os.environ.get(
    "CONTENT_SECURITY_POLICY",
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
)

# Feed shapes.
RETWIS_HOME_FEED_CAP = envint("RETWIS_HOME_FEED_CAP", 1000, minimum=10)
RETWIS_TIMELINE_CAP = 1000  # the reference Retwis keeps exactly the newest 1000
RETWIS_FANOUT_BATCH = envint("RETWIS_FANOUT_BATCH", 1000, minimum=1)
# What a web process remembers between requests (social/repository/cache.py): posts'
# unchanging parts (about 0.6 KB each) and auth secrets' user ids.
RETWIS_POST_CACHE_SIZE = envint("RETWIS_POST_CACHE_SIZE", 20_000)
RETWIS_SECRET_CACHE_SIZE = envint("RETWIS_SECRET_CACHE_SIZE", 10_000)
RETWIS_FEED_PAGE_SIZE = 10
RETWIS_TIMELINE_PAGE_SIZE = 50
RETWIS_LIST_PAGE_SIZE = 50

LANGUAGE_CODE = "en-us"
TIME_ZONE = os.environ.get("TIME_ZONE", "UTC")
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
# Outside DEBUG, `manage.py collectstatic` (scripts/run-site runs it) writes content-hashed,
# gzipped copies to STATIC_ROOT; WhiteNoise serves them with far-future Cache-Control.
# Under DEBUG files are served from static/ as they are, with no collectstatic needed.
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    # Django's own loggers would also print through Django's default console handler:
    # send them to the root handler only, so each line appears once.
    "loggers": {"django": {"handlers": [], "propagate": True, "level": "INFO"}},
}
