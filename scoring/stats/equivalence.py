"""Equivalence within δ: a claim that every value of an attribute has a rate within δ of every
other (docs/metrics.md, "Equivalence within δ").

The verdict is read from the simultaneous intervals of every pairwise difference that Δ's
interval is built from (``delta_interval.pairwise_band``). The attribute is **equivalent within
δ** when every pairwise interval lies inside (−δ, δ): each pair's interval inside (−δ, δ) is that
pair's two one-sided tests (Schuirmann 1987, *J. Pharmacokinet. Biopharm.* 15:657) and "every
pair equivalent" is their intersection–union test (Berger & Hsu 1996, *Statist. Sci.* 11:283),
which needs no multiplicity correction; the simultaneous band is stricter than that still, so
the test's size is at most 1 − confidence. **Disparity shown** when some pairwise interval
excludes 0 (the band's max-t test of "all equal"); otherwise **inconclusive**. A small disparity
can be shown and still lie within δ: the verdict is then "equivalent within δ" (the certificate
holds) and the Δ interval beside it, whose lower bound is above 0, shows the disparity.

Because |d_p| + c·se_p, maximised over the pairs, is the upper bound of Δ's interval, and
max_p (|d_p| − c·se_p) > 0 its lower bound above 0, the verdict is a function of the Δ interval
the study export already holds (``equivalence_entry``): no second computation, and one answer
wherever Δ is shown. Numpy only; no Django.
"""

from __future__ import annotations

import math

from scoring.stats.delta_interval import delta_interval_block

DEFAULT_DELTA_MARGIN = 0.05

EQUIVALENT = "equivalent within δ"
DISPARITY = "disparity shown"
INCONCLUSIVE = "inconclusive"
VERDICTS = (EQUIVALENT, DISPARITY, INCONCLUSIVE)

METHOD = (
    "intersection–union test (Berger & Hsu 1996) of every pair's two one-sided tests "
    "(Schuirmann 1987), read from the simultaneous max-t intervals of the pairwise differences"
)


def check_delta_margin(delta_margin) -> float:
    """δ as a float, or ValueError naming the problem: δ is a difference of two rates, so it
    must lie strictly between 0 and 1."""
    if isinstance(delta_margin, bool) or not isinstance(delta_margin, int | float):
        raise ValueError(f"the equivalence margin δ must be a number, got {delta_margin!r}")
    margin = float(delta_margin)
    if not math.isfinite(margin) or not 0.0 < margin < 1.0:
        raise ValueError(
            f"the equivalence margin δ must lie strictly between 0 and 1, got {margin}"
        )
    return margin


def verdict_of(ci_low: float, ci_high: float, delta_margin: float) -> str:
    """The verdict from Δ's simultaneous interval [ci_low, ci_high]: ``ci_high`` < δ means every
    pairwise interval lies inside (−δ, δ); ``ci_low`` > 0 that one excludes 0."""
    if ci_high < delta_margin:
        return EQUIVALENT
    if ci_low > 0.0:
        return DISPARITY
    return INCONCLUSIVE


def equivalence_entry(
    delta_block: dict, *, delta_margin: float = DEFAULT_DELTA_MARGIN, prefix: str = "delta_"
) -> dict:
    """``{delta_margin, verdict, max_abs_bound, method}`` for one attribute from its Δ block.

    ``delta_block`` is a Δ entry of the study export: ``rates.<source>.<outcome>.<attribute>``
    (bounds ``delta_ci_low``/``delta_ci_high``, the default ``prefix``) or
    ``ppi.<judge>.<outcome>.delta.<attribute>`` (``ci_low``/``ci_high``: ``prefix=""``).
    ``max_abs_bound`` is the largest |bound| of any pairwise interval, the upper end of Δ's.
    Where the interval is null, so are ``verdict`` and ``max_abs_bound``, with the interval's
    ``reason`` and ``reason_code`` (docs/metrics.md, "Intervals that cannot carry uncertainty").
    """
    margin = check_delta_margin(delta_margin)
    low, high = delta_block.get(f"{prefix}ci_low"), delta_block.get(f"{prefix}ci_high")
    entry = {"delta_margin": margin, "verdict": None, "max_abs_bound": None, "method": METHOD}
    if low is None or high is None:
        reason = delta_block.get(f"{prefix}ci_reason") or delta_block.get("reason")
        code = delta_block.get(f"{prefix}ci_reason_code") or "undefined_estimate"
        entry["reason"] = reason or "Δ's interval is undefined"
        entry["reason_code"] = code
        return entry
    entry["verdict"] = verdict_of(float(low), float(high), margin)
    entry["max_abs_bound"] = float(high)
    return entry


def equivalence_from_rates(
    point_rates,
    boot_rates,
    *,
    delta_margin: float = DEFAULT_DELTA_MARGIN,
    confidence: float = 0.95,
    n_resamples: int,
    design_code: str | None = None,
    df=None,
) -> dict:
    """``equivalence_entry`` of the Δ interval that ``delta_interval_block`` builds from the
    values' rates and their (B, k) cluster-bootstrap resamples: the verdict for rates not yet in
    an export block (the validity suite, a notebook)."""
    margin = check_delta_margin(delta_margin)
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence}")
    block = delta_interval_block(
        point_rates,
        boot_rates,
        confidence=confidence,
        n_resamples=n_resamples,
        design_code=design_code,
        df=df,
    )
    return equivalence_entry(block, delta_margin=margin)


PPI_SOURCE_PREFIX = "ppi:"


def equivalence_section(
    rates: dict, ppi: dict | None = None, *, margins: dict | None = None
) -> dict:
    """``equivalence.<source>.<outcome>.<attribute>`` for every Δ of a study export.

    ``rates`` is the export's ``rates`` section (a source per pooled humans and per judge);
    ``ppi`` its ``ppi`` section: a judge that humans validated gets a second source,
    ``ppi:<judge>``, read from its prediction-powered Δ, which is the one to cite for it.
    ``margins`` maps an outcome to its δ (``DEFAULT_DELTA_MARGIN`` for one not given).
    """
    margins = margins or {}

    def margin(outcome: str) -> float:
        return check_delta_margin(margins.get(outcome, DEFAULT_DELTA_MARGIN))

    section: dict = {}
    for source, outcomes in (rates or {}).items():
        for outcome, attributes in (outcomes or {}).items():
            for attribute, block in (attributes or {}).items():
                if isinstance(block, dict) and "delta" in block:
                    section.setdefault(source, {}).setdefault(outcome, {})[attribute] = (
                        equivalence_entry(block, delta_margin=margin(outcome))
                    )
    for judge, outcomes in (ppi or {}).items():
        for outcome, result in (outcomes or {}).items():
            deltas = (result or {}).get("delta") if isinstance(result, dict) else None
            for attribute, block in (deltas or {}).items():
                if isinstance(block, dict):
                    source = f"{PPI_SOURCE_PREFIX}{judge}"
                    section.setdefault(source, {}).setdefault(outcome, {})[attribute] = (
                        equivalence_entry(block, delta_margin=margin(outcome), prefix="")
                    )
    return section
