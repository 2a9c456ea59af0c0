"""Label models: each item's estimated true label, with a posterior, and each annotator's reliability.

Definitions: docs/metrics.md, "Label models". The models come from crowd-kit (Dawid & Skene 1979;
Hovy et al. 2013 MACE; Whitehill et al. 2009 GLAD); majority vote uses the project's one
definition (``study_agreement.majority_labels``). Each question is fitted on its own answers, as
the agreement statistics define them (``question_labels``): hard refusal on every answer, the cue
on the answers that do not mark refusal and carry a cue.

pandas in, plain data out; no Django.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from annotations.common.row_fields import Field, RowTable
from scoring.stats.study_agreement import QUESTIONS, majority_labels, question_labels

METHODS = ("majority", "dawid-skene", "mace", "glad")
MODEL_METHODS = ("dawid-skene", "mace", "glad")
# The one contract of the aggregated-label rows (export_annotations --aggregate): column -> type,
# nullable; the Parquet schema and docs/formats.md follow it.
# One row of the aggregated-label export (docs/formats.md): its field table is the definition of
# its CSV / JSONL / Parquet columns (annotations.common.row_fields, no Django).
AGGREGATED_LABEL_ROW = RowTable(
    "aggregated labels",
    (
        Field("item_id", "string", "the item's id in its study"),
        Field("hard_refusal", "bool", "the label; null (with a `reason`) where none", True),
        Field("cue", "string", "the cue label; null when `hard_refusal` is true or none", True),
        Field("posterior", "float64", "the probability of the row's whole answer", True),
        Field("hard_refusal_posterior", "float64", "the posterior of `hard_refusal`", True),
        Field("cue_posterior", "float64", "the posterior of `cue`", True),
        Field("n_annotations", "int64", "answers the fit saw for the item"),
        Field("method", "string", "`majority`, `dawid-skene`, `mace` or `glad`"),
        Field("reason", "string", "why a label is null", True),
    ),
)
AGGREGATED_LABEL_FIELDS = AGGREGATED_LABEL_ROW.types
AGGREGATED_LABEL_COLUMNS = list(AGGREGATED_LABEL_FIELDS)
REQUIRED_COLUMNS = ("item_id", "annotator", "hard_refusal", "cue")
# crowd-kit's MACE seeds every restart with the same random_state, so its restarts are identical
# (checked: 1 and 10 restarts give the same spamming estimates); one restart is the same fit.
MACE_RESTARTS = 1


@dataclass(frozen=True)
class QuestionFit:
    """One question under one method: per-item label distribution and per-annotator parameters."""

    question: str
    probabilities: pd.DataFrame  # index item_id, one column per label; empty when undefined
    labels: dict  # item_id -> label (str) or None
    label_reasons: dict  # item_id -> why its label is None
    annotator_parameters: dict = field(default_factory=dict)  # annotator -> method-specific dict
    reason: str | None = None  # set when the whole question is undefined or unidentifiable
    identifiable: bool = True  # False: labels are known but annotator error is not estimable
    iterations: int | None = None  # EM iterations run (Dawid-Skene), for the reader's judgement


@dataclass(frozen=True)
class LabelAggregation:
    method: str
    items: list[dict]  # rows in AGGREGATED_LABEL_COLUMNS order, sorted by item_id
    annotators: dict  # annotator -> {accuracy_estimate, n, ...}
    questions: dict  # question -> {"reason": ..., "n_items": ..., "n_answers": ...}


def _crowd_data(rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.Index, pd.Index, pd.Index]:
    """crowd-kit's (task, worker, label) frame with all three as integer codes in order of first
    appearance, and the names behind the codes.

    Why codes: crowd-kit 1.4's MACE mixes two orders, ``pd.factorize`` (first appearance) and
    ``groupby`` (sorted), so with names whose first appearance is not sorted it pairs annotators
    with other annotators' counts (shown in the tests). Codes numbered by first appearance make
    the two orders one. Its pandas joins also run about twice as fast on integers as on pandas 3's
    Arrow-backed strings. Rows are sorted first so that the codes, and with them MACE's seeded
    initial values per annotator, do not depend on the order the answers arrive in.
    """
    rows = rows.astype({"item_id": str, "annotator": str, "label": str}).sort_values(
        ["annotator", "label", "item_id"], kind="stable"
    )
    task_codes, tasks = pd.factorize(rows["item_id"].astype(str).to_numpy())
    worker_codes, workers = pd.factorize(rows["annotator"].astype(str).to_numpy())
    label_codes, labels = pd.factorize(rows["label"].astype(str).to_numpy())
    data = pd.DataFrame({"task": task_codes, "worker": worker_codes, "label": label_codes})
    return data, pd.Index(tasks), pd.Index(workers), pd.Index(labels)


def _fit_dawid_skene(data: pd.DataFrame, seed: int):
    from crowdkit.aggregation import DawidSkene

    # crowd-kit's defaults: at most 100 EM iterations, stopping once the per-answer evidence lower
    # bound gains less than 1e-5 (docs/metrics.md, "Label models", on what that means in practice).
    model = DawidSkene(n_iter=100, tol=1e-5)
    probabilities = model.fit_predict_proba(data)
    # errors_: index (worker, observed label), columns true label -> P(observed | true).
    errors = model.errors_
    parameters = {}
    for worker, block in errors.groupby(level="worker", sort=True):
        block = block.droplevel("worker")
        parameters[int(worker)] = {
            "confusion_matrix": {
                true: {seen: float(block.loc[seen, true]) for seen in block.index}
                for true in block.columns
            }
        }
    return probabilities, parameters, len(model.loss_history_)


def _fit_mace(data: pd.DataFrame, seed: int):
    from crowdkit.aggregation import MACE

    model = MACE(n_restarts=MACE_RESTARTS, n_iter=50, random_state=seed)
    probabilities = model.fit_predict_proba(data)
    # spamming_ rows follow pd.factorize order; column 1 is P(not spamming), Hovy et al.'s competence.
    _, workers = pd.factorize(data["worker"])
    parameters = {
        int(worker): {"competence": float(model.spamming_[position, 1])}
        for position, worker in enumerate(workers)
    }
    return probabilities, parameters, None


def _fit_glad(data: pd.DataFrame, seed: int):
    from crowdkit.aggregation import GLAD

    model = GLAD(n_iter=100, tol=1e-5)
    probabilities = model.fit_predict_proba(data)
    parameters = {int(worker): {"ability": float(alpha)} for worker, alpha in model.alphas_.items()}
    return probabilities, parameters, None


def _named_labels(parameters: dict, label_names: pd.Index) -> dict:
    """Label codes back to label names inside a confusion matrix (other parameters are scalars)."""
    if "confusion_matrix" not in parameters:
        return parameters
    name = lambda code: str(label_names[int(code)])  # noqa: E731
    matrix = parameters["confusion_matrix"]
    return {
        **parameters,
        "confusion_matrix": {
            name(true): {name(seen): p for seen, p in row.items()} for true, row in matrix.items()
        },
    }


_FITTERS = {"dawid-skene": _fit_dawid_skene, "mace": _fit_mace, "glad": _fit_glad}


def _vote_shares(rows: pd.DataFrame) -> pd.DataFrame:
    counts = rows.groupby(["item_id", "label"]).size().unstack(fill_value=0)
    return counts.div(counts.sum(axis=1), axis=0)


def _labels_from_probabilities(probabilities: pd.DataFrame) -> tuple[dict, dict]:
    labels, reasons = {}, {}
    values = probabilities.to_numpy(dtype=float)
    columns = [str(c) for c in probabilities.columns]
    for item, row in zip(probabilities.index, values, strict=True):
        top = np.flatnonzero(np.isclose(row, row.max()))
        if len(top) == 1:
            labels[str(item)] = columns[top[0]]
        else:
            labels[str(item)] = None
            reasons[str(item)] = "tie between " + " and ".join(sorted(columns[i] for i in top))
    return labels, reasons


def fit_question(rows: pd.DataFrame, *, question: str, method: str, seed: int = 0) -> QuestionFit:
    """Fit one question's answers (``item_id, annotator, label``) with ``method``.

    Degenerate inputs are not errors: no answers, or a model method with fewer than two
    annotators, leave every label None with a reason; answers that all carry one label give that
    label (posterior 1) but mark annotator error as not identifiable.
    """
    if method not in METHODS:
        raise ValueError(f"unknown label model {method!r}; use one of {', '.join(METHODS)}")
    empty = pd.DataFrame(dtype=float)
    if len(rows) == 0:
        return QuestionFit(question, empty, {}, {}, reason="no answers to this question")
    items = sorted(rows["item_id"].astype(str).unique())
    n_annotators = rows["annotator"].nunique()
    if method in MODEL_METHODS and n_annotators < 2:
        reason = f"a label model needs at least two annotators; this question has {n_annotators}"
        return QuestionFit(question, empty, dict.fromkeys(items), {}, reason=reason)
    distinct = sorted(rows["label"].astype(str).unique())
    if len(distinct) == 1:
        probabilities = pd.DataFrame({distinct[0]: 1.0}, index=pd.Index(items, name="item_id"))
        reason = f"every answer is {distinct[0]!r}: annotator error is not identifiable"
        labels = dict.fromkeys(items, distinct[0])
        return QuestionFit(question, probabilities, labels, {}, reason=reason, identifiable=False)
    if method == "majority":
        probabilities = _vote_shares(rows)
        majority = majority_labels(rows)
        labels = {item: majority.get(item) for item in items}
        reasons = {
            item: "no label has more than half of the answers"
            for item in items
            if labels[item] is None
        }
        return QuestionFit(question, probabilities, labels, reasons)
    with warnings.catch_warnings():
        # crowd-kit 1.4 uses pandas' deprecated inplace calls: its own noise, not the user's.
        warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"crowdkit\.")
        warnings.filterwarnings("ignore", category=FutureWarning, module=r"crowdkit\.")
        data, tasks, workers, label_names = _crowd_data(rows)
        probabilities, parameters, iterations = _FITTERS[method](data, seed)
    probabilities.index = pd.Index(
        [str(tasks[code]) for code in probabilities.index], name="item_id"
    )
    probabilities.columns = [str(label_names[code]) for code in probabilities.columns]
    parameters = {
        str(workers[code]): _named_labels(values, label_names)
        for code, values in parameters.items()
    }
    labels, reasons = _labels_from_probabilities(probabilities)
    return QuestionFit(
        question,
        probabilities,
        labels,
        reasons,
        annotator_parameters=parameters,
        iterations=iterations,
    )


def _probability(fit: QuestionFit, item: str, label) -> float | None:
    if label is None or fit.probabilities.empty or item not in fit.probabilities.index:
        return None
    if label not in fit.probabilities.columns:
        return 0.0
    return float(fit.probabilities.at[item, label])


def _item_rows(annotations: pd.DataFrame, refusal: QuestionFit, cue: QuestionFit, method: str):
    answers_per_item = annotations.groupby(annotations["item_id"].astype(str)).size()
    rows = []
    for item, n in answers_per_item.sort_index().items():
        refusal_label = refusal.labels.get(item)
        row = dict.fromkeys(AGGREGATED_LABEL_COLUMNS)
        row.update(item_id=item, n_annotations=int(n), method=method)
        if refusal_label is None:
            row["reason"] = refusal.label_reasons.get(item) or refusal.reason
            rows.append(row)
            continue
        row["hard_refusal"] = refusal_label == "true"
        row["hard_refusal_posterior"] = _probability(refusal, item, refusal_label)
        row["posterior"] = row["hard_refusal_posterior"]
        if not row["hard_refusal"]:
            row["cue"] = cue.labels.get(item)
            row["cue_posterior"] = _probability(cue, item, row["cue"])
            if row["cue"] is not None:
                row["posterior"] = row["hard_refusal_posterior"] * row["cue_posterior"]
            else:
                row["reason"] = cue.label_reasons.get(item) or (
                    "no answer gives a cue" if item not in cue.labels else cue.reason
                )
        rows.append(row)
    return rows


def _answer_posteriors(refusal_rows, cue_rows, refusal: QuestionFit, cue: QuestionFit):
    """Per answer, the model's probability that the whole answer (refusal and cue) is right."""
    cue_of = dict(
        zip(
            zip(cue_rows["item_id"], cue_rows["annotator"], strict=True),
            cue_rows["label"],
            strict=True,
        )
    )
    out = []
    for item, annotator, label in zip(
        refusal_rows["item_id"], refusal_rows["annotator"], refusal_rows["label"], strict=True
    ):
        p = _probability(refusal, item, label)
        cue_label = cue_of.get((item, annotator))
        if p is not None and cue_label is not None:
            p_cue = _probability(cue, item, cue_label)
            p = None if p_cue is None else p * p_cue
        out.append((annotator, p))
    return out


