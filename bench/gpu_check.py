"""GPU check: the model backends give on CUDA what they give on the CPU.

CI has no GPU, so the CUDA paths (autocast, half precision, device placement) of the real
loading code are checked here, on a machine with one, against the CPU results of the same
tiny random-weight models the tests build (nothing is downloaded):

1. the CLIP encoder of the hard-refusal judge: image and text embeddings (``precision: bf16``
   on CUDA, as a judge config sets it: open_clip casts the weights to bf16 and the encoder
   runs under bf16 autocast, against float32 on the CPU; cosine similarity of each pair);
2. the transformers VLM cue judge: greedy answers and option probabilities;
3. the diffusers text-to-image backend: fp16 on CUDA returns finite images, the same seed
   gives the same image twice, and a batch matches its requests made one at a time;
4. the judge's uint8 input path: pixels normalised on the device by the lookup table equal
   the CPU's float32 preprocessing exactly, for every value of every channel;
5. the judge's batched device JPEG path (``jpeg_decode_on_device``): the blank statistics
   computed on the device equal the host's on the same decoded pixels exactly, each image's
   batched preprocessing equals its preprocessing alone, and the judge's verdicts equal
   the PIL path's on the CPU (labels, reasons, blank verdicts; scores within rounding).

It needs no Django. It is a correctness check, not a timing: the results are deterministic, so
it runs once (no repeats). Exit status 1 when a check fails; the last line printed is JSON
(bench/harness.py's ``emit``, with the machine and library versions).

    python bench/gpu_check.py [--device cuda]
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
from pathlib import Path

import numpy as np
from harness import emit, machine

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from generation.backends import GenerationRequest, load_generator  # noqa: E402
from scoring.judges.backends.base import DecodingConfig, VLMRequest  # noqa: E402
from scoring.judges.backends.transformers_vlm import (  # noqa: E402
    TransformersVLMBackend,
    TransformersVLMConfig,
)
from scoring.judges.clip import ClipConfig, clear_clip_cache, load_clip  # noqa: E402
from tests.support.tiny_models import (  # noqa: E402
    TINY_CLIP_ARCH,
    build_tiny_llava,
    build_tiny_open_clip,
)
from tests.support.tiny_pipelines import build_tiny_text2image  # noqa: E402

OPTIONS = ("retained", "erased", "substituted")


def images(count: int):
    from PIL import Image

    rng = np.random.default_rng(0)
    return [
        Image.fromarray(rng.integers(0, 256, size=(48, 64, 3), dtype=np.uint8))
        for _ in range(count)
    ]


def check_clip(folder: Path, device: str) -> dict:
    files = build_tiny_open_clip(folder / "clip")
    pictures = images(9)
    texts = ["a blank black image", "an error message", "a photo of a person"]
    results = {}
    for where, precision in (("cpu", "fp32"), (device, "bf16")):
        clear_clip_cache()
        encoder = load_clip(
            ClipConfig(
                architecture=TINY_CLIP_ARCH,
                pretrained=files["checkpoint"],
                model_config=files["config"],
                device=where,
                precision=precision,
                batch_size=4,
            )
        )
        results[where] = (encoder.encode_images(pictures), encoder.encode_texts(texts))
    (cpu_images, cpu_texts), (gpu_images, gpu_texts) = results["cpu"], results[device]
    image_cosines = np.sum(cpu_images * gpu_images, axis=1)
    text_cosines = np.sum(cpu_texts * gpu_texts, axis=1)
    similarity_gap = np.abs(cpu_images @ cpu_texts.T - gpu_images @ gpu_texts.T).max()
    return {
        "min_image_cosine": round(float(image_cosines.min()), 5),
        "min_text_cosine": round(float(text_cosines.min()), 5),
        "max_similarity_gap": round(float(similarity_gap), 5),
        # bf16 keeps about 3 significant digits: embeddings must still point the same way.
        "ok": bool(image_cosines.min() > 0.999 and text_cosines.min() > 0.999),
    }


def check_pixels_on_device(folder: Path, device: str) -> dict:
    """``prepare_pixels`` + ``_pixels_on_device`` on the device against ``prepare`` on the
    CPU: bit-identical, over an image holding all 256 values in every channel."""
    import torch
    from PIL import Image

    files = build_tiny_open_clip(folder / "clip-pixels")
    clear_clip_cache()
    encoder = load_clip(
        ClipConfig(architecture=f"local-dir:{files['local_dir']}", pretrained=None, device=device)
    )
    every_value = np.repeat(np.arange(256, dtype=np.uint8), 4 * 3).reshape(32, 32, 3)
    pictures = [Image.fromarray(every_value), *images(3)]
    on_device = encoder._pixels_on_device([encoder.prepare_pixels(p) for p in pictures])
    expected = torch.from_numpy(np.stack([encoder.prepare(p) for p in pictures]))
    mismatched = int((on_device.cpu() != expected).sum())
    return {"mismatched_values": mismatched, "ok": mismatched == 0}


def check_device_images(folder: Path, device: str, image_format: str = "jpeg") -> dict:
    """The hard-refusal judge with its images on ``device`` against the PIL path on the CPU,
    over photo-like images of three sizes (stacked by size on the device) and blank ones:
    JPEGs with ``jpeg_decode_on_device``, PNGs with ``preprocess_on_device`` (decoded by a
    process pool, their pixels through shared memory)."""
    from PIL import Image

    from scoring.judges.device_images import blank_stats_on_device, pixels_to_device
    from scoring.judges.hard_refusal import HardRefusalConfig, HardRefusalJudge
    from scoring.judges.images import decode_jpegs_on_device
    from scoring.judges.records import ItemInput
    from scoring.judges.rules import blank_image_stats

    files = build_tiny_open_clip(folder / f"clip-{image_format}s")
    rng = np.random.default_rng(3)
    paths = []
    for index in range(24):
        size = [(512, 512), (640, 480), (300, 200)][index % 3]
        if index % 8 == 7:
            picture = Image.new("RGB", size, (250, 250, 250))
        else:
            coarse = Image.fromarray(rng.integers(0, 256, (6, 6, 3), dtype=np.uint8))
            picture = coarse.resize(size, Image.Resampling.BICUBIC)
        path = folder / f"{image_format}-{index}.{'jpg' if image_format == 'jpeg' else 'png'}"
        picture.save(path, **({"quality": 90} if image_format == "jpeg" else {}))
        paths.append(str(path))
    items = [ItemInput(item_id=str(i), image_path=p) for i, p in enumerate(paths)]
    outputs = {}
    key = "jpeg_decode_on_device" if image_format == "jpeg" else "preprocess_on_device"
    pool = "thread" if image_format == "jpeg" else "process"
    for where, on_device in (("cpu", False), (device, True)):
        clear_clip_cache()
        clip = ClipConfig(
            architecture=f"local-dir:{files['local_dir']}", pretrained=None, device=where
        )
        config = HardRefusalConfig(
            clip=clip, decode_workers=2, decode_pool=pool, **{key: on_device}
        )
        judge = HardRefusalJudge(config)
        outputs[on_device] = judge.judge_items(items)
    if image_format == "jpeg":
        tensors = decode_jpegs_on_device([Path(p).read_bytes() for p in paths], device)
    else:
        arrays = [np.asarray(Image.open(p).convert("RGB")) for p in paths]
        tensors = pixels_to_device(arrays, device)
    on_device_stats = blank_stats_on_device(tensors, tolerance=8)
    host_stats = [blank_image_stats(t.permute(1, 2, 0).cpu().numpy()) for t in tensors]
    batched = judge.clip.prepare_tensors(tensors)
    alone_gap = max(
        float((b - judge.clip.prepare_tensors([t])[0]).abs().max())
        for b, t in zip(batched, tensors, strict=True)
    )
    # A CLIP score within the review margin of τ may fall either side of it by decoder and
    # resize rounding (such verdicts are flagged for review on both paths): counted apart.
    mismatches, at_tau, score_gap = 0, 0, 0.0
    for pil, gpu in zip(outputs[False], outputs[True], strict=True):
        blank = [_check(o, "blank_image") for o in (pil, gpu)]
        clip_checks = [_check(o, "clip") for o in (pil, gpu)]
        scores = [c["refusal_similarity"] for c in clip_checks]
        score_gap = max(score_gap, abs(scores[0] - scores[1]))
        near_tau = all(abs(x - c["tau"]) <= 0.02 for x, c in zip(scores, clip_checks, strict=True))
        differs = pil.label != gpu.label or pil.evidence["reason"] != gpu.evidence["reason"]
        at_tau += differs and near_tau and blank[0]["fired"] == blank[1]["fired"]
        mismatches += (
            (differs and not near_tau)
            or blank[0]["fired"] != blank[1]["fired"]
            or gpu.error is not None
        )
    return {
        "images": len(items),
        "verdict_mismatches": int(mismatches),
        "verdicts_differing_at_tau": int(at_tau),
        "max_clip_score_gap": round(score_gap, 5),
        "blank_stats_equal_host": on_device_stats == host_stats,
        "batched_vs_alone_max_gap": alone_gap,
        "ok": bool(
            mismatches == 0
            and score_gap < 0.02
            and on_device_stats == host_stats
            and alone_gap <= 1e-5
        ),
    }


def _check(output, name: str) -> dict:
    return next(c for c in output.evidence["checks"] if c["check"] == name)


def check_vlm(folder: Path, device: str) -> dict:
    model_dir = build_tiny_llava(folder / "llava")
    requests = [
        VLMRequest(images=(picture,), text=f"is the cue {i} retained ?", options=OPTIONS)
        for i, picture in enumerate(images(6))
    ]
    greedy = [
        VLMRequest(images=(picture,), text="describe", decoding=DecodingConfig(max_new_tokens=4))
        for picture in images(3)
    ]
    answers = {}
    for where in ("cpu", device):
        backend = TransformersVLMBackend(
            TransformersVLMConfig(model=model_dir, device=where, dtype="float32", batch_size=4)
        )
        scored = backend.generate(requests)
        texts = backend.generate(greedy)
        answers[where] = (
            [[r.option_probs[o] for o in OPTIONS] for r in scored],
            [r.text for r in texts],
        )
    (cpu_probs, cpu_texts), (gpu_probs, gpu_texts) = answers["cpu"], answers[device]
    gap = float(np.abs(np.array(cpu_probs) - np.array(gpu_probs)).max())
    return {
        "max_option_prob_gap": round(gap, 6),
        "greedy_texts_equal": cpu_texts == gpu_texts,
        "ok": bool(gap < 1e-3 and cpu_texts == gpu_texts),
    }


def check_diffusers(folder: Path, device: str) -> dict:
    model_dir = build_tiny_text2image(folder / "t2i")
    config = {
        "name": "gpu-check",
        "kind": "diffusers-t2i",
        "model": str(model_dir),
        "device": device,
        "dtype": "fp16",
        "steps": 3,
        "width": 64,
        "height": 64,
    }
    requests = [GenerationRequest(f"r{i}", f"a person number {i}", seed=i) for i in range(4)]
    batched = load_generator({**config, "batch_size": 4}).generate(requests)
    again = load_generator({**config, "batch_size": 4}).generate(requests)
    alone = load_generator({**config, "batch_size": 1}).generate(requests)

    def pixels(results):
        from PIL import Image

        return [
            np.asarray(Image.open(io.BytesIO(r.image)).convert("RGB"), dtype=np.float32)
            for r in results
        ]

    errors = [r.error for r in batched + again + alone if r.status == "error"]
    if errors:
        return {"ok": False, "error": errors[0]}
    first, second, single = pixels(batched), pixels(again), pixels(alone)
    finite = all(np.isfinite(p).all() and p.std() > 0 for p in first)
    repeat_gap = max(float(np.abs(a - b).max()) for a, b in zip(first, second, strict=True))
    batch_gap = max(float(np.abs(a - b).mean()) for a, b in zip(first, single, strict=True))
    return {
        "finite_non_blank": finite,
        "same_seed_max_pixel_gap": repeat_gap,
        "batch_vs_alone_mean_pixel_gap": round(batch_gap, 3),
        # fp16 kernels may pick other algorithms for other batch sizes: a small mean gap only.
        "ok": bool(finite and repeat_gap == 0 and batch_gap < 2.0),
    }


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    import torch

    if args.device.startswith("cuda") and not torch.cuda.is_available():
        emit({"benchmark": "gpu_check", "skipped": "no CUDA device", **machine(["torch"])})
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        report = {
            "benchmark": "gpu_check",
            "device": torch.cuda.get_device_name(args.device)
            if args.device.startswith("cuda")
            else args.device,
            "torch": torch.__version__,
            "clip": check_clip(folder, args.device),
            "pixels_on_device": check_pixels_on_device(folder, args.device),
            "device_jpegs": check_device_images(folder, args.device, "jpeg"),
            "device_pngs": check_device_images(folder, args.device, "png"),
            "vlm": check_vlm(folder, args.device),
            "diffusers": check_diffusers(folder, args.device),
        }
    checks = ("clip", "pixels_on_device", "device_jpegs", "device_pngs", "vlm", "diffusers")
    report["ok"] = all(report[k]["ok"] for k in checks)
    emit({**report, **machine(["torch", "open_clip_torch", "transformers", "diffusers"])})
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
