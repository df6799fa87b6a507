"""Test settings: the site's settings with test-only values set before they are read.

REDIS_URL points at a port nothing listens on: a test that forgets the `redis_url` fixture
fails loudly instead of writing to whatever Redis runs on the machine.
"""

import os

os.environ.setdefault("SECRET_KEY", "tests-only-secret-key")
os.environ.setdefault("DEBUG", "false")
os.environ.setdefault("ALLOWED_HOSTS", "testserver,localhost,127.0.0.1")
os.environ.setdefault("SITE_URL", "http://testserver")  # the base of links in mail
os.environ["REDIS_URL"] = "redis://127.0.0.1:9/0"

from retwis_site.settings import *  # noqa: E402,F403

# Fast hashing in tests only; the site uses Argon2id (social/hashers.py).
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# No collectstatic in tests: plain storage (unhashed URLs, no manifest), and WhiteNoise finds
# files in static/ through the finders, as under DEBUG, instead of scanning STATIC_ROOT.
STORAGES = {
    **STORAGES,  # noqa: F405
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = True
