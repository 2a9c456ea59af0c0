"""The qualification round's rules as plain functions (no Django): what a batch may require,
an attempt's score and verdict, and how many attempts an annotator has.
docs/annotation.md#qualification-round.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from annotations.labels import gold_correct

# A pass mark is a share; a round this long is already a batch of its own.
MAX_ITEMS = 200


@dataclass(frozen=True)
class Requirement:
    """A batch's qualification round: ``items`` gold items per attempt, passed when at least
    ``pass_mark`` of the answers match the gold label, ``attempts`` tries each."""

    items: int
    pass_mark: float
    attempts: int = 1


def requirement_problems(requirement: Requirement, *, gold_available: int) -> list[str]:
    """One line per problem with the requirement (empty: it can be used). ``gold_available``:
    the study's gold items an attempt may draw."""
    problems = []
    if requirement.items < 1:
        problems.append(
            f"qualification: at least 1 gold item per attempt (got {requirement.items})"
        )
    elif requirement.items > MAX_ITEMS:
        problems.append(
            f"qualification: at most {MAX_ITEMS} gold items per attempt (got {requirement.items})"
        )
    elif requirement.items > gold_available:
        problems.append(
            f"qualification: {requirement.items} gold items per attempt, but the study has "
            f"{gold_available} gold item(s) to draw from"
        )
    if not 0 < requirement.pass_mark <= 1:
        problems.append(
            f"qualification: the pass mark is a share in (0, 1], e.g. 0.8 (got {requirement.pass_mark})"
        )
    if requirement.attempts < 1:
        problems.append(f"qualification: at least 1 attempt (got {requirement.attempts})")
    return problems


def fresh_gold_shortfalls(requirement: Requirement, fresh_gold: Mapping[str, int]) -> list[str]:
    """One line per annotator with fewer unseen gold items than one attempt needs."""
    return [
        f"qualification: {name} has {count} gold item(s) not yet assigned to them; "
        f"an attempt needs {requirement.items}"
        for name, count in sorted(fresh_gold.items())
        if count < requirement.items
    ]


@dataclass(frozen=True)
class AttemptResult:
    correct: int
    answered: int
    passed: bool

    @property
    def score(self) -> float | None:
        return self.correct / self.answered if self.answered else None


def attempt_result(records: Iterable[Mapping], *, pass_mark: float) -> AttemptResult:
    """Score an attempt's answers against their gold labels (``labels.gold_correct``, the one
    definition gold accuracy uses too). ``records``: dicts with ``hard_refusal``, ``cue``,
    ``gold_hard_refusal`` and ``gold_cue``. Passed when correct / answered >= pass_mark; an
    attempt with no answer does not pass."""
    answers = list(records)
    correct = sum(int(gold_correct(record)) for record in answers)
    answered = len(answers)
    # In integers, so 4 of 5 passes a pass mark of 0.8 whatever the float rounding.
    passed = answered > 0 and correct * 10**6 >= round(pass_mark * 10**6) * answered
    return AttemptResult(correct, answered, passed)


def attempts_allowed(batch_attempts: int, granted: Iterable[int]) -> int:
    """The batch's attempts, or more where staff granted more (a grant names the new total)."""
    return max([batch_attempts, *granted])


def gold_draw(fresh_gold: Sequence[int], count: int, rng: np.random.Generator) -> list[int]:
    """``count`` of the annotator's unseen gold items, at random without replacement, in the
    order they will be shown."""
    if count > len(fresh_gold):
        raise ValueError(f"{count} gold items needed, {len(fresh_gold)} unseen")
    chosen = rng.choice(len(fresh_gold), size=count, replace=False)
    return [fresh_gold[int(i)] for i in chosen]
