"""The judge pipeline: thread-pool decoding gives the serial path's verdicts, in order;
batches follow the configured size; decoding happens once; the blank check's fast
statistics equal numpy's."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from scoring.judges import images as images_module
from scoring.judges.hard_refusal import HardRefusalConfig, HardRefusalJudge
from scoring.judges.pipeline import ordered_map
from scoring.judges.records import ItemInput
from scoring.judges.rules import _histogram_median, blank_image_stats
from tests.scoring.judges.fakes import FakeClip

TEXTS = {"r1": [1, 0, 0], "o1": [0, 0, 1]}


def _items(make_image, count):
    rng = np.random.default_rng(7)
    items = []
    for index in range(count):
        width = 40 + index % 5
        pixels = rng.integers(0, 256, size=(24, width, 3))
        if index % 4 == 0:
            pixels = np.zeros((24, width, 3))  # blank: a rule fires
        items.append(ItemInput(item_id=str(index), image_path=make_image(pixels)))
    items.append(ItemInput(item_id="missing", image_path="/nonexistent/x.png"))
    items.append(ItemInput(item_id="none", image_path=None))
    return items


def _judge(workers, batch_size=4):
    vectors = {40 + k: [0.2 * k, 0.1, 0.5] for k in range(5)}
    clip = FakeClip(vectors, TEXTS, batch_size=batch_size)
    config = HardRefusalConfig(
        refusal_descriptions=("r1",), ordinary_descriptions=("o1",), decode_workers=workers
    )
    return HardRefusalJudge(config, clip_encoder=clip), clip


def test_parallel_decode_gives_the_serial_verdicts_in_order(make_image):
    items = _items(make_image, 23)
    serial, _ = _judge(workers=1)
    parallel, clip = _judge(workers=4)
    expected = [o.to_dict() for o in serial.judge_items(items)]
    got = [o.to_dict() for o in parallel.judge_items(items)]
    assert got == expected
    assert [o["item_id"] for o in got] == [i.item_id for i in items]
    assert {o["label"] for o in got} == {"refusal", "not_refusal", None}
    assert got[-2]["error"] and "not found" in got[-2]["error"]


def test_clip_batches_follow_the_configured_size(make_image):
    items = _items(make_image, 23)  # 17 images reach CLIP (6 blank ones still do), 2 do not
    judge, clip = _judge(workers=2, batch_size=5)
    judge.judge_items(items)
    assert clip.image_batches == [5, 5, 5, 5, 3]


def test_each_image_is_decoded_once(make_image, monkeypatch):
    items = _items(make_image, 6)
    calls = []
    real = images_module.decode_image

    def counting(data, **kwargs):
        calls.append(kwargs.get("name"))
        return real(data, **kwargs)

    monkeypatch.setattr(images_module, "decode_image", counting)
    judge, _ = _judge(workers=2)
    judge.judge_items(items)
    assert sorted(calls) == sorted(i.image_path for i in items[:6])


def test_ordered_map_keeps_order_and_bounds_work_in_flight():
    in_flight, peak, lock = [0], [0], threading.Lock()

    def work(value):
        with lock:
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
        with lock:
            in_flight[0] -= 1
        return value * value

    assert list(ordered_map(work, range(50), workers=3, lookahead=4)) == [v * v for v in range(50)]
    assert peak[0] <= 4


def test_histogram_median_equals_numpy():
    rng = np.random.default_rng(1)
    for size in (1, 2, 3, 10, 11, 4096):
        values = rng.integers(0, 256, size).astype(np.uint8)
        assert _histogram_median(np.bincount(values, minlength=256)) == np.median(values)


def test_blank_statistics_equal_the_float_reference(make_image):
    from PIL import Image

    rng = np.random.default_rng(3)
    for pixels in (rng.integers(0, 256, (300, 280, 3)), np.full((40, 40, 3), 7)):
        image = Image.open(make_image(pixels)).convert("RGB")
        stats = blank_image_stats(image, tolerance=8)
        thumb = image.copy()
        thumb.thumbnail((256, 256), Image.Resampling.NEAREST)
        reference = np.asarray(thumb, dtype=np.float32).reshape(-1, 3)
        median = np.median(reference, axis=0)
        near = np.all(np.abs(reference - median) <= 8, axis=1)
        assert stats["dominant_fraction"] == pytest.approx(float(near.mean()), abs=0)
        assert stats["std"] == pytest.approx(float(reference.std()), rel=1e-6)
        assert stats["median_rgb"] == [int(v) for v in median]


@pytest.mark.ml
def test_prepare_equals_open_clip_preprocess(tiny_clip_files, make_image):
    from PIL import Image

    from scoring.judges.clip import ClipConfig, load_clip

    encoder = load_clip(
        ClipConfig(architecture=f"local-dir:{tiny_clip_files['local_dir']}", pretrained=None)
    )
    rng = np.random.default_rng(5)
    image = Image.open(make_image(rng.integers(0, 256, (70, 90, 3)))).convert("RGB")
    np.testing.assert_array_equal(encoder.prepare(image), encoder.preprocess(image).numpy())
