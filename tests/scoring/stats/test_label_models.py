"""Label models: recovery of a known truth from simulated annotators, equality with crowd-kit run
directly and with an independent NumPy Dawid-Skene, degenerate inputs, and the study export's
aggregation / sensitivity sections."""

import json

import numpy as np
import pandas as pd
import pytest
from crowdkit.aggregation import GLAD, MACE, DawidSkene

from scoring.stats.label_models import (
    AGGREGATED_LABEL_COLUMNS,
    aggregate_labels,
    fit_question,
)
from scoring.stats.label_sensitivity import aggregated_frame, label_model_sections
from scoring.stats.study_metrics import study_metrics
from scoring.stats.study_rates import source_rates

CUES = ["retained", "erased", "substituted"]
# crowd-kit 1.4 calls pandas APIs that pandas 3 deprecates; this file also calls crowd-kit directly.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def simulate(n_items=400, seed=7):
    """Five annotators with known confusion matrices over the refusal and cue questions.

    Two careful annotators (90 % right), one who over-reports refusal and calls most cues
    "retained", and two who answer at random: a majority of three poor annotators often outvotes
    the careful two, which a confusion-matrix model can correct.
    """
    rng = np.random.default_rng(seed)
    refused = rng.random(n_items) < 0.3
    cue = rng.choice(CUES, size=n_items, p=[0.5, 0.3, 0.2])
    annotators = {
        "careful1": (0.9, 0.9),
        "careful2": (0.9, 0.9),
        "biased": ("biased", "biased"),
        "random1": (0.5, 1 / 3),
        "random2": (0.5, 1 / 3),
    }
    rows = []
    for i in range(n_items):
        for name, (p_refusal, p_cue) in annotators.items():
            if p_refusal == "biased":
                said_refused = bool(refused[i]) or rng.random() < 0.6
                said_cue = "retained" if rng.random() < 0.8 else cue[i]
            else:
                said_refused = bool(refused[i]) if rng.random() < p_refusal else not refused[i]
                if p_cue == 1 / 3:
                    said_refused = bool(rng.random() < 0.5)
                    said_cue = str(rng.choice(CUES))
                else:
                    said_cue = (
                        cue[i]
                        if rng.random() < p_cue
                        else str(rng.choice(np.setdiff1d(CUES, [cue[i]])))
                    )
            rows.append(
                {
                    "item_id": f"i{i:04d}",
                    "annotator": name,
                    "hard_refusal": said_refused,
                    "cue": None if said_refused else str(said_cue),
                }
            )
    truth = pd.DataFrame(
        {
            "item_id": [f"i{i:04d}" for i in range(n_items)],
            "hard_refusal": refused,
            "cue": np.where(refused, None, cue),
        }
    )
    return pd.DataFrame(rows), truth


def accuracy_against(truth, aggregation, question):
    labels = pd.DataFrame(aggregation.items).set_index("item_id")[question]
    expected = truth.set_index("item_id")[question]
    if question == "cue":
        keep = expected.notna()
        labels, expected = labels[keep], expected[keep]
    return float((labels.reindex(expected.index) == expected).mean())


@pytest.fixture(scope="module")
def simulated():
    return simulate()


@pytest.fixture(scope="module")
def fitted(simulated):
    annotations, _ = simulated
    return {
        method: aggregate_labels(annotations, method=method, seed=0)
        for method in ("majority", "dawid-skene", "mace")
    }


@pytest.mark.parametrize("question", ["hard_refusal", "cue"])
def test_dawid_skene_recovers_the_truth_better_than_majority(simulated, fitted, question):
    _, truth = simulated
    majority = accuracy_against(truth, fitted["majority"], question)
    dawid_skene = accuracy_against(truth, fitted["dawid-skene"], question)
    # Seed 7 gives refusal 0.915 vs 0.83 and cue 0.80 vs 0.58 (cue errors include items the
    # refusal model calls refused); the margins leave room for crowd-kit's numerics to move.
    assert dawid_skene > majority + 0.05, (dawid_skene, majority)
    assert dawid_skene > 0.75


def test_mace_recovers_the_truth_better_than_majority(simulated, fitted):
    _, truth = simulated
    assert accuracy_against(truth, fitted["mace"], "hard_refusal") > accuracy_against(
        truth, fitted["majority"], "hard_refusal"
    )


