"""A recomputable report folder (docs/report.md, "Verifying a report"). Django-free.

The folder holds the report's inputs as plain files (``data/``: every answer, gold ones
included; every judgment; the items and every judgment's outcome, failed ones included; the
prompt plan's rows; ``context.json``: the study facts, attribute values, batches, guidelines and
settings), the report built from them, and ``manifest.json``: each file's SHA-256, the package
versions, the seeds and the exact command line.

``report_from_inputs`` is the one assembly of the report from its inputs: the audit report
(``dataset.audit_report``), the people and the data (``datasheet``), the REFLECT part
(``reflect.dataset.reflect_part``, from ``data/reflect_answers.jsonl`` and
``data/reflect_context.json``) and the legal mapping over every part (``legal``). A folder holds
the study's inputs, the REFLECT inputs, or both (one combined document). The ``audit_report`` command and the page build the report through it from the
database; ``verify`` builds it again from the folder's files and compares.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import platform
import shlex
from importlib import metadata
from pathlib import Path

from annotations.labels import gold_accuracy_from_records
from scoring.report.dataset import audit_report, software_versions
from scoring.report.datasheet import annotator_pool, data_statement
from scoring.report.design import study_design_from_records
from scoring.report.document_types import ReflectReport
from scoring.report.legal import legal_mapping
from scoring.report.reflect.dataset import reflect_part
from scoring.report.schema import REFLECT_REPORT
from scoring.stats.study_metrics import frames_from_records, to_plain

FOLDER_SCHEMA = "acrb-report-folder/1"
MANIFEST = "manifest.json"
REPORT = "report.json"
# Input name → file in the folder; rows files are JSON lines (types survive: true/false, null,
# floats to the last digit, which CSV would not keep).
ROW_FILES = {
    "annotations": "data/annotations.jsonl",
    "judgments": "data/judgments.jsonl",
    "planned_prompts": "data/planned_prompts.jsonl",
    "items": "data/items.jsonl",
    "judgment_log": "data/judgment_log.jsonl",
}
CONTEXT_FILE = "data/context.json"
REFLECT_ANSWERS_FILE = "data/reflect_answers.jsonl"
REFLECT_CONTEXT_FILE = "data/reflect_context.json"
REFLECT_SCHEMA = REFLECT_REPORT


def report_from_inputs(inputs: dict, *, generated_at: str | None = None) -> dict:
    """The whole report from its inputs (the dict ``read_inputs`` returns): the study's
    report when ``inputs`` holds the study's records, the REFLECT part under ``reflect`` when it
    holds REFLECT answers (``inputs["reflect"]``), and one legal mapping over both."""
    if "context" in inputs:
        report = study_document(inputs, generated_at=generated_at)
    else:
        report = reflect_document(inputs["reflect"]["context"], generated_at=generated_at)
    if "reflect" in inputs:
        report["reflect"] = reflect_part(inputs["reflect"]["answers"], inputs["reflect"]["context"])
    report["legal"] = legal_mapping(report)
    return to_plain(report)


def study_document(inputs: dict, *, generated_at: str | None = None) -> dict:
    """The study's audit report with its people and data sections (no legal mapping yet)."""
    context = inputs["context"]
    annotations, judgments = frames_from_records(inputs["annotations"], inputs["judgments"])
    gold = gold_accuracy_from_records(row for row in inputs["annotations"] if row.get("is_gold"))
    report = audit_report(
        annotations,
        judgments,
        study=context["study"],
        design=study_design_from_records(
            context["attribute_values"], inputs["items"], inputs["judgment_log"]
        ),
        gold_accuracy=gold,
        references=context["references"],
        data_fingerprint=context["data_fingerprint"],
        generated_at=generated_at,
        # A folder written before δ was recorded has none: every outcome's default.
        equivalence_margins=context.get("equivalence_margins"),
        **context["settings"],
    )
    report["people"] = annotator_pool(
        inputs["annotations"],
        batches=context["batches"],
        guidelines=context["guidelines"],
        recruitment=context["study"].get("annotator_recruitment", ""),
        pay=context["study"].get("annotator_pay", ""),
        gold_accuracy=gold,
        agreement_by_group=report["validation"]["inter_annotator"]["by_annotator_group"],
    )
    report["data_statement"] = data_statement(context["plan"], inputs["planned_prompts"])
    return report


