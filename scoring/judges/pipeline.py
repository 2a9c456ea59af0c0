"""Per-item image work in a thread pool, overlapped with the model, in input order.

PIL releases the GIL while it decodes and resizes, so threads give real parallelism without
a process pool's pickling. ``ordered_map`` keeps at most ``lookahead`` items in flight, so a
large window of items does not hold every decoded image in memory at once, and the caller
(the model loop) consumes results while later items are still being decoded.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

_POOLS: dict[int, ThreadPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()


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


def ordered_map(
    function: Callable[[Item], Result],
    items: Iterable[Item],
    *,
    workers: int,
    lookahead: int,
) -> Iterator[Result]:
    """``map(function, items)`` run on ``workers`` threads, yielded in input order.

    ``workers == 1`` runs in the calling thread (the serial path, and the reference the
    parallel one is tested against). ``function`` must not raise: it records errors itself.
    """
    if workers <= 1:
        yield from map(function, items)
        return
    pool = decode_pool(workers)
    in_flight: deque = deque()
    for item in items:
        in_flight.append(pool.submit(function, item))
        if len(in_flight) >= max(lookahead, workers):
            yield in_flight.popleft().result()
    while in_flight:
        yield in_flight.popleft().result()


def set_torch_threads(threads: int) -> None:
    """torch's intra-op thread count (process-wide), changed only when it differs."""
    import torch

    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
