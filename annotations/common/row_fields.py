"""One field table per exported row: name, type, nullability and description, written once.

The CSV header, the JSONL keys, the Parquet schema (``annotations.exports.writers.arrow_schema``),
the REST serializers (``serializers.row_serializer``) and the tables in docs/formats.md are all
read from these tables, so no writer can drift from another
(tests/annotations/exports/test_export_fields.py checks every writer and serializer against its
table). A selector that builds the rows passes
them through :meth:`RowTable.row`, which refuses a row with a missing or an extra key.

Types are the Parquet ones: ``string``, ``bool``, ``int64``, ``float64``, ``timestamp``
(UTC). No Django: ``scoring.stats.label_models`` defines the aggregated-label table with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

TYPES = ("string", "bool", "int64", "float64", "timestamp")


@dataclass(frozen=True)
class Field:
    name: str
    type: str
    description: str
    nullable: bool = False

    def __post_init__(self):
        if self.type not in TYPES:
            raise ValueError(f"field {self.name!r}: unknown type {self.type!r}; use {TYPES}")


class RowTable:
    """The fields of one exported row, in column order."""

    def __init__(self, name: str, fields: tuple[Field, ...] | list[Field]):
        self.name = name
        self.fields = tuple(fields)
        names = [field.name for field in self.fields]
        if len(set(names)) != len(names):
            raise ValueError(f"{name}: a field is listed twice")

    @property
    def columns(self) -> list[str]:
        return [field.name for field in self.fields]

    @property
    def types(self) -> dict[str, tuple[str, bool]]:
        """``{column: (type, nullable)}``, the shape the Parquet writer takes."""
        return {field.name: (field.type, field.nullable) for field in self.fields}

    def row(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """``values`` in column order; a missing or an extra key is a bug in the selector."""
        missing = [name for name in self.columns if name not in values]
        extra = sorted(set(values) - set(self.columns))
        if missing or extra:
            raise KeyError(f"{self.name} row: missing {missing}, not in the table {extra}")
        return {name: values[name] for name in self.columns}

    def markdown(self) -> str:
        """The table as docs/formats.md shows it (``column | type | description``)."""
        lines = ["| column | type | description |", "|---|---|---|"]
        for field in self.fields:
            kind = f"{field.type}, nullable" if field.nullable else field.type
            lines.append(f"| `{field.name}` | {kind} | {field.description} |")
        return "\n".join(lines)


_ITEM = (
    Field("attribute", "string", "the attribute the item varies (e.g. `culture`)"),
    Field("attribute_value", "string", "its value for this item (e.g. `Korean`)"),
    Field("base_prompt_id", "string", "the neutral prompt the item was expanded from"),
    Field("domain", "string", "the prompt's domain"),
    Field("generator", "string", "the generator that made the image"),
    Field("mode", "string", "`t2i` or `i2i`"),
    Field("intent", "string", "`benign`, or `harmful` for a harmful control (docs/generation.md)"),
)

ANNOTATION_ROW = RowTable(
    "annotations",
    (
        Field("item_id", "string", "the item's id in its study"),
        Field("annotator", "string", "the annotator's username"),
        Field("annotator_group", "string", "the annotator's group (blank: none)"),
        Field("batch", "string", "the batch that assigned the item"),
        Field("is_gold", "bool", "a gold item (known answer), left out of the statistics"),
        *_ITEM,
        Field("hard_refusal", "bool", "the annotator's answer: the generator refused"),
        Field("cue", "string", "`retained`, `erased` or `substituted`; null after a refusal", True),
        Field("note", "string", "the annotator's free-text note"),
        Field("broken_image", "bool", "the annotator flagged the image as broken"),
        Field("served_at", "timestamp", "when the item was shown (null: imported label)", True),
        Field("submitted_at", "timestamp", "the first submission"),
        Field("updated_at", "timestamp", "the last edit"),
        Field("seconds_to_answer", "float64", "from serving to the first submission", True),
        Field("too_fast", "bool", "answered faster than the study's floor"),
        Field("revision", "int64", "how many times the answer was edited"),
        Field("source", "string", "`survey` or `import`"),
        Field(
            "language",
            "string",
            "the survey's language for this answer (`en`, `fr`; blank: imported)",
        ),
        Field(
            "consent_version",
            "int64",
            "the study's consent version the annotator had agreed to when giving this answer "
            "(its last edit); null: the study had no consent text, an imported label, or an "
            "answer given before versions were recorded",
            True,
        ),
        Field(
            "annotator_labels_excluded",
            "bool",
            "staff excluded this annotator's labels: kept here, left out of every statistic",
        ),
        Field(
            "inclusion_probability",
            "float64",
            "the batch design's probability of drawing the item from its attribute value's items "
            "(null: no design chose it, or the batch is not a probability sample)",
            True,
        ),
        Field(
            "probability_sample",
            "bool",
            "the batch is a probability sample of the attribute values it drew from; false: a "
            "subset that takes part of a value's items (judges disagree, a generator, ...), left "
            "out of the prediction-powered estimates; null: no design (manual, imported) or not "
            "recorded",
            True,
        ),
        Field(
            "probability_sample_reason",
            "string",
            "why the batch is not a probability sample (e.g. `a subset: judges disagree`); "
            "blank otherwise",
        ),
        Field(
            "qualification_attempt",
            "int64",
            "the qualification attempt (1, 2, ...) this gold answer belongs to; null: not a "
            "qualification answer. Qualification answers count in no statistic",
            True,
        ),
    ),
)

JUDGMENT_ROW = RowTable(
    "judgments",
    (
        Field("item_id", "string", "the item's id in its study"),
        Field("judge", "string", "`name@version` of the automated judge"),
        *_ITEM,
        Field(
            "hard_refusal", "bool", "the judge's refusal verdict; null for a cue-only judge", True
        ),
        Field("cue", "string", "the judge's cue label; null when it gave none", True),
        Field("score", "float64", "the judge's raw score (CLIP similarity), if any", True),
        Field("confidence", "float64", "the judge's confidence in its label, if any", True),
    ),
)
