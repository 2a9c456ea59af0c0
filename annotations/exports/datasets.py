"""The row datasets behind ``export_annotations`` and the staff downloads, each with its fields.

A dataset is built once here; ``formats`` only formats it (docs/formats.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from annotations import selectors
from annotations.exports import writers as exports
from annotations.exports.formats import ANNOTATION_EXPORT_FIELDS, JUDGMENT_EXPORT_FIELDS
from annotations.models import Study


@dataclass(frozen=True)
class ExportDataset:
    name: str
    rows: list[dict]
    fields: dict[str, tuple[str, bool]]


def annotation_export(*, study: Study) -> ExportDataset:
    """Every answer of an active assignment, gold items included and flagged."""
    return ExportDataset(
        "annotations", exports.annotation_dataset(study=study), ANNOTATION_EXPORT_FIELDS
    )


def judgment_export(*, study: Study) -> ExportDataset:
    """The automated judgments the metrics use: they answer a question; gold items left out."""
    return ExportDataset("judgments", selectors.judgment_rows(study=study), JUDGMENT_EXPORT_FIELDS)
