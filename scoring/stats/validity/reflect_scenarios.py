"""Validity scenarios for the REFLECT intervals (docs/metrics.md, "REFLECT: calibration").

A scripted model with known choice probabilities answers a REFLECT study of the demo's size
(``make demo``: 2 occupations × 4 templates, the 10 race × gender groups, 45 pairs × 2 orders ×
3 scenarios, one MCQ answer per image and question, 2 biographies per occupation). The true
win rates, Pol, Ext, JSD, mean gaps and salary gaps follow from its probabilities exactly
(salary: to the dollar grid), and every replication computes the report through
``reflect_model_report``, as the app does. Each interval in the report is tallied against its
truth.

The script restates the demo backend's numbers (``scoring/judges/backends/scripted.py``): the
statistics layer may not import the judges, and a scenario's truth is its own definition.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import combinations

import numpy as np
import pandas as pd
from scipy.special import expit
from scipy.stats import norm

from scoring.stats.reflect.blocks import LABELS
from scoring.stats.reflect.mcq import mcq_statistic_fn
from scoring.stats.reflect.report import reflect_model_report
from scoring.stats.reflect.salary import LEVELS, salary_gap_statistics
from scoring.stats.reflect.synthetic import mcq_design, salary_design, two_afc_design
from scoring.stats.reflect.two_afc import two_afc_statistics
from scoring.stats.reflect.vocabulary import (
    GENDER_OF,
    GROUPS,
    MCQ_OPTIONS,
    RACE_OF,
    RACES,
)
from scoring.stats.reflect.vocabulary import (
    SCENARIOS as TWO_AFC_SCENARIOS,
)
from scoring.stats.validity.core import Check, Tally

DEMO_SIZE = {"occupations": ("CEO", "doctor"), "templates_per_occupation": 4}
BIOGRAPHIES_PER_OCCUPATION = 2
# Bootstrap resamples per replication: fewer than the report's default (2,000) for speed; the
# percentile bounds' Monte Carlo error at 400 is small beside the sampling error they describe.
SCENARIO_RESAMPLES = 400

RACE_STANDING = {"White": 0.6, "Asian": 0.3, "Latino": 0.0, "Middle Eastern": -0.2, "Black": -0.5}
GENDER_STANDING = {"male": 0.3, "female": 0.0}
POSITION_BIAS = 0.3
REFUSAL_RATE, INVALID_RATE = 0.03, 0.01
MCQ_SCRIPT = {"salary": (2.5, 1.2, 0.7), "education": (1.5, 0.9, 0.6)}  # centre, slope, noise sd
BASE_SALARY = {"CEO": 210_000, "doctor": 160_000}
SALARY_SLOPE, SALARY_NOISE = 0.08, 0.04
REFUSAL_TEXT = "I'm sorry, but I can't judge people by their appearance."
INVALID_TEXT = "Both look equally likely."


def group_standing(scenario: str = "") -> np.ndarray:
    """Standing of each group (GROUPS order); perceived safety reverses and doubles gender."""
    race = np.array([RACE_STANDING[r] for r, _ in GROUPS])
    gender = np.array([GENDER_STANDING[g] for _, g in GROUPS])
    return race - 2 * gender if scenario == "perceived_safety" else race + gender


# ---- the truth ---------------------------------------------------------------------------


def two_afc_truth(scenario: str) -> dict[str, np.ndarray]:
    """Every 2AFC statistic of the population: expected wins per template into the statistic.

    The original presentation shows the lower-index group in position A (``two_afc_design``);
    a comparison of i (A) and j is kept with i winning when A is chosen first and B after the
    swap: σ(d + b) σ(d − b), d the standing gap, b the position bias."""
    standing = group_standing(scenario)
    expected = np.zeros((len(GROUPS), len(GROUPS)))
    for i, j in combinations(range(len(GROUPS)), 2):
        d = standing[i] - standing[j]
        expected[i, j] = expit(d + POSITION_BIAS) * expit(d - POSITION_BIAS)
        expected[j, i] = expit(-d - POSITION_BIAS) * expit(-d + POSITION_BIAS)
    first = np.mean(
        [
            expit(standing[a] - standing[b] + POSITION_BIAS)
            for i, j in combinations(range(len(GROUPS)), 2)
            for a, b in ((i, j), (j, i))
        ]
    )
    truth = two_afc_statistics(expected, np.array(1.0), np.array(first), matrix=False)
    return truth


def mcq_probabilities(question: str) -> np.ndarray:
    """P(option k | group g), (10, K): the rounded, clipped normal level of the script."""
    centre, slope, noise = MCQ_SCRIPT[question]
    n_options = len(MCQ_OPTIONS[question])
    mean = centre + slope * group_standing()
    edges = np.arange(n_options + 1) - 0.5
    edges[0], edges[-1] = -np.inf, np.inf
    cdf = norm.cdf((edges[None, :] - mean[:, None]) / noise)
    return np.diff(cdf, axis=1)


def mcq_truth(question: str) -> dict[str, np.ndarray]:
    return mcq_statistic_fn(question)(counts=mcq_probabilities(question))


def _salary_grid(occupation: str) -> tuple[np.ndarray, np.ndarray]:
    """The $1,000 grid of an occupation's salaries and P(value | group), (10, K)."""
    base = BASE_SALARY[occupation]
    low = round(base * np.exp(SALARY_SLOPE * -1.0 - 8 * SALARY_NOISE), -3) - 1_000
    high = round(base * np.exp(SALARY_SLOPE * 1.0 + 8 * SALARY_NOISE), -3) + 1_000
    grid = np.arange(low, high + 1, 1_000.0)
    log_edges = np.log(np.concatenate([grid - 500.0, [grid[-1] + 500.0]]) / base)
    mean = SALARY_SLOPE * group_standing()
    cdf = norm.cdf((log_edges[None, :] - mean[:, None]) / SALARY_NOISE)
    return grid, np.diff(cdf, axis=1)


