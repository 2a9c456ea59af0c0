"""PPI++ rates against ppi_py, their cluster bootstrap against a plain resampling loop, and the
study export's ``ppi`` keys (docs/metrics.md, "Prediction-powered rates")."""

import json

import numpy as np
import pandas as pd
import pytest

from scoring.stats.disparity import ClusterResample
from scoring.stats.ppi import item_terms, ppi_mean, ppi_mean_weighted, resampled_means
from scoring.stats.ppi_ratio import cross_fit_lambda
from scoring.stats.ppi_study import judge_outcome_ppi
from scoring.stats.study_metrics import frames_from_records, study_metrics
from scoring.stats.synthetic_study import synthetic_study
from tests.scoring.stats.reference_loops import delta_interval_naive

ppi_py = pytest.importorskip("ppi_py")


def _labels(rng, n, big_n, accuracy=0.85, rate=0.3):
    y = (rng.random(n) < rate).astype(float)
    f = np.where(rng.random(n) < accuracy, y, 1 - y)
    truth_u = rng.random(big_n) < rate
    f_u = np.where(rng.random(big_n) < accuracy, truth_u, ~truth_u).astype(float)
    return y, f, f_u


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("confidence", [0.9, 0.95])
def test_uniform_estimate_and_interval_equal_ppi_py(seed, confidence):
    rng = np.random.default_rng(seed)
    y, f, f_u = _labels(rng, int(rng.integers(10, 300)), int(rng.integers(20, 3000)))
    ours = ppi_mean(y, f, f_u, confidence=confidence)
    estimate = float(np.squeeze(ppi_py.ppi_mean_pointestimate(y, f, f_u)))
    low, high = (float(np.squeeze(b)) for b in ppi_py.ppi_mean_ci(y, f, f_u, alpha=1 - confidence))
    assert ours["estimate"] == pytest.approx(estimate, abs=1e-12)
    assert ours["ci_low"] == pytest.approx(low, abs=1e-12)
    assert ours["ci_high"] == pytest.approx(high, abs=1e-12)
    assert 0.0 <= ours["lambda"] <= 1.0
    assert (ours["n_labelled"], ours["n_unlabelled"]) == (y.size, f_u.size)


@pytest.mark.parametrize("seed", range(6))
def test_weighted_estimate_and_interval_equal_ppi_py_with_inverse_probability_weights(seed):
    rng = np.random.default_rng(100 + seed)
    y, f, f_u = _labels(rng, int(rng.integers(10, 300)), int(rng.integers(20, 3000)))
    f_all = np.concatenate([f, f_u])
    pi = rng.uniform(0.05, 1.0, y.size)
    ours = ppi_mean_weighted(y, f, f_all, pi)
    w = 1.0 / pi
    estimate = float(np.squeeze(ppi_py.ppi_mean_pointestimate(y, f, f_all, w=w)))
    low, high = (float(np.squeeze(b)) for b in ppi_py.ppi_mean_ci(y, f, f_all, alpha=0.05, w=w))
    assert ours["estimate"] == pytest.approx(estimate, abs=1e-12)
    assert (ours["ci_low"], ours["ci_high"]) == pytest.approx((low, high), abs=1e-12)
    assert ours["n_unlabelled"] == f_u.size


def test_lambda_one_is_classic_ppi_and_zero_the_human_mean():
    rng = np.random.default_rng(7)
    y, f, f_u = _labels(rng, 80, 900)
    classic = ppi_mean(y, f, f_u, lam=1.0)
    assert classic["estimate"] == pytest.approx(y.mean() + f_u.mean() - f.mean())
    reference = ppi_py.ppi_mean_ci(y, f, f_u, alpha=0.05, lam=1.0)
    assert classic["ci_low"] == pytest.approx(float(np.squeeze(reference[0])))
    assert ppi_mean(y, f, f_u, lam=0.0)["estimate"] == pytest.approx(y.mean())


def test_a_perfect_judge_narrows_the_interval_below_the_human_only_one():
    rng = np.random.default_rng(8)
    y, _, f_u = _labels(rng, 100, 5000)
    tuned = ppi_mean(y, y.copy(), f_u)
    human = ppi_mean(y, y.copy(), f_u, lam=0.0)
    assert tuned["lambda"] > 0.9
    assert tuned["ci_high"] - tuned["ci_low"] < 0.5 * (human["ci_high"] - human["ci_low"])


