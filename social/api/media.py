"""/api/v1/media, /api/v2/media: uploading a post's picture (processed at once: both answer
200 with its URLs), and reading or describing one's own picture not yet in a post
(GET/PUT /api/v1/media/:id), as Mastodon does."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext

from social import auth, images, keys
from social.repository.models import Upload

from . import entities
from .base import BODY_MAX, ApiError, json_response
from .common import EntityView
from .forms import text_param

DESCRIPTION_TOO_LONG = f"Description is too long (maximum is {keys.MEDIA_ALT_MAX} characters)"


def description(params) -> str | None:
    """The `description` sent (None when not sent), or Mastodon's 422 past the limit."""
    if params.get("description") is None:
        return None
    value = text_param(params, "description", 100_000).strip()
    if len(value) > keys.MEDIA_ALT_MAX:
        raise ApiError(422, f"Validation failed: {DESCRIPTION_TOO_LONG}")
    return value


class MediaAnswer(EntityView):
    """What the media views share: a picture as a MediaAttachment."""

    def answer(self, stored: Upload, headers: dict[str, str] | None = None) -> HttpResponse:
        render = entities.Render(self.base_url())
        return json_response(entities.media_attachment(render, stored.attachment), headers=headers)


class MediaView(MediaAnswer):
    """POST /api/v1/media and /api/v2/media: multipart `file` (PNG, JPEG, WebP, GIF's
    first frame; social/images.py), `description` (alt text); `focus` and `thumbnail`
    are ignored. Under the upload limit (RETWIS_LIMIT_MEDIA)."""

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
        # Counted before a byte is read; a refused picture counts.
        headers = self.enforce(
            auth.media_limits(me.id), gettext("You have uploaded a lot in a short time.")
        )
        try:
            data = images.read_upload(upload)
            images.inspect(data)
            variants, blurhash = images.process_with_blurhash(data, images.POST_SIZES)
        except images.ImageRefused as refused:
            raise ApiError(422, f"Validation failed: {refused}", headers) from None
        stored = self.repo.attachments.upload(me.id, variants, alt=alt or "", blurhash=blurhash)
        return self.answer(stored, headers)


class MediaItemView(MediaAnswer):
    """GET and PUT /api/v1/media/:id: the reader's own picture while no post has it
    (Mastodon's rule; anything else is 404). PUT changes `description`."""

    scopes = {"get": "write:media", "put": "write:media"}
    body_max = BODY_MAX

    def get(self, request: HttpRequest, media_id: str) -> HttpResponse:
        found = self.repo.attachments.own_unattached(self.me().id, media_id)
        if found is None:
            raise ApiError(404, "Record not found")
        return self.answer(found)

    def put(self, request: HttpRequest, media_id: str) -> HttpResponse:
        me = self.me()
        alt = description(self.request.params)
        if alt is None:
            found = self.repo.attachments.own_unattached(me.id, media_id)
        else:
            found = self.repo.attachments.describe(me.id, media_id, alt)
        if found is None:
            raise ApiError(404, "Record not found")
        return self.answer(found)
