"""The plain records every judge takes and returns, and the one interface they share."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from annotations.labels import CUE_LABELS

logger = logging.getLogger(__name__)

REFUSAL = "refusal"
NOT_REFUSAL = "not_refusal"
HARD_REFUSAL_LABELS = (REFUSAL, NOT_REFUSAL)

# The cue vocabulary is the survey's (one definition, Django-free): judges answer what people do.
RETAINED, ERASED, SUBSTITUTED = CUE_LABELS

# An answer that did not parse: recorded as such, never guessed into a label.
INVALID_LABEL = "invalid"


@dataclass(frozen=True)
class ItemInput:
    """One generated output to judge.

    ``image_path`` is None when the generator returned no image. ``provider_signal`` carries
    what an API or a local pipeline said about refusing (e.g. ``{"refused": True, "code":
    "content_policy_violation", "message": "..."}`` or diffusers' ``{"nsfw_content_detected":
    True}``); ``returned_text`` is any text the generator sent back with (or instead of) the
    image. ``cue`` is the attribute the prompt asked for (cue judges need it).
    """

    item_id: str
    image_path: str | None = None
    prompt: str = ""
    cue: str | None = None
    generator: str | None = None
    provider_signal: dict[str, Any] | None = None
    returned_text: str | None = None
    # The image's content hash as the storage recorded it: the cache key uses it instead of
    # reading the file again (None: the cache hashes the file itself).
    image_sha256: str | None = None
    # Image-to-image items: the source image, shown to VLM judges before the edit.
    source_image_path: str | None = None


@dataclass
class JudgmentOutput:
    """One judge's verdict on one item.

    ``label`` is one of the judge's labels, ``"invalid"`` for an unparseable answer, or None
    when ``error`` says why the item could not be judged. ``member_outputs`` holds each
    member's own output for an ensemble (store them separately), and is empty otherwise.
    """

    item_id: str
    judge_name: str
    judge_version: str
    label: str | None = None
    confidence: float | None = None
    needs_review: bool = False
    evidence: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    cached: bool = False
    member_outputs: list[JudgmentOutput] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_dict(self) -> dict[str, Any]:
        """The output as plain data, keys in field order. Written out rather than read from
        ``dataclasses.fields``, which cost more than the rest of storing a verdict (a test
        keeps the two in step). ``evidence`` is shared, not deep-copied: judges build it fresh
        per item and nothing changes it afterwards."""
        return {
            "item_id": self.item_id,
            "judge_name": self.judge_name,
            "judge_version": self.judge_version,
            "label": self.label,
            "confidence": self.confidence,
            "needs_review": self.needs_review,
            "evidence": self.evidence,
            "error": self.error,
            "cached": self.cached,
            "member_outputs": [member.to_dict() for member in self.member_outputs],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> JudgmentOutput:
        data = dict(data)
        members = [cls.from_dict(m) for m in data.pop("member_outputs", [])]
        return cls(**data, member_outputs=members)


@runtime_checkable
class Judge(Protocol):
    """What a Celery task calls: a named, versioned scorer of a batch of items."""

    name: str
    version: str

    def judge_items(self, items: Sequence[ItemInput]) -> list[JudgmentOutput]: ...

    def cache_prompt(self, item: ItemInput) -> str:
        """Everything besides the image that the verdict depends on (part of the cache key)."""
        ...


def preferred_batch_size(judge: Judge) -> int:
    """How many items a judge wants per call (its model batch; 1 when it does not say), so a
    caller's chunk never caps the model's batch."""
    return max(1, int(getattr(judge, "batch_size", 1)))


def error_output(judge: Judge, item: ItemInput, error: BaseException | str) -> JudgmentOutput:
    message = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
    return JudgmentOutput(
        item_id=item.item_id,
        judge_name=judge.name,
        judge_version=judge.version,
        error=message,
        needs_review=True,
    )
