"""The OpenAI-compatible VLM client against a loopback server of fixed latency.

A latency-bound judge (vLLM/SGLang over HTTP) should keep ``concurrency`` requests in flight
all the time: the ceiling is ``concurrency / latency`` requests/s and ``efficiency`` is the
share of it reached. Each request carries one small PNG as a data URL, asks for a constrained
choice and logprobs, as the cue judge does.

    python bench/vlm_client_bench.py [--concurrency 32] [--latency-ms 200] [--requests 640]

The last line printed is JSON.
"""

from __future__ import annotations

import argparse
import io
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--requests", type=int, default=640)
    parser.add_argument("--repeats", type=int, default=3)
    return parser.parse_args()


def small_png() -> bytes:
    import numpy as np
    from PIL import Image

    buffer = io.BytesIO()
    pixels = np.random.default_rng(0).integers(0, 256, (64, 64, 3), dtype=np.uint8)
    Image.fromarray(pixels).save(buffer, format="PNG")
    return buffer.getvalue()


def main() -> None:
    args = parse_args()
    from harness import Runs, emit, machine

    from scoring.judges.backends.base import VLMRequest
    from scoring.judges.backends.openai_compat import OpenAICompatBackend, OpenAICompatConfig
    from scoring.judges.records import CUE_LABELS
    from tests.support.openai_server import OpenAIServer, Reply, completion

    latency_s = args.latency_ms / 1000
    answer = completion("retained", top_logprobs={"retained": 0.8, "erased": 0.2})

    def rule(_body):
        return Reply(body=answer, delay_s=latency_s)

    image = small_png()
    requests = [
        VLMRequest(images=(image,), text=f"question {i}", options=CUE_LABELS, request_id=str(i))
        for i in range(args.requests)
    ]
    ceiling = args.concurrency / latency_s
    with OpenAIServer(rule) as server:
        backend = OpenAICompatBackend(
            OpenAICompatConfig(
                endpoint=server.base_url,
                model="loopback",
                concurrency=args.concurrency,
                timeout_s=30,
            )
        )
        runs = Runs(repeats=args.repeats, warmup=1, budget_s=120)
        for sample in runs:
            started = time.perf_counter()
            responses = backend.generate(requests)
            wall = time.perf_counter() - started
            errors = [r.error for r in responses if r.error]
            if errors:
                raise SystemExit(f"{len(errors)} requests failed, first: {errors[0]}")
            sample["requests_per_s"] = args.requests / wall
            sample["efficiency"] = args.requests / wall / ceiling
            sample["mean_request_latency_ms"] = (
                sum(r.latency_s for r in responses) / len(responses) * 1000
            )
    emit(
        {
            "benchmark": "vlm_client",
            "concurrency": args.concurrency,
            "latency_ms": args.latency_ms,
            "requests": args.requests,
            "ceiling_requests_per_s": ceiling,
            "target_requests_per_s": 0.8 * ceiling,
            **runs.summary(),
            **machine(["requests"]),
        }
    )


if __name__ == "__main__":
    main()