def salary_truth() -> dict[str, np.ndarray]:
    """Gap% by mean and by median per occupation (and pooled, mean) of the population."""
    occupations = sorted(BASE_SALARY)
    grids, probabilities = zip(*(_salary_grid(o) for o in occupations), strict=True)
    width = max(len(g) for g in grids)
    grids = np.array([np.pad(g, (0, width - len(g)), mode="edge") for g in grids])
    sums = np.zeros((len(occupations), len(LEVELS)))
    counts = np.zeros_like(sums)
    cumulative = np.zeros((len(occupations), len(LEVELS), width))
    for o, probability in enumerate(probabilities):
        probability = np.pad(probability, ((0, 0), (0, width - probability.shape[1])))
        for level_of in (RACE_OF, len(RACES) + GENDER_OF):
            for g in range(len(GROUPS)):
                sums[o, level_of[g]] += probability[g] @ grids[o]
                counts[o, level_of[g]] += 1.0
                cumulative[o, level_of[g]] += np.cumsum(probability[g])
    truth = salary_gap_statistics(sums, counts, cumulative, grids=grids)
    # The population median: the first grid value whose distribution function reaches ½.
    median = np.empty(cumulative.shape[:2])
    for o in range(len(occupations)):
        share = cumulative[o] / counts[o][:, None]
        median[o] = grids[o][np.argmax(share >= 0.5, axis=1)]
    races, genders = median[:, : len(RACES)], median[:, len(RACES) :]
    truth["gap_median.race"] = (races / races[:, :1] - 1.0) * 100.0
    truth["gap_median.gender"] = (genders / genders[:, :1] - 1.0) * 100.0
    return truth


# ---- one replication ----------------------------------------------------------------------


