"""URLs of the staff pages, mounted under /staff/."""

from django.urls import path

from social.repository.moderation.reports import RESOLVED
from social.staff import domain_views, instance_views, job_views, report_views, views

app_name = "staff"

urlpatterns = [
    path("", views.DashboardView.as_view(), name="dashboard"),
    path("users/", views.UserListView.as_view(), name="users"),
    path("users/<str:username>/", views.UserDetailView.as_view(), name="user"),
    *[
        path(
            f"users/<str:username>/{action}/",
            views.UserActionView.as_view(action=action),
            name=f"user_{action}",
        )
        for action in views.USER_ACTIONS
    ],
    # The same pages by id, for accounts whose name no URL can hold (a legacy "a/b", an
    # empty name: social.repository.accounts.users.name_has_url).
    path("users/id/<int:user_id>/", views.UserDetailView.as_view(), name="user_by_id"),
    *[
        path(
            f"users/id/<int:user_id>/{action}/",
            views.UserActionView.as_view(action=action),
            name=f"user_by_id_{action}",
        )
        for action in views.USER_ACTIONS
    ],
    path("users/<str:username>/send_reset/", views.SendResetView.as_view(), name="user_send_reset"),
    path(
        "users/id/<int:user_id>/send_reset/",
        views.SendResetView.as_view(),
        name="user_by_id_send_reset",
    ),
    path(
        "users/<str:username>/apps/<str:client_id>/revoke/",
        views.RevokeAppView.as_view(),
        name="user_revoke_app",
    ),
    path(
        "users/id/<int:user_id>/apps/<str:client_id>/revoke/",
        views.RevokeAppView.as_view(),
        name="user_by_id_revoke_app",
    ),
    path("posts/", views.PostListView.as_view(), name="posts"),
    path("posts/delete/", views.DeletePostsView.as_view(), name="delete_posts"),
    path("reports/", report_views.ReportListView.as_view(), name="reports"),
    path(
        "reports/resolved/",
        report_views.ReportListView.as_view(status=RESOLVED),
        name="reports_resolved",
    ),
    path(
        "reports/<int:report_id>/resolve/", report_views.ResolveReportView.as_view(), name="resolve"
    ),
    *[
        path(
            f"reports/<int:report_id>/{action}/",
            report_views.ReportActionView.as_view(action=action),
            name=f"report_{action}",
        )
        for action in report_views.REPORT_ACTIONS
    ],
    path("log/", views.AuditLogView.as_view(), name="log"),
    path("about/", instance_views.AboutView.as_view(), name="about"),
    path("jobs/", job_views.JobsView.as_view(), name="jobs"),
    path(
        "jobs/<str:queue>/<str:job_id>/retry/",
        job_views.DeadLetterActionView.as_view(action="retry"),
        name="job_retry",
    ),
    path(
        "jobs/<str:queue>/<str:job_id>/discard/",
        job_views.DeadLetterActionView.as_view(action="discard"),
        name="job_discard",
    ),
    path("domains/", domain_views.DomainsView.as_view(), name="domains"),
    path("domains/block/", domain_views.DomainBlockView.as_view(), name="domain_block"),
    path(
        "domains/<str:domain>/unblock/",
        domain_views.DomainUnblockView.as_view(),
        name="domain_unblock",
    ),
    path(
        "jobs/domains/<str:domain>/available/",
        job_views.DomainAvailableView.as_view(),
        name="job_domain_available",
    ),
]