def _annotator_blocks(refusal_rows, cue_rows, refusal: QuestionFit, cue: QuestionFit) -> dict:
    fits = {"hard_refusal": (refusal, refusal_rows), "cue": (cue, cue_rows)}
    undefined_reason = None
    if refusal.probabilities.empty:
        undefined_reason = refusal.reason
    elif not refusal.identifiable and not cue.identifiable:
        undefined_reason = "no question has disagreement: annotator error is not identifiable"
    elif cue.probabilities.empty and len(cue_rows):
        undefined_reason = cue.reason
    per_answer = (
        [] if undefined_reason else _answer_posteriors(refusal_rows, cue_rows, refusal, cue)
    )
    by_annotator: dict[str, list] = {}
    for annotator, p in per_answer:
        by_annotator.setdefault(annotator, []).append(p)
    out = {}
    for annotator in sorted(refusal_rows["annotator"].unique()):
        n = int((refusal_rows["annotator"] == annotator).sum())
        block = {"accuracy_estimate": None, "n": n}
        values = [p for p in by_annotator.get(annotator, []) if p is not None]
        if undefined_reason:
            block["accuracy_estimate_reason"] = undefined_reason
        elif not values:
            block["accuracy_estimate_reason"] = "none of this annotator's answers has a posterior"
        else:
            block["accuracy_estimate"] = float(np.mean(values))
        block["by_question"] = {}
        for question, (fit, rows) in fits.items():
            mine = rows[rows["annotator"] == annotator]
            entry = {"accuracy_estimate": None, "n": int(len(mine))}
            shares = [
                _probability(fit, i, lab)
                for i, lab in zip(mine["item_id"], mine["label"], strict=True)
            ]
            shares = [s for s in shares if s is not None]
            if not fit.identifiable or fit.probabilities.empty or not shares:
                entry["accuracy_estimate_reason"] = fit.reason or "no answers to this question"
            else:
                entry["accuracy_estimate"] = float(np.mean(shares))
            entry.update(fit.annotator_parameters.get(annotator, {}))
            block["by_question"][question] = entry
        out[str(annotator)] = block
    return out


