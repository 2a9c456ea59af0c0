"""Hard-refusal judge throughput, as users configure it: batched vs one image at a time.

The timed path is the judge's own API: ``HardRefusalJudge.judge_items`` over PNG files on
disk, with its CLIP encoder loaded by ``load_clip`` from a ``ClipConfig`` (architecture,
device, ``precision``, ``batch_size``) exactly as a judge config names it. With
``--precision bf16`` on CUDA that means weights cast to bf16 by open_clip, not float32
weights under autocast. Random weights (``allow_random_weights``) cost the same compute as
trained ones, so nothing is downloaded. Each run judges every image twice, with the
configured batch size and with ``batch_size: 1``, in alternating order; the speedup is the
ratio within that run.

Beside it, a micro-benchmark (keys ``micro_tower_*``) times the image tower alone on
preprocessed tensors, and a square matmul in the weights' dtype (``matmul_*``): it shows how
close each path comes to the device's matmul rate, which is what bounds a batching speedup.

    python bench/judge_bench.py [--device cuda --precision bf16] [--images 128] [--batch-size 64]

The last line printed is JSON (bench/harness.py).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from harness import Runs, alternating, emit, machine, ratio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scoring.judges.clip import ClipConfig, ClipEncoder, load_clip  # noqa: E402
from scoring.judges.hard_refusal import HardRefusalConfig, HardRefusalJudge  # noqa: E402
from scoring.judges.records import ItemInput  # noqa: E402

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument(
        "--precision",
        choices=sorted(DTYPES),
        default="fp32",
        help="the judge config's 'precision' (open_clip casts the weights; CPU runs fp32)",
    )
    parser.add_argument("--images", type=int, default=128, help="images judged per pass")
    parser.add_argument("--image-size", type=int, default=512, help="side of the PNGs on disk")
    parser.add_argument("--batch-size", type=int, default=64, help="the judge config's batch_size")
    parser.add_argument("--architecture", default="ViT-B-32")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--matmul-size", type=int, default=2048)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--budget-s", type=float, default=None, help="stop after ≥ 3 runs past it")
    parser.add_argument(
        "--no-micro", action="store_true", help="skip the tower-only micro-benchmark"
    )
    return parser.parse_args(argv)


def synchronize(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def write_images(folder: Path, count: int, size: int) -> list[ItemInput]:
    """Noisy photographs-to-be: random colour fields, so no image trips the blank check."""
    from PIL import Image

    rng = np.random.default_rng(0)
    items = []
    for index in range(count):
        low = rng.integers(0, 256, size=(size // 16, size // 16, 3), dtype=np.uint8)
        pixels = np.kron(low, np.ones((16, 16, 1), dtype=np.uint8))
        pixels = np.clip(pixels + rng.integers(-8, 9, size=pixels.shape), 0, 255).astype(np.uint8)
        path = folder / f"image-{index:04d}.png"
        Image.fromarray(pixels).save(path)
        items.append(ItemInput(item_id=f"item-{index}", image_path=str(path), generator="bench"))
    return items


def judge_seconds(judge: HardRefusalJudge, items: list[ItemInput], device: str):
    started = time.perf_counter()
    outputs = judge.judge_items(items)
    synchronize(device)
    elapsed = time.perf_counter() - started
    errors = [o.error for o in outputs if o.error]
    if errors:
        raise RuntimeError(f"the judge failed on {len(errors)} images: {errors[0]}")
    return elapsed, [o.label for o in outputs]


def matmul_gflops(device: str, size: int, dtype: torch.dtype, repeats: int = 10) -> float:
    a = torch.randn(size, size, device=device, dtype=dtype)
    b = torch.randn(size, size, device=device, dtype=dtype)
    with torch.inference_mode():
        for _ in range(2):
            a @ b
        synchronize(device)
        started = time.perf_counter()
        for _ in range(repeats):
            a @ b
        synchronize(device)
    return 2 * size**3 * repeats / (time.perf_counter() - started) / 1e9


def tower_input(model, device: str, batch: int = 1) -> torch.Tensor:
    """Random images as the image tower takes them: its own input size, in the dtype of its
    first layer. A judge with ``precision: bf16`` has bf16 projection and patch weights while
    open_clip keeps the class and position embeddings (the model's first parameters) in
    float32, so the first parameter's dtype is not the input's (the FLOP counter once fed
    float32 images to bf16 weights)."""
    visual = model.visual
    size = visual.image_size
    height, width = size if isinstance(size, tuple | list) else (size, size)
    return torch.randn(batch, 3, height, width, device=device, dtype=tower_dtype(model))


def tower_dtype(model) -> torch.dtype:
    """The dtype of the image tower's first layer (the patch embedding)."""
    visual = model.visual
    conv = getattr(visual, "conv1", None)
    if conv is not None:
        return conv.weight.dtype
    return next(p for p in visual.parameters() if p.dim() > 1).dtype


def model_flops_per_image(model, device: str) -> int:
    """FLOPs of one image through the image tower (2 per multiply-add).

    Counted by FlopCounterMode in training mode: in eval mode nn.MultiheadAttention takes a
    fused fast path whose projections the counter does not see (it then reports only the
    MLPs, ~2/3 of the true count). The counter also misses the attention-score products
    on CPU, so those are added analytically when absent: QKᵀ and AV, 2·N²·d FLOPs each, per
    layer (N = 50 tokens, d = 768 for ViT-B-32: ~1% of the total).
    """
    from torch.utils.flop_counter import FlopCounterMode

    counter = FlopCounterMode(display=False)
    model.train()
    try:
        with torch.no_grad(), counter:
            model.encode_image(tower_input(model, device))
    finally:
        model.eval()
    flops = counter.get_total_flops()
    counted = {str(op) for op in counter.get_flop_counts()["Global"]}
    if not any("attention" in op or "bmm" in op for op in counted):
        visual = model.visual
        tokens = visual.grid_size[0] * visual.grid_size[1] + 1
        width, layers = visual.transformer.width, visual.transformer.layers
        flops += 2 * 2 * tokens**2 * width * layers
    return flops


def tower_in_precision(encoder: ClipEncoder, precision: str) -> ClipEncoder:
    """The encoder's tower in float32 or bf16 (weights cast as open_clip casts them for a
    ``precision: bf16`` config; on CUDA the encoder's bf16 autocast applies), for timing the
    tower in both precisions whatever the judge is configured with. The configured encoder
    itself when it is already in that precision."""
    import copy

    from open_clip.model import convert_weights_to_lp

    wanted = {"fp32": torch.float32, "bf16": torch.bfloat16}[precision]
    if tower_dtype(encoder.model) == wanted:
        return encoder
    model = copy.deepcopy(encoder.model).float()
    if precision == "bf16":
        convert_weights_to_lp(model, dtype=torch.bfloat16)
    config = dataclasses.replace(encoder.config, precision=precision)
    return ClipEncoder(model, encoder.preprocess, encoder.tokenizer, config)


def tower_seconds(encoder: ClipEncoder, tensors: torch.Tensor, batch_size: int) -> float:
    """Micro-benchmark: the image tower alone on preprocessed tensors, as the encoder calls it
    (inference mode, the encoder's own autocast), no decoding, resizing or normalising."""
    device = encoder.config.device
    started = time.perf_counter()
    with torch.inference_mode(), encoder._autocast():
        for start in range(0, len(tensors), batch_size):
            encoder.model.encode_image(tensors[start : start + batch_size].to(device))
    synchronize(device)
    return time.perf_counter() - started


def main(argv=None) -> dict:
    args = parse_args(argv)
    device = args.device
    if device == "cpu":
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    clip_config = ClipConfig(
        architecture=args.architecture,
        pretrained=None,
        allow_random_weights=True,
        device=device,
        precision=args.precision,
        batch_size=args.batch_size,
    )
    encoder = load_clip(clip_config)
    batched_judge = HardRefusalJudge(HardRefusalConfig(clip=clip_config))
    # load_clip keys its cache without the batch size, so the one-at-a-time judge gets its own
    # encoder object around the same loaded model.
    single_config = dataclasses.replace(clip_config, batch_size=1)
    single_judge = HardRefusalJudge(
        HardRefusalConfig(clip=single_config),
        clip_encoder=ClipEncoder(
            encoder.model, encoder.preprocess, encoder.tokenizer, single_config
        ),
    )
    weight_dtype = tower_dtype(encoder.model)
    flops = model_flops_per_image(encoder.model, device)
    towers = {} if args.no_micro else {p: tower_in_precision(encoder, p) for p in ("fp32", "bf16")}
    runs = Runs(repeats=args.repeats, warmup=args.warmup, budget_s=args.budget_s)
    with tempfile.TemporaryDirectory(prefix="judge-bench-") as folder:
        items = write_images(Path(folder), args.images, args.image_size)
        if not args.no_micro:
            from PIL import Image

            tensors = torch.stack([encoder.preprocess(Image.open(i.image_path)) for i in items])
            configured = tensors.to(weight_dtype)
        for index, sample in enumerate(runs):
            (batched_s, batched_labels), (single_s, single_labels) = alternating(
                index,
                lambda: judge_seconds(batched_judge, items, device),
                lambda: judge_seconds(single_judge, items, device),
            )
            sample["judge_batched_images_per_s"] = args.images / batched_s
            sample["judge_single_images_per_s"] = args.images / single_s
            sample["judge_speedup"] = ratio(single_s, batched_s)
            sample["same_labels"] = batched_labels == single_labels
            if args.no_micro:
                continue
            matmul = matmul_gflops(device, args.matmul_size, weight_dtype)
            tower_batched_s, tower_single_s = alternating(
                index,
                lambda: tower_seconds(encoder, configured, args.batch_size),
                lambda: tower_seconds(encoder, configured, 1),
            )
            # The tower's batched rate in each precision, beside the configured one.
            for precision, tower in towers.items():
                seconds = tower_seconds(
                    tower, tensors.to(tower_dtype(tower.model)), args.batch_size
                )
                sample[f"micro_tower_{precision}_images_per_s"] = args.images / seconds
            batched_gflops = args.images / tower_batched_s * flops / 1e9
            single_gflops = args.images / tower_single_s * flops / 1e9
            sample["micro_tower_batched_images_per_s"] = args.images / tower_batched_s
            sample["micro_tower_single_images_per_s"] = args.images / tower_single_s
            sample["micro_tower_speedup"] = ratio(tower_single_s, tower_batched_s)
            sample["micro_matmul_gflop_per_s"] = matmul
            sample["micro_tower_batched_matmul_fraction"] = batched_gflops / matmul
            sample["micro_tower_single_matmul_fraction"] = single_gflops / matmul
            print(
                f"run: judge {sample['judge_batched_images_per_s']:.1f} vs "
                f"{sample['judge_single_images_per_s']:.1f} images/s "
                f"({sample['judge_speedup']:.2f}x); tower fractions of matmul "
                f"{sample['micro_tower_batched_matmul_fraction']:.2f} / "
                f"{sample['micro_tower_single_matmul_fraction']:.2f}; tower alone fp32 "
                f"{sample['micro_tower_fp32_images_per_s']:.1f}, bf16 "
                f"{sample['micro_tower_bf16_images_per_s']:.1f} images/s",
                flush=True,
            )
    return emit(
        {
            "benchmark": "judge_bench",
            "timed_path": "HardRefusalJudge.judge_items (PNG files, load_clip(ClipConfig))",
            "architecture": args.architecture,
            "device": device if device == "cpu" else torch.cuda.get_device_name(device),
            "precision": args.precision,
            "weight_dtype": str(weight_dtype).removeprefix("torch."),
            "threads": torch.get_num_threads(),
            "images": args.images,
            "image_size": args.image_size,
            "batch_size": args.batch_size,
            "gflop_per_image": round(flops / 1e9, 3),
            **runs.summary(),
            **machine(["torch", "open_clip_torch", "numpy", "pillow"]),
        }
    )


if __name__ == "__main__":
    main()