def test_annotator_reliability_ranks_careful_above_random(fitted):
    for method in ("dawid-skene", "mace"):
        annotators = fitted[method].annotators
        careful = min(annotators[a]["accuracy_estimate"] for a in ("careful1", "careful2"))
        random = max(annotators[a]["accuracy_estimate"] for a in ("random1", "random2"))
        assert careful > random + 0.3, method
        assert annotators["careful1"]["n"] == 400
    competence = {
        a: block["by_question"]["hard_refusal"]["competence"]
        for a, block in fitted["mace"].annotators.items()
    }
    assert min(competence["careful1"], competence["careful2"]) > max(
        competence["random1"], competence["random2"]
    )


def test_dawid_skene_confusion_matrix_is_close_to_the_simulated_one(fitted):
    matrix = fitted["dawid-skene"].annotators["careful1"]["by_question"]["hard_refusal"][
        "confusion_matrix"
    ]
    # rows: true label; entries: P(answer | true label). Simulated: 0.9 on the diagonal.
    assert matrix["true"]["true"] == pytest.approx(0.9, abs=0.06)
    assert matrix["false"]["false"] == pytest.approx(0.9, abs=0.06)
    biased = fitted["dawid-skene"].annotators["biased"]["by_question"]["hard_refusal"]
    # Says "refused" on 60 % of the items that are not refused.
    assert biased["confusion_matrix"]["false"]["true"] == pytest.approx(0.6, abs=0.08)


def crowd_frame(annotations, question):
    if question == "hard_refusal":
        rows = annotations.assign(label=np.where(annotations["hard_refusal"], "true", "false"))
    else:
        rows = annotations[~annotations["hard_refusal"] & annotations["cue"].notna()]
        rows = rows.assign(label=rows["cue"])
    frame = pd.DataFrame(
        {
            "task": rows["item_id"].to_numpy(),
            "worker": rows["annotator"].to_numpy(),
            "label": rows["label"].astype(str).to_numpy(),
        }
    )
    # Canonical order: annotators and labels first appear in sorted order, the one input on which
    # crowd-kit 1.4's MACE (factorize order vs groupby's sorted order) is right with names.
    frame = frame.sort_values(["worker", "label", "task"], kind="stable").reset_index(drop=True)
    for column in ("worker", "label"):
        assert list(pd.unique(frame[column])) == sorted(frame[column].unique())
    return frame


@pytest.mark.parametrize("question", ["hard_refusal", "cue"])
def test_results_equal_crowd_kit_run_directly(simulated, fitted, question):
    annotations, _ = simulated
    data = crowd_frame(annotations, question)
    for method, model in (
        ("dawid-skene", DawidSkene(n_iter=100, tol=1e-5)),
        ("mace", MACE(n_restarts=1, n_iter=50, random_state=0)),
    ):
        probabilities = model.fit_predict_proba(data)
        rows = pd.DataFrame(fitted[method].items).set_index("item_id")
        posterior_column = f"{question}_posterior"
        expected_label = probabilities.idxmax(axis=1)
        if question == "hard_refusal":
            ours = rows["hard_refusal"].map({True: "true", False: "false"})
            assert (ours.reindex(expected_label.index) == expected_label).all()
            chosen = probabilities.max(axis=1)
            np.testing.assert_allclose(
                rows[posterior_column].reindex(chosen.index).to_numpy(dtype=float),
                chosen.to_numpy(),
                atol=1e-12,
            )
        else:
            # Cue labels are reported for items the model calls not refused.
            shown = rows[rows["hard_refusal"] == False]  # noqa: E712
            shown = shown[shown.index.isin(expected_label.index)]
            assert (shown["cue"] == expected_label.reindex(shown.index)).all()
            np.testing.assert_allclose(
                shown[posterior_column].to_numpy(dtype=float),
                probabilities.max(axis=1).reindex(shown.index).to_numpy(),
                atol=1e-12,
            )
        blocks = fitted[method].annotators
        if method == "dawid-skene":
            errors = model.errors_
            for worker in ("careful1", "biased"):
                matrix = blocks[worker]["by_question"][question]["confusion_matrix"]
                for true in errors.columns:
                    for seen in errors.loc[worker].index:
                        assert matrix[str(true)][str(seen)] == pytest.approx(
                            errors.loc[(worker, seen), true], abs=1e-12
                        )
        else:
            _, workers = pd.factorize(data["worker"])
            for position, worker in enumerate(workers):
                assert blocks[worker]["by_question"][question]["competence"] == pytest.approx(
                    model.spamming_[position, 1], abs=1e-12
                )


