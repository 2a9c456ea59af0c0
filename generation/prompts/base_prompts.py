"""Base prompts: import from JSON or CSV (generic columns or the OVERT format).

Each prompt is parsed once into a ``BasePrompt`` with an id and a domain; the
rest of the pipeline trusts those records.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path

from generation.prompts.taxonomy import DATA_DIR

DEFAULT_BASE_PROMPTS_PATH = DATA_DIR / "acrb" / "base_prompts_108.json"
OVERT_MINI_PATH = DATA_DIR / "overt_mini" / "OVERT_mini.csv"
# A base prompt's intent: benign (every audited prompt) or harmful (a control, docs/generation.md).
BENIGN, HARMFUL = "benign", "harmful"
INTENTS = (BENIGN, HARMFUL)

OVERT_COLUMNS = {"seed_prompt", "image_prompt", "category"}
ID_KEYS = ("prompt_id", "id")
TEXT_KEYS = ("text", "prompt", "image_prompt")
DOMAIN_KEYS = ("domain", "category")


class BasePromptError(ValueError):
    """A base-prompt file is malformed; the message names file and row."""


@dataclass(frozen=True)
class BasePrompt:
    prompt_id: str
    text: str
    domain: str
    source: str = ""
    metadata: dict = field(default_factory=dict, compare=False, hash=False)
    intent: str = BENIGN  # HARMFUL for a harmful control (generation.prompts.controls)


def load_base_prompts(path: str | Path | None = None, *, id_prefix: str = "") -> list[BasePrompt]:
    """Read base prompts from ``.json``, ``.jsonl`` or ``.csv``.

    CSV files in the OVERT format (``seed_prompt, image_prompt, category``) get
    ids ``{id_prefix or 'OVERT'}_{row:04d}`` (1-based row order), their category as
    domain and the seed prompt kept in ``metadata``.
    """
    path = Path(path) if path is not None else DEFAULT_BASE_PROMPTS_PATH
    suffix = path.suffix.lower()
    if suffix == ".csv":
        rows = _read_csv(path)
    elif suffix == ".jsonl":
        lines = path.read_text(encoding="utf-8").splitlines()
        rows = [json.loads(line) for line in lines if line.strip()]
    elif suffix == ".json":
        rows = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(rows, dict):
            rows = rows.get("prompts", [])
    else:
        raise BasePromptError(f"{path}: unsupported extension '{suffix}' (csv, json, jsonl)")
    if not isinstance(rows, list) or not rows:
        raise BasePromptError(f"{path}: no prompts found")
    is_overt = OVERT_COLUMNS <= set(rows[0])
    prefix = id_prefix or ("OVERT" if is_overt else "")
    prompts = [
        _parse_row(row, index, source=path.name, id_prefix=prefix) for index, row in enumerate(rows)
    ]
    _check_unique_ids(prompts, path)
    return prompts


def _read_csv(path: Path) -> list[dict]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _first(row: dict, keys: tuple[str, ...]) -> str:
    for key in keys:
        value = row.get(key)
        if value is not None and str(value).strip():
            return " ".join(str(value).split())
    return ""


def _parse_row(row: dict, index: int, *, source: str, id_prefix: str) -> BasePrompt:
    where = f"{source} row {index + 1}"
    if not isinstance(row, dict):
        raise BasePromptError(f"{where}: expected an object")
    text = _first(row, TEXT_KEYS)
    domain = _first(row, DOMAIN_KEYS)
    if not text:
        raise BasePromptError(f"{where}: missing prompt text (one of {TEXT_KEYS})")
    if not domain:
        raise BasePromptError(f"{where}: missing domain (one of {DOMAIN_KEYS})")
    prompt_id = _first(row, ID_KEYS) or f"{id_prefix or 'P'}_{index + 1:04d}"
    used = set(ID_KEYS) | set(TEXT_KEYS) | set(DOMAIN_KEYS)
    metadata = {key: value for key, value in row.items() if key not in used}
    return BasePrompt(
        prompt_id=prompt_id, text=text, domain=domain, source=source, metadata=metadata
    )


def _check_unique_ids(prompts: list[BasePrompt], path: Path) -> None:
    seen: set[str] = set()
    for prompt in prompts:
        if prompt.prompt_id in seen:
            raise BasePromptError(f"{path}: duplicate prompt id '{prompt.prompt_id}'")
        seen.add(prompt.prompt_id)