def test_degenerate_cells_are_null_with_a_reason():
    none = ppi_mean([1.0], [1.0], [0.0, 1.0])
    assert none["estimate"] is None and "fewer than two" in none["reason"]
    assert ppi_mean([1.0, 0.0], [1.0, 0.0], [])["estimate"] is None
    single = ppi_mean([0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0] * 10)
    assert single["estimate"] == 0.0 and single["ci_low"] is None
    assert single["ci_reason_code"] == "single_class"
    with pytest.raises(ValueError, match="inclusion probabilities"):
        ppi_mean_weighted([1.0, 0.0], [1.0, 0.0], [1.0, 0.0, 1.0], [0.5, 0.0])


def _clustered_items(seed, *, n_prompts=40, weighted=False):
    rng = np.random.default_rng(seed)
    rows = []
    for prompt in range(n_prompts):
        difficulty = rng.normal(0, 0.6)
        for value, shift in (("a", -1.2), ("b", -0.8), ("c", -1.0), ("neutral", -1.1)):
            truth = rng.random() < 1 / (1 + np.exp(-(shift + difficulty)))
            judge = truth if rng.random() < 0.85 else not truth
            labelled = rng.random() < 0.35
            attribute = "neutral" if value == "neutral" else "culture"
            rows.append(
                {
                    "item_id": f"i{prompt}-{value}",
                    "attribute": attribute,
                    "attribute_value": value,
                    "base_prompt_id": f"bp{prompt}",
                    "domain": f"d{prompt % 2}",
                    "generator": "g",
                    "f": float(judge),
                    "y": float(truth) if labelled else np.nan,
                    "labelled": labelled,
                    "unlabelled": not labelled,
                    "pi": rng.uniform(0.2, 0.6) if (weighted and labelled) else np.nan,
                }
            )
    return pd.DataFrame(rows)


def _loop_estimate(items, drawn, value, lam, weighted):
    """Rebuild one resampled data set from the drawn base prompts and estimate with λ fixed."""
    rows = np.concatenate([items.attrs["rows_of_cluster"][c] for c in drawn])
    data = {column: items[column].to_numpy()[rows] for column in items.columns}
    keep = data["attribute_value"] == value
    labelled, unlabelled = keep & data["labelled"], keep & data["unlabelled"]
    if weighted:
        result = ppi_mean_weighted(
            data["y"][labelled],
            data["f"][labelled],
            data["f"][labelled | unlabelled],
            data["pi"][labelled],
            lam=lam,
        )
    else:
        result = ppi_mean(data["y"][labelled], data["f"][labelled], data["f"][unlabelled], lam=lam)
    return np.nan if result["estimate"] is None else result["estimate"]


def _with_clusters(items, resample):
    items = items.assign(cluster=resample.cluster_codes)
    items.attrs["rows_of_cluster"] = {
        c: np.flatnonzero(resample.cluster_codes == c) for c in range(resample.n_clusters)
    }
    return items


@pytest.mark.parametrize("weighted", [False, True])
def test_clustered_resamples_equal_a_plain_resampling_loop(weighted):
    items = _clustered_items(3, weighted=weighted)
    resample = ClusterResample(items, n_resamples=60, rng=np.random.default_rng(0))
    items = _with_clusters(items, resample)
    y, f = items["y"].to_numpy(float), items["f"].to_numpy(float)
    pi = items["pi"].to_numpy(float)
    lam = 0.6
    for value in ("a", "neutral"):
        mask = (items["attribute_value"] == value).to_numpy()
        terms = item_terms(
            y,
            f,
            mask & items["labelled"].to_numpy(),
            mask & items["unlabelled"].to_numpy(),
            pi,
            lam=lam,
            weighted=weighted,
        )
        fast = resampled_means(
            [terms], resample.cluster_codes, resample.counts, resample.n_clusters
        )
        slow = [_loop_estimate(items, drawn, value, lam, weighted) for drawn in resample.indices]
        np.testing.assert_allclose(fast[:, 0], slow, atol=1e-12)


