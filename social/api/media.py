"""/api/v1/media, /api/v2/media: uploading a post's picture (its header checked at once,
processed by the worker: both answer 202 with `url: null` until it is ready, as Mastodon's
v2 does), and reading or describing one's own picture not yet in a post
(GET/PUT /api/v1/media/:id: 206 while it is processed, 200 once ready, 422 if the worker
refused it), as Mastodon does."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext

from social import auth, images, keys, work
from social.repository.models import Upload
from social.repository.posts.attachments import FAILED, PROCESSING

from . import entities
from .base import BODY_MAX, ApiError, json_response
from .common import EntityView
from .forms import text_param

DESCRIPTION_TOO_LONG = f"Description is too long (maximum is {keys.MEDIA_ALT_MAX} characters)"
PROCESSING_FAILED = "Error processing thumbnail for uploaded media"  # Mastodon's words
BUSY_RETRY_AFTER = 60  # seconds: about what the media queue takes to drain a burst


def description(params) -> str | None:
    """The `description` sent (None when not sent), or Mastodon's 422 past the limit."""
    if params.get("description") is None:
        return None
    value = text_param(params, "description", 100_000).strip()
    if len(value) > keys.MEDIA_ALT_MAX:
        raise ApiError(422, f"Validation failed: {DESCRIPTION_TOO_LONG}")
    return value


def busy() -> ApiError:
    """The answer when the media queue is full: 503 with Retry-After (clients retry)."""
    return ApiError(
        503,
        "Too many pictures are waiting to be processed: try again in a minute",
        {"Retry-After": str(BUSY_RETRY_AFTER)},
    )


class MediaAnswer(EntityView):
    """What the media views share: a picture as a MediaAttachment (a picture still being
    processed has no URLs, sizes or blurhash yet: 206, or the upload's 202)."""

    def answer(
        self, stored: Upload, headers: dict[str, str] | None = None, *, created: bool = False
    ) -> HttpResponse:
        if stored.state == FAILED:
            found = self.repo.media_files.processing(stored.id)
            reason = found.error if found else ""
            raise ApiError(422, f"{PROCESSING_FAILED}: {reason}" if reason else PROCESSING_FAILED)
        data = entities.media_attachment(entities.Render(self.base_url()), stored.attachment)
        status = 200
        if stored.state == PROCESSING:
            data.update(url=None, preview_url=None, meta={}, blurhash=None)
            status = 202 if created else 206
        return json_response(data, status, headers=headers)


class MediaView(MediaAnswer):
    """POST /api/v1/media and /api/v2/media: multipart `file` (PNG, JPEG, WebP, GIF's
    first frame; social/images.py), `description` (alt text); `focus` and `thumbnail`
    are ignored. Under the upload limit (RETWIS_LIMIT_MEDIA), counted before the file is
    read. Its header is checked here; the worker decodes it (v1 as v2: no page request
    waits on a picture)."""

    scopes = {"post": "write:media"}
    body_max = images.MAX_BYTES + BODY_MAX

    def post(self, request: HttpRequest) -> HttpResponse:
        me = self.me()
        alt = description(self.request.params)
        upload = request.FILES.get("file")
        if upload is None:
            raise ApiError(422, "Validation failed: File can't be blank")
        if upload.size is None or upload.size > images.MAX_BYTES:
            raise ApiError(422, f"Validation failed: {gettext('The picture is over 10 MB.')}")
        checks = auth.media_limits(me.id)
        # Counted before a byte is read; a refused picture counts.
        headers = self.enforce(checks, gettext("You have uploaded a lot in a short time."))
        try:
            data = images.read_upload(upload)
            images.inspect(data)
        except images.ImageRefused as refused:
            raise ApiError(422, f"Validation failed: {refused}", headers) from None
        stored = self.repo.attachments.begin_upload(me.id, data, alt=alt or "")
        try:
            work.enqueue("media", "picture", {"token": stored.id})
        except work.QueueFull:
            self.repo.attachments.discard(me.id, [stored.id])
            self.repo.limits.give_back(checks)  # not the uploader's doing
            raise busy() from None
        return self.answer(stored, headers, created=True)


class MediaItemView(MediaAnswer):
    """GET and PUT /api/v1/media/:id: the reader's own picture while no post has it
    (Mastodon's rule; anything else is 404). PUT changes `description`, processed yet or
    not."""

    scopes = {"get": "write:media", "put": "write:media"}
    body_max = BODY_MAX

    def get(self, request: HttpRequest, media_id: str) -> HttpResponse:
        found = self.repo.attachments.own_loose(self.me().id, media_id)
        if found is None:
            raise ApiError(404, "Record not found")
        return self.answer(found)

    def put(self, request: HttpRequest, media_id: str) -> HttpResponse:
        me = self.me()
        alt = description(self.request.params)
        if alt is None:
            found = self.repo.attachments.own_loose(me.id, media_id)
        else:
            found = self.repo.attachments.describe(me.id, media_id, alt)
        if found is None:
            raise ApiError(404, "Record not found")
        return self.answer(found)
