"""The validate-the-judge design (annotations.policies.validate_judge_design) and its batch."""

from collections import Counter
from io import StringIO

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annotations import policies
from annotations.imports import importers
from annotations.models import AutomatedJudgment
from annotations.policies import PolicyError, SampleItem


def _population(n=120, strata=("a", "b", "c", "d"), seed=0):
    rng = np.random.default_rng(seed)
    return [SampleItem(i, strata[i % len(strata)], float(rng.beta(0.5, 2.0))) for i in range(n)]


def _probabilities(design, items):
    return np.array([design.inclusion_probability[i.item] for i in items])


@settings(max_examples=60, deadline=None)
@given(
    uncertainty=st.lists(st.floats(0.0, 5.0), min_size=4, max_size=60),
    n_strata=st.integers(1, 5),
    data=st.data(),
)
def test_probabilities_are_valid_and_every_stratum_gets_its_minimum(uncertainty, n_strata, data):
    items = [SampleItem(i, f"s{i % n_strata}", u) for i, u in enumerate(uncertainty)]
    budget = data.draw(st.integers(1, len(items)))
    minimum = data.draw(st.integers(0, budget // n_strata))
    design = policies.validate_judge_design(
        items, budget, np.random.default_rng(0), min_per_stratum=minimum
    )
    pi = _probabilities(design, items)
    assert pi.sum() == pytest.approx(budget)
    assert np.all(pi > 0) and np.all(pi <= 1.0 + 1e-12)
    assert len(design.chosen) == len(set(design.chosen)) == budget
    size = Counter(i.stratum for i in items)
    drawn = Counter(i.stratum for i in items if i.item in set(design.chosen))
    for stratum, count in size.items():
        assert drawn[stratum] == design.per_stratum[stratum] >= min(minimum, count)
        expected = sum(p for i, p in zip(items, pi, strict=True) if i.stratum == stratum)
        assert expected == pytest.approx(design.expected_per_stratum[stratum])
        assert abs(drawn[stratum] - expected) < 1


def test_higher_uncertainty_gets_a_higher_probability_within_a_stratum():
    items = _population()
    design = policies.validate_judge_design(items, 30, np.random.default_rng(1))
    for stratum in "abcd":
        rows = sorted(
            (i.uncertainty, design.inclusion_probability[i.item])
            for i in items
            if i.stratum == stratum
        )
        pis = [p for _, p in rows]
        assert pis == sorted(pis)  # non-decreasing in uncertainty
        assert pis[-1] > pis[0]


def test_a_stratum_the_judges_are_unsure_of_gets_more_than_its_minimum():
    items = [
        SampleItem(i, "sure" if i < 50 else "unsure", 0.01 if i < 50 else 0.9) for i in range(100)
    ]
    design = policies.validate_judge_design(items, 20, np.random.default_rng(0), min_per_stratum=4)
    assert design.per_stratum == {"sure": 4, "unsure": 16}
    assert design.expected_per_stratum == {"sure": 4.0, "unsure": pytest.approx(16.0)}


def test_without_uncertainty_the_design_is_uniform():
    items = [SampleItem(i, "one", 0.0) for i in range(40)]
    design = policies.validate_judge_design(items, 10, np.random.default_rng(0))
    assert list(design.inclusion_probability.values()) == pytest.approx([0.25] * 40)


def test_horvitz_thompson_mean_is_unbiased():
    """Monte Carlo: Σ y/π / N over the drawn items averages to the population mean."""
    items = _population(n=80)
    rng = np.random.default_rng(7)
    # An outcome correlated with uncertainty, as a judge's errors are.
    y = {i.item: float(rng.random() < 0.2 + 0.6 * min(i.uncertainty, 1.0)) for i in items}
    truth = np.mean(list(y.values()))
    draws = []
    for _ in range(4000):
        design = policies.validate_judge_design(items, 16, rng, min_per_stratum=2)
        pi = design.inclusion_probability
        draws.append(sum(y[k] / pi[k] for k in design.chosen) / len(items))
    draws = np.array(draws)
    standard_error = draws.std(ddof=1) / np.sqrt(len(draws))
    assert abs(draws.mean() - truth) < 4 * standard_error


def test_each_item_is_drawn_with_its_probability():
    items = _population(n=40)
    rng = np.random.default_rng(3)
    counts = Counter()
    repeats = 6000
    for _ in range(repeats):
        counts.update(policies.validate_judge_design(items, 10, rng).chosen)
    pi = policies.validate_judge_design(items, 10, rng).inclusion_probability
    for item in items:
        p = pi[item.item]
        assert counts[item.item] / repeats == pytest.approx(
            p, abs=4 * np.sqrt(p * (1 - p) / repeats) + 1e-9
        )


def test_reproducible_from_the_seed():
    items = _population()

    def run(seed):
        return policies.validate_judge_design(items, 25, np.random.default_rng(seed)).chosen

    assert run(5) == run(5)
    assert run(5) != run(6)


@pytest.mark.parametrize(
    ("budget", "minimum", "message"),
    [
        (0, None, "at least 1"),
        (500, None, "larger than"),
        (10, 5, "minimum of 5"),
        (10, -1, "0 or more"),
    ],
)
def test_impossible_requests_are_refused(budget, minimum, message):
    with pytest.raises(PolicyError, match=message):
        policies.validate_judge_design(
            _population(), budget, np.random.default_rng(0), min_per_stratum=minimum
        )


def test_judge_uncertainty_from_confidence_and_disagreement():
    assert policies.judge_uncertainty([]) == 1.0
    assert policies.judge_uncertainty([("erased", 0.9)]) == pytest.approx(0.1)
    assert policies.judge_uncertainty([("erased", None)]) == 0.0
    # Two judges that disagree: 1 − 1/2, above their stated doubt.
    assert policies.judge_uncertainty([("erased", 0.95), ("retained", 0.9)]) == pytest.approx(0.5)


def test_uniform_design_records_n_over_N():
    design = policies.uniform_design(list(range(50)), 10, np.random.default_rng(0))
    assert len(design.chosen) == 10
    assert set(design.inclusion_probability.values()) == {0.2}
    everything = policies.uniform_design(list(range(5)), None, np.random.default_rng(0))
    assert everything.chosen == list(range(5))
    assert set(everything.inclusion_probability.values()) == {1.0}


# --- the batch: service, command, export ------------------------------------------------------


@pytest.fixture
def judged_study(study, make_manifest):
    importers.items_import(study=study, manifest=make_manifest(n=30))
    # Items 0-9 the judge is unsure of, the rest it is sure of.
    for judgment in AutomatedJudgment.objects.filter(item__study=study):
        number = int(judgment.item.item_id.split("-")[1])
        judgment.confidence = 0.4 if number < 10 else 0.99
        judgment.save(update_fields=["confidence"])
    return study


@pytest.mark.django_db
def test_create_batch_validate_judge_end_to_end(judged_study, annotators):
    from django.core.management import call_command

    from annotations import selectors
    from annotations.models import Assignment, Batch

    out = StringIO()
    call_command(
        "create_batch",
        "--study",
        judged_study.slug,
        "--name",
        "vj",
        "--annotators",
        "ann0,ann1",
        "--policy",
        "validate-judge",
        "--budget",
        "9",
        "--k",
        "2",
        "--seed",
        "11",
        stdout=out,
    )
    assert (
        "seed 11" in out.getvalue()
        and "items drawn per attribute value: culture=" in out.getvalue()
    )
    batch = Batch.objects.get(name="vj")
    assert batch.policy == Batch.Policy.VALIDATE_JUDGE and batch.seed == 11
    rows = Assignment.objects.filter(batch=batch)
    items = set(rows.values_list("item_id", flat=True))
    assert len(items) == 9 and rows.count() == 18  # 9 items × k = 2
    probability = dict(rows.values_list("item__item_id", "inclusion_probability"))
    assert all(0 < p <= 1 for p in probability.values())
    unsure = [p for item, p in probability.items() if int(item.split("-")[1]) < 10]
    sure = [p for item, p in probability.items() if int(item.split("-")[1]) >= 10]
    assert unsure and (not sure or min(unsure) > max(sure))
    # Every attribute value (Korean, Nigerian, US) gets its minimum: 9 // (2 × 3) = 1.
    assert set(batch.params["per_value"]) == {"culture=Korean", "culture=Nigerian", "culture=US"}
    assert min(batch.params["per_value"].values()) >= 1
    # The same seed draws the same items.
    call_command(
        "create_batch",
        "--study",
        judged_study.slug,
        "--name",
        "vj2",
        "--annotators",
        "ann2,ann3",
        "--policy",
        "validate-judge",
        "--budget",
        "9",
        "--k",
        "2",
        "--seed",
        "11",
    )
    again = set(Assignment.objects.filter(batch__name="vj2").values_list("item_id", flat=True))
    assert again == items
    # The export rows carry the probability (annotation_rows' key, read by the PPI estimates).
    from annotations import services

    assignment = rows.first()
    services.annotation_submit(assignment=assignment, hard_refusal=False, cue_label="retained")
    (row,) = selectors.annotation_rows(study=judged_study)
    assert row["inclusion_probability"] == pytest.approx(assignment.inclusion_probability)


@pytest.mark.django_db
def test_uniform_batches_record_their_probability(judged_study, annotators):
    from annotations import services
    from annotations.models import Assignment

    everything = services.batch_create(
        request=services.batch_request_build(
            study=judged_study,
            name="all",
            policy="k_overlap",
            annotators=annotators[:2],
            overlap_k=1,
            seed=1,
        )
    )
    assert set(everything.assignments.values_list("inclusion_probability", flat=True)) == {1.0}
    sample = services.batch_create(
        request=services.batch_request_build(
            study=judged_study,
            name="some",
            policy="k_overlap",
            annotators=annotators[2:],
            overlap_k=1,
            seed=1,
            budget=6,
        )
    )
    assert sample.assignments.values("item").distinct().count() == 6
    assert set(sample.assignments.values_list("inclusion_probability", flat=True)) == {0.2}
    assert Assignment.objects.filter(inclusion_probability__isnull=True).count() == 0


@pytest.mark.django_db
def test_command_refuses_validate_judge_without_a_budget_and_changes_nothing(
    judged_study, annotators
):
    from django.core.management import CommandError, call_command

    from annotations.models import Batch

    with pytest.raises(CommandError, match="needs a budget"):
        call_command(
            "create_batch",
            "--study",
            judged_study.slug,
            "--name",
            "x",
            "--annotators",
            "ann0",
            "--policy",
            "validate-judge",
            "--k",
            "1",
        )
    with pytest.raises(CommandError, match="larger than"):
        call_command(
            "create_batch",
            "--study",
            judged_study.slug,
            "--name",
            "x",
            "--annotators",
            "ann0",
            "--policy",
            "validate-judge",
            "--k",
            "1",
            "--budget",
            "99",
        )
    assert not Batch.objects.exists()


@pytest.mark.django_db
def test_staff_form_creates_a_validate_judge_batch(
    judged_study, annotators, staff_client, django_capture_on_commit_callbacks
):
    from django.urls import reverse

    from annotations.models import Batch

    url = reverse("staff:batch_create", args=[judged_study.slug])
    data = {
        "name": "vj",
        "policy": "validate_judge",
        "overlap_k": 2,
        "seed": 3,
        "annotators": [a.pk for a in annotators[:2]],
        "gold_per_annotator": 0,
    }
    page = staff_client.get(url).content.decode()
    assert 'value="validate_judge"' in page and 'name="budget"' in page
    response = staff_client.post(url, data)
    assert response.status_code == 400 and "needs a budget" in response.content.decode()
    assert not Batch.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        staff_client.post(url, {**data, "budget": 12, "min_per_value": 3})
    batch = Batch.objects.get(name="vj")
    assert batch.assignments.values("item").distinct().count() == 12
    assert min(batch.params["per_value"].values()) >= 3


@pytest.mark.django_db
def test_batch_page_states_the_sample(judged_study, annotators, staff_client):
    from django.urls import reverse

    from annotations import services

    batch = services.batch_create(
        request=services.batch_request_build(
            study=judged_study,
            name="vj",
            policy="validate_judge",
            annotators=annotators[:2],
            overlap_k=1,
            seed=2,
            budget=9,
        )
    )
    text = staff_client.get(reverse("staff:batch_detail", args=[batch.pk])).content.decode()
    assert "Sample: 9 items, drawn more often where the judges are unsure" in text
    assert "culture=Nigerian: " in text


@pytest.mark.django_db
def test_added_and_reassigned_labels_keep_the_batch_probability(judged_study, annotators):
    from annotations import services
    from annotations.models import Assignment

    batch = services.batch_create(
        request=services.batch_request_build(
            study=judged_study,
            name="vj",
            policy="validate_judge",
            annotators=annotators[:1],
            overlap_k=1,
            seed=4,
            budget=8,
        )
    )
    drawn = dict(batch.assignments.values_list("item_id", "inclusion_probability"))
    services.batch_add_annotators(batch=batch, annotators=[annotators[1]])
    services.assignments_reassign(
        batch=batch, from_annotator=annotators[0], to_annotators=[annotators[2]]
    )
    for row in Assignment.objects.filter(batch=batch):
        assert row.inclusion_probability == pytest.approx(drawn[row.item_id])
    assert Assignment.objects.filter(batch=batch, annotator=annotators[2]).count() == 8
