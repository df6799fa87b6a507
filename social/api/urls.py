"""URLs of the client API (Mastodon's paths: a public contract) and its OAuth pages."""

from django.urls import include, path, re_path

from . import (
    accounts,
    avatars,
    filters,
    instance,
    media,
    nodeinfo,
    notifications,
    oauth_views,
    people,
    push,
    statuses,
    tags,
    timelines,
)
from .base import not_found

app_name = "api"


def both(route: str, view, name: str | None = None) -> list:
    """The route, and the same with a trailing slash: Mastodon (Rails) takes either, and
    clients send either (Mastodon.py asks for /api/v1/instance/)."""
    return [path(route, view, name=name), path(route + "/", view)]


V1 = "v1/"
ACCOUNT = V1 + "accounts/<str:account_id>/"
STATUS = V1 + "statuses/<str:status_id>/"
# What the site has none of: an empty list (instance.EmptyListView).
EMPTY_LISTS = (
    "custom_emojis", "lists", "follow_requests", "bookmarks", "conversations", "announcements",
    "endorsements", "featured_tags", "followed_tags", "trends",
    "trends/tags", "trends/statuses", "trends/links", "scheduled_statuses", "suggestions",
    "instance/peers",
)  # fmt: skip

api_patterns = [
    # Timelines, favourites, notifications, search (first: the hottest routes)
    *both(V1 + "timelines/home", timelines.HomeView.as_view(), name="home"),
    *both(V1 + "timelines/public", timelines.PublicView.as_view()),
    *both(V1 + "timelines/tag/<str:hashtag>", timelines.TagView.as_view()),
    *both(V1 + "favourites", timelines.FavouritesView.as_view()),
    *both(V1 + "notifications", notifications.NotificationsView.as_view()),
    *both(V1 + "notifications/clear", notifications.ClearNotificationsView.as_view()),
    *both(V1 + "notifications/unread_count", notifications.UnreadCountView.as_view()),
    *both(V1 + "notifications/<str:notification_id>", notifications.NotificationView.as_view()),
    *both("v2/notifications", notifications.GroupedNotificationsView.as_view()),
    *both("v2/notifications/unread_count", notifications.UnreadCountView.as_view(grouping=True)),
    *both("v2/notifications/<str:group_key>", notifications.NotificationGroupView.as_view()),
    *both(
        "v2/notifications/<str:group_key>/accounts",
        notifications.NotificationGroupAccountsView.as_view(),
    ),
    *both(V1 + "markers", notifications.MarkersView.as_view()),
    *both("v2/search", timelines.SearchView.as_view()),
    *both(V1 + "apps", oauth_views.AppsView.as_view(), name="apps"),
    *both(V1 + "apps/verify_credentials", oauth_views.AppVerifyView.as_view()),
    # The server
    *both(V1 + "instance", instance.InstanceV1View.as_view(), name="instance"),
    *both("v2/instance", instance.InstanceV2View.as_view(), name="instance_v2"),
    *both(V1 + "instance/languages", instance.LanguagesView.as_view()),
    *both(V1 + "instance/rules", instance.RulesView.as_view()),
    *both(V1 + "instance/extended_description", instance.ExtendedDescriptionView.as_view()),
    *both(V1 + "instance/activity", instance.ActivityView.as_view()),
    *both(V1 + "directory", people.DirectoryView.as_view()),
    *both(V1 + "push/subscription", push.PushSubscriptionView.as_view()),
    # Tags
    *both(V1 + "tags/<str:hashtag>", tags.TagView.as_view()),
    *both(V1 + "tags/<str:hashtag>/follow", tags.TagFollowView.as_view()),
    *both(V1 + "tags/<str:hashtag>/unfollow", tags.TagFollowView.as_view()),
    *both(V1 + "featured_tags/suggestions", tags.FeaturedTagSuggestionsView.as_view()),
    *both(V1 + "preferences", instance.PreferencesView.as_view()),
    *(p for name in EMPTY_LISTS for p in both(V1 + name, instance.EmptyListView.as_view())),
    # Word filters
    *both("v2/filters", filters.FiltersView.as_view()),
    *both("v2/filters/keywords/<str:keyword_id>", filters.KeywordView.as_view()),
    *both("v2/filters/<str:filter_id>", filters.FilterView.as_view()),
    *both("v2/filters/<str:filter_id>/keywords", filters.KeywordsView.as_view()),
    *both("v2/filters/<str:filter_id>/statuses", filters.FilterStatusesView.as_view()),
    *both(V1 + "filters", filters.FiltersV1View.as_view()),
    *both(V1 + "filters/<str:filter_id>", filters.FilterV1View.as_view()),
    *both("v2/suggestions", instance.EmptyListView.as_view()),
    # Accounts
    *both(V1 + "accounts", accounts.AccountsView.as_view()),
    *both(V1 + "accounts/verify_credentials", accounts.VerifyCredentialsView.as_view()),
    *both(V1 + "accounts/update_credentials", accounts.UpdateCredentialsView.as_view()),
    *both(V1 + "accounts/lookup", accounts.LookupView.as_view()),
    *both(V1 + "accounts/search", accounts.AccountSearchView.as_view()),
    *both(V1 + "accounts/relationships", accounts.RelationshipsView.as_view()),
    *both(V1 + "accounts/familiar_followers", people.FamiliarFollowersView.as_view()),
    *both(V1 + "accounts/<str:account_id>", accounts.AccountView.as_view(), name="account"),
    *both(ACCOUNT + "statuses", accounts.AccountStatusesView.as_view()),
    *both(ACCOUNT + "followers", accounts.FollowListView.as_view(which="followers")),
    *both(ACCOUNT + "following", accounts.FollowListView.as_view(which="following")),
    *both(ACCOUNT + "featured_tags", people.FeaturedTagsView.as_view()),
    *(
        p
        for action in accounts.AccountActionView.ACTIONS
        for p in both(ACCOUNT + action, accounts.AccountActionView.as_view(action=action))
    ),
    *both(V1 + "blocks", accounts.RelationListView.as_view(which="blocks")),
    *both(
        V1 + "mutes",
        accounts.RelationListView.as_view(which="mutes", scopes={"get": "read:mutes"}),
    ),
    # Pictures
    *both(V1 + "media", media.MediaView.as_view()),
    *both("v2/media", media.MediaView.as_view()),
    *both(V1 + "media/<str:media_id>", media.MediaItemView.as_view()),
    # Statuses
    *both(V1 + "statuses", statuses.StatusesView.as_view(), name="statuses"),
    *both(V1 + "statuses/<str:status_id>", statuses.StatusView.as_view(), name="status"),
    *both(STATUS + "context", statuses.ContextView.as_view()),
    *both(STATUS + "favourite", statuses.FavouriteView.as_view(action="like")),
    *both(STATUS + "unfavourite", statuses.FavouriteView.as_view(action="unlike")),
    *both(STATUS + "favourited_by", statuses.WhoView.as_view(which="favourited_by")),
    *both(STATUS + "reblog", statuses.ReblogView.as_view(action="repost")),
    *both(STATUS + "unreblog", statuses.ReblogView.as_view(action="unrepost")),
    *both(STATUS + "reblogged_by", statuses.WhoView.as_view(which="reblogged_by")),
    re_path(
        r"^v1/statuses/(?P<status_id>[^/]+)/"
        r"(?P<action>bookmark|unbookmark|pin|unpin|mute|unmute|translate)/?$",
        statuses.UnsupportedStatusActionView.as_view(),
    ),
    # Any other API path: Mastodon's 404, as JSON.
    re_path(r"^(?P<rest>.*)$", not_found),
]

