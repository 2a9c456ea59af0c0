"""Exports as dataset -> formatter -> writer.

The dataset functions build plain rows once; CSV, JSONL, the metrics JSON, the dashboard and
the REST API only format them. Metric definitions: docs/metrics.md (one definition, in
``scoring.stats.study_metrics``).
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import io
import json
from collections.abc import Iterable

from django.core.cache import cache
from django.utils import timezone

from scoring.report.dataset import human_vs_auto_rows
from scoring.stats.study_metrics import study_metrics

from . import selectors
from .models import Study

ANNOTATION_EXPORT_COLUMNS = [
    "item_id",
    "annotator",
    "annotator_group",
    "batch",
    "is_gold",
    "attribute",
    "attribute_value",
    "base_prompt_id",
    "domain",
    "generator",
    "mode",
    "hard_refusal",
    "cue",
    "note",
    "broken_image",
    "served_at",
    "submitted_at",
    "updated_at",
    "seconds_to_answer",
    "too_fast",
    "revision",
    "source",
]


# --- datasets ------------------------------------------------------------------------------


def metrics_document(*, study: Study, n_bootstrap: int = 2000, seed: int = 0) -> dict:
    """The validated-metrics JSON of a study: rates, agreement, gold accuracy and provenance."""
    annotations, judgments = selectors.study_metric_frames(study=study)
    document = study_metrics(annotations, judgments, n_bootstrap=n_bootstrap, seed=seed)
    document["study"] = {
        "slug": study.slug,
        "name": study.name,
        "mode": study.mode,
        "overlap_k": study.overlap_k,
        "synthetic_demo": study.is_synthetic_demo,
    }
    document["counts"] = selectors.study_counts(study=study)
    document["gold_accuracy"] = selectors.gold_accuracy(study=study)
    document["generated_at"] = timezone.now().isoformat()
    return document


def metrics_document_cached(*, study: Study, n_bootstrap: int = 2000, seed: int = 0) -> dict:
    """The same document, reused while the study's data is unchanged (dashboard and charts)."""
    fingerprint = selectors.study_data_fingerprint(study=study)
    key = (
        "metrics:"
        + hashlib.sha256(f"{study.pk}|{fingerprint}|{n_bootstrap}|{seed}".encode()).hexdigest()
    )
    document = cache.get(key)
    if document is None:
        document = metrics_document(study=study, n_bootstrap=n_bootstrap, seed=seed)
        cache.set(key, document, timeout=24 * 3600)
    return document


def annotation_dataset(*, study: Study) -> list[dict]:
    return selectors.annotation_rows(study=study, include_gold=True)


def validation_table(metrics: dict) -> list[dict]:
    """The ACRB validation table (the audit report's rows) plus, on each overall row, the
    inter-annotator agreement of the same question."""
    agreement = metrics.get("agreement", {})
    inter = agreement.get("inter_annotator", {})
    rows = human_vs_auto_rows(agreement.get("human_vs_auto", {}))
    for row in rows:
        block = inter.get(row["question"], {}) if row["scope"] == "overall" else {}
        row["inter_annotator_alpha"] = block.get("krippendorff_alpha")
        row["inter_annotator_kappa"] = block.get("cohen_kappa_pairwise_mean")
    return rows


# --- formatters / writers ------------------------------------------------------------------


def _plain(value):
    if isinstance(value, (dt.datetime, dt.date)):
        return value.isoformat()
    return value


def write_csv(rows: Iterable[dict], handle, columns: list[str]) -> None:
    writer = csv.DictWriter(handle, fieldnames=columns, extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        writer.writerow(
            {key: "" if row.get(key) is None else _plain(row.get(key)) for key in columns}
        )


def write_jsonl(rows: Iterable[dict], handle, columns: list[str]) -> None:
    for row in rows:
        handle.write(
            json.dumps({key: _plain(row.get(key)) for key in columns}, allow_nan=False) + "\n"
        )


WRITERS = {"csv": write_csv, "jsonl": write_jsonl}


def render_annotations(rows: list[dict], fmt: str) -> str:
    if fmt not in WRITERS:
        raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(WRITERS)}")
    buffer = io.StringIO()
    WRITERS[fmt](rows, buffer, ANNOTATION_EXPORT_COLUMNS)
    return buffer.getvalue()


def render_rows_csv(rows: list[dict], columns: list[str]) -> str:
    buffer = io.StringIO()
    write_csv(rows, buffer, columns)
    return buffer.getvalue()


def render_metrics(document: dict) -> str:
    # allow_nan=False: a NaN reaching the export is a bug to surface, never a value to write.
    return json.dumps(document, indent=2, allow_nan=False, default=_plain)
