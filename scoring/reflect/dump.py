"""The answer dump: one JSON object per stored answer (docs/reflect.md, "Answer dump").

Django-free. ``export_reflect_run`` writes it from the database; ``reflect_report --answers``
reads it back and computes the same report without the database or the model.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

REQUIRED = (
    "model",
    "request_key",
    "task",
    "item",
    "variant",
    "occupation",
    "template",
    "race_a",
    "gender_a",
    "status",
    "raw_answer",
)
TWO_AFC_REQUIRED = ("race_b", "gender_b", "presentation")


def write_dump(rows: Iterable[Mapping[str, Any]], path: str | Path) -> int:
    count = 0
    with Path(path).open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")
            count += 1
    return count


def read_dump(path: str | Path) -> list[dict[str, Any]]:
    """Every row of a dump, checked for the fields the report needs (ValueError otherwise)."""
    rows = []
    with Path(path).open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as error:
                raise ValueError(f"{path}:{number}: not JSON ({error})") from error
            needed = REQUIRED + (TWO_AFC_REQUIRED if row.get("task") == "2afc" else ())
            missing = [key for key in needed if key not in row]
            if missing:
                raise ValueError(f"{path}:{number}: missing {', '.join(missing)}")
            rows.append(row)
    return rows
