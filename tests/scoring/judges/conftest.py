"""Crafted images and (for ml tests) tiny models built once per session into a temp folder."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image


@pytest.fixture
def make_image(tmp_path):
    """Save an RGB array (or a colour) as a PNG and return its path."""
    counter = iter(range(10_000))

    def make(pixels, *, size=(64, 64), suffix=".png") -> str:
        if isinstance(pixels, tuple):
            image = Image.new("RGB", size, pixels)
        else:
            image = Image.fromarray(np.asarray(pixels, dtype=np.uint8))
        path = tmp_path / f"image_{next(counter)}{suffix}"
        image.save(path)
        return str(path)

    return make


@pytest.fixture
def noise_image(make_image):
    rng = np.random.default_rng(0)
    return make_image(rng.integers(0, 256, size=(64, 64, 3)))


@pytest.fixture(scope="session")
def tiny_clip_files(tmp_path_factory):
    pytest.importorskip("torch")
    pytest.importorskip("open_clip")
    from tests.support.tiny_models import build_tiny_open_clip

    return build_tiny_open_clip(tmp_path_factory.mktemp("tiny_clip"))


@pytest.fixture(scope="session")
def tiny_llava_dir(tmp_path_factory):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tests.support.tiny_models import build_tiny_llava

    return build_tiny_llava(tmp_path_factory.mktemp("tiny_llava"))


@pytest.fixture(scope="session")
def rigged_llava_dir(tmp_path_factory):
    """A tiny VLM whose every answer is "erased"."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tests.support.tiny_models import build_tiny_llava

    return build_tiny_llava(tmp_path_factory.mktemp("rigged_llava"), answer_word="erased")
