"""A page's masked CSRF token, its random characters drawn with one read of the OS's source.

Django's get_token() draws each character of a new secret and of every mask with
secrets.choice(): one getrandbits() call, so one urandom read, per character, 64 for a
visitor's first page (about 12 % of what /login/ cost). get_token() here is Django's,
except that the characters come from one os.urandom() read by rejection sampling: bytes of
248 and above are dropped and the rest taken modulo 62, so each of the 62 characters is
exactly as likely as with secrets.choice(), from the same source. The token has Django's
format (mask, then the secret shifted by the mask), which CsrfViewMiddleware checks as
usual, and the secret goes where Django's goes (request.META, then the cookie).
"""

from __future__ import annotations

import os

from django.http import HttpRequest
from django.middleware.csrf import CSRF_ALLOWED_CHARS, CSRF_SECRET_LENGTH

_SIZE = len(CSRF_ALLOWED_CHARS)  # 62
# The largest multiple of 62 a byte reaches: bytes below it map evenly onto the characters.
ACCEPTED = 256 - 256 % _SIZE  # 248
_TABLE = bytes(ord(CSRF_ALLOWED_CHARS[b % _SIZE]) if b < ACCEPTED else 0 for b in range(256))
_REJECTED = bytes(range(ACCEPTED, 256))
# (secret character, mask character) -> the cipher character: Django's _mask_cipher_secret.
_SHIFTED = {
    (a, b): CSRF_ALLOWED_CHARS[(i + j) % _SIZE]
    for i, a in enumerate(CSRF_ALLOWED_CHARS)
    for j, b in enumerate(CSRF_ALLOWED_CHARS)
}


def random_string(length: int = CSRF_SECRET_LENGTH) -> str:
    """Return length characters of CSRF_ALLOWED_CHARS, uniform and independent."""
    drawn = b""
    while len(drawn) < length:  # 3 % of bytes are dropped: one read almost always does
        drawn += os.urandom(length + 8).translate(_TABLE, _REJECTED)
    return drawn[:length].decode("ascii")


def mask(secret: str) -> str:
    """Return secret masked with a new random mask (Django's _mask_cipher_secret)."""
    pad = random_string(len(secret))
    return pad + "".join(map(_SHIFTED.__getitem__, zip(secret, pad)))


def get_token(request: HttpRequest) -> str:
    """Return a newly masked CSRF token for request, making its secret when it has none
    (Django's get_token: the middleware then sends the cookie)."""
    secret = request.META.get("CSRF_COOKIE")
    if secret is None:
        secret = random_string()
        request.META["CSRF_COOKIE"] = secret
    request.META["CSRF_COOKIE_NEEDS_UPDATE"] = True
    return mask(secret)
