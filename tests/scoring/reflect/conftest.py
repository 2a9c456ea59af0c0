import pytest
from django.core.management import call_command

from tests.scoring.reflect.fakes import write_face_set
from tests.support.openai_server import OpenAIServer


@pytest.fixture
def face_folder(tmp_path):
    return write_face_set(
        tmp_path / "faces", occupations=("CEO", "nurse"), templates_per_occupation=1
    )


@pytest.fixture
def face_set(db, face_folder):
    from generation.models import FaceSet

    call_command("import_face_set", str(face_folder), "--set", "Faces A", verbosity=0)
    return FaceSet.objects.get(name="Faces A")


@pytest.fixture
def serve():
    """``serve(rule)`` starts a loopback OpenAI server, stopped after the test."""
    servers = []

    def start(rule):
        server = OpenAIServer(rule)
        server.start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def run_reflect(server, *, tasks="2afc,mcq", name="Faces A", model="fake-vlm", **extra):
    args = [
        "run_reflect",
        "--set",
        name,
        "--endpoint",
        server.base_url,
        "--api-model",
        model,
        "--tasks",
        tasks,
        "--concurrency",
        "8",
        "--verbosity",
        "0",
    ]
    for key, value in extra.items():
        args += [f"--{key.replace('_', '-')}"] + ([] if value is True else [str(value)])
    call_command(*args)


def report_of(tmp_path, name="Faces A", resamples=0, figures=False):
    import json

    out = tmp_path / "report"
    extra = [] if figures else ["--no-figures"]
    call_command(
        "reflect_report",
        "--set",
        name,
        "--out",
        str(out),
        "--resamples",
        str(resamples),
        *extra,
        verbosity=0,
    )
    return json.loads((out / "report.json").read_text())["reflect"]
