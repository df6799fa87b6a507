"""URLs of the public site (a public contract: keep them)."""

from django.urls import path, register_converter
from django.views.i18n import set_language

from social import account_views, email_views, feeds, post_actions, post_views, views
from social.forms import TAG_NAME_RE, is_tag
from social.profile_views import ProfileSettingsView
from social.relation_views import (
    BlockView,
    FilterDeleteView,
    FilterView,
    FollowListView,
    FollowView,
    MutualsView,
    RelationListView,
    RelationView,
)


class TagConverter:
    """<tag:tag>: a hashtag as social.text finds it (letters of any script, digits,
    underscore; not digits alone). Anything else matches no URL: a 404 before any view."""

    regex = TAG_NAME_RE.pattern

    def to_python(self, value: str) -> str:
        if not is_tag(value):
            raise ValueError(value)  # the resolver treats this as "no match": 404
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(TagConverter, "tag")

app_name = "social"

urlpatterns = [
    path("", views.HomeView.as_view(), name="home"),
    path("register/", account_views.RegisterView.as_view(), name="register"),
    path("login/", account_views.LoginView.as_view(), name="login"),
    path("logout/", account_views.LogoutView.as_view(), name="logout"),
    path("post/", post_views.PostCreateView.as_view(), name="post"),
    path("notices/dismiss/", account_views.DismissNoticesView.as_view(), name="dismiss_notices"),
    path("timeline/", views.TimelineView.as_view(), name="timeline"),
    path("timeline/feed/", feeds.TimelineFeed(), name="timeline_feed"),
    path("u/<str:username>/", views.ProfileView.as_view(), name="profile"),
    path("u/<str:username>/feed/", feeds.ProfileFeed(), name="profile_feed"),
    path("u/<str:username>/follow/", FollowView.as_view(action="follow"), name="follow"),
    path("u/<str:username>/unfollow/", FollowView.as_view(action="unfollow"), name="unfollow"),
    path(
        "u/<str:username>/followers/",
        FollowListView.as_view(which="followers"),
        name="followers",
    ),
    path(
        "u/<str:username>/followers/you-follow/",
        MutualsView.as_view(),
        name="mutuals",
    ),
    path(
        "u/<str:username>/following/",
        FollowListView.as_view(which="following"),
        name="following",
    ),
    path("p/<int:post_id>/", post_views.PostDetailView.as_view(), name="post_detail"),
    path("healthz", views.HealthView.as_view(), name="healthz"),
    path("p/<int:post_id>/report/", post_views.ReportPostView.as_view(), name="report_post"),
    path("p/<int:post_id>/like/", post_actions.LikeView.as_view(action="like"), name="like"),
    path("p/<int:post_id>/unlike/", post_actions.LikeView.as_view(action="unlike"), name="unlike"),
    path(
        "p/<int:post_id>/repost/",
        post_actions.RepostView.as_view(action="repost"),
        name="repost",
    ),
    path(
        "p/<int:post_id>/unrepost/",
        post_actions.RepostView.as_view(action="unrepost"),
        name="unrepost",
    ),
    path("p/<int:post_id>/delete/", post_views.DeletePostView.as_view(), name="delete_post"),
    path("mentions/", views.MentionsView.as_view(), name="mentions"),
    path("search/", views.SearchView.as_view(), name="search"),
    path("notifications/", views.NotificationsView.as_view(), name="notifications"),
    path("tag/<tag:tag>/", views.TagView.as_view(), name="tag"),
    path("tag/<tag:tag>/feed/", feeds.TagFeed(), name="tag_feed"),
    path("u/<str:username>/likes/", views.LikesView.as_view(), name="likes"),
    path("settings/profile/", ProfileSettingsView.as_view(), name="profile_settings"),
    path("settings/", account_views.SettingsView.as_view(), name="settings"),
    path("settings/language/", account_views.LanguageView.as_view(), name="language"),
    path("settings/password/", account_views.PasswordChangeView.as_view(), name="password_change"),
    path("settings/delete/", account_views.DeleteAccountView.as_view(), name="delete_account"),
    path("settings/email/", email_views.EmailView.as_view(), name="email"),
    path("settings/email/remove/", email_views.RemoveEmailView.as_view(), name="email_remove"),
    path(
        "settings/email/confirm/<str:token>/",
        email_views.ConfirmEmailView.as_view(),
        name="email_confirm",
    ),
    path("password/forgot/", email_views.ForgotPasswordView.as_view(), name="password_forgot"),
    path(
        "password/reset/<str:token>/",
        email_views.ResetPasswordView.as_view(),
        name="password_reset",
    ),
    path("u/<str:username>/block/", BlockView.as_view(), name="block"),  # GET: confirm
    *(
        path(f"u/<str:username>/{action}/", RelationView.as_view(action=action), name=action)
        for action in RelationView.ACTIONS
        if action != "block"
    ),
    path("settings/blocks/", RelationListView.as_view(which="blocks"), name="blocks"),
    path("settings/mutes/", RelationListView.as_view(which="mutes"), name="mutes"),
    path("settings/filters/", FilterView.as_view(), name="filters"),
    path(
        "settings/filters/<int:filter_id>/delete/",
        FilterDeleteView.as_view(),
        name="filter_delete",
    ),
    # The footer's language switch and /settings/language/'s: Django's own view (POST,
    # CSRF; a safe `next`; the language cookie).
    path("i18n/setlang/", set_language, name="set_language"),
]
