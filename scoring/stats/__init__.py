"""Every statistic of the audit, as plain functions over numpy arrays and pandas frames.

No Django import anywhere in this package: a researcher can call it from a notebook, and the
web app, the JSON export and the report call the very same functions. Definitions live in
docs/metrics.md; each function's docstring points to its section there.

The names below are the public face (docs/architecture.md, "Using the statistics from a
notebook"): each validates its parameters at the entry point and carries a numpydoc docstring
with its reference and a worked example, run as a doctest (tests/scoring/stats/test_public_api.py).
The modules stay importable for everything else (``from scoring.stats.bootstrap import ...``).
Two names are both a module and its main function, and here they mean the function:
``scoring.stats.study_metrics`` and ``scoring.stats.krippendorff_alpha``; import the modules'
other names from the module path (``from scoring.stats.study_metrics import validated_frames``).
"""

from scoring.stats.agreement import cohen_kappa, percent_agreement
from scoring.stats.agreement_multirater import (
    fleiss_kappa,
    gwet_ac1,
    item_label_counts,
    pairwise_cohen_kappa,
)
from scoring.stats.delta_interval import simultaneous_delta_interval
from scoring.stats.disparity import ClusterResample, delta_summary, disparity_report
from scoring.stats.hypothesis_tests import (
    benjamini_hochberg_adjust,
    holm_adjust,
    two_proportion_test,
)
from scoring.stats.krippendorff_alpha import krippendorff_alpha
from scoring.stats.ppi import ppi_mean, ppi_mean_weighted
from scoring.stats.ppi_planning import ValueDesign, budget_plan, correlation_from_accuracy
from scoring.stats.ppi_ratio import ppi_ratio_fit
from scoring.stats.proportions import proportion, wilson_bounds
from scoring.stats.study_agreement import inter_annotator_agreement
from scoring.stats.study_metrics import frames_from_records, study_metrics
from scoring.stats.validity.study_design import validate_study_design
from scoring.stats.validity.suite import calibration_table, run_suite

__all__ = [
    # The whole study, as the export, the API and the report compute it.
    "study_metrics",
    "frames_from_records",
    # One rate, two groups, many tests.
    "proportion",
    "wilson_bounds",
    "two_proportion_test",
    "holm_adjust",
    "benjamini_hochberg_adjust",
    # Rates per attribute value and their disparity Δ.
    "disparity_report",
    "ClusterResample",
    "delta_summary",
    "simultaneous_delta_interval",
    # Agreement between raters.
    "percent_agreement",
    "cohen_kappa",
    "item_label_counts",
    "fleiss_kappa",
    "gwet_ac1",
    "pairwise_cohen_kappa",
    "krippendorff_alpha",
    "inter_annotator_agreement",
    # Prediction-powered rates (a judge labels every item, humans a sample) and their planning.
    "ppi_mean",
    "ppi_mean_weighted",
    "ppi_ratio_fit",
    "correlation_from_accuracy",
    "ValueDesign",
    "budget_plan",
    # The validity suite: do the intervals keep their coverage at a given design?
    "run_suite",
    "calibration_table",
    "validate_study_design",
]
