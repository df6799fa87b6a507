"""URLs of the public site (a public contract: keep them)."""

from django.urls import path

from social import views

app_name = "social"

urlpatterns = [
    path("", views.HomeView.as_view(), name="home"),
    path("register/", views.RegisterView.as_view(), name="register"),
    path("login/", views.LoginView.as_view(), name="login"),
    path("logout/", views.LogoutView.as_view(), name="logout"),
    path("post/", views.PostCreateView.as_view(), name="post"),
    path("notices/dismiss/", views.DismissNoticesView.as_view(), name="dismiss_notices"),
    path("timeline/", views.TimelineView.as_view(), name="timeline"),
    path("u/<str:username>/", views.ProfileView.as_view(), name="profile"),
    path("u/<str:username>/follow/", views.FollowView.as_view(action="follow"), name="follow"),
    path(
        "u/<str:username>/unfollow/", views.FollowView.as_view(action="unfollow"), name="unfollow"
    ),
    path(
        "u/<str:username>/followers/",
        views.FollowListView.as_view(which="followers"),
        name="followers",
    ),
    path(
        "u/<str:username>/following/",
        views.FollowListView.as_view(which="following"),
        name="following",
    ),
    path("p/<int:post_id>/", views.PostDetailView.as_view(), name="post_detail"),
    path("healthz", views.HealthView.as_view(), name="healthz"),
    path("p/<int:post_id>/report/", views.ReportPostView.as_view(), name="report_post"),
]
