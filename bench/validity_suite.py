"""The validity suite: every interval's coverage and every test's size under simulated studies
of the designs people run (docs/metrics.md, "Calibration"; scoring/stats/validity/).

Run: python bench/validity_suite.py [--quick] [--only TEXT] [--seed N] [--markdown FILE]
  --quick      200 replications per scenario (CI's mode); default 1000
  --only TEXT  the scenarios whose name starts with TEXT (human, judge, ppi, …)
  --replications N  replications per scenario (overrides the mode's)
  --markdown   also write the calibration table (docs/metrics.md's) to FILE

Progress goes to stderr; the last line is one JSON object: min_coverage, max_type_i (with the
scenario of each), every check with its Monte Carlo standard error, and passed. Exit status 1
when a check misses its target.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness import emit, machine

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scoring.stats.validity.suite import calibration_table, run_suite  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200 replications per scenario")
    parser.add_argument("--only", help="run the scenarios whose name starts with this text")
    parser.add_argument("--seed", type=int, default=20261128)
    parser.add_argument(
        "--replications", type=int, help="replications per scenario (overrides the mode's)"
    )
    parser.add_argument("--markdown", type=Path, help="write the calibration table here")
    args = parser.parse_args(argv)

    def progress(name: str, seconds: float) -> None:
        print(f"{name}: {seconds:.1f} s", file=sys.stderr, flush=True)

    summary = run_suite(
        quick=args.quick,
        seed=args.seed,
        only=args.only,
        replications=args.replications,
        progress=progress,
    )
    if args.markdown:
        args.markdown.write_text(calibration_table(summary) + "\n", encoding="utf-8")
    emit({"benchmark": "validity_suite", **summary, **machine(["numpy", "scipy", "pandas"])})
    return 0 if summary["passed"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
