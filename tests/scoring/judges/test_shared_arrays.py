"""Pixel arrays from decode worker processes through shared memory: unchanged, nothing left
behind, and the pipe as before wherever shared memory is missing, full or not worth it."""

from __future__ import annotations

import errno
import os
import pickle
import stat
import subprocess
import sys
import time

import numpy as np
import pytest

from scoring.judges import shared_arrays
from scoring.judges.item_checks import PendingItem
from scoring.judges.records import ItemInput
from scoring.judges.shared_arrays import MIN_SHARED_BYTES, remove_left_over, shareable


@pytest.fixture
def shared_dir(tmp_path, monkeypatch):
    """A folder standing in for /dev/shm, reported as a roomy tmpfs (1 GB, all free): the
    machine's own disk may be more than half full."""
    folder = tmp_path / "shm"
    folder.mkdir()
    monkeypatch.setattr(shared_arrays, "SHARED_DIR", folder)
    monkeypatch.setattr(shared_arrays.os, "statvfs", lambda path: _usage(2**30, 2**30))
    return folder


def _usage(free_bytes: int, total_bytes: int, block: int = 4096) -> os.statvfs_result:
    blocks, free = total_bytes // block, free_bytes // block
    return os.statvfs_result((block, block, blocks, free, free, 0, 0, 0, 0, 255))


def _pixels(shape=(512, 512, 3), dtype=np.uint8):
    rng = np.random.default_rng(0)
    return rng.integers(0, 256, shape).astype(dtype)


@pytest.mark.parametrize(
    "array",
    [_pixels(), _pixels((3, 224, 224), np.float32), _pixels().transpose(1, 0, 2)],
    ids=["uint8 pixels", "float32 CLIP input", "a non-contiguous view"],
)
def test_a_large_array_crosses_as_a_file_name_and_arrives_unchanged(shared_dir, array):
    blob = pickle.dumps(shareable(array))
    assert len(blob) < 1000  # the name, not the pixels
    [written] = list(shared_dir.iterdir())
    assert stat.S_IMODE(written.stat().st_mode) == 0o600
    received = pickle.loads(blob)
    assert not written.exists()  # removed as soon as it is mapped
    assert received.dtype == array.dtype and np.array_equal(received, array)
    received[0] = 0  # writable, and private to the receiver
    assert np.array_equal(pickle.loads(pickle.dumps(shareable(array))), array)


def test_a_pending_item_pickles_its_pixels_through_shared_memory(shared_dir):
    item = PendingItem(ItemInput(item_id="a", image_path="a.png"), [], decoded=_pixels())
    item.pixels = _pixels((224, 224, 3))
    blob = pickle.dumps(item)
    assert len(blob) < 2000 and len(list(shared_dir.iterdir())) == 2
    received = pickle.loads(blob)
    assert np.array_equal(received.decoded, item.decoded)
    assert np.array_equal(received.pixels, item.pixels)
    assert received.item == item.item and list(shared_dir.iterdir()) == []
    assert item.decoded is not None  # the sender's object is untouched


def test_small_arrays_and_anything_else_go_through_the_pipe(shared_dir):
    small = np.zeros(MIN_SHARED_BYTES // 2, dtype=np.uint8)
    assert shareable(small) is small
    assert shareable(None) is None
    objects = np.array([object()] * MIN_SHARED_BYTES)
    assert shareable(objects) is objects
    assert list(shared_dir.iterdir()) == []


def test_without_shared_memory_the_array_is_pickled_as_before(tmp_path, monkeypatch):
    monkeypatch.setattr(shared_arrays, "SHARED_DIR", tmp_path / "missing")
    array = _pixels()
    assert shareable(array) is array


def test_a_full_shared_memory_falls_back_to_the_pipe_and_leaves_nothing(shared_dir, monkeypatch):
    class Full:
        def __init__(self, descriptor, mode):
            self.descriptor = descriptor

        def __enter__(self):
            return self

        def __exit__(self, *exc_info):
            os.close(self.descriptor)

        def write(self, data):
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(shared_arrays.os, "fdopen", Full)
    array = _pixels()
    assert shareable(array) is array
    assert list(shared_dir.iterdir()) == []


def test_the_last_half_of_shared_memory_is_left_to_other_programs(shared_dir, monkeypatch):
    array = _pixels()
    total = 64 * 2**20  # a container's default /dev/shm
    monkeypatch.setattr(shared_arrays.os, "statvfs", lambda path: _usage(total // 2, total))
    assert shareable(array) is array  # would dip below half free: the pipe
    monkeypatch.setattr(shared_arrays.os, "statvfs", lambda path: _usage(total // 2 + array.nbytes, total))  # fmt: skip
    assert shareable(array) is not array
    assert list(shared_dir.iterdir()) != []


def test_left_over_files_of_dead_processes_are_removed_and_live_ones_kept(shared_dir):
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True)  # fmt: skip
    dead, alive = int(finished.stdout), os.getpid()
    names = {
        "dead receiver": f"acrb-array-{dead}-{alive}-aa",
        "dead writer": f"acrb-array-{alive}-{dead}-bb",
        "both alive": f"acrb-array-{alive}-{alive}-cc",
        "not ours": f"other-{dead}-{dead}-dd",
    }
    for name in names.values():
        (shared_dir / name).write_bytes(b"x")
    recent = shared_dir / f"acrb-array-{dead}-{dead}-ee"  # maybe another container's, in flight
    recent.write_bytes(b"x")
    old = time.time() - shared_arrays.LEFT_OVER_AFTER_S - 1
    for name in names.values():
        os.utime(shared_dir / name, (old, old))
    assert remove_left_over() == 2
    assert sorted(p.name for p in shared_dir.iterdir()) == sorted(
        [names["both alive"], names["not ours"], recent.name]
    )


@pytest.mark.skipif(not shared_arrays.SHARED_DIR.is_dir(), reason="no /dev/shm here")
def test_a_process_pool_round_trip_through_dev_shm_leaves_nothing():
    from scoring.judges.pipeline import ordered_map

    def mine():
        return sorted(shared_arrays.SHARED_DIR.glob(f"acrb-array-{os.getpid()}-*"))

    before = mine()
    results = list(ordered_map(_decoded_item, range(12), workers=2, lookahead=8, pool_kind="process"))  # fmt: skip
    assert [int(r.decoded[0, 0, 0]) for r in results] == list(range(12))
    assert all(r.decoded.shape == (256, 256, 3) for r in results)
    assert mine() == before


def _decoded_item(index: int) -> PendingItem:
    decoded = np.full((256, 256, 3), index, dtype=np.uint8)
    return PendingItem(ItemInput(item_id=str(index), image_path=None), [], decoded=decoded)
