"""Parse and validate an item manifest (JSONL) and an annotation CSV into typed records.

Validation happens here, once, at the boundary: every problem is reported with its line
number and field, and nothing is written unless the whole file is valid. Format reference:
docs/formats.md.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from annotations.common.image_files import ImageRefused, image_decoded
from annotations.labels import (
    CUE_LABELS,
    MODES,
    NEUTRAL,
    LabelError,
    parse_bool,
    parse_cue_label,
)


@dataclass(frozen=True)
class RecordError:
    line: int
    field: str
    message: str

    def __str__(self):
        return f"line {self.line}: {self.field}: {self.message}"


class ManifestInvalid(ValueError):
    def __init__(self, errors: list[RecordError]):
        self.errors = errors
        shown = "\n".join(str(e) for e in errors[:20])
        more = f"\n... and {len(errors) - 20} more" if len(errors) > 20 else ""
        super().__init__(f"{len(errors)} problem(s), nothing was imported:\n{shown}{more}")

    def lines_for(self, file_name: str, limit: int = 50) -> list[str]:
        """One line per problem, each naming the user's file: what a command or a page shows."""
        lines = [f"{file_name}: {error}" for error in self.errors[:limit]]
        if len(self.errors) > limit:
            lines.append(f"{file_name}: ... and {len(self.errors) - limit} more problems")
        return lines


class LabelsInvalid(ManifestInvalid):
    """A labels file that cannot be imported, every problem listed. ``unknown_annotators`` and
    ``staff_annotators`` name the accounts an option would let through (creating unknown names,
    allowing staff accounts), each listed on one line of ``errors``; ``with_remedies`` adds to
    that line how the caller's command or page spells the option."""

    def __init__(
        self,
        errors: list[RecordError],
        *,
        unknown: RecordError | None = None,
        staff: RecordError | None = None,
        unknown_annotators: list[str] = (),
        staff_annotators: list[str] = (),
    ):
        self.unknown, self.staff = unknown, staff
        self.unknown_annotators = sorted(unknown_annotators)
        self.staff_annotators = sorted(staff_annotators)
        everything = [*errors, *(e for e in (unknown, staff) if e is not None)]
        super().__init__(sorted(everything, key=lambda error: error.line))

    def with_remedies(self, *, unknown: str, staff: str) -> LabelsInvalid:
        """The same problems, the unknown and the staff names' lines ending with ``(remedy)``."""
        remedied = {
            id(error): RecordError(error.line, error.field, f"{error.message} ({remedy})")
            for error, remedy in ((self.unknown, unknown), (self.staff, staff))
            if error is not None
        }
        kept = [e for e in self.errors if id(e) not in remedied]
        return LabelsInvalid(
            kept,
            unknown=remedied.get(id(self.unknown)),
            staff=remedied.get(id(self.staff)),
            unknown_annotators=self.unknown_annotators,
            staff_annotators=self.staff_annotators,
        )


def decode_utf8(data: bytes) -> str:
    """Text of an uploaded or read file, or ManifestInvalid saying where it stops being UTF-8.

    A byte-order mark (Excel writes one) is dropped. A zip or a Latin-1 CSV ends here with a
    line number instead of a traceback.
    """
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ManifestInvalid([_not_utf8(data, exc)]) from None


def _not_utf8(data: bytes, exc: UnicodeDecodeError) -> RecordError:
    line = data[: exc.start].count(b"\n") + 1
    byte = data[exc.start : exc.start + 1].hex()
    hint = (
        "this is a zip archive, not a text file"
        if data[:4] == b"PK\x03\x04"
        else "save the file as UTF-8"
    )
    return RecordError(line, "(file)", f"not UTF-8 text (byte 0x{byte}); {hint}")


@dataclass(frozen=True)
class JudgmentRecord:
    judge: str
    judge_version: str
    hard_refusal: bool
    score: float | None
    cue: str | None
    confidence: float | None


@dataclass(frozen=True)
class ItemRecord:
    line: int
    item_id: str
    image: Path | None  # absolute, checked to lie inside the manifest's folder
    image_sha256: str
    mode: str
    generator: str
    prompt: str
    base_prompt_id: str
    domain: str
    attribute: str
    attribute_value: str
    cue: str
    source_image: Path | None
    provider_refusal_code: str = ""
    provider_refusal_message: str = ""
    judgments: tuple[JudgmentRecord, ...] = field(default_factory=tuple)
    intent: str = "benign"  # "harmful": a harmful control (docs/formats.md)


