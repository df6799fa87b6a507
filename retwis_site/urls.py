"""Root URLconf: the public site and the staff pages."""

from django.urls import include, path

urlpatterns = [
    path("", include("social.urls")),  # names: social:home, social:profile, ...
    path("staff/", include("social.staff.urls")),
]

handler404 = "social.errors.page_not_found"
handler403 = "social.errors.permission_denied"
handler500 = "social.errors.server_error"
