"""A run that dies midway resumes by asking only the missing requests; transport errors are
stored with their message and asked again; a second worker never duplicates an answer."""

import pytest
from django.core.management.base import CommandError

from scoring.reflect import selectors, services
from scoring.reflect.backends import inline_choice
from scoring.reflect.models import ReflectAnswer
from tests.scoring.reflect.conftest import run_reflect
from tests.scoring.reflect.fakes import prefers_rank
from tests.support.openai_server import Reply

pytestmark = pytest.mark.django_db


class DiesAfter:
    """Wraps a backend; raises (as a killed worker would stop) on call number ``calls + 1``."""

    def __init__(self, backend, calls):
        self.backend, self.calls = backend, calls
        self.name, self.version = backend.name, backend.version

    def generate(self, requests):
        if self.calls == 0:
            raise KeyboardInterrupt("worker killed")
        self.calls -= 1
        return self.backend.generate(requests)


def test_crash_midway_then_resume_fills_only_the_gaps(face_set, serve):
    from scoring.reflect.backends import build_backend

    server = serve(prefers_rank(list(range(10))))
    choice = inline_choice(endpoint=server.base_url, api_model="fake-vlm", concurrency=4)
    run = services.run_get_or_create(face_set=face_set, choice=choice)
    dying = DiesAfter(build_backend(choice), calls=3)
    with pytest.raises(KeyboardInterrupt):
        services.run_execute(run=run, choice=choice, task="2afc", backend=dying, chunk_size=50)
    # three calls: the pre-flight request alone, then two chunks of 50
    assert ReflectAnswer.objects.count() == 101 == len(server.requests)
    stored_before = set(ReflectAnswer.objects.values_list("request_key", flat=True))

    run_reflect(server, tasks="2afc")
    planned = {p.request_key for p in selectors.run_planned_requests(run=run, task="2afc")}
    assert len(server.requests) == len(planned) == 540
    assert set(ReflectAnswer.objects.values_list("request_key", flat=True)) == planned
    assert ReflectAnswer.objects.filter(request_key__in=stored_before).count() == 101


def test_transport_errors_are_kept_then_retried_and_the_command_fails_until_complete(
    face_set, serve
):
    answer = prefers_rank(list(range(10)))
    failing = {"on": True}

    def rule(request):
        if failing["on"] and "annual salary" in str(request["messages"]):
            return Reply(status=400, body={"error": {"message": "bad request"}})
        return answer(request)

    server = serve(rule)
    with pytest.raises(CommandError, match="not every answer is stored"):
        run_reflect(server, tasks="mcq")
    errors = ReflectAnswer.objects.filter(status="error")
    assert errors.count() == 20 and "HTTP 400" in errors.first().error
    asked = len(server.requests)
    failing["on"] = False
    run_reflect(server, tasks="mcq")
    assert len(server.requests) == asked + 20
    assert not ReflectAnswer.objects.filter(status="error").exists()
    assert ReflectAnswer.objects.count() == 40


def test_storing_the_same_chunk_twice_keeps_one_answer_per_key(face_set, serve):
    from scoring.reflect.backends import build_backend
    from scoring.reflect.execution import execute_requests, run_decoding
    from scoring.reflect.protocol import task_prompts

    server = serve(prefers_rank(list(range(10))))
    choice = inline_choice(endpoint=server.base_url, api_model="m", concurrency=2)
    run = services.run_get_or_create(face_set=face_set, choice=choice)
    paths = {image.pk: image.file.path for image in selectors.accepted_images(face_set=face_set)}
    planned = selectors.run_planned_requests(run=run, task="mcq", paths=paths)[:10]
    prompts = task_prompts(face_set.protocol)
    for _ in range(2):  # two workers racing on the same requests
        execute_requests(
            build_backend(choice),
            planned,
            prompts=prompts,
            decoding=run_decoding({}),
            store=lambda rs: services.answers_store(run=run, results=rs, model_version="m"),
        )
    assert ReflectAnswer.objects.count() == 10
    assert set(ReflectAnswer.objects.values_list("status", flat=True)) == {"valid"}
