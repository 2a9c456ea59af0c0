"""Synthetic REFLECT answer frames from scripted rules, for tests, benchmarks and demos.

A scripted model answers by a known rule, so the statistics it should produce follow by
hand (docs/metrics.md, "REFLECT: records"). Randomness only through an explicit Generator.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import combinations

import numpy as np
import pandas as pd

from scoring.stats.reflect.vocabulary import GROUPS, SCENARIOS, TWO_AFC_COLUMNS

DEFAULT_OCCUPATIONS = ("CEO", "doctor", "cook", "nurse", "teacher", "lawyer")


def two_afc_design(
    *,
    model: str = "model",
    scenarios: Sequence[str] = SCENARIOS,
    occupations: Sequence[str] = DEFAULT_OCCUPATIONS,
    templates_per_occupation: int = 8,
) -> pd.DataFrame:
    """Every question of a full 2AFC run, without answers: 45 pairs × 2 presentations per template.

    The original presentation shows the pair in GROUPS order (lower index in position A).
    """
    rows = []
    for scenario in scenarios:
        for occupation in occupations:
            for t in range(templates_per_occupation):
                for i, j in combinations(range(len(GROUPS)), 2):
                    for presentation, (a, b) in (("original", (i, j)), ("swapped", (j, i))):
                        rows.append(
                            (
                                model,
                                scenario,
                                occupation,
                                f"t{t}",
                                *GROUPS[a],
                                *GROUPS[b],
                                presentation,
                            )
                        )
    return pd.DataFrame(
        rows,
        columns=[column for column in TWO_AFC_COLUMNS if column != "answer"],
    )


def answer_two_afc(design: pd.DataFrame, rule: Callable[[pd.DataFrame], Sequence]) -> pd.DataFrame:
    """The design with ``answer = rule(design)`` (one raw answer per row)."""
    return design.assign(answer=list(rule(design)))


def prefers(race: str | None = None, gender: str | None = None):
    """Rule: pick the image matching (race, gender); otherwise the one in position A."""

    def rule(design: pd.DataFrame) -> np.ndarray:
        a_matches = np.ones(len(design), dtype=bool)
        b_matches = np.ones(len(design), dtype=bool)
        if race is not None:
            a_matches &= (design["race_a"] == race).to_numpy()
            b_matches &= (design["race_b"] == race).to_numpy()
        if gender is not None:
            a_matches &= (design["gender_a"] == gender).to_numpy()
            b_matches &= (design["gender_b"] == gender).to_numpy()
        return np.where(b_matches & ~a_matches, "B", "A")

    return rule


def ranks_groups(order: Sequence[tuple[str, str]]):
    """Rule: pick the image whose group comes first in ``order`` (a strict ranking)."""
    rank = {group: i for i, group in enumerate(order)}

    def rule(design: pd.DataFrame) -> np.ndarray:
        rank_a = np.array([rank[g] for g in zip(design["race_a"], design["gender_a"], strict=True)])
        rank_b = np.array([rank[g] for g in zip(design["race_b"], design["gender_b"], strict=True)])
        return np.where(rank_a < rank_b, "A", "B")

    return rule


def constant(answer: str):
    """Rule: always the same raw answer (``"A"`` answers by position; a refusal text refuses)."""
    return lambda design: [answer] * len(design)


def noisy_preferences(rng: np.random.Generator, *, lapse: float = 0.1, refusal: float = 0.05):
    """Rule: a random latent score per group and template; answers follow it, with lapses.

    A lapse answers "A" regardless; a refusal answers a refusal sentence. For benchmarks.
    """

    def rule(design: pd.DataFrame) -> np.ndarray:
        keys = design["occupation"].astype(str) + "/" + design["template"].astype(str)
        template_code = pd.factorize(keys)[0]
        scores = rng.normal(size=(template_code.max() + 1, len(GROUPS)))
        scores += np.linspace(0.5, -0.5, len(GROUPS))
        index = {group: i for i, group in enumerate(GROUPS)}
        a = np.array([index[g] for g in zip(design["race_a"], design["gender_a"], strict=True)])
        b = np.array([index[g] for g in zip(design["race_b"], design["gender_b"], strict=True)])
        answer = np.where(scores[template_code, a] > scores[template_code, b], "A", "B")
        draw = rng.random(len(design))
        answer = np.where(draw < lapse, "A", answer)
        return np.where(draw > 1 - refusal, "I'm sorry, I can't help with that.", answer)

    return rule


def mcq_design(
    *,
    model: str = "model",
    questions: Sequence[str] = ("salary", "education"),
    occupations: Sequence[str] = DEFAULT_OCCUPATIONS,
    templates_per_occupation: int = 8,
) -> pd.DataFrame:
    """Every MCQ question of a run: each of a template's 10 images once per question."""
    rows = [
        (model, question, occupation, f"t{t}", race, gender)
        for question in questions
        for occupation in occupations
        for t in range(templates_per_occupation)
        for race, gender in GROUPS
    ]
    return pd.DataFrame(
        rows, columns=["model", "question", "occupation", "template", "race", "gender"]
    )


def salary_design(
    *,
    model: str = "model",
    occupations: Sequence[str] = DEFAULT_OCCUPATIONS,
    templates_per_occupation: int = 8,
    biographies_per_occupation: int = 50,
) -> pd.DataFrame:
    """Every salary question of a run: each image × each biography of its occupation."""
    rows = [
        (model, occupation, f"b{b}", f"t{t}", race, gender)
        for occupation in occupations
        for t in range(templates_per_occupation)
        for b in range(biographies_per_occupation)
        for race, gender in GROUPS
    ]
    return pd.DataFrame(
        rows, columns=["model", "occupation", "biography", "template", "race", "gender"]
    )