@pytest.mark.parametrize("method", ["dawid-skene", "mace"])
def test_answers_in_any_order_give_the_same_fit(simulated, method):
    annotations, _ = simulated
    rows = crowd_frame(annotations, "cue").rename(
        columns={"task": "item_id", "worker": "annotator"}
    )
    shuffled = rows.sample(frac=1.0, random_state=5).reset_index(drop=True)
    first = fit_question(rows, question="cue", method=method)
    second = fit_question(shuffled, question="cue", method=method)
    pd.testing.assert_frame_equal(
        first.probabilities.sort_index(), second.probabilities.sort_index(), atol=1e-12
    )
    assert first.annotator_parameters == second.annotator_parameters


def numpy_dawid_skene(data: pd.DataFrame, n_iter=500, eps=1e-10):
    """An independent Dawid & Skene (1979) EM: majority-vote start, then M and E steps in NumPy."""
    items, item_codes = np.unique(data["task"], return_inverse=True)
    workers, worker_codes = np.unique(data["worker"], return_inverse=True)
    labels, label_codes = np.unique(data["label"], return_inverse=True)
    n_items, n_workers, n_labels = len(items), len(workers), len(labels)
    votes = np.zeros((n_items, n_labels))
    np.add.at(votes, (item_codes, label_codes), 1)
    posterior = votes / votes.sum(axis=1, keepdims=True)
    for _ in range(n_iter):
        prior = posterior.mean(axis=0)
        # errors[w, seen, true] = P(seen | true) for worker w
        errors = np.zeros((n_workers, n_labels, n_labels))
        np.add.at(errors, (worker_codes, label_codes), posterior[item_codes])
        errors = np.clip(errors, eps, None)
        errors /= errors.sum(axis=1, keepdims=True)
        log_like = np.tile(np.log(np.clip(prior, eps, None)), (n_items, 1))
        np.add.at(log_like, item_codes, np.log(errors[worker_codes, label_codes]))
        log_like -= log_like.max(axis=1, keepdims=True)
        posterior = np.exp(log_like)
        posterior /= posterior.sum(axis=1, keepdims=True)
    return pd.DataFrame(posterior, index=items, columns=labels)


@pytest.mark.parametrize("question", ["hard_refusal", "cue"])
def test_dawid_skene_matches_an_independent_numpy_implementation(simulated, question):
    annotations, _ = simulated
    data = crowd_frame(annotations, question)
    rows = data.rename(columns={"task": "item_id", "worker": "annotator"})
    fit = fit_question(rows, question=question, method="dawid-skene")
    # crowd-kit stops on its ELBO tolerance: compare after the same number of EM iterations.
    assert 1 <= fit.iterations <= 100
    reference = numpy_dawid_skene(data, n_iter=fit.iterations)
    ours = fit.probabilities.reindex(index=reference.index, columns=reference.columns)
    np.testing.assert_allclose(ours.to_numpy(), reference.to_numpy(), atol=1e-8)


def test_glad_equals_crowd_kit():
    annotations, _ = simulate(n_items=20, seed=3)
    data = crowd_frame(annotations, "hard_refusal")
    rows = data.rename(columns={"task": "item_id", "worker": "annotator"})
    fit = fit_question(rows, question="hard_refusal", method="glad")
    model = GLAD(n_iter=100, tol=1e-5)
    probabilities = model.fit_predict_proba(data)
    ours = fit.probabilities.reindex(index=probabilities.index, columns=probabilities.columns)
    np.testing.assert_allclose(ours.to_numpy(), probabilities.to_numpy(), atol=1e-9)
    for worker, alpha in model.alphas_.items():
        assert fit.annotator_parameters[worker]["ability"] == pytest.approx(alpha, abs=1e-9)


def frame(rows):
    return pd.DataFrame(rows, columns=["item_id", "annotator", "hard_refusal", "cue"])


@pytest.mark.parametrize("method", ["dawid-skene", "mace", "glad"])
def test_one_annotator_gives_null_with_a_reason(method):
    result = aggregate_labels(
        frame([("i1", "a", True, None), ("i2", "a", False, "erased")]), method=method
    )
    assert [row["hard_refusal"] for row in result.items] == [None, None]
    assert all("at least two annotators" in row["reason"] for row in result.items)
    block = result.annotators["a"]
    assert (
        block["accuracy_estimate"] is None and "at least two" in block["accuracy_estimate_reason"]
    )
    assert block["n"] == 2


