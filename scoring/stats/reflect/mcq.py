"""REFLECT MCQ statistics: answer distributions, Jensen-Shannon divergence, mean-based gaps.

Definitions: docs/metrics.md, "REFLECT: MCQ". Like the 2AFC module, the statistics are
functions of per-template count arrays ``counts[t, group, option]`` vectorised over leading
batch dimensions, so the bootstrap and leave-one-template-out reuse them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial

import numpy as np
import pandas as pd
from scipy.optimize import minimize
from scipy.special import rel_entr
from scipy.stats import norm

from scoring.stats.reflect.parsing import template_codes, template_index
from scoring.stats.reflect.robustness import cluster_wilson
from scoring.stats.reflect.vocabulary import (
    GENDER_OF,
    GENDERS,
    GROUPS,
    MCQ_ENCODINGS,
    MCQ_OPTIONS,
    RACE_OF,
    RACES,
    REFERENCE_GENDER,
    REFERENCE_RACE,
    REFUSAL,
    VALID,
)

_RACE_SUM = (RACE_OF[None, :] == np.arange(len(RACES))[:, None]).astype(float)  # (5, 10)
_GENDER_SUM = (GENDER_OF[None, :] == np.arange(len(GENDERS))[:, None]).astype(float)  # (2, 10)


@dataclass(frozen=True)
class McqCounts:
    """Per-template counts for one model × question (× variant).

    ``counts[t, g, k]``: valid answers of option k (in MCQ_OPTIONS order) for group g's image(s)
    of template t. ``answers``, ``refusals``, ``invalid[t]``: every answer, refusals, invalid.
    """

    question: str
    counts: np.ndarray
    answers: np.ndarray
    refusals: np.ndarray
    invalid: np.ndarray
    templates: pd.DataFrame


def mcq_counts(records: pd.DataFrame, *, templates: pd.DataFrame | None = None) -> McqCounts:
    """Per-template counts from validated records (mcq_records) of ONE model, question and variant.

    ``templates`` fixes the template table (to align two variants); by default it is built
    from the records.
    """
    for column in ("model", "question", "variant"):
        if column in records.columns and records[column].nunique() > 1:
            raise ValueError(f"mcq_counts needs one {column}; split the records first")
    question = str(records["question"].iloc[0])
    options = MCQ_OPTIONS[question]
    if templates is None:
        codes, templates = template_index(records)
    else:
        codes = template_codes(records, templates)
    n_templates = len(templates)
    status = records["status"].to_numpy()
    valid = status == VALID
    option_code = pd.Categorical(records["letter"], categories=options).codes
    counts = np.zeros((n_templates, len(GROUPS), len(options)))
    group = records["group"].to_numpy()
    np.add.at(counts, (codes[valid], group[valid], option_code[valid]), 1.0)
    return McqCounts(
        question=question,
        counts=counts,
        answers=np.bincount(codes, minlength=n_templates).astype(float),
        refusals=np.bincount(codes[status == REFUSAL], minlength=n_templates).astype(float),
        invalid=np.bincount(codes[(status != VALID) & (status != REFUSAL)], minlength=n_templates),
        templates=templates,
    )


def normalised(counts: np.ndarray) -> np.ndarray:
    """Rows of counts (last axis) as distributions; NaN rows where the total is 0."""
    counts = np.asarray(counts, dtype=float)
    total = counts.sum(axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total > 0, counts / total, np.nan)


def jensen_shannon_divergence(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """JSD(p‖q) in bits over the last axis: ½ KL(p‖m) + ½ KL(q‖m), m = (p + q)/2; in [0, 1].

    Equals ``scipy.spatial.distance.jensenshannon(p, q, base=2) ** 2``.
    """
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    m = (p + q) / 2.0
    with np.errstate(invalid="ignore"):
        # m underflows to 0 only for subnormal p and q, whose terms are 0 in exact arithmetic.
        terms = np.where(m > 0, rel_entr(p, m) + rel_entr(q, m), 0.0)
    bits = terms.sum(axis=-1) / (2.0 * np.log(2.0))
    return np.clip(bits, 0.0, 1.0)


def mcq_statistics(
    counts: np.ndarray, *, encoding: np.ndarray, reference_race: int = 0, reference_gender: int = 0
) -> dict[str, np.ndarray]:
    """JSD of each race / gender / group distribution against the pooled one, and mean gaps.

    ``counts[..., group, option]`` aggregated over templates; ``encoding[option]`` the numeric
    value of each option. The pooled distribution is that of all valid answers.
    """
    counts = np.asarray(counts, dtype=float)
    by_race = np.einsum("rg,...gk->...rk", _RACE_SUM, counts)
    by_gender = np.einsum("sg,...gk->...sk", _GENDER_SUM, counts)
    pooled = normalised(counts.sum(axis=-2))[..., None, :]
    out: dict[str, np.ndarray] = {}
    for name, table in (("race", by_race), ("gender", by_gender), ("race_gender", counts)):
        out[f"jsd.{name}"] = jensen_shannon_divergence(normalised(table), pooled)
        out[f"distribution.{name}"] = normalised(table)
    out["distribution.pooled"] = pooled[..., 0, :]
    for name, table, reference in (
        ("race", by_race, reference_race),
        ("gender", by_gender, reference_gender),
    ):
        total = table.sum(axis=-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            mean = np.where(total > 0, (table @ encoding) / total, np.nan)
            reference_mean = mean[..., reference : reference + 1]
            out[f"mean_gap.{name}"] = np.where(
                reference_mean != 0, mean / reference_mean - 1.0, np.nan
            )
        out[f"mean.{name}"] = mean
    return out


def mcq_statistic_fn(
    question: str,
    *,
    encoding: Mapping[str, float] | None = None,
    reference_race: str = REFERENCE_RACE,
    reference_gender: str = REFERENCE_GENDER,
):
    """``mcq_statistics`` bound to a question's option encoding and reference groups."""
    encoding = dict(MCQ_ENCODINGS[question] if encoding is None else encoding)
    options = MCQ_OPTIONS[question]
    missing = [o for o in options if o not in encoding]
    if missing:
        raise ValueError(f"encoding for {question!r} lacks options {missing}")
    vector = np.array([float(encoding[o]) for o in options])
    return partial(
        mcq_statistics,
        encoding=vector,
        reference_race=RACES.index(reference_race),
        reference_gender=GENDERS.index(reference_gender),
    )


