"""Optional LLM boundary rephrasing of base prompts, with similarity and benign checks.

A rewriter (an OpenAI-compatible chat endpoint, hosted or a local vLLM/Ollama
server, or a local transformers model folder) rewrites a base prompt toward the
safety boundary. A rewrite is kept only if it stays close to the original
(embedding cosine from a local model folder, or a lexical fallback) and passes a
benign-intent check. Every answer is cached by (model, instruction, decoding), and
every record, kept or not, names the rewriter, model, temperature, seed, instruction,
similarity method and threshold. Rewriters are configured by name (``rewriters:`` in the
backends file, :class:`RewriterConfig`); docs/generation.md ("Boundary rephrasing").
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import requests

from annotations.common.csv_writer import csv_text
from generation.prompts.base_prompts import BasePrompt
from generation.prompts.rewriters import (
    DEFAULT_INSTRUCTION,
    LexicalSimilarity,
    OpenAICompatibleRewriter,
    Rewriter,
    RewriterConfig,
    RewriterError,
    Similarity,
    load_rewriter,
    load_similarity,
)

__all__ = [  # the rewriters are re-exported: callers import rephrasing from one place
    "DEFAULT_INSTRUCTION",
    "LexicalSimilarity",
    "OpenAICompatibleRewriter",
    "RECORD_COLUMNS",
    "RECORD_FORMATS",
    "RephraseCache",
    "RephraseError",
    "RephraseRecord",
    "RewriterConfig",
    "RewriterError",
    "apply_rephrasings",
    "benign_intent_check",
    "rephrase_prompts",
    "rephrase_with_config",
    "write_records",
]

# Patterns that make a rewrite non-benign whatever its similarity (instructions for harm,
# sexualised minors, targeted harassment). A coarse screen, recorded as the reason.
HARMFUL_PATTERNS = {
    "instructions_for_harm": r"\b(how to|step[- ]by[- ]step|instructions? (for|to))\b.*\b(kill|bomb|poison|weapon|hurt|overdose)",
    "explicit_sexual": r"\b(nude|naked|explicit|porn\w*|sexual act)\b",
    "minor_sexualised": r"\b(child|minor|teen\w*|kid)\b.*\b(sexy|seductive|lingerie)\b",
    "self_harm_method": r"\b(cutting (my|your|their)self|suicide method|lethal dose)\b",
    "targeted_hate": r"\b(inferior race|subhuman|exterminate)\b",
}


class RephraseError(RuntimeError):
    """Rephrasing stopped on a rewriter error (``fail_fast``); the message is one line."""


@dataclass(frozen=True)
class RephraseRecord:
    prompt_id: str
    original: str
    rewrite: str
    kept: bool
    similarity: float
    benign: bool
    reason: str  # "" when kept; else "too_dissimilar", "not_benign:<pattern>", "empty", "error:..."
    model: str
    instruction: str
    similarity_method: str
    cached: bool = False
    rewriter: str = ""  # the configured name
    temperature: float | None = None
    seed: int | None = None
    min_similarity: float | None = None


# The export columns, in reading order: one definition for the command, the page and the API.
RECORD_COLUMNS = (
    "prompt_id",
    "original",
    "rewrite",
    "kept",
    "reason",
    "similarity",
    "benign",
    "min_similarity",
    "similarity_method",
    "rewriter",
    "model",
    "temperature",
    "seed",
    "cached",
    "instruction",
)


# --- the benign check ----------------------------------------------------------------------


def benign_intent_check(text: str) -> tuple[bool, str]:
    """``(True, "")`` or ``(False, pattern_name)`` for the first harmful pattern found."""
    lowered = text.lower()
    for name, pattern in HARMFUL_PATTERNS.items():
        if re.search(pattern, lowered):
            return False, name
    return True, ""


# --- cache ----------------------------------------------------------------------------------


class RephraseCache:
    """The rewriter's answers, one JSON line each, keyed by sha256(model, instruction, decoding).

    Only answers are cached, never verdicts: the checks run again on every use, so a new
    threshold or similarity model applies to cached rewrites too. Appending one line per
    answer keeps a long run's progress if it stops half-way."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._answers: dict[str, str] = {}
        if self.path.exists():
            for line in self.path.read_text("utf-8").splitlines():
                if line.strip():
                    entry = json.loads(line)
                    self._answers[entry["key"]] = entry["rewrite"]

    @staticmethod
    def key(model: str, instruction: str, decoding: dict | None = None) -> str:
        payload = json.dumps([model, instruction, decoding or {}], sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()

    def get(self, model: str, instruction: str, decoding: dict | None = None) -> str | None:
        return self._answers.get(self.key(model, instruction, decoding))

    def put(self, model: str, instruction: str, decoding: dict | None, rewrite: str) -> None:
        key = self.key(model, instruction, decoding)
        self._answers[key] = rewrite
        self.path.parent.mkdir(parents=True, exist_ok=True)
        entry = {"key": key, "model": model, "decoding": decoding or {}, "rewrite": rewrite}
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry, ensure_ascii=False) + "\n")


# --- the pipeline ---------------------------------------------------------------------------


