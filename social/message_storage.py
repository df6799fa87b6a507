"""Flash messages in a signed cookie (settings.MESSAGE_STORAGE), as Django keeps them."""

from __future__ import annotations

from functools import cached_property

from django.contrib.messages.storage import cookie
from django.contrib.messages.storage.base import BaseStorage
from django.core import signing


class CookieStorage(cookie.CookieStorage):
    """Django's CookieStorage, its signer built when a message is first read from or
    written to the cookie, not for every request: MessageMiddleware makes a storage for
    each one, and the signer (settings read through the lazy object, the backend imported
    by name, the key derived) cost about 1 % of a page that shows no message."""

    def __init__(self, request, *args, **kwargs) -> None:
        BaseStorage.__init__(self, request, *args, **kwargs)

    @cached_property
    def signer(self) -> signing.Signer:
        return signing.get_cookie_signer(salt=self.key_salt)
