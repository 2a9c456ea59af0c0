"""bench/harness.py: runs, ranges, paired ratios and the machine record (no timing asserted)."""

import importlib.util
import json
from pathlib import Path

import pytest

_SPEC = importlib.util.spec_from_file_location(
    "bench_harness", Path(__file__).resolve().parents[2] / "bench" / "harness.py"
)
harness = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(harness)


def test_warmup_runs_are_dropped_and_repeats_are_kept():
    runs = harness.Runs(repeats=5, warmup=2)
    for index, sample in enumerate(runs):
        sample["value"] = index  # warm-up runs see indices 0 and 1
    assert runs.summary()["runs"] == 5
    assert runs.summary()["value"] == {"median": 4, "min": 2, "max": 6}


def test_budget_stops_after_the_minimum_number_of_runs(monkeypatch):
    clock = iter(range(0, 1000, 10))  # every perf_counter call is 10 s later
    monkeypatch.setattr(harness.time, "perf_counter", lambda: next(clock))
    runs = harness.Runs(repeats=20, warmup=0, budget_s=1)
    for sample in runs:
        sample["x"] = 1.0
    assert runs.summary()["runs"] == harness.MIN_RUNS


def test_summary_reports_median_min_max_bools_and_skips_none():
    runs = harness.Runs(repeats=3, warmup=0)
    values = iter([(3.0, True, None), (1.0, True, 2.0), (2.0, False, 4.0)])
    for sample in runs:
        sample["rate"], sample["identical"], sample["speedup"] = next(values)
    summary = runs.summary()
    assert summary["rate"] == {"median": 2.0, "min": 1.0, "max": 3.0}
    assert summary["identical"] is False
    assert summary["speedup"] == {"median": 3.0, "min": 2.0, "max": 4.0}
    assert "load_average_before" in summary


def test_nothing_measured_is_null_not_zero():
    assert harness.spread([]) == {"median": None, "min": None, "max": None}


def test_ratio_is_none_without_a_positive_denominator():
    assert harness.ratio(6.0, 3.0) == 2.0
    assert harness.ratio(1.0, 0.0) is None


def test_alternating_rotates_the_order_but_returns_results_in_step_order():
    calls = []

    def step(name):
        return lambda: calls.append(name) or name

    assert harness.alternating(0, step("a"), step("b")) == ["a", "b"]
    assert harness.alternating(1, step("a"), step("b")) == ["a", "b"]
    assert calls == ["a", "b", "b", "a"]
    assert harness.alternating(3) == []


def test_invalid_run_counts_are_refused():
    with pytest.raises(ValueError, match="repeats"):
        harness.Runs(repeats=0)


def test_machine_and_emit_give_one_json_line(capsys):
    report = harness.emit({"benchmark": "t", **harness.machine(["numpy", "no-such-package"])})
    line = capsys.readouterr().out.strip().splitlines()[-1]
    parsed = json.loads(line)
    assert parsed == json.loads(json.dumps(report, default=str))
    assert parsed["cores"] >= 1 and parsed["cpu_model"]
    assert parsed["versions"]["numpy"] and parsed["versions"]["no-such-package"] is None
    assert parsed["command"].startswith("python ")
