"""Logistic regression against statsmodels' formula interface, and its undefined cases."""

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
import statsmodels.formula.api as smf

from scoring.stats.regression import logistic_regression


def regression_frame(seed, n_prompts=120):
    rng = np.random.default_rng(seed)
    rows = []
    for prompt in range(n_prompts):
        intercept = rng.normal(-1.0, 0.6)
        for value, shift in (("US", 0.0), ("Kenyan", 0.9), ("Korean", 0.3)):
            for generator in ("g1", "g2"):
                p = 1 / (1 + np.exp(-(intercept + shift + (0.4 if generator == "g2" else 0.0))))
                rows.append(
                    (
                        value,
                        f"domain-{prompt % 4}",
                        generator,
                        f"bp-{prompt}",
                        float(rng.random() < p),
                    )
                )
    return pd.DataFrame(
        rows, columns=["attribute_value", "domain", "generator", "base_prompt_id", "refused"]
    )


def test_cluster_robust_fit_matches_formula_reference():
    frame = regression_frame(0)
    ours = logistic_regression(frame, outcome="refused", reference="US")
    groups = pd.factorize(frame["base_prompt_id"])[0]
    reference = smf.glm(
        "refused ~ C(attribute_value, Treatment('US')) + domain + generator",
        frame,
        family=sm.families.Binomial(),
    ).fit(cov_type="cluster", cov_kwds={"groups": groups})
    for value in ("Kenyan", "Korean"):
        name = f"C(attribute_value, Treatment('US'))[T.{value}]"
        assert ours["coefficients"][value]["beta"] == pytest.approx(reference.params[name])
        assert ours["coefficients"][value]["standard_error"] == pytest.approx(reference.bse[name])
        assert ours["coefficients"][value]["p_value"] == pytest.approx(reference.pvalues[name])
        low, high = np.exp(reference.conf_int().loc[name])
        assert ours["coefficients"][value]["ci_low"] == pytest.approx(low)
        assert ours["coefficients"][value]["ci_high"] == pytest.approx(high)
    assert ours["fitted"] and ours["coefficients"]["Kenyan"]["odds_ratio"] > 1.5


def test_gee_variant_recovers_direction():
    ours = logistic_regression(regression_frame(1), outcome="refused", reference="US", method="gee")
    assert ours["fitted"] and ours["coefficients"]["Kenyan"]["beta"] > 0


def test_separated_level_is_reported_undefined_and_dropped():
    frame = regression_frame(2)
    frame.loc[frame.attribute_value == "Korean", "refused"] = 0.0
    ours = logistic_regression(frame, outcome="refused", reference="US")
    assert ours["coefficients"]["Korean"]["beta"] is None
    assert "separation" in ours["coefficients"]["Korean"]["reason"]
    assert ours["coefficients"]["Kenyan"]["beta"] is not None


def test_separated_reference_makes_model_undefined():
    frame = regression_frame(3)
    frame.loc[frame.attribute_value == "US", "refused"] = 1.0
    ours = logistic_regression(frame, outcome="refused", reference="US")
    assert not ours["fitted"] and "separation" in ours["reason"]
    assert (
        "no rows" in logistic_regression(frame, outcome="refused", reference="Atlantis")["reason"]
    )
