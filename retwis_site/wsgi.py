"""WSGI entry point: Django, with the visitor's front page answered before it
(social/front.py)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "retwis_site.settings")
django_application = get_wsgi_application()

from social.front import FrontPageCache  # noqa: E402  (after Django is set up)

application = FrontPageCache(django_application)