def _cross_fit_loop_estimate(items, drawn, value):
    """The exported rate rebuilt by hand in one resampled data set: λ_i (each labelled item's
    leave-one-out λ) and λ̄ held at their full-sample values, θ = Â / D̂ (``ppi_ratio``)."""
    rows = np.concatenate([items.attrs["rows_of_cluster"][c] for c in drawn])
    data = {column: items[column].to_numpy()[rows] for column in items.columns}
    keep = data["attribute_value"] == value
    labelled, unlabelled = keep & data["labelled"], keep & data["unlabelled"]
    if not labelled.any() or not unlabelled.any():
        return np.nan
    lam_bar, lam = items.attrs["lam_bar"][value], data["lam"][labelled]
    residual = data["y"][labelled] - lam * data["f"][labelled]
    numerator = lam_bar * data["f"][unlabelled].mean() + residual.mean()
    # The rate is Â / D̂ with D̂ = λ̄ + mean_L(1 − λ_i): 1 on the full sample, not in a resample.
    return numerator / (lam_bar + np.mean(1.0 - lam))


def test_exported_delta_and_neutral_difference_equal_the_resampling_loop():
    items = _clustered_items(5)
    n_resamples = 80
    out = judge_outcome_ppi(items, confidence=0.95, n_resamples=n_resamples, seed=2)
    resample = ClusterResample(items, n_resamples=n_resamples, rng=np.random.default_rng(2))
    items = _with_clusters(items, resample)
    items["lam"] = 0.0
    items.attrs["lam_bar"] = {}
    rates = out["rates"]
    for value in ("a", "b", "c", "neutral"):
        cell = (items["attribute_value"] == value) & items["labelled"]
        lam = cross_fit_lambda(
            items.loc[cell, "y"],
            items.loc[cell, "f"],
            np.ones(cell.sum()),
            n_imputed=int(((items["attribute_value"] == value) & items["unlabelled"]).sum()),
        )
        items.loc[cell, "lam"] = lam
        items.attrs["lam_bar"][value] = lam.mean()
        attribute = "neutral" if value == "neutral" else "culture"
        assert rates[attribute][value]["lambda"] == pytest.approx(lam.mean(), abs=1e-12)
    loop = {
        value: np.array(
            [_cross_fit_loop_estimate(items, drawn, value) for drawn in resample.indices]
        )
        for value in ("a", "b", "c", "neutral")
    }
    point = [rates["culture"][v]["estimate"] for v in ("a", "b", "c")]
    low, high = delta_interval_naive(point, np.column_stack([loop[v] for v in ("a", "b", "c")]))
    delta = out["delta"]["culture"]
    assert delta["estimate"] == pytest.approx(max(point) - min(point))
    assert (delta["ci_low"], delta["ci_high"]) == pytest.approx((low, high), abs=1e-12)
    difference = loop["b"] - loop["neutral"]
    expected = np.percentile(difference[np.isfinite(difference)], [2.5, 97.5])
    vs = out["vs_neutral"]["culture"]["b"]
    assert vs["estimate"] == pytest.approx(
        rates["culture"]["b"]["estimate"] - rates["neutral"]["neutral"]["estimate"]
    )
    assert (vs["ci_low"], vs["ci_high"]) == pytest.approx(tuple(expected), abs=1e-12)


def test_study_export_has_the_ppi_keys_with_their_shapes():
    annotations, judgments = synthetic_study(n_items=2000, n_annotated_items=600, seed=4)
    metrics = study_metrics(annotations, judgments, n_resamples=200)
    json.dumps(metrics, allow_nan=False)
    assert set(metrics["ppi"]) == {"clip-refusal@1", "vlm-judge@1"}
    for outcome in ("refusal", "erasure", "substitution", "combined"):
        block = metrics["ppi"]["vlm-judge@1"][outcome]
        rate = block["rates"]["culture"]["US"]
        assert {"estimate", "ci_low", "ci_high", "lambda", "n_labelled", "n_unlabelled"} <= set(
            rate
        )
        assert {"estimate", "ci_low", "ci_high", "max_value", "min_value"} <= set(
            block["delta"]["culture"]
        )
        assert {"estimate", "ci_low", "ci_high"} <= set(block["vs_neutral"]["culture"]["US"])
        assert {"estimate", "ci_low", "ci_high"} <= set(block["ratio_vs_neutral"]["culture"]["US"])
        bias = block["judge_bias"]["culture"]
        assert {"per_value", "warning", "method", "judge_delta", "ppi_delta"} <= set(bias)
        assert {"estimate", "ci_low", "ci_high", "judge_rate", "ppi_rate"} <= set(
            bias["per_value"]["US"]
        )
        assert "US" in block["rates_by_generator"]["generator-a"]["culture"]
        for entries in block["rates"].values():
            for entry in entries.values():
                if entry["ci_low"] is not None:  # intersected with [0, 1]
                    assert 0.0 <= entry["ci_low"] <= entry["ci_high"] <= 1.0
                if entry["estimate"] is not None:
                    assert "bootstrap_ci_low" in entry
        assert "neutral" not in block["delta"]
        error = metrics["judge_error"]["vlm-judge@1"][outcome]["culture"]
        assert {"per_value", "p_value", "p_holm", "differential"} <= set(error)
    assert "human_reference" in metrics["meta"]["ppi"]


