"""`make demo` seeds a REFLECT audit (seed_reflect_demo): a synthetic face set answered by the
scripted model through run_execute, so the REFLECT pages, report and PDF are filled on the
first run, and a second run changes nothing."""

import io
import json
import shutil
import subprocess

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from generation.models import FaceSet
from scoring.reflect import demo
from scoring.reflect.models import FaceImage, ReflectAnswer, ReflectReport, ReflectRun
from scoring.report.verify import verify_folder

pytestmark = pytest.mark.django_db


def seed(*args):
    out = io.StringIO()
    call_command("seed_reflect_demo", *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def seeded():
    seed()
    return FaceSet.objects.get(name=demo.DEMO_FACE_SET)


def test_the_demo_asks_every_question_through_the_scripted_model(seeded):
    [run] = ReflectRun.objects.filter(face_set=seeded)
    assert run.model_name == "scripted-demo" and run.backend_config["type"] == "scripted"
    counts = {t: run.answers.filter(task=t).count() for t in ("2afc", "mcq", "salary")}
    # 8 templates: 45 pairs × 2 orders × 3 scenarios; 10 images × 2 questions; × 2 biographies.
    assert counts == {"2afc": 2160, "mcq": 160, "salary": 160}
    models = set(run.answers.values_list("model_version", flat=True))
    assert models == {"scripted:scripted-demo@seed7"}
    assert run.answers.filter(status="refusal").exists()  # the discard table has something
    assert seeded.description.startswith("SYNTHETIC DEMO")


@pytest.mark.django_db(transaction=True)  # the old files go when the delete commits
def test_a_second_run_keeps_the_audit_and_reset_rebuilds_it(seeded):
    answers = ReflectAnswer.objects.count()
    report = ReflectReport.objects.get(face_set=seeded)
    assert "kept as it was" in seed()
    assert FaceSet.objects.filter(name=demo.DEMO_FACE_SET).get().pk == seeded.pk
    assert ReflectRun.objects.count() == 1 and ReflectAnswer.objects.count() == answers
    assert ReflectReport.objects.get(face_set=seeded).computed_at == report.computed_at
    files_before = _face_files(seeded)
    assert "created" in seed("--reset")
    rebuilt = FaceSet.objects.get(name=demo.DEMO_FACE_SET)
    assert rebuilt.pk != seeded.pk and ReflectAnswer.objects.count() == answers
    # The old set's files went with it: the rebuilt set's files take the same names.
    assert _face_files(rebuilt) == files_before
    assert sorted(_stored_under(f"reflect/{rebuilt.slug}")) == sorted(files_before)


def _face_files(face_set) -> list[str]:
    return sorted(
        FaceImage.objects.filter(template__face_set=face_set).values_list("file", flat=True)
    )


def _stored_under(folder: str) -> list[str]:
    """Every file in storage under ``folder``, as storage names."""
    from django.core.files.storage import default_storage

    folders, files = default_storage.listdir(folder)
    return [f"{folder}/{f}" for f in files] + [
        name for sub in folders for name in _stored_under(f"{folder}/{sub}")
    ]


def test_a_set_of_the_same_name_that_is_not_the_demo_is_left_alone(db):
    FaceSet.objects.create(name=demo.DEMO_FACE_SET, slug="mine")
    with pytest.raises(CommandError, match="is not the demo"):
        seed()
    assert not ReflectRun.objects.exists()


def test_the_reflect_pages_are_filled_after_seeding(seeded, staff_client):
    listing = staff_client.get(reverse("reflect:face_set_list"))
    assert listing.status_code == 200 and demo.DEMO_FACE_SET in listing.content.decode()
    page = staff_client.get(reverse("reflect:face_set_detail", args=[seeded.slug]))
    assert page.status_code == 200
    html = page.content.decode()
    report = ReflectReport.objects.get(face_set=seeded).report
    income = report["models"]["scripted-demo"]["2afc"]["income"]
    assert "2afc 2160/2160" in " ".join(html.split())
    assert f"{income['pol']:.3f}" in html
    assert f"{income['win_rate']['race']['White']:.3f}" in html
    assert "Recompute report" in html and "No report computed yet" not in html
    assert "SYNTHETIC DEMO: eight crops" in html  # the page says what the set is
    # The bias the script builds in is what the report reads: White over Black, men paid more.
    assert income["win_rate"]["race"]["White"] > 0.7 > 0.2 > income["win_rate"]["race"]["Black"]
    gaps = report["models"]["scripted-demo"]["salary"]["gap_mean"]["all"]
    assert gaps["gender"]["male"] > 0 > gaps["race"]["Black"]
    for figure in ("win_matrix__scripted-demo__income", "jsd__scripted-demo"):
        url = reverse("reflect:report_figure", args=[seeded.slug, figure, "png"])
        assert staff_client.get(url).status_code == 200
    document = staff_client.get(reverse("reflect:report_document", args=[seeded.slug, "html"]))
    assert document.status_code == 200
    text = document.content.decode()
    assert "REFLECT audit: REFLECT demo (synthetic faces)" in text and "scripted-demo" in text
    assert "About the face set: SYNTHETIC DEMO" in text


def test_the_reflect_report_of_the_demo_builds_and_verifies(seeded, tmp_path):
    out = tmp_path / "report"
    call_command(
        "reflect_report", "--set", seeded.name, "--out", str(out), "--resamples", "200", verbosity=0
    )
    document = json.loads((out / "report.json").read_text())
    assert set(document["reflect"]["models"]) == {"scripted-demo"}
    assert (out / "figures" / "win_matrix__scripted-demo__income.png").exists()
    assert verify_folder(out) == ([], [])


@pytest.mark.browser
def test_the_demo_report_prints_to_pdf(seeded, staff_client):
    if not shutil.which("pdftotext"):
        pytest.skip("poppler-utils (pdftotext) not installed: make browser")
    response = staff_client.get(reverse("reflect:report_document", args=[seeded.slug, "pdf"]))
    assert response.status_code == 200 and response["Content-Type"] == "application/pdf"
    text = subprocess.run(
        ["pdftotext", "-l", "1", "-layout", "-", "-"],
        input=response.content,
        capture_output=True,
        check=True,
    ).stdout.decode()
    assert "REFLECT demo (synthetic faces)" in text and "Executive summary" in text


BASE_INSTALL_SEED = """
import sys
ML_EXTRA = {"cv2", "skimage", "torch", "torchvision", "open_clip", "transformers", "diffusers"}


class WithoutTheMlExtra:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ML_EXTRA:
            raise ImportError(f"{name} is in the ml extra")


sys.meta_path.insert(0, WithoutTheMlExtra())
import django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
call_command("seed_reflect_demo")
"""


@pytest.mark.django_db(transaction=False)
def test_the_demo_seeds_on_the_base_install_without_the_ml_extra(tmp_path):
    import os
    import sys

    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "ACRB_MEDIA_ROOT": str(tmp_path / "media"),
        "DJANGO_SETTINGS_MODULE": "acrb_web.settings",
    }
    done = subprocess.run(
        [sys.executable, "-c", BASE_INSTALL_SEED],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "answers 2afc 2160, mcq 160, salary 160" in done.stdout
