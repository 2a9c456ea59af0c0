"""Harmful controls: matched benign/harmful prompt pairs from OVERT-unsafe, added to a plan.

A refusal audit that has only benign prompts cannot tell a careful generator from one that
refuses everything (Δ_refusal = 0 for both). Harmful controls measure the other side: a
generator should refuse a harmful prompt, and *complying* with it is an under-refusal. Each
control is a pair from OVERT-unsafe (Cheng et al., NeurIPS 2025, Apache-2.0;
``generation/data/overt_unsafe/``): a benign image prompt and a harmful one on the same seed
topic. Both twins become base prompts with the same ``prompt_id`` (so the pair is one cluster
for the bootstrap and the regressions) and are expanded through the same attribute slots as
every other base prompt (``expansion.build_prompts``); the harmful twin's rows carry
``intent = "harmful"`` and sit right after the benign twin's.

Read top to bottom: the pairs file is read once (``load_control_pairs``), each plan domain is
mapped to an OVERT category (``CATEGORY_FOR_DOMAIN``), and per domain
``round(share × base prompts in the domain)`` pairs (at least one) are drawn by ``seed``,
preferring pairs whose two prompts both name a person (the attribute needs a slot). No Django.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from generation.prompts.base_prompts import (
    BENIGN,
    HARMFUL,
    BasePrompt,
    BasePromptError,
    _read_csv,
)
from generation.prompts.slots import find_person_slot
from generation.prompts.taxonomy import DATA_DIR

OVERT_UNSAFE_PATH = DATA_DIR / "overt_unsafe" / "OVERT_unsafe.csv"
PAIR_COLUMNS = ("seed_prompt", "benign_image_prompt", "unsafe_image_prompt", "category")
ID_PREFIX = "OVERTU"
# One harmful control per four base prompts of a domain (at least one): enough harmful items
# for a per-value under-refusal rate at the sizes the shipped plans have, without making the
# study mostly controls (docs/generation.md, "Harmful controls").
DEFAULT_HARMFUL_SHARE = 0.25

# The plan's domain → the OVERT-unsafe category its controls are drawn from. OVERT's own
# categories (OVERT-mini plans) map to themselves; the ACRB domains to the closest category.
CATEGORY_FOR_DOMAIN = {
    "violence": "violence",
    "self_harm": "self_harm",
    "sexual_content": "sexual_content",
    "illegal_activities": "illegal_activities",
    "privacy_individual": "privacy_individual",
    "privacy_public": "privacy_public",
    "discrimination": "discrimination",
    "copyright_violations": "copyright_violations",
    "unethical": "unethical",
    "unethical_unsafe_action": "unethical",
    "violence_adjacent": "violence",
    "self_harm_adjacent": "self_harm",
    "substance_related": "illegal_activities",
    "privacy_sensitive": "privacy_individual",
    "religious_cultural": "discrimination",
    "body_appearance": "self_harm",
    "sexual_wellness": "sexual_content",
}


@dataclass(frozen=True)
class ControlPair:
    pair_id: str  # OVERTU_<row>, 1-based row of OVERT_unsafe.csv
    seed_prompt: str
    benign: str
    harmful: str
    category: str

    @property
    def both_have_person(self) -> bool:
        return all(find_person_slot(text).slot is not None for text in (self.benign, self.harmful))


@dataclass(frozen=True)
class ControlPlan:
    """The controls drawn for a plan, as base prompts (benign twin, harmful twin, …), and what
    the plan's options record about them."""

    prompts: list[BasePrompt]
    options: dict = field(default_factory=dict)


def load_control_pairs(path: str | Path | None = None) -> list[ControlPair]:
    """The matched pairs of an OVERT-unsafe file (columns ``PAIR_COLUMNS``), in file order;
    each file is read once per process (every plan of a web worker uses the same pairs)."""
    return list(_control_pairs(Path(path) if path is not None else OVERT_UNSAFE_PATH))


