"""The one shape every statistic returns, so undefined values are explicit, never NaN."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any


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
