"""score_study's real path end to end: database, storage, response cache, judge, bulk writes.

Writes N generated 512×512 PNGs under a temporary media folder, makes a study of them in a
fresh database (SQLite in the temporary folder, or ``--database-url``), and times
``scoring.services.study_score`` with a CLIP hard-refusal judge (every item a cache miss:
the previous run's judgments and cached responses are deleted first). The model is the tiny
random-weight open_clip model the tests build, or ``--model``:

- a folder (open_clip's ``local-dir:`` layout) or a checkpoint file (``--architecture`` names
  its architecture): real weights, when present;
- ``ARCH`` (e.g. ``ViT-B-32``): that architecture with random weights (the same compute);
- ``none``: no model. The tower is a stand-in that sleeps a fixed time per batch
  (``--standin-ms-per-image``, default 0.1 ms: an H200's bf16 ViT-B-32 rate) and returns random
  unit embeddings of the right width, with ViT-B-32's preprocessing (224 px). The workers
  hand it uint8 pixels, as they hand a model on a GPU (whose normalisation runs on the device).
  What is timed is then the pipeline alone: decoding, checks, preprocessing, cache, database.
  With ``--preprocess-on-device`` the host's share of the device work is timed (the batch
  stacked into a staging buffer), not the device's (the blank sums, the resize).

``process_cpu_ms_per_image`` is the CPU time per image during scoring (all threads of this
process and of its decode worker processes), the figure a loaded shared machine does not
distort; ``main_process_cpu_ms_per_image`` is this process's share of it (every thread, no
worker) and ``calling_thread_cpu_ms_per_image`` the scoring thread's: the serial work one GIL
does per image however many workers decode. With a process pool,
``workers_cpu_ms_per_image`` is the rest: the decode workers' share, which more cores
spread. ``pipeline_images_per_s`` is images over the scoring call's wall time, and
``parallel_efficiency`` = pipeline_images_per_s × process_cpu_ms_per_image / (1000 × cores):
the share of the machine's cores the pipeline kept busy. ``model_only_images_per_s`` times the
image tower alone on already-preprocessed batches of the same size; ``overhead_ms_per_image``
is the end-to-end wall time per image minus that model time.

    python bench/score_bench.py [--images 400] [--device cpu] [--batch-size 64]
                                [--model none|ViT-B-32|PATH] [--workers N]
                                [--format png|jpeg] [--jpeg-decode-on-device] [--jpeg-draft]
                                [--preprocess-on-device]
                                [--pool thread|process] [--profile FILE]

The last line printed is JSON.
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import hashlib
import os
import pstats
import struct
import sys
import tempfile
import time
import zlib
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from harness import Runs, cpu_seconds, emit, machine, setup_django

ROOT = Path(__file__).resolve().parents[1]
STANDIN = "none"


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--images", type=int, default=400)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--chunk-size", type=int, default=None, help="study_score's chunk_size")
    parser.add_argument("--workers", type=int, default=None,
                        help="the judge's decode_workers (default: one per core)")  # fmt: skip
    parser.add_argument("--pool", choices=["thread", "process"], default=None,
                        help="the judge's decode_pool (default: the judge's default)")  # fmt: skip
    parser.add_argument("--model", default=None,
                        help="'none' (a stand-in tower), an open_clip folder or checkpoint file, "
                             "or an architecture with random weights")  # fmt: skip
    parser.add_argument("--architecture", default="ViT-B-32",
                        help="the architecture of a --model checkpoint file")  # fmt: skip
    parser.add_argument("--precision", default=None, help="the CLIP config's precision")
    parser.add_argument("--standin-ms-per-image", type=float, default=0.1,
                        help="--model none: the stand-in tower's fixed cost")  # fmt: skip
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--budget-s", type=float, default=300)
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--format", choices=["png", "jpeg"], default="png",
                        help="how the generated images are stored")  # fmt: skip
    parser.add_argument("--jpeg-decode-on-device", action="store_true",
                        help="the judge's jpeg_decode_on_device (nvJPEG with --device cuda)")  # fmt: skip
    parser.add_argument("--jpeg-draft", action="store_true",
                        help="the judge's jpeg_draft (JPEGs decoded at a reduced DCT scale)")  # fmt: skip
    parser.add_argument("--preprocess-on-device", action="store_true",
                        help="the judge's preprocess_on_device (the pool only decodes)")  # fmt: skip
    parser.add_argument("--profile", default=None, metavar="FILE",
                        help="write a cProfile of one more scoring call to FILE (pstats format)")  # fmt: skip
    args = parser.parse_args(argv)
    if args.images < 1:
        parser.error("--images must be at least 1")
    return args


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


def _encode_image(task: tuple[int, str]) -> bytes:
    """One base image's bytes (run in a worker process)."""
    index, image_format = task
    return photo_like_image(index, image_format=image_format)


