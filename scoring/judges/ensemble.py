"""Several judges vote on each item, weighted by their confidence.

Each valid vote adds its confidence (or ``default_confidence`` when the member reports none)
to its label; the label with the largest total wins, and the ensemble's confidence is that
total over the sum of all valid votes' weights. The item needs human review when judges
disagree, when fewer than ``min_valid_votes`` members gave a valid label, or when the
ensemble's confidence is below ``min_confidence``. Each member's own output is kept in
``member_outputs`` so it can be stored separately.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from scoring.judges.records import (
    INVALID_LABEL,
    ItemInput,
    Judge,
    JudgmentOutput,
    preferred_batch_size,
)


@dataclass(frozen=True)
class Vote:
    judge: str
    label: str
    weight: float


@dataclass(frozen=True)
class EnsembleDecision:
    label: str | None
    confidence: float | None
    needs_review: bool
    reasons: tuple[str, ...]
    totals: dict[str, float]


def ensemble_decision(
    votes: Sequence[Vote], *, min_confidence: float = 0.6, min_valid_votes: int = 1
) -> EnsembleDecision:
    """The confidence-weighted vote over valid votes (see the module docstring)."""
    totals: dict[str, float] = defaultdict(float)
    for vote in votes:
        totals[vote.label] += vote.weight
    reasons = []
    if len(votes) < min_valid_votes:
        reasons.append(f"only {len(votes)} valid vote(s), need {min_valid_votes}")
    if not votes:
        return EnsembleDecision(None, None, True, tuple(reasons), {})
    if len(totals) > 1:
        reasons.append("judges disagree: " + ", ".join(sorted(totals)))
    mass = sum(totals.values())
    label = max(sorted(totals), key=totals.__getitem__)
    confidence = totals[label] / mass if mass > 0 else 0.0
    if confidence < min_confidence:
        reasons.append(f"confidence {confidence:.3f} below {min_confidence}")
    return EnsembleDecision(label, confidence, bool(reasons), tuple(reasons), dict(totals))


class EnsembleJudge:
    def __init__(
        self,
        members: Sequence[Judge],
        *,
        name: str = "ensemble",
        version: str = "1",
        min_confidence: float = 0.6,
        min_valid_votes: int = 1,
        default_confidence: float = 0.5,
    ):
        if not members:
            raise ValueError("an ensemble needs at least one member judge")
        names = [m.name for m in members]
        if len(set(names)) != len(names):
            raise ValueError(f"ensemble member names must be unique, got {names}")
        self.members = list(members)
        self.name = name
        self.version = version
        self.min_confidence = min_confidence
        self.min_valid_votes = min_valid_votes
        self.default_confidence = default_confidence

    @property
    def batch_size(self) -> int:
        return max(preferred_batch_size(member) for member in self.members)

    def cache_prompt(self, item: ItemInput) -> str:
        return json.dumps(
            {m.name: [m.version, m.cache_prompt(item)] for m in self.members}, sort_keys=True
        )

    def judge_items(self, items: Sequence[ItemInput]) -> list[JudgmentOutput]:
        per_member = [member.judge_items(items) for member in self.members]
        return [
            self._combine(item, [outputs[i] for outputs in per_member])
            for i, item in enumerate(items)
        ]

    def _vote(self, output: JudgmentOutput) -> Vote | None:
        if output.error is not None or output.label in (None, INVALID_LABEL):
            return None
        weight = self.default_confidence if output.confidence is None else output.confidence
        return Vote(output.judge_name, output.label, weight)

    def _combine(self, item: ItemInput, outputs: list[JudgmentOutput]) -> JudgmentOutput:
        votes = [v for v in (self._vote(o) for o in outputs) if v is not None]
        decision = ensemble_decision(
            votes, min_confidence=self.min_confidence, min_valid_votes=self.min_valid_votes
        )
        all_failed = all(o.error is not None for o in outputs)
        label = decision.label
        if label is None and not all_failed:
            label = INVALID_LABEL  # members answered, but none validly
        return JudgmentOutput(
            item_id=item.item_id,
            judge_name=self.name,
            judge_version=self.version,
            label=label,
            confidence=decision.confidence,
            needs_review=decision.needs_review,
            evidence={
                "votes": [{"judge": v.judge, "label": v.label, "weight": v.weight} for v in votes],
                "totals": decision.totals,
                "review_reasons": list(decision.reasons),
            },
            error="every member judge failed" if all_failed else None,
            member_outputs=outputs,
        )