@pytest.mark.parametrize("method", ["majority", "dawid-skene", "mace"])
def test_one_label_everywhere_gives_the_label_but_no_reliability(method):
    rows = [(f"i{i}", a, False, "retained") for i in range(4) for a in ("a", "b", "c")]
    result = aggregate_labels(frame(rows), method=method)
    assert {(row["hard_refusal"], row["cue"], row["posterior"]) for row in result.items} == {
        (False, "retained", 1.0)
    }
    for block in result.annotators.values():
        assert block["accuracy_estimate"] is None
        assert "not identifiable" in block["accuracy_estimate_reason"]
    assert "every answer is 'false'" in result.questions["hard_refusal"]["reason"]


def test_no_answers_give_no_rows_and_no_crash():
    result = aggregate_labels(frame([]).astype({"hard_refusal": bool}), method="dawid-skene")
    assert result.items == [] and result.annotators == {}
    assert result.questions["hard_refusal"]["reason"] == "no answers to this question"


def test_majority_ties_are_null_with_a_reason_and_posteriors_are_vote_shares():
    rows = [
        ("i1", "a", True, None),
        ("i1", "b", False, "erased"),
        ("i2", "a", False, "erased"),
        ("i2", "b", False, "erased"),
        ("i2", "c", False, "retained"),
    ]
    items = {row["item_id"]: row for row in aggregate_labels(frame(rows), method="majority").items}
    assert items["i1"]["hard_refusal"] is None and "more than half" in items["i1"]["reason"]
    assert items["i2"]["hard_refusal"] is False and items["i2"]["cue"] == "erased"
    assert items["i2"]["cue_posterior"] == pytest.approx(2 / 3)
    assert items["i2"]["posterior"] == pytest.approx(1.0 * 2 / 3)
    assert list(items["i2"]) == AGGREGATED_LABEL_COLUMNS


def test_refused_items_carry_no_cue(fitted):
    for row in fitted["dawid-skene"].items:
        if row["hard_refusal"]:
            assert row["cue"] is None and row["cue_posterior"] is None
            assert row["posterior"] == row["hard_refusal_posterior"]


def test_unknown_method_and_missing_columns_are_clear_errors():
    with pytest.raises(ValueError, match="unknown label model 'snorkel'"):
        aggregate_labels(frame([]), method="snorkel")
    with pytest.raises(ValueError, match="missing column"):
        aggregate_labels(pd.DataFrame({"item_id": ["i1"]}), method="majority")


def study_frame(annotations):
    """Item attributes for the simulated items: two values of one attribute, four base prompts."""
    codes = annotations["item_id"].str[1:].astype(int)
    return annotations.assign(
        attribute="culture",
        attribute_value=np.where(codes % 2 == 0, "Kenyan", "US"),
        base_prompt_id="bp" + (codes % 4).astype(str),
        domain="violence",
        generator="g",
        mode="t2i",
        annotator_group="",
    )


def test_sensitivity_rates_use_the_pooled_rate_function_on_item_labels(simulated):
    annotations = study_frame(simulated[0])
    aggregation, sensitivity = label_model_sections(
        annotations, methods=("dawid-skene",), confidence=0.95, n_resamples=50, seed=0
    )
    expected_frame = aggregated_frame(
        annotations, aggregate_labels(annotations, method="dawid-skene")
    )
    assert len(expected_frame) == 400
    expected = source_rates(expected_frame, confidence=0.95, n_resamples=50, seed=0)
    block = sensitivity["dawid-skene"]
    assert block["n_items"] == 400 and block["n_items_without_label"] == 0
    assert json.dumps(block["rates"], default=str) == json.dumps(expected, default=str)
    refusal = block["rates"]["refusal"]["culture"]["values"]
    assert refusal["Kenyan"]["n"] == 200  # one row per item, not per answer
    assert set(aggregation["dawid-skene"]["annotators"]) == {
        "careful1",
        "careful2",
        "biased",
        "random1",
        "random2",
    }


def test_study_export_gains_aggregation_and_sensitivity(simulated):
    annotations = study_frame(simulated[0]).head(300)
    document = study_metrics(
        annotations, None, n_resamples=20, seed=0, label_models=("majority", "dawid-skene")
    )
    json.dumps(document, allow_nan=False)
    annotator = document["aggregation"]["dawid-skene"]["annotators"]["careful1"]
    assert set(annotator) >= {"accuracy_estimate", "n"} and annotator["n"] == 60
    assert 0.0 <= annotator["accuracy_estimate"] <= 1.0
    assert document["sensitivity"]["majority"]["rates"]["refusal"]["culture"]["delta"] is not None
    assert "delta" in document["rates"]["human"]["refusal"]["culture"]
    plain = study_metrics(annotations, None, n_resamples=20, seed=0)
    assert plain["aggregation"] == {} and plain["sensitivity"] == {}
