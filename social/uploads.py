"""The first of Django's upload handlers (settings.FILE_UPLOAD_HANDLERS): each file of a
multipart body is kept to one byte past a picture's limit (images.MAX_BYTES) as it streams.

What follows that byte is read from the body and dropped, never written to memory or
/tmp: the file Django hands the form is MAX_BYTES + 1 long, and the form (or the client
API's media view) refuses it with its own message ("The picture is over 10 MB."), the rest
of the post kept in the form. The body as a whole was bounded before (social/bodies.py).
"""

from __future__ import annotations

from django.core.files.uploadhandler import FileUploadHandler

from social import images


class CappedUploadHandler(FileUploadHandler):
    """Pass each file's first MAX_BYTES + 1 bytes on to the next handler, none after."""

    keep = images.MAX_BYTES + 1

    def new_file(self, *args, **kwargs) -> None:
        super().new_file(*args, **kwargs)
        self.kept = 0

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes | None:
        room = self.keep - self.kept
        if room <= 0:
            return None  # the handlers after this one never see it
        chunk = raw_data[:room]
        self.kept += len(chunk)
        return chunk

    def file_complete(self, file_size: int) -> None:
        return None  # the next handler (memory, else a temporary file) makes the file
