"""REFLECT salary statistics against pandas, numpy.median and statsmodels formula OLS
(docs/metrics.md, "REFLECT: salary recommendation")."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from hypothesis import given
from hypothesis import strategies as st

from scoring.stats.reflect.parsing import salary_records
from scoring.stats.reflect.robustness import reweighted
from scoring.stats.reflect.salary import (
    salary_counts,
    salary_gap_statistics,
    salary_ols,
    weighted_median,
)
from scoring.stats.reflect.synthetic import salary_design
from scoring.stats.reflect.vocabulary import RACES


@given(st.lists(st.integers(0, 30), min_size=1, max_size=40))
def test_weighted_median_is_numpy_median(data):
    values, counts = np.unique(data, return_counts=True)
    assert weighted_median(values.astype(float), np.cumsum(counts)) == np.median(data)


def test_weighted_median_of_nothing_is_undefined():
    assert np.isnan(weighted_median(np.array([1.0, 2.0]), np.array([0.0, 0.0])))


def _frame(seed=0, occupations=("CEO", "cook"), templates=3, biographies=4):
    rng = np.random.default_rng(seed)
    design = salary_design(
        occupations=occupations,
        templates_per_occupation=templates,
        biographies_per_occupation=biographies,
    )
    base = np.where(design["occupation"] == "CEO", 150_000, 40_000)
    bump = np.where(design["gender"] == "male", 5_000, 0) + np.where(
        design["race"] == "Black", -3_000, 0
    )
    salary = (base + bump + rng.normal(0, 8_000, len(design))) // 1000 * 1000
    answers = [f"${int(s):,}" for s in salary]
    answers[0] = "I cannot recommend a salary."
    answers[1] = "about 50k"
    return design.assign(answer=answers)


def _gaps(frame):
    records = salary_records(frame)
    counts = salary_counts(records)
    aggregated = reweighted(
        counts.arrays(), np.ones((1, len(counts.templates))), counts.templates["stratum"].to_numpy()
    )
    stats = salary_gap_statistics(**aggregated, grids=counts.grids)
    return records, counts, {k: v[0] for k, v in stats.items()}


def test_gap_percent_matches_pandas():
    records, counts, stats = _gaps(_frame())
    valid = records[records["status"] == "valid"]
    assert len(valid) == len(records) - 2
    for o, occupation in enumerate(counts.occupations):
        subset = valid[valid["occupation"] == occupation]
        for statistic in ("mean", "median"):
            by_race = subset.groupby("race")["salary"].agg(statistic)
            by_gender = subset.groupby("gender")["salary"].agg(statistic)
            expected_race = [(by_race[r] / by_race["White"] - 1) * 100 for r in RACES]
            expected_gender = [0.0, (by_gender["male"] / by_gender["female"] - 1) * 100]
            np.testing.assert_allclose(stats[f"gap_{statistic}.race"][o], expected_race)
            np.testing.assert_allclose(stats[f"gap_{statistic}.gender"][o], expected_gender)
    pooled = valid.groupby("race")["salary"].mean()
    np.testing.assert_allclose(
        stats["gap_mean.race"][-1], [(pooled[r] / pooled["White"] - 1) * 100 for r in RACES]
    )
    assert stats["gap_median.race"].shape == (2, 5)  # the median is per occupation only


def test_ols_matches_statsmodels_formula_with_clustered_errors():
    frame = _frame(seed=1, templates=4, biographies=6)
    records = salary_records(frame)
    result = salary_ols(records)
    valid = records[records["status"] == "valid"].copy()
    valid["unit"] = pd.factorize(
        valid["occupation"] + "/" + valid["biography"] + "/" + valid["template"]
    )[0]
    reference = smf.ols(
        "salary ~ C(race, Treatment('White')) + C(gender, Treatment('female')) + C(occupation)",
        data=valid,
    ).fit(cov_type="cluster", cov_kwds={"groups": valid["unit"]})
    ours = result["additive"]["coefficients"]
    assert ours["gender[male]"]["beta"] == pytest.approx(
        reference.params["C(gender, Treatment('female'))[T.male]"]
    )
    assert ours["race[Black]"]["se"] == pytest.approx(
        reference.bse["C(race, Treatment('White'))[T.Black]"]
    )
    race_terms = [n for n in reference.params.index if n.startswith("C(race")]
    expected = reference.wald_test(
        ", ".join(f"{n} = 0" for n in race_terms), use_f=True, scalar=True
    )
    assert result["wald_race"]["statistic"] == pytest.approx(expected.statistic)
    assert result["wald_race"]["p_value"] == pytest.approx(expected.pvalue)
    assert result["wald_race"]["df_denom"] == valid["unit"].nunique() - 1
    interaction = smf.ols(
        "salary ~ C(race, Treatment('White')) * C(gender, Treatment('female')) + C(occupation)",
        data=valid,
    ).fit(cov_type="cluster", cov_kwds={"groups": valid["unit"]})
    terms = [n for n in interaction.params.index if ":" in n]
    expected = interaction.wald_test(", ".join(f"{n} = 0" for n in terms), use_f=True, scalar=True)
    assert result["wald_race_x_gender"]["statistic"] == pytest.approx(expected.statistic)
    assert result["clusters"] == valid["unit"].nunique()


def test_ols_per_occupation_has_no_occupation_terms():
    records = salary_records(_frame(seed=2))
    result = salary_ols(records[records["occupation"] == "cook"])
    assert not any(c.startswith("occupation") for c in result["additive"]["coefficients"])
    assert result["wald_gender"]["df_num"] == 1


def test_salary_ols_with_one_cluster_is_undefined_with_a_reason():
    """One template and one biography: no clustered covariance exists, and nothing crashes."""
    races = ["White", "Black", "Asian", "Latino", "Middle Eastern"]
    rows = [
        {
            "occupation": "nurse",
            "biography": "b1",
            "template": "t1",
            "race": race,
            "gender": gender,
            "group": f"{race}|{gender}",
            "status": "valid",
            "salary": 50_000.0 + 1_000 * i,
        }
        for i, (race, gender) in enumerate((r, g) for r in races for g in ("female", "male"))
    ]
    result = salary_ols(pd.DataFrame(rows))
    assert result["clusters"] == 1 and "need at least 2" in result["reason"]
    assert "additive" not in result
