"""The study export's ``ppi`` and ``judge_error`` sections: per judge that has human labels on
the same items, prediction-powered rates, Δ, differences and ratios to the neutral baseline,
the bias the judge alone would introduce, and the judge's error per group.

docs/metrics.md, "Prediction-powered rates" and "Judge error by group". Called by
``study_metrics``; the estimators are ``ppi``, ``judge_error`` and ``delta_interval``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from annotations.labels import NEUTRAL
from scoring.stats import bootstrap
from scoring.stats.delta_interval import delta_interval_block
from scoring.stats.disparity import ClusterResample, delta_summary
from scoring.stats.judge_error import judge_error_by_attribute
from scoring.stats.ppi import resampled_means
from scoring.stats.ppi_judge_bias import judge_bias_block
from scoring.stats.ppi_ratio import RatioFit, ppi_ratio_fit
from scoring.stats.result import ci_reason, interval_block
from scoring.stats.study_rates import MEASURES, measure_outcomes

INCLUSION_PROBABILITY = "inclusion_probability"
# Optional annotation columns (annotations.common.row_fields.ANNOTATION_ROW): is the label's batch a
# probability sample of the attribute values it drew from, why not, and its name.
PROBABILITY_SAMPLE = "probability_sample"
PROBABILITY_SAMPLE_REASON = "probability_sample_reason"
BATCH = "batch"
ITEM_FIELDS = ["attribute", "attribute_value", "base_prompt_id", "domain", "generator"]
HUMAN_REFERENCE = (
    "per item, the share of its human labels (in the label source the human rates use, "
    "labels.source) that mark the outcome: the one label under adjudicated, majority and "
    "label-model sources, the vote share under pooled"
)


# Erasure, substitution and combined count only the labels that are not a refusal and carry a
# cue: their PPI rate is the ratio P(outcome and counted) / P(counted) over every judged item
# (``ppi_ratio``), so a refusal the judge missed enters the correction, not a different population.
RATIO_MEASURES = ("erasure", "substitution", "combined")


def _per_item(frame: pd.DataFrame, measure: str) -> pd.DataFrame:
    """Per item: ``share`` of its counted rows marking the outcome (NaN when none counts), and,
    over the rows that answer the measure's base question (refusal: those answering it; the cue
    measures: every row), ``hits`` the share marking the outcome and ``base`` the share counted."""
    success, counted = measure_outcomes(frame)[measure]
    answers = counted if measure not in RATIO_MEASURES else np.ones(len(frame), dtype=bool)
    rows = pd.DataFrame(
        {
            "item_id": frame["item_id"].to_numpy(),
            "hit": success & counted,
            "counted": counted,
            "answers": answers,
        }
    )
    sums = rows.groupby("item_id", sort=True)[["hit", "counted", "answers"]].sum()
    answered = sums["answers"].where(sums["answers"] > 0)
    return pd.DataFrame(
        {
            "share": sums["hit"] / sums["counted"].where(sums["counted"] > 0),
            "counted": sums["counted"],
            "hits": sums["hit"] / answered,
            "base": sums["counted"] / answered,
        }
    )


def not_probability_sample(annotations: pd.DataFrame) -> np.ndarray:
    """Per annotation row: is it left out of the prediction-powered estimates?

    A label is left out when its item was drawn by no probability sample: every label of the
    item comes from a batch recorded as not one (``probability_sample`` false: a subset that
    takes part of an attribute value's items, docs/annotation.md "Batches from a subset"). An
    item that some probability sample drew keeps all its labels (the others only add annotators
    to an item the design drew) and that sample's π. Null or absent counts as a probability
    sample (manual and imported labels, batches from before it was recorded: as before).
    The item itself stays in the judged population, as an item without human labels."""
    if PROBABILITY_SAMPLE not in annotations.columns or len(annotations) == 0:
        return np.zeros(len(annotations), dtype=bool)
    # False only where the value is false, not null (None == False is False).
    marked = annotations[PROBABILITY_SAMPLE].astype(object).eq(False).to_numpy(dtype=bool)
    per_item = pd.Series(marked).groupby(annotations["item_id"].to_numpy()).transform("all")
    return per_item.to_numpy(dtype=bool)


def labels_left_out(annotations: pd.DataFrame, item_ids) -> dict:
    """``{n_labels_not_probability_sample, not_probability_sample,
    not_probability_sample_reason}`` for the labels of ``item_ids`` that
    ``not_probability_sample`` leaves out: the count, one row per batch ``{batch, reason,
    n_labels, n_items}``, and the sentence the pages print (null when none is left out)."""
    rows = annotations[not_probability_sample(annotations)] if len(annotations) else annotations
    if len(rows):
        rows = rows[rows["item_id"].isin(set(item_ids))]
    batches = []
    if len(rows):
        batch = rows[BATCH] if BATCH in rows.columns else pd.Series("", index=rows.index)
        reason = (
            rows[PROBABILITY_SAMPLE_REASON]
            if PROBABILITY_SAMPLE_REASON in rows.columns
            else pd.Series("", index=rows.index)
        )
        frame = pd.DataFrame(
            {
                "batch": batch.fillna("").astype(str).to_numpy(),
                "reason": reason.fillna("").astype(str).to_numpy(),
                "item_id": rows["item_id"].to_numpy(),
            }
        )
        for (name, why), group in frame.groupby(["batch", "reason"], sort=True):
            batches.append(
                {
                    "batch": name,
                    "reason": why,
                    "n_labels": len(group),
                    "n_items": int(group["item_id"].nunique()),
                }
            )
    sentences = [_left_out_sentence(row) for row in batches]
    return {
        "n_labels_not_probability_sample": int(len(rows)),
        "not_probability_sample": batches,
        "not_probability_sample_reason": " ".join(sentences) or None,
    }


def _left_out_sentence(row: dict) -> str:
    labels = f"{row['n_labels']} label{'s' if row['n_labels'] != 1 else ''}"
    source = f"batch '{row['batch']}'" if row["batch"] else "a batch"
    why = f" ({row['reason']})" if row["reason"] else ""
    verb, pronoun = ("are", "they are") if row["n_labels"] != 1 else ("is", "it is")
    return (
        f"{labels} from {source}{why} {verb} left out of the prediction-powered estimates: "
        f"{pronoun} not a probability sample of their cells."
    )


def inclusion_probabilities(annotations: pd.DataFrame) -> pd.Series:
    """Per annotated item, its recorded inclusion probability (NaN when none was recorded)."""
    if INCLUSION_PROBABILITY not in annotations.columns or len(annotations) == 0:
        return pd.Series(np.nan, index=pd.Index(annotations["item_id"].unique(), name="item_id"))
    values = pd.to_numeric(annotations[INCLUSION_PROBABILITY], errors="coerce")
    return values.groupby(annotations["item_id"].to_numpy()).first().rename_axis("item_id")


def judge_items(annotations: pd.DataFrame, judge_frame: pd.DataFrame, measure: str) -> pd.DataFrame:
    """One row per item the judge labelled: item columns, ``f`` (judge), ``y`` (human reference,
    NaN without one) as the share of counted labels marking the outcome (the judge-error
    reference, from every label); the PPI's ``f_hits``, ``f_base``, ``y_hits``, ``y_base``
    (``_per_item``), ``labelled``, ``unlabelled`` and ``pi`` (NaN when not recorded), from the
    labels of probability samples only (``not_probability_sample``): an item whose labels are all
    left out is unlabelled there, and ``n_left_out`` counts its left-out labels."""
    items = judge_frame.groupby("item_id", sort=True)[ITEM_FIELDS].first()
    judge = _per_item(judge_frame, measure)
    left_out = not_probability_sample(annotations)
    sampled = annotations[~left_out] if left_out.any() else annotations
    reference = _per_item(annotations, measure) if len(annotations) else None
    human = _per_item(sampled, measure) if len(sampled) else None
    items["f"] = judge["share"]
    items["y"] = np.nan if reference is None else reference["share"].reindex(items.index)
    items["f_hits"], items["f_base"] = judge["hits"], judge["base"]
    for column, source in (("y_hits", "hits"), ("y_base", "base")):
        items[column] = np.nan if human is None else human[source].reindex(items.index)
    annotated = items.index.isin(sampled["item_id"]) if len(sampled) else False
    has_f = items["f_hits"].notna().to_numpy()
    items["labelled"] = has_f & items["y_hits"].notna().to_numpy()
    items["unlabelled"] = has_f & ~np.asarray(annotated, dtype=bool)
    items["pi"] = inclusion_probabilities(sampled).reindex(items.index).to_numpy()
    items["n_left_out"] = 0
    if left_out.any():
        counts = pd.Series(left_out).groupby(annotations["item_id"].to_numpy()).sum()
        items["n_left_out"] = counts.reindex(items.index).fillna(0).astype(int).to_numpy()
    return items.reset_index()


def _arrays(items: pd.DataFrame) -> dict:
    """The item frame as arrays; a frame without the ratio columns (a plain mean, as refusal)
    has every defined label counting (``base`` 1)."""
    f = items["f"].to_numpy(dtype=float)
    y = items["y"].to_numpy(dtype=float)
    ratio = "f_hits" in items.columns
    f_hits = items["f_hits"].to_numpy(dtype=float) if ratio else f
    y_hits = items["y_hits"].to_numpy(dtype=float) if ratio else y
    return {
        "labelled": items["labelled"].to_numpy(dtype=bool),
        "unlabelled": items["unlabelled"].to_numpy(dtype=bool),
        "f_hits": f_hits,
        "y_hits": y_hits,
        "f_base": items["f_base"].to_numpy(dtype=float) if ratio else np.isfinite(f) * 1.0,
        "y_base": items["y_base"].to_numpy(dtype=float) if ratio else np.isfinite(y) * 1.0,
        "pi": items["pi"].to_numpy(dtype=float),
        "left_out": (
            items["n_left_out"].to_numpy(dtype=int) > 0
            if "n_left_out" in items.columns
            else np.zeros(len(items), dtype=bool)
        ),
    }


def _cell_estimate(arrays: dict, mask: np.ndarray, *, confidence: float) -> RatioFit:
    """The cell's PPI entry and its per-item bootstrap terms (``ppi_ratio.ppi_ratio_fit``)."""
    labelled, unlabelled = mask & arrays["labelled"], mask & arrays["unlabelled"]
    pi = arrays["pi"]
    weighted = bool(np.isfinite(pi[labelled]).any())
    options = {"confidence": confidence, "n_unlabelled": int(unlabelled.sum())}
    if weighted:
        # A labelled item without a recorded π counts as drawn uniformly from its cell.
        population = int(labelled.sum() + unlabelled.sum())
        pi = np.where(np.isfinite(pi), pi, labelled.sum() / max(population, 1))
        options.update(weights=np.where(labelled, 1.0 / pi, 0.0))
    fit = ppi_ratio_fit(
        arrays["y_hits"],
        arrays["f_hits"],
        arrays["y_base"],
        arrays["f_base"],
        labelled,
        (labelled | unlabelled) if weighted else unlabelled,
        **options,
    )
    entry = fit.entry
    entry["weighting"] = "inverse_probability" if weighted else "uniform"
    # Items whose human labels are all left out (not a probability sample): unlabelled here.
    left_out = int((mask & arrays["left_out"]).sum())
    entry["n_labelled_not_probability_sample"] = left_out
    if entry["estimate"] is None and left_out and entry.get("reason"):
        entry["reason"] += (
            f" ({left_out} item{'s' if left_out != 1 else ''} with human labels left out: not a "
            "probability sample of the value's items)"
        )
    if entry["ci_low"] is not None:
        # A rate lies in [0, 1]: intersecting the interval with it loses no coverage.
        entry["ci_low"], entry["ci_high"] = max(0.0, entry["ci_low"]), min(1.0, entry["ci_high"])
    return fit


def _percentile_block(samples, point, *, confidence, n_resamples, design_code, prefix="") -> dict:
    """The percentile interval of ``samples`` around a defined ``point`` (``interval_block``);
    a null point has null bounds and no reason of its own (the estimate carries it)."""
    if point is None:
        return {f"{prefix}ci_low": None, f"{prefix}ci_high": None}

    def bounds():
        low, high, n_undefined = bootstrap.percentile_interval(samples, confidence=confidence)
        return low, high, len(samples) - int(n_undefined)

    return interval_block(
        None if samples is None else bounds,
        n_resamples=n_resamples,
        design_code=design_code,
        prefix=prefix,
    )


def _ratio_of(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(
            denominator > 0, numerator / np.where(denominator > 0, denominator, 1), np.nan
        )


class _Cells:
    """The PPI and judge-only rates of one set of cells, with their bootstrap resamples."""

    def __init__(self, items, cells, resample, *, confidence):
        self.entries, terms, judge_terms = {}, [], []
        arrays = _arrays(items)
        has_f = np.isfinite(arrays["f_hits"])
        f_hits, f_base = np.nan_to_num(arrays["f_hits"]), np.nan_to_num(arrays["f_base"])
        empty = [(np.zeros(len(items)), np.zeros(len(items)))]
        self.judge_rate = {}
        for key, mask in cells.items():
            fit = _cell_estimate(arrays, mask, confidence=confidence)
            self.entries[key] = fit.entry
            terms += [fit.numerator_terms or empty, fit.denominator_terms or empty]
            judged = mask & has_f
            # The judge alone: Σ hits / Σ counted over the value's judged items.
            judge_terms.append([(f_hits * judged, f_base * judged)])
            base = float(f_base[judged].sum())
            self.judge_rate[key] = float(f_hits[judged].sum()) / base if base > 0 else None
        self.keys = list(cells)
        self.boot = self.judge_boot = None
        if resample is not None and resample.n_resamples > 0:
            args = (resample.cluster_codes, resample.counts, resample.n_clusters)
            parts = resampled_means(terms, *args)
            self.boot = _ratio_of(parts[:, 0::2], parts[:, 1::2])
            self.judge_boot = resampled_means(judge_terms, *args)

    def column(self, key):
        return self.keys.index(key)


def _without_spread(boot: np.ndarray) -> bool:
    """Does some column keep one value in every usable resample?"""
    usable = boot[np.all(np.isfinite(boot), axis=1)]
    if usable.shape[0] < 2:
        return False
    spread = usable.max(axis=0) - usable.min(axis=0)
    return bool(np.any(spread <= 1e-12 * np.maximum(1.0, np.abs(usable[0]))))


def _attribute_blocks(cells: _Cells, attribute: str, values, context) -> dict:
    confidence, n_resamples, design = context
    estimates = {v: cells.entries[(attribute, v)]["estimate"] for v in values}
    summary = delta_summary(estimates)
    defined = [v for v in sorted(values) if estimates[v] is not None]
    columns = [cells.column((attribute, v)) for v in defined]
    boot = None if cells.boot is None else cells.boot[:, columns]
    delta = {
        "estimate": summary["delta"],
        "max_value": summary["max_value"],
        "min_value": summary["min_value"],
        **delta_interval_block(
            [estimates[v] for v in defined],
            boot,
            confidence=confidence,
            n_resamples=n_resamples,
            design_code=design,
            prefix="",
        ),
    }
    if boot is not None and delta["ci_low"] is not None and _without_spread(boot):
        # A value with no spread (e.g. no positive human label among 11) would enter the max-t
        # band as known: Δ at 0 covered 0.79 at 11 labelled items per value with such values kept.
        delta.update(ci_low=None, ci_high=None, **ci_reason("value_without_spread"))
    if summary["delta"] is None:
        delta = {
            "estimate": None,
            "reason": summary["delta_reason"],
            "ci_low": None,
            "ci_high": None,
            "max_value": None,
            "min_value": None,
        }
    judged = [v for v in defined if cells.judge_rate[(attribute, v)] is not None]
    judged_columns = [cells.column((attribute, v)) for v in judged]
    bias = judge_bias_block(
        judged,
        {v: cells.judge_rate[(attribute, v)] for v in judged},
        estimates,
        None if cells.judge_boot is None else cells.judge_boot[:, judged_columns],
        None if cells.boot is None else cells.boot[:, judged_columns],
        confidence=confidence,
        n_resamples=n_resamples,
        design_code=design,
    )
    return {"delta": delta, "judge_bias": bias}


def _versus_neutral(cells: _Cells, attribute: str, value: str, context) -> tuple[dict, dict]:
    confidence, n_resamples, design = context
    rate = cells.entries[(attribute, value)]["estimate"]
    neutral_key = (NEUTRAL, NEUTRAL)
    neutral = cells.entries.get(neutral_key, {}).get("estimate")
    if rate is None or neutral is None:
        reason = "the value's or the neutral baseline's estimate is undefined"
        empty = {"estimate": None, "ci_low": None, "ci_high": None, "reason": reason}
        return dict(empty), dict(empty)
    boot = None
    if cells.boot is not None:
        boot = (
            cells.boot[:, cells.column((attribute, value))],
            cells.boot[:, cells.column(neutral_key)],
        )
    options = {"confidence": confidence, "n_resamples": n_resamples, "design_code": design}
    difference = {"estimate": rate - neutral}
    difference.update(
        _percentile_block(None if boot is None else boot[0] - boot[1], rate - neutral, **options)
    )
    if neutral <= 0:
        ratio = {"estimate": None, "ci_low": None, "ci_high": None}
        ratio["reason"] = "the neutral baseline's estimate is 0 or below"
        return difference, ratio
    samples = None
    if boot is not None:
        with np.errstate(divide="ignore", invalid="ignore"):
            samples = np.where(boot[1] > 0, boot[0] / np.where(boot[1] > 0, boot[1], 1), np.nan)
    ratio = {"estimate": rate / neutral}
    ratio.update(_percentile_block(samples, rate / neutral, **options))
    return difference, ratio


def _nested(entries: dict) -> dict:
    out: dict = {}
    for (attribute, value), entry in sorted(entries.items()):
        out.setdefault(attribute, {})[value] = entry
    return out


def judge_outcome_ppi(
    items: pd.DataFrame, *, confidence, n_resamples, seed, resample: ClusterResample | None = None
) -> dict:
    """``{rates, delta, vs_neutral, ratio_vs_neutral, judge_bias, rates_by_generator}`` for one
    judge and outcome (docs/metrics.md, "Prediction-powered rates"). ``resample`` may pass the
    draws of ``ClusterResample(items, n_resamples=n_resamples, rng=default_rng(seed))`` built
    once for the judge's items (the same rows for every outcome)."""
    attribute = items["attribute"].to_numpy()
    value = items["attribute_value"].to_numpy()
    cells = {
        (a, v): (attribute == a) & (value == v)
        for a, v in sorted(set(zip(attribute, value, strict=True)))
    }
    if resample is None:
        resample = ClusterResample(items, n_resamples=n_resamples, rng=np.random.default_rng(seed))
    estimates = _Cells(items, cells, resample, confidence=confidence)
    context = (confidence, n_resamples, resample.design_code)
    for key, entry in estimates.entries.items():
        # Beside the normal interval (items independent, as ppi_py), the cluster-bootstrap one.
        if entry["estimate"] is not None:
            samples = None if estimates.boot is None else estimates.boot[:, estimates.column(key)]
            entry.update(
                _percentile_block(
                    samples,
                    entry["estimate"],
                    confidence=confidence,
                    n_resamples=n_resamples,
                    design_code=resample.design_code,
                    prefix="bootstrap_",
                )
            )
    out = {
        "rates": _nested(estimates.entries),
        "delta": {},
        "vs_neutral": {},
        "ratio_vs_neutral": {},
        "judge_bias": {},
    }
    for name in sorted({a for a, _ in cells} - {NEUTRAL}):
        values = [v for a, v in cells if a == name]
        blocks = _attribute_blocks(estimates, name, values, context)
        out["delta"][name], out["judge_bias"][name] = blocks["delta"], blocks["judge_bias"]
        for v in sorted(values):
            difference, ratio = _versus_neutral(estimates, name, v, context)
            out["vs_neutral"].setdefault(name, {})[v] = difference
            out["ratio_vs_neutral"].setdefault(name, {})[v] = ratio
    by_generator = {}
    generator = items["generator"].to_numpy()
    for level in sorted(set(generator)):
        level_cells = {key: mask & (generator == level) for key, mask in cells.items()}
        level_cells = {key: mask for key, mask in level_cells.items() if mask.any()}
        by_generator[str(level)] = _nested(
            _Cells(items, level_cells, None, confidence=confidence).entries
        )
    out["rates_by_generator"] = by_generator
    return out


def majority_reference(share: pd.Series) -> pd.Series:
    """1 above one half, 0 below, NaN at a tie or without a reference."""
    return share.where(share != 0.5).gt(0.5).where(share.notna() & (share != 0.5))


def study_ppi(
    annotations: pd.DataFrame,
    judgments: pd.DataFrame,
    *,
    confidence: float,
    n_resamples: int,
    seed: int,
    alpha: float = 0.05,
) -> tuple[dict, dict]:
    """``(ppi, judge_error)``: ``ppi.<judge>.<outcome>`` and ``judge_error.<judge>.<outcome>``
    for every judge with a human reference on at least one item it labelled.

    The prediction-powered estimates leave out the labels of items no probability sample drew
    (``not_probability_sample``); each outcome's block says how many (``labels_left_out``).
    The judge's error by group uses every label: it describes the judge on the items humans
    labelled, as it always has (docs/metrics.md, "Judge error by group")."""
    ppi, errors = {}, {}
    if len(annotations) == 0 or len(judgments) == 0:
        return ppi, errors
    for judge, frame in judgments.groupby("judge", sort=True):
        frame = frame.reset_index(drop=True)
        per_outcome = {measure: judge_items(annotations, frame, measure) for measure in MEASURES}
        # A judge whose human labels are all left out (not a probability sample) still gets its
        # block: null estimates with their reason, and the count of labels left out.
        if not any(
            (items["labelled"] | (items["f_hits"].notna() & (items["n_left_out"] > 0))).any()
            for items in per_outcome.values()
        ):
            continue
        left_out = labels_left_out(annotations, frame["item_id"].unique())
        ppi[str(judge)], errors[str(judge)] = {}, {}
        # Every outcome's frame holds the judge's items in the same order: one set of draws.
        resample = ClusterResample(
            per_outcome["refusal"], n_resamples=n_resamples, rng=np.random.default_rng(seed)
        )
        for measure, items in per_outcome.items():
            ppi[str(judge)][measure] = judge_outcome_ppi(
                items,
                confidence=confidence,
                n_resamples=n_resamples,
                seed=seed,
                resample=resample,
            ) | dict(left_out)
            reference = majority_reference(items["y"])
            scored = items[items["f"].notna() & reference.notna()].assign(
                judge=lambda rows: rows["f"] > 0.5, reference=reference.astype(float) > 0.5
            )
            errors[str(judge)][measure] = judge_error_by_attribute(
                scored, confidence=confidence, alpha=alpha, seed=seed
            )
    return ppi, errors
