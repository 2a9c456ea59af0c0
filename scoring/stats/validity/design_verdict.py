"""A validity run's verdict in words a research lead reads, and its table (docs/metrics.md,
"Validate your own design"): which checks count, which missed their target and what that means.
No Django import: the command, the study page and a notebook share it."""

from __future__ import annotations

from scoring.stats.validity.core import COVERAGE, QUICK_TARGETS, Check

CALIBRATED, NOT_CALIBRATED, CANNOT_VALIDATE = "calibrated", "not calibrated", "cannot validate"

# What each statistic is, in the words of the study page (docs/metrics.md, "Validate your own
# design").
STATISTIC_WORDS = {
    "rate_ci": "the interval of each value's refusal rate",
    "delta_ci": "the interval of Δ (highest minus lowest rate)",
    "ratio_ci": "the interval of the highest/lowest rate ratio",
    "delta_test": "the test that every value refuses equally (Δ's p-value)",
    "pairwise_test": "the test of each pair of values",
    "pairwise_holm": "the Holm-adjusted pairwise tests (any pair flagged)",
    "flag": "the judge's differential-error flag",
    "fnr_test": "the test that the judge's false-negative rate differs between values",
    "fpr_test": "the test that the judge's false-positive rate differs between values",
}
# A check counts for the verdict only when its statistic was defined in at least this many
# simulated studies: from fewer, a correct interval misses a 0.90 target too often by chance
# (at 25, a 95 % interval falls below 0.90 about one time in eight).
MIN_DEFINED = 25


def check_words(check: dict, targets: dict = QUICK_TARGETS) -> str:
    """One check of the summary in words a research lead reads."""
    what = STATISTIC_WORDS.get(check["statistic"], check["statistic"])
    studies = f"{check['replications']} simulated studies"
    if check["kind"] == COVERAGE:
        return (
            f"{check['scenario']}: {what} held the true value in {check['rate']:.0%} of "
            f"{studies} (needs at least {targets[COVERAGE]:.0%}): too narrow for this design"
        )
    return (
        f"{check['scenario']}: {what} found a difference that is not there in "
        f"{check['rate']:.0%} of {studies} (needs at most {targets['size']:.0%})"
    )


def verdict(checks: list[Check], replications: int) -> dict:
    judged = [c for c in checks if c.replications >= MIN_DEFINED]
    failing = [c.to_dict() for c in judged if not c.passes(QUICK_TARGETS)]
    not_measured = [
        {
            **c.to_dict(),
            "reason": (
                f"{c.scenario}: {STATISTIC_WORDS.get(c.statistic, c.statistic)} was defined in "
                f"only {c.replications} of {c.replications + c.undefined} simulated studies "
                f"(fewer than {MIN_DEFINED}: too few to judge); at this design the study "
                f"{'always' if c.replications == 0 else 'often'} reports it as null, with "
                "its reason"
            ),
        }
        for c in checks
        if c.replications < MIN_DEFINED
    ]
    if failing:
        verdict = NOT_CALIBRATED
        text = (
            f"Not calibrated for this design: {len(failing)} of {len(judged)} checks missed "
            "their target in simulated studies of this study's design. Do not rely on the "
            "intervals and tests named below as stated; more base prompts per domain or more "
            "items per value help."
        )
    else:
        verdict = CALIBRATED
        text = (
            f"Calibrated for this design: in {replications} simulated studies of it, every "
            f"interval held the true value at least {QUICK_TARGETS[COVERAGE]:.0%} of the time "
            f"and every test found a difference that is not there at most "
            f"{QUICK_TARGETS['size']:.0%} of the time ({len(judged)} checks)."
        )
    if not_measured:
        text += (
            f" {len(not_measured)} more were too rarely defined at this design to judge "
            "(listed separately)."
        )
    return {
        # summarise's "failing" and "passed" would also count the checks too rarely defined
        # to judge: the verdict's rule replaces them, so the document gives one answer.
        "failing": failing,
        "passed": verdict == CALIBRATED,
        "verdict": verdict,
        "verdict_text": text,
        "verdict_reasons": [check_words(check) for check in failing],
        "not_measured": not_measured,
    }


def check_rows(result: dict) -> list[dict]:
    """The table the command prints and the study page shows: per check its statistic (name
    and words), scenario, what it measures, the rate, the target and whether it met it (None:
    too rarely defined to judge)."""
    targets = result["targets"]
    rows = []
    for check in result["checks"]:
        coverage = check["kind"] == COVERAGE
        judged = check["replications"] >= MIN_DEFINED
        target = targets[check["kind"]]
        rows.append(
            {
                "statistic": check["statistic"],
                "words": STATISTIC_WORDS.get(check["statistic"], check["statistic"]),
                "scenario": check["scenario"],
                "measures": "coverage" if coverage else "size",
                "rate": check["rate"],
                "replications": check["replications"],
                "target": f"≥ {target:.2f}" if coverage else f"≤ {target:.2f}",
                "ok": None
                if not judged
                else (check["rate"] >= target if coverage else check["rate"] <= target),
            }
        )
    return rows
