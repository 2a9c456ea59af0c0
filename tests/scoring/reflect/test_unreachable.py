"""Issue 21 §1.5: a REFLECT run against an endpoint that is down says so in one line (a
pre-flight request), stops after a run of transport errors, and Ctrl-C stops it at once with
what was stored kept."""

import os
import signal
import socket
import threading
import time

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from scoring.reflect import selectors, services
from scoring.reflect.backends import build_backend, inline_choice
from scoring.reflect.execution import (
    MAX_CONSECUTIVE_TRANSPORT_ERRORS,
    execute_requests,
    run_decoding,
)
from scoring.reflect.models import ReflectAnswer
from scoring.reflect.protocol import task_prompts
from tests.scoring.reflect.fakes import prefers_rank
from tests.support.openai_server import Reply

pytestmark = pytest.mark.django_db


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # closed again on exit: connections are refused


def test_an_unreachable_endpoint_fails_the_pre_flight_request_in_one_line(face_set, capsys):
    endpoint = f"http://127.0.0.1:{_closed_port()}/v1"
    started = time.monotonic()
    with pytest.raises(CommandError) as caught:
        call_command("run_reflect", "--set", "Faces A", "--endpoint", endpoint, "--api-model",
                     "m", "--tasks", "2afc", "--verbosity", "0")  # fmt: skip
    message = str(caught.value)
    # Issue 36 §5: the address and the reason, no requests/urllib3 object reprs, at once.
    assert message.startswith(f"cannot reach {endpoint}: connection refused ")
    assert "HTTPConnection" not in message and "object at 0x" not in message
    assert "\n" not in message
    assert ReflectAnswer.objects.count() == 0
    assert time.monotonic() - started < 5  # no retries with back-off for an address never reached


def test_a_refused_connection_is_retried_once_the_endpoint_has_answered(face_set):
    from scoring.judges.backends.openai_compat import OpenAICompatBackend, OpenAICompatConfig

    endpoint = f"http://127.0.0.1:{_closed_port()}/v1"
    slept = []
    backend = OpenAICompatBackend(
        OpenAICompatConfig(endpoint=endpoint, model="m", max_retries=2), sleep=slept.append
    )
    assert backend._post_with_retries({})[1:] == (1, f"cannot reach {endpoint}: connection refused")
    backend._reached = True  # it answered before: a server restarting mid-run gets its retries
    reply, attempts, error = backend._post_with_retries({})
    assert attempts == 3 and len(slept) == 2
    assert error == f"gave up after retries: cannot reach {endpoint}: connection refused"


def test_a_run_of_transport_errors_stops_the_run_and_keeps_what_was_stored(face_set, serve):
    answer = prefers_rank(list(range(10)))
    calls = {"n": 0}

    def rule(request):
        calls["n"] += 1
        return answer(request) if calls["n"] == 1 else Reply(status=404, body={"error": "gone"})

    server = serve(rule)
    with pytest.raises(CommandError, match=r"stopped after \d+ transport errors in a row"):
        call_command("run_reflect", "--set", "Faces A", "--endpoint", server.base_url,
                     "--api-model", "m", "--tasks", "2afc", "--concurrency", "4",
                     "--chunk-size", "8", "--verbosity", "0")  # fmt: skip
    stored = ReflectAnswer.objects.count()
    assert ReflectAnswer.objects.filter(status="valid").count() == 1  # the pre-flight answer
    assert MAX_CONSECUTIVE_TRANSPORT_ERRORS < stored < 540  # not all 540 asked
    assert len(server.requests) < 60


class Blocks:
    """Answers the first chunk at once, then hangs (an endpoint that stopped answering)."""

    def __init__(self, backend):
        self.backend, self.name, self.version = backend, backend.name, backend.version
        self.calls, self.release = 0, threading.Event()

    def generate(self, requests):
        self.calls += 1
        if self.calls > 2:  # the pre-flight request, then one chunk
            self.release.wait(60)
        return self.backend.generate(requests)


def test_ctrl_c_stops_at_once_and_keeps_the_stored_chunks(face_set, serve):
    server = serve(prefers_rank(list(range(10))))
    choice = inline_choice(endpoint=server.base_url, api_model="m", concurrency=2)
    run = services.run_get_or_create(face_set=face_set, choice=choice)
    paths = {image.pk: image.file.path for image in selectors.accepted_images(face_set=face_set)}
    planned = selectors.run_planned_requests(run=run, task="mcq", paths=paths)
    blocking = Blocks(build_backend(choice))
    # A command-line process has Python's own SIGINT handler; in the full suite an earlier test
    # (not found: it passes alone and with its neighbours) left another, so the Ctrl-C was not
    # raised in 2 of 2 full runs. The test is about what a real Ctrl-C does, so it sets it.
    previous_handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))  # a real Ctrl-C
    timer.start()
    started = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            execute_requests(blocking, planned, prompts=task_prompts(face_set.protocol),
                             decoding=run_decoding({}), chunk_size=5,
                             store=lambda rs: services.answers_store(run=run, results=rs,
                                                                     model_version="m"))  # fmt: skip
        assert time.monotonic() - started < 5  # not the minute the hung chunk would take
    finally:
        timer.cancel()
        blocking.release.set()
        signal.signal(signal.SIGINT, previous_handler)
    assert ReflectAnswer.objects.count() == 1 + 5  # the pre-flight answer and one chunk


def test_the_command_says_stopped_and_what_it_kept_on_ctrl_c(face_set, serve, monkeypatch, capsys):
    import scoring.reflect.management.commands.run_reflect as command

    def interrupted(**kwargs):
        raise KeyboardInterrupt

    def exit_now(code):
        raise SystemExit(code)

    monkeypatch.setattr(command.services, "run_execute", interrupted)
    monkeypatch.setattr(command, "exit_now", exit_now)
    server = serve(prefers_rank(list(range(10))))
    with pytest.raises(SystemExit) as caught:
        call_command("run_reflect", "--set", "Faces A", "--endpoint", server.base_url,
                     "--api-model", "m", "--tasks", "2afc", "--verbosity", "0")  # fmt: skip
    assert caught.value.code == 130
    assert "Stopped: answers stored so far {'2afc': 0}" in capsys.readouterr().out