@dataclass(frozen=True)
class ImageLimits:
    max_bytes: int
    max_pixels: int


REQUIRED_TEXT = (
    "item_id",
    "mode",
    "generator",
    "prompt",
    "base_prompt_id",
    "domain",
    "attribute",
    "attribute_value",
)


# An item's intent: benign (audited) or harmful (a control a generator should refuse).
INTENTS = ("benign", "harmful")


class _LineError(Exception):
    def __init__(self, field_name, message):
        self.field = field_name
        self.message = message


# What check_image raises: the image is unreadable or over the limits (``message`` says how).
ImageInvalid = _LineError


def resolve_inside(root: Path, relative: str, field_name: str) -> Path:
    """Resolve a manifest path; refuse absolute paths and anything escaping ``root``."""
    if not isinstance(relative, str) or not relative.strip():
        raise _LineError(field_name, "must be a non-empty relative path or null")
    candidate = Path(relative)
    if candidate.is_absolute():
        raise _LineError(field_name, f"absolute paths are not allowed ({relative!r})")
    resolved = (root / candidate).resolve()
    if not resolved.is_relative_to(root.resolve()):
        raise _LineError(field_name, f"path {relative!r} escapes the manifest's folder")
    if not resolved.is_file():
        raise _LineError(field_name, f"file {relative!r} does not exist")
    return resolved


def check_image(path: Path, limits: ImageLimits, field_name: str) -> str:
    """Check the file is a whole image of a stored format within the limits (every frame
    decoded and counted, ``image_files.image_decoded``); return its sha256."""
    size = path.stat().st_size
    if size > limits.max_bytes:
        raise _LineError(
            field_name, f"{path.name} is {size} bytes, over the limit of {limits.max_bytes}"
        )
    try:
        return image_decoded(path.read_bytes(), max_pixels=limits.max_pixels, name=path.name).sha256
    except ImageRefused as exc:
        raise _LineError(field_name, str(exc)) from None


# The longest text each imported field may hold: the database column's max_length (a test
# compares them), checked here so a long value is one line of the report, never a DataError
# (PostgreSQL) or a value silently stored past its limit (SQLite). None: no length limit.
TEXT_LIMITS = {
    "item_id": 200,
    "mode": 3,
    "generator": 200,
    "prompt": None,
    "base_prompt_id": 200,
    "domain": 100,
    "attribute": 50,
    "attribute_value": 100,
    "cue": None,
    "provider_refusal.code": 200,
    "provider_refusal.message": None,
    "judge": 100,
    "version": 100,
    "annotator": 150,
    "annotator_group": 100,
}
# Names (identifiers and accounts) hold no control characters; free text may hold tabs and
# line breaks. No text holds a NUL byte, which PostgreSQL cannot store.
IDENTIFIERS = {
    "item_id",
    "mode",
    "generator",
    "base_prompt_id",
    "domain",
    "attribute",
    "attribute_value",
    "provider_refusal.code",
    "judge",
    "version",
    "annotator",
    "annotator_group",
}


def checked_text(value: str, field_name: str) -> str:
    """``value`` if it fits ``field_name``'s column; else the one problem, as a LineError."""
    limit = TEXT_LIMITS.get(field_name)
    if limit is not None and len(value) > limit:
        raise _LineError(field_name, f"is {len(value)} characters long, over the limit of {limit}")
    if "\x00" in value:
        raise _LineError(field_name, "contains a NUL byte")
    if field_name in IDENTIFIERS and any(ord(c) < 32 or 127 <= ord(c) < 160 for c in value):
        raise _LineError(field_name, "contains a control character (tab, line break...)")
    return value


def _text(obj, key, *, required=True, field_name=None):
    value = obj.get(key)
    if value is None:
        if required:
            raise _LineError(key, "is required")
        return ""
    if not isinstance(value, (str, int)) or isinstance(value, bool):
        raise _LineError(key, f"must be a string (got {type(value).__name__})")
    return checked_text(str(value).strip(), field_name or key)


def _optional_number(obj, key, where):
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise _LineError(f"{where}.{key}", f"must be a finite number (got {value!r})")
    return float(value)


