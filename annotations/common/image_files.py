"""Image files from users are hostile: decode them in full, and name them from what they are.

Every image the app stores (item images and source images from a manifest or a zip, a replaced
item image, face-set source photos, REFLECT face images, generated images) passes
``image_decoded`` first and is stored under ``image_name``: a name and extension the server
chooses from the decoded format, never the uploader's. A GIF called ``x.js`` followed by
JavaScript is stored as ``<sha256>.gif`` and served as ``image/gif`` (annotations/media.py).
No Django here: the checks are plain functions over bytes (docs/deployment.md#security).
"""

from __future__ import annotations

import hashlib
import io
import re
import warnings
from dataclasses import dataclass

from PIL import Image, UnidentifiedImageError

# The formats a browser shows and the app stores: Pillow's name → (extension, content type).
FORMATS = {
    "PNG": ("png", "image/png"),
    "JPEG": ("jpg", "image/jpeg"),
    "GIF": ("gif", "image/gif"),
    "WEBP": ("webp", "image/webp"),
    "BMP": ("bmp", "image/bmp"),
}


# What a file that does not decode is called: Pillow's own words name its classes and memory
# addresses ("UnidentifiedImageError: cannot identify image file <_io.BytesIO object at 0x…>").
UNREADABLE = "not an image we can read (PNG, JPEG, WebP, GIF or BMP)"
_OBJECT_REPR = re.compile(r"<[^<>]* at 0x[0-9a-f]+>")


def _damage(exc: Exception) -> str:
    """How a file of a known format is damaged ("image file is truncated"), in Pillow's words
    without its object names; nothing for a file that is no image at all."""
    if isinstance(exc, UnidentifiedImageError):
        return ""
    words = " ".join(_OBJECT_REPR.sub("", str(exc)).split()).strip(" :")
    return f": it is damaged ({words[:120]})" if words else ": it is damaged"


class ImageRefused(ValueError):
    """Not an image the app stores: empty, another format, corrupt, truncated or too large."""


@dataclass(frozen=True)
class DecodedImage:
    format: str
    width: int
    height: int
    frames: int
    sha256: str

    @property
    def extension(self) -> str:
        return FORMATS[self.format][0]

    @property
    def content_type(self) -> str:
        return FORMATS[self.format][1]


def image_decoded(
    data: bytes, *, max_pixels: int, max_bytes: int | None = None, name: str = "image"
) -> DecodedImage:
    """Check ``data`` is a whole image of an allowed format within the limits, by decoding
    every frame; the pixel limit counts every frame (50 frames of 2000x2000 are 200 Mpx)."""
    if not data:
        raise ImageRefused(f"{name} is empty")
    if max_bytes is not None and len(data) > max_bytes:
        raise ImageRefused(f"{name} is {len(data)} bytes, over the limit of {max_bytes}")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as image:
                facts = _checked_header(image, max_pixels, name)
                image.verify()  # chunk checksums (PNG), structure
            with Image.open(io.BytesIO(data)) as image:
                for frame in range(facts.frames):
                    image.seek(frame)
                    image.load()  # a truncated or corrupt stream fails here
    except ImageRefused:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise ImageRefused(f"{name} is a decompression bomb (too many pixels)") from None
    except Exception as exc:  # noqa: BLE001 - Pillow raises many types for corrupt data
        raise ImageRefused(f"{name} is {UNREADABLE}{_damage(exc)}") from None
    return DecodedImage(
        facts.format, facts.width, facts.height, facts.frames, hashlib.sha256(data).hexdigest()
    )


def _checked_header(image: Image.Image, max_pixels: int, name: str) -> DecodedImage:
    if image.format not in FORMATS:
        raise ImageRefused(
            f"{name} is {image.format or 'an unknown'} format; the app stores "
            f"{', '.join(FORMATS)} images"
        )
    width, height = image.size
    frames = int(getattr(image, "n_frames", 1) or 1)
    if width * height * frames > max_pixels:
        what = f"{frames} frames of {width}x{height}" if frames > 1 else f"{width}x{height}"
        raise ImageRefused(
            f"{name} has {what} = {width * height * frames} pixels, over the limit of {max_pixels}"
        )
    return DecodedImage(image.format, width, height, frames, "")


def image_format(data: bytes) -> str | None:
    """The allowed format named by the header of ``data`` (no decode), or None: what a stored
    file is served as."""
    try:
        with Image.open(io.BytesIO(data)) as image:
            return image.format if image.format in FORMATS else None
    except Exception:  # noqa: BLE001 - any unreadable header: not an image we serve
        return None


def image_name(folder: str, image: DecodedImage) -> str:
    """The storage name: the content hash and the decoded format's extension, in ``folder``."""
    return f"{folder.rstrip('/')}/{image.sha256}.{image.extension}"
