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


def default_decode_workers(device: str | None) -> int:
    """All cores when the model runs elsewhere (GPU); on CPU, half of them (at least one),
    the other half being the model's intra-op threads (see ``torch_threads_for``)."""
    cores = os.cpu_count() or 1
    if device and not device.startswith("cpu"):
        return cores
    return max(1, cores // 2)


def torch_threads_for(device: str | None, decode_workers: int) -> int:
    """Intra-op threads for torch so the decode pool and the model do not oversubscribe the
    cores: on CPU the cores the pool leaves free; on a GPU one (torch only stacks batches)."""
    cores = os.cpu_count() or 1
    if device and not device.startswith("cpu"):
        return 1
    return max(1, cores - decode_workers)


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
