"""Batches from a subset: the filter (annotations/staff/batch_subset.py), the workload preview
(services.batch_plan, the policy run without writing) and the new-batch page using both."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotations import selectors, services
from annotations.models import Assignment, AutomatedJudgment, BackgroundJob, Batch, Item
from annotations.staff.batch_subset import BatchSubsetForm, subset_item_ids
from tests.support.django_fixtures import client_for

pytestmark = pytest.mark.django_db


def subset(study, **data):
    form = BatchSubsetForm(study, {f"subset-{k}": v for k, v in data.items()}, prefix="subset")
    assert form.is_valid(), form.errors
    ids = subset_item_ids(study=study, form=form)
    return (
        None
        if ids is None
        else sorted(Item.objects.filter(pk__in=ids).values_list("item_id", flat=True))
    )


def test_no_filter_means_every_item(imported_study):
    assert subset(imported_study) is None


def test_filters_by_attribute_generator_and_domain(imported_study):
    assert subset(imported_study, attribute_value="culture=Korean") == ["item-0", "item-3"]
    Item.objects.filter(item_id="item-3").update(generator="gen-b", domain="work")
    assert subset(imported_study, generator="gen-b") == ["item-3"]
    assert subset(imported_study, domain="food", attribute_value="culture=Korean") == ["item-0"]


def test_an_unknown_choice_is_refused(imported_study):
    form = BatchSubsetForm(imported_study, {"subset-generator": "nope"}, prefix="subset")
    assert not form.is_valid() and "generator" in form.errors


def test_not_yet_labelled_leaves_out_items_with_an_answer(batch):
    answered = Assignment.objects.filter(batch=batch).select_related("item").first()
    services.annotation_submit(assignment=answered, hard_refusal=False, cue_label="retained")
    kept = subset(batch.study, not_labelled="on")
    assert answered.item.item_id not in kept and len(kept) == 5


def test_judges_disagree_needs_two_judges_that_differ(imported_study):
    # Every item has vlm-a; a second judge agrees on item-1, differs in cue on item-2 and in
    # refusal on item-4; a failed judgment (error) on item-3 does not count.
    def judge(item_id, refusal, cue, error=""):
        AutomatedJudgment.objects.create(
            item=Item.objects.get(item_id=item_id),
            judge="vlm-b",
            hard_refusal=refusal,
            cue_label=cue,
            error=error,
        )

    judge("item-1", False, "retained")
    judge("item-2", False, "erased")
    judge("item-4", True, "")
    judge("item-3", True, "", error="timeout")
    assert subset(imported_study, judges_disagree="on") == ["item-2", "item-4"]


def test_gold_and_excluded_items_are_never_in_a_subset(imported_study):
    Item.objects.filter(item_id="item-0").update(
        is_gold=True, gold_hard_refusal=False, gold_cue="retained"
    )
    item = Item.objects.get(item_id="item-3")
    services.item_exclude(item=item, reason="broken", user=None)
    assert subset(imported_study, attribute_value="culture=Korean") == []


def test_the_preview_is_the_batch_that_is_made(imported_study, annotators):
    options = dict(policy="k_overlap", overlap_k=2, seed=7, item_ids=None)
    request = services.batch_request_build(
        study=imported_study, name="b", annotators=annotators[:3], **options
    )
    plan = services.batch_plan(request=request)
    batch = services.batch_create(request=request)
    made = set(batch.assignments.values_list("item_id", "annotator_id"))
    assert made == set(plan.pairs)
    assert not Batch.objects.exclude(pk=batch.pk).exists()


# --- the page ---------------------------------------------------------------------------------


def form_data(annotators, **extra):
    return {
        "name": "round 2",
        "policy": "k_overlap",
        "overlap_k": 2,
        "annotators": [a.pk for a in annotators],
        "gold_per_annotator": 0,
        "gold_rate": 0,
        **extra,
    }


def test_preview_shows_each_workload_and_writes_nothing(staff_client, imported_study, annotators):
    url = reverse("staff:batch_create", args=[imported_study.slug])
    response = staff_client.post(
        url,
        form_data(annotators[:2], **{"subset-attribute_value": "culture=Korean", "preview": "1"}),
    )
    assert response.status_code == 200
    preview = response.context["preview"]
    assert preview["items"] == 2 and preview["assignments"] == 4
    assert [(r["annotator"].pk, r["items"]) for r in preview["rows"]] == [
        (annotators[0].pk, 2),
        (annotators[1].pk, 2),
    ]
    assert "attribute value culture=Korean" in response.content.decode()
    assert not Batch.objects.exists() and not BackgroundJob.objects.exists()
    # The seed the preview used is in the form, so Create makes exactly that batch.
    assert response.context["form"]["seed"].value() == str(preview["seed"])


def test_create_takes_only_the_subset(
    staff_client, imported_study, annotators, django_capture_on_commit_callbacks
):
    url = reverse("staff:batch_create", args=[imported_study.slug])
    with django_capture_on_commit_callbacks(execute=True):
        response = staff_client.post(
            url, form_data(annotators[:2], **{"subset-attribute_value": "culture=Nigerian"})
        )
    assert response.status_code == 302
    batch = Batch.objects.get()
    assert sorted(set(batch.assignments.values_list("item__item_id", flat=True))) == [
        "item-1",
        "item-4",
    ]


def test_an_empty_subset_gives_one_line_and_changes_nothing(staff_client, batch, annotators):
    for assignment in Assignment.objects.filter(batch=batch):
        services.annotation_submit(assignment=assignment, hard_refusal=False, cue_label="retained")
    url = reverse("staff:batch_create", args=[batch.study.slug])
    response = staff_client.post(
        url, form_data(annotators[:2], **{"subset-not_labelled": "on", "preview": "1"})
    )
    assert response.status_code == 400
    assert "no item matches the filter (not yet labelled)" in response.content.decode()
    assert Batch.objects.count() == 1 and not BackgroundJob.objects.exists()


def test_an_impossible_policy_is_said_at_preview(staff_client, imported_study, annotators):
    url = reverse("staff:batch_create", args=[imported_study.slug])
    response = staff_client.post(url, form_data(annotators[:2], overlap_k=3, preview="1"))
    assert response.status_code == 400 and not Batch.objects.exists()


def test_annotators_cannot_preview(imported_study, annotators):
    url = reverse("staff:batch_create", args=[imported_study.slug])
    response = client_for(annotators[0]).post(url, form_data(annotators[:2], preview="1"))
    assert response.status_code == 403 and not Batch.objects.exists()


# --- the command ------------------------------------------------------------------------------


def test_create_batch_preview_prints_workloads_and_creates_nothing(imported_study, annotators):
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command(
        "create_batch",
        "--study",
        imported_study.slug,
        "--name",
        "r",
        "--annotators",
        "ann0,ann1",
        "--attribute-value",
        "culture=Korean",
        "--preview",
        "--seed",
        "3",
        stdout=out,
    )
    text = out.getvalue()
    assert "2 items (attribute value culture=Korean), 4 assignments, seed 3" in text
    assert "ann0\t2 items\t0 gold" in text
    assert not Batch.objects.exists()
    call_command(
        "create_batch",
        "--study",
        imported_study.slug,
        "--name",
        "r",
        "--annotators",
        "ann0,ann1",
        "--attribute-value",
        "culture=Korean",
        "--seed",
        "3",
        stdout=StringIO(),
    )
    values = Batch.objects.get().assignments.values_list("item__attribute_value__value", flat=True)
    assert set(values) == {"Korean"}


def test_create_batch_with_an_unknown_filter_value_is_one_line(imported_study, annotators):
    from io import StringIO

    from django.core.management import CommandError, call_command

    with pytest.raises(
        CommandError, match=r"--generator: 'nope' is not in the study \(known: gen-a\)"
    ):
        call_command(
            "create_batch",
            "--study",
            imported_study.slug,
            "--name",
            "r",
            "--annotators",
            "installation",
            "--generator",
            "nope",
            stdout=StringIO(),
        )
    assert not Batch.objects.exists()


# --- is the batch a probability sample of its attribute values? (issue 30) -------------------


def _second_judge_disagrees_on(*item_ids):
    for item_id in item_ids:
        item = Item.objects.get(item_id=item_id)
        AutomatedJudgment.objects.create(item=item, judge="vlm-b", hard_refusal=True, cue_label="")


def test_a_judges_disagree_batch_is_not_a_probability_sample_and_records_no_pi(
    imported_study, annotators
):
    _second_judge_disagrees_on("item-1", "item-2")  # one Nigerian and one US item of two each
    form = BatchSubsetForm(imported_study, {"subset-judges_disagree": "on"}, prefix="subset")
    assert form.is_valid()
    batch = services.batch_create(
        request=services.batch_request_build(
            study=imported_study,
            name="disagreements",
            policy="k_overlap",
            annotators=annotators[:2],
            overlap_k=2,
            seed=1,
            item_ids=subset_item_ids(study=imported_study, form=form),
            subset=form.description(),
        )
    )
    assert batch.probability_sample is False
    assert batch.probability_sample_reason == "a subset: judges disagree"
    # π = 1 within the subset would say "every item of the value was drawn": not written.
    assert set(batch.assignments.values_list("inclusion_probability", flat=True)) == {None}
    # The export rows carry it, read from the batch.
    answered = batch.assignments.first()
    services.annotation_submit(assignment=answered, hard_refusal=False, cue_label="retained")
    (row,) = selectors.annotation_rows(study=imported_study)
    assert row["probability_sample"] is False and row["inclusion_probability"] is None
    assert row["probability_sample_reason"] == "a subset: judges disagree"


def test_a_subset_of_whole_attribute_values_keeps_its_inclusion_probability(
    imported_study, annotators
):
    batch = services.batch_create(
        request=services.batch_request_build(
            study=imported_study,
            name="korean",
            policy="k_overlap",
            annotators=annotators[:2],
            overlap_k=2,
            seed=1,
            item_ids=list(
                Item.objects.filter(attribute_value__value="Korean").values_list("pk", flat=True)
            ),
            subset="attribute value culture=Korean",
            budget=1,
        )
    )
    assert batch.probability_sample is True and batch.probability_sample_reason == ""
    # One of the value's two items: π = 1/2, relative to the value, as the PPI cell needs.
    assert set(batch.assignments.values_list("inclusion_probability", flat=True)) == {0.5}


def test_a_filter_that_keeps_whole_values_is_a_probability_sample(imported_study, annotators):
    # Every item has generator "" here: the filter is decided by the items it keeps, not its name.
    Item.objects.filter(study=imported_study).update(generator="gen-a")
    plan = services.batch_plan(
        request=services.batch_request_build(
            study=imported_study,
            name="preview",
            policy="k_overlap",
            annotators=annotators[:2],
            overlap_k=2,
            seed=1,
            item_ids=list(Item.objects.filter(generator="gen-a").values_list("pk", flat=True)),
            subset="generator gen-a",
        )
    )
    assert plan.probability_sample is True and set(plan.inclusion_probability.values()) == {1.0}


def test_manual_pairs_have_no_design_to_judge(imported_study, annotators):
    plan = services.batch_plan(
        request=services.batch_request_build(
            study=imported_study,
            name="preview",
            policy="manual",
            annotators=annotators[:2],
            seed=1,
            item_ids=[Item.objects.get(item_id="item-0").pk],
            manual_pairs=[(Item.objects.get(item_id="item-0").pk, annotators[0].pk)],
        )
    )
    assert plan.probability_sample is None and plan.inclusion_probability == {}


def test_the_page_warns_before_a_batch_that_is_not_a_probability_sample(
    staff_client, imported_study, annotators
):
    url = reverse("staff:batch_create", args=[imported_study.slug])
    blank = staff_client.get(url).content.decode()
    assert "not a probability sample" in blank  # said beside the filter, before any choice
    _second_judge_disagrees_on("item-1")
    response = staff_client.post(
        url, form_data(annotators[:2], **{"subset-judges_disagree": "on", "preview": "1"})
    )
    text = response.content.decode()
    assert 'id="batch-not-probability-sample"' in text
    assert "takes only part of the items of culture=Nigerian" in text
    assert "left out of the prediction-powered (PPI) estimates" in text
    whole = staff_client.post(
        url, form_data(annotators[:2], **{"subset-attribute_value": "culture=US", "preview": "1"})
    )
    assert 'id="batch-not-probability-sample"' not in whole.content.decode()


def test_create_batch_says_a_subset_batch_is_not_a_probability_sample(
    imported_study, annotators, django_capture_on_commit_callbacks, staff_client
):
    from io import StringIO

    from django.core.management import call_command

    _second_judge_disagrees_on("item-4")
    out = StringIO()
    call_command(
        "create_batch",
        "--study",
        imported_study.slug,
        "--name",
        "d",
        "--annotators",
        "ann0,ann1",
        "--judges-disagree",
        "--seed",
        "3",
        stdout=out,
    )
    assert "not a probability sample (a subset: judges disagree)" in out.getvalue()
    assert Batch.objects.get().probability_sample is False
    # The page's background job records the subset the same way.
    url = reverse("staff:batch_create", args=[imported_study.slug])
    with django_capture_on_commit_callbacks(execute=True):
        staff_client.post(
            url, form_data(annotators[2:], name="d2", **{"subset-judges_disagree": "on"})
        )
    made = Batch.objects.get(name="d2")
    assert made.probability_sample is False
    assert made.probability_sample_reason == "a subset: judges disagree"
    assert "not a probability sample" in BackgroundJob.objects.get().message
