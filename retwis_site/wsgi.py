"""WSGI entry point: Django with every request's body bounded before it reads any
(social/bodies.py: RETWIS_MAX_BODY, RETWIS_BODY_TIMEOUT), and the visitor's front page
answered before both (social/front.py: a GET it answers from memory reads no body)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "retwis_site.settings")
django_application = get_wsgi_application()

from django.conf import settings  # noqa: E402  (after Django is set up)

from social.bodies import BoundedBodies  # noqa: E402
from social.front import FrontPageCache  # noqa: E402

application = FrontPageCache(
    BoundedBodies(
        django_application,
        max_bytes=settings.RETWIS_MAX_BODY,
        timeout=settings.RETWIS_BODY_TIMEOUT,
        proxied=bool(settings.TRUSTED_PROXY_HEADER),
    )
)
