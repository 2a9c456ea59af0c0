"""Large arrays from a decode worker process to the judge's process through shared memory.

A 512×512 image's decoded pixels are 786 kB. Sent back through the process pool's pipe they
cost about 3.0 ms of CPU per image on the 2-core machine, 1.1 ms of it in the receiving
process, and two workers' pipes carried at most ~570 images/s; written to a file in
``/dev/shm`` (memory, not disk) and mapped by the receiver, 0.5 ms, 0.15 ms of it in the
receiver, ~4,000 images/s (``bench/transport_bench.py``, docs/performance.md).

The pool pickles each result, so the switch happens in pickling: ``shareable(array)`` is what
a result puts in its pickled state instead of the array. It pickles as the file's name;
unpickling maps the file, removes the name at once (the pages live as long as the mapping)
and gives back the array, unchanged. Without ``/dev/shm``, below ``MIN_SHARED_BYTES``, when
the array would leave less than half of ``/dev/shm`` free, or when the write fails, the array
is pickled as usual.

Files are private to the user (mode 0600) and named after the receiving and the writing
process, so what a killed worker or a dead receiver left behind can be removed
(``remove_left_over``, run when a pool starts and when one breaks).
"""

from __future__ import annotations

import mmap
import os
import secrets
import time
from pathlib import Path
from typing import Any

import numpy as np

SHARED_DIR = Path("/dev/shm")
# Below this a pipe costs less than a file's creation, mapping and removal.
MIN_SHARED_BYTES = 64 * 1024
# Never take the last half of /dev/shm: other programs need it too (PostgreSQL's parallel
# queries, PyTorch's DataLoader), and a container's default is only 64 MB.
MIN_FREE_FRACTION = 0.5
_PREFIX = "acrb-array"
# A file lives milliseconds between its writer and its receiver. Only older ones are left
# over: a process ID not running here may be one of another container's that shares
# /dev/shm (a Kubernetes pod's memory volume) and is reading its file right now.
LEFT_OVER_AFTER_S = 600


def shareable(array: Any) -> Any:
    """What to pickle in ``array``'s place: a file in shared memory holding it, or the array
    itself where that is not worth it or not possible."""
    if not isinstance(array, np.ndarray) or array.nbytes < MIN_SHARED_BYTES:
        return array
    if array.dtype.hasobject or not _room_for(array.nbytes):
        return array
    path = SHARED_DIR / f"{_PREFIX}-{os.getppid()}-{os.getpid()}-{secrets.token_hex(8)}"
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError:
        return array
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(memoryview(np.ascontiguousarray(array)).cast("B"))
    except OSError:  # /dev/shm full: the pipe, as before
        path.unlink(missing_ok=True)
        return array
    return _SharedFile(str(path), array.shape, array.dtype.str)


def _room_for(size: int) -> bool:
    try:
        usage = os.statvfs(SHARED_DIR)
    except OSError:  # no /dev/shm here
        return False
    free = usage.f_bavail * usage.f_frsize
    return free - size >= MIN_FREE_FRACTION * usage.f_blocks * usage.f_frsize


class _SharedFile:
    """An array's place in a pickle: unpickled as the array, read from its file."""

    __slots__ = ("dtype", "path", "shape")

    def __init__(self, path: str, shape: tuple, dtype: str):
        self.path, self.shape, self.dtype = path, shape, dtype

    def __reduce__(self):
        return (attached, (self.path, self.shape, self.dtype))


def attached(path: str, shape: tuple, dtype: str) -> np.ndarray:
    """The array a worker wrote to ``path``, mapped copy-on-write (writable, no copy made);
    the file's name is gone when this returns."""
    try:
        descriptor = os.open(path, os.O_RDONLY)
    finally:
        Path(path).unlink(missing_ok=True)
    try:
        mapping = mmap.mmap(descriptor, 0, access=mmap.ACCESS_COPY)
    finally:
        os.close(descriptor)
    return np.frombuffer(mapping, dtype=np.dtype(dtype)).reshape(shape)


def remove_left_over() -> int:
    """Remove the files nobody will unpickle: those whose writer (a worker killed after
    writing, its pool broken) or whose receiver is no longer running, once they are older
    than ``LEFT_OVER_AFTER_S``. Their count."""
    removed = 0
    if not SHARED_DIR.is_dir():
        return removed
    oldest_in_flight = time.time() - LEFT_OVER_AFTER_S
    for path in SHARED_DIR.glob(f"{_PREFIX}-*-*-*"):
        pids = path.name.split("-")[2:4]
        if not all(pid.isdigit() for pid in pids) or all(_running(int(pid)) for pid in pids):
            continue
        try:
            if path.stat().st_mtime < oldest_in_flight:
                path.unlink()
                removed += 1
        except OSError:  # another user's file, or gone already
            pass
    return removed


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True
