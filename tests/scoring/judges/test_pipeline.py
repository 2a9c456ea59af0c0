"""The judge pipeline: thread-pool decoding gives the serial path's verdicts, in order;
batches follow the configured size; decoding happens once; the blank check's fast
statistics equal numpy's."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from scoring.judges import images as images_module
from scoring.judges import item_checks as item_checks_module
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
    real = images_module.decode_image_and_pixels

    def counting(data, **kwargs):
        calls.append(kwargs.get("name"))
        return real(data, **kwargs)

    monkeypatch.setattr(item_checks_module, "decode_image_and_pixels", counting)
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


def _square(value):
    return value * value


@pytest.mark.parametrize("workers, lookahead", [(16, 1), (4, 4), (2, 64)])
def test_a_process_pool_keeps_order_whatever_its_chunk_size(workers, lookahead):
    # Many workers and a short lookahead give chunks of one item (a 16-core host's batch-1
    # judge): they still go to the workers as lists.
    squares = ordered_map(
        _square, range(40), workers=workers, lookahead=lookahead, pool_kind="process"
    )
    assert list(squares) == [v * v for v in range(40)]


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
        assert stats["mean"] == pytest.approx(float(reference.mean()), rel=1e-6)
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


def _photo_like(seed: int, size: int = 96) -> np.ndarray:
    from PIL import Image

    rng = np.random.default_rng(seed)
    coarse = Image.fromarray(rng.integers(0, 256, (6, 6, 3), dtype=np.uint8))
    return np.asarray(coarse.resize((size, size), Image.Resampling.BICUBIC))


@pytest.mark.ml
def test_jpeg_decoded_on_the_device_matches_the_pil_path(tiny_clip_files, make_image, monkeypatch):
    """jpeg_decode_on_device on "cpu" runs the device path (torchvision's decoder, tensor
    preprocessing): same labels, same order of checks, blank statistics and CLIP scores equal
    to within decoder and resize rounding; PNGs and unreadable files behave as before."""
    from scoring.judges.clip import ClipConfig, ClipEncoder
    from scoring.judges.hard_refusal import HardRefusalConfig, HardRefusalJudge
    from scoring.judges.records import ItemInput

    clip = ClipConfig(architecture=f"local-dir:{tiny_clip_files['local_dir']}", pretrained=None)
    paths = [make_image(_photo_like(s), suffix=".jpg") for s in range(5)]
    paths += [make_image((0, 0, 0), size=(96, 96), suffix=".jpg")]  # blank
    paths += [make_image(_photo_like(9))]  # a PNG: always PIL
    corrupt = make_image((1, 2, 3), suffix=".jpg")
    with open(corrupt, "r+b") as handle:  # a JPEG header and then garbage
        handle.seek(20)
        handle.write(b"\x00" * 200)
        handle.truncate(240)
    truncated = make_image(_photo_like(3), suffix=".jpg")
    with open(truncated, "r+b") as handle:  # a whole header, then the data cut to zeros
        handle.seek(300)
        handle.write(b"\x00" * 2000)
    paths += [truncated, corrupt]
    items = [
        ItemInput(item_id=str(i), image_path=p, returned_text="I cannot help with that request")
        for i, p in enumerate(paths)
    ]
    outputs = {}
    prepared_on_cpu = []
    cpu_prepare = ClipEncoder.prepare

    def counting_prepare(self, image):
        prepared_on_cpu.append(image.size)
        return cpu_prepare(self, image)

    monkeypatch.setattr(ClipEncoder, "prepare", counting_prepare)
    for on_device in (False, True):
        prepared_on_cpu.clear()
        config = HardRefusalConfig(clip=clip, jpeg_decode_on_device=on_device, decode_workers=2)
        outputs[on_device] = HardRefusalJudge(config).judge_items(items)
    # On the device path only the PNG reaches the CPU preprocessing (the truncated JPEG's PIL
    # fallback fails before it): the decoded JPEGs are prepared as tensors on the device.
    assert len(prepared_on_cpu) == 1
    for pil, device in zip(outputs[False], outputs[True], strict=True):
        assert pil.label == device.label
        assert bool(pil.evidence["image_error"]) == bool(device.evidence["image_error"])
        if pil.evidence["image_error"]:
            continue
        pil_checks, device_checks = pil.evidence["checks"], device.evidence["checks"]
        assert [c["check"] for c in pil_checks] == [c["check"] for c in device_checks]
        assert pil.evidence["reason"] == device.evidence["reason"]
        blank = [next(c for c in checks if c["check"] == "blank_image") for checks in (pil_checks, device_checks)]  # fmt: skip
        assert blank[0]["std"] == pytest.approx(blank[1]["std"], abs=1.0)
        assert blank[0]["fired"] == blank[1]["fired"]
        assert pil_checks[-1]["refusal_similarity"] == pytest.approx(
            device_checks[-1]["refusal_similarity"], abs=0.02
        )
    assert outputs[True][5].evidence["fired"][:1] == ["blank_image"]  # the blank JPEG
    # The corrupt JPEG: refused by the header check (both paths), the keyword verdict stands.
    assert "not a recognised image format" in outputs[True][-1].evidence["image_error"]
    # The truncated one fails the device's batch call alone, then PIL: an error, the rest fine.
    assert "corrupt or truncated" in outputs[True][-2].evidence["image_error"]


@pytest.mark.ml
def test_a_jpeg_the_device_refuses_falls_back_to_pil(tiny_clip_files, make_image, monkeypatch):
    from scoring.judges import hard_refusal
    from scoring.judges.clip import ClipConfig
    from scoring.judges.hard_refusal import HardRefusalConfig, HardRefusalJudge
    from scoring.judges.records import ItemInput

    monkeypatch.setattr(
        hard_refusal,
        "decode_jpegs_on_device",
        lambda blobs, device: [RuntimeError("nvjpeg")] * len(blobs),
    )
    clip = ClipConfig(architecture=f"local-dir:{tiny_clip_files['local_dir']}", pretrained=None)
    config = HardRefusalConfig(clip=clip, jpeg_decode_on_device=True)
    path = make_image(_photo_like(1), suffix=".jpg")
    [output] = HardRefusalJudge(config).judge_items([ItemInput(item_id="a", image_path=path)])
    assert output.error is None
    assert [c["check"] for c in output.evidence["checks"]] == [
        "provider_signal", "empty_output", "blank_image", "keyword_rules", "clip",
    ]  # fmt: skip


@pytest.mark.parametrize(
    "size", [(512, 512), (513, 512), (300, 280), (1000, 3), (777, 1333), (256, 256), (1920, 1080)]
)
def test_the_thumbnail_view_is_pils_nearest_thumbnail(size):
    from PIL import Image

    from scoring.judges.rules import thumbnail_view

    pixels = np.random.default_rng(sum(size)).integers(0, 256, (size[1], size[0], 3), np.uint8)
    thumb = Image.fromarray(pixels)
    thumb.thumbnail((256, 256), Image.Resampling.NEAREST)
    np.testing.assert_array_equal(thumbnail_view(pixels), np.asarray(thumb))


def test_blank_statistics_of_an_array_equal_those_of_the_image(make_image):
    from PIL import Image

    rng = np.random.default_rng(4)
    for pixels in (rng.integers(0, 256, (300, 700, 3)), np.full((600, 500, 3), 9)):
        image = Image.open(make_image(pixels)).convert("RGB")
        assert blank_image_stats(np.asarray(image)) == blank_image_stats(image)


def _test_images():
    """Blank, near-uniform, placeholder-like and photo-like images (the rules' test cases
    and the benchmark's photographs)."""
    rng = np.random.default_rng(11)
    yield "black", np.zeros((512, 512, 3))
    yield "white", np.full((512, 512, 3), 255)
    yield "grey with faint noise", np.clip(128 + rng.normal(0, 2, (512, 512, 3)), 0, 255)
    yield "grey with noise", np.clip(128 + rng.normal(0, 6, (512, 512, 3)), 0, 255)
    text_card = np.full((480, 640, 3), 240)
    text_card[200:230, 100:540] = 20  # a line of "text" on a plain card
    yield "text card", text_card
    icon = np.full((512, 512, 3), 200)
    icon[240:272, 240:272] = (30, 30, 200)  # a small broken-image icon
    yield "small icon", icon
    yield "noise", rng.integers(0, 256, (517, 389, 3))
    for seed in range(5):
        coarse = rng.integers(0, 256, (16, 16, 3)).astype(np.uint8)
        from PIL import Image

        smooth = np.asarray(Image.fromarray(coarse).resize((512, 512), Image.Resampling.BICUBIC))
        yield f"photo {seed}", np.clip(smooth + rng.integers(-6, 7, smooth.shape), 0, 255)


@pytest.mark.parametrize("name,pixels", list(_test_images()), ids=lambda v: v if isinstance(v, str) else "")  # fmt: skip
def test_the_reduced_view_decides_as_the_full_image(name, pixels):
    """The blank check reads a 256-pixel nearest-neighbour thumbnail (a strided view); on
    these images its decision is the one the full-resolution statistics give."""
    from scoring.judges.rules import blank_image_check

    pixels = np.asarray(pixels, dtype=np.uint8)
    reduced = blank_image_check(pixels)
    full = blank_image_check(pixels, max_side=max(pixels.shape))
    assert reduced.fired == full.fired, (name, reduced.evidence, full.evidence)


def test_a_process_pool_gives_the_serial_verdicts_in_order(make_image):
    items = _items(make_image, 23)
    serial, _ = _judge(workers=1)
    expected = [o.to_dict() for o in serial.judge_items(items)]
    vectors = {40 + k: [0.2 * k, 0.1, 0.5] for k in range(5)}
    config = HardRefusalConfig(
        refusal_descriptions=("r1",), ordinary_descriptions=("o1",), decode_workers=2,
        decode_pool="process",
    )  # fmt: skip
    judge = HardRefusalJudge(config, clip_encoder=FakeClip(vectors, TEXTS, batch_size=4))
    assert [o.to_dict() for o in judge.judge_items(items)] == expected


def test_the_decode_pool_is_not_part_of_the_verdict_and_is_checked():
    base = HardRefusalConfig.from_dict({"decode_workers": 2})
    other = HardRefusalConfig.from_dict({"decode_workers": 4, "decode_pool": "process"})
    assert base.fingerprint() == other.fingerprint()
    with pytest.raises(ValueError, match="decode_pool must be one of"):
        HardRefusalConfig.from_dict({"decode_pool": "fibres"})


@pytest.mark.ml
def test_a_pickled_encoder_prepares_the_same_and_carries_no_weights(tiny_clip_files, make_image):
    import pickle

    from PIL import Image

    from scoring.judges.clip import ClipConfig, load_clip

    encoder = load_clip(
        ClipConfig(architecture=f"local-dir:{tiny_clip_files['local_dir']}", pretrained=None)
    )
    copy = pickle.loads(pickle.dumps(encoder))
    assert copy.model is None and copy.tokenizer is None and encoder.model is not None
    image = Image.open(make_image(np.random.default_rng(2).integers(0, 256, (70, 90, 3))))
    np.testing.assert_array_equal(
        copy.prepare(image.convert("RGB")), encoder.prepare(image.convert("RGB"))
    )


@pytest.mark.ml
def test_pixels_normalised_on_the_device_equal_prepare(tiny_clip_files, make_image):
    """The uint8 path (``prepare_pixels``, then the lookup table gathered where the model
    is) gives ``prepare``'s float32 values exactly: every one of the 256 values of every
    channel, and the embeddings of a batch."""
    import torch
    from PIL import Image

    from scoring.judges.clip import ClipConfig, load_clip

    encoder = load_clip(
        ClipConfig(architecture=f"local-dir:{tiny_clip_files['local_dir']}", pretrained=None)
    )
    every_value = np.repeat(np.arange(256, dtype=np.uint8), 4 * 3).reshape(32, 32, 3)
    images = [Image.fromarray(every_value)]
    rng = np.random.default_rng(8)
    images += [Image.open(make_image(rng.integers(0, 256, (70, 90, 3)))) for _ in range(3)]
    images = [image.convert("RGB") for image in images]
    pixels = [encoder.prepare_pixels(image) for image in images]
    assert all(p.dtype == np.uint8 and p.shape[2] == 3 for p in pixels)
    on_device = encoder._pixels_on_device(pixels)
    expected = torch.from_numpy(np.stack([encoder.prepare(image) for image in images]))
    assert on_device.dtype == torch.float32 and torch.equal(on_device, expected)
    floats = [encoder.prepare(image) for image in images]
    np.testing.assert_array_equal(encoder.encode_arrays(pixels), encoder.encode_arrays(floats))
    mixed = [pixels[0], floats[1], pixels[2], floats[3]]
    np.testing.assert_array_equal(encoder.encode_arrays(mixed), encoder.encode_arrays(floats))


@pytest.mark.ml
def test_a_judge_sending_pixels_to_the_device_gives_the_same_outputs(tiny_clip_files, make_image):
    from scoring.judges.clip import ClipConfig

    clip = ClipConfig(architecture=f"local-dir:{tiny_clip_files['local_dir']}", pretrained=None)
    items = [ItemInput(item_id=str(i), image_path=make_image(_photo_like(i))) for i in range(5)]
    outputs = []
    for pixels_for_device in (False, True):
        judge = HardRefusalJudge(HardRefusalConfig(clip=clip, decode_workers=2))
        judge.item_checks().pixels_for_device = pixels_for_device
        outputs.append([o.to_dict() for o in judge.judge_items(items)])
    assert outputs[0] == outputs[1]


def test_the_default_pool_is_threads_for_a_few_workers_and_processes_for_many():
    from scoring.judges.hard_refusal import PROCESSES_FROM

    few = HardRefusalJudge(HardRefusalConfig(decode_workers=PROCESSES_FROM - 1))
    many = HardRefusalJudge(HardRefusalConfig(decode_workers=PROCESSES_FROM))
    chosen = HardRefusalJudge(HardRefusalConfig(decode_workers=16, decode_pool="thread"))
    assert (few.decode_pool_kind, many.decode_pool_kind, chosen.decode_pool_kind) == (
        "thread", "process", "thread",
    )  # fmt: skip


@pytest.mark.ml
def test_jpeg_draft_decodes_smaller_and_keeps_the_verdicts(tiny_clip_files, make_image):
    """jpeg_draft: JPEGs decoded at a reduced DCT scale (never below CLIP's input side).
    Part of the cache key; on these images the labels and blank decisions are those of the
    full decode and the CLIP scores within 0.02 (the tolerance docs/judges.md states)."""
    from PIL import Image

    from scoring.judges.clip import ClipConfig
    from scoring.judges.images import decode_image_and_pixels

    clip = ClipConfig(architecture=f"local-dir:{tiny_clip_files['local_dir']}", pretrained=None)
    paths = [make_image(_photo_like(s, size=256), suffix=".jpg") for s in range(4)]
    paths += [make_image((0, 0, 0), size=(256, 256), suffix=".jpg")]
    paths += [make_image(np.asarray(p, dtype=np.uint8), suffix=".jpg") for _, p in list(_test_images())[:7]]  # fmt: skip
    image, _ = decode_image_and_pixels(open(paths[0], "rb").read(), draft_side=32)
    assert image.size == (32, 32)  # 256 at 1/8: the tiny model's input side is 32
    assert Image.open(paths[0]).size == (256, 256)
    items = [ItemInput(item_id=str(i), image_path=p) for i, p in enumerate(paths)]
    outputs = {}
    for draft in (False, True):
        config = HardRefusalConfig(clip=clip, jpeg_draft=draft, decode_workers=2)
        outputs[draft] = HardRefusalJudge(config).judge_items(items)
    assert HardRefusalConfig(jpeg_draft=True).fingerprint() != HardRefusalConfig().fingerprint()
    for full, draft in zip(outputs[False], outputs[True], strict=True):
        assert full.label == draft.label
        checks = [{c["check"]: c for c in o.evidence["checks"]} for o in (full, draft)]
        assert checks[0]["blank_image"]["fired"] == checks[1]["blank_image"]["fired"]
        assert checks[0]["clip"]["refusal_similarity"] == pytest.approx(
            checks[1]["clip"]["refusal_similarity"], abs=0.02
        )
