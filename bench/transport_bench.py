"""Decoded pixels from a process pool to the judge's process: the pipe against shared memory.

Each task of a ``ProcessPoolExecutor`` (forked workers, as the judge's decode pool) returns
``--chunk`` arrays of ``--shape`` uint8 (default a decoded 512×512 RGB image, 786 kB), either
pickled through the pool's pipe or put in shared memory by ``scoring.judges.shared_arrays``
(the judge's transport); the receiver copies each into one batch buffer, as the judge stacks
a batch for the device. No decoding: the figure is the transport's cost alone.

``cpu_ms_per_array`` is the CPU time of this process and its workers per array,
``receiver_cpu_ms_per_array`` this process's share (the part a many-core host runs under one
process's GIL), ``arrays_per_s`` the wall-clock rate with ``--workers`` workers.

    python bench/transport_bench.py [--arrays 2000] [--workers 2] [--shape 512,512,3]

The last line printed is JSON.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
from harness import Runs, alternating, cpu_seconds, emit, machine

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scoring.judges.shared_arrays import shareable  # noqa: E402

_ARRAY: np.ndarray | None = None


def _install(shape: tuple[int, ...]) -> None:
    global _ARRAY
    _ARRAY = np.random.default_rng(0).integers(0, 256, shape, dtype=np.uint8)


def _through_pipe(count: int) -> list:
    return [_ARRAY.copy() for _ in range(count)]


def _through_shared_memory(count: int) -> list:
    return [shareable(_ARRAY) for _ in range(count)]


def measure(pool, task, arrays: int, chunk: int, shape: tuple[int, ...]) -> dict:
    batch = np.empty((chunk, *shape), dtype=np.uint8)
    started, cpu, own = time.perf_counter(), cpu_seconds(), cpu_seconds(with_children=False)
    futures = [pool.submit(task, chunk) for _ in range(arrays // chunk)]
    for future in futures:
        np.stack(future.result(), out=batch)  # what the judge does with a batch
    wall = time.perf_counter() - started
    count = len(futures) * chunk
    return {
        "cpu_ms_per_array": (cpu_seconds() - cpu) / count * 1000,
        "receiver_cpu_ms_per_array": (cpu_seconds(with_children=False) - own) / count * 1000,
        "arrays_per_s": count / wall,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--arrays", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--chunk", type=int, default=8)
    parser.add_argument("--shape", default="512,512,3")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--budget-s", type=float, default=120)
    args = parser.parse_args()
    shape = tuple(int(side) for side in args.shape.split(","))
    context = multiprocessing.get_context("fork")
    pool = ProcessPoolExecutor(args.workers, mp_context=context, initializer=_install,
                               initargs=(shape,))  # fmt: skip
    runs = Runs(repeats=args.repeats, warmup=1, budget_s=args.budget_s)
    for index, sample in enumerate(runs):
        pipe, shared = alternating(
            index,
            lambda: measure(pool, _through_pipe, args.arrays, args.chunk, shape),
            lambda: measure(pool, _through_shared_memory, args.arrays, args.chunk, shape),
        )
        for key, value in pipe.items():
            sample[f"pipe_{key}"] = value
        for key, value in shared.items():
            sample[f"shared_memory_{key}"] = value
    pool.shutdown()
    emit({
        "benchmark": "transport",
        "arrays": args.arrays,
        "array_bytes": int(np.prod(shape)),
        "workers": args.workers,
        "chunk": args.chunk,
        **runs.summary(),
        **machine(["numpy"]),
    })  # fmt: skip


if __name__ == "__main__":
    main()
