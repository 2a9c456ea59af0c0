"""Turn uploaded images plus an attributes CSV (or one set of values for all) into manifest lines.

The browser's "new study" page (docs/annotation.md, "Create a study in the browser") accepts
images and a CSV rather than a JSONL manifest. This module writes the manifest those two
describe; ``manifest.parse_manifest`` then checks it with the same rules as every other import,
and ``remap_errors`` turns its line numbers back into the CSV's. No Django here.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import PurePosixPath

from annotations.imports.manifest import ManifestInvalid, RecordError, decode_utf8

# The CSV columns a research lead may give; any of them may instead come from the form.
ATTRIBUTE_COLUMNS = (
    "image",
    "item_id",
    "generator",
    "prompt",
    "base_prompt_id",
    "domain",
    "attribute",
    "attribute_value",
    "cue",
    "source_image",
    "intent",  # benign (default) or harmful: a harmful control (docs/generation.md)
)
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp", ".gif", ".bmp")


@dataclass(frozen=True)
class ManifestDraft:
    """Manifest lines (dicts), for each the CSV line it came from (0: no CSV), and the CSV's
    own problems, to be listed beside the manifest's."""

    lines: list[dict]
    source_lines: list[int]
    problems: list[RecordError]
    # Needed values that neither the CSV nor the form gives: one problem each, in ``problems``,
    # instead of one "is required" per row (``remap_errors`` leaves those out).
    missing_columns: frozenset[str] = frozenset()
    # The first ``column_problems`` of ``problems`` are about the columns: listed first.
    column_problems: int = 0


# Image formats people have that the app does not store: named in the problem, so a TIFF, an
# SVG or an icon is never dropped in silence. Any other file is "not an image".
OTHER_IMAGE_FORMATS = {
    ".tif": "TIFF",
    ".tiff": "TIFF",
    ".svg": "SVG",
    ".svgz": "SVG",
    ".ico": "ICO",
    ".heic": "HEIC",
    ".heif": "HEIF",
    ".avif": "AVIF",
    ".jp2": "JPEG 2000",
    ".psd": "Photoshop",
}
TAKEN = "PNG, JPEG, WebP, GIF or BMP"


def _files(names: list[str]) -> list[str]:
    """An upload's files, in name order (folders, macOS debris and hidden files left out)."""
    found = []
    for name in names:
        path = PurePosixPath(name)
        if name.endswith("/") or "__MACOSX" in path.parts or path.name.startswith("."):
            continue
        found.append(name)
    return sorted(found)


def image_members(names: list[str]) -> list[str]:
    """The image files among an upload's member names, in name order."""
    return [n for n in _files(names) if PurePosixPath(n).suffix.lower() in IMAGE_SUFFIXES]


def refused_members(names: list[str]) -> list[RecordError]:
    """One problem per image of a format the app does not take (a TIFF, an SVG, an icon): the
    research lead learns which, instead of a study silently short of them. Other files (notes,
    a README) are not images and are left out as before."""
    return [
        RecordError(
            0,
            "(upload)",
            f"{name} is a {OTHER_IMAGE_FORMATS[suffix]} image, which the app does not take: "
            f"convert it to {TAKEN}, or leave it out",
        )
        for name in _files(names)
        if (suffix := PurePosixPath(name).suffix.lower()) in OTHER_IMAGE_FORMATS
    ]


def manifest_draft(
    *, csv_bytes: bytes | None, members: list[str], defaults: dict[str, str], mode: str
) -> ManifestDraft:
    """One manifest line per CSV row, or per image when there is no CSV.

    ``defaults`` fills any column the CSV leaves out or empty. Without a CSV, ``item_id`` is
    the image's name without its suffix. ``base_prompt_id`` defaults to the prompt, so items
    made from one prompt pair up across attribute values. The CSV's own problems (columns,
    rows, images no row names) are kept in ``problems``, to be listed with the manifest's;
    ManifestInvalid only when there is nothing to check (no rows, not UTF-8, broken CSV).
    """
    images = image_members(members)
    if csv_bytes is None:
        missing = _missing_columns(["image"], defaults, csv=False)
        rows = [({"image": name}, 0) for name in images]
        errors: list[RecordError] = []
    else:
        rows, errors, missing = _csv_rows(csv_bytes, defaults)
        errors += _unnamed_images(rows, images)
        rows = [(_resolve_image(row, images), line) for row, line in rows]
    columns = [e for e in errors if e.message.startswith("unknown column")] + missing
    errors = [*columns, *refused_members(members), *(e for e in errors if e not in columns)]
    lines = [_manifest_line(row, defaults, mode) for row, _ in rows]
    if not lines:
        what = "the CSV has no rows" if csv_bytes is not None else "the upload holds no images"
        raise ManifestInvalid([*errors, RecordError(0, "(upload)", what)])
    return ManifestDraft(
        lines=lines,
        source_lines=[line for _, line in rows],
        problems=errors,
        missing_columns=frozenset(e.field for e in missing),
        column_problems=len(columns),
    )


