"""Recompute a report folder and say whether it matches (docs/report.md, "Verifying a report").

    python -m scoring.report.verify DIR

needs no database and no Django: it checks each file's SHA-256 against ``manifest.json``,
rebuilds the report from the raw files in ``DIR/data`` with the settings and seed they record
(``bundle.report_from_inputs``), and compares every value of ``DIR/report.json`` with the
recomputed one; it also validates ``report.json`` against the JSON Schema its ``schema`` key
names (``scoring.report.schema``). It prints one line per mismatch and exits 0 only when every
hash, the schema and every value match (1 otherwise; 2 when the folder cannot be read). ``python manage.py verify_report
DIR`` runs the same check.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

from scoring.report import bundle
from scoring.report.schema import validation_errors

# Values that describe the run, not the data: compared apart, reported as notes, never failures.
NOTED_PATHS = ("provenance.software",)
REL_TOL = 1e-9
ABS_TOL = 1e-12


def verify_folder(folder: Path) -> tuple[list[str], list[str]]:
    """(mismatches, notes), one line each. Raises ``bundle.FolderError`` for an unreadable folder."""
    folder = Path(folder)
    if not folder.is_dir():
        raise bundle.FolderError(f"{folder}: not a folder")
    manifest = bundle.read_json(folder / bundle.MANIFEST)
    mismatches = hash_mismatches(folder, manifest)
    stored = bundle.read_json(folder / bundle.REPORT)
    mismatches += [f"schema: report.json: {line}" for line in validation_errors(stored)]
    inputs = bundle.read_inputs(folder)
    generated_at = (stored.get("provenance") or {}).get("generated_at")
    try:
        recomputed = bundle.report_from_inputs(inputs, generated_at=generated_at)
    except (KeyError, TypeError, ValueError) as error:
        return [*mismatches, f"cannot recompute the report: {type(error).__name__}: {error}"], []
    notes: list[str] = []
    for path, stored_value, recomputed_value in differences(stored, recomputed):
        line = (
            f"{path}: report.json has {_short(stored_value)}, recomputed {_short(recomputed_value)}"
        )
        if path.startswith(NOTED_PATHS):
            notes.append(f"note: {line} (run environment, not data)")
        else:
            mismatches.append(f"mismatch: {line}")
    return mismatches, notes


def hash_mismatches(folder: Path, manifest: dict) -> list[str]:
    files = manifest.get("files") if isinstance(manifest, dict) else None
    if not isinstance(files, dict):
        return [f"malformed: {bundle.MANIFEST} has no 'files' object"]
    out = []
    root = folder.resolve()
    for relative, entry in sorted(files.items()):
        path = folder / relative
        # A forged manifest could name /etc/passwd or ../../secret: hash only the folder's files.
        if Path(relative).is_absolute() or not path.resolve().is_relative_to(root):
            out.append(f"refused: {relative} (outside the report folder)")
            continue
        if not isinstance(entry, dict):
            out.append(f"malformed: {relative} (its {bundle.MANIFEST} entry is not an object)")
            continue
        if not path.is_file():
            out.append(f"missing: {relative} (listed in {bundle.MANIFEST})")
            continue
        actual = bundle.file_sha256(path)
        if actual != entry.get("sha256"):
            out.append(
                f"hash mismatch: {relative}: manifest {str(entry.get('sha256'))[:12]}…, "
                f"file {actual[:12]}…"
            )
    return out


def differences(stored, recomputed, path: str = ""):
    """(path, stored, recomputed) for every leaf that differs; floats within a relative 1e-9."""
    if isinstance(stored, dict) and isinstance(recomputed, dict):
        for key in sorted(set(stored) | set(recomputed)):
            child = f"{path}.{key}" if path else str(key)
            if key not in stored:
                yield child, "(absent)", recomputed[key]
            elif key not in recomputed:
                yield child, stored[key], "(absent)"
            else:
                yield from differences(stored[key], recomputed[key], child)
    elif isinstance(stored, list) and isinstance(recomputed, list):
        if len(stored) != len(recomputed):
            yield f"{path} (length)", len(stored), len(recomputed)
        for index, (a, b) in enumerate(zip(stored, recomputed, strict=False)):
            yield from differences(a, b, f"{path}[{index}]")
    elif not _equal(stored, recomputed):
        yield path, stored, recomputed


def _equal(a, b) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=ABS_TOL)
    return a == b


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0].startswith("-"):
        print("usage: python -m scoring.report.verify DIR", file=sys.stderr)
        return 2
    try:
        mismatches, notes = verify_folder(Path(args[0]))
    except bundle.FolderError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for line in [*notes, *mismatches]:
        print(line)
    if mismatches:
        print(f"FAILED: {len(mismatches)} mismatch(es) in {args[0]}")
        return 1
    print(f"OK: every hash and every number of {args[0]}/report.json match the raw data")
    return 0


if __name__ == "__main__":
    sys.exit(main())