def reflect_document(context: dict, *, generated_at: str | None = None) -> ReflectReport:
    """The frame of a REFLECT-only document: its schema and provenance (the part goes under
    ``reflect``)."""
    settings = context["settings"]
    return {
        "schema": REFLECT_SCHEMA,
        "kind": "reflect",
        "provenance": {
            "generated_at": generated_at or dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "seed": settings.get("seed"),
            "n_resamples": settings.get("n_resamples"),
            "software": software_versions(),
            "data_fingerprint": context.get("answers_fingerprint"),
            "definitions": ["docs/metrics.md", "docs/reflect.md", "docs/report.md"],
        },
    }


# --- writing --------------------------------------------------------------------------------


def write_inputs(folder: Path, inputs: dict) -> None:
    (folder / "data").mkdir(parents=True, exist_ok=True)
    if "context" in inputs:
        for name, path in ROW_FILES.items():
            _write_rows(folder / path, inputs[name])
        _write_json(folder / CONTEXT_FILE, inputs["context"])
    if "reflect" in inputs:
        _write_rows(folder / REFLECT_ANSWERS_FILE, inputs["reflect"]["answers"])
        _write_json(folder / REFLECT_CONTEXT_FILE, inputs["reflect"]["context"])


def _write_rows(path: Path, rows) -> None:
    with open(path, "w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False, allow_nan=False, sort_keys=True))
            out.write("\n")


def _write_json(path: Path, value: dict) -> None:
    text = json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False)
    path.write_text(text, encoding="utf-8")


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_manifest(folder: Path, *, argv: list[str], settings: dict, seeds: dict) -> dict:
    """Hash every file in the folder (the manifest itself aside); write and return the manifest.
    Called last, after every other file of the folder is written."""
    files = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and p.name != MANIFEST):
        relative = path.relative_to(folder).as_posix()
        files[relative] = {"sha256": file_sha256(path), "bytes": path.stat().st_size}
    manifest = {
        "schema": FOLDER_SCHEMA,
        "argv": list(argv),
        "command": shlex.join(argv),
        "settings": settings,
        "seeds": seeds,
        "python": platform.python_version(),
        "packages": installed_packages(),
        "files": files,
        "verify": "python -m scoring.report.verify DIR  (or: python manage.py verify_report DIR)",
    }
    text = json.dumps(manifest, indent=2, ensure_ascii=False, sort_keys=False)
    (folder / MANIFEST).write_text(text, encoding="utf-8")
    return manifest


def installed_packages() -> dict[str, str]:
    """Every installed distribution and its version (what ``pip freeze`` would list)."""
    return dict(
        sorted(
            (dist.metadata["Name"], dist.version)
            for dist in metadata.distributions()
            if dist.metadata["Name"]
        )
    )


# --- reading --------------------------------------------------------------------------------


class FolderError(ValueError):
    """The folder cannot be read as a report folder (one line naming the problem)."""


def read_inputs(folder: Path) -> dict:
    """The inputs written by ``write_inputs``; a missing or malformed file is a FolderError.
    The REFLECT files are read when the folder has them; the study's files otherwise, or too."""
    inputs: dict = {}
    has_reflect = (folder / REFLECT_CONTEXT_FILE).exists() or (
        folder / REFLECT_ANSWERS_FILE
    ).exists()
    has_study = any((folder / path).exists() for path in [*ROW_FILES.values(), CONTEXT_FILE])
    if has_study or not has_reflect:
        for name, path in ROW_FILES.items():
            inputs[name] = _read_rows(folder / path)
        inputs["context"] = _read_json(folder / CONTEXT_FILE)
    if has_reflect:
        inputs["reflect"] = {
            "answers": _read_rows(folder / REFLECT_ANSWERS_FILE),
            "context": _read_json(folder / REFLECT_CONTEXT_FILE),
        }
    return inputs


def read_json(path: Path) -> dict:
    return _read_json(path)


def _read_rows(path: Path) -> list[dict]:
    if not path.is_file():
        raise FolderError(f"{path}: missing")
    rows = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                raise FolderError(f"{path}:{number}: not JSON ({error.msg})") from None
            if not isinstance(row, dict):
                raise FolderError(f"{path}:{number}: expected an object per line")
            rows.append(row)
    return rows


def _read_json(path: Path) -> dict:
    if not path.is_file():
        raise FolderError(f"{path}: missing")
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise FolderError(f"{path}: not JSON ({error})") from None
    if not isinstance(value, dict):
        raise FolderError(f"{path}: expected a JSON object")
    return value