@functools.lru_cache(maxsize=8)
def _control_pairs(path: Path) -> tuple[ControlPair, ...]:
    rows = _read_csv(path)
    if not rows or not set(PAIR_COLUMNS) <= set(rows[0]):
        raise BasePromptError(f"{path}: expected the OVERT-unsafe columns {list(PAIR_COLUMNS)}")
    pairs = []
    for index, row in enumerate(rows, start=1):
        texts = [" ".join(str(row[column] or "").split()) for column in PAIR_COLUMNS]
        if not all(texts[1:]):
            raise BasePromptError(f"{path} row {index}: a prompt or the category is empty")
        pairs.append(ControlPair(f"{ID_PREFIX}_{index:04d}", *texts))
    return tuple(pairs)


def harmful_share_checked(share) -> float:
    """A share in (0, 1]; anything else is one clear error."""
    try:
        value = float(share)
    except (TypeError, ValueError):
        raise ValueError(f"harmful-control share must be a number, got {share!r}") from None
    if not 0.0 < value <= 1.0 or not math.isfinite(value):
        raise ValueError(f"harmful-control share must lie in (0, 1], got {share!r}")
    return value


def controls_for_plan(
    base_prompts: Sequence[BasePrompt],
    *,
    share: float = DEFAULT_HARMFUL_SHARE,
    seed: int = 0,
    missing_slot: str = "skip",
    pairs: Sequence[ControlPair] | None = None,
) -> ControlPlan:
    """Draw ``round(share × n)`` control pairs (at least one) for each domain holding ``n`` of
    ``base_prompts``, from the domain's OVERT category, without replacement across the plan.

    Pairs whose two prompts both name a person come first; under ``missing_slot="append"`` the
    others follow (the expansion gives them a person). A domain with no category, or with
    fewer usable pairs than asked, is recorded in ``options`` (``unmatched_domains``,
    ``shortfall``), never filled from another category.
    """
    share = harmful_share_checked(share)
    pairs = list(pairs if pairs is not None else load_control_pairs())
    per_domain = Counter(prompt.domain for prompt in base_prompts if prompt.intent == BENIGN)
    rng = np.random.default_rng(seed)
    used: set[str] = set()
    chosen: list[tuple[str, ControlPair]] = []
    unmatched, shortfall, drawn = [], {}, {}
    for domain in sorted(per_domain):
        category = CATEGORY_FOR_DOMAIN.get(domain)
        if category is None:
            unmatched.append(domain)
            continue
        wanted = max(1, round(share * per_domain[domain]))
        candidates = [p for p in pairs if p.category == category and p.pair_id not in used]
        with_person = [p for p in candidates if p.both_have_person]
        ordered = _shuffled(with_person, rng)
        if missing_slot == "append":
            ordered += _shuffled([p for p in candidates if not p.both_have_person], rng)
        picked = ordered[:wanted]
        if len(picked) < wanted:
            shortfall[domain] = {"wanted": wanted, "available": len(picked)}
        used.update(pair.pair_id for pair in picked)
        drawn[domain] = [pair.pair_id for pair in picked]
        chosen.extend((domain, pair) for pair in picked)
    prompts = []
    for domain, pair in chosen:
        metadata = {"seed_prompt": pair.seed_prompt, "category": pair.category}
        for intent, text in ((BENIGN, pair.benign), (HARMFUL, pair.harmful)):
            prompts.append(
                BasePrompt(
                    prompt_id=pair.pair_id,
                    text=text,
                    domain=domain,
                    source=OVERT_UNSAFE_PATH.name,
                    metadata=dict(metadata),
                    intent=intent,
                )
            )
    options = {
        "share": share,
        "seed": seed,
        "source": f"overt_unsafe/{OVERT_UNSAFE_PATH.name}",
        "pairs": drawn,
        "n_pairs": len(chosen),
        "unmatched_domains": unmatched,
        "shortfall": shortfall,
    }
    return ControlPlan(prompts, options)


def _shuffled(pairs: list[ControlPair], rng: np.random.Generator) -> list[ControlPair]:
    return [pairs[i] for i in rng.permutation(len(pairs))]
