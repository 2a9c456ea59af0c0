"""bench/score_bench.py's files: each a distinct copy of one of a few encoded pictures, with
its own bytes and hash (every item a cache miss) and the picture's pixels, through Pillow
and through libpng."""

import hashlib
import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tests.support.bench_scripts import load_bench_script


@pytest.fixture(scope="module")
def score_bench():
    return load_bench_script("score_bench", register=True)


@pytest.mark.parametrize("image_format", ["png", "jpeg"])
def test_copies_have_their_own_bytes_and_the_same_pixels(score_bench, image_format):
    from scoring.judges.images import decode_image_and_pixels, is_jpeg

    base = score_bench.photo_like_image(3, size=96, image_format=image_format)
    copies = [score_bench.distinct_copy(base, index) for index in (0, 1, 12345)]
    assert len({hashlib.sha256(data).digest() for data in [base, *copies]}) == 4
    expected = np.asarray(Image.open(io.BytesIO(base)).convert("RGB"))
    for data in copies:
        assert is_jpeg(data) == (image_format == "jpeg")
        image = Image.open(io.BytesIO(data))
        image.verify()
        _, pixels = decode_image_and_pixels(data)  # libpng for the PNG, when installed
        np.testing.assert_array_equal(np.asarray(Image.open(io.BytesIO(data))), expected)
        if pixels is not None:
            np.testing.assert_array_equal(pixels, expected)


def test_write_images_gives_every_file_its_own_hash(score_bench, tmp_path, monkeypatch):
    paths = [str(tmp_path / f"{index}.png") for index in range(5)]
    monkeypatch.setattr(score_bench, "BASE_IMAGES", 2)
    hashes = score_bench.write_images(paths, "png")
    assert len(set(hashes)) == 5
    assert hashes == [hashlib.sha256(Path(p).read_bytes()).hexdigest() for p in paths]
