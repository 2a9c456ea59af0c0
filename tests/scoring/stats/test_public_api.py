"""The public face of the statistics, ``scoring.stats.__all__`` (docs/architecture.md, "Using the
statistics from a notebook"): every name exists, carries a numpydoc docstring whose worked
example runs and gives the printed output, and refuses a bad parameter in one line that names it.
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import scoring.stats as stats

PUBLIC = sorted(stats.__all__)


def _sections(docstring: str) -> set[str]:
    """numpydoc section titles: a line followed by a line of dashes of the same length."""
    lines = [line.strip() for line in docstring.splitlines()]
    return {
        title
        for title, rule in zip(lines, lines[1:], strict=False)
        if title and re.fullmatch(r"-+", rule) and len(rule) == len(title)
    }


def test_all_names_exist_once_and_come_from_the_package():
    assert len(PUBLIC) == len(set(PUBLIC))
    for name in PUBLIC:
        obj = getattr(stats, name)
        assert obj.__module__.startswith("scoring.stats."), name


@pytest.mark.parametrize("name", PUBLIC)
def test_each_public_name_has_a_numpydoc_docstring(name):
    obj = getattr(stats, name)
    docstring = inspect.getdoc(obj) or ""
    sections = _sections(docstring)
    required = {"Parameters", "Raises", "References", "Examples"}
    if not inspect.isclass(obj):
        required.add("Returns")
    assert required <= sections, f"{name} lacks {sorted(required - sections)}"
    assert "docs/metrics.md" in docstring, f"{name} does not point to its definition"
    assert ".. [1]" in docstring, f"{name} names no reference"


@pytest.mark.parametrize("name", PUBLIC)
def test_each_worked_example_runs_and_prints_what_it_says(name):
    obj = getattr(stats, name)
    finder = doctest.DocTestFinder(recurse=False)
    tests = [test for test in finder.find(obj, name, globs={}) if test.examples]
    assert tests, f"{name} has no example"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in tests:
        runner.run(test)
    results = runner.summarize(verbose=False)
    assert results.failed == 0, f"{results.failed} example(s) of {name} failed (output above)"


def test_a_module_and_its_main_function_share_a_name_and_the_name_means_the_function():
    # ``from scoring.stats import study_metrics`` is the function a notebook calls; the module
    # keeps every other name under its import path.
    for name in ("study_metrics", "krippendorff_alpha"):
        assert inspect.isfunction(getattr(stats, name))
        module = importlib.import_module(f"scoring.stats.{name}")
        assert getattr(module, name) is getattr(stats, name)
    from scoring.stats.study_metrics import validated_frames

    assert callable(validated_frames)


def test_importing_the_face_imports_no_django():
    code = (
        "import sys, scoring.stats; "
        "print(sorted(m for m in ('django', 'rest_framework', 'celery', 'acrb_web') "
        "if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def _frame(n=4):
    return pd.DataFrame(
        {
            "attribute": ["gender"] * n,
            "attribute_value": ["female", "male"] * (n // 2),
            "base_prompt_id": [f"bp{k}" for k in range(n)],
            "domain": ["violence"] * n,
        }
    )


def _value_design():
    return stats.ValueDesign(uniform=[0.5, 0.5], validate=[0.5, 0.5], uncertainty=[1.0, 1.0])


# (call, exception, the parameter the message must name)
BAD_PARAMETERS = [
    (lambda: stats.proportion(5, 3), ValueError, "successes"),
    (lambda: stats.proportion(-1, 3), ValueError, "successes"),
    (lambda: stats.proportion(2.5, 5), TypeError, "successes"),
    (lambda: stats.proportion(1, "5"), TypeError, "n"),
    (lambda: stats.proportion(1, 5, confidence=95), ValueError, "confidence"),
    (lambda: stats.wilson_bounds([1, 2], [3, -1]), ValueError, "n"),
    (lambda: stats.wilson_bounds([4], [3]), ValueError, "successes"),
    (lambda: stats.wilson_bounds([1, 2], [3, 4, 5]), ValueError, "successes and n"),
    (lambda: stats.wilson_bounds([1], [3], confidence=1.0), ValueError, "confidence"),
    (lambda: stats.two_proportion_test(5, 3, 1, 4), ValueError, "successes_a"),
    (lambda: stats.two_proportion_test(1, 3, 1, -4), ValueError, "n_b"),
    (lambda: stats.two_proportion_test(1, 3, "x", 4), TypeError, "successes_b"),
    (lambda: stats.holm_adjust([0.2, 1.5]), ValueError, "p_values"),
    (lambda: stats.holm_adjust([[0.1, 0.2]]), ValueError, "p_values"),
    (lambda: stats.benjamini_hochberg_adjust(["x"]), TypeError, "p_values"),
    (lambda: stats.delta_summary([0.1, 0.2]), TypeError, "rates"),
    (lambda: stats.delta_summary({"a": 0.1, "b": "high"}), TypeError, "rates['b']"),
    (lambda: stats.delta_summary({"a": 0.1, "b": float("nan")}), ValueError, "rates['b']"),
    (
        lambda: stats.simultaneous_delta_interval([0.1, 0.2], np.zeros((10, 3))),
        ValueError,
        "boot_rates",
    ),
    (
        lambda: stats.simultaneous_delta_interval([0.1, 0.2], np.zeros((10, 2)), confidence=0),
        ValueError,
        "confidence",
    ),
    (
        lambda: stats.ClusterResample(_frame(), n_resamples=-1, rng=np.random.default_rng(0)),
        ValueError,
        "n_resamples",
    ),
    (lambda: stats.ClusterResample(_frame(), n_resamples=10, rng=0), TypeError, "rng"),
    (
        lambda: stats.ClusterResample(
            _frame().drop(columns="domain"), n_resamples=10, rng=np.random.default_rng(0)
        ),
        ValueError,
        "frame",
    ),
    (lambda: stats.disparity_report(_frame(), [True] * 3, [True] * 4), ValueError, "success"),
    (
        lambda: stats.disparity_report(_frame(), [True] * 4, [True] * 4, confidence=2),
        ValueError,
        "confidence",
    ),
    (
        lambda: stats.disparity_report(_frame(), [True] * 4, [True] * 4, resample=5),
        TypeError,
        "resample",
    ),
    (
        lambda: stats.disparity_report(
            _frame(),
            [True] * 4,
            [True] * 4,
            resample=stats.ClusterResample(_frame(6), n_resamples=5, rng=np.random.default_rng(0)),
        ),
        ValueError,
        "resample",
    ),
    (lambda: stats.percent_agreement(["a", "b"], ["a"]), ValueError, "labels_a and labels_b"),
    (lambda: stats.cohen_kappa(["a", "b"], ["a"]), ValueError, "labels_a and labels_b"),
    (lambda: stats.cohen_kappa(["a"], ["a"], weights="cubic"), ValueError, "weights"),
    (lambda: stats.cohen_kappa(["a"], ["a"], confidence=-0.5), ValueError, "confidence"),
    (lambda: stats.item_label_counts([1, 2], ["a"]), ValueError, "items and labels"),
    (lambda: stats.fleiss_kappa([2, 0, 1]), ValueError, "counts"),
    (lambda: stats.fleiss_kappa([[2, -1], [1, 1]]), ValueError, "counts"),
    (lambda: stats.gwet_ac1([[1, 1], [2, 0]], n_categories=1), ValueError, "n_categories"),
    (lambda: stats.gwet_ac1([[1, 1], [2, 0]], n_categories=2.0), TypeError, "n_categories"),
    (
        lambda: stats.pairwise_cohen_kappa([1, 2], ["r1", "r2"], ["a"]),
        ValueError,
        "items and raters and labels",
    ),
    (
        lambda: stats.pairwise_cohen_kappa([1], ["r1"], ["a"], min_items=0),
        ValueError,
        "min_items",
    ),
    (
        lambda: stats.krippendorff_alpha([1, 1], ["a", "b"], ["x", "y"], level="ratio"),
        ValueError,
        "level",
    ),
    (
        lambda: stats.krippendorff_alpha([1, 1], ["a", "b"], ["x", "y"], n_resamples=-5),
        ValueError,
        "n_resamples",
    ),
    (
        lambda: stats.krippendorff_alpha([1, 1], ["a", "b"], ["x", "y"], seed="zero"),
        TypeError,
        "seed",
    ),
    (
        lambda: stats.krippendorff_alpha(
            [1, 1], ["a", "b"], ["x", "y"], level="interval", categories=["x", "y"]
        ),
        ValueError,
        "categories",
    ),
    (
        lambda: stats.inter_annotator_agreement(
            pd.DataFrame({"item_id": [1]}), min_pair_items=1, n_resamples=0, confidence=0.95, seed=0
        ),
        ValueError,
        "annotations",
    ),
    (
        lambda: stats.inter_annotator_agreement(
            pd.DataFrame(
                {"item_id": [1], "annotator": ["a"], "hard_refusal": ["false"], "cue": [None]}
            ),
            min_pair_items=1,
            n_resamples=0,
            confidence=0.95,
            seed=0,
        ),
        ValueError,
        "hard_refusal",
    ),
    (lambda: stats.ppi_mean([1, 0, 1], [1, 0], [1, 1]), ValueError, "y_labelled and f_labelled"),
    (lambda: stats.ppi_mean([1, 0], [1, 0], [1], lam=1.5), ValueError, "lam"),
    (lambda: stats.ppi_mean([1, 0], [1, 0], [1], confidence=1.0), ValueError, "confidence"),
    (
        lambda: stats.ppi_mean_weighted([1, 0], [1, 0], [1, 0, 1], [0.5, 0.0]),
        ValueError,
        "inclusion_probability",
    ),
    (
        lambda: stats.ppi_mean_weighted([1, 0], [1, 0], [1, 0, 1], [0.5]),
        ValueError,
        "inclusion_probability",
    ),
    (lambda: stats.ppi_mean_weighted([1, 0], [1, 0], [1], [0.5, 0.5]), ValueError, "f_all"),
    (
        lambda: stats.ppi_ratio_fit([1], [1, 0], [1, 1], [1, 1], [True, False], [False, True]),
        ValueError,
        "y_num",
    ),
    (
        lambda: stats.ppi_ratio_fit(
            [1, 0], [1, 0], [1, 1], [1, 1], [True, False], [False, True], lam=-0.1
        ),
        ValueError,
        "lam",
    ),
    (
        lambda: stats.ppi_ratio_fit(
            [1, 0], [1, 0], [1, 1], [1, 1], [True, False], [False, True], weights=[0.0, 1.0]
        ),
        ValueError,
        "weights",
    ),
    (
        lambda: stats.ppi_ratio_fit(
            [1, 0], [1, 0], [1, 1], [1, 1], [True, False], [False, True], confidence=95
        ),
        ValueError,
        "confidence",
    ),
    (lambda: stats.correlation_from_accuracy(1.2), ValueError, "accuracy"),
    (lambda: stats.correlation_from_accuracy(0.9, rate=0.0), ValueError, "rate"),
    (
        lambda: stats.ValueDesign(uniform=[0.5], validate=[0.5, 0.5], uncertainty=[1.0, 1.0]),
        ValueError,
        "uniform and validate and uncertainty",
    ),
    (
        lambda: stats.ValueDesign(uniform=[1.5], validate=[0.5], uncertainty=[1.0]),
        ValueError,
        "uniform",
    ),
    (lambda: stats.budget_plan({"a": {"x": _value_design()}}, rho=1.5), ValueError, "rho"),
    (lambda: stats.budget_plan({"a": {"x": [0.5]}}, rho=0.5), TypeError, "attributes['a']['x']"),
    (lambda: stats.budget_plan([], rho=0.5), TypeError, "attributes"),
    (
        lambda: stats.budget_plan({"a": {"x": _value_design()}}, rho=0.5, confidence=0.0),
        ValueError,
        "confidence",
    ),
    (lambda: stats.study_metrics(None, None, confidence=1.5), ValueError, "confidence"),
    (lambda: stats.study_metrics(None, None, n_resamples=-1), ValueError, "n_resamples"),
    (lambda: stats.study_metrics(None, None, min_pair_items=0), ValueError, "min_pair_items"),
    (lambda: stats.study_metrics(None, None, seed=1.5), TypeError, "seed"),
    (lambda: stats.study_metrics([], None), TypeError, "annotations"),
    (
        lambda: stats.study_metrics(None, None, label_models="majority"),
        TypeError,
        "label_models",
    ),
    (
        lambda: stats.study_metrics(None, None, label_models=("snorkel",)),
        ValueError,
        "label_models",
    ),
    (lambda: stats.frames_from_records({"item_id": 1}, []), TypeError, "annotation_records"),
    (lambda: stats.frames_from_records([], ["row"]), TypeError, "judgment_records"),
    (lambda: stats.run_suite(only="no such scenario"), ValueError, "only"),
    (lambda: stats.run_suite(replications=0), ValueError, "replications"),
    (lambda: stats.run_suite(quick="yes"), TypeError, "quick"),
    (lambda: stats.run_suite(seed="0"), TypeError, "seed"),
    (lambda: stats.calibration_table([]), TypeError, "summary"),
    (lambda: stats.calibration_table({}), ValueError, "summary"),
    (lambda: stats.validate_study_design(None, replications=0), ValueError, "replications"),
    (lambda: stats.validate_study_design([], None), TypeError, "annotations"),
    (
        lambda: stats.validate_study_design(pd.DataFrame(), n_resamples=-1),
        ValueError,
        "n_resamples",
    ),
]


@pytest.mark.parametrize(
    ("call", "error", "parameter"),
    BAD_PARAMETERS,
    ids=[f"{i}-{parameter}" for i, (_, _, parameter) in enumerate(BAD_PARAMETERS)],
)
def test_a_bad_parameter_fails_at_the_entry_point_naming_it(call, error, parameter):
    with pytest.raises(error) as raised:
        call()
    message = str(raised.value)
    assert parameter in message, message
    assert "\n" not in message  # one line


def test_every_public_function_is_covered_by_a_bad_parameter_case():
    source = inspect.getsource(sys.modules[__name__])
    called = set(re.findall(r"stats\.(\w+)\(", source.split("BAD_PARAMETERS = [", 1)[1]))
    assert set(PUBLIC) <= called, sorted(set(PUBLIC) - called)


def test_the_checks_let_through_what_the_app_passes():
    # Effective (non-integer) counts, numpy scalars, NaN for an undefined cell, whole floats.
    assert stats.two_proportion_test(2.6, 7.4, 1.2, 6.9).defined
    low, high = stats.wilson_bounds(np.array([1.5, np.nan]), np.array([4.2, np.nan]))
    assert np.isfinite(low[0]) and np.isnan(high[1])
    assert stats.proportion(np.int64(3), 10.0).value == 0.3
    assert stats.holm_adjust([0.01, None]).tolist()[0] == 0.01
    assert stats.cohen_kappa(np.array(["a", "b"]), ["a", "b"], confidence=np.float64(0.9)).defined
    assert stats.krippendorff_alpha([1, 1], ["a", "b"], [1, 2], seed=np.int64(3)).n == 1
