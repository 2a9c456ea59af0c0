"""The one shape every statistic returns, so undefined values are explicit, never NaN."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from scoring.stats.interval_checks import holds_estimate


@dataclass(frozen=True)
class Stat:
    """A computed statistic: a finite value, or None with the reason it is undefined.

    ``extra`` carries statistic-specific detail (counts, the pairs used, a p-value's test name)
    as JSON-ready plain data.
    """

    value: float | None
    reason: str | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        if self.value is not None and not math.isfinite(self.value):
            raise ValueError(
                f"Stat value must be finite or None, got {self.value!r}; use undefined()"
            )
        if self.value is None and not self.reason:
            raise ValueError("an undefined Stat needs a reason")

    @property
    def defined(self) -> bool:
        return self.value is not None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        if not out["extra"]:
            del out["extra"]
        return out


# One wording for κ, α and AC1 when a single label is in use, so a reader sees one reason.
SINGLE_LABEL_REASON = "only one label occurs among the ratings (every rating is the same label)"


def undefined(reason: str, *, n: int | None = None, **extra: Any) -> Stat:
    return Stat(value=None, reason=reason, n=n, extra=extra)


def finite_or_none(x: float | None) -> float | None:
    """Map NaN/inf (and None) to None; used when a library hands back NaN for an undefined case."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


# The fewest resampling units (base prompts in domains with two or more; items for α) a
# percentile bootstrap interval is reported for: with m clusters in one stratum there are only
# C(2m − 1, m) distinct resamples (35 for m = 4). docs/metrics.md, "Intervals that cannot
# carry uncertainty".
MIN_BOOTSTRAP_UNITS = 5
# The fewest distinct stratified resamples a simultaneous band is built from.
MIN_DISTINCT_RESAMPLES = 100

# Why an interval is null: a stable code for programs, a sentence for readers. Exported as
# ``<name>_ci_reason_code`` and ``<name>_ci_reason`` beside ``<name>_ci_low/high``.
CI_REASONS = {
    "no_resamples": "no bootstrap resamples (n_resamples = 0 or not requested)",
    "one_cluster_per_stratum": (
        "every domain has a single base prompt: the bootstrap resamples base prompts within "
        "domain, so it cannot vary and the interval would have zero width"
    ),
    "too_few_clusters": (
        f"fewer than {MIN_BOOTSTRAP_UNITS} base prompts can be resampled (in domains with two "
        "or more), too few for a percentile interval"
    ),
    "too_few_resamples": (
        f"the base prompts allow fewer than {MIN_DISTINCT_RESAMPLES} distinct bootstrap "
        "resamples (e.g. three domains of two base prompts), too few for an interval"
    ),
    "too_few_items": (
        f"fewer than {MIN_BOOTSTRAP_UNITS} items with two or more ratings, too few for a "
        "percentile interval"
    ),
    "undefined_in_every_resample": "undefined in every bootstrap resample",
    "zero_width": (
        "the interval has zero width (every resample, or the standard error, shows no spread), "
        "so it carries no uncertainty"
    ),
    "no_observations": "no observations (n = 0)",
    "undefined_estimate": "the statistic itself is undefined (its reason is beside it)",
    "one_cluster": (
        "every label of this value comes from one base prompt, so the variance between base "
        "prompts cannot be estimated"
    ),
    "excludes_estimate": (
        "the interval excluded its own point estimate (a biased statistic in a small sample), "
        "so it was withheld rather than shown"
    ),
    "value_without_spread": (
        "a value's estimate does not vary across the bootstrap resamples (all its labelled items "
        "agree and λ is 0), so the interval would treat that value's rate as known"
    ),
    "single_class": (
        "every label in the cell (human reference and judge) is the same class, so the variance "
        "estimate is zero and the interval would carry no uncertainty"
    ),
}


def ci_reason(code: str, prefix: str = "") -> dict[str, str]:
    """``{<prefix>ci_reason: sentence, <prefix>ci_reason_code: code}`` for a null interval."""
    return {f"{prefix}ci_reason": CI_REASONS[code], f"{prefix}ci_reason_code": code}


def has_zero_width(low: float | None, high: float | None) -> bool:
    """Both ends defined and equal (to rounding): an interval that carries no uncertainty."""
    return low is not None and high is not None and abs(high - low) <= 1e-12 * max(1.0, abs(high))


def interval_block(
    bounds: Callable[[], tuple[float | None, float | None, int | None]] | None,
    *,
    n_resamples: int,
    design_code: str | None = None,
    prefix: str = "",
    estimate: float | None = None,
) -> dict:
    """``{<prefix>ci_low, <prefix>ci_high}`` from ``bounds()`` (low, high, resamples used), or
    both null with ``<prefix>ci_reason(_code)`` when the interval cannot carry uncertainty
    (docs/metrics.md, "Intervals that cannot carry uncertainty"). ``bounds`` is None, or not
    called, when there are no resamples or the design already rules the interval out;
    ``<prefix>ci_resamples_used`` is added when some resamples left the statistic undefined.
    With ``estimate``, an interval that excludes it is withheld (code ``excludes_estimate``;
    ``interval_checks.holds_estimate``)."""
    code = "no_resamples" if n_resamples == 0 or bounds is None else design_code
    if code is None:
        low, high, n_used = bounds()
        low, high = finite_or_none(low), finite_or_none(high)
        if low is None or high is None:
            code = "undefined_in_every_resample"
        elif has_zero_width(low, high):
            code = "zero_width"
        elif not holds_estimate(estimate, low, high):
            code = "excludes_estimate"
    if code is not None:
        return {f"{prefix}ci_low": None, f"{prefix}ci_high": None, **ci_reason(code, prefix)}
    block = {f"{prefix}ci_low": low, f"{prefix}ci_high": high}
    if n_used is not None and n_used < n_resamples:
        block[f"{prefix}ci_resamples_used"] = n_used
    return block
