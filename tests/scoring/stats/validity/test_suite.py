"""The suite's runner and summary: what the JSON line and the calibration table say."""

import json
import subprocess
import sys
from pathlib import Path

from scoring.stats.validity.core import COVERAGE, SIZE, Check
from scoring.stats.validity.suite import all_scenarios, calibration_table, summarise

ROOT = Path(__file__).resolve().parents[4]


def _checks():
    return [
        Check("a", "rate_ci", COVERAGE, hits=190, replications=200),
        Check("b", "delta_ci", COVERAGE, hits=170, replications=200),
        Check("b", "delta_test", SIZE, hits=30, replications=200),
        Check("c", "ratio_ci", COVERAGE, hits=200, replications=200, conservative_by_design=True),
    ]


def test_summary_names_the_worst_coverage_and_size_with_their_scenarios():
    summary = summarise(_checks(), quick=True, replications=200, seconds=1.0)
    assert summary["min_coverage"]["scenario"] == "b"
    assert summary["min_coverage"]["rate"] == 0.85
    assert summary["max_type_i"] == {
        "rate": 0.15,
        "mc_se": summary["max_type_i"]["mc_se"],
        "scenario": "b",
        "statistic": "delta_test",
    }
    assert not summary["passed"]
    assert {row["statistic"] for row in summary["failing"]} == {"delta_ci", "delta_test"}


def test_a_check_with_no_defined_replication_fails():
    assert not Check("x", "rate_ci", COVERAGE, hits=0, replications=0, undefined=200).passes()


def test_calibration_table_has_one_row_per_check():
    table = calibration_table(summarise(_checks(), quick=False, replications=200, seconds=1.0))
    rows = table.splitlines()[2:]
    assert len(rows) == 4
    assert "conservative by design" in rows[-1]


def test_every_scenario_name_is_unique_across_modules():
    names = list(all_scenarios())
    assert len(names) == len(set(names)) > 10


def test_bench_prints_one_json_line_last(tmp_path):
    table = tmp_path / "calibration.md"
    result = subprocess.run(
        [
            sys.executable,
            "bench/validity_suite.py",
            "--quick",
            "--only",
            "human n=200 k=2 Δ=0.15",
            "--replications",
            "20",
            "--markdown",
            str(table),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["benchmark"] == "validity_suite" and report["replications"] == 20
    assert report["n_scenarios"] == 1 and report["min_coverage"] is not None
    assert result.returncode == (0 if report["passed"] else 1)
    assert table.read_text().startswith("| scenario |")
