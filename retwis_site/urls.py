"""Root URLconf: the public site, the staff pages, the client API."""

from django.urls import include, path

urlpatterns = [
    path("", include("social.urls")),  # names: social:home, social:profile, ...
    path("staff/", include("social.staff.urls")),
    path("", include("social.api.urls")),  # the client API and OAuth: api:...
]

handler404 = "social.errors.page_not_found"
handler403 = "social.errors.permission_denied"
handler500 = "social.errors.server_error"
