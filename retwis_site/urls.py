"""Root URLconf: the public site, the staff pages, the client API."""

from django.conf import settings
from django.urls import URLPattern, URLResolver, include, path

from social import media

urlpatterns: list[URLPattern | URLResolver] = [
    # The client API first: /api/ is one prefix to try; then OAuth's few routes (api:...).
    path("", include("social.api.urls")),
    path("", include("social.urls")),  # names: social:home, social:profile, ...
    path("staff/", include("social.staff.urls")),
    path("", include("social.federation.urls")),  # ActivityPub: /ap/ (last: pages go first)
]
# Local pictures (social/media.py); a bucket serves its own (media.serve answers 404 unless
# MEDIA_STORAGE is local, asked per request: the URLconf outlives a settings change).
if settings.MEDIA_URL.startswith("/"):
    urlpatterns.append(path(f"{settings.MEDIA_URL[1:]}<path:name>", media.serve, name="media"))

handler400 = "social.errors.bad_request"
handler404 = "social.errors.page_not_found"
handler403 = "social.errors.permission_denied"
handler500 = "social.errors.server_error"
