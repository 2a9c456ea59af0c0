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
from scipy.stats import t as student_t

from scoring.stats.bootstrap import (
    DEFAULT_N_RESAMPLES,
    cluster_weights,
    percentile_interval,
    stratified_cluster_indices,
)
from scoring.stats.proportions import wilson_bounds

StatisticFn = Callable[..., Mapping[str, np.ndarray]]


def as_generator(rng: np.random.Generator | int | None) -> np.random.Generator:
    """A numpy Generator from a seed or a Generator (None only for exploratory use)."""
    if isinstance(rng, np.random.Generator):
        return rng
    return np.random.default_rng(rng)


def template_resample_counts(
    strata: np.ndarray,
    n_resamples: int,
    rng: np.random.Generator | int | None,
    *,
    rescaled: bool = False,
) -> np.ndarray:
    """(B, T) draw counts: within each stratum (occupation) draw its n_s templates with replacement.

    ``rescaled``: the Rao-Wu rescaling bootstrap (Rao & Wu 1988): draw n_s − 1 templates and
    weigh each draw n_s / (n_s − 1), so a stratum keeps its total weight n_s and the resamples'
    variance of a linear statistic is the unbiased stratified one (the plain bootstrap's is
    (n_s − 1)/n_s of it: 3/4 with the demo's 4 templates per occupation).
    """
    if n_resamples < 1:
        raise ValueError("n_resamples must be at least 1")
    generator = as_generator(rng)
    strata = np.asarray(strata)
    n_templates = len(strata)
    if rescaled:
        # The one Rao–Wu resampler of the project (docs/metrics.md, "Cluster bootstrap").
        codes = np.unique(strata, return_inverse=True)[1].astype(np.int64)
        indices = stratified_cluster_indices(codes, n_resamples=n_resamples, rng=generator)
        return cluster_weights(indices, codes)
    rows = np.arange(n_resamples)[:, None] * n_templates
    out = np.zeros(n_resamples * n_templates)
    for stratum in np.unique(strata):
        members = np.flatnonzero(strata == stratum)
        draws = members[generator.integers(0, len(members), size=(n_resamples, len(members)))]
        out += np.bincount((rows + draws).ravel(), minlength=out.size)
    return out.reshape(n_resamples, n_templates)


def degrees_of_freedom(strata: np.ndarray) -> int:
    """Templates − occupations: the clusters' degrees of freedom for a variance estimated
    within occupation (at least 1)."""
    strata = np.asarray(strata)
    return max(len(strata) - len(np.unique(strata)), 1)


def t_quantile(confidence: float, strata: np.ndarray) -> float:
    """Two-sided Student-t quantile on ``degrees_of_freedom(strata)``."""
    return float(student_t.ppf(0.5 + confidence / 2.0, degrees_of_freedom(strata)))


def ratio_variance(
    numerator: np.ndarray, denominator: np.ndarray, strata: np.ndarray
) -> np.ndarray:
    """Linearised variance of Σ_t numerator / Σ_t denominator under template-cluster sampling
    within occupation: Σ_s n_s/(n_s − 1) Σ_t (e_t − ē_s)² / (Σ denominator)², e_t = numerator_t
    − ratio × denominator_t (the survey ratio estimator's; Cochran 1977, §6.11). Arrays are
    (T, ...); NaN where the denominator sums to 0."""
    numerator = np.asarray(numerator, dtype=float)
    denominator = np.asarray(denominator, dtype=float)
    total = denominator.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(total > 0, numerator.sum(axis=0) / total, np.nan)
    residual = numerator - np.nan_to_num(ratio) * denominator
    spread = np.zeros(total.shape)
    strata = np.asarray(strata)
    for stratum in np.unique(strata):
        members = residual[strata == stratum]
        if len(members) > 1:
            deviation = members - members.mean(axis=0)
            spread += len(members) / (len(members) - 1) * (deviation**2).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total > 0, spread / total**2, np.nan)


def cluster_wilson(
    successes: np.ndarray,
    trials: np.ndarray,
    strata: np.ndarray,
    *,
    confidence: float = 0.95,
    quantile: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Wilson interval of Σ successes / Σ trials (per-template arrays (T, ...)) for template
    clusters: the Wilson score interval at the effective sample size p(1 − p) / ratio_variance
    (n / Kish's design effect; Korn & Graubard 1998; n when that variance is 0), with the
    Student-t quantile on ``degrees_of_freedom(strata)`` in place of z (or ``quantile``).
    Not capped at n: with few templates the capped form covered ~0.99 at a nominal 0.95.
    Contains p by construction; NaN where no trial."""
    successes = np.asarray(successes, dtype=float)
    trials = np.asarray(trials, dtype=float)
    n = trials.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(n > 0, successes.sum(axis=0) / n, np.nan)
        variance = ratio_variance(successes, trials, strata)
        effective = np.where(variance > 0, p * (1.0 - p) / variance, n)
    q = t_quantile(confidence, strata) if quantile is None else quantile
    return wilson_bounds(p * effective, effective, z=q)


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
    rescaled: bool = False,
) -> dict[str, dict[str, np.ndarray]]:
    """Percentile CIs of every output of ``statistic`` under the stratified template bootstrap.

    ``statistic`` receives the aggregated arrays of a chunk of resamples (per stratum when
    ``within_strata``). Returns, per statistic name, ``low``, ``high``, ``se`` (the standard
    deviation of the defined resamples) and ``undefined_draws`` arrays shaped like the
    statistic. ``rescaled``: Rao-Wu resamples (``template_resample_counts``).
    """
    strata = np.asarray(strata)
    weights = template_resample_counts(strata, n_resamples, rng, rescaled=rescaled)
    chunks: dict[str, list[np.ndarray]] = {}
    for start in range(0, n_resamples, chunk_size):
        part = weights[start : start + chunk_size]
        aggregated = reweighted(per_template, part, strata if within_strata else None)
        for name, values in statistic(**aggregated).items():
            chunks.setdefault(name, []).append(np.asarray(values, dtype=float))
    out = {}
    for name, parts in chunks.items():
        draws = np.concatenate(parts)
        low, high, n_undefined = percentile_interval(draws, confidence=confidence)
        draws = np.where(np.isfinite(draws), draws, np.nan)
        defined = (~np.isnan(draws)).sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            centred = draws - np.nanmean(np.where(defined > 1, draws, 0.0), axis=0)
            se = np.sqrt(np.nansum(centred**2, axis=0) / (defined - 1))
        se = np.where(defined > 1, se, np.nan)
        out[name] = {"low": low, "high": high, "se": se, "undefined_draws": n_undefined}
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
