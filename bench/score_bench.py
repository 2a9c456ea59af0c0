"""score_study's real path end to end: database, storage, response cache, judge, bulk writes.

Writes N generated 512×512 PNGs under a temporary media folder, makes a study of them in a
fresh database (SQLite in the temporary folder, or ``--database-url``), and times
``scoring.services.study_score`` with a CLIP hard-refusal judge (every item a cache miss:
the previous run's judgments and cached responses are deleted first). The model is the tiny
random-weight open_clip model the tests build, or ``--model`` (an open_clip ``local-dir:``
folder, or ``ARCH`` with random weights, e.g. ``ViT-B-32``).

``process_cpu_ms_per_image`` is the process's CPU time per image during scoring (all
threads), the figure a loaded shared machine does not distort. ``model_only_images_per_s`` times the image tower alone on already-preprocessed batches of
the same size; ``overhead_ms_per_image`` is the end-to-end wall time per image minus that
model time: decode, blank check, preprocessing, cache and database.

    python bench/score_bench.py [--images 400] [--device cpu] [--batch-size 64] [--model ViT-B-32]
                                [--format png|jpeg] [--jpeg-decode-on-device]

The last line printed is JSON.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
import time
from pathlib import Path

from harness import Runs, emit, machine, setup_django

ROOT = Path(__file__).resolve().parents[1]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--images", type=int, default=400)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--chunk-size", type=int, default=None, help="study_score's chunk_size")
    parser.add_argument("--workers", type=int, default=None, help="decode workers (default: auto)")
    parser.add_argument("--model", default=None, help="open_clip local-dir folder or architecture")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--format", choices=["png", "jpeg"], default="png",
                        help="how the generated images are stored")  # fmt: skip
    parser.add_argument("--jpeg-decode-on-device", action="store_true",
                        help="the judge's jpeg_decode_on_device (nvJPEG with --device cuda)")  # fmt: skip
    return parser.parse_args()


def photo_like_image(seed: int, size: int = 512, image_format: str = "png") -> bytes:
    """Smooth structure plus sensor-like noise: compresses (and decodes) like a photo, not
    like pure noise or a flat colour. ``image_format="jpeg"`` stores it at quality 90."""
    import io

    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(seed)
    coarse = Image.fromarray(rng.integers(0, 256, (16, 16, 3), dtype=np.uint8))
    smooth = np.asarray(coarse.resize((size, size), Image.Resampling.BICUBIC), dtype=np.int16)
    noisy = np.clip(smooth + rng.integers(-6, 7, smooth.shape), 0, 255).astype(np.uint8)
    buffer = io.BytesIO()
    if image_format == "jpeg":
        Image.fromarray(noisy).save(buffer, format="JPEG", quality=90)
    else:
        Image.fromarray(noisy).save(buffer, format="PNG")
    return buffer.getvalue()


def build_study(n_images: int, image_format: str = "png"):
    from django.conf import settings

    from annotations.models import Item
    from annotations.services import attribute_value_get_or_create, study_create

    study = study_create(name="score bench", slug="score-bench")
    value = attribute_value_get_or_create(
        study=study, attribute="culture", value="Korean", cue_description="Korean clothing"
    )
    folder = Path(settings.MEDIA_ROOT) / "studies" / study.slug
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for index in range(n_images):
        data = photo_like_image(index, image_format=image_format)
        suffix = "jpg" if image_format == "jpeg" else "png"
        name = f"studies/{study.slug}/{index:06d}.{suffix}"
        (Path(settings.MEDIA_ROOT) / name).write_bytes(data)
        rows.append(
            Item(
                study=study,
                item_id=f"item-{index}",
                image=name,
                generator="bench",
                image_sha256=hashlib.sha256(data).hexdigest(),
                prompt="a person cooking",
                attribute_value=value,
            )
        )
    Item.objects.bulk_create(rows)
    return study


def judge_config(args: argparse.Namespace, folder: str) -> dict:
    if args.model and Path(args.model).is_dir():
        clip = {"architecture": f"local-dir:{args.model}", "pretrained": None}
    elif args.model:
        clip = {"architecture": args.model, "pretrained": None, "allow_random_weights": True}
    else:
        from tests.support.tiny_models import build_tiny_open_clip

        local_dir = build_tiny_open_clip(Path(folder) / "tiny_clip")["local_dir"]
        clip = {"architecture": f"local-dir:{local_dir}", "pretrained": None}
    clip |= {"device": args.device, "batch_size": args.batch_size}
    config = {"kind": "hard_refusal", "name": "clip-bench", "version": "1", "clip": clip}
    if args.workers is not None:
        config["decode_workers"] = args.workers
    if args.jpeg_decode_on_device:
        config["jpeg_decode_on_device"] = True
    return config


def model_only_images_per_s(judge, n_images: int, batch_size: int, device: str) -> float:
    """The image tower alone on preprocessed batches (what the model costs per image)."""
    import torch

    clip = judge.judge.clip if hasattr(judge, "judge") else judge.clip
    size = clip.model.visual.image_size
    side = size[0] if isinstance(size, tuple | list) else size
    batch = torch.randn(batch_size, 3, side, side)
    batches = max(1, n_images // batch_size)
    with torch.inference_mode():
        clip.model.encode_image(batch.to(device))  # warm-up
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        started = time.perf_counter()
        for _ in range(batches):
            clip.model.encode_image(batch.to(device)).float().cpu()
        if device.startswith("cuda"):
            torch.cuda.synchronize()
    return batches * batch_size / (time.perf_counter() - started)


def main() -> None:
    args = parse_args()
    folder = tempfile.mkdtemp(prefix="score-bench-")
    sys.path.insert(0, str(ROOT))
    setup_django(var_dir=folder, media_root=str(Path(folder) / "media"),
                 database_url=args.database_url or f"sqlite:///{Path(folder) / 'bench.sqlite3'}")  # fmt: skip

    from annotations.models import AutomatedJudgment
    from scoring import services
    from scoring.models import JudgeResponse

    print(f"writing {args.images} {args.format.upper()}s of 512×512 …", file=sys.stderr)
    study = build_study(args.images, args.format)
    config = judge_config(args, folder)
    configs = {"clip-bench": config}
    judge = services.judge_load(config=services.selectors.judge_config(
        study=study, judge_name="clip-bench", configs=configs), device=args.device)  # fmt: skip
    chunk = {"chunk_size": args.chunk_size} if args.chunk_size else {}

    runs = Runs(repeats=args.repeats, warmup=1, budget_s=300)
    for sample in runs:
        AutomatedJudgment.objects.filter(item__study=study).delete()
        JudgeResponse.objects.all().delete()
        started, cpu_started = time.perf_counter(), time.process_time()
        summary = services.study_score(
            study=study, judge_name="clip-bench", device=args.device, judge_configs=configs, **chunk
        )
        wall = time.perf_counter() - started
        # CPU time is what a busy shared machine cannot hide: wall time there is mostly waiting.
        cpu_ms_per_image = (time.process_time() - cpu_started) / args.images * 1000
        if summary.errors or summary.items != args.images:
            raise SystemExit(f"scoring failed: {summary.as_dict()}")
        model_ips = model_only_images_per_s(judge, args.images, args.batch_size, args.device)
        sample["end_to_end_images_per_s"] = args.images / wall
        sample["process_cpu_ms_per_image"] = cpu_ms_per_image
        sample["model_only_images_per_s"] = model_ips
        sample["overhead_ms_per_image"] = (wall - args.images / model_ips) / args.images * 1000
        started = time.perf_counter()
        cached = services.study_score(
            study=study, judge_name="clip-bench", device=args.device, judge_configs=configs, **chunk
        )
        sample["cached_rerun_images_per_s"] = args.images / (time.perf_counter() - started)
        assert cached.cached == args.images, cached.as_dict()

    inner = getattr(judge, "judge", judge)
    emit(
        {
            "benchmark": "score_study",
            "images": args.images,
            "image_size": f"512x512 {args.format.upper()}",
            "jpeg_decode_on_device": args.jpeg_decode_on_device,
            "device": args.device,
            "batch_size": args.batch_size,
            "workers": getattr(inner, "decode_workers", None),
            "model": args.model or "tiny random-weight open_clip (tests/support/tiny_models.py)",
            **runs.summary(),
            **machine(["torch", "open_clip_torch", "pillow", "django"]),
        }
    )


if __name__ == "__main__":
    main()
