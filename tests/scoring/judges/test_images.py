import base64
import hashlib
import io
import re

import pytest
from PIL import Image

from scoring.judges.images import (
    ImageLoadError,
    decode_image,
    decode_image_and_pixels,
    image_data_url,
    image_sha256,
    load_image,
)


def _png_bytes(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def test_loads_png_as_rgb(make_image):
    image = load_image(make_image((10, 20, 30), size=(8, 6)))
    assert image.mode == "RGB"
    assert image.size == (8, 6)
    assert image.getpixel((0, 0)) == (10, 20, 30)


def test_rgba_and_palette_become_rgb():
    rgba = Image.new("RGBA", (4, 4), (255, 0, 0, 128))
    assert load_image(_png_bytes(rgba)).mode == "RGB"
    palette = Image.new("P", (4, 4), 3)
    assert load_image(_png_bytes(palette)).mode == "RGB"


def test_missing_empty_and_non_image_files_are_clear_errors(tmp_path):
    with pytest.raises(ImageLoadError, match="not found"):
        load_image(tmp_path / "absent.png")
    empty = tmp_path / "empty.png"
    empty.write_bytes(b"")
    with pytest.raises(ImageLoadError, match="empty"):
        load_image(empty)
    text = tmp_path / "notes.png"
    text.write_text("this is not an image")
    with pytest.raises(ImageLoadError, match="not a recognised image"):
        load_image(text)


def test_truncated_png_is_reported_as_corrupt():
    data = _png_bytes(Image.new("RGB", (64, 64), (1, 2, 3)))
    with pytest.raises(ImageLoadError, match="corrupt or truncated"):
        decode_image(data[: len(data) // 2])


def test_pixel_budget_is_checked_before_decoding():
    data = _png_bytes(Image.new("1", (12_000, 12_000)))  # tiny file, 144 megapixels
    assert len(data) < 1_000_000
    with pytest.raises(ImageLoadError, match="decompression bomb|over the limit"):
        decode_image(data)
    with pytest.raises(ImageLoadError, match="over the limit"):
        decode_image(_png_bytes(Image.new("RGB", (200, 200))), max_pixels=10_000)


def test_sha256_is_of_the_content(make_image, tmp_path):
    path = make_image((5, 5, 5))
    data = open(path, "rb").read()
    assert image_sha256(path) == hashlib.sha256(data).hexdigest()
    copy = tmp_path / "copy.bin"
    copy.write_bytes(data)
    assert image_sha256(copy) == image_sha256(data) == image_sha256(path)


def test_data_url_keeps_png_and_jpeg_and_reencodes_others(make_image, tmp_path):
    png = make_image((9, 9, 9))
    url = image_data_url(png)
    assert url.startswith("data:image/png;base64,")
    assert base64.b64decode(url.split(",", 1)[1]) == open(png, "rb").read()
    jpeg = make_image((9, 9, 9), suffix=".jpg")
    assert image_data_url(jpeg).startswith("data:image/jpeg;base64,")
    bmp = tmp_path / "x.bmp"
    Image.new("RGB", (3, 3)).save(bmp)
    assert image_data_url(bmp).startswith("data:image/png;base64,")
    assert image_data_url(Image.new("RGB", (3, 3))).startswith("data:image/png;base64,")


def _with_chunk(png: bytes, kind: bytes, payload: bytes) -> bytes:
    """The PNG with one more ancillary chunk right after IHDR (8 + 25 bytes in)."""
    import struct
    import zlib

    chunk = struct.pack(">I", len(payload)) + kind + payload
    chunk += struct.pack(">I", zlib.crc32(kind + payload))
    return png[:33] + chunk + png[33:]


def _pillow_rgb(data: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(data))
    return image.convert("RGBA").convert("RGB") if "A" in image.mode else image.convert("RGB")


@pytest.mark.ml  # imagecodecs comes with the ml extra
def test_png_through_libpng_gives_pillows_pixels():
    """The fast decoder (imagecodecs' libpng) must change no pixel: RGB and RGBA take it, gamma
    and colour-profile chunks are not applied, and every other kind falls back to Pillow."""
    import numpy as np

    from scoring.judges.images import _decoded_by_libpng

    rng = np.random.default_rng(4)
    rgb = Image.fromarray(rng.integers(0, 256, (40, 50, 3), dtype=np.uint8))
    rgba = Image.fromarray(rng.integers(0, 256, (40, 50, 4), dtype=np.uint8))
    wide = Image.fromarray(rng.integers(0, 65536, (20, 30), dtype=np.uint16))  # 16-bit grey
    keyed = io.BytesIO()
    rgb.save(keyed, format="PNG", transparency=(1, 2, 3))  # a tRNS colour key
    cases = {
        "rgb": (_png_bytes(rgb), True),
        "rgba": (_png_bytes(rgba), True),
        "gamma 1.0": (_with_chunk(_png_bytes(rgb), b"gAMA", (100000).to_bytes(4, "big")), True),
        "srgb": (_with_chunk(_png_bytes(rgb), b"sRGB", b"\x00"), True),
        "palette": (_png_bytes(rgb.convert("P")), False),
        "grey 16-bit": (_png_bytes(wide), False),
        "colour key": (keyed.getvalue(), False),
    }
    for name, (data, fast) in cases.items():
        taken = _decoded_by_libpng(data, Image.open(io.BytesIO(data))) is not None
        assert taken == fast, name
        decoded = decode_image(data, name=name)
        assert decoded.mode == "RGB", name
        assert np.array_equal(np.asarray(decoded), np.asarray(_pillow_rgb(data))), name


def test_the_header_check_refuses_what_decoding_refuses_with_the_same_words():
    """A JPEG decoded on the model's device is checked by ``check_pixel_budget`` first: the
    same refusals and messages as ``decode_image`` for what the header can tell."""
    from scoring.judges.images import check_pixel_budget

    big = _png_bytes(Image.new("RGB", (40, 30)))
    for data, expected in (
        (b"", "is empty (0 bytes)"),
        (b"not an image at all", "is not a recognised image format"),
        (big, "40x30 = 1200 pixels, over the limit of 1000"),
    ):
        for check in (decode_image, check_pixel_budget):
            with pytest.raises(ImageLoadError, match=re.escape(expected)):
                check(data, max_pixels=1000, name="x.png")
    check_pixel_budget(big, max_pixels=2000, name="x.png")  # within budget: no error


def test_decoded_pixels_are_decode_images_pixels_with_its_errors():
    """``decode_pixels`` (the path of a judge whose device preprocesses) skips the PIL image
    where it can; the pixels and the refusals must be ``decode_image``'s."""
    import numpy as np

    from scoring.judges.images import decode_pixels

    rng = np.random.default_rng(7)
    rgb = Image.fromarray(rng.integers(0, 256, (30, 40, 3), dtype=np.uint8))
    rgba = Image.fromarray(rng.integers(0, 256, (30, 40, 4), dtype=np.uint8))
    jpeg = io.BytesIO()
    rgb.resize((400, 300)).save(jpeg, format="JPEG", quality=90)
    cases = {
        "rgb png": (_png_bytes(rgb), None),
        "rgba png": (_png_bytes(rgba), None),
        "palette png": (_png_bytes(rgb.convert("P")), None),
        "grey png": (_png_bytes(rgb.convert("L")), None),
        "jpeg": (jpeg.getvalue(), None),
        "jpeg, draft": (jpeg.getvalue(), 100),
    }
    for name, (data, draft_side) in cases.items():
        pixels = decode_pixels(data, name=name, draft_side=draft_side)
        expected = np.asarray(decode_image_and_pixels(data, draft_side=draft_side)[0])
        assert pixels.dtype == np.uint8 and pixels.shape == expected.shape, name
        assert np.array_equal(pixels, expected), name
    assert decode_pixels(jpeg.getvalue(), draft_side=100).shape == (150, 200, 3)
    for data, expected in (
        (b"", "is empty (0 bytes)"),
        (b"not an image at all", "is not a recognised image format"),
        (_png_bytes(rgb)[:200], "is corrupt or truncated"),
        (_png_bytes(rgb), "30 = 1200 pixels, over the limit of 1000"),
    ):
        with pytest.raises(ImageLoadError, match=re.escape(expected)):
            decode_pixels(data, max_pixels=1000 if "limit" in expected else 10**6, name="x.png")
