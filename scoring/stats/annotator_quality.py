"""Per-annotator quality: gold accuracy, leave-one-out agreement with peers, time, "too fast"
answers, answer-distribution anomalies and broken-image flags (docs/metrics.md, "Annotator
quality"). Rows in, plain data out; no Django.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

import numpy as np

from annotations.labels import gold_correct
from scoring.stats.agreement import cohen_kappa
from scoring.stats.proportions import proportion
from scoring.stats.result import Stat, undefined

REFUSED = "refused"
ANOMALY_SHARE = 0.8  # one answer key above this share of an annotator's answers is flagged
MIN_ANSWERS_FOR_ANOMALY = 10  # fewer answers say nothing about a distribution


def answer_key(hard_refusal: bool, cue: str | None) -> str:
    """One key per answer: refused, or the cue label."""
    return REFUSED if hard_refusal else (cue or "")


def peers_majority(labels: Iterable[str]) -> str | None:
    """The most frequent label, or None when the top two tie."""
    counts = Counter(labels).most_common(2)
    if not counts or (len(counts) == 2 and counts[0][1] == counts[1][1]):
        return None
    return counts[0][0]


def answers_by_item(rows: Iterable[Mapping]) -> dict:
    """Item -> [(annotator, answer key)] from rows with item_id, annotator, hard_refusal, cue."""
    per_item: dict = {}
    for row in rows:
        per_item.setdefault(row["item_id"], []).append(
            (row["annotator"], answer_key(row["hard_refusal"], row["cue"]))
        )
    return per_item


def leave_one_out_kappa(per_item: dict, annotator: str, items=None) -> Stat:
    """Cohen's κ of ``annotator``'s keys against the majority of the *other* annotators of the
    same items (``per_item``: ``answers_by_item``; ``items``: a subset, all by default). Items
    with no other answer, or where the others tie, are left out (counted in ``extra``)."""
    own, peers, no_peers, tied = [], [], 0, 0
    for item in per_item if items is None else items:
        answers = per_item[item]
        mine = [key for who, key in answers if who == annotator]
        if not mine:
            continue
        others = [key for who, key in answers if who != annotator]
        if not others:
            no_peers += 1
            continue
        majority = peers_majority(others)
        if majority is None:
            tied += 1
            continue
        own.append(mine[0])
        peers.append(majority)
    extra = {"items_without_peers": no_peers, "items_peers_tied": tied}
    if not own:
        return undefined("no item shared with peers who agree on a majority", n=0, **extra)
    stat = cohen_kappa(own, peers, labels=sorted(set(own) | set(peers)))
    return Stat(
        value=stat.value,
        reason=stat.reason,
        ci_low=stat.ci_low,
        ci_high=stat.ci_high,
        n=stat.n,
        extra={**stat.extra, **extra},
    )


def answer_distribution(keys: list[str]) -> dict:
    """Shares of each answer key, and the anomaly flag (one key above ANOMALY_SHARE)."""
    n = len(keys)
    shares = {key: count / n for key, count in Counter(keys).most_common()} if n else {}
    if n < MIN_ANSWERS_FOR_ANOMALY:
        return {
            "shares": shares,
            "anomaly": None,
            "reason": f"fewer than {MIN_ANSWERS_FOR_ANOMALY} answers",
        }
    top_key, top_share = next(iter(shares.items()))
    return {
        "shares": shares,
        "anomaly": top_share > ANOMALY_SHARE,
        "dominant": top_key if top_share > ANOMALY_SHARE else None,
        "reason": None,
    }


def annotator_quality(rows: list[Mapping], *, confidence: float = 0.95) -> dict[str, dict]:
    """Per annotator, every quality measure (docs/metrics.md, "Annotator quality").

    ``rows``: one dict per answer with annotator, item_id, is_gold, gold_hard_refusal, gold_cue,
    hard_refusal, cue, broken_image, seconds_to_answer, too_fast. Agreement uses non-gold answers.
    """
    per_item = answers_by_item(r for r in rows if not r["is_gold"])
    by_annotator: dict[str, list[Mapping]] = {}
    for row in rows:
        by_annotator.setdefault(row["annotator"], []).append(row)
    out = {}
    for annotator in sorted(by_annotator):
        mine = by_annotator[annotator]
        gold = [r for r in mine if r["is_gold"]]
        own_regular = [r for r in mine if not r["is_gold"]]
        seconds = [r["seconds_to_answer"] for r in mine if r["seconds_to_answer"] is not None]
        n = len(mine)
        out[annotator] = {
            "n_answers": n,
            "gold_accuracy": proportion(
                sum(gold_correct(r) for r in gold), len(gold), confidence=confidence
            ).to_dict(),
            "peer_kappa": leave_one_out_kappa(
                per_item, annotator, items={r["item_id"] for r in own_regular}
            ).to_dict(),
            "median_seconds": float(np.median(seconds)) if seconds else None,
            "too_fast_share": sum(bool(r["too_fast"]) for r in mine) / n if n else None,
            "distribution": answer_distribution(
                [answer_key(r["hard_refusal"], r["cue"]) for r in own_regular]
            ),
            "broken_image_flags": sum(bool(r["broken_image"]) for r in mine),
        }
    return out
