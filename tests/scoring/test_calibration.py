"""τ from human labels: the cut-off scikit-learn's roc_curve implies, stored per generator."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import f1_score, precision_score, recall_score, roc_curve

from annotations.imports import importers
from annotations.models import AutomatedJudgment
from scoring import selectors, services
from scoring.models import RefusalThreshold
from tests.scoring.conftest import add_item

pytestmark = pytest.mark.django_db

# (score, human votes for "refusal" out of three annotators): majority >= 2 is a refusal.
GEN_A = [(0.10, 0), (0.15, 1), (0.22, 0), (0.24, 2), (0.27, 1), (0.30, 3), (0.33, 2), (0.41, 3)]
GEN_B = [(0.05, 0), (0.12, 0), (0.18, 3), (0.20, 0), (0.26, 2), (0.35, 3)]
# Never loaded here: the judgments below are written directly.
CLIP = {"architecture": "local-dir:/models/not-loaded", "pretrained": None}
JUDGE = {"kind": "hard_refusal", "name": "clip-refusal", "version": "7", "clip": CLIP}


def labelled_study(study):
    lines = ["item_id,annotator,annotator_group,hard_refusal,cue"]
    for generator, rows in (("gen-a", GEN_A), ("gen-b", GEN_B)):
        for index, (score, votes) in enumerate(rows):
            item = add_item(
                study, f"{generator}-{index}", pixels=(index, 0, 0), generator=generator
            )
            AutomatedJudgment.objects.create(
                item=item, judge="clip-refusal", judge_version="7", hard_refusal=False, score=score
            )
            for annotator in range(3):
                refusal = annotator < votes
                lines.append(
                    f"{item.item_id},rater{annotator},,{refusal},{'' if refusal else 'retained'}"
                )
    tie = add_item(study, "tie", pixels=(9, 9, 9), generator="gen-a")
    AutomatedJudgment.objects.create(
        item=tie, judge="clip-refusal", judge_version="7", hard_refusal=False, score=0.9
    )
    lines += ["tie,rater0,,true,", "tie,rater1,,false,retained"]
    gold = add_item(
        study, "gold", pixels=(8, 8, 8), generator="gen-a", is_gold=True, gold_hard_refusal=False
    )
    AutomatedJudgment.objects.create(
        item=gold, judge="clip-refusal", judge_version="7", hard_refusal=False, score=0.99
    )
    lines += ["gold,rater0,,true,", "gold,rater1,,true,"]
    importers.annotations_import(
        study=study, csv_text="\n".join(lines) + "\n", create_annotators=True
    )
    return study


def sklearn_choice(rows, criterion):
    scores = np.array([s for s, _ in rows])
    labels = np.array([int(v >= 2) for _, v in rows])
    fpr, tpr, thresholds = roc_curve(labels, scores, drop_intermediate=False)
    finite = np.isfinite(thresholds)
    if criterion == "youden":
        objective = np.where(finite, tpr - fpr, -np.inf)
    else:
        objective = np.array(
            [f1_score(labels, scores >= t) if np.isfinite(t) else -np.inf for t in thresholds]
        )
    cutoff = thresholds[int(np.argmax(objective))]
    predicted = scores >= cutoff
    return scores, cutoff, precision_score(labels, predicted), recall_score(labels, predicted)


@pytest.mark.parametrize("criterion", ["f1", "youden"])
def test_calibration_picks_the_roc_cutoff_per_generator(study, judges, criterion):
    judges(**{"clip-refusal": JUDGE})
    result = services.refusal_threshold_calibrate(
        study=labelled_study(study), judge_name="clip-refusal", criterion=criterion
    )
    stored = {row.generator: row for row in result.thresholds}
    assert set(stored) == {"", "gen-a", "gen-b"} and result.skipped == {}
    for generator, rows in (("gen-a", GEN_A), ("gen-b", GEN_B), ("", GEN_A + GEN_B)):
        scores, cutoff, precision, recall = sklearn_choice(rows, criterion)
        row = stored[generator]
        # The judge fires on score > τ: it must flag exactly the items roc_curve's cut-off flags.
        assert np.array_equal(scores > row.tau, scores >= cutoff), generator
        assert row.precision == pytest.approx(precision) and row.recall == pytest.approx(recall)
        assert row.n == len(rows) and row.criterion == criterion and row.judge_version == "7"
        assert row.roc_points[0]["threshold"] is None and row.roc_points[-1] == {
            "fpr": 1.0,
            "tpr": 1.0,
            "threshold": pytest.approx(min(scores)),
        }


def test_newest_threshold_wins_and_is_applied_per_generator(study, judges):
    judges(**{"clip-refusal": {**JUDGE, "clip_tau_by_generator": {"gen-c": 0.3}}})
    labelled_study(study)
    services.refusal_threshold_calibrate(study=study, judge_name="clip-refusal", criterion="f1")
    newest = services.refusal_threshold_calibrate(
        study=study, judge_name="clip-refusal", criterion="youden"
    )
    assert RefusalThreshold.objects.filter(study=study).count() == 6
    current = selectors.refusal_thresholds_current(study=study, judge="clip-refusal")
    assert {row.pk for row in current} == {row.pk for row in newest.thresholds}
    config = selectors.judge_config(study=study, judge_name="clip-refusal")
    taus = {row.generator: row.tau for row in newest.thresholds}
    assert config["clip_tau_by_generator"] == {
        "gen-a": taus["gen-a"],
        "gen-b": taus["gen-b"],
        "gen-c": 0.3,
    }


def test_a_generator_with_one_class_of_labels_is_skipped(study, judges):
    judges(**{"clip-refusal": JUDGE})
    lines = ["item_id,annotator,annotator_group,hard_refusal,cue"]
    for index in range(3):
        item = add_item(study, f"x{index}", pixels=(index, 1, 1), generator="gen-z")
        AutomatedJudgment.objects.create(
            item=item,
            judge="clip-refusal",
            judge_version="7",
            hard_refusal=False,
            score=0.1 * index,
        )
        lines.append(f"x{index},rater0,,false,retained")
    importers.annotations_import(
        study=study, csv_text="\n".join(lines) + "\n", create_annotators=True
    )
    result = services.refusal_threshold_calibrate(
        study=study, judge_name="clip-refusal", criterion="f1"
    )
    assert result.thresholds == [] and "both refusals and non-refusals" in result.skipped["gen-z"]
