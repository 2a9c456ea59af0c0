"""Inter-annotator and human-vs-automated agreement of a study (docs/metrics.md, "Study export:
agreement"). Called by ``study_metrics``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from annotations.labels import CUE_LABELS
from scoring.stats.agreement import (
    cohen_kappa,
    confusion_matrix_dict,
    percent_agreement,
    precision_recall,
)
from scoring.stats.agreement_multirater import (
    fleiss_kappa_modal,
    gwet_ac1,
    item_label_counts,
    pairwise_cohen_kappa,
    percent_agreement_items,
)
from scoring.stats.krippendorff_alpha import krippendorff_alpha
from scoring.stats.parameters import check_columns, check_confidence, check_integer
from scoring.stats.result import Stat
from scoring.stats.study_rates import ANSWERS_REFUSAL

REFUSAL_LABELS = ["false", "true"]
# What ``inter_annotator_agreement`` reads from each annotation row.
ANNOTATION_COLUMNS = ("item_id", "annotator", "hard_refusal", "cue")
QUESTIONS = {"hard_refusal": REFUSAL_LABELS, "cue": list(CUE_LABELS)}


def question_labels(frame: pd.DataFrame, question: str) -> pd.DataFrame:
    """Rows that answer ``question`` with a ``label`` column: every row for hard_refusal (labels
    "true"/"false"); for cue, only rows not marking refusal that carry a cue."""
    if question == "hard_refusal":
        if ANSWERS_REFUSAL in frame.columns:  # cue-only judges do not answer this question
            frame = frame[frame[ANSWERS_REFUSAL].to_numpy(dtype=bool)]
        return frame.assign(
            label=np.where(frame["hard_refusal"].to_numpy(dtype=bool), "true", "false")
        )
    keep = ~frame["hard_refusal"].to_numpy(dtype=bool) & frame["cue"].notna().to_numpy()
    return frame[keep].assign(label=frame.loc[keep, "cue"].astype(str))


def put(block: dict, name: str, stat: Stat, *, interval: bool = False) -> None:
    """Write a Stat as ``name`` (+ ``name_reason`` when undefined, + ``name_ci_low/high`` if asked,
    with ``name_ci_reason(_code)`` when a defined statistic's interval is null)."""
    block[name] = stat.value
    if not stat.defined:
        block[f"{name}_reason"] = stat.reason
    if interval:
        block[f"{name}_ci_low"], block[f"{name}_ci_high"] = stat.ci_low, stat.ci_high
        if stat.defined and stat.ci_low is None and "ci_reason" in stat.extra:
            block[f"{name}_ci_reason"] = stat.extra["ci_reason"]
            block[f"{name}_ci_reason_code"] = stat.extra["ci_reason_code"]


def _inter_annotator_question(
    rows: pd.DataFrame, labels: list, *, min_pair_items, n_resamples, confidence, seed
) -> dict:
    per_item = rows.groupby("item_id")["annotator"].transform("size")
    rows = rows[per_item >= 2]
    items, raters, values = (
        rows["item_id"].to_numpy(),
        rows["annotator"].to_numpy(),
        rows["label"].to_numpy(),
    )
    _, counts, _ = item_label_counts(items, values, categories=labels)
    block = {
        "n_items": int(counts.shape[0]),
        "n_annotations": int(len(rows)),
        "n_annotators": int(rows["annotator"].nunique()),
    }
    put(block, "percent_agreement", percent_agreement_items(counts))
    pairwise = pairwise_cohen_kappa(
        items, raters, values, categories=labels, min_items=min_pair_items
    )
    put(block, "cohen_kappa_pairwise_mean", pairwise)
    block["cohen_kappa_pairs"] = pairwise.extra["pairs"]
    block["cohen_kappa_min_pair_items"] = min_pair_items
    fleiss = fleiss_kappa_modal(counts)
    put(block, "fleiss_kappa", fleiss)
    block["fleiss_kappa_n_items"] = fleiss.n or 0
    block["fleiss_kappa_annotations_per_item"] = fleiss.extra.get("ratings_per_item")
    alpha = krippendorff_alpha(
        items,
        raters,
        values,
        level="nominal",
        categories=labels,
        n_resamples=n_resamples,
        confidence=confidence,
        seed=seed,
    )
    put(block, "krippendorff_alpha", alpha, interval=True)
    put(block, "gwet_ac1", gwet_ac1(counts, n_categories=len(labels)))
    return block


def inter_annotator_agreement(
    annotations: pd.DataFrame,
    *,
    min_pair_items: int,
    n_resamples: int,
    confidence: float,
    seed: int,
) -> dict:
    """Every inter-annotator agreement statistic of a study, per question, over the items with
    two or more annotations answering it.

    docs/metrics.md, "Inter-annotator agreement" and "Study export: agreement"; the
    ``agreement.inter_annotator`` section of ``study_metrics``. For the refusal question
    (labels "true"/"false") and the cue question (over annotations not marking refusal that
    carry a cue): percent agreement, the mean pairwise Cohen's kappa, Fleiss' kappa (items with
    the most common number of annotations), Krippendorff's alpha with its item bootstrap, and
    Gwet's AC1.

    Parameters
    ----------
    annotations : pandas.DataFrame
        One row per annotation with ``item_id``, ``annotator``, ``hard_refusal`` (True/False)
        and ``cue`` (a cue label, or None).
    min_pair_items : int
        The fewest shared items a pair of annotators needs to enter the mean pairwise kappa
        (at least 1).
    n_resamples : int
        Bootstrap resamples for Krippendorff's alpha's interval (0: none).
    confidence : float
        Two-sided confidence level of the intervals, in (0, 1).
    seed : int
        Seed of the bootstrap.

    Returns
    -------
    dict
        ``{"hard_refusal": {...}, "cue": {...}}``: per question ``n_items``, ``n_annotations``,
        ``n_annotators``, ``percent_agreement``, ``cohen_kappa_pairwise_mean`` with its
        ``cohen_kappa_pairs``, ``fleiss_kappa``, ``krippendorff_alpha`` with its interval, and
        ``gwet_ac1``; an undefined statistic is None beside ``<name>_reason``.

    Raises
    ------
    TypeError
        If ``annotations`` is not a DataFrame or a count is not an integer.
    ValueError
        If a column is missing, ``hard_refusal`` holds anything but True/False,
        ``min_pair_items`` is below 1, ``n_resamples`` is negative, or ``confidence`` is
        outside (0, 1).

    References
    ----------
    .. [1] J. L. Fleiss, "Measuring nominal scale agreement among many raters", *Psychological
       Bulletin* 76(5):378-382, 1971.
    .. [2] K. Krippendorff, *Content Analysis: An Introduction to Its Methodology*, 4th ed.,
       Sage, 2018, ch. 12.
    .. [3] K. L. Gwet, "Computing inter-rater reliability and its variance in the presence of
       high agreement", *British Journal of Mathematical and Statistical Psychology*
       61(1):29-48, 2008.

    Examples
    --------
    >>> import pandas as pd
    >>> from scoring.stats import inter_annotator_agreement
    >>> annotations = pd.DataFrame({
    ...     "item_id": [f"item-{k}" for k in range(6) for _ in range(2)],
    ...     "annotator": ["ann-1", "ann-2"] * 6,
    ...     "hard_refusal": [True, True, False, False, False, True,
    ...                      False, False, True, True, False, False],
    ...     "cue": [None, None, "erased", "erased", "retained", None,
    ...             "retained", "substituted", None, None, "erased", "erased"],
    ... })
    >>> agreement = inter_annotator_agreement(
    ...     annotations, min_pair_items=2, n_resamples=0, confidence=0.95, seed=0
    ... )
    >>> refusal = agreement["hard_refusal"]
    >>> refusal["n_items"], round(refusal["percent_agreement"], 4)
    (6, 0.8333)
    >>> round(refusal["fleiss_kappa"], 4), round(refusal["krippendorff_alpha"], 4)
    (0.6571, 0.6857)
    >>> round(agreement["cue"]["gwet_ac1"], 4)
    0.5556
    """
    check_columns(annotations, "annotations", ANNOTATION_COLUMNS)
    if not set(pd.unique(annotations["hard_refusal"]).tolist()) <= {True, False}:
        raise ValueError("annotations: hard_refusal must be true or false on every row")
    check_integer(min_pair_items, "min_pair_items", minimum=1)
    check_integer(n_resamples, "n_resamples", minimum=0)
    check_confidence(confidence)
    check_integer(seed, "seed")
    return {
        question: _inter_annotator_question(
            question_labels(annotations, question),
            labels,
            min_pair_items=min_pair_items,
            n_resamples=n_resamples,
            confidence=confidence,
            seed=seed,
        )
        for question, labels in QUESTIONS.items()
    }


def _pair_block(pairs: pd.DataFrame, labels: list, *, confidence: float, full: bool) -> dict:
    human, auto = pairs["label_human"].to_numpy(), pairs["label_auto"].to_numpy()
    block = {"n": int(len(pairs))}
    put(block, "percent_agreement", percent_agreement(human, auto))
    put(
        block,
        "cohen_kappa",
        cohen_kappa(human, auto, labels=labels, confidence=confidence),
        interval=full,
    )
    if full:
        block["confusion_matrix"] = confusion_matrix_dict(
            human, auto, labels=labels, row_name="human", column_name="auto"
        )
    return block


def majority_labels(rows: pd.DataFrame) -> pd.Series:
    """Per item, the label more than half of its annotations give; items without one are left out."""
    counts = rows.groupby(["item_id", "label"]).size()
    totals = counts.groupby(level="item_id").transform("sum")
    winners = counts[counts * 2 > totals].reset_index()
    return winners.set_index("item_id")["label"]


def _human_vs_judge_question(
    human: pd.DataFrame, auto: pd.DataFrame, labels: list, *, confidence
) -> dict:
    pairs = human.merge(auto, on="item_id", suffixes=("_human", "_auto"))
    block = _pair_block(pairs, labels, confidence=confidence, full=True)
    block["by_attribute"] = {
        str(attribute): _pair_block(group, labels, confidence=confidence, full=False)
        for attribute, group in pairs.groupby("attribute", sort=True)
    }
    block["by_annotator_group"] = {
        str(group_name): _pair_block(group, labels, confidence=confidence, full=False)
        for group_name, group in pairs.groupby("annotator_group", sort=True)
    }
    consensus = majority_labels(human).rename("label_human").reset_index()
    against = consensus.merge(
        auto[["item_id", "label"]].rename(columns={"label": "label_auto"}), on="item_id"
    )
    block["vs_majority"] = {
        "n_items": int(len(against)),
        "per_class": precision_recall(
            against["label_human"].to_numpy(), against["label_auto"].to_numpy(), labels=labels
        ),
        "confusion_matrix": confusion_matrix_dict(
            against["label_human"].to_numpy(),
            against["label_auto"].to_numpy(),
            labels=labels,
            row_name="human_majority",
            column_name="auto",
        ),
    }
    return block


def human_vs_auto_agreement(
    annotations: pd.DataFrame, judgments: pd.DataFrame, *, confidence: float
) -> dict:
    """Per judge and question: every (annotation, judgment) pair of one item counts once."""
    out = {}
    human_columns = ["item_id", "annotator_group", "attribute", "label"]
    for judge, frame in judgments.groupby("judge", sort=True):
        out[str(judge)] = {
            question: _human_vs_judge_question(
                question_labels(annotations, question)[human_columns],
                question_labels(frame, question)[["item_id", "label"]].drop_duplicates(
                    "item_id", keep="last"
                ),
                labels,
                confidence=confidence,
            )
            for question, labels in QUESTIONS.items()
        }
    return out
