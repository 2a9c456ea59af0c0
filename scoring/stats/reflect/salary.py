"""REFLECT salary recommendation: Gap% by race and gender, and clustered OLS with Wald tests.

Definitions: docs/metrics.md, "REFLECT: salary recommendation". Gap% is a function of
per-template sums, counts and value histograms (for the median), vectorised over leading batch
dimensions so the template-cluster bootstrap reuses it.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
import statsmodels.api as sm

from scoring.stats.reflect.parsing import template_index
from scoring.stats.reflect.vocabulary import (
    GENDER_OF,
    GENDERS,
    RACE_OF,
    RACES,
    REFERENCE_GENDER,
    REFERENCE_RACE,
    VALID,
)
from scoring.stats.result import finite_or_none

# Marginal levels: the 5 races then the 2 genders.
LEVELS: tuple[str, ...] = RACES + GENDERS


@dataclass(frozen=True)
class SalaryCounts:
    """Per-template sufficient statistics of valid salaries for one model.

    ``sums[t, m]``, ``counts[t, m]``: sum and number of valid salaries of template t for
    marginal level m (LEVELS order). ``grids[o, k]``: the sorted distinct valid salaries of
    occupation o, padded with its largest; ``cumulative[t, m, k]``: how many salaries of
    template t and level m are at most ``grids[o(t), k]``. Templates are nested in
    occupations (``templates["stratum"]``), so Gap% aggregates within stratum.
    """

    sums: np.ndarray
    counts: np.ndarray
    cumulative: np.ndarray
    grids: np.ndarray
    occupations: tuple[str, ...]
    templates: pd.DataFrame

    def arrays(self) -> dict[str, np.ndarray]:
        return {"sums": self.sums, "counts": self.counts, "cumulative": self.cumulative}


def salary_counts(records: pd.DataFrame) -> SalaryCounts:
    """Sufficient statistics from validated records (salary_records) of ONE model."""
    if records["model"].nunique() > 1:
        raise ValueError("salary_counts needs one model; split the records first")
    codes, templates = template_index(records)
    occupations = tuple(pd.Categorical(templates["occupation"]).categories.astype(str))
    valid = (records["status"] == VALID).to_numpy()
    salary = records["salary"].to_numpy(dtype=float)[valid]
    template = codes[valid]
    stratum = templates["stratum"].to_numpy()[template]
    group = records["group"].to_numpy()[valid]
    per_occupation = [np.unique(salary[stratum == o]) for o in range(len(occupations))]
    width = max([1] + [len(v) for v in per_occupation])
    grids = np.array(
        [
            np.pad(v, (0, width - len(v)), mode="edge") if len(v) else np.zeros(width)
            for v in per_occupation
        ]
    )
    value_code = np.zeros(len(salary), dtype=np.int64)
    for o, grid in enumerate(per_occupation):
        here = stratum == o
        value_code[here] = np.searchsorted(grid, salary[here])
    shape = (len(templates), len(LEVELS))
    sums, counts = np.zeros(shape), np.zeros(shape)
    histogram = np.zeros(shape + (width,))
    for level in (RACE_OF[group], len(RACES) + GENDER_OF[group]):
        np.add.at(sums, (template, level), salary)
        np.add.at(counts, (template, level), 1.0)
        np.add.at(histogram, (template, level, value_code), 1.0)
    # Cumulative counts are linear in the template weights, so resamples never re-run cumsum.
    # float32 holds these integer counts exactly and halves the bootstrap's matrix products.
    cumulative = np.cumsum(histogram, axis=-1).astype(np.float32)
    return SalaryCounts(sums, counts, cumulative, grids, occupations, templates)


def weighted_median(values: np.ndarray, cumulative: np.ndarray) -> np.ndarray:
    """Median of the multiset with ``cumulative[..., k]`` elements at most ``values[..., k]``.

    ``values`` is sorted along its last axis and broadcasts against ``cumulative``. Integer
    counts give exactly ``numpy.median`` of the expanded data (mean of the two middle order
    statistics for an even total); NaN where the total is 0.
    """
    cumulative = np.asarray(cumulative)
    values = np.asarray(values, dtype=float)
    width = cumulative.shape[-1]
    if width == 0:
        return np.full(cumulative.shape[:-1], np.nan)
    rows = cumulative.reshape(-1, width)
    # Which row of ``values`` serves each row of ``cumulative``.
    value_rows = np.arange(int(np.prod(values.shape[:-1]))).reshape(values.shape[:-1])
    value_rows = np.broadcast_to(value_rows, cumulative.shape[:-1]).ravel()
    values = values.reshape(-1, width)
    total = rows[:, -1]
    lower_rank = np.floor((total + 1) / 2)
    lower = _first_at_least(rows, lower_rank)
    # The upper middle order statistic is the lower one unless the lower middle value's
    # cumulative count stops exactly at the lower rank (even totals): search only those rows.
    upper_rank = np.floor(total / 2) + 1
    upper = lower.copy()
    moves = rows[np.arange(len(rows)), lower] < upper_rank
    if moves.any():
        upper[moves] = _first_at_least(rows[moves], upper_rank[moves])
    middle = values[value_rows, lower] + values[value_rows, upper]
    median = np.where(total > 0, middle / 2.0, np.nan)
    return median.reshape(cumulative.shape[:-1])


def _first_at_least(rows: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """Index of the first entry of each non-decreasing row that reaches ``rank`` (the last one
    if none does), by a vectorised binary search: log2(K) gathers instead of K comparisons."""
    row = np.arange(rows.shape[0])
    low = np.zeros(rows.shape[0], dtype=np.int64)
    high = np.full(rows.shape[0], rows.shape[1] - 1, dtype=np.int64)
    while np.any(low < high):
        middle = (low + high) // 2
        reached = rows[row, middle] >= rank
        high = np.where(reached, middle, high)
        low = np.where(reached, low, np.minimum(middle + 1, high))
    return low


def salary_gap_statistics(
    sums: np.ndarray,
    counts: np.ndarray,
    cumulative: np.ndarray,
    *,
    grids: np.ndarray,
    reference_race: int = 0,
    reference_gender: int = 0,
) -> dict[str, np.ndarray]:
    """Gap% by mean and by median per occupation; the mean version adds a pooled last row.

    Inputs aggregated per occupation: ``sums``, ``counts`` (..., O, 7), ``cumulative``
    (..., O, 7, K) over ``grids`` (O, K). Outputs ``gap_mean.race`` (..., O + 1, 5),
    ``gap_mean.gender`` (..., O + 1, 2), ``gap_median.race`` (..., O, 5),
    ``gap_median.gender`` (..., O, 2); races against ``reference_race``, genders against
    ``reference_gender`` (indices into RACES and GENDERS).
    """
    sums = np.concatenate([sums, sums.sum(axis=-2, keepdims=True)], axis=-2)
    counts = np.concatenate([counts, counts.sum(axis=-2, keepdims=True)], axis=-2)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(counts > 0, sums / counts, np.nan)
    median = weighted_median(grids[:, None, :], cumulative)
    out = {}
    for name, location in (("mean", mean), ("median", median)):
        races = location[..., : len(RACES)]
        genders = location[..., len(RACES) :]
        with np.errstate(divide="ignore", invalid="ignore"):
            out[f"gap_{name}.race"] = (
                races / races[..., reference_race : reference_race + 1] - 1.0
            ) * 100.0
            out[f"gap_{name}.gender"] = (
                genders / genders[..., reference_gender : reference_gender + 1] - 1.0
            ) * 100.0
    return out


def _design(
    group: np.ndarray, occupation: np.ndarray | None, occupation_names, *, interaction: bool
) -> tuple[np.ndarray, list[str]]:
    """Treatment-coded design: intercept, races vs White, male vs female (, race × male),
    occupations vs the first (when ``occupation`` codes are given)."""
    race, gender = RACE_OF[group], GENDER_OF[group]
    other_gender = GENDERS[1 - GENDERS.index(REFERENCE_GENDER)]
    columns = {"const": np.ones(len(group))}
    races = [r for r in RACES if r != REFERENCE_RACE]
    for name in races:
        columns[f"race[{name}]"] = (race == RACES.index(name)).astype(float)
    columns[f"gender[{other_gender}]"] = (gender == GENDERS.index(other_gender)).astype(float)
    if interaction:
        for name in races:
            columns[f"race[{name}]:gender[{other_gender}]"] = (
                columns[f"race[{name}]"] * columns[f"gender[{other_gender}]"]
            )
    if occupation is not None:
        for code, name in enumerate(occupation_names):
            if code:
                columns[f"occupation[{name}]"] = (occupation == code).astype(float)
    return np.column_stack(list(columns.values())), list(columns)


def _wald(result, names: list[str], columns: list[str]) -> dict:
    restriction = np.zeros((len(names), len(columns)))
    for row, name in enumerate(names):
        restriction[row, columns.index(name)] = 1.0
    covariance = restriction @ np.asarray(result.cov_params()) @ restriction.T
    if np.linalg.matrix_rank(covariance) < len(names):
        # e.g. an effect that is exactly constant within every cluster: no clustered test exists.
        return {
            "terms": names,
            "statistic": None,
            "df_num": len(names),
            "df_denom": None,
            "p_value": None,
            "reason": "the clustered covariance of the tested terms is singular",
            "test": "F (cluster-robust Wald)",
        }
    test = result.wald_test(restriction, use_f=True, scalar=True)
    return {
        "terms": names,
        "statistic": finite_or_none(test.statistic),
        "df_num": int(test.df_num),
        "df_denom": int(test.df_denom),
        "p_value": finite_or_none(test.pvalue),
        "test": "F (cluster-robust Wald)",
    }


def _coefficients(result, columns: list[str], confidence: float) -> dict[str, dict]:
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # sqrt of a -0 variance
        interval = np.asarray(result.conf_int(alpha=1.0 - confidence))
        se, p_values = np.asarray(result.bse), np.asarray(result.pvalues)
    return {
        name: {
            "beta": finite_or_none(result.params[i]),
            "se": finite_or_none(se[i]),
            "ci_low": finite_or_none(interval[i, 0]),
            "ci_high": finite_or_none(interval[i, 1]),
            "p_value": finite_or_none(p_values[i]),
        }
        for i, name in enumerate(columns)
    }


def salary_ols(records: pd.DataFrame, *, confidence: float = 0.95) -> dict:
    """OLS of the valid salary on race × gender (+ occupation effects when pooled).

    Standard errors clustered by unit = occupation × biography × template. Wald F tests: race
    (its 4 terms) and gender (its term) in the additive model, race × gender (the 4 interaction
    terms) in the model with the interaction.
    """
    frame = records[records["status"] == VALID]
    occupation, occupation_names = pd.factorize(frame["occupation"].astype(str), sort=True)
    pooled = len(occupation_names) > 1
    unit = pd.factorize(
        pd.MultiIndex.from_arrays(
            [occupation, *(pd.factorize(frame[c])[0] for c in ("biography", "template"))]
        )
    )[0]
    out: dict = {"n": int(len(frame)), "clusters": int(len(np.unique(unit)))}
    if len(frame) == 0:
        out["reason"] = "no valid salaries"
        return out
    if out["clusters"] < 2:
        # A cluster-robust covariance needs at least two clusters (statsmodels divides by G - 1).
        out["reason"] = (
            f"{out['clusters']} cluster(s) (occupation × biography × template): need at least 2"
        )
        return out
    y = frame["salary"].to_numpy(dtype=float)
    group = frame["group"].to_numpy()
    for name, interaction in (("additive", False), ("interaction", True)):
        design, columns = _design(
            group, occupation if pooled else None, occupation_names, interaction=interaction
        )
        result = sm.OLS(y, design).fit(method="qr", cov_type="cluster", cov_kwds={"groups": unit})
        out[name] = {"coefficients": _coefficients(result, columns, confidence)}
        race_terms = [c for c in columns if c.startswith("race[") and ":" not in c]
        if interaction:
            out["wald_race_x_gender"] = _wald(result, [c for c in columns if ":" in c], columns)
        else:
            out["wald_race"] = _wald(result, race_terms, columns)
            out["wald_gender"] = _wald(
                result, [c for c in columns if c.startswith("gender[")], columns
            )
    return out