def rephrase_prompts(
    base_prompts: list[BasePrompt],
    rewriter: Rewriter,
    *,
    similarity: Similarity | None = None,
    cache: RephraseCache | None = None,
    instruction_template: str = DEFAULT_INSTRUCTION,
    min_similarity: float = 0.5,
    rewriter_name: str = "",
    fail_fast: bool = False,
) -> list[RephraseRecord]:
    """Rewrite each base prompt once (answers cached), keeping rewrites that pass both checks.

    A rewriter error is recorded as ``error:<type>`` and not cached; with ``fail_fast`` it
    raises :class:`RephraseError` instead (answers obtained so far stay cached)."""
    similarity = similarity or LexicalSimilarity()
    decoding = dict(rewriter.decoding)
    records = []
    for base in base_prompts:
        instruction = instruction_template.format(prompt=base.text)
        common = dict(
            prompt_id=base.prompt_id,
            original=base.text,
            model=rewriter.model_name,
            instruction=instruction,
            similarity_method=similarity.name,
            rewriter=rewriter_name,
            temperature=decoding.get("temperature"),
            seed=decoding.get("seed"),
            min_similarity=min_similarity,
        )
        answer = cache.get(rewriter.model_name, instruction, decoding) if cache else None
        if answer is not None:
            records.append(_checked(answer, similarity, cached=True, **common))
            continue
        try:
            answer = rewriter.rewrite(instruction)
        except (RewriterError, requests.RequestException, ValueError, OSError) as error:
            if fail_fast:
                raise RephraseError(
                    f"rewriter {rewriter_name or rewriter.model_name!r} failed on base prompt "
                    f"{base.prompt_id}: {error}"
                ) from error
            cause = error.__cause__ if isinstance(error, RewriterError) else error
            records.append(_failed(f"error:{type(cause or error).__name__}", **common))
            continue
        if cache is not None:
            cache.put(rewriter.model_name, instruction, decoding, answer)
        records.append(_checked(answer, similarity, cached=False, **common))
    return records


def _failed(reason: str, **common) -> RephraseRecord:
    return RephraseRecord(
        rewrite="", kept=False, similarity=0.0, benign=False, reason=reason, **common
    )


def _checked(answer: str, similarity, *, cached: bool, **common) -> RephraseRecord:
    """The two checks, in order: benign first (a harmful rewrite is dropped whatever its
    similarity), then similarity to the original."""
    rewrite = " ".join(answer.split()).strip("\"' ")
    if not rewrite:
        return replace(_failed("empty", **common), cached=cached)
    score = similarity.score(common["original"], rewrite)
    benign, pattern = benign_intent_check(rewrite)
    reason = "" if benign else f"not_benign:{pattern}"
    if benign and score < common["min_similarity"]:
        reason = "too_dissimilar"
    return RephraseRecord(
        rewrite=rewrite,
        kept=not reason,
        similarity=round(score, 4),
        benign=benign,
        reason=reason,
        cached=cached,
        **common,
    )


def rephrase_with_config(
    base_prompts: list[BasePrompt],
    config: RewriterConfig,
    *,
    cache: RephraseCache | None = None,
    fail_fast: bool = True,
) -> list[RephraseRecord]:
    """:func:`rephrase_prompts` with the rewriter, similarity and threshold of ``config``."""
    return rephrase_prompts(
        base_prompts,
        load_rewriter(config),
        similarity=load_similarity(config),
        cache=cache,
        instruction_template=config.instruction,
        min_similarity=config.min_similarity,
        rewriter_name=config.name,
        fail_fast=fail_fast,
    )


def apply_rephrasings(base_prompts: list[BasePrompt], records: list[RephraseRecord]):
    """Base prompts with each kept rewrite in place of the text; the original and the
    rewriting model go to ``metadata``."""
    kept = {record.prompt_id: record for record in records if record.kept}
    result = []
    for base in base_prompts:
        record = kept.get(base.prompt_id)
        if record is None:
            result.append(base)
            continue
        metadata = {**base.metadata, "original_text": base.text, "rephrase_model": record.model}
        result.append(replace(base, text=record.rewrite, metadata=metadata))
    return result


# --- export: records → rows → CSV / JSON lines ----------------------------------------------


def record_rows(records: Iterable[RephraseRecord]) -> list[dict[str, Any]]:
    return [{column: getattr(record, column) for column in RECORD_COLUMNS} for record in records]


def records_jsonl(records: Iterable[RephraseRecord]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in record_rows(records))


def records_csv(records: Iterable[RephraseRecord]) -> str:
    return csv_text(record_rows(records), list(RECORD_COLUMNS), lineterminator="\n")


RECORD_FORMATS = {"csv": records_csv, "jsonl": records_jsonl}


def write_records(records: Iterable[RephraseRecord], path: str | Path) -> int:
    """Write ``.csv`` or ``.jsonl`` by the file's extension; returns the rows written."""
    path = Path(path)
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in RECORD_FORMATS:
        raise ValueError(f"{path}: rephrase records are written as .csv or .jsonl")
    records = list(records)
    path.write_text(RECORD_FORMATS[fmt](records), encoding="utf-8")
    return len(records)