def distinct_copy(data: bytes, index: int) -> bytes:
    """``data`` with ``index`` written into a metadata segment the decoders skip (a PNG
    ``tEXt`` chunk after IHDR, a JPEG comment after the JFIF header): the same pixels, the
    same decoding work, other bytes, so every file has its own content hash (a cache miss)."""
    payload = f"score-bench {index}".encode()
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        body = b"tEXt" + b"Comment\x00" + payload
        chunk = struct.pack(">I", len(body) - 4) + body + struct.pack(">I", zlib.crc32(body))
        at = 8 + 25  # the signature, then IHDR (length, type, 13 bytes of data, CRC)
        return data[:at] + chunk + data[at:]
    at = 2  # after SOI; after the JFIF APP0 segment when there is one
    if data[2:4] == b"\xff\xe0":
        at = 4 + int.from_bytes(data[4:6], "big")
    segment = b"\xff\xfe" + (len(payload) + 2).to_bytes(2, "big") + payload
    return data[:at] + segment + data[at:]


# Distinct pictures the bench encodes; every further file is a copy of one of them with its
# own bytes (``distinct_copy``): encoding a noisy 512×512 PNG costs ~30 ms of CPU, so 10,000
# encoded one by one took a minute on 16 cores.
BASE_IMAGES = 64


def write_images(paths: list[str], image_format: str) -> list[str]:
    """Encode ``BASE_IMAGES`` pictures on every core, then write each file as a distinct
    copy of one of them; the files' SHA-256 hashes, in order."""
    count = min(len(paths), BASE_IMAGES)
    with ProcessPoolExecutor(min(count, os.cpu_count() or 1)) as pool:
        bases = list(pool.map(_encode_image, [(index, image_format) for index in range(count)]))
    hashes = []
    for index, path in enumerate(paths):
        data = distinct_copy(bases[index % count], index)
        Path(path).write_bytes(data)
        hashes.append(hashlib.sha256(data).hexdigest())
    return hashes


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
    suffix = "jpg" if image_format == "jpeg" else "png"
    names = [f"studies/{study.slug}/{index:06d}.{suffix}" for index in range(n_images)]
    hashes = write_images([str(Path(settings.MEDIA_ROOT) / name) for name in names], image_format)
    rows = [
        Item(study=study, item_id=f"item-{index}", image=name, generator="bench",
             image_sha256=digest, prompt="a person cooking", attribute_value=value)
        for index, (name, digest) in enumerate(zip(names, hashes, strict=True))
    ]  # fmt: skip
    Item.objects.bulk_create(rows)
    return study


def judge_config(args: argparse.Namespace, folder: str) -> dict:
    model = args.model
    if model == STANDIN:
        # Any loadable config: the bench swaps the stand-in encoder in before scoring.
        clip = {"architecture": "ViT-B-32", "pretrained": None, "allow_random_weights": True}
    elif model and Path(model).is_dir():
        clip = {"architecture": f"local-dir:{model}", "pretrained": None}
    elif model and Path(model).is_file():
        clip = {"architecture": args.architecture, "pretrained": str(Path(model).resolve())}
    elif model:
        clip = {"architecture": model, "pretrained": None, "allow_random_weights": True}
    else:
        from tests.support.tiny_models import build_tiny_open_clip

        local_dir = build_tiny_open_clip(Path(folder) / "tiny_clip")["local_dir"]
        clip = {"architecture": f"local-dir:{local_dir}", "pretrained": None}
    clip |= {"device": args.device, "batch_size": args.batch_size}
    if args.precision:
        clip["precision"] = args.precision
    config = {"kind": "hard_refusal", "name": "clip-bench", "version": "1", "clip": clip}
    if args.workers is not None:
        config["decode_workers"] = args.workers
    if args.pool is not None:
        config["decode_pool"] = args.pool
    if args.jpeg_decode_on_device:
        config["jpeg_decode_on_device"] = True
    if args.jpeg_draft:
        config["jpeg_draft"] = True
    if args.preprocess_on_device:
        config["preprocess_on_device"] = True
    return config


