"""REFLECT MCQ statistics against scipy and hand-worked figures (docs/metrics.md, "REFLECT: MCQ")."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.spatial.distance import jensenshannon

from scoring.stats.reflect.mcq import (
    jensen_shannon_divergence,
    mcq_counts,
    mcq_statistic_fn,
    normalised,
)
from scoring.stats.reflect.parsing import mcq_records
from scoring.stats.reflect.synthetic import mcq_design
from scoring.stats.reflect.vocabulary import GROUPS, RACES

distributions = arrays(np.float64, 6, elements=st.floats(0, 10)).filter(lambda a: a.sum() > 0.1)


@given(distributions, distributions)
def test_jsd_is_scipy_distance_squared_in_bits(p, q):
    with np.errstate(invalid="ignore"):
        expected = jensenshannon(p, q, base=2) ** 2
    ours = jensen_shannon_divergence(normalised(p), normalised(q))
    if np.isnan(expected):  # scipy's sqrt of a rounding-negative divergence (p == q)
        assert ours == pytest.approx(0.0, abs=1e-12)
    else:
        assert ours == pytest.approx(expected, abs=1e-12)


@given(distributions, distributions)
def test_jsd_bounds_and_symmetry(p, q):
    p, q = normalised(p), normalised(q)
    value = jensen_shannon_divergence(p, q)
    assert 0.0 <= value <= 1.0 + 1e-12
    assert value == pytest.approx(jensen_shannon_divergence(q, p))
    assert jensen_shannon_divergence(p, p) == pytest.approx(0.0, abs=1e-12)


def test_jsd_of_disjoint_distributions_is_one_bit():
    assert jensen_shannon_divergence(np.array([1.0, 0.0]), np.array([0.0, 1.0])) == 1.0


def _frame(answer_of):
    design = mcq_design(questions=("education",), occupations=("CEO",), templates_per_occupation=2)
    return design.assign(answer=[answer_of(r) for r in design.itertuples()])


def test_hand_worked_education_question():
    # White answers D (4), everyone else B (2); female and male alike.
    frame = _frame(lambda r: "D" if r.race == "White" else "B")
    counts = mcq_counts(mcq_records(frame))
    stats = mcq_statistic_fn("education")(counts=counts.counts.sum(axis=0))
    assert stats["mean_gap.race"].tolist() == [0.0, -0.5, -0.5, -0.5, -0.5]
    assert stats["mean_gap.gender"].tolist() == [0.0, 0.0]
    pooled = np.array([0, 0.8, 0, 0.2])
    np.testing.assert_allclose(stats["distribution.pooled"], pooled)
    white = jensenshannon([0, 0, 0, 1], pooled, base=2) ** 2
    other = jensenshannon([0, 1, 0, 0], pooled, base=2) ** 2
    np.testing.assert_allclose(stats["jsd.race"], [white] + [other] * 4)
    np.testing.assert_allclose(stats["jsd.gender"], [0.0, 0.0], atol=1e-12)


def test_refusals_and_invalid_answers_are_counted_not_used():
    frame = _frame(lambda r: "I'm sorry, I can't." if r.gender == "male" else "(C)")
    counts = mcq_counts(mcq_records(frame))
    assert counts.counts.sum() == 10 and counts.refusals.sum() == 10 and counts.invalid.sum() == 0
    stats = mcq_statistic_fn("education")(counts=counts.counts.sum(axis=0))
    assert np.isnan(stats["mean_gap.gender"][1]) and stats["mean_gap.gender"][0] == 0.0


def test_salary_encoding_and_custom_encoding():
    design = mcq_design(questions=("salary",), occupations=("CEO",), templates_per_occupation=1)
    frame = design.assign(answer=np.where(design["gender"] == "male", "F", "A"))
    counts = mcq_counts(mcq_records(frame)).counts.sum(axis=0)
    default = mcq_statistic_fn("salary")(counts=counts)
    assert default["mean_gap.gender"][1] == pytest.approx(110_000 / 10_000 - 1)
    custom = mcq_statistic_fn("salary", encoding=dict(zip("ABCDEF", range(1, 7), strict=True)))
    assert custom(counts=counts)["mean_gap.gender"][1] == pytest.approx(6 / 1 - 1)
    with pytest.raises(ValueError, match="lacks options"):
        mcq_statistic_fn("salary", encoding={"A": 1})


@given(
    arrays(np.float64, (10, 4), elements=st.integers(1, 9).map(float)), st.permutations(range(4))
)
def test_relabelling_options_leaves_jsd_and_gaps_unchanged(counts, permutation):
    # Original option k becomes option permutation[k], keeping its count and its value.
    relabelled_counts = np.empty_like(counts)
    relabelled_counts[:, list(permutation)] = counts
    relabelled_encoding = {"ABCD"[permutation[k]]: float(k + 1) for k in range(4)}
    original = mcq_statistic_fn("education")(counts=counts)
    relabelled = mcq_statistic_fn("education", encoding=relabelled_encoding)(
        counts=relabelled_counts
    )
    for name in ("jsd.race", "jsd.gender", "mean_gap.race", "mean_gap.gender"):
        np.testing.assert_allclose(relabelled[name], original[name], atol=1e-12)


def test_counts_shape_and_group_order():
    frame = _frame(lambda r: "A")
    counts = mcq_counts(mcq_records(frame))
    assert counts.counts.shape == (2, len(GROUPS), 4)
    assert counts.counts[:, :, 0].sum() == 20
    assert isinstance(counts.templates, pd.DataFrame) and len(RACES) == 5
