"""/api/v1/instance and /api/v2/instance: what this server is and allows, in Mastodon's
shapes (V1_Instance, Instance). Pictures' limits are social/images.py's; polls and video
are absent: their limits are zero. And what the instance's pages ask beside it: its
rules and extended description (staff write them: /staff/about/), its weekly activity,
its peers (none: it does not federate)."""

from __future__ import annotations

from datetime import UTC, datetime, time

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.templatetags.static import static
from django.utils.html import linebreaks

from social.images import MAX_BYTES, MAX_PIXELS, MIME_TYPES
from social.keys import MEDIA_ALT_MAX, MEDIA_PER_POST
from social.post_forms import POST_MAX
from social.repository.clients.instance import About

from . import entities
from .base import json_response
from .common import EntityView

# The Mastodon version whose client-visible surface the site answers: apps turn features
# on by it (4.0: v2 filters; 4.2: instance languages; 4.3: grouped notifications, unread
# counts, statuses and accounts by id[]), so it names none the site lacks (docs/api.md;
# tests/test_api_version.py checks each version's endpoints). "(compatible; ...)" tells
# apps this is not Mastodon itself, as Pleroma's and Akkoma's versions do.
VERSION = "4.3.0 (compatible; Retwis)"
TITLE = "Retwis"
DESCRIPTION = "A small Twitter-like site on Django and Redis."
LANGUAGES = ["en", "zh"]

STATUSES = {"max_characters": POST_MAX, "max_media_attachments": MEDIA_PER_POST,
            "characters_reserved_per_url": 23}  # fmt: skip
# What social/images.py takes: four kinds of picture, 10 MB, 40 megapixels; no video.
MEDIA = {
    "supported_mime_types": list(MIME_TYPES),
    "image_size_limit": MAX_BYTES, "image_matrix_limit": MAX_PIXELS,
    "video_size_limit": 0, "video_frame_rate_limit": 0, "video_matrix_limit": 0,
    "description_limit": MEDIA_ALT_MAX,
}  # fmt: skip
POLLS = {"max_options": 0, "max_characters_per_option": 0, "min_expiration": 0,
         "max_expiration": 0}  # fmt: skip


def rules_json(about: About) -> list[dict]:
    """The server's rules as Mastodon's Rule entities (no hints: the site keeps none)."""
    return [{"id": str(rule.id), "text": rule.text, "hint": ""} for rule in about.rules]


class InstanceView(EntityView):
    """What both instance views share."""

    def streaming_url(self) -> str:
        """Where the streaming API is (social/streaming/): RETWIS_STREAMING_URL, else this
        site's own origin as ws:// or wss:// (the proxy routes /api/v1/streaming to it)."""
        if settings.RETWIS_STREAMING_URL:
            return settings.RETWIS_STREAMING_URL
        return "ws" + self.base_url().removeprefix("http")


class InstanceV1View(InstanceView):
    """GET /api/v1/instance."""

    public = frozenset({"get"})
    app_may_call = True

    def get(self, request: HttpRequest) -> HttpResponse:
        about, users, posts = self.repo.instance.about_with_figures()
        host = request.get_host()
        return json_response(
            {
                "uri": host,
                "title": TITLE,
                "short_description": DESCRIPTION,
                "description": DESCRIPTION,
                "email": settings.RETWIS_CONTACT_EMAIL,
                "version": VERSION,
                "urls": {"streaming_api": self.streaming_url()},
                "stats": {"user_count": users, "status_count": posts, "domain_count": 0},
                "thumbnail": None,
                "languages": LANGUAGES,
                "registrations": False,
                "approval_required": False,
                "invites_enabled": False,
                "configuration": {
                    "accounts": {"max_featured_tags": 0},
                    "statuses": STATUSES,
                    "media_attachments": MEDIA,
                    "polls": POLLS,
                },
                "contact_account": None,
                "rules": rules_json(about),
            }
        )


