"""The validated-metrics document of a study (rates, agreement, gold accuracy, provenance) and
the dashboard's validation table (docs/metrics.md).

The numbers come from ``scoring.stats.study_metrics`` on the frames ``annotations.selectors``
builds (``study_metric_frames``); the ``export_metrics`` command, the metrics API, the staff statistics fragment and
``run_audit`` all read this one document.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

import pandas as pd
from django.core.cache import cache
from django.utils import timezone

from annotations import selectors
from annotations.adjudication import disputes as adjudication
from annotations.exports.datasets import ExportDataset
from annotations.models import Study
from scoring import selectors as scoring_selectors
from scoring.report.dataset import human_vs_auto_rows
from scoring.report.document_types import StudyMetrics
from scoring.report.schema import STUDY_METRICS
from scoring.stats.bootstrap import DEFAULT_N_RESAMPLES
from scoring.stats.equivalence import equivalence_section
from scoring.stats.label_models import AGGREGATED_LABEL_ROW, aggregate_labels
from scoring.stats.label_sensitivity import DEFAULT_METHODS as DEFAULT_LABEL_MODELS
from scoring.stats.label_sources import ADJUDICATED, LABEL_SOURCES, POOLED, labels_frame
from scoring.stats.study_metrics import frames_from_records, study_metrics

T = TypeVar("T")


def study_metric_frames(
    *, study: Study, labels: str = POOLED, seed: int = 0
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The two frames ``scoring.stats.study_metrics`` takes (gold items left out), with the
    columns it defines (ANNOTATION_COLUMNS, JUDGMENT_COLUMNS).

    The one place the statistics' input is built: the answers of annotators whose labels staff
    excluded are left out (by ``frames_from_records``; they stay in the export), and ``labels``
    picks the label source (docs/metrics.md, "Label sources").
    """
    annotations, judgments = frames_from_records(
        selectors.annotation_rows(study=study), selectors.judgment_rows(study=study)
    )
    decisions = adjudication.adjudicated_labels(study=study) if labels == ADJUDICATED else None
    annotations = labels_frame(annotations, source=labels, decisions=decisions, seed=seed)
    return annotations, judgments


def metrics_document(
    *,
    study: Study,
    n_resamples: int = DEFAULT_N_RESAMPLES,
    seed: int = 0,
    label_models: tuple[str, ...] = DEFAULT_LABEL_MODELS,
    labels: str = POOLED,
) -> dict:
    """The validated-metrics JSON of a study: rates, agreement, label models, gold accuracy and
    provenance, computed on the chosen label source (docs/metrics.md, "Label sources")."""
    if labels not in LABEL_SOURCES:
        raise ValueError(f"unknown label source {labels!r}; use one of {', '.join(LABEL_SOURCES)}")
    annotations, judgments = study_metric_frames(study=study, labels=labels, seed=seed)
    if labels != POOLED:
        # Label models re-fitted on one label per item would only echo it back.
        label_models = ()
    document: StudyMetrics = {
        # The document's JSON Schema (scoring/report/schema.py, docs/schema/).
        "schema": STUDY_METRICS,
        **study_metrics(
            annotations, judgments, n_resamples=n_resamples, seed=seed, label_models=label_models
        ),
    }
    document["study"] = {
        "slug": study.slug,
        "name": study.name,
        "mode": study.mode,
        "overlap_k": study.overlap_k,
        "synthetic_demo": study.is_synthetic_demo,
    }
    document["counts"] = selectors.study_counts(study=study)
    document["labels"] = {
        "source": labels,
        "n_items_adjudicated": len(adjudication.adjudicated_labels(study=study)),
        "excluded_annotators": selectors.excluded_annotators(study=study),
    }
    # Excluded items are in no statistic above; the export says how many and why.
    document["excluded_items"] = [
        {
            "item_id": row["item_id"],
            "reason": row["excluded_reason"],
            "excluded_at": row["excluded_at"],
        }
        for row in selectors.excluded_items(study=study)
    ]
    document["gold_accuracy"] = selectors.gold_accuracy(study=study)
    # δ per outcome with its history, and the verdict of every Δ against it.
    margins = scoring_selectors.equivalence_margins(study=study)
    document["equivalence_margins"] = margins
    document["equivalence"] = equivalence_section(
        document["rates"],
        document.get("ppi"),
        margins={outcome: m["delta_margin"] for outcome, m in margins.items()},
    )
    document["generated_at"] = timezone.now().isoformat()
    return document


