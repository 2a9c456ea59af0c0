"""bench/gpu_check.py's device-image comparison, run on the CPU: the check a GPU host runs
before its figures must itself work (and say ok) where the device is the CPU."""

import importlib.util
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.ml
BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture(scope="module")
def gpu_check():
    pytest.importorskip("open_clip")
    sys.path.insert(0, str(BENCH))  # gpu_check imports its sibling `harness`
    try:
        spec = importlib.util.spec_from_file_location("bench_gpu_check", BENCH / "gpu_check.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(BENCH))
    return module


@pytest.mark.parametrize("image_format", ["jpeg", "png"])
def test_the_device_image_check_passes_with_the_cpu_as_the_device(gpu_check, tmp_path, image_format):  # fmt: skip
    report = gpu_check.check_device_images(tmp_path, "cpu", image_format)
    assert report["images"] == 24 and report["verdict_mismatches"] == 0
    assert report["blank_stats_equal_host"] is True
    assert 0 < report["max_clip_score_gap"] < 0.02  # the tensor resize is not PIL's, bit for bit
    assert report["ok"] is True