class StandinTower:
    """``--model none``: open_clip's model interface at a fixed cost and no compute. It
    sleeps ``ms_per_image`` per image (a GPU's wall time, not this machine's CPU) and returns
    random unit embeddings of ViT-B-32's width."""

    width = 512

    def __init__(self, ms_per_image: float, device: str):
        import torch

        self.ms_per_image = ms_per_image
        self.device = device
        self.generator = torch.Generator().manual_seed(0)
        self.visual = type("Visual", (), {"image_size": 224, "output_dim": self.width})()

    def _embeddings(self, count: int):
        import torch

        return torch.randn(count, self.width, generator=self.generator)

    def encode_image(self, batch):
        time.sleep(self.ms_per_image * len(batch) / 1000)
        return self._embeddings(len(batch))

    def encode_text(self, tokens):
        return self._embeddings(len(tokens))


def standin_encoder(config: dict, ms_per_image: float):
    """A ``ClipEncoder`` around the stand-in tower, with ViT-B-32's own preprocessing
    (open_clip's transform for 224 px: bicubic resize, centre crop, CLIP normalisation), taking
    uint8 pixels from the workers as a judge whose model is on a GPU does."""
    import open_clip
    import torch

    from scoring.judges.clip import ClipConfig, ClipEncoder

    clip_config = ClipConfig.from_dict(config["clip"])
    preprocess = open_clip.image_transform(224, is_train=False)
    tower = StandinTower(ms_per_image, clip_config.device)
    encoder = ClipEncoder(tower, preprocess, lambda texts: torch.zeros(len(texts), 1), clip_config)
    encoder._pixels_on_device = functools.partial(staged_on_host, encoder)  # not pickled
    return encoder


def staged_on_host(encoder, pixels):
    """The host's share of handing pixels to a GPU: one copy into the staging buffer. The
    normalisation is the device's work, which the stand-in does not model."""
    import numpy as np
    import torch

    staging = encoder._staging_buffer((len(pixels), *pixels[0].shape), torch.device("cpu"))
    np.stack(pixels, out=staging.numpy())
    return staging


def standin_device_work(judge) -> None:
    """``--model none --preprocess-on-device``: the host's share of the device work, as a GPU
    host pays it (the batch stacked into one staging buffer); the device's own share (the
    blank sums, the resize) is not modelled, as the normalisation is not. The blank
    statistics it reports are those of a busy photograph, so nothing reads as blank."""
    import numpy as np
    import torch

    from scoring.judges import hard_refusal
    from scoring.judges.device_images import same_shape_groups

    def staged(arrays, device):
        for indices in same_shape_groups(arrays).values():
            group = [arrays[i] for i in indices]
            staging = judge.clip._staging_buffer((len(group), *group[0].shape), torch.device("cpu"))  # fmt: skip
            np.stack(group, out=staging.numpy())
        return [torch.zeros(3, 1, 1, dtype=torch.uint8)] * len(arrays)

    busy = {"std": 60.0, "dominant_fraction": 0.01, "mean": 120.0, "median_rgb": [120] * 3}
    hard_refusal.pixels_to_device = staged
    hard_refusal.blank_stats_on_device = lambda tensors, tolerance: [busy] * len(tensors)
    # The stand-in tower reads only the batch's length: a token tensor per image.
    judge.clip.prepare_tensors = lambda tensors: [torch.zeros(1)] * len(tensors)


