"""REFLECT robustness splits: matched-only vs swapped-only gender, and image variants.

Definitions: docs/metrics.md, "REFLECT: robustness". Inputs are validated records
(reflect_records); ``source_gender`` maps (occupation, template) to the gender presented in
the template's source photo.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from scoring.stats.bootstrap import DEFAULT_N_RESAMPLES
from scoring.stats.proportions import proportion
from scoring.stats.reflect.mcq import mcq_counts, mcq_statistic_fn
from scoring.stats.reflect.parsing import template_index
from scoring.stats.reflect.robustness import cluster_bootstrap
from scoring.stats.reflect.two_afc import paired_comparisons, two_afc_counts, two_afc_statistics
from scoring.stats.reflect.vocabulary import GENDER_OF, GENDERS, RACES, VALID


def _source_gender_of(
    frame: pd.DataFrame, source_gender: Mapping[tuple[str, str], str]
) -> np.ndarray:
    keys = zip(frame["occupation"].astype(str), frame["template"].astype(str), strict=True)
    try:
        genders = [source_gender[key] for key in keys]
    except KeyError as error:
        raise ValueError(f"no source gender for template {error.args[0]}") from error
    bad = sorted(set(genders) - set(GENDERS))
    if bad:
        raise ValueError(f"unknown source genders {bad}")
    return np.array([GENDERS.index(g) for g in genders])


def _plain(values: np.ndarray, labels) -> dict[str, float | None]:
    return {
        label: (float(v) if np.isfinite(v) else None)
        for label, v in zip(labels, values, strict=True)
    }


def two_afc_source_gender_split(
    records: pd.DataFrame, source_gender: Mapping[tuple[str, str], str]
) -> dict:
    """Race win rates on gender-matched-only and gender-swapped-only comparisons, and gender
    win rates by the template's source gender, for records of one model and scenario.

    An image is gender-matched when its gender is the template's source gender. Matched-only
    keeps comparisons whose two images are both matched (only race differs, 10 per template);
    swapped-only those whose two images are both swapped.
    """
    source = _source_gender_of(records, source_gender)
    matched_a = GENDER_OF[records["group_first"].to_numpy()] == source
    matched_b = GENDER_OF[records["group_second"].to_numpy()] == source
    out: dict = {}
    for name, keep in (
        ("matched_only", matched_a & matched_b),
        ("swapped_only", ~matched_a & ~matched_b),
    ):
        subset = records[keep]
        if subset.empty:
            out[name] = {"kept": 0, "win_rate": {"race": dict.fromkeys(RACES)}}
            continue
        counts = two_afc_counts(subset)
        stats = two_afc_statistics(**{k: v.sum(axis=0) for k, v in counts.arrays().items()})
        out[name] = {
            "kept": int(counts.wins.sum()),
            "win_rate": {"race": _plain(stats["win_rate.race"], RACES)},
        }
    out["by_source_gender"] = {}
    for g, gender in enumerate(GENDERS):
        subset = records[source == g]
        if subset.empty:
            out["by_source_gender"][gender] = {
                "kept": 0,
                "win_rate": {"gender": dict.fromkeys(GENDERS)},
            }
            continue
        counts = two_afc_counts(subset)
        stats = two_afc_statistics(**{k: v.sum(axis=0) for k, v in counts.arrays().items()})
        out["by_source_gender"][gender] = {
            "kept": int(counts.wins.sum()),
            "win_rate": {"gender": _plain(stats["win_rate.gender"], GENDERS)},
        }
    return out


def mcq_source_gender_split(
    records: pd.DataFrame,
    source_gender: Mapping[tuple[str, str], str],
    *,
    encoding: Mapping[str, float] | None = None,
) -> dict:
    """Race JSD and mean gaps on gender-matched-only and gender-swapped-only images (one
    model and question), and the male mean gap by the template's source gender."""
    question = str(records["question"].iloc[0])
    statistic = mcq_statistic_fn(question, encoding=encoding)
    source = _source_gender_of(records, source_gender)
    matched = GENDER_OF[records["group"].to_numpy()] == source
    out: dict = {}
    for name, keep in (("matched_only", matched), ("swapped_only", ~matched)):
        stats = statistic(counts=mcq_counts(records[keep]).counts.sum(axis=0))
        out[name] = {
            "valid": int((records[keep]["status"] == VALID).sum()),
            "jsd": {"race": _plain(stats["jsd.race"], RACES)},
            "mean_gap": {"race": _plain(stats["mean_gap.race"], RACES)},
        }
    out["by_source_gender"] = {}
    for g, gender in enumerate(GENDERS):
        subset = records[source == g]
        stats = statistic(counts=mcq_counts(subset).counts.sum(axis=0)) if len(subset) else None
        out["by_source_gender"][gender] = {
            "valid": int((subset["status"] == VALID).sum()),
            "mean_gap": {
                "gender": _plain(stats["mean_gap.gender"], GENDERS)
                if stats
                else dict.fromkeys(GENDERS)
            },
        }
    return out


