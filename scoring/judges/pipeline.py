"""Per-item image work in a pool of threads or processes, overlapped with the model, in
input order.

PIL and libpng release the GIL while they decode and resize, but the Python around them
(opening the file, building the checks' evidence) does not: on a few cores threads keep up,
on many the GIL-held part caps them (at 5% of each item's time, 16 threads give at most
~9× one). A process pool has no such cap; it costs one pickle of each result (its pixel
arrays travel through shared memory: ``shared_arrays.py``) and a worker start per process,
once. ``ordered_map`` keeps at most ``lookahead`` items in flight, so a large window of items
does not hold every decoded image in memory at once, and the caller (the model loop)
consumes results while later items are still being decoded.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import pickle
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from itertools import islice
from typing import Any, TypeVar

from scoring.judges.shared_arrays import remove_left_over

Item = TypeVar("Item")
Result = TypeVar("Result")

POOL_KINDS = ("thread", "process")
_POOLS: dict[int, ThreadPoolExecutor] = {}
_PROCESS_POOLS: dict[tuple[int, str], ProcessPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()
# Process pools kept per (size, work); the oldest is shut down past this many.
_MAX_PROCESS_POOLS = 4


def default_decode_workers(device: str | None = None) -> int:
    """One thread per core: decoding is the bottleneck on CPU as well as beside a GPU (a
    512×512 PNG takes ~8 ms to inflate, a ViT-B-32 forward pass well under 1 ms on a GPU)."""
    return os.cpu_count() or 1


def torch_threads_for(decode_workers: int) -> int:
    """Intra-op threads for torch: the cores the decode pool leaves free, at least one, so
    the pool and the model do not oversubscribe the cores (torch's idle workers
    spinning on small tensors cost 4–16× the wall time in CPU)."""
    return max(1, (os.cpu_count() or 1) - decode_workers)


def decode_pool(workers: int) -> ThreadPoolExecutor:
    """One long-lived pool per size, shared by every judge in the process."""
    with _POOLS_LOCK:
        pool = _POOLS.get(workers)
        if pool is None:
            pool = _POOLS[workers] = ThreadPoolExecutor(workers, thread_name_prefix="decode")
        return pool


def process_pool(workers: int, function: Callable[[Any], Any]) -> ProcessPoolExecutor:
    """A long-lived pool of ``workers`` processes, each holding its own copy of ``function``.

    Workers are forked, as PyTorch's DataLoader forks its workers by default: a fork starts
    in milliseconds and re-imports nothing (spawn and forkserver run the parent's main
    script again in every worker, which a script without a main guard cannot survive). The
    workers only decode and resize with Pillow and numpy; they never touch torch's thread
    pool or a CUDA context the parent may hold. Where fork does not exist, spawn."""
    blob = pickle.dumps(function)
    key = (workers, hashlib.sha256(blob).hexdigest())
    with _POOLS_LOCK:
        pool = _PROCESS_POOLS.get(key)
        if pool is None:
            while len(_PROCESS_POOLS) >= _MAX_PROCESS_POOLS:
                _PROCESS_POOLS.pop(next(iter(_PROCESS_POOLS))).shutdown(wait=False)
            remove_left_over()  # what a killed worker or a dead receiver left in /dev/shm
            methods = multiprocessing.get_all_start_methods()
            context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
            pool = _PROCESS_POOLS[key] = ProcessPoolExecutor(
                workers, mp_context=context, initializer=_install, initargs=(blob,)
            )
        return pool


_INSTALLED: Callable[[Any], Any] | None = None


def _install(blob: bytes) -> None:
    global _INSTALLED
    _INSTALLED = pickle.loads(blob)


def _run_installed(chunk: list) -> list:
    return [_INSTALLED(item) for item in chunk]


def ordered_map(
    function: Callable[[Item], Result],
    items: Iterable[Item],
    *,
    workers: int,
    lookahead: int,
    pool_kind: str = "thread",
) -> Iterator[Result]:
    """``map(function, items)`` run on ``workers`` threads or processes, yielded in input
    order.

    ``workers == 1`` runs in the calling thread (the serial path, and the reference the
    parallel ones are tested against). ``function`` must not raise: it records errors itself.
    With processes it must pickle; items go in chunks of a few, so a worker's round trip is
    paid per chunk, not per item.
    """
    if pool_kind not in POOL_KINDS:
        raise ValueError(f"pool kind must be one of {POOL_KINDS}, got {pool_kind!r}")
    if workers <= 1:
        yield from map(function, items)
        return
    window = max(lookahead, workers)
    if pool_kind == "thread":
        yield from _in_order(decode_pool(workers), function, iter(items), window, chunk=None)
        return
    chunk = max(1, min(8, window // (2 * workers)))
    pool = process_pool(workers, function)
    try:
        chunks = _in_order(pool, _run_installed, iter(items), max(1, window // chunk), chunk=chunk)
        for results in chunks:
            yield from results
    except BrokenProcessPool:  # a worker died (killed, out of memory): the next call starts anew
        with _POOLS_LOCK:
            for key, cached in list(_PROCESS_POOLS.items()):
                if cached is pool:
                    del _PROCESS_POOLS[key]
        remove_left_over()
        raise


def _in_order(
    pool: Executor, function: Callable, items: Iterator, window: int, *, chunk: int | None
) -> Iterator:
    """Submit ``function`` over ``items`` (one at a time when ``chunk`` is None, else lists
    of up to ``chunk``, even of one), at most ``window`` submissions in flight, results in
    order."""
    in_flight: deque = deque()
    while True:
        work = next(items, _END) if chunk is None else (list(islice(items, chunk)) or _END)
        if work is _END:
            break
        in_flight.append(pool.submit(function, work))
        if len(in_flight) >= window:
            yield in_flight.popleft().result()
    while in_flight:
        yield in_flight.popleft().result()


_END = object()


def set_torch_threads(threads: int) -> None:
    """torch's intra-op thread count (process-wide), changed only when it differs."""
    import torch

    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