def _parse_judgment(raw, index) -> JudgmentRecord:
    where = f"judgments[{index}]"
    if not isinstance(raw, dict):
        raise _LineError(where, "must be an object")
    judge = raw.get("judge")
    if not isinstance(judge, str) or not judge.strip():
        raise _LineError(f"{where}.judge", "is required")
    name, _, version = judge.strip().partition("@")
    checked_text(name, "judge")
    checked_text(str(raw.get("version") or version or "1"), "version")
    if not isinstance(raw.get("hard_refusal"), bool):
        raise _LineError(f"{where}.hard_refusal", "must be true or false")
    cue = raw.get("cue")
    if cue is not None and cue not in CUE_LABELS:
        raise _LineError(f"{where}.cue", f"{cue!r} is not one of {', '.join(CUE_LABELS)} or null")
    if raw["hard_refusal"] and cue is not None:
        raise _LineError(f"{where}.cue", "must be null when hard_refusal is true")
    return JudgmentRecord(
        judge=name,
        judge_version=str(raw.get("version") or version or "1"),
        hard_refusal=raw["hard_refusal"],
        score=_optional_number(raw, "score", where),
        cue=cue,
        confidence=_optional_number(raw, "confidence", where),
    )


def parse_item_line(obj: dict, line: int, root: Path, limits: ImageLimits) -> ItemRecord:
    if not isinstance(obj, dict):
        raise _LineError("(line)", "must be a JSON object")
    values = {key: _text(obj, key) for key in REQUIRED_TEXT}
    if not values["item_id"]:
        raise _LineError("item_id", "must not be empty")
    if values["mode"] not in MODES:
        raise _LineError("mode", f"{values['mode']!r} is not one of {', '.join(MODES)}")
    if (values["attribute"] == NEUTRAL) != (values["attribute_value"] == NEUTRAL):
        raise _LineError(
            "attribute_value",
            "the neutral baseline is attribute 'neutral' with attribute_value 'neutral'",
        )
    intent = obj.get("intent")
    intent = "benign" if intent is None else intent
    if intent not in INTENTS:
        raise _LineError("intent", f"{intent!r} is not one of {', '.join(INTENTS)} (or absent)")
    image = sha = None
    if obj.get("image") is not None:
        image = resolve_inside(root, obj["image"], "image")
        sha = check_image(image, limits, "image")
    source = None
    if obj.get("source_image") is not None:
        source = resolve_inside(root, obj["source_image"], "source_image")
        check_image(source, limits, "source_image")
    refusal = obj.get("provider_refusal") or {}
    if not isinstance(refusal, dict):
        raise _LineError("provider_refusal", "must be an object with code and message")
    judgments = obj.get("judgments") or []
    if not isinstance(judgments, list):
        raise _LineError("judgments", "must be a list")
    parsed = tuple(_parse_judgment(j, i) for i, j in enumerate(judgments))
    keys = [(j.judge, j.judge_version) for j in parsed]
    if len(set(keys)) != len(keys):
        raise _LineError("judgments", "the same judge and version appears twice")
    return ItemRecord(
        line=line,
        image=image,
        image_sha256=sha or "",
        cue=_text(obj, "cue", required=False),
        source_image=source,
        provider_refusal_code=_text(
            refusal, "code", required=False, field_name="provider_refusal.code"
        ),
        provider_refusal_message=_text(
            refusal, "message", required=False, field_name="provider_refusal.message"
        ),
        judgments=parsed,
        intent=intent,
        **values,
    )


