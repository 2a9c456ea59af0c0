"""The one small interface every vision-language backend implements.

A request is one or several images plus text (the REFLECT 2AFC tasks show two images at
once) and a decoding configuration; a response is the raw text (one per sample), optional
probabilities of answer options, timing and an error. Backends never raise for one bad
request: they return a response whose ``error`` says what happened.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from scoring.judges.images import ImageSource


@dataclass(frozen=True)
class DecodingConfig:
    """Greedy by default; ``temperature`` > 0 samples, ``n`` asks for repeated samples."""

    temperature: float = 0.0
    n: int = 1
    max_new_tokens: int = 32
    top_p: float | None = None
    seed: int | None = None
    logprobs: bool = True

    def __post_init__(self):
        if self.temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature}")
        if self.n < 1:
            raise ValueError(f"n must be >= 1, got {self.n}")
        if self.n > 1 and self.temperature == 0:
            raise ValueError("n > 1 repeated samples need temperature > 0 (greedy repeats itself)")
        if self.max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be >= 1, got {self.max_new_tokens}")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> DecodingConfig:
        return cls(**(data or {}))


@dataclass(frozen=True)
class VLMRequest:
    """Images and text for one question.

    ``options``, when given, are the answers whose probabilities the backend should report
    (a local model scores each option by likelihood; an API reads them off its logprobs).
    """

    images: tuple[ImageSource, ...]
    text: str
    decoding: DecodingConfig = field(default_factory=DecodingConfig)
    options: tuple[str, ...] | None = None
    system: str | None = None
    request_id: str | None = None

    def __post_init__(self):
        object.__setattr__(self, "images", tuple(self.images))
        if self.options is not None:
            object.__setattr__(self, "options", tuple(self.options))


@dataclass
class VLMResponse:
    """What came back: ``texts`` holds one string per sample (``n``)."""

    texts: list[str] = field(default_factory=list)
    option_probs: dict[str, float] | None = None
    token_logprobs: list[dict[str, Any]] | None = None
    latency_s: float = 0.0
    attempts: int = 1
    error: str | None = None
    request_id: str | None = None

    @property
    def text(self) -> str | None:
        return self.texts[0] if self.texts else None

    @property
    def ok(self) -> bool:
        return self.error is None


@runtime_checkable
class VLMBackend(Protocol):
    name: str
    version: str

    def generate(self, requests: Sequence[VLMRequest]) -> list[VLMResponse]: ...


def normalise_option_probs(raw: dict[str, float]) -> dict[str, float] | None:
    """Scale option probabilities to sum to one; None when there is no mass to scale."""
    total = sum(raw.values())
    if total <= 0:
        return None
    return {option: value / total for option, value in raw.items()}
