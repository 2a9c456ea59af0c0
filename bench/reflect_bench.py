"""REFLECT run throughput: concurrent vs sequential API requests, side by side.

A full 480-image face set (6 occupations × 8 templates × 10 groups, small PNGs) is imported
into a throw-away SQLite database; a loopback OpenAI-compatible server in a child process
answers every request after a fixed simulated latency. The same ``run_reflect`` command then
asks every 2AFC and MCQ question twice: once with ``--concurrency 1`` (sequential) and once
with ``--concurrency 16``, each as its own run, until every answer is stored. Progress goes
to stderr; the last line on stdout is JSON with ``sequential_s``, ``concurrent_s`` and
``speedup``.

Each of ``--repeats`` runs (after ``--warmup``) makes both passes, in alternating order, under
fresh run labels; the speedup is the ratio within the run. With the defaults, latency 40 ms and
the 2AFC task on one scenario (income: 48 × 45 × 2 = 4,320 requests) plus both MCQ questions
(960), 5,280 requests per pass, the sequential pass is bounded below by 5,280 × 40 ms = 211 s,
so a run takes about four minutes; ``--templates-per-occupation 1`` (660 requests per pass)
and ``--budget-s`` keep it short. The
latency is chosen well above the client's own CPU cost per request (about 3 ms on a 2-core
machine: HTTP client, JSON, base64 images, the answer row), which bounds the concurrent pass.
``--scenarios all`` asks all three scenarios (13,920 requests per run; the sequential pass
alone then takes over seven minutes).

    python bench/reflect_bench.py [--latency-ms 40] [--concurrency 16] [--scenarios income] \
        [--repeats 5] [--budget-s 600]
"""

from __future__ import annotations

import argparse
import multiprocessing
import shutil
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

from harness import Runs, alternating, emit, machine, ratio, setup_django

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def serve(latency_s: float, ready, stop) -> None:
    """Child process: the loopback server; answers by task, after ``latency_s``."""
    from tests.support.openai_server import OpenAIServer, Reply, completion, request_image_urls

    def rule(request):
        text = "A" if len(request_image_urls(request)) == 2 else "C"
        return Reply(body=completion(text), delay_s=latency_s)

    server = OpenAIServer(rule)
    server.start()
    ready.put(server.base_url)
    stop.wait()
    server.stop()


def write_faces(root: Path, occupations: list[str], templates: int) -> None:
    from PIL import Image

    from scoring.reflect.protocol import race_slug
    from scoring.stats.reflect.vocabulary import GROUPS

    for o, occupation in enumerate(occupations):
        for t in range(templates):
            folder = root / occupation / f"t{t}"
            folder.mkdir(parents=True)
            for g, (race, gender) in enumerate(GROUPS):
                colour = (g * 25, o * 40, t * 30)
                Image.new("RGB", (64, 64), colour).save(folder / f"{race_slug(race)}_{gender}.png")


def timed_run(base_url: str, concurrency: int, model: str) -> float:
    from django.core.management import call_command

    started = time.perf_counter()
    call_command(
        "run_reflect",
        "--set",
        "bench",
        "--endpoint",
        base_url,
        "--api-model",
        model,
        "--tasks",
        "2afc,mcq",
        "--concurrency",
        str(concurrency),
        verbosity=0,
    )
    return time.perf_counter() - started


def bench_protocol(scenarios: str) -> dict:
    from scoring.reflect.protocol import load_default_protocol

    protocol = load_default_protocol()
    if scenarios != "all":
        wanted = scenarios.split(",")
        protocol["2afc"]["scenarios"] = {
            k: v for k, v in protocol["2afc"]["scenarios"].items() if k in wanted
        }
    return protocol


def run_bench(args, base_url: str, workdir: Path) -> dict:
    from scoring.reflect import services

    protocol = bench_protocol(args.scenarios)
    occupations = protocol["occupations"]
    write_faces(workdir / "faces", occupations, args.templates_per_occupation)
    face_set = services.face_set_import(folder=workdir / "faces", name="bench", protocol=protocol)
    images = len(occupations) * args.templates_per_occupation * 10
    scenarios = sorted(protocol["2afc"]["scenarios"])
    requests = images // 10 * 90 * len(scenarios) + images * len(protocol["mcq"])
    log(f"{images} images, {requests} requests per pass, latency {args.latency_ms} ms")
    runs = Runs(repeats=args.repeats, warmup=args.warmup, budget_s=args.budget_s)
    for index, sample in enumerate(runs):
        labels = (f"bench-{index}-concurrent", f"bench-{index}-sequential")
        concurrent_s, sequential_s = alternating(
            index,
            partial(timed_run, base_url, args.concurrency, labels[0]),
            partial(timed_run, base_url, 1, labels[1]),
        )
        stored = [face_set.runs.get(label=label).answers.count() for label in labels]
        sample["sequential_s"], sample["concurrent_s"] = sequential_s, concurrent_s
        sample["speedup"] = ratio(sequential_s, concurrent_s)
        sample["every_answer_stored"] = stored == [requests, requests]
        log(
            f"run: sequential {sequential_s:.1f} s, concurrency {args.concurrency}: {concurrent_s:.1f} s"
        )
    return {
        "images": images,
        "templates": images // 10,
        "scenarios": scenarios,
        "requests_per_pass": requests,
        "latency_ms": args.latency_ms,
        "concurrency": args.concurrency,
        "ideal_speedup": args.concurrency,
        **runs.summary(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency-ms", type=float, default=40.0)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--templates-per-occupation", type=int, default=8)
    parser.add_argument("--scenarios", default="income", help="comma-separated, or 'all'")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=0, help="passes are long; none by default")
    parser.add_argument("--budget-s", type=float, default=None, help="stop after ≥ 3 runs past it")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="reflect-bench-"))
    context = multiprocessing.get_context("spawn")
    ready, stop = context.Queue(), context.Event()
    server = context.Process(target=serve, args=(args.latency_ms / 1000, ready, stop), daemon=True)
    server.start()
    try:
        setup_django(
            var_dir=str(workdir / "var"), database_url=f"sqlite:///{workdir / 'bench.sqlite3'}"
        )
        result = run_bench(args, ready.get(timeout=60), workdir)
        emit(
            {
                "benchmark": "reflect_bench",
                "timed_path": "manage.py run_reflect (call_command), --concurrency 1 vs N",
                **result,
                **machine(["django", "requests", "numpy"]),
            }
        )
    finally:
        stop.set()
        server.join(timeout=10)
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
