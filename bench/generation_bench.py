"""Images/s of text-to-image, batched vs one prompt at a time, in one run.

Builds a random-weight Stable Diffusion pipeline of a configurable size in a temporary
folder (random weights cost the same compute as trained ones), loads it through the
project's generator (``load_generator``), and times the same prompts and seeds with
``batch_size=1`` and ``batch_size=--batch``. The last line printed is JSON.

    .venv/bin/python bench/generation_bench.py --device cpu
    .venv/bin/python bench/generation_bench.py --device cuda --unet-channels 320,640,1280 \
        --size 512 --steps 20 --batch 8 --images 16 --dtype fp16
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from generation.backends import GenerationRequest, load_generator  # noqa: E402
from tests.support.tiny_pipelines import build_tiny_text2image  # noqa: E402


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu", help="cpu, cuda, auto ...")
    parser.add_argument("--dtype", default="auto", help="auto, fp32, fp16, bf16")
    parser.add_argument("--unet-channels", default="32,64", help="UNet block widths")
    parser.add_argument("--vae-channels", default="32,64", help="VAE block widths")
    parser.add_argument("--text-hidden", type=int, default=64, help="text encoder width")
    parser.add_argument("--layers-per-block", type=int, default=1)
    parser.add_argument("--size", type=int, default=64, help="image side in pixels")
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--images", type=int, default=16, help="images per mode")
    parser.add_argument("--repeats", type=int, default=2, help="timed runs per mode (best kept)")
    return parser.parse_args(argv)


def channels(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(","))


def images_per_second(generator, requests, repeats: int) -> float:
    generator.generate(requests[: generator.config.batch_size])  # warm-up
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        results = generator.generate(requests)
        _synchronize()
        best = min(best, time.perf_counter() - started)
        failed = [r.error for r in results if r.status == "error"]
        if failed:
            raise RuntimeError(failed[0])
    return len(requests) / best


def _synchronize() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()


def main(argv=None) -> dict:
    args = parse_args(argv)
    requests = [
        GenerationRequest(f"bench-{i}", f"a photo of a person number {i}", seed=i)
        for i in range(args.images)
    ]
    with tempfile.TemporaryDirectory() as folder:
        build_tiny_text2image(
            Path(folder),
            unet_channels=channels(args.unet_channels),
            vae_channels=channels(args.vae_channels),
            text_hidden=args.text_hidden,
            layers_per_block=args.layers_per_block,
        )
        config = {
            "name": "bench",
            "kind": "diffusers-t2i",
            "model": folder,
            "device": args.device,
            "dtype": args.dtype,
            "steps": args.steps,
            "guidance": 7.0,
            "width": args.size,
            "height": args.size,
        }
        single = load_generator({**config, "batch_size": 1})
        single_rate = images_per_second(single, requests, args.repeats)
        batched = load_generator({**config, "batch_size": args.batch})
        batched_rate = images_per_second(batched, requests, args.repeats)
        device, dtype = batched.device, str(batched.dtype).removeprefix("torch.")
    report = {
        "batched_images_per_s": round(batched_rate, 3),
        "single_images_per_s": round(single_rate, 3),
        "speedup": round(batched_rate / single_rate, 2),
        "batch_size": args.batch,
        "images": args.images,
        "steps": args.steps,
        "size": args.size,
        "unet_channels": list(channels(args.unet_channels)),
        "device": device,
        "dtype": dtype,
    }
    print(json.dumps(report))
    return report


if __name__ == "__main__":
    main()
