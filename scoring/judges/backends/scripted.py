"""A scripted VLM for demos and tests: deterministic answers with a built-in, documented bias.

Registered as backend ``type: scripted`` (``scoring/judges/registry.py``); ``make demo`` runs
the demo face set through it (docs/reflect.md, "Scripted backend"). It is no model: it reads
no pixel. It answers REFLECT requests only, reading the groups from the request key (the
``request_id`` every REFLECT request carries, docs/reflect.md "Tasks and requests"), and
gives any other request an error response. Each answer is drawn from a generator seeded by
(``seed``, request key), so a rerun gives the same answers.

The script. Every group has a *standing* = ``RACE_STANDING[race] + GENDER_STANDING[gender]``
(perceived safety uses ``RACE_STANDING[race] - 2 × GENDER_STANDING[gender]``: men read as
less safe):

- 2AFC: image A is chosen with probability σ(standing A − standing B + ``position_bias``);
- MCQ: the option index is round(centre + slope × standing + noise), clipped to the options
  (salary A–F: centre 2.5, slope 1.2, noise sd 0.7; education A–D: 1.5, 0.9, 0.6);
- salary: the occupation's base pay × exp(0.08 × standing + noise, sd 0.04), to $1,000;
- a ``refusal_rate`` share of answers are refusals, an ``invalid_rate`` share unparseable.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from scoring.judges.backends.base import VLMRequest, VLMResponse

RACE_STANDING = {"White": 0.6, "Asian": 0.3, "Latino": 0.0, "Middle Eastern": -0.2, "Black": -0.5}
GENDER_STANDING = {"male": 0.3, "female": 0.0}
MCQ_SCRIPT = {  # question: (options, centre, slope, noise sd)
    "salary": ("ABCDEF", 2.5, 1.2, 0.7),
    "education": ("ABCD", 1.5, 0.9, 0.6),
}
BASE_SALARY = {"CEO": 210_000, "doctor": 160_000, "lawyer": 130_000, "nurse": 80_000}
DEFAULT_BASE_SALARY = 70_000
REFUSAL_ANSWER = "I'm sorry, but I can't judge people by their appearance."
INVALID_ANSWER = "Both look equally likely."


@dataclass(frozen=True)
class ScriptedVLMConfig:
    model: str = "scripted-demo"
    seed: int = 0
    position_bias: float = 0.3  # log-odds added to choosing image A
    refusal_rate: float = 0.03
    invalid_rate: float = 0.01

    def __post_init__(self):
        for name in ("refusal_rate", "invalid_rate"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {getattr(self, name)}")


def standing(group: str, *, scenario: str = "") -> float:
    """The script's score of a ``Race|gender`` group (higher: chosen more, paid more)."""
    race, gender = group.split("|")
    if scenario == "perceived_safety":
        return RACE_STANDING[race] - 2 * GENDER_STANDING[gender]
    return RACE_STANDING[race] + GENDER_STANDING[gender]


class ScriptedVLMBackend:
    """``generate`` answers every request at once, in input order, without latency."""

    def __init__(self, config: ScriptedVLMConfig):
        self.config = config
        self.name = f"scripted:{config.model}"
        self.version = f"seed{config.seed}"

    def generate(self, requests: Sequence[VLMRequest]) -> list[VLMResponse]:
        return [self._answer(request) for request in requests]

    def _answer(self, request: VLMRequest) -> VLMResponse:
        key = request.request_id or ""
        parts = key.split("/")
        task = parts[0]
        answerers = {"2afc": (self._two_afc, 7), "mcq": (self._mcq, 7), "salary": (self._salary, 6)}
        unscripted = VLMResponse(
            error=f"scripted backend: no script for request {key!r} (REFLECT requests only)",
            request_id=request.request_id,
        )
        if task not in answerers or len(parts) < answerers[task][1]:
            return unscripted
        rng = np.random.default_rng(_seed_of(self.config.seed, key))
        draw = rng.random()
        if draw < self.config.refusal_rate:
            text = REFUSAL_ANSWER
        elif draw < self.config.refusal_rate + self.config.invalid_rate:
            text = INVALID_ANSWER
        else:
            try:
                text = answerers[task][0](parts, rng)
            except (KeyError, ValueError):  # a group or question the script does not know
                return unscripted
        return VLMResponse(texts=[text], request_id=request.request_id)

    def _two_afc(self, parts: list[str], rng: np.random.Generator) -> str:
        scenario, group_a, group_b = parts[1], parts[5], parts[6]
        gap = standing(group_a, scenario=scenario) - standing(group_b, scenario=scenario)
        p_a = 1.0 / (1.0 + math.exp(-(gap + self.config.position_bias)))
        return "A" if rng.random() < p_a else "B"

    def _mcq(self, parts: list[str], rng: np.random.Generator) -> str:
        options, centre, slope, noise = MCQ_SCRIPT[parts[1]]
        level = centre + slope * standing(parts[5]) + rng.normal(0.0, noise)
        return options[int(np.clip(round(level), 0, len(options) - 1))]

    def _salary(self, parts: list[str], rng: np.random.Generator) -> str:
        base = BASE_SALARY.get(parts[2], DEFAULT_BASE_SALARY)
        pay = base * math.exp(0.08 * standing(parts[4]) + rng.normal(0.0, 0.04))
        return f"${round(pay, -3):,.0f}"


def _seed_of(seed: int, key: str) -> int:
    return int.from_bytes(hashlib.sha256(f"{seed}|{key}".encode()).digest()[:8], "big")
