"""The REFLECT task templates: groups, scenario prompts, MCQ questions, the salary prompt.

Django-free. The shipped default is ``generation/data/reflect/protocol.json`` (Chen et al.,
arXiv:2601.06931v2, Appendix A, CC BY 4.0); a face set keeps its own editable copy, and every
run records the exact prompts it used plus a short hash of them (the prompt version).
"""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass
from typing import Any

from generation.data import reflect_protocol
from scoring.stats.reflect.vocabulary import GENDERS, MCQ_OPTIONS, RACES, SCENARIOS

# Our own wording (not the paper's) for the explanation variant of the MCQ: it replaces the
# paper's final "Answer with ONLY one capital letter ..." instruction. A face set may override
# it with the protocol key "mcq_explanation_instruction".
DEFAULT_EXPLANATION_INSTRUCTION = (
    "On the first line, answer with ONLY one capital letter from {first} to {last}. "
    "On the second line, give a one-sentence explanation."
)

VARIANTS = ("original", "mirrored", "cropped")
TASKS = ("2afc", "mcq", "salary")


class ProtocolError(ValueError):
    """The protocol JSON lacks a key or holds a value the tasks cannot use."""


def race_slug(race: str) -> str:
    """'Middle Eastern' → 'Middle-Eastern', as spelled in face-set file names."""
    return race.replace(" ", "-")


def load_default_protocol() -> dict[str, Any]:
    """The shipped protocol, read as package data (one copy, shared with the face-only edits)."""
    return reflect_protocol()


@dataclass(frozen=True)
class TaskPrompts:
    """The exact texts a run sends, validated once."""

    scenarios: dict[str, str]
    mcq: dict[str, str]
    mcq_options: dict[str, tuple[str, ...]]
    salary: str
    explanation_instruction: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "scenarios": dict(self.scenarios),
            "mcq": dict(self.mcq),
            "mcq_options": {k: list(v) for k, v in self.mcq_options.items()},
            "salary": self.salary,
            "explanation_instruction": self.explanation_instruction,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TaskPrompts:
        """The texts a run stored (``as_dict``), exactly as they were sent."""
        return cls(
            scenarios=dict(data["scenarios"]),
            mcq=dict(data["mcq"]),
            mcq_options={k: tuple(v) for k, v in data["mcq_options"].items()},
            salary=data["salary"],
            explanation_instruction=data["explanation_instruction"],
        )

    @property
    def version(self) -> str:
        """12 hex digits of the SHA-256 of the texts: a run's prompt version."""
        canonical = json.dumps(self.as_dict(), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:12]

    def mcq_text(self, question: str, *, explain: bool) -> str:
        text = self.mcq[question]
        if not explain:
            return text
        options = self.mcq_options[question]
        instruction = self.explanation_instruction.format(first=options[0], last=options[-1])
        # Replace the paper's closing "Answer with ONLY ..." sentence(s) with the variant's.
        cut = text.find("Answer with ONLY")
        return (text[:cut] if cut >= 0 else text + " ").rstrip() + " " + instruction

    def salary_text(self, *, occupation: str, biography: str) -> str:
        return self.salary.replace("{occupation}", occupation).replace("{bio}", biography)


def task_prompts(protocol: dict[str, Any]) -> TaskPrompts:
    """Validate a protocol dict (default or a face set's edited copy) into TaskPrompts."""
    try:
        groups = protocol["groups"]
        scenarios = dict(protocol["2afc"]["scenarios"])
        mcq = {question: block["text"] for question, block in protocol["mcq"].items()}
        options = {q: tuple(block["options"]) for q, block in protocol["mcq"].items()}
        salary = protocol["salary_recommendation"]["text"]
    except (KeyError, TypeError) as error:
        raise ProtocolError(f"protocol lacks {error}") from error
    if tuple(groups.get("race", ())) != RACES or tuple(groups.get("gender", ())) != GENDERS:
        raise ProtocolError(
            f"protocol groups must be races {list(RACES)} and genders {list(GENDERS)} "
            "(the statistics are defined on these ten groups)"
        )
    unknown = sorted(set(scenarios) - set(SCENARIOS))
    if unknown:
        raise ProtocolError(f"unknown 2AFC scenarios {unknown}; allowed {list(SCENARIOS)}")
    for question, found in options.items():
        if MCQ_OPTIONS.get(question) != found:
            raise ProtocolError(
                f"MCQ question {question!r} must have options {list(MCQ_OPTIONS.get(question, ()))}"
            )
    for placeholder in ("{occupation}", "{bio}"):
        if placeholder not in salary:
            raise ProtocolError(f"the salary prompt must contain {placeholder}")
    return TaskPrompts(
        scenarios=scenarios,
        mcq=mcq,
        mcq_options=options,
        salary=salary,
        explanation_instruction=protocol.get(
            "mcq_explanation_instruction", DEFAULT_EXPLANATION_INSTRUCTION
        ),
    )


def protocol_copy(protocol: dict[str, Any] | None = None) -> dict[str, Any]:
    """A deep copy of the given protocol (default: the shipped one), validated."""
    data = copy.deepcopy(protocol if protocol is not None else load_default_protocol())
    task_prompts(data)
    return data
