"""Strict parsing of one raw answer, with the statistics core's parsers.

Django-free. The status vocabulary is the stats module's (valid / refusal / invalid), plus
``error`` when no answer came back at all (transport failure: retried on the next run).
The explanation variant of the MCQ puts the letter on line 1 and a rationale on line 2; only
line 1 is parsed, strictly.
"""

from __future__ import annotations

from dataclasses import dataclass

from scoring.stats.reflect.parsing import parse_letter, parse_salary
from scoring.stats.reflect.vocabulary import INVALID, MCQ_OPTIONS, TWO_AFC_OPTIONS

ERROR = "error"


@dataclass(frozen=True)
class ParsedAnswer:
    status: str
    value: str  # the letter or the salary as text; "" unless valid
    scored_text: str | None  # what the strict parser saw (line 1 for the explanation variant)
    rationale: str = ""


def split_explanation(raw: str) -> tuple[str, str]:
    """``"B\\nBecause ..."`` → ``("B", "Because ...")``; blank lines between are skipped."""
    lines = [line for line in raw.strip().splitlines() if line.strip()]
    if not lines:
        return "", ""
    return lines[0], "\n".join(lines[1:]).strip()


def parse_answer(task: str, item: str, raw: str | None, *, explain: bool = False) -> ParsedAnswer:
    """Classify one raw answer of ``task`` (2afc / mcq / salary) about ``item``."""
    if raw is None:
        return ParsedAnswer(INVALID, "", None)
    scored, rationale = split_explanation(raw) if explain else (raw, "")
    if task == "2afc":
        status, letter = parse_letter(scored, TWO_AFC_OPTIONS)
        return ParsedAnswer(status, letter or "", scored, rationale)
    if task == "mcq":
        status, letter = parse_letter(scored, MCQ_OPTIONS[item])
        return ParsedAnswer(status, letter or "", scored, rationale)
    if task == "salary":
        status, dollars = parse_salary(scored)
        return ParsedAnswer(status, "" if dollars is None else str(dollars), scored, rationale)
    raise ValueError(f"unknown task {task!r}")
