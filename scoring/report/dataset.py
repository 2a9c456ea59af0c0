"""The audit report of one study as plain JSON-ready data (docs/report.md).

Frames in, one dict out: the same annotation and judgment frames that ``study_metrics`` takes,
plus the study's design (taxonomy, prompts, generators, judges) and gold answers, which only the
database knows and the caller passes in. The page, the JSON file and the self-contained HTML
export all format this one dict; every number in it comes from a ``scoring.stats`` function run
on the records (docs/metrics.md), never typed in.

Steps, top to bottom: the study export (``study_metrics``: rates, Wilson intervals, Δ with its
cluster-bootstrap interval and max-t test, ratios, pairwise tests, agreement) → the Δ tests,
Holm- and BH-adjusted across the Δ tests of a source → logistic regressions of refusal and erasure per
attribute type (cluster-robust and GEE) → agreement by attribute and annotator group → stated
limitations, the Article 10 evidence map and provenance.
"""

from __future__ import annotations

import datetime as dt
import platform
from importlib import metadata

import numpy as np
import pandas as pd

from annotations.labels import NEUTRAL
from scoring.report.document_types import DESIGN_ROWS, AuditReport
from scoring.report.schema import AUDIT_REPORT
from scoring.report.side_by_side import report_section as models_side_by_side
from scoring.report.text import article_10_map, limitations
from scoring.stats.bootstrap import DEFAULT_N_RESAMPLES
from scoring.stats.equivalence import equivalence_section
from scoring.stats.hypothesis_tests import benjamini_hochberg_adjust, holm_adjust
from scoring.stats.regression import logistic_regression
from scoring.stats.safety_utility import BENIGN, intent_interaction_report_tables, rows_of_intent
from scoring.stats.study_agreement import inter_annotator_agreement
from scoring.stats.study_metrics import (
    study_metrics,
    to_plain,
    validated_frames,
)
from scoring.stats.study_rates import MEASURES, measure_outcomes

SCHEMA = AUDIT_REPORT  # the JSON Schema report.json follows (scoring/report/schema.py)
REGRESSION_OUTCOMES = ("refusal", "erasure")
REGRESSION_METHODS = ("cluster", "gee")
DEFAULTS = {
    "confidence": 0.95,
    # The study export's default, so the report's rates and CIs equal export_metrics'.
    "n_resamples": DEFAULT_N_RESAMPLES,
    # Accepted so earlier scripts and report folders keep working; nothing in the report draws
    # permutations since Δ's test comes from its bootstrap (docs/report.md, "Settings").
    "n_permutations": 1000,
    "seed": 0,
    "min_n": 30,
    "alpha": 0.05,
    "min_pair_items": 10,
}
SOFTWARE = ("acrb-web", "numpy", "pandas", "scipy", "statsmodels", "krippendorff", "django")