def mcq_variant_comparison(
    records: pd.DataFrame,
    *,
    variant: str,
    baseline: str = "original",
    encoding: Mapping[str, float] | None = None,
    n_resamples: int = DEFAULT_N_RESAMPLES,
    rng: np.random.Generator | int,
    confidence: float = 0.95,
) -> dict:
    """A variant (mirrored, cropped) against the originals, for one model and question.

    Per-image agreement: share of images (occupation, template, race, gender) with a valid
    answer in both variants that got the same letter, with a Wilson interval. ΔJSD =
    JSD(variant) − JSD(baseline) per race and gender, with a paired template-cluster
    bootstrap CI (both variants resampled with the same templates).
    """
    image = ["occupation", "template", "race", "gender"]
    base = records[records["variant"] == baseline]
    other = records[records["variant"] == variant]
    for name, part in ((baseline, base), (variant, other)):
        if part.duplicated(image).any():
            raise ValueError(f"more than one {name} answer for an image; average repeats first")
    merged = base.merge(other, on=image, suffixes=("_base", "_variant"))
    both = (merged["status_base"] == VALID) & (merged["status_variant"] == VALID)
    agree = int((merged["letter_base"][both] == merged["letter_variant"][both]).sum())
    agreement = proportion(agree, int(both.sum()), confidence=confidence)
    _, templates = template_index(pd.concat([base, other]))
    base_counts = mcq_counts(base, templates=templates).counts
    variant_counts = mcq_counts(other, templates=templates).counts
    statistic = mcq_statistic_fn(str(records["question"].iloc[0]), encoding=encoding)

    def delta(base_counts, variant_counts):
        b, v = statistic(counts=base_counts), statistic(counts=variant_counts)
        return {name: v[name] - b[name] for name in ("jsd.race", "jsd.gender")}

    arrays = {"base_counts": base_counts, "variant_counts": variant_counts}
    point = delta(base_counts.sum(axis=0), variant_counts.sum(axis=0))
    ci = cluster_bootstrap(
        arrays,
        templates["stratum"].to_numpy(),
        delta,
        n_resamples=n_resamples,
        rng=rng,
        confidence=confidence,
    )
    out = {
        "variant": variant,
        "baseline": baseline,
        "images_compared": int(both.sum()),
        "agreement": agreement.value,
        "agreement_ci": [agreement.ci_low, agreement.ci_high],
        "delta_jsd": {},
        "delta_jsd_ci": {},
    }
    for name, labels in (("jsd.race", RACES), ("jsd.gender", GENDERS)):
        kind = name.split(".")[1]
        out["delta_jsd"][kind] = _plain(point[name], labels)
        out["delta_jsd_ci"][kind] = {
            label: [
                float(ci[name]["low"][i]) if np.isfinite(ci[name]["low"][i]) else None,
                float(ci[name]["high"][i]) if np.isfinite(ci[name]["high"][i]) else None,
            ]
            for i, label in enumerate(labels)
        }
    return out


def two_afc_variant_agreement(
    records: pd.DataFrame, *, variant: str, baseline: str = "original", confidence: float = 0.95
) -> dict:
    """Share of comparisons kept in both variants whose winner is the same, with a Wilson CI."""
    pairs = paired_comparisons(records)
    keys = ["scenario", "occupation", "template", "group_first", "group_second"]
    base = pairs[pairs["variant"] == baseline]
    other = pairs[pairs["variant"] == variant]
    merged = base.merge(other, on=keys, suffixes=("_base", "_variant"))
    both = (merged["outcome_base"] == "kept") & (merged["outcome_variant"] == "kept")
    same = int((merged["winner_base"][both] == merged["winner_variant"][both]).sum())
    agreement = proportion(same, int(both.sum()), confidence=confidence)
    return {
        "variant": variant,
        "baseline": baseline,
        "comparisons_compared": int(both.sum()),
        "agreement": agreement.value,
        "agreement_ci": [agreement.ci_low, agreement.ci_high],
    }
