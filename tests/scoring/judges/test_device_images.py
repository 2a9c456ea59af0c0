"""The device JPEG path, batched: the blank statistics computed on decoded tensors equal the
host's exactly, the batched preprocessing gives each image what it gets alone, and a batch
costs a fixed number of device-to-host copies whatever its size. Run on CPU tensors (the
code is the CUDA path's; bench/gpu_check.py runs it on a GPU)."""

from __future__ import annotations

import numpy as np
import pytest

from scoring.judges.rules import blank_image_stats

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.ml

SIZES = [(512, 512), (513, 512), (300, 280), (777, 1333), (256, 256), (64, 40), (1920, 1080)]


def _images(rng):
    """(height, width, 3) uint8 arrays: noise, smooth, near-uniform, and uniform ones."""
    arrays = []
    for index, (width, height) in enumerate(SIZES):
        kind = index % 4
        if kind == 0:
            pixels = rng.integers(0, 256, (height, width, 3))
        elif kind == 1:
            jitter = rng.integers(-3, 4, (height, width, 3))
            pixels = np.full((height, width, 3), (200, 30, 90)) + jitter
        elif kind == 2:
            pixels = np.full((height, width, 3), 7)
            pixels[: height // 3] = 250  # a third off the dominant colour
        else:
            pixels = np.full((height, width, 3), 128)
        arrays.append(np.clip(pixels, 0, 255).astype(np.uint8))
    return arrays


def _tensor(pixels):
    return torch.from_numpy(np.ascontiguousarray(pixels.transpose(2, 0, 1)))


@pytest.mark.parametrize("tolerance", [0, 3, 8])
def test_blank_statistics_on_the_device_equal_the_hosts(tolerance):
    from scoring.judges.device_images import blank_stats_on_device

    arrays = _images(np.random.default_rng(tolerance))
    arrays += [arrays[0][::-1].copy(), arrays[1][:, ::-1].copy()]  # two sizes twice: stacked
    stats = blank_stats_on_device([_tensor(a) for a in arrays], tolerance=tolerance)
    assert stats == [blank_image_stats(a, tolerance=tolerance) for a in arrays]


@pytest.fixture
def host_copies(monkeypatch):
    """The shapes of the tensors copied to the host (``Tensor.cpu``) from now on."""
    copies = []
    original = torch.Tensor.cpu

    def counted(self, *args, **kwargs):
        copies.append(self.shape)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(torch.Tensor, "cpu", counted)
    return copies


def test_the_blank_statistics_of_a_batch_take_one_copy_to_the_host(host_copies):
    from scoring.judges.device_images import blank_stats_on_device

    tensors = [_tensor(a) for a in _images(np.random.default_rng(1))]
    blank_stats_on_device(tensors, tolerance=8)
    assert len(host_copies) == 1 and host_copies[0] == (len(tensors), 9)
    assert blank_stats_on_device([], tolerance=8) == []


def test_batched_preprocessing_gives_each_image_what_it_gets_alone(tiny_clip_files):
    from scoring.judges.clip import ClipConfig, load_clip

    clip = load_clip(
        ClipConfig(architecture=f"local-dir:{tiny_clip_files['local_dir']}", pretrained=None)
    )
    arrays = _images(np.random.default_rng(2))
    tensors = [_tensor(a) for a in arrays + arrays[:3]]
    batched = clip.prepare_tensors(tensors)
    assert len(batched) == len(tensors)
    for tensor, prepared in zip(tensors, batched, strict=True):
        [alone] = clip.prepare_tensors([tensor])
        assert prepared.dtype == torch.float32 and torch.equal(prepared, alone)


def _photo_like(seed: int, size: tuple[int, int]) -> np.ndarray:
    from PIL import Image

    rng = np.random.default_rng(seed)
    coarse = Image.fromarray(rng.integers(0, 256, (6, 6, 3), dtype=np.uint8))
    return np.asarray(coarse.resize(size, Image.Resampling.BICUBIC))


@pytest.mark.parametrize(
    ("key", "suffix"), [("jpeg_decode_on_device", ".jpg"), ("preprocess_on_device", ".png")]
)
def test_a_device_batch_costs_the_same_copies_to_the_host_for_3_images_as_for_9(
    tiny_clip_files, make_image, host_copies, key, suffix
):
    """No per-image synchronisation: the blank sums in one copy, the embeddings in one;
    JPEGs decoded on the device, or images the pool decoded and sent whole."""
    from scoring.judges.clip import ClipConfig
    from scoring.judges.hard_refusal import HardRefusalConfig, HardRefusalJudge
    from scoring.judges.records import ItemInput

    clip = ClipConfig(
        architecture=f"local-dir:{tiny_clip_files['local_dir']}", pretrained=None, batch_size=16
    )
    judge = HardRefusalJudge(HardRefusalConfig(clip=clip, **{key: True}))
    paths = [
        make_image(_photo_like(seed, (96 + 32 * (seed % 2), 80)), suffix=suffix)
        for seed in range(9)
    ]
    judge.judge_items([ItemInput(item_id="warm", image_path=paths[0])])  # text embeddings cached
    counts = []
    for count in (3, 9):
        host_copies.clear()
        items = [ItemInput(item_id=str(i), image_path=p) for i, p in enumerate(paths[:count])]
        outputs = judge.judge_items(items)
        assert all(o.error is None for o in outputs)
        counts.append(len(host_copies))
    assert counts[0] == counts[1] == 2


def test_the_next_batch_decodes_on_the_device_while_the_model_runs_on_this_one(
    tiny_clip_files, make_image, monkeypatch
):
    """The order the judge asks for things: batch n+1's device decode is started before CLIP
    runs on batch n; the verdicts are those of a run without the overlap (serial submits)."""
    from concurrent.futures import Future

    from scoring.judges import hard_refusal
    from scoring.judges.clip import ClipConfig
    from scoring.judges.hard_refusal import HardRefusalConfig, HardRefusalJudge
    from scoring.judges.records import ItemInput

    clip = ClipConfig(
        architecture=f"local-dir:{tiny_clip_files['local_dir']}", pretrained=None, batch_size=2
    )
    judge = HardRefusalJudge(HardRefusalConfig(clip=clip, jpeg_decode_on_device=True))
    paths = [make_image(_photo_like(seed, (96, 80)), suffix=".jpg") for seed in range(5)]
    items = [ItemInput(item_id=str(i), image_path=p) for i, p in enumerate(paths)]
    overlapped = [o.to_dict() for o in judge.judge_items(items)]
    events = []

    class Inline:
        def submit(self, function, batch):
            events.append(("decode", [p.item.item_id for p in batch]))
            future = Future()
            future.set_result(function(batch))
            return future

    clip_checks = HardRefusalJudge._clip_checks

    def logged(self, batch):
        events.append(("clip", [p.item.item_id for p in batch]))
        return clip_checks(self, batch)

    monkeypatch.setattr(hard_refusal, "_device_decoder", Inline)
    monkeypatch.setattr(HardRefusalJudge, "_clip_checks", logged)
    assert [o.to_dict() for o in judge.judge_items(items)] == overlapped
    assert events == [
        ("decode", ["0", "1"]),
        ("decode", ["2", "3"]),
        ("clip", ["0", "1"]),
        ("decode", ["4"]),
        ("clip", ["2", "3"]),
        ("clip", ["4"]),
    ]