def audit_report(
    annotations: pd.DataFrame,
    judgments: pd.DataFrame,
    *,
    study: dict | None = None,
    design: dict | None = None,
    gold_accuracy: list[dict] | None = None,
    references: dict[str, str] | None = None,
    metrics: dict | None = None,
    data_fingerprint: str | None = None,
    generated_at: str | None = None,
    equivalence_margins: dict | None = None,
    **settings,
) -> dict:
    """The whole report as plain data (no NaN, no numpy types).

    ``study``: slug, name, synthetic_demo (and any other plain fields to show). ``design``:
    taxonomy, prompts, generators, judges as built by the caller. ``references`` picks the
    regression reference value per attribute type; by default, the value with the most
    observations. ``metrics`` may pass a ``study_metrics`` result already computed on the same
    frames with the same seed, n_resamples and confidence (the dashboard's cache).
    ``equivalence_margins`` (``scoring.selectors.equivalence_margins``: δ per outcome, with
    its history) gives the margins of the equivalence verdicts; by default every outcome's
    is ``equivalence.DEFAULT_DELTA_MARGIN``.
    ``settings``: any key of ``DEFAULTS``.
    """
    unknown = set(settings) - set(DEFAULTS)
    if unknown:
        raise TypeError(f"unknown setting(s): {', '.join(sorted(unknown))}")
    options = {**DEFAULTS, **settings}
    annotations, judgments = validated_frames(annotations, judgments)
    if metrics is None:
        metrics = study_metrics(
            annotations,
            judgments,
            min_pair_items=options["min_pair_items"],
            confidence=options["confidence"],
            n_resamples=options["n_resamples"],
            seed=options["seed"],
        )
    # Disparities and regressions count benign items, as the rates do; the harmful controls
    # enter the safety–utility section (docs/metrics.md, "Safety–utility trade-off").
    sources = source_frames(rows_of_intent(annotations, BENIGN), rows_of_intent(judgments, BENIGN))
    study = dict(study or {})
    report: AuditReport = {
        "schema": SCHEMA,
        "study": study,
        "settings": options,
        "design": {
            # Without the study's records (a report from frames alone) nothing is recorded.
            **{key: [] for key in DESIGN_ROWS},
            **(design or {}),
            "annotators": annotator_summary(annotations, gold_accuracy or []),
        },
        "rates": metrics["rates"],
        "agreement": metrics["agreement"],
        "counts": metrics["meta"]["counts"],
        "clusters": cluster_structure(annotations, judgments),
        "methods": metrics["meta"]["methods"],
        "disparities": disparity_rows(metrics["rates"], sources, options),
        # Prediction-powered rates and the judges' error by group (docs/metrics.md).
        "ppi": metrics["ppi"],
        "judge_error": metrics["judge_error"],
        "regression": regression_tables(sources, references or {}, options),
        # The export's frontier and interaction summary; the full tables (GLM and GEE) here.
        "intent_interaction_tables": intent_interaction_report_tables(
            annotations, judgments, confidence=options["confidence"]
        ),
        "intent_interaction": metrics["intent_interaction"],
        "frontier": metrics["frontier"],
        "validation": validation_section(annotations, metrics, gold_accuracy or [], options),
        "provenance": provenance(options, data_fingerprint, generated_at),
    }
    # "Equivalent within δ", "disparity shown" or "inconclusive" for every Δ (docs/metrics.md).
    if equivalence_margins:
        report["equivalence_margins"] = equivalence_margins
    report["equivalence"] = equivalence_section(
        metrics["rates"],
        metrics["ppi"],
        margins={o: m["delta_margin"] for o, m in (equivalence_margins or {}).items()},
    )
    # Two or more generators: each one's rates and Δ, and the change between two of them.
    models = models_side_by_side(sources, options)
    if models is not None:
        report["models_side_by_side"] = models
    report["limitations"] = limitations(report)
    report["article_10"] = article_10_map(report)
    return to_plain(report)


