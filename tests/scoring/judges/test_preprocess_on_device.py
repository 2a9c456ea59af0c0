"""``preprocess_on_device``: the pool only decodes, the model's device checks and prepares.

The blank statistics equal the pool path's exactly (the same decoded pixels, exact integer
sums), the labels, reasons and order of checks are the same, and CLIP scores agree to within
the tensor resize's rounding. Run on CPU tensors (the code is the CUDA path's;
``bench/gpu_check.py`` runs it on a GPU)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from scoring.judges.hard_refusal import HardRefusalConfig, HardRefusalJudge
from scoring.judges.records import ItemInput

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.ml


def _photo_like(seed: int, size: tuple[int, int] = (160, 120)) -> np.ndarray:
    rng = np.random.default_rng(seed)
    coarse = Image.fromarray(rng.integers(0, 256, (6, 6, 3), dtype=np.uint8))
    pixels = np.asarray(coarse.resize(size, Image.Resampling.BICUBIC)).astype(np.int16)
    noise = rng.integers(-6, 7, pixels.shape)
    return np.clip(pixels + noise, 0, 255).astype(np.uint8)


def _save(folder, name: str, image: Image.Image, **options) -> str:
    path = folder / name
    image.save(path, **options)
    return str(path)


@pytest.fixture
def mixed_items(tmp_path):
    """Images of four sizes and every mode a generator returns, blank ones, a JPEG the pool
    decodes, and files that cannot be read."""
    paths = [
        _save(tmp_path, f"photo-{seed}.png", Image.fromarray(_photo_like(seed, size)))
        for seed, size in enumerate([(160, 120), (160, 120), (96, 96), (300, 280), (64, 40)])
    ]
    paths.append(_save(tmp_path, "blank.png", Image.new("RGB", (128, 128), (250, 250, 250))))
    paths.append(_save(tmp_path, "black.png", Image.new("RGB", (160, 120), (0, 0, 0))))
    photo = Image.fromarray(_photo_like(11))
    paths.append(_save(tmp_path, "palette.png", photo.convert("P")))
    paths.append(_save(tmp_path, "grey.png", photo.convert("L")))
    paths.append(_save(tmp_path, "alpha.png", photo.convert("RGBA")))
    paths.append(_save(tmp_path, "photo.jpg", photo, quality=90))
    truncated = Path(_save(tmp_path, "truncated.png", Image.fromarray(_photo_like(3))))
    truncated.write_bytes(truncated.read_bytes()[:500])
    paths += [str(truncated), str(tmp_path / "missing.png")]
    return [
        ItemInput(item_id=str(i), image_path=p, returned_text="Here is your picture")
        for i, p in enumerate(paths)
    ]


def _clip(tiny_clip_files, **options):
    from scoring.judges.clip import ClipConfig

    return ClipConfig(
        architecture=f"local-dir:{tiny_clip_files['local_dir']}", pretrained=None, **options
    )


def _check(output, name):
    return next(c for c in output.evidence["checks"] if c["check"] == name)


@pytest.mark.parametrize("pool", ["thread", "process"])
def test_the_device_path_gives_the_pool_paths_verdicts(tiny_clip_files, mixed_items, pool, monkeypatch):  # fmt: skip
    from scoring.judges.clip import ClipEncoder

    prepared_on_the_pool = []
    for name in ("prepare", "prepare_pixels"):
        original = getattr(ClipEncoder, name)

        def counting(self, image, original=original):
            prepared_on_the_pool.append(image.size)
            return original(self, image)

        monkeypatch.setattr(ClipEncoder, name, counting)
    outputs = {}
    for on_device in (False, True):
        prepared_on_the_pool.clear()
        config = HardRefusalConfig(clip=_clip(tiny_clip_files, batch_size=4), decode_workers=2,
                                   decode_pool=pool, preprocess_on_device=on_device)  # fmt: skip
        outputs[on_device] = HardRefusalJudge(config).judge_items(mixed_items)
        if on_device:  # (a process pool's calls are not seen here; the thread pool's are)
            assert prepared_on_the_pool == []
    for pool_path, device in zip(outputs[False], outputs[True], strict=True):
        assert (device.label, device.error) == (pool_path.label, pool_path.error)
        for key in ("reason", "image_error"):
            assert device.evidence.get(key) == pool_path.evidence.get(key)
        checks = [[c["check"] for c in o.evidence["checks"]] for o in (pool_path, device)]
        assert checks[0] == checks[1]
        if pool_path.error or pool_path.evidence.get("image_error"):
            continue
        blank = [_check(o, "blank_image") for o in (pool_path, device)]
        assert blank[0] == blank[1]  # exact: the same pixels, exact integer sums
        scores = [_check(o, "clip")["refusal_similarity"] for o in (pool_path, device)]
        assert scores[1] == pytest.approx(scores[0], abs=0.02)
    by_name = {o.item_id: o for o in outputs[True]}
    assert by_name["5"].evidence["fired"][:1] == ["blank_image"]
    assert by_name["6"].evidence["fired"][:1] == ["blank_image"]
    assert "corrupt or truncated" in by_name["11"].error
    assert "not found" in by_name["12"].error
    assert [o.item_id for o in outputs[True] if o.error] == ["11", "12"]


def test_a_failed_transfer_is_each_items_error_and_the_rules_still_stand(tiny_clip_files, tmp_path, monkeypatch):  # fmt: skip
    from scoring.judges import hard_refusal

    def out_of_memory(arrays, device):
        raise RuntimeError("CUDA out of memory")

    monkeypatch.setattr(hard_refusal, "pixels_to_device", out_of_memory)
    judge = HardRefusalJudge(HardRefusalConfig(clip=_clip(tiny_clip_files), preprocess_on_device=True))  # fmt: skip
    path = _save(tmp_path, "a.png", Image.fromarray(_photo_like(1)))
    refused, plain = judge.judge_items([
        ItemInput(item_id="a", image_path=path, returned_text="I cannot help with that request"),
        ItemInput(item_id="b", image_path=path),
    ])  # fmt: skip
    assert "CUDA out of memory" in refused.evidence["image_error"]
    assert refused.label == "refusal" and refused.evidence["reason"] == "keyword_rules"
    assert plain.error is not None and "CUDA out of memory" in plain.error


def test_pixels_reach_the_device_unchanged_in_input_order():
    from scoring.judges.device_images import pixels_to_device

    rng = np.random.default_rng(4)
    arrays = [rng.integers(0, 256, (h, w, 3), dtype=np.uint8) for h, w in [(8, 6), (5, 5), (8, 6)]]  # fmt: skip
    tensors = pixels_to_device(arrays, "cpu")
    for array, tensor in zip(arrays, tensors, strict=True):
        assert tensor.dtype == torch.uint8 and tensor.shape == (3, *array.shape[:2])
        assert torch.equal(tensor, torch.from_numpy(array).permute(2, 0, 1))
    assert pixels_to_device([], "cpu") == []


def test_the_key_is_part_of_the_verdict_and_absent_at_its_default():
    """Configs written before the key existed keep their fingerprints (and cache entries)."""
    from scoring.judges.clip import ClipConfig

    assert HardRefusalConfig().fingerprint() == "b9e4f048fa7b5c9d"
    clip = ClipConfig(architecture="ViT-B-32", pretrained="openai", device="cuda", precision="bf16")  # fmt: skip
    assert HardRefusalConfig(clip=clip, jpeg_draft=True).fingerprint() == "447e23c3128c8042"
    assert HardRefusalConfig(preprocess_on_device=True).fingerprint() != "b9e4f048fa7b5c9d"
    assert HardRefusalConfig.from_dict({"preprocess_on_device": True}).preprocess_on_device


@pytest.mark.parametrize("key", ["preprocess_on_device", "jpeg_decode_on_device", "jpeg_draft"])
@pytest.mark.parametrize("value", ["false", "yes", 1, 0, None])
def test_a_switch_that_is_not_true_or_false_is_refused_in_one_line(key, value):
    with pytest.raises(ValueError, match=f"^{key} must be true or false, got "):
        HardRefusalConfig.from_dict({key: value})
    assert HardRefusalConfig.from_dict({key: False}) == HardRefusalConfig()
