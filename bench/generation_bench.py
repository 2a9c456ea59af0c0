"""Images/s of text-to-image through the service behind ``generate_study --inline``.

Builds a random-weight Stable Diffusion pipeline of a configurable size in a temporary folder
(random weights cost the same compute as trained ones) and a throw-away SQLite database. Each
run plans two identical studies (the shipped base prompts, sampled, × the gender values) and
makes their images with ``generation.services.generation_run_inline``, the function the
command calls: requests, claims, the pipeline, PNG files and Item rows. One study's generator
has ``batch_size: 1``, the other ``--batch``; the two run in alternating order and the
speedup is their ratio within the run. The generator stays loaded between runs, as in a
worker.

Beside it, a micro-benchmark (keys ``micro_backend_*``) times the loaded backend's
``generate`` alone on the same prompts: no database, no files.

    python bench/generation_bench.py --device cpu
    python bench/generation_bench.py --device cuda --dtype fp16 --unet-channels 320,640,1280,1280 \
        --layers-per-block 2 --vae-channels 128,256,512,512 --text-hidden 768 --size 512 --steps 20

The last line printed is JSON (bench/harness.py).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

from harness import Runs, alternating, emit, machine, ratio, setup_django

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


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
    parser.add_argument(
        "--base-prompts",
        type=int,
        default=8,
        help="base prompts sampled per study (each × the gender values: the images per study)",
    )
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--budget-s", type=float, default=None, help="stop after ≥ 3 runs past it")
    parser.add_argument("--no-micro", action="store_true", help="skip the backend micro-benchmark")
    return parser.parse_args(argv)


def channels(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(","))


def synchronize() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()


def service_seconds(slug: str, name: str, config: dict, base_prompts: int) -> tuple[float, int]:
    """Plan a study (untimed), then time ``generation_run_inline`` making all its images."""
    from generation import services

    study = services.study_setup(
        config=services.StudyConfig(
            slug=slug,
            name=slug,
            sample_size=base_prompts,
            attributes=("gender",),
            generators={name: config},
        )
    )
    started = time.perf_counter()
    summary = services.generation_run_inline(study=study)
    synchronize()
    elapsed = time.perf_counter() - started
    if summary.error or summary.open or not summary.done:
        raise RuntimeError(f"generation did not finish cleanly: {summary}")
    return elapsed, summary.done


def backend_seconds(config: dict, prompts: list[str]) -> float:
    """Micro-benchmark: the loaded backend's generate() alone."""
    from generation import backends
    from generation.runs.execution import generator_for

    requests = [
        backends.GenerationRequest(f"micro-{i}", prompt, seed=0) for i, prompt in enumerate(prompts)
    ]
    started = time.perf_counter()
    results = generator_for(config).generate(requests)
    synchronize()
    elapsed = time.perf_counter() - started
    failed = [r.error for r in results if r.status == "error"]
    if failed:
        raise RuntimeError(failed[0])
    return elapsed


def main(argv=None) -> dict:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="generation-bench-") as folder:
        workdir = Path(folder)
        setup_django(
            var_dir=str(workdir / "var"), database_url=f"sqlite:///{workdir / 'bench.sqlite3'}"
        )
        from generation.backends.tiny import build_tiny_text2image
        from generation.models import PlannedPrompt
        from generation.runs.execution import generator_for

        build_tiny_text2image(
            workdir / "pipeline",
            unet_channels=channels(args.unet_channels),
            vae_channels=channels(args.vae_channels),
            text_hidden=args.text_hidden,
            layers_per_block=args.layers_per_block,
        )
        config = {
            "kind": "diffusers-t2i",
            "model": str(workdir / "pipeline"),
            "device": args.device,
            "dtype": args.dtype,
            "steps": args.steps,
            "guidance": 7.0,
            "width": args.size,
            "height": args.size,
        }
        configs = {
            "single": {**config, "batch_size": 1},
            "batched": {**config, "batch_size": args.batch},
        }
        runs = Runs(repeats=args.repeats, warmup=args.warmup, budget_s=args.budget_s)
        images = 0
        for index, sample in enumerate(runs):
            (single_s, images), (batched_s, _) = alternating(
                index,
                *[
                    partial(service_seconds, f"run-{index}-{n}", n, configs[n], args.base_prompts)
                    for n in ("single", "batched")
                ],
            )
            sample["service_batched_images_per_s"] = images / batched_s
            sample["service_single_images_per_s"] = images / single_s
            sample["service_speedup"] = ratio(single_s, batched_s)
            line = f"run: service {images / batched_s:.2f} vs {images / single_s:.2f} images/s"
            if not args.no_micro:
                prompts = list(
                    PlannedPrompt.objects.filter(study__slug=f"run-{index}-single").values_list(
                        "text", flat=True
                    )
                )
                resolved = {name: {**c, "name": name} for name, c in configs.items()}
                single_micro_s, batched_micro_s = alternating(
                    index,
                    partial(backend_seconds, resolved["single"], prompts),
                    partial(backend_seconds, resolved["batched"], prompts),
                )
                sample["micro_backend_batched_images_per_s"] = len(prompts) / batched_micro_s
                sample["micro_backend_single_images_per_s"] = len(prompts) / single_micro_s
                sample["micro_backend_speedup"] = ratio(single_micro_s, batched_micro_s)
                line += f"; backend alone {sample['micro_backend_speedup']:.2f}x"
            print(line, flush=True)
        loaded = generator_for({**configs["batched"], "name": "batched"})
        device, dtype = loaded.device, str(loaded.dtype).removeprefix("torch.")
    return emit(
        {
            "benchmark": "generation_bench",
            "timed_path": "generation.services.generation_run_inline (generate_study --inline)",
            "images_per_study": images,
            "batch_size": args.batch,
            "steps": args.steps,
            "size": args.size,
            "unet_channels": list(channels(args.unet_channels)),
            "device": str(device),
            "dtype": dtype,
            **runs.summary(),
            **machine(["torch", "diffusers", "transformers", "numpy", "django"]),
        }
    )


if __name__ == "__main__":
    main()
