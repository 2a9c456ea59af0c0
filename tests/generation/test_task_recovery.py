"""Stage II tasks survive what a deployment across machines meets: a database error in the
middle of a chunk (retried with the same holder, nothing duplicated), provider slots shared
between workers, and API generators routed to their own queue."""

import pytest
from django.db import OperationalError

from annotations.common import jobs
from annotations.models import Item
from generation import services
from generation.models import GenerationRequest, ProviderSlot
from generation.runs import execution
from generation.tasks import generate_chunk_task
from tests.generation.conftest import PLANNED_ROWS

pytestmark = pytest.mark.django_db


def test_a_chunk_interrupted_by_a_database_error_is_retried_and_finished_once(
    api_study, monkeypatch
):
    record = execution.generation_result_record
    calls = {"n": 0}

    def fails_once(**kwargs):
        calls["n"] += 1
        if calls["n"] == 3:  # after two results are stored: the server went away
            raise OperationalError("server closed the connection unexpectedly")
        return record(**kwargs)

    monkeypatch.setattr(execution, "generation_result_record", fails_once)
    services.generation_requests_create(study=api_study)
    ids = list(GenerationRequest.objects.filter(study=api_study).values_list("pk", flat=True))
    job = jobs.job_create(kind=services.JOB_KIND, study=api_study)
    # Run here as a worker would (apply runs the retry at once, without its countdown).
    generate_chunk_task.apply(args=(job.pk, ids), throw=False)

    statuses = set(GenerationRequest.objects.values_list("status", flat=True))
    assert statuses == {"done", "refused"}, statuses
    items = Item.objects.filter(study=api_study)
    assert items.count() == PLANNED_ROWS == items.values("item_id").distinct().count()
    assert not ProviderSlot.objects.exists()  # the retry reused and then released its slots
    job.refresh_from_db()
    assert job.status == "succeeded" and job.done == PLANNED_ROWS


def test_a_chunk_takes_no_more_provider_slots_than_it_has_requests():
    first = execution.provider_slots_acquire(provider="p", capacity=8, holder="a", wanted=2)
    second = execution.provider_slots_acquire(provider="p", capacity=8, holder="b", wanted=10)
    again = execution.provider_slots_acquire(provider="p", capacity=8, holder="a", wanted=3)
    assert (first, second) == ([0, 1], [2, 3, 4, 5, 6, 7])
    assert again == [0, 1]  # a's own two, and no free slot is left for a third
    assert ProviderSlot.objects.count() == 8


def test_api_generators_go_to_the_api_queue_and_local_pipelines_to_gpu(api_study, settings):
    settings.ACRB_API_QUEUE = "api"
    assert execution.generation_queue({"kind": "diffusers-t2i"}) == "gpu"
    assert execution.generation_queue({"kind": "openai-images"}) == "api"
    chunks = services.queued_request_chunks(study=api_study, chunk_size=3)
    services.generation_requests_create(study=api_study)
    chunks = services.queued_request_chunks(study=api_study, chunk_size=3)
    assert [queue for queue, _ in chunks] == ["api"] * 3
    assert sorted(len(ids) for _, ids in chunks) == [2, 3, 3]
