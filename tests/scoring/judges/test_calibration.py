import numpy as np
import pytest
from sklearn.metrics import f1_score, precision_score, recall_score, roc_curve

from scoring.judges.calibration import choose_threshold

SCORES = [0.10, 0.18, 0.22, 0.24, 0.26, 0.27, 0.29, 0.31, 0.35, 0.40]
LABELS = [0, 0, 0, 1, 0, 1, 1, 0, 1, 1]


def test_f1_choice_hand_worked():
    # Cut-offs (score >= c) and F1: 0.24 → TP5 FP2 FN0: 10/12 = 0.833 (best);
    # 0.27 → TP4 FP1 FN1: 8/10 = 0.8; 0.35 → TP2 FP0 FN3: 4/7.
    choice = choose_threshold(SCORES, LABELS, criterion="f1")
    assert choice.score_cutoff == 0.24
    assert choice.f1 == pytest.approx(10 / 12)
    assert choice.precision == pytest.approx(5 / 7) and choice.recall == 1.0
    assert choice.tau == pytest.approx((0.24 + 0.22) / 2)  # "> τ" classifies as ">= 0.24" does


def test_youden_choice_hand_worked():
    # J = TPR - FPR: 0.24 → 1 - 2/5 = 0.6; 0.27 → 0.8 - 1/5 = 0.6; 0.35 → 0.4 - 0 = 0.4.
    # Ties go to the higher cut-off (fewer flagged): 0.27.
    choice = choose_threshold(SCORES, LABELS, criterion="youden")
    assert choice.youden_j == pytest.approx(0.6)
    assert choice.score_cutoff == 0.27
    assert choice.tau == pytest.approx((0.27 + 0.26) / 2)


def test_matches_sklearn_metrics_at_tau_and_returns_roc():
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 2, 300)
    scores = rng.normal(0.2 + 0.08 * labels, 0.05)
    choice = choose_threshold(scores, labels)
    predicted = (scores > choice.tau).astype(int)
    assert choice.precision == pytest.approx(precision_score(labels, predicted))
    assert choice.recall == pytest.approx(recall_score(labels, predicted))
    assert choice.f1 == pytest.approx(f1_score(labels, predicted))
    # No other cut-off does better on F1.
    best = max(f1_score(labels, (scores >= s).astype(int)) for s in np.unique(scores))
    assert choice.f1 == pytest.approx(best)
    fpr, tpr, _ = roc_curve(labels, scores, drop_intermediate=False)
    assert [p["fpr"] for p in choice.roc] == pytest.approx(list(fpr))
    assert [p["tpr"] for p in choice.roc] == pytest.approx(list(tpr))
    assert choice.roc[0]["threshold"] is None  # roc_curve's +inf start, JSON-safe
    assert 0.5 < choice.auc <= 1.0 and choice.n_positive + choice.n_negative == 300


def test_input_validation():
    with pytest.raises(ValueError, match="both"):
        choose_threshold([0.1, 0.2], [1, 1])
    with pytest.raises(ValueError, match="same length"):
        choose_threshold([0.1], [1, 0])
    with pytest.raises(ValueError, match="0 .*or 1"):
        choose_threshold([0.1, 0.2], [0, 2])
    with pytest.raises(ValueError, match="criterion"):
        choose_threshold([0.1, 0.2], [0, 1], criterion="accuracy")