def jsd_intervals(
    counts: np.ndarray, strata: np.ndarray, *, confidence: float = 0.95
) -> dict[str, np.ndarray]:
    """``jsd.{race, gender, race_gender}`` intervals, (L, 2) each, from per-template counts
    ``counts[t, group, option]`` (docs/metrics.md, "REFLECT: MCQ").

    JSD is biased upward in small groups, so a bootstrap of it can sit above the estimate.
    Instead each option's share gets a template-cluster Wilson interval (``cluster_wilson`` at
    z), Bonferroni-simultaneous over the 2K shares of the group's and the pooled distribution;
    the interval is the least and the largest JSD of two distributions inside those boxes (a
    jointly convex function: the largest sits at a pair of vertices, the least is a convex
    minimum, 0 when the boxes share a distribution). The estimate is the JSD of a pair inside
    the boxes, so the interval holds it by construction."""
    counts = np.asarray(counts, dtype=float)
    n_options = counts.shape[-1]
    z = norm.ppf(1.0 - (1.0 - confidence) / (4.0 * n_options))
    tables = {
        "race": np.einsum("rg,tgk->trk", _RACE_SUM, counts),
        "gender": np.einsum("sg,tgk->tsk", _GENDER_SUM, counts),
        "race_gender": counts,
    }

    def boxes(table):  # (T, L, K) -> low, high (L, K)
        trials = np.broadcast_to(table.sum(axis=-1, keepdims=True), table.shape)
        return cluster_wilson(table, trials, strata, quantile=z)

    pooled = counts.sum(axis=1)
    pooled_low, pooled_high = boxes(pooled[:, None, :])
    pooled_point = normalised(pooled.sum(axis=0))
    out = {}
    for kind, table in tables.items():
        low, high = boxes(table)
        points = normalised(table.sum(axis=0))
        rows = []
        for label in range(table.shape[1]):
            estimate = float(jensen_shannon_divergence(points[label], pooled_point))
            if np.isnan(low[label]).any() or np.isnan(pooled_low[0]).any():
                rows.append((np.nan, np.nan))
                continue
            least, largest = _jsd_range(
                (low[label], high[label]),
                (pooled_low[0], pooled_high[0]),
                points[label],
                pooled_point,
            )
            # The estimate is a feasible pair's value: rounding in the search cannot move past it.
            rows.append((min(least, estimate), max(largest, estimate)))
        out[f"jsd.{kind}"] = np.array(rows)
    return out


def _simplex_box_vertices(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Vertices of {p : low ≤ p ≤ high, Σp = 1}: every coordinate but one at a bound, the free
    one within its own bounds."""
    k = len(low)
    patterns = np.array(np.meshgrid(*[[0, 1]] * (k - 1), indexing="ij")).reshape(k - 1, -1).T
    vertices = []
    for free in range(k):
        others = [i for i in range(k) if i != free]
        fixed = np.where(patterns == 1, high[others], low[others])
        rest = 1.0 - fixed.sum(axis=1)
        ok = (rest >= low[free] - 1e-12) & (rest <= high[free] + 1e-12)
        vertex = np.zeros((ok.sum(), k))
        vertex[:, others], vertex[:, free] = fixed[ok], np.clip(rest[ok], 0.0, 1.0)
        vertices.append(vertex)
    return np.concatenate(vertices)


def _jsd_range(box_p, box_q, start_p, start_q) -> tuple[float, float]:
    """Least and largest JSD(p ‖ q) over p, q in their boxes on the simplex."""
    vertices_p = _simplex_box_vertices(*box_p)
    vertices_q = _simplex_box_vertices(*box_q)
    largest = float(jensen_shannon_divergence(vertices_p[:, None, :], vertices_q[None, :, :]).max())
    shared_low = np.maximum(box_p[0], box_q[0])
    shared_high = np.minimum(box_p[1], box_q[1])
    if np.all(shared_low <= shared_high) and shared_low.sum() <= 1.0 <= shared_high.sum():
        return 0.0, largest
    k = len(start_p)
    result = minimize(
        lambda x: float(jensen_shannon_divergence(x[:k], x[k:])),
        np.concatenate([start_p, start_q]),
        method="SLSQP",
        bounds=list(
            zip(
                np.concatenate([box_p[0], box_q[0]]),
                np.concatenate([box_p[1], box_q[1]]),
                strict=True,
            )
        ),
        constraints=[
            {"type": "eq", "fun": lambda x: x[:k].sum() - 1.0},
            {"type": "eq", "fun": lambda x: x[k:].sum() - 1.0},
        ],
    )
    return float(result.fun), largest
