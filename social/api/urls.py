"""URLs of the client API (Mastodon's paths: a public contract) and its OAuth pages."""

from django.urls import path, re_path

from . import accounts, instance, oauth_views, statuses, timelines
from .base import not_found

app_name = "api"

V1 = "api/v1/"
ACCOUNT = V1 + "accounts/<str:account_id>/"
STATUS = V1 + "statuses/<str:status_id>/"
# What the site has none of: an empty list (instance.EmptyListView).
EMPTY_LISTS = (
    "custom_emojis", "lists", "follow_requests", "bookmarks", "conversations", "filters",
    "announcements", "endorsements", "featured_tags", "followed_tags", "trends",
    "trends/tags", "trends/statuses", "trends/links", "scheduled_statuses", "suggestions",
)  # fmt: skip

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
    path(V1 + "apps", oauth_views.AppsView.as_view(), name="apps"),
    path(V1 + "apps/verify_credentials", oauth_views.AppVerifyView.as_view()),
    # The server
    path(V1 + "instance", instance.InstanceV1View.as_view(), name="instance"),
    path("api/v2/instance", instance.InstanceV2View.as_view(), name="instance_v2"),
    path(V1 + "preferences", instance.PreferencesView.as_view()),
    *(path(V1 + name, instance.EmptyListView.as_view()) for name in EMPTY_LISTS),
    path("api/v2/filters", instance.EmptyListView.as_view()),
    path("api/v2/suggestions", instance.EmptyListView.as_view()),
    # Accounts
    path(V1 + "accounts/verify_credentials", accounts.VerifyCredentialsView.as_view()),
    path(V1 + "accounts/lookup", accounts.LookupView.as_view()),
    path(V1 + "accounts/relationships", accounts.RelationshipsView.as_view()),
    path(ACCOUNT, accounts.AccountView.as_view(), name="account"),
    path(ACCOUNT + "statuses", accounts.AccountStatusesView.as_view()),
    path(ACCOUNT + "followers", accounts.FollowListView.as_view(which="followers")),
    path(ACCOUNT + "following", accounts.FollowListView.as_view(which="following")),
    *(
        path(ACCOUNT + action, accounts.AccountActionView.as_view(action=action))
        for action in accounts.AccountActionView.ACTIONS
    ),
    path(V1 + "blocks", accounts.RelationListView.as_view(which="blocks")),
    path(
        V1 + "mutes",
        accounts.RelationListView.as_view(which="mutes", scopes={"get": "read:mutes"}),
    ),
    # Statuses
    path(V1 + "statuses", statuses.StatusesView.as_view(), name="statuses"),
    path(V1 + "statuses/<str:status_id>", statuses.StatusView.as_view(), name="status"),
    path(STATUS + "context", statuses.ContextView.as_view()),
    path(STATUS + "favourite", statuses.FavouriteView.as_view(action="like")),
    path(STATUS + "unfavourite", statuses.FavouriteView.as_view(action="unlike")),
    path(STATUS + "favourited_by", statuses.FavouritedByView.as_view()),
    path(STATUS + "reblog", statuses.ReblogView.as_view(action="repost")),
    path(STATUS + "unreblog", statuses.ReblogView.as_view(action="unrepost")),
    path(STATUS + "reblogged_by", statuses.RebloggedByView.as_view()),
    re_path(
        r"^api/v1/statuses/(?P<status_id>[^/]+)/(?P<action>bookmark|unbookmark|pin|unpin|mute|unmute|translate)$",
        statuses.UnsupportedStatusActionView.as_view(),
    ),
    # Timelines, favourites, notifications, search
    path(V1 + "timelines/home", timelines.HomeView.as_view(), name="home"),
    path(V1 + "timelines/public", timelines.PublicView.as_view()),
    path(V1 + "timelines/tag/<str:hashtag>", timelines.TagView.as_view()),
    path(V1 + "favourites", timelines.FavouritesView.as_view()),
    path(V1 + "notifications", timelines.NotificationsView.as_view()),
    path(V1 + "notifications/clear", timelines.ClearNotificationsView.as_view()),
    path("api/v2/search", timelines.SearchView.as_view()),
    # Any other API path: Mastodon's 404, as JSON.
    re_path(r"^api/(?P<rest>.*)$", not_found),
]