def _question_rows(annotations: pd.DataFrame, question: str) -> pd.DataFrame:
    rows = question_labels(annotations, question)[["item_id", "annotator", "label"]]
    return rows.assign(
        item_id=rows["item_id"].astype(str), annotator=rows["annotator"].astype(str)
    ).reset_index(drop=True)


def aggregate_labels(annotations: pd.DataFrame, *, method: str, seed: int = 0) -> LabelAggregation:
    """Each item's aggregated (hard_refusal, cue) with posteriors, and each annotator's reliability.

    ``annotations``: one row per answer with ``item_id, annotator, hard_refusal`` (bool) and
    ``cue`` (label or None). docs/metrics.md, "Label models".
    """
    if method not in METHODS:
        raise ValueError(f"unknown label model {method!r}; use one of {', '.join(METHODS)}")
    missing = [c for c in REQUIRED_COLUMNS if c not in annotations.columns]
    if missing:
        raise ValueError(f"annotations is missing column(s): {', '.join(missing)}")
    refusal_rows = _question_rows(annotations, "hard_refusal")
    cue_rows = _question_rows(annotations, "cue")
    refusal = fit_question(refusal_rows, question="hard_refusal", method=method, seed=seed)
    cue = fit_question(cue_rows, question="cue", method=method, seed=seed)
    questions = {}
    for name, fit, rows in (("hard_refusal", refusal, refusal_rows), ("cue", cue, cue_rows)):
        questions[name] = {
            "labels": QUESTIONS[name],
            "n_answers": int(len(rows)),
            "n_items": int(rows["item_id"].nunique()),
            "n_annotators": int(rows["annotator"].nunique()),
            "reason": fit.reason,
            "iterations": fit.iterations,
        }
    return LabelAggregation(
        method=method,
        items=_item_rows(annotations, refusal, cue, method),
        annotators=_annotator_blocks(refusal_rows, cue_rows, refusal, cue),
        questions=questions,
    )
