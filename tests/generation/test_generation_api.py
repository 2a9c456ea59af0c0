"""Stage II through the loopback image API: items, refusals as data, retries, reruns, caps."""

import pytest
from django.core.management import call_command

from annotations.models import BackgroundJob, Item
from generation import selectors, services, tasks
from generation.models import GenerationRequest, ProviderSlot
from generation.runs import execution
from tests.generation.conftest import PLANNED_ROWS, api_config
from tests.support.image_api_server import ImageApiServer, rate_limited, scripted, server_error

pytestmark = pytest.mark.django_db(transaction=True)
Status = GenerationRequest.Status


def test_queued_run_makes_items_and_records_refusals_as_data(api_study, api_server):
    job = tasks.generation_run(study=api_study)  # Celery is eager in tests
    job.refresh_from_db()
    assert job.status == BackgroundJob.Status.SUCCEEDED and job.done == job.total == PLANNED_ROWS
    counts = selectors.generation_status_counts(study=api_study)
    assert (counts.done, counts.refused, counts.open) == (4, 4, 0)
    image = Item.objects.get(item_id="p1:gender:female|api|s0")
    assert image.image.read()[:4] == b"\x89PNG" and len(image.image_sha256) == 64
    assert (
        image.prompt == "A woman cooking dinner in a kitchen"
        and image.attribute_value.value == "female"
    )
    assert image.base_prompt_id == "p1" and image.domain == "food" and image.generator == "api"
    assert (
        image.generation_params["seed"] == 0
        and image.generation_params["model"] == "gpt-image-test"
    )
    refused = Item.objects.get(item_id="p2:gender:male|api|s0")
    assert not refused.image and refused.provider_refusal_code == "content_policy_violation"
    assert "safety system" in refused.provider_refusal_message
    assert GenerationRequest.objects.get(item=refused).status == Status.REFUSED


def test_identical_images_share_one_stored_file(api_study):
    services.generation_run_inline(study=api_study)
    names = set(Item.objects.exclude(image="").values_list("image", flat=True))
    assert len(names) == 1  # the server answers every prompt with the same PNG
    assert selectors.duplicate_images(study=api_study)[0][1] == 4


def test_a_429_is_retried_and_the_request_succeeds(planned_study):
    with ImageApiServer(scripted([rate_limited(), rate_limited()])) as server:
        services.study_generator_attach(
            study=planned_study, name="api", config=api_config(server, max_concurrency=1)
        )
        summary = services.generation_run_inline(study=planned_study)
        assert (summary.done, summary.refused, summary.error) == (4, 4, 0)
        assert len(server.requests) == PLANNED_ROWS + 2


def test_error_results_are_retried_by_the_task_with_backoff(planned_study):
    # max_retries=1: two HTTP tries per round, two rounds. The first request fails three times.
    with ImageApiServer(scripted([server_error()] * 3)) as server:
        config = api_config(server, max_concurrency=1, max_retries=1)
        services.study_generator_attach(study=planned_study, name="api", config=config)
        tasks.generation_run(study=planned_study)
    counts = selectors.generation_status_counts(study=planned_study)
    assert (counts.done + counts.refused, counts.error) == (PLANNED_ROWS, 0)
    assert GenerationRequest.objects.order_by("pk").first().attempts == 2


def test_persistent_errors_are_recorded_and_a_rerun_fills_the_gaps(planned_study, capsys):
    def broken(route, request):
        return server_error() if "cooking" in request.get("prompt", "") else None

    with ImageApiServer(broken) as server:
        services.study_generator_attach(
            study=planned_study, name="api", config=api_config(server, max_retries=0)
        )
        call_command(
            "generate_study", study=planned_study.slug, inline=True
        )  # exits 0: all recorded
        assert "4 errors" in capsys.readouterr().out
        failed = GenerationRequest.objects.filter(status=Status.ERROR)
        assert failed.count() == 4 and "server_error" in failed.first().error
        assert Item.objects.count() == 4
        first_calls = len(server.requests)
        server.rule = None
        call_command("generate_study", study=planned_study.slug, inline=True)
        assert len(server.requests) == first_calls + 4  # only the gaps were asked for again
    assert Item.objects.count() == PLANNED_ROWS
    assert Item.objects.values("item_id").distinct().count() == PLANNED_ROWS
    assert not GenerationRequest.objects.exclude(status__in=[Status.DONE, Status.REFUSED]).exists()


def test_rerun_is_idempotent(api_study, api_server):
    tasks.generation_run(study=api_study)
    calls = len(api_server.requests)
    tasks.generation_run(study=api_study)
    services.generation_run_inline(study=api_study)
    assert len(api_server.requests) == calls
    assert Item.objects.filter(study=api_study).count() == PLANNED_ROWS


def test_a_chunk_skips_finished_and_live_claimed_rows(api_study, api_server):
    services.generation_requests_create(study=api_study)
    rows = list(GenerationRequest.objects.order_by("pk"))
    live = execution.claim_holder()  # this process: alive
    GenerationRequest.objects.filter(pk=rows[0].pk).update(
        status=Status.RUNNING, claimed_by=live, claimed_at=execution.timezone.now()
    )
    GenerationRequest.objects.filter(pk=rows[1].pk).update(
        status=Status.RUNNING,
        claimed_by=f"{execution.socket.gethostname()}:999999999:dead",
        claimed_at=execution.timezone.now(),
    )
    outcome = execution.generation_chunk_run(request_ids=[r.pk for r in rows[:3]])
    assert outcome.finished == 2  # the dead worker's claim was taken over, the live one left
    assert GenerationRequest.objects.get(pk=rows[0].pk).status == Status.RUNNING
    assert execution.requests_reopen(study=api_study) == 0  # a live claim stays


def test_provider_slots_cap_concurrency_across_holders(db):
    first = execution.provider_slots_acquire(provider="p", capacity=2, holder="host:1:a")
    assert first == [0, 1]
    assert execution.provider_slots_acquire(provider="p", capacity=2, holder="host:1:b") == []
    execution.provider_slots_release(provider="p", holder="host:1:a")
    assert execution.provider_slots_acquire(provider="p", capacity=2, holder="host:1:b") == [0, 1]
    assert ProviderSlot.objects.count() == 2


def test_busy_provider_defers_the_chunk_without_claiming(api_study):
    services.generation_requests_create(study=api_study)
    for slot in range(2):
        ProviderSlot.objects.create(
            provider="generator:api",
            slot=slot,
            holder="elsewhere:1:x",
            expires_at=execution.timezone.now() + execution.claim_lease(),
        )
    ids = list(GenerationRequest.objects.values_list("pk", flat=True))
    outcome = execution.generation_chunk_run(request_ids=ids)
    assert sorted(outcome.busy_ids) == sorted(ids) and outcome.finished == 0
    assert not GenerationRequest.objects.exclude(status=Status.PENDING).exists()


def test_generate_study_command_without_generator_fails(planned_study):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="no generator"):
        call_command("generate_study", study=planned_study.slug, inline=True)