def aggregated_label_export(*, study: Study, method: str, seed: int = 0) -> ExportDataset:
    """One row per annotated item: its label under ``method`` (docs/metrics.md, "Label models"),
    fitted on the annotations the metrics use (gold items left out)."""
    annotations, _ = study_metric_frames(study=study)
    rows = aggregate_labels(annotations, method=method, seed=seed).items
    return ExportDataset(f"labels-{method}", rows, AGGREGATED_LABEL_ROW)


CACHE_SECONDS = 24 * 3600


@dataclass(frozen=True)
class Served:
    """A computed study document as a page may serve it at once: the one for today's data
    (``current``), else the last one computed (older data), else nothing yet."""

    value: Any | None
    computed_at: datetime | None
    current: bool


def study_data_cache_keys(kind: str, study: Study, fingerprint: str, settings) -> tuple[str, str]:
    settings_text = json.dumps(settings, sort_keys=True)
    digest = hashlib.sha256(f"{study.pk}|{fingerprint}|{settings_text}".encode()).hexdigest()
    # The last value computed for these settings, whatever the data was then.
    latest = hashlib.sha256(f"{study.pk}|{settings_text}".encode()).hexdigest()
    return f"{kind}:{digest}", f"latest-{kind}:{latest}"


def cached_for_study_data(
    kind: str, *, study: Study, settings, compute: Callable[[], T], fingerprint: str | None = None
) -> T:
    """``compute()``, reused while the study's data and ``settings`` (JSON-able) are unchanged.

    The one cache of computed study documents (metrics, report, figures): the key holds the
    study's data fingerprint (``annotations.selectors.study_data_fingerprint``), so an answer,
    an edit or a gold flag makes a new key and a cached value is never stale. A caller that
    reads several documents in one go passes the fingerprint it read once (five queries).
    Each computation also becomes the "latest" value of its settings, which ``served_for_study_data``
    offers while a newer one is computed.
    """
    if fingerprint is None:
        fingerprint = selectors.study_data_fingerprint(study=study)
    key, latest_key = study_data_cache_keys(kind, study, fingerprint, settings)
    value = cache.get(key)
    if value is None:
        value = compute()
        cache.set(key, value, timeout=CACHE_SECONDS)
        cache.set(latest_key, {"key": key, "computed_at": timezone.now()}, timeout=CACHE_SECONDS)
    return value


def served_for_study_data(kind: str, *, study: Study, settings, fingerprint: str) -> Served:
    """What ``cached_for_study_data`` holds for these settings, without computing anything."""
    key, latest_key = study_data_cache_keys(kind, study, fingerprint, settings)
    latest = cache.get(latest_key) or {}
    value = cache.get(key)
    if value is not None:
        at = latest.get("computed_at") if latest.get("key") == key else None
        return Served(value, at, current=True)
    if latest:
        value = cache.get(latest["key"])
        if value is not None:
            return Served(value, latest["computed_at"], current=False)
    return Served(None, None, current=False)


def metrics_settings(
    *, n_resamples: int = DEFAULT_N_RESAMPLES, seed: int = 0, labels: str = POOLED
):
    """The cache settings of a metrics document (the page's default: no arguments)."""
    return [n_resamples, seed, labels]


def metrics_document_cached(
    *,
    study: Study,
    n_resamples: int = DEFAULT_N_RESAMPLES,
    seed: int = 0,
    labels: str = POOLED,
    fingerprint: str | None = None,
) -> dict:
    """The same document, reused while the study's data is unchanged (dashboard and charts)."""
    return cached_for_study_data(
        "metrics",
        study=study,
        fingerprint=fingerprint,
        settings=metrics_settings(n_resamples=n_resamples, seed=seed, labels=labels),
        compute=lambda: metrics_document(
            study=study, n_resamples=n_resamples, seed=seed, labels=labels
        ),
    )


def validation_table(metrics: dict) -> list[dict]:
    """The ACRB validation table (the audit report's rows) plus, on each overall row, the
    inter-annotator agreement of the same question."""
    agreement = metrics["agreement"]
    inter = agreement["inter_annotator"]
    rows = human_vs_auto_rows(agreement["human_vs_auto"])
    for row in rows:
        # Only the overall rows carry it; a question nobody answered twice has no block.
        block = inter.get(row["question"]) if row["scope"] == "overall" else None
        row["inter_annotator_alpha"] = None if block is None else block.get("krippendorff_alpha")
        row["inter_annotator_kappa"] = (
            None if block is None else block.get("cohen_kappa_pairwise_mean")
        )
    return rows
