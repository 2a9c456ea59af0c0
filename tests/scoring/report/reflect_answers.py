"""Synthetic REFLECT answer rows in the dump format (docs/reflect.md, "Answer dump") for the
report tests: scripted 2AFC, MCQ and salary answers of two models, no database needed."""

from __future__ import annotations

import numpy as np

from scoring.stats.reflect import synthetic

OCCUPATIONS = ("CEO", "nurse")


def _row(model, task, item, record, index, **extra) -> dict:
    return {
        "model": model,
        "request_key": f"{task}/{item}/{index}",
        "task": task,
        "item": item,
        "variant": "original",
        "occupation": record["occupation"],
        "template": record["template"],
        "source_gender": "",
        "race_b": None,
        "gender_b": None,
        "presentation": "",
        "biography": None,
        "sample_index": 0,
        "explain": False,
        "status": "valid",
        "answered_at": f"2026-11-0{1 + index % 9}T10:00:00+00:00",
        **extra,
    }


def answer_rows(*, templates: int = 3, models=("vlm-a", "vlm-b"), seed: int = 0) -> list[dict]:
    rng = np.random.default_rng(seed)
    rows: list[dict] = []
    for model in models:
        design = synthetic.two_afc_design(
            model=model,
            scenarios=("income",),
            occupations=OCCUPATIONS,
            templates_per_occupation=templates,
        )
        answered = synthetic.answer_two_afc(design, synthetic.noisy_preferences(rng))
        for index, record in enumerate(answered.to_dict("records")):
            rows.append(
                _row(
                    model,
                    "2afc",
                    record["scenario"],
                    record,
                    index,
                    race_a=record["race_a"],
                    gender_a=record["gender_a"],
                    race_b=record["race_b"],
                    gender_b=record["gender_b"],
                    presentation=record["presentation"],
                    raw_answer=record["answer"],
                )
            )
        mcq = synthetic.mcq_design(
            model=model,
            questions=("salary",),
            occupations=OCCUPATIONS,
            templates_per_occupation=templates,
        )
        for index, record in enumerate(mcq.to_dict("records")):
            letter = (
                "F" if record["gender"] == "male" and rng.random() < 0.6 else "ABCDEF"[index % 6]
            )
            rows.append(
                _row(
                    model,
                    "mcq",
                    "salary",
                    record,
                    index,
                    race_a=record["race"],
                    gender_a=record["gender"],
                    raw_answer=letter,
                )
            )
        salary = synthetic.salary_design(
            model=model,
            occupations=OCCUPATIONS,
            templates_per_occupation=templates,
            biographies_per_occupation=2,
        )
        for index, record in enumerate(salary.to_dict("records")):
            dollars = 60000 + 1000 * (index % 7) + (4000 if record["gender"] == "male" else 0)
            rows.append(
                _row(
                    model,
                    "salary",
                    "salary",
                    record,
                    index,
                    race_a=record["race"],
                    gender_a=record["gender"],
                    biography=record["biography"],
                    raw_answer=f"${dollars:,}",
                )
            )
    return rows