class InstanceV2View(InstanceView):
    """GET /api/v2/instance."""

    public = frozenset({"get"})
    app_may_call = True

    def get(self, request: HttpRequest) -> HttpResponse:
        about, users, _ = self.repo.instance.about_with_figures()
        base = self.base_url()
        return json_response(
            {
                "domain": request.get_host(),
                "title": TITLE,
                "version": VERSION,
                "source_url": "",
                "description": DESCRIPTION,
                "usage": {"users": {"active_month": users}},
                "thumbnail": {"url": base + static("favicon.svg")},
                "icon": [],
                "languages": LANGUAGES,
                "configuration": {
                    "urls": {"streaming": self.streaming_url(), "status": None},
                    "vapid": {"public_key": ""},
                    "accounts": {"max_featured_tags": 0, "max_pinned_statuses": 0},
                    "statuses": STATUSES,
                    "media_attachments": MEDIA,
                    "polls": POLLS,
                    "translation": {"enabled": False},
                },
                "registrations": {"enabled": False, "approval_required": False, "message": None},
                "api_versions": {"mastodon": 2},
                "contact": {"email": settings.RETWIS_CONTACT_EMAIL, "account": None},
                "rules": rules_json(about),
            }
        )


class LanguagesView(EntityView):
    """GET /api/v1/instance/languages: the languages posts may be tagged with (the site
    does not tag them: its own two)."""

    public = frozenset({"get"})
    app_may_call = True

    def get(self, request: HttpRequest) -> HttpResponse:
        return json_response([{"code": "en", "name": "English"}, {"code": "zh", "name": "Chinese"}])


class EmptyListView(EntityView):
    """GET on what this server has none of (custom emojis, lists, follow requests,
    bookmarks, announcements, trends...): an empty
    list, as Mastodon answers an instance without any."""

    public = frozenset({"get"})
    app_may_call = True

    def get(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        return json_response([])


class PreferencesView(EntityView):
    """GET /api/v1/preferences: the defaults every account here has."""

    scopes = {"get": "read:accounts"}

    def get(self, request: HttpRequest) -> HttpResponse:
        self.me()
        return json_response(
            {
                "posting:default:visibility": "public",
                "posting:default:sensitive": False,
                "posting:default:language": None,
                "reading:expand:media": "default",
                "reading:expand:spoilers": False,
            }
        )


class RulesView(EntityView):
    """GET /api/v1/instance/rules: the rules staff wrote, in order ([] when none)."""

    public = frozenset({"get"})
    app_may_call = True

    def get(self, request: HttpRequest) -> HttpResponse:
        return json_response(rules_json(self.repo.instance.about()))


class ExtendedDescriptionView(EntityView):
    """GET /api/v1/instance/extended_description: the description staff wrote, as HTML
    (escaped, its paragraphs and line breaks kept); `updated_at` null while never written."""

    public = frozenset({"get"})
    app_may_call = True

    def get(self, request: HttpRequest) -> HttpResponse:
        about = self.repo.instance.about()
        text = about.description.strip()
        changed = about.description_updated
        return json_response(
            {
                "updated_at": entities.iso(changed) if changed else None,
                "content": linebreaks(text, autoescape=True) if text else "",
            }
        )


class ActivityView(EntityView):
    """GET /api/v1/instance/activity: the last twelve weeks, this one first (Monday to
    Sunday, UTC): posts written, accounts active (logged in or posted) and sign-ups, from
    the daily figures the dashboard charts (repository/moderation/stats.py), as Mastodon's
    strings."""

    public = frozenset({"get"})
    app_may_call = True

    def get(self, request: HttpRequest) -> HttpResponse:
        return json_response(
            [
                {
                    "week": str(int(datetime.combine(w.start, time(), UTC).timestamp())),
                    "statuses": str(w.statuses),
                    "logins": str(w.logins),
                    "registrations": str(w.registrations),
                }
                for w in self.repo.stats.weekly_activity()
            ]
        )