urlpatterns = [
    # The API under one prefix: a page of the site tries it once, not route by route.
    path("api/", include(api_patterns)),
    # OAuth 2 (social/api/oauth.py). toot asks for /oauth/authorize/ with a slash.
    path("oauth/authorize", oauth_views.AuthorizeView.as_view(), name="authorize"),
    path("oauth/authorize/", oauth_views.AuthorizeView.as_view()),
    path("oauth/token", oauth_views.token_view, name="token"),
    path("oauth/revoke", oauth_views.revoke_view, name="revoke"),
    # What server this is (NodeInfo), for tools that ask.
    path(".well-known/nodeinfo", nodeinfo.DiscoveryView.as_view(), name="nodeinfo_links"),
    path("nodeinfo/2.0", nodeinfo.NodeInfoView.as_view(), name="nodeinfo"),
    path(".well-known/host-meta", nodeinfo.HostMetaView.as_view(), name="host_meta"),
    path(".well-known/host-meta.json", nodeinfo.HostMetaView.as_view(as_json=True)),
    path(".well-known/webfinger", nodeinfo.WebFingerView.as_view(), name="webfinger"),
    path(
        ".well-known/oauth-authorization-server",
        oauth_views.metadata_view,
        name="oauth_metadata",
    ),
    # Generated avatars of accounts without a picture (social/api/avatars.py).
    path("avatars/initial/<str:face>.png", avatars.initial_avatar, name="initial_avatar"),
    path("settings/apps/", oauth_views.AppsSettingsView.as_view(), name="settings_apps"),
    path(
        "settings/apps/<str:client_id>/revoke/",
        oauth_views.AppRevokeView.as_view(),
        name="settings_app_revoke",
    ),
]