# What every manifest line needs from the CSV or the form (item_id comes from the image's
# name, base_prompt_id from the prompt, mode from the form).
NEEDED_COLUMNS = ("generator", "prompt", "domain", "attribute", "attribute_value")


def _csv_rows(
    csv_bytes: bytes, defaults: dict[str, str]
) -> tuple[list[tuple[dict, int]], list[RecordError], list[RecordError]]:
    """(rows with their CSV line, the rows' problems, the missing columns' problems)."""
    reader = csv.DictReader(io.StringIO(decode_utf8(csv_bytes)))
    try:
        columns = [c.strip() for c in (reader.fieldnames or [])]
        errors = [
            RecordError(1, column, f"unknown column (use {', '.join(ATTRIBUTE_COLUMNS)})")
            for column in columns
            if column not in ATTRIBUTE_COLUMNS
        ]
        if "image" not in columns and "item_id" not in columns:
            # Nothing else can be checked: said first, with only the column problems beside it
            # (it once came after 30 lines it caused, one per row and per image).
            image = RecordError(1, "image", "column is missing: the CSV names each row's image")
            raise ManifestInvalid([image, *errors])
        missing = _missing_columns(columns, defaults)
        rows = []
        for row in reader:
            values = {
                (key or "").strip(): (value or "").strip()
                for key, value in row.items()
                if isinstance(value, str)
            }
            if None in row:
                errors.append(
                    RecordError(reader.line_num, "(csv)", "more values than there are columns")
                )
            rows.append((values, reader.line_num))
    except csv.Error as exc:  # a NUL byte, an unclosed quote
        raise ManifestInvalid([RecordError(reader.line_num, "(csv)", str(exc))]) from None
    return rows, errors, missing


def _missing_columns(
    columns: list[str], defaults: dict[str, str], *, csv: bool = True
) -> list[RecordError]:
    """One problem per needed column that neither the CSV nor the form gives, not one per row."""
    fix = "add it to the CSV, or give one value for all" if csv else "give one value for all"
    return [
        RecordError(1 if csv else 0, column, f"{'column ' if csv else ''}is missing: {fix}")
        for column in NEEDED_COLUMNS
        if column not in columns and not defaults.get(column)
    ]


def _resolve_image(row: dict, images: list[str]) -> dict:
    """Let a CSV name an image by its file name when the zip keeps it in a folder."""
    name = row.get("image", "")
    if not name or name in images:
        return row
    matches = [m for m in images if PurePosixPath(m).name == name]
    return {**row, "image": matches[0]} if len(matches) == 1 else row


def _unnamed_images(rows: list[tuple[dict, int]], images: list[str]) -> list[RecordError]:
    named = {row.get("image", "") for row, _ in rows}
    named |= {PurePosixPath(n).name for n in named}
    return [
        RecordError(0, "(upload)", f"{name} is in the upload but no CSV row names it")
        for name in images
        if name not in named and PurePosixPath(name).name not in named
    ]


def _manifest_line(row: dict, defaults: dict[str, str], mode: str) -> dict:
    values = {key: value for key, value in defaults.items() if value}
    values.update({key: value for key, value in row.items() if value})
    image = values.get("image") or None
    if not values.get("item_id") and image:
        values["item_id"] = PurePosixPath(image).stem
    if not values.get("base_prompt_id") and values.get("prompt"):
        values["base_prompt_id"] = values["prompt"]
    line = {key: values.get(key) for key in ATTRIBUTE_COLUMNS if key in values}
    line["image"] = image
    line["mode"] = mode
    return line


def remap_errors(errors: list[RecordError], draft: ManifestDraft) -> list[RecordError]:
    """The manifest's problems, numbered by the CSV line each came from."""
    remapped = []
    for error in errors:
        if error.field in draft.missing_columns and error.message == "is required":
            continue  # said once, as a missing column
        if not 1 <= error.line <= len(draft.lines):
            remapped.append(error)
            continue
        source = draft.source_lines[error.line - 1]
        # Without a CSV there is no line to point at: name the image instead (line 0).
        field = error.field if source else f"{draft.lines[error.line - 1]['image']}: {error.field}"
        remapped.append(RecordError(source, field, error.message))
    return remapped