def model_only_images_per_s(clip, n_images: int, batch_size: int, device: str) -> float:
    """The image tower alone on preprocessed batches (what the model costs per image)."""
    import torch

    size = clip.model.visual.image_size
    side = size[0] if isinstance(size, tuple | list) else size
    batch = torch.randn(batch_size, 3, side, side)
    batches = max(1, n_images // batch_size)
    with torch.inference_mode(), clip._autocast():
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
    started = time.perf_counter()
    study = build_study(args.images, args.format)
    write_s = time.perf_counter() - started
    config = judge_config(args, folder)
    configs = {"clip-bench": config}
    judge = services.judge_load(config=services.selectors.judge_config(
        study=study, judge_name="clip-bench", configs=configs), device=args.device)  # fmt: skip
    inner = getattr(judge, "judge", judge)
    if args.model == STANDIN:
        inner._clip = standin_encoder(config, args.standin_ms_per_image)
        # As with a model on a GPU, the decode workers hand over uint8 pixels.
        inner.item_checks().pixels_for_device = True
        if args.preprocess_on_device:
            standin_device_work(inner)
    chunk = {"chunk_size": args.chunk_size} if args.chunk_size else {}
    cores = os.cpu_count() or 1

    def score():
        return services.study_score(study=study, judge_name="clip-bench", device=args.device,
                                    judge_configs=configs, **chunk)  # fmt: skip

    runs = Runs(repeats=args.repeats, warmup=1, budget_s=args.budget_s)
    for sample in runs:
        AutomatedJudgment.objects.filter(item__study=study).delete()
        JudgeResponse.objects.all().delete()
        started, cpu_started = time.perf_counter(), cpu_seconds()
        main_started, thread_started = cpu_seconds(with_children=False), time.thread_time()
        summary = score()
        wall = time.perf_counter() - started
        # CPU time is what a busy shared machine cannot hide: wall time there is mostly waiting.
        cpu_ms_per_image = (cpu_seconds() - cpu_started) / args.images * 1000
        # The serial part: what one GIL runs per image whatever the number of workers.
        sample["calling_thread_cpu_ms_per_image"] = (
            (time.thread_time() - thread_started) / args.images * 1000
        )
        sample["main_process_cpu_ms_per_image"] = (
            (cpu_seconds(with_children=False) - main_started) / args.images * 1000
        )
        if inner.decode_pool_kind == "process":
            # What the decode workers spend: the per-image work that more cores spread.
            sample["workers_cpu_ms_per_image"] = (
                cpu_ms_per_image - sample["main_process_cpu_ms_per_image"]
            )
        if summary.errors or summary.items != args.images:
            raise SystemExit(f"scoring failed: {summary.as_dict()}")
        images_per_s = args.images / wall
        sample["pipeline_images_per_s"] = images_per_s
        sample["process_cpu_ms_per_image"] = cpu_ms_per_image
        sample["parallel_efficiency"] = images_per_s * cpu_ms_per_image / (1000 * cores)
        if args.model != STANDIN:
            model_ips = model_only_images_per_s(inner.clip, args.images, args.batch_size,
                                                args.device)  # fmt: skip
            sample["model_only_images_per_s"] = model_ips
            sample["overhead_ms_per_image"] = (wall - args.images / model_ips) / args.images * 1000
        started = time.perf_counter()
        cached = score()
        sample["cached_rerun_images_per_s"] = args.images / (time.perf_counter() - started)
        assert cached.cached == args.images, cached.as_dict()

    if args.profile:
        AutomatedJudgment.objects.filter(item__study=study).delete()
        JudgeResponse.objects.all().delete()
        # CPU time, not wall time: a loaded machine does not distort it.
        profiler = cProfile.Profile(time.thread_time)
        profiler.runcall(score)
        profiler.dump_stats(args.profile)
        pstats.Stats(profiler, stream=sys.stderr).sort_stats("cumulative").print_stats(25)
        print(f"profile of one scoring call written to {args.profile}", file=sys.stderr)

    if args.model == STANDIN:
        model = (f"none: a stand-in tower ({args.standin_ms_per_image} ms per image asleep, "
                 "random unit embeddings of width 512, ViT-B-32's 224 px preprocessing, "
                 "uint8 pixels handed over as to a GPU"
                 + ("; with --preprocess-on-device the host's share only: the blank sums and "
                    "the resize are the device's work" if args.preprocess_on_device else "")
                 + ")")  # fmt: skip
    else:
        model = args.model or "tiny random-weight open_clip (tests/support/tiny_models.py)"
    emit({
        "benchmark": "score_study",
        "images": args.images,
        "image_size": f"512x512 {args.format.upper()}",
        "jpeg_decode_on_device": args.jpeg_decode_on_device,
        "jpeg_draft": args.jpeg_draft,
        "preprocess_on_device": args.preprocess_on_device,
        "device": args.device,
        "batch_size": args.batch_size,
        "workers": getattr(inner, "decode_workers", None),
        "pool": getattr(inner, "decode_pool_kind", None),
        "model": model,
        "model_stand_in": args.model == STANDIN,
        "write_images_s": round(write_s, 2),
        **runs.summary(),
        **machine(["torch", "open_clip_torch", "pillow", "imagecodecs", "django"]),
    })  # fmt: skip


if __name__ == "__main__":
    main()
