"""The audit report dict (Django-free): its numbers are the stats functions' own, regression on a
planted effect finds its sign, undefined fits say why, and the JSON holds no NaN."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from scoring.report.dataset import audit_report, reference_value, regression_frame
from scoring.report.figures import figure_image, figure_list, figure_rows
from scoring.report.study_tables import display_report
from scoring.stats.hypothesis_tests import holm_adjust
from scoring.stats.regression import logistic_regression
from scoring.stats.study_agreement import inter_annotator_agreement
from scoring.stats.study_metrics import study_metrics
from scoring.stats.synthetic_study import synthetic_study

SETTINGS = {"n_resamples": 200, "n_permutations": 200, "seed": 3}


@pytest.fixture(scope="module")
def frames():
    return synthetic_study(n_items=720, n_annotated_items=240, overlap=2, seed=5)


@pytest.fixture(scope="module")
def report(frames):
    annotations, judgments = frames
    return audit_report(
        annotations,
        judgments,
        study={"slug": "synthetic", "name": "Synthetic", "synthetic_demo": True},
        gold_accuracy=[{"annotator": "annotator-00", "n": 4, "correct": 3, "accuracy": 0.75}],
        generated_at="2026-01-01T00:00:00+00:00",
        **SETTINGS,
    )


def test_json_is_strict_and_complete(report):
    text = json.dumps(report, allow_nan=False)
    assert "NaN" not in text and "Infinity" not in text
    for section in (
        "study",
        "design",
        "rates",
        "disparities",
        "regression",
        "validation",
        "limitations",
        "article_10",
        "provenance",
    ):
        assert section in report
    assert report["provenance"]["seed"] == 3 and report["provenance"]["n_resamples"] == 200
    assert report["provenance"]["software"]["numpy"] == np.__version__


def test_rates_and_agreement_are_the_study_export(frames, report):
    annotations, judgments = frames
    metrics = study_metrics(annotations, judgments, n_resamples=200, seed=3)
    assert report["rates"] == metrics["rates"]
    assert report["agreement"] == metrics["agreement"]
    row = next(
        r
        for r in report["disparities"]
        if (r["source"], r["measure"], r["attribute"]) == ("human", "refusal", "culture")
    )
    block = metrics["rates"]["human"]["refusal"]["culture"]
    assert row["delta"] == block["delta"] and row["delta_ci_low"] == block["delta_ci_low"]
    assert row["pairwise_tests"] == block["pairwise_tests"]
    assert {v["value"]: v["rate"] for v in row["values"]} == {
        k: v["rate"] for k, v in block["values"].items()
    }
    # The prediction-powered section and the judges' error by group are the export's own.
    assert report["ppi"] == metrics["ppi"] and report["judge_error"] == metrics["judge_error"]
    delta = report["ppi"]["vlm-judge@1"]["erasure"]["delta"]["culture"]
    assert {"estimate", "ci_low", "ci_high", "max_value", "min_value"} <= set(delta)


def test_delta_p_is_the_export_test_and_holm_runs_per_source(frames, report):
    annotations, judgments = frames
    metrics = study_metrics(annotations, judgments, n_resamples=200, seed=3)
    rows = [r for r in report["disparities"] if r["source"] == "auto:vlm-judge@1"]
    row = next(r for r in rows if (r["measure"], r["attribute"]) == ("erasure", "religion"))
    block = metrics["rates"]["auto:vlm-judge@1"]["erasure"]["religion"]
    assert row["delta_p"] == block["delta_p_value"] is not None
    assert "permutation_p" not in row and "permutation_n" not in row
    tested = [r for r in rows if r["delta_p"] is not None]
    assert [r["delta_p_holm"] for r in tested] == pytest.approx(
        list(holm_adjust([r["delta_p"] for r in tested]))
    )
    assert all(r["flagged"] == (r["delta_p_holm"] < 0.05) for r in tested)
    assert all(r["delta_p_holm"] is None and not r["flagged"] for r in rows if r not in tested)


def test_regression_tables_are_direct_calls(frames, report):
    annotations, _ = frames
    data = regression_frame(annotations)
    subset = data[data["attribute"] == "culture"]
    table = next(
        t
        for t in report["regression"]
        if (t["source"], t["outcome"], t["attribute"]) == ("human", "erasure", "culture")
    )
    for method in ("cluster", "gee"):
        direct = logistic_regression(
            subset, outcome="erasure", reference=table["reference"], method=method
        )
        assert direct["fitted"] == table[method]["fitted"]
        assert direct["coefficients"].keys() == table[method]["coefficients"].keys()
        for value, coefficient in direct["coefficients"].items():
            for key in ("beta", "odds_ratio", "ci_low", "ci_high", "p_value"):
                assert table[method]["coefficients"][value][key] == pytest.approx(coefficient[key])


def test_inter_annotator_by_attribute_is_a_direct_call(frames, report):
    annotations, _ = frames
    subset = annotations[annotations["attribute"] == "culture"].reset_index(drop=True)
    direct = inter_annotator_agreement(
        subset, min_pair_items=10, n_resamples=200, confidence=0.95, seed=3
    )
    assert report["validation"]["inter_annotator"]["by_attribute"]["culture"] == json.loads(
        json.dumps(direct)
    )


def _planted(seed=0, n_prompts=60):
    """Refusal 10% for A, 45% for B, 25% for C; B has the fewest rows, A the most."""
    rng = np.random.default_rng(seed)
    rows = []
    for prompt in range(n_prompts):
        for value, p, copies in (("A", 0.10, 4), ("B", 0.45, 2), ("C", 0.25, 3)):
            for copy in range(copies):
                refused = rng.random() < p
                rows.append(
                    {
                        "item_id": f"i{prompt}-{value}-{copy}",
                        "attribute": "culture",
                        "attribute_value": value,
                        "base_prompt_id": f"bp{prompt}",
                        "domain": f"d{prompt % 3}",
                        "generator": f"g{copy % 2}",
                        "mode": "t2i",
                        "judge": "j@1",
                        "hard_refusal": refused,
                        "cue": None
                        if refused
                        else ("erased" if rng.random() < 0.3 else "retained"),
                    }
                )
    return pd.DataFrame(rows)


def test_regression_recovers_a_planted_effect_against_the_most_observed_reference():
    judgments = _planted()
    report = audit_report(None, judgments, **SETTINGS)
    table = next(t for t in report["regression"] if t["outcome"] == "refusal")
    assert table["reference"] == "A" and table["reference_chosen_by"] == "most observations"
    for method in ("cluster", "gee"):
        fit = table[method]
        assert fit["fitted"], fit.get("reason")
        assert fit["coefficients"]["B"]["beta"] > 0 and fit["coefficients"]["B"]["p_value"] < 0.01
        assert fit["coefficients"]["B"]["odds_ratio"] > fit["coefficients"]["C"]["odds_ratio"] > 1
    configured = audit_report(None, judgments, references={"culture": "B"}, **SETTINGS)
    table = next(t for t in configured["regression"] if t["outcome"] == "refusal")
    assert table["reference"] == "B" and table["reference_chosen_by"] == "configured"
    assert table["cluster"]["coefficients"]["A"]["beta"] < 0


def test_reference_ties_resolve_alphabetically():
    frame = pd.DataFrame({"attribute_value": ["b", "a", "b", "a"], "refusal": [1.0, 0.0, 0.0, 1.0]})
    assert reference_value(frame, "refusal", None) == ("a", "most observations")


def test_undefined_fits_carry_a_reason_and_never_raise():
    judgments = _planted(n_prompts=6)
    judgments["hard_refusal"] = (
        judgments["attribute_value"] == "B"
    )  # B always, others never: separated
    judgments.loc[judgments["hard_refusal"], "cue"] = None
    report = audit_report(None, judgments, **SETTINGS)
    table = next(t for t in report["regression"] if t["outcome"] == "refusal")
    for method in ("cluster", "gee"):
        assert table[method]["fitted"] is False and table[method]["reason"]
    assert any(item["kind"] == "regression_not_fitted" for item in report["limitations"])
    json.dumps(report, allow_nan=False)


def test_empty_study_gives_a_report_not_an_error():
    report = audit_report(None, None, study={"slug": "empty"}, **SETTINGS)
    assert report["disparities"] == [] and report["regression"] == []
    kinds = {item["kind"] for item in report["limitations"]}
    assert {"no_human_labels", "no_judges"} <= kinds
    display_report(report)
    json.dumps(report, allow_nan=False)


def test_limitations_state_synthetic_data_and_small_samples(report):
    kinds = {item["kind"]: item for item in report["limitations"]}
    assert (
        "synthetic_data" in kinds
        and "kappa_ci_independence" in kinds
        and "multiple_testing" in kinds
    )
    small = kinds["small_samples"]
    smallest = min(v["n"] for row in report["disparities"] for v in row["values"])
    assert smallest < 30 and small["n_cells"] >= 1


def test_every_figure_draws_and_has_rows(report):
    specs = figure_list(report)
    kinds = {spec["kind"] for spec in specs}
    assert kinds == {"rates", "delta", "odds"}
    for kind in ("delta", "odds"):
        spec = next(s for s in specs if s["kind"] == kind)
        assert figure_image(report, spec, "svg").lstrip().startswith(b"<?xml")
        assert figure_image(report, spec, "png").startswith(b"\x89PNG")
        rows, columns = figure_rows(report, spec)
        assert rows and set(rows[0]) <= set(columns)


def test_display_strings(report):
    display = display_report(report)
    assert display["summary"]["rows"][0]["delta"].count("[") == 1
    assert {row["scope"] for row in display["inter_annotator"]} == {
        "overall",
        "attribute",
        "annotator group",
    }
