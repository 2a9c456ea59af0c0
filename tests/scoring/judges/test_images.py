import base64
import hashlib
import io

import pytest
from PIL import Image

from scoring.judges.images import (
    ImageLoadError,
    decode_image,
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