def test_inclusion_probabilities_are_read_from_records_and_weight_the_estimate():
    annotations, judgments = synthetic_study(n_items=800, n_annotated_items=300, seed=6)
    records = annotations.assign(inclusion_probability=0.4).to_dict("records")
    frames = frames_from_records(records, judgments.to_dict("records"))
    assert "inclusion_probability" in frames[0].columns
    weighted = study_metrics(*frames, n_resamples=0)["ppi"]["vlm-judge@1"]["refusal"]
    uniform = study_metrics(annotations, judgments, n_resamples=0)["ppi"]["vlm-judge@1"]["refusal"]
    assert weighted["rates"]["culture"]["US"]["weighting"] == "inverse_probability"
    assert uniform["rates"]["culture"]["US"]["weighting"] == "uniform"
    assert weighted["delta"]["culture"]["ci_reason_code"] == "no_resamples"


def test_a_judge_without_human_labels_on_its_items_has_no_ppi_block():
    annotations, judgments = synthetic_study(n_items=800, n_annotated_items=0, seed=1)
    assert study_metrics(annotations, judgments, n_resamples=0)["ppi"] == {}


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ([0.0, 0.0], "must be a number in"),
        (["x", "x"], "must be a number in"),
        ([0.2, 0.3], "more than one"),
    ],
)
def test_bad_inclusion_probabilities_give_one_clear_error(values, message):
    annotations, judgments = synthetic_study(n_items=200, n_annotated_items=1, overlap=2, seed=1)
    annotations = annotations.assign(inclusion_probability=values)
    with pytest.raises(ValueError, match=message):
        study_metrics(annotations, judgments, n_resamples=0)


def test_label_sources_carry_the_inclusion_probability_over():
    from scoring.stats.label_sources import labels_frame

    annotations, _ = synthetic_study(n_items=300, n_annotated_items=40, overlap=2, seed=2)
    annotations = annotations.assign(inclusion_probability=0.25)
    for source, decisions in (("majority", None), ("adjudicated", {})):
        frame = labels_frame(annotations, source=source, decisions=decisions)
        assert (frame["inclusion_probability"] == 0.25).all()


def test_a_probability_sample_flag_that_is_not_a_boolean_is_refused():
    annotations, judgments = synthetic_study(n_items=200, n_annotated_items=2, overlap=1, seed=1)
    annotations = annotations.assign(probability_sample=["false", True])
    with pytest.raises(ValueError, match="probability_sample must be true, false or empty"):
        study_metrics(annotations, judgments, n_resamples=0)


def test_records_and_label_sources_carry_whether_a_probability_sample_drew_the_item():
    from scoring.stats.label_sources import labels_frame

    annotations, judgments = synthetic_study(n_items=300, n_annotated_items=40, overlap=2, seed=2)
    first = annotations["item_id"].unique()[:5]
    subset = annotations["item_id"].isin(first).to_numpy()
    annotations = annotations.assign(
        batch=np.where(subset, "disagreements", "uniform"),
        inclusion_probability=np.where(subset, np.nan, 0.25),
        probability_sample=np.where(subset, False, True).astype(object),
        probability_sample_reason=np.where(subset, "a subset: judges disagree", ""),
    )
    records = annotations.to_dict("records")
    frames = frames_from_records(records, judgments.to_dict("records"))
    block = study_metrics(*frames, n_resamples=0)["ppi"]["vlm-judge@1"]["refusal"]
    assert block["n_labels_not_probability_sample"] == subset.sum() == 10
    for source, decisions in (("majority", None), ("adjudicated", {})):
        frame = labels_frame(annotations, source=source, decisions=decisions)
        left = frame["item_id"].isin(first)
        assert (frame.loc[left, "probability_sample"] == False).all()  # noqa: E712
        assert frame.loc[~left, "probability_sample"].isna().all()
        assert (frame.loc[left, "batch"] == "disagreements").all()
        metrics = study_metrics(frame, judgments, n_resamples=0)
        refusal = metrics["ppi"]["vlm-judge@1"]["refusal"]
        assert refusal["n_labels_not_probability_sample"] == int(left.sum()) > 0
