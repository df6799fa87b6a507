"""What Django's error reports may show: no password from a URL.

Django's own filter hides settings whose names look secret (KEY, PASS, TOKEN, ...) but not
REDIS_URL, whose URL may carry the Redis password (redis://user:password@host), nor the
cache's LOCATION, nor the same URL in the environment that `runserver` passes into
request.META, nor a traceback's local variable holding it. This filter masks the password
in any such URL and keeps the rest (scheme, user, host, port, database), which is what
debugging needs. settings.DEFAULT_EXCEPTION_REPORTER_FILTER names it.
"""

from __future__ import annotations

import re

from django.views.debug import SafeExceptionReporterFilter

# scheme://[user]:password@ : the password ends at the first "@" (RFC 3986 percent-encodes
# any "@" inside it), and spans no "/" or whitespace, so "host:6379/0" is never a password.
URL_PASSWORD_RE = re.compile(r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://[^:@/\s]*:)[^@/\s]+@")


def mask_url_passwords(text: str) -> str:
    """Return text with the password of every URL in it replaced by asterisks."""
    return URL_PASSWORD_RE.sub(
        lambda m: m["head"] + SafeExceptionReporterFilter.cleansed_substitute + "@", text
    )


class RedactingExceptionReporterFilter(SafeExceptionReporterFilter):
    """Django's SafeExceptionReporterFilter, also masking passwords inside URLs."""

    def cleanse_setting(self, key, value):
        """Cleanse a setting or request.META entry; strings lose their URL passwords
        (dicts, lists and tuples come back through here for each item)."""
        value = super().cleanse_setting(key, value)
        return mask_url_passwords(value) if isinstance(value, str) else value

    def cleanse_special_types(self, request, value):
        """Cleanse a traceback frame's local variable; strings lose their URL passwords."""
        value = super().cleanse_special_types(request, value)
        return mask_url_passwords(value) if isinstance(value, str) else value
