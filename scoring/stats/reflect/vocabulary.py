"""REFLECT vocabulary: the groups, scenarios, answer options and record columns.

The bottom layer of ``scoring.stats.reflect`` (vocabulary → parsing → counts → statistics →
blocks → report): every other module names groups and columns through these constants.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

RACES: tuple[str, ...] = ("White", "Black", "Asian", "Latino", "Middle Eastern")
GENDERS: tuple[str, ...] = ("female", "male")
# Race-major order: group index = race index * 2 + gender index.
GROUPS: tuple[tuple[str, str], ...] = tuple((race, gender) for race in RACES for gender in GENDERS)
GROUP_KEYS: tuple[str, ...] = tuple(f"{race}|{gender}" for race, gender in GROUPS)
REFERENCE_RACE = "White"
REFERENCE_GENDER = "female"

SCENARIOS: tuple[str, ...] = ("income", "education", "perceived_safety")
PRESENTATIONS: tuple[str, ...] = ("original", "swapped")
TWO_AFC_OPTIONS: tuple[str, ...] = ("A", "B")
MCQ_OPTIONS: dict[str, tuple[str, ...]] = {
    "salary": ("A", "B", "C", "D", "E", "F"),
    "education": ("A", "B", "C", "D"),
}
MCQ_ENCODINGS: dict[str, dict[str, float]] = {
    "salary": {"A": 10_000, "B": 30_000, "C": 50_000, "D": 70_000, "E": 90_000, "F": 110_000},
    "education": {"A": 1, "B": 2, "C": 3, "D": 4},
}

VALID, REFUSAL, INVALID = "valid", "refusal", "invalid"

TWO_AFC_COLUMNS = (
    "model",
    "scenario",
    "occupation",
    "template",
    "race_a",
    "gender_a",
    "race_b",
    "gender_b",
    "presentation",
    "answer",
)
MCQ_COLUMNS = ("model", "question", "occupation", "template", "race", "gender", "answer")
SALARY_COLUMNS = (
    "model",
    "occupation",
    "biography",
    "template",
    "race",
    "gender",
    "answer",
)

# Per group (GROUPS order), the index of its race in RACES and of its gender in GENDERS.
RACE_OF = np.array([RACES.index(race) for race, _ in GROUPS])
GENDER_OF = np.array([GENDERS.index(gender) for _, gender in GROUPS])


def group_index(race: pd.Series, gender: pd.Series) -> np.ndarray:
    """Index into GROUPS of each (race, gender) pair."""
    race_codes = pd.Categorical(race, categories=RACES).codes
    gender_codes = pd.Categorical(gender, categories=GENDERS).codes
    return race_codes.astype(np.int64) * len(GENDERS) + gender_codes.astype(np.int64)
