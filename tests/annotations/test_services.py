"""The batch services called directly (issue 34 §1): one BatchRequest, checked once with every
problem named at once, planned and created whole, and made by an idempotent background job."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from annotations import services
from annotations.batches.request import (
    NUMBER_OPTIONS,
    BatchRequest,
    BatchRequestInvalid,
    StudyFacts,
    request_problems,
)
from annotations.common import jobs
from annotations.models import BackgroundJob, Batch
from annotations.policies import PolicyError
from annotations.tasks import batch_create_task


def build(study, annotators, **options):
    return services.batch_request_build(
        study=study, annotators=annotators, **({"name": "b", "policy": "k_overlap"} | options)
    )


# --- the request, without a database ----------------------------------------------------------


def test_a_request_survives_json_whole():
    request = BatchRequest(
        study_id=3,
        name=" round 1 ",
        policy="validate_judge",
        annotator_ids=[9, 4, 4],
        overlap_k=2,
        seed=2**62,
        gold_rate=0.05,
        budget=30,
        min_per_value=2,
        qualification_items=3,
        qualification_pass_mark=0.8,
        qualification_attempts=2,
        item_ids=[5, 1],
        subset="judges disagree",
        manual_pairs=[[1, 4]],
        created_by_id=7,
    )
    assert request.name == "round 1" and request.annotator_ids == (4, 9)
    assert request.item_ids == (1, 5) and request.manual_pairs == ((1, 4),)
    again = BatchRequest.from_json(request.to_json())
    assert again == request and again.to_json() == request.to_json()
    assert again.qualification.items == 3 and again.qualification.pass_mark == 0.8


def test_every_number_option_is_a_request_field_with_a_default():
    defaults = BatchRequest.__dataclass_fields__
    assert {o.name for o in NUMBER_OPTIONS} <= set(defaults)
    # An absent flag or an empty field (None) takes the default.
    request = BatchRequest.from_options(
        study_id=1, name="x", policy="k_overlap", annotator_ids=[1], gold_rate=None, seed=None
    )
    assert request.gold_rate == 0.0 and request.seed is None


def test_the_checks_name_every_problem_at_once():
    request = BatchRequest(
        study_id=1,
        name="   ",
        policy="validate_judge",
        annotator_ids=(1, 2),
        overlap_k=0,
        gold_rate=0.9,
        gold_per_annotator=-1,
        qualification_pass_mark=0.8,
        item_ids=(),
        subset="generator gen-z",
    )
    problems = request_problems(request, StudyFacts(study_overlap_k=2, annotator_groups={1: ""}))
    assert problems == [
        "give the batch a name",
        "overlap k must be at least 1 (got 0)",
        "gold items per annotator must be at least 0 (got -1)",
        "gold rate must be at most 0.5 (got 0.9)",
        "annotators that no longer exist: ids 2",
        "validate-judge needs a budget: how many items humans label",
        "no item matches the filter (generator gen-z)",
        # 0 items with a pass mark: an error, as create_batch always said (not a dropped round)
        "qualification: at least 1 gold item per attempt (got 0)",
    ]


def test_the_overlap_and_expertise_rules_are_the_policies_own():
    facts = StudyFacts(
        study_overlap_k=3,
        annotator_groups={1: "Korean", 2: "Nigerian", 3: "Nigerian"},
        items_per_value={"Korean": 4, "Nigerian": 2},
    )
    k_overlap = BatchRequest(study_id=1, name="a", policy="k_overlap", annotator_ids=(1, 2))
    # k None: the study's k, 3, from two annotators
    assert request_problems(k_overlap, facts) == [
        "overlap k=3 needs at least 3 annotators; 2 selected"
    ]
    expertise = BatchRequest(
        study_id=1, name="a", policy="expertise", annotator_ids=(1, 2, 3), overlap_k=2
    )
    assert request_problems(expertise, facts) == [
        "group 'Korean' has 1 annotator(s) selected, but its 4 item(s) need k=2 annotators of "
        "that group"
    ]
    manual = BatchRequest(study_id=1, name="a", policy="manual", annotator_ids=(1,), budget=5)
    assert request_problems(manual, facts) == [
        "manual pairs take no budget: list the pairs instead"
    ]


# --- the services -----------------------------------------------------------------------------


def test_build_refuses_with_every_problem_and_writes_nothing(imported_study, annotators):
    services.batch_create(request=build(imported_study, annotators[:2], name="taken"))
    with pytest.raises(BatchRequestInvalid) as caught:
        build(
            imported_study,
            annotators[:1],
            name="taken",
            overlap_k=2,
            qualification_items=2,
            manual_pairs="item-0,ann0\nitem-99,nobody",
        )
    assert caught.value.problems == [
        "manual pairs: unknown item 'item-99'",
        "manual pairs: unknown annotator 'nobody'",
        "the study already has a batch named 'taken': choose another name",
        "overlap k=2 needs at least 2 annotators; 1 selected",
        "qualification: give a pass mark in (0, 1], e.g. 0.8",
    ]
    assert isinstance(caught.value, PolicyError)  # the pages and the command catch one kind
    assert Batch.objects.count() == 1


def test_a_duplicate_name_is_refused_once_checked_and_by_the_database(
    imported_study, annotators, monkeypatch
):
    services.batch_create(request=build(imported_study, annotators[:2], name="round 1"))
    with pytest.raises(BatchRequestInvalid, match="already has a batch named 'round 1'"):
        build(imported_study, annotators[2:], name=" round 1 ")
    # A request checked before the other batch was made meets the unique constraint instead:
    # still one line, and no second batch.
    late = BatchRequest(
        study_id=imported_study.pk,
        name="round 1",
        policy="k_overlap",
        annotator_ids=[a.pk for a in annotators[2:]],
        seed=1,
    )
    with monkeypatch.context() as patched:
        patched.setattr(services, "batch_request_problems", lambda **kwargs: [])
        with pytest.raises(BatchRequestInvalid, match="already has a batch named 'round 1'"):
            services.batch_create(request=late)
    assert Batch.objects.filter(name="round 1").count() == 1
    with pytest.raises(IntegrityError), transaction.atomic():
        Batch.objects.create(study=imported_study, name="round 1", policy="k_overlap")
    # Imported labels are records named after their file: the same file name may come twice.
    for _ in range(2):
        Batch.objects.create(study=imported_study, name="imported: a.csv", policy="imported")


def test_plan_is_what_create_writes(imported_study, annotators):
    request = build(imported_study, annotators[:3], seed=5, gold_per_annotator=0)
    plan = services.batch_plan(request=request)
    assert plan.overlap_k == imported_study.overlap_k  # k None: the study's
    batch = services.batch_create(request=request)
    assert set(batch.assignments.values_list("item_id", "annotator_id")) == set(plan.pairs)
    assert (batch.seed, batch.overlap_k, batch.name) == (5, 2, "b")
    assert batch.params["annotators"] == [a.pk for a in annotators[:3]]
    assert batch.job is None


def test_the_annotators_order_does_not_change_the_batch(imported_study, annotators):
    """The page listed annotators by name and the job by id, so the preview could differ from
    the batch the job made: the request keeps them in one order."""
    forward = services.batch_plan(request=build(imported_study, annotators[:3], seed=2))
    backward = services.batch_plan(request=build(imported_study, annotators[2::-1], seed=2))
    assert forward.pairs == backward.pairs and forward.positions == backward.positions


# --- the background job -----------------------------------------------------------------------


def _job(study):
    return jobs.job_create(kind="batch_create", study=study, params={"name": "b"})


def test_the_task_run_twice_makes_one_batch_and_finishes_its_job_once(imported_study, annotators):
    request = build(imported_study, annotators[:2], seed=3)
    job = _job(imported_study)
    batch_create_task(job.pk, request.to_json())
    job.refresh_from_db()
    batch = Batch.objects.get()
    assert job.status == "succeeded" and job.params["result"] == {"batch_id": batch.pk}
    assert batch.job_id == job.pk
    finished = (job.finished_at, job.message)
    batch_create_task(job.pk, request.to_json())  # acks_late: the message came again
    job.refresh_from_db()
    assert Batch.objects.count() == 1
    assert (job.finished_at, job.message) == finished and job.status == "succeeded"


def test_a_redelivery_after_the_commit_finishes_the_job_with_the_batch_it_made(
    imported_study, annotators
):
    request = build(imported_study, annotators[:2], seed=3)
    job = _job(imported_study)
    # The worker died after the batch was committed, before the job was marked finished.
    made = services.batch_create(request=request, job_id=job.pk)
    assert BackgroundJob.objects.get(pk=job.pk).status == "queued"
    batch_create_task(job.pk, request.to_json())
    job.refresh_from_db()
    assert Batch.objects.count() == 1 and job.status == "succeeded"
    assert job.params["result"] == {"batch_id": made.pk} and job.errors == []
    assert f"Created batch {made.name} with {made.assignments.count()}" in job.message


def test_the_task_reports_every_problem_of_a_request_gone_stale(imported_study, annotators):
    request = build(imported_study, annotators[:2], name="late")
    services.batch_create(request=build(imported_study, annotators[2:], name="late", overlap_k=1))
    job = _job(imported_study)
    batch_create_task(job.pk, request.to_json())
    job.refresh_from_db()
    assert job.status == "failed" and job.errors == [
        "the study already has a batch named 'late': choose another name"
    ]
    assert Batch.objects.filter(name="late").count() == 1
