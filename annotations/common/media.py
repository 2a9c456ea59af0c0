"""Store and serve user images: the one way in and the one way out of the media storage.

In: ``image_store`` saves bytes already checked by ``image_files.image_decoded`` under a name
the server chooses (content hash + the decoded format's extension). Out: ``image_response``
serves a stored file only as the image format its header names, with ``nosniff`` and a
sandboxing Content-Security-Policy, so nothing a user uploaded can run as a page or a script
in the app's origin (docs/deployment.md#security). Every view that serves an image calls it.
"""

from __future__ import annotations

import hashlib

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.http import FileResponse, Http404
from PIL import Image

from .image_files import FORMATS, DecodedImage, ImageRefused, image_format, image_name

# The page-level policy of a served image: it may load nothing, and runs as an opaque origin
# even when opened as a top-level document.
MEDIA_CSP = "default-src 'none'; sandbox"


def image_store(
    *, data: bytes, folder: str, image: DecodedImage | None = None, reuse: bool = False
) -> str:
    """Save ``data`` in ``folder``; returns the storage name. The caller has checked the bytes
    with ``image_decoded`` (pass its result as ``image``, or the header names the format).
    With ``reuse`` an existing file of the same content is shared instead of copied."""
    if image is None:
        found = image_format(data)
        if found is None:
            raise ImageRefused("not an image the app stores")
        image = DecodedImage(found, 0, 0, 1, hashlib.sha256(data).hexdigest())
    name = image_name(folder, image)
    if reuse and default_storage.exists(name):
        return name
    return default_storage.save(name, ContentFile(data))


def image_response(file, *, cache: str = "private, max-age=3600") -> FileResponse:
    """A stored image file as an ``image/*`` response, or 404 when its bytes are not one of
    the formats the app stores (a file stored before names were chosen by the server)."""
    handle = file.open("rb")
    try:
        with Image.open(handle) as image:
            image_format = image.format
    except Exception:  # noqa: BLE001 - unreadable header: not served at all
        image_format = None
    if image_format not in FORMATS:
        handle.close()
        raise Http404("not an image")
    handle.seek(0)
    extension, content_type = FORMATS[image_format]
    response = FileResponse(handle, content_type=content_type, filename=f"image.{extension}")
    response["Content-Disposition"] = f'inline; filename="image.{extension}"'
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = MEDIA_CSP
    response["Cache-Control"] = cache
    return response
