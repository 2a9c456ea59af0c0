"""bench/gpu_figures.sh, the GPU host's commands, is ready before a lease: every step's
command line parses with its script's own parser and, for the scoring steps, makes a judge
config the judges' registry accepts. The script runs for real, with a stand-in ``PYTHON`` that only
records each command line, so a renamed flag or a wrong config fails here, not in the lease."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.bench_scripts import BENCH, load_bench_script

pytestmark = pytest.mark.ml  # the bench scripts import torch

RECORDER = """#!{python}
import json, sys
print(json.dumps(sys.argv[1:]))
"""


@pytest.fixture(scope="module")
def recorded_steps(tmp_path_factory) -> dict[str, list[str]]:
    """Each step of ``gpu_figures.sh all``: its name and its command line after PYTHON."""
    folder = tmp_path_factory.mktemp("gpu_figures")
    recorder = folder / "python"
    recorder.write_text(RECORDER.format(python=sys.executable))
    recorder.chmod(0o755)
    logs = folder / "logs"
    env = os.environ | {"PYTHON": str(recorder), "LOGS": str(logs), "STEP_S": "30"}
    run = subprocess.run(
        ["bash", str(BENCH / "gpu_figures.sh"), "all"],
        cwd=BENCH.parent, env=env, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert run.stdout.count("exit 0 ·") == run.stdout.count("=== "), run.stdout
    return {log.stem: json.loads(log.read_text()) for log in sorted(logs.glob("*.log"))}


def test_every_row_of_the_gpu_table_has_its_step(recorded_steps):
    assert set(recorded_steps) == {
        "gpu_check", "judge",
        "png", "png_device", "png_device_thread",
        "jpeg_device", "jpeg_host", "jpeg_host_device", "jpeg_host_device_draft", "jpeg_draft",
        "scaling_process", "scaling_thread", "scaling_device_process", "scaling_device_thread",
    }  # fmt: skip


def test_every_step_parses_and_its_judge_config_is_accepted(recorded_steps, tmp_path):
    from scoring.judges.registry import load_judge

    parsers = {
        "gpu_check.py": load_bench_script("gpu_check").parse_args,
        "judge_bench.py": load_bench_script("judge_bench").parse_args,
    }
    score_bench = load_bench_script("score_bench")
    for name, command in recorded_steps.items():
        script, *argv = command
        assert Path(script).parent.name == "bench", name
        if Path(script).name != "score_bench.py":
            parsers[Path(script).name](argv)
            continue
        args = score_bench.parse_args(argv)
        # The registry's own parsing; the CLIP model is loaded only when first used.
        parsed = load_judge(score_bench.judge_config(args, str(tmp_path))).config
        if args.model == score_bench.STANDIN:
            assert args.workers == 16, name  # the 16-core host's scaling figures
        else:
            # The judge as a CUDA config runs it: on the GPU, in bf16, batches of 256.
            assert (parsed.clip.device, parsed.clip.precision) == ("cuda", "bf16"), name
            assert parsed.clip.batch_size == 256, name
        assert parsed.preprocess_on_device == ("device" in name and "jpeg_device" != name), name
        assert parsed.jpeg_decode_on_device == (name == "jpeg_device"), name
        assert parsed.jpeg_draft == name.endswith("draft"), name