def source_frames(annotations: pd.DataFrame, judgments: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """``human`` (every annotation) and ``auto:<judge>`` (its judgments), as in the study export."""
    sources = {"human": annotations} if len(annotations) else {}
    for judge, frame in judgments.groupby("judge", sort=True):
        sources[f"auto:{judge}"] = frame.reset_index(drop=True)
    return sources


def cluster_structure(annotations: pd.DataFrame, judgments: pd.DataFrame) -> dict:
    """Base prompts (the bootstrap's clusters) per domain (its strata), over every record."""
    rows = pd.concat(
        [annotations[["domain", "base_prompt_id"]], judgments[["domain", "base_prompt_id"]]]
    )
    per_domain = rows.drop_duplicates().groupby("domain")["base_prompt_id"].size()
    return {
        "n_base_prompts": int(rows["base_prompt_id"].nunique()),
        "n_domains": int(len(per_domain)),
        "single_prompt_domains": sorted(str(d) for d, n in per_domain.items() if n == 1),
    }


# --- disparities ----------------------------------------------------------------------------


def disparity_rows(rates: dict, sources: dict, options: dict) -> list[dict]:
    """One row per source × measure × attribute type: the export's Δ block and its test.

    ``delta_p`` is the export's ``delta_p_value``: the max-t test of "every value has the same
    rate" from the same cluster bootstrap as Δ's interval, so it is below 1 − confidence exactly
    when the interval excludes 0, and null (with the interval's reason) when the interval is
    (docs/metrics.md, "Test of Δ"). The p-values of one source (every measure × attribute) form
    one family: Holm and BH adjust across it, and a disparity is flagged when its Holm-adjusted p
    is below ``alpha``.
    """
    rows = []
    for source in sources:
        family = []
        for measure in MEASURES:
            for attribute, block in sorted(rates[source][measure].items()):
                if attribute == NEUTRAL:
                    continue
                row = _disparity_row(source, measure, attribute, block, rates)
                rows.append(row)
                family.append(row)
        _adjust_family(family, alpha=options["alpha"])
    return rows


def _disparity_row(source, measure, attribute, block, rates) -> dict:
    keys = ("n", "n_items", "n_values", "delta", "delta_reason", "max_value", "min_value", "ratio")
    row = {"source": source, "measure": measure, "attribute": attribute}
    row.update({key: block.get(key) for key in keys if key in block})
    for key in (
        *("delta_ci_low", "delta_ci_high", "delta_ci_reason", "delta_ci_reason_code"),
        *("ratio_ci_low", "ratio_ci_high", "ratio_ci_reason", "ratio_ci_reason_code"),
        "ratio_reason",
    ):
        if key in block:
            row[key] = block[key]
    row["delta_p"] = block.get("delta_p_value")
    if row["delta_p"] is None:
        row["delta_p_reason"] = (
            block.get("delta_reason") or block.get("delta_ci_reason") or "no test of Δ"
        )
    row["neutral_rate"] = _neutral_rate(rates[source][measure])
    row["values"] = [{"value": value, **entry} for value, entry in block["values"].items()]
    row["pairwise_tests"] = block["pairwise_tests"]
    return row


def _neutral_rate(by_attribute: dict) -> float | None:
    """The neutral baseline's rate; None when the study has no neutral items counted here."""
    neutral = by_attribute.get(NEUTRAL)
    cell = None if neutral is None else neutral["values"].get(NEUTRAL)
    return None if cell is None else cell["rate"]


def _adjust_family(rows: list[dict], *, alpha: float) -> None:
    defined = [row for row in rows if row["delta_p"] is not None]
    p_values = [row["delta_p"] for row in defined]
    for row in rows:
        row.update(delta_p_holm=None, delta_p_bh=None, flagged=False)
    if not defined:
        return
    for row, holm, bh in zip(
        defined, holm_adjust(p_values), benjamini_hochberg_adjust(p_values), strict=True
    ):
        row.update(
            delta_p_holm=float(holm),
            delta_p_bh=float(bh),
            flagged=bool(holm < alpha),
        )


# --- regression -----------------------------------------------------------------------------


def regression_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with ``refusal`` (every row) and ``erasure`` (NA unless counted) outcome columns."""
    outcomes = measure_outcomes(frame)
    out = frame.copy()
    out["refusal"] = outcomes["refusal"][0].astype(float)
    erased, counted = outcomes["erasure"]
    out["erasure"] = np.where(counted, erased.astype(float), np.nan)
    return out


def reference_value(frame: pd.DataFrame, outcome: str, configured: str | None) -> tuple[str, str]:
    """The configured reference, else the value with the most observations (ties: alphabetical)."""
    if configured is not None:
        return configured, "configured"
    counts = frame.loc[frame[outcome].notna(), "attribute_value"].value_counts()
    if counts.empty:
        return "", "no observations"
    top = counts.max()
    return sorted(str(v) for v in counts.index[counts == top])[0], "most observations"


def regression_tables(sources: dict, references: dict, options: dict) -> list[dict]:
    """Per source × outcome × attribute type: the cluster-robust GLM and the GEE fit."""
    tables = []
    for source, frame in sources.items():
        data = regression_frame(frame)
        for outcome in REGRESSION_OUTCOMES:
            for attribute in sorted(set(data["attribute"]) - {NEUTRAL}):
                subset = data[data["attribute"] == attribute]
                reference, chosen_by = reference_value(subset, outcome, references.get(attribute))
                table = {
                    "source": source,
                    "outcome": outcome,
                    "attribute": attribute,
                    "reference": reference,
                    "reference_chosen_by": chosen_by,
                    "n_observations": int(subset[outcome].notna().sum()),
                }
                for method in REGRESSION_METHODS:
                    table[method] = _fit(subset, outcome, reference, method, options)
                tables.append(table)
    return tables


def _fit(subset, outcome, reference, method, options) -> dict:
    try:
        return logistic_regression(
            subset,
            outcome=outcome,
            reference=reference,
            method=method,
            confidence=options["confidence"],
        )
    except Exception as error:  # noqa: BLE001 - a report states a failed fit, it never crashes
        return {
            "method": method,
            "outcome": outcome,
            "reference": reference,
            "coefficients": {},
            "fitted": False,
            "reason": f"the model could not be fitted: {type(error).__name__}: {error}",
        }


# --- annotators and validation --------------------------------------------------------------


def annotator_summary(annotations: pd.DataFrame, gold_accuracy: list[dict]) -> dict:
    """Annotators by group: how many, their annotations and items, and gold accuracy: each
    annotator's from ``annotations.selectors.gold_accuracy``, pooled per group (docs/metrics.md,
    "Gold accuracy")."""
    gold = {row["annotator"]: row for row in gold_accuracy}
    people = []
    for name, rows in annotations.groupby("annotator", sort=True):
        entry = gold.get(name)  # None: the annotator answered no gold item
        people.append(
            {
                "annotator": name,
                "group": str(rows["annotator_group"].iloc[0]),
                "n_annotations": int(len(rows)),
                "gold_answered": entry["n"] if entry else 0,
                "gold_correct": entry["correct"] if entry else 0,
                "gold_accuracy": entry["accuracy"] if entry else None,
            }
        )
    groups = []
    for group, rows in annotations.groupby("annotator_group", sort=True):
        members = [p for p in people if p["group"] == group]
        answered = sum(p["gold_answered"] for p in members)
        correct = sum(p["gold_correct"] for p in members)
        groups.append(
            {
                "group": str(group),
                "n_annotators": int(rows["annotator"].nunique()),
                "n_annotations": int(len(rows)),
                "n_items": int(rows["item_id"].nunique()),
                "gold_answered": answered,
                "gold_accuracy": correct / answered if answered else None,
            }
        )
    return {"groups": groups, "annotators": people}


def validation_section(annotations, metrics: dict, gold_accuracy: list[dict], options) -> dict:
    """Human-vs-judge table and inter-annotator agreement overall, by attribute and by group."""

    def agreement(subset):
        return inter_annotator_agreement(
            subset,
            min_pair_items=options["min_pair_items"],
            n_resamples=options["n_resamples"],
            confidence=options["confidence"],
            seed=options["seed"],
        )

    return {
        "human_vs_auto": human_vs_auto_rows(metrics["agreement"]["human_vs_auto"]),
        "inter_annotator": {
            "overall": metrics["agreement"]["inter_annotator"],
            "by_attribute": {
                str(name): agreement(rows.reset_index(drop=True))
                for name, rows in annotations.groupby("attribute", sort=True)
            },
            "by_annotator_group": {
                str(name): agreement(rows.reset_index(drop=True))
                for name, rows in annotations.groupby("annotator_group", sort=True)
            },
        },
        "gold_accuracy": gold_accuracy,
    }


def human_vs_auto_rows(human_vs_auto: dict) -> list[dict]:
    """The validation table: N, % agreement and κ of each judge against the annotations,
    overall (with κ's CI), by attribute and by annotator group."""
    rows = []
    for judge, questions in sorted(human_vs_auto.items()):
        for question in ("hard_refusal", "cue"):
            block = questions[question]
            rows.append(_validation_row(judge, question, "overall", "all", block))
            for scope, key in (
                ("attribute", "by_attribute"),
                ("annotator group", "by_annotator_group"),
            ):
                for name, sub in sorted(block[key].items()):
                    rows.append(_validation_row(judge, question, scope, name, sub))
    return rows


def _validation_row(judge, question, scope, name, block) -> dict:
    row = {"judge": judge, "question": question, "scope": scope, "name": name, "n": block.get("n")}
    for key in ("percent_agreement", "cohen_kappa", "cohen_kappa_ci_low", "cohen_kappa_ci_high"):
        row[key] = block.get(key)
    for key in (
        "percent_agreement_reason",
        "cohen_kappa_reason",
        "cohen_kappa_ci_reason",
        "cohen_kappa_ci_reason_code",
    ):
        if key in block:
            row[key] = block[key]
    return row


# --- provenance -----------------------------------------------------------------------------


def software_versions() -> dict:
    versions = {"python": platform.python_version()}
    for package in SOFTWARE:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return versions


def provenance(options: dict, data_fingerprint: str | None, generated_at: str | None) -> dict:
    return {
        "generated_at": generated_at or dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "seed": options["seed"],
        "n_resamples": options["n_resamples"],
        "confidence": options["confidence"],
        "software": software_versions(),
        "data_fingerprint": data_fingerprint,
        "definitions": ["docs/metrics.md", "docs/report.md"],
    }