def parse_manifest(
    path: Path, limits: ImageLimits, *, progress=None, check=None
) -> list[ItemRecord]:
    """Every line parsed, or ManifestInvalid listing every problem found. ``check(record)``
    returns the problems a valid line has against the target study (its mode, an item_id the
    study already holds), so they are listed with the rest, all at once."""
    root = path.resolve().parent
    records, errors, seen = [], [], {}
    # Decoded whole, so a zip or a Latin-1 file is one clear error, not a traceback mid-loop.
    # (Split on newlines only, as reading the file would: JSON text may hold U+2028.)
    lines = io.StringIO(decode_utf8(path.read_bytes()))
    for line_no, text in enumerate(lines, start=1):
        if progress:
            progress(line_no)
        if not text.strip():
            continue
        try:
            obj = json.loads(text)
            record = parse_item_line(obj, line_no, root, limits)
        except json.JSONDecodeError as exc:
            errors.append(
                RecordError(line_no, "(json)", f"not valid JSON: {exc.msg} at column {exc.colno}")
            )
            continue
        except _LineError as exc:
            errors.append(RecordError(line_no, exc.field, exc.message))
            continue
        if record.item_id in seen:
            errors.append(
                RecordError(
                    line_no,
                    "item_id",
                    f"{record.item_id!r} already appears on line {seen[record.item_id]}",
                )
            )
            continue
        seen[record.item_id] = line_no
        if check is not None:
            errors.extend(check(record))
        records.append(record)
    if errors:
        raise ManifestInvalid(errors)
    if not records:
        raise ManifestInvalid([RecordError(0, "(file)", "the manifest has no items")])
    return records


@dataclass(frozen=True)
class AnnotationRecord:
    line: int
    item_id: str
    annotator: str
    annotator_group: str
    hard_refusal: bool
    cue: str | None


ANNOTATION_COLUMNS = ("item_id", "annotator", "annotator_group", "hard_refusal", "cue")


def parse_annotation_csv(text: str) -> list[AnnotationRecord]:
    """Every row parsed, or ManifestInvalid listing every problem."""
    records, errors = annotation_csv_records(text)
    if errors:
        raise ManifestInvalid(errors)
    return records


def annotation_csv_records(text: str) -> tuple[list[AnnotationRecord], list[RecordError]]:
    """The rows of a labels CSV as typed records, and each row that is not one as a problem.

    A problem with the file as a whole (no header, a missing column, no rows, broken CSV) is
    ManifestInvalid with that one line, before any row is judged: a missing column is not
    worth one line per row.
    """
    reader = csv.DictReader(io.StringIO(text))
    try:
        _check_annotation_header(reader.fieldnames)
        records, errors = _annotation_records(reader)
    except csv.Error as exc:  # e.g. a NUL byte or an unclosed quote
        raise ManifestInvalid([RecordError(reader.line_num, "(csv)", str(exc))]) from None
    if not records and not errors:
        raise ManifestInvalid(
            [RecordError(1, "(file)", "no label rows: the file is a header only")]
        )
    return records, errors


def _check_annotation_header(fieldnames: list[str] | None) -> None:
    expected = ", ".join(ANNOTATION_COLUMNS)
    if not fieldnames:
        raise ManifestInvalid(
            [RecordError(1, "(file)", f"the file is empty; expected a CSV with columns {expected}")]
        )
    missing = [c for c in ANNOTATION_COLUMNS if c not in fieldnames]
    if not missing:
        return
    message = f"missing column(s) {', '.join(missing)}; expected {expected}"
    if len(fieldnames) == 1 and any(sep in fieldnames[0] for sep in ";\t"):
        message += " separated by commas"
    raise ManifestInvalid([RecordError(1, "(header)", message)])


def _annotation_records(reader: csv.DictReader) -> tuple[list[AnnotationRecord], list[RecordError]]:
    records, errors, seen = [], [], {}
    for row in reader:
        line = reader.line_num
        try:
            item_id = (row["item_id"] or "").strip()
            annotator = (row["annotator"] or "").strip()
            group = (row["annotator_group"] or "").strip()
            if not item_id:
                raise LabelError("item_id: must not be empty")
            if not annotator:
                raise LabelError("annotator: must not be empty")
            refusal = parse_bool(row["hard_refusal"], field="hard_refusal")
            cue = parse_cue_label(row["cue"], hard_refusal=refusal)
            for name, value in (
                ("item_id", item_id),
                ("annotator", annotator),
                ("annotator_group", group),
            ):
                checked_text(value, name)
        except LabelError as exc:
            field_name, _, message = str(exc).partition(": ")
            errors.append(RecordError(line, field_name, message))
            continue
        except _LineError as exc:
            errors.append(RecordError(line, exc.field, exc.message))
            continue
        key = (item_id, annotator)
        if key in seen:
            errors.append(
                RecordError(
                    line,
                    "annotator",
                    f"{annotator!r} already labelled {item_id!r} on line {seen[key]}",
                )
            )
            continue
        seen[key] = line
        records.append(AnnotationRecord(line, item_id, annotator, group, refusal, cue))
    return records, errors
