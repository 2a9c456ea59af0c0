"""bench/gpu_check.py's device-image comparison, run on the CPU: the check a GPU host runs
before its figures must itself work (and say ok) where the device is the CPU."""

import pytest

from tests.support.bench_scripts import load_bench_script

pytestmark = pytest.mark.ml


@pytest.fixture(scope="module")
def gpu_check():
    pytest.importorskip("open_clip")
    return load_bench_script("gpu_check")


@pytest.mark.parametrize("image_format", ["jpeg", "png"])
def test_the_device_image_check_passes_with_the_cpu_as_the_device(gpu_check, tmp_path, image_format):  # fmt: skip
    report = gpu_check.check_device_images(tmp_path, "cpu", image_format)
    assert report["images"] == 24 and report["verdict_mismatches"] == 0
    assert report["blank_stats_equal_host"] is True
    assert 0 < report["max_clip_score_gap"] < 0.02  # the tensor resize is not PIL's, bit for bit
    assert report["ok"] is True