class DemoStudy:
    """The demo's question frames, built once; ``answers(rng)`` draws one replication."""

    def __init__(self):
        self.two_afc = two_afc_design(**DEMO_SIZE)
        self.mcq = mcq_design(**DEMO_SIZE)
        self.salary = salary_design(
            **DEMO_SIZE, biographies_per_occupation=BIOGRAPHIES_PER_OCCUPATION
        )
        index = {group: i for i, group in enumerate(GROUPS)}
        a = np.array(
            [index[g] for g in zip(self.two_afc["race_a"], self.two_afc["gender_a"], strict=True)]
        )
        b = np.array(
            [index[g] for g in zip(self.two_afc["race_b"], self.two_afc["gender_b"], strict=True)]
        )
        self.p_first = np.empty(len(self.two_afc))
        for scenario in TWO_AFC_SCENARIOS:
            rows = (self.two_afc["scenario"] == scenario).to_numpy()
            standing = group_standing(scenario)
            self.p_first[rows] = expit(standing[a[rows]] - standing[b[rows]] + POSITION_BIAS)
        self.mcq_group = np.array(
            [index[g] for g in zip(self.mcq["race"], self.mcq["gender"], strict=True)]
        )
        self.salary_group = np.array(
            [index[g] for g in zip(self.salary["race"], self.salary["gender"], strict=True)]
        )
        self.salary_base = self.salary["occupation"].map(BASE_SALARY).to_numpy(dtype=float)

    @staticmethod
    def _lapses(answers: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        draw = rng.random(len(answers))
        answers = np.where(draw < REFUSAL_RATE + INVALID_RATE, INVALID_TEXT, answers)
        return np.where(draw < REFUSAL_RATE, REFUSAL_TEXT, answers)

    def answers(self, rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
        two_afc = np.where(rng.random(len(self.two_afc)) < self.p_first, "A", "B")
        mcq = np.empty(len(self.mcq), dtype=object)
        for question, (centre, slope, noise) in MCQ_SCRIPT.items():
            rows = (self.mcq["question"] == question).to_numpy()
            options = MCQ_OPTIONS[question]
            level = centre + slope * group_standing()[self.mcq_group[rows]]
            level = level + rng.normal(0.0, noise, rows.sum())
            mcq[rows] = np.array(options)[np.clip(np.rint(level), 0, len(options) - 1).astype(int)]
        pay = self.salary_base * np.exp(
            SALARY_SLOPE * group_standing()[self.salary_group]
            + rng.normal(0.0, SALARY_NOISE, len(self.salary))
        )
        salary = np.array([f"${v:,.0f}" for v in np.round(pay, -3)])
        return (
            self.two_afc.assign(answer=self._lapses(two_afc, rng)),
            self.mcq.assign(answer=self._lapses(mcq.astype(str), rng)),
            self.salary.assign(answer=self._lapses(salary, rng)),
        )


# ---- tallying ----------------------------------------------------------------------------


def _tally_labelled(tally, name, truth, estimates, intervals, labels) -> None:
    """One coverage replication per label of a labelled statistic (``win_rate.race``)."""
    for i, label in enumerate(labels):
        low, high = intervals.get(label, (None, None))
        if ".gap" in f".{name}" or "_gap" in name:
            if truth[i] == 0 and estimates.get(label) == 0:
                continue  # the reference group: its gap is 0 by definition, not an estimate
        if estimates.get(label) is None:
            tally.add(f"{name}.{label}", "coverage", None)
        else:
            tally.covers(f"{name}.{label}", float(truth[i]), low, high)


def _at(node: dict, path: str):
    for part in path.split("."):
        node = node.get(part, {}) if isinstance(node, dict) else {}
    return node


TWO_AFC_LABELLED = (
    "win_rate.race",
    "win_rate.gender",
    "win_rate.race_gender",
    "win_rate_all_trials.race",
    "win_rate_all_trials.gender",
    "win_rate_within_gender.female.race",
    "win_rate_within_gender.male.race",
    "male_win_rate_within_race.race",
)


def tally_report(tally: Tally, report: dict, truth: dict) -> None:
    """Tally every interval of one model's report against the truth (``demo_truth``)."""
    for scenario, block in report["2afc"].items():
        scenario_truth = truth["2afc"][scenario]
        for name in TWO_AFC_LABELLED:
            stem, rest = name.split(".", 1)
            _tally_labelled(
                tally,
                f"2afc.{scenario}.{name}",
                scenario_truth[name],
                _at(block, name),
                _at(block, f"{stem}_ci.{rest}"),
                LABELS[name.rsplit(".", 1)[-1]],
            )
        for name in ("pol", "ext", "first_position_rate"):
            low, high = block.get(f"{name}_ci") or (None, None)
            if block[name] is None:
                tally.add(f"2afc.{scenario}.{name}", "coverage", None)
            else:
                tally.covers(f"2afc.{scenario}.{name}", float(scenario_truth[name]), low, high)
    for question, block in report["mcq"].items():
        question_truth = truth["mcq"][question]
        for name in (
            "jsd.race",
            "jsd.gender",
            "jsd.race_gender",
            "mean_gap.race",
            "mean_gap.gender",
        ):
            stem, kind = name.split(".")
            _tally_labelled(
                tally,
                f"mcq.{question}.{name}",
                question_truth[name],
                _at(block, name),
                _at(block, f"{stem}_ci.{kind}"),
                LABELS[kind],
            )
    rows = sorted(BASE_SALARY) + ["all"]
    salary = report["salary"]
    for stem in ("gap_mean", "gap_median"):
        for kind in ("race", "gender"):
            values = truth["salary"][f"{stem}.{kind}"]
            for o, occupation in enumerate(rows[: values.shape[0]]):
                _tally_labelled(
                    tally,
                    f"salary.{stem}.{occupation}.{kind}",
                    values[o],
                    _at(salary, f"{stem}.{occupation}.{kind}"),
                    _at(salary, f"{stem}_ci.{occupation}.{kind}"),
                    LABELS[kind],
                )


def demo_truth() -> dict:
    return {
        "2afc": {s: two_afc_truth(s) for s in TWO_AFC_SCENARIOS},
        "mcq": {q: mcq_truth(q) for q in MCQ_SCRIPT},
        "salary": salary_truth(),
    }


def reflect_demo_size(replications: int, seed: int) -> list[Check]:
    """Coverage of every REFLECT interval at the demo's size (module docstring)."""
    rng = np.random.default_rng(seed)
    study, truth = DemoStudy(), demo_truth()
    tally = Tally("reflect demo size")
    for _ in range(replications):
        two_afc, mcq, salary = study.answers(rng)
        report = reflect_model_report(two_afc, mcq, salary, n_resamples=SCENARIO_RESAMPLES, rng=rng)
        tally_report(tally, report, truth)
    for statistic in {c.statistic for c in tally.checks()}:
        if statistic.endswith((".pol", ".ext")) or ".jsd." in statistic:
            # Built from simultaneous (Bonferroni) intervals of the cells / option shares:
            # conservative by design (docs/metrics.md, "REFLECT: intervals").
            tally.conservative(statistic)
        elif ".male_win_rate_within_race." in statistic:
            # A Wilson interval on about 8 comparisons per cell: conservative by discreteness.
            tally.conservative(statistic)
    return tally.checks()


SCENARIOS: dict[str, Callable[[int, int], list[Check]]] = {
    "reflect demo size": reflect_demo_size,
}
