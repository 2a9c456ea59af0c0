"""Template-cluster bootstrap and leave-one-template-out for the REFLECT statistics.

Definitions: docs/metrics.md, "REFLECT: robustness". Every REFLECT statistic is a function
of per-template count arrays (shape ``(T, ...)``). A resample is a vector of how many times
each template was drawn, so the aggregated counts of B resamples are one matrix product
``C @ counts`` with C of shape (B, T); leave-one-template-out is the same product with
``1 - I``. The statistic functions are vectorised over the leading dimension.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from scoring.stats.bootstrap import DEFAULT_N_RESAMPLES, percentile_interval

StatisticFn = Callable[..., Mapping[str, np.ndarray]]


def as_generator(rng: np.random.Generator | int | None) -> np.random.Generator:
    """A numpy Generator from a seed or a Generator (None only for exploratory use)."""
    if isinstance(rng, np.random.Generator):
        return rng
    return np.random.default_rng(rng)


def template_resample_counts(
    strata: np.ndarray, n_resamples: int, rng: np.random.Generator | int | None
) -> np.ndarray:
    """(B, T) draw counts: within each stratum (occupation) draw its n_s templates with replacement."""
    if n_resamples < 1:
        raise ValueError("n_resamples must be at least 1")
    generator = as_generator(rng)
    strata = np.asarray(strata)
    n_templates = len(strata)
    rows = np.arange(n_resamples)[:, None] * n_templates
    out = np.zeros(n_resamples * n_templates)
    for stratum in np.unique(strata):
        members = np.flatnonzero(strata == stratum)
        draws = members[generator.integers(0, len(members), size=(n_resamples, len(members)))]
        out += np.bincount((rows + draws).ravel(), minlength=out.size)
    return out.reshape(n_resamples, n_templates)


def leave_one_out_weights(n_templates: int) -> np.ndarray:
    """(T, T) weights: row t drops template t."""
    return 1.0 - np.eye(n_templates)


def reweighted(
    per_template: Mapping[str, np.ndarray], weights: np.ndarray, strata: np.ndarray | None = None
) -> dict[str, np.ndarray]:
    """Aggregated counts for each row of ``weights`` (shape (B, T)).

    Without ``strata``: shape (B, ...) per array. With ``strata`` (a code per template):
    shape (B, S, ...), one aggregate per stratum in sorted code order, for statistics
    defined within occupation.
    """
    out = {}
    for name, array in per_template.items():
        array = np.asarray(array)
        if array.dtype.kind != "f":
            array = array.astype(float)
        flat = array.reshape(array.shape[0], -1)
        weights = weights.astype(array.dtype, copy=False)
        if strata is None:
            out[name] = (weights @ flat).reshape((weights.shape[0],) + array.shape[1:])
            continue
        levels = np.unique(strata)
        stacked = np.empty((weights.shape[0], len(levels), flat.shape[1]), dtype=array.dtype)
        for position, level in enumerate(levels):
            members = np.flatnonzero(strata == level)
            stacked[:, position] = weights[:, members] @ flat[members]
        out[name] = stacked.reshape((weights.shape[0], len(levels)) + array.shape[1:])
    return out


def cluster_bootstrap(
    per_template: Mapping[str, np.ndarray],
    strata: np.ndarray,
    statistic: StatisticFn,
    *,
    n_resamples: int = DEFAULT_N_RESAMPLES,
    rng: np.random.Generator | int | None,
    confidence: float = 0.95,
    within_strata: bool = False,
    chunk_size: int = 2_000,
) -> dict[str, dict[str, np.ndarray]]:
    """Percentile CIs of every output of ``statistic`` under the stratified template bootstrap.

    ``statistic`` receives the aggregated arrays of a chunk of resamples (per stratum when
    ``within_strata``). Returns, per statistic name, ``low``, ``high`` and
    ``undefined_draws`` arrays shaped like the statistic.
    """
    strata = np.asarray(strata)
    weights = template_resample_counts(strata, n_resamples, rng)
    chunks: dict[str, list[np.ndarray]] = {}
    for start in range(0, n_resamples, chunk_size):
        part = weights[start : start + chunk_size]
        aggregated = reweighted(per_template, part, strata if within_strata else None)
        for name, values in statistic(**aggregated).items():
            chunks.setdefault(name, []).append(np.asarray(values, dtype=float))
    out = {}
    for name, parts in chunks.items():
        low, high, n_undefined = percentile_interval(np.concatenate(parts), confidence=confidence)
        out[name] = {"low": low, "high": high, "undefined_draws": n_undefined}
    return out


def leave_one_template_out(
    per_template: Mapping[str, np.ndarray],
    statistic: StatisticFn,
    *,
    null: Mapping[str, float] | None = None,
    strata: np.ndarray | None = None,
    relevance: Mapping[str, np.ndarray] | None = None,
) -> dict[str, dict[str, np.ndarray]]:
    """Sign stability and maximum absolute deviation of each statistic when one template is left out.

    ``null`` gives each statistic's no-effect value (0.5 for a win rate, 0 for a gap); the
    effect is ``statistic - null`` and ``sign_stability`` is the share of leave-one-out values
    whose effect has the full-data sign (statistics absent from ``null`` get only the
    deviation). Undefined leave-one-out values are excluded and counted. ``strata``: aggregate
    per stratum, as in ``cluster_bootstrap(within_strata=True)``. ``relevance[name]``: a
    boolean (T, ...) array broadcasting against the statistic; False drops that leave-out for
    that element (a per-occupation statistic only counts its own occupation's templates).
    """
    null = dict(null or {})
    n_templates = len(next(iter(per_template.values())))
    full = {
        k: v[0]
        for k, v in statistic(**reweighted(per_template, np.ones((1, n_templates)), strata)).items()
    }
    held_out = statistic(**reweighted(per_template, leave_one_out_weights(n_templates), strata))
    out = {}
    for name, values in held_out.items():
        values = np.where(np.isfinite(values), values, np.nan)
        relevant = np.broadcast_to((relevance or {}).get(name, True), values.shape)
        defined = ~np.isnan(values) & relevant
        deviation = np.where(defined, np.abs(values - full[name]), 0.0).max(axis=0)
        result = {
            "max_abs_deviation": np.where(np.isfinite(full[name]), deviation, np.nan),
            "undefined": (np.isnan(values) & relevant).sum(axis=0),
        }
        if name in null:
            full_sign = np.sign(full[name] - null[name])
            same = defined & (np.sign(values - null[name]) == full_sign)
            with np.errstate(divide="ignore", invalid="ignore"):
                stability = same.sum(axis=0) / defined.sum(axis=0)
            result["sign_stability"] = np.where(np.isfinite(full[name]), stability, np.nan)
        out[name] = result
    return out
