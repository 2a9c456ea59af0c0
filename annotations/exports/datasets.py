"""The row datasets of the exports: the one place their rows are built, each with its field table.

``export_annotations``, the staff download and the REST API all read a dataset through these
functions, and a writer (``writers``) only formats it (docs/formats.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from annotations import selectors
from annotations.common.row_fields import ANNOTATION_ROW, JUDGMENT_ROW, RowTable
from annotations.models import Study


@dataclass(frozen=True)
class ExportDataset:
    """Plain dict rows and the field table (``row_fields``) that defines their columns."""

    name: str
    rows: list[dict]
    table: RowTable

    @property
    def columns(self) -> list[str]:
        return self.table.columns

    @property
    def types(self) -> dict[str, tuple[str, bool]]:
        """``{column: (type, nullable)}``, read from the field table."""
        return self.table.types


def annotation_export(*, study: Study) -> ExportDataset:
    """Every answer of an active assignment, gold and qualification answers included and flagged."""
    rows = selectors.annotation_rows(study=study, include_gold=True, include_qualification=True)
    return ExportDataset("annotations", rows, ANNOTATION_ROW)


def judgment_export(*, study: Study) -> ExportDataset:
    """The automated judgments the metrics use: they answer a question; gold items left out."""
    return ExportDataset("judgments", selectors.judgment_rows(study=study), JUDGMENT_ROW)
