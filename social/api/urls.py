"""URLs of the client API (Mastodon's paths: a public contract) and its OAuth pages."""

from django.urls import path, re_path

from . import oauth_views
from .base import not_found

app_name = "api"

urlpatterns = [
    # OAuth 2 (social/api/oauth.py). toot asks for /oauth/authorize/ with a slash.
    path("oauth/authorize", oauth_views.AuthorizeView.as_view(), name="authorize"),
    path("oauth/authorize/", oauth_views.AuthorizeView.as_view()),
    path("oauth/token", oauth_views.token_view, name="token"),
    path("oauth/revoke", oauth_views.revoke_view, name="revoke"),
    path(
        ".well-known/oauth-authorization-server",
        oauth_views.metadata_view,
        name="oauth_metadata",
    ),
    path("settings/apps/", oauth_views.AppsSettingsView.as_view(), name="settings_apps"),
    path(
        "settings/apps/<str:client_id>/revoke/",
        oauth_views.AppRevokeView.as_view(),
        name="settings_app_revoke",
    ),
    path("api/v1/apps", oauth_views.AppsView.as_view(), name="apps"),
    path("api/v1/apps/verify_credentials", oauth_views.AppVerifyView.as_view()),
    # Any other API path: Mastodon's 404, as JSON.
    re_path(r"^api/(?P<rest>.*)$", not_found),
]
