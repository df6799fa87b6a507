"""Root URLconf: the public site, the staff pages, the client API."""

from django.urls import include, path

urlpatterns = [
    # The client API first: /api/ is one prefix to try; then OAuth's few routes (api:...).
    path("", include("social.api.urls")),
    path("", include("social.urls")),  # names: social:home, social:profile, ...
    path("staff/", include("social.staff.urls")),
]

handler404 = "social.errors.page_not_found"
handler403 = "social.errors.permission_denied"
handler500 = "social.errors.server_error"
