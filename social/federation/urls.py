"""ActivityPub's addresses (docs/federation.md), under /ap/. The inboxes
(`ap/users/<id>/inbox`, `ap/inbox`) belong to the inbox's module and are routed with it."""

from django.urls import path
from django.views.decorators.csrf import csrf_exempt

from . import inbox, views

app_name = "federation"

urlpatterns = [
    path("ap/actor", views.InstanceActorView.as_view(), name="instance_actor"),
    path("ap/actor/outbox", views.InstanceOutboxView.as_view(), name="instance_outbox"),
    path("ap/users/<int:user_id>", views.ActorView.as_view(), name="actor"),
    # Another server posts here, signed: no cookie, no CSRF token (inbox.py checks it).
    path("ap/inbox", csrf_exempt(inbox.InboxView.as_view()), name="shared_inbox"),
    path("ap/users/<int:user_id>/inbox", csrf_exempt(inbox.InboxView.as_view()), name="inbox"),
    path("ap/users/<int:user_id>/outbox", views.OutboxView.as_view(), name="outbox"),
    path("ap/users/<int:user_id>/followers", views.FollowsView.as_view(), name="followers"),
    path(
        "ap/users/<int:user_id>/following",
        views.FollowsView.as_view(which="following"),
        name="following",
    ),
    path("ap/users/<int:user_id>/featured", views.FeaturedView.as_view(), name="featured"),
    path("ap/posts/<int:post_id>", views.PostView.as_view(), name="post"),
    path(
        "ap/posts/<int:post_id>/activity",
        views.PostView.as_view(which="activity"),
        name="post_activity",
    ),
]
