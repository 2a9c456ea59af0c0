"""``manage.py validate_design`` and the study page's design-validity block (docs/metrics.md,
"Validate your own design"): the demo study, a study made as the README's "Your own study"
(import_items, then labels from another tool), bad arguments in one line, the page and its
button, who may use them."""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from django.core.management import CommandError, call_command, load_command_class
from django.test import Client
from django.urls import reverse

from annotations.models import BackgroundJob, Study
from scoring.design_validity import selectors, tasks
from tests.support.django_fixtures import client_for, manifest_line, write_image, write_manifest

VALUES = ("Korean", "Nigerian", "US", "Indian")
DOMAINS = ("food", "sport", "work")


def _run(*argv) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of ``manage.py validate_design argv``, as from a shell
    (which closes the database connections: the tests that call it are transactional)."""
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        # Loaded here: a command writes to the sys.stderr it found when it was made.
        command = load_command_class("scoring", "validate_design")
        try:
            command.run_from_argv(["manage.py", "validate_design", *argv])
            status = 0
        except SystemExit as exit_:
            status = exit_.code
    return status, stdout.getvalue(), stderr.getvalue()


@pytest.fixture
def own_study(tmp_path, db):
    """The README's "Your own study": import_items --create, then import_annotations. Four
    values, 12 items each on 6 base prompts (two per domain, two images per prompt and value),
    two annotators per item: a design too small for Δ's band (two clusters a stratum)."""
    lines, labels = [], ["item_id,annotator,annotator_group,hard_refusal,cue"]
    for value in VALUES:
        for index in range(12):
            prompt = index % 6
            item_id = f"{value}-{index}"
            write_image(tmp_path / "bundle" / "img" / f"{item_id}.png")
            lines.append(
                manifest_line(
                    item_id,
                    image=f"img/{item_id}.png",
                    value=value,
                    base=f"bp{prompt}",
                    domain=DOMAINS[prompt % 3],
                    generator=("gen-a", "gen-b")[index // 6],
                )
            )
            refused = index < 1 + VALUES.index(value) % 2  # 1 or 2 refusals a value
            split = index in (2, 3)
            for annotator, label in (("ana", refused or split), ("bola", refused)):
                cue = "" if label else "retained"  # a cue only where not refused
                labels.append(f"{item_id},{annotator},,{str(label).lower()},{cue}")
    manifest = write_manifest(tmp_path / "bundle", lines)
    call_command(
        "import_items", str(manifest), "--study", "my-study", "--create", "--mode", "t2i",
        stdout=io.StringIO(),
    )  # fmt: skip
    (tmp_path / "labels.csv").write_text("\n".join(labels) + "\n", encoding="utf-8")
    call_command(
        "import_annotations", str(tmp_path / "labels.csv"), "--study", "my-study",
        "--create-annotators", stdout=io.StringIO(),
    )  # fmt: skip
    return Study.objects.get(slug="my-study")


@pytest.mark.validity
@pytest.mark.django_db(transaction=True)
def test_the_demo_study_is_validated_inline_with_a_table_and_its_verdict(tmp_path):
    call_command("seed_demo", stdout=io.StringIO())
    out = tmp_path / "validity.json"
    status, stdout, stderr = _run(
        "--study", "demo", "--replications", "50", "--inline", "--json", str(out)
    )
    result = json.loads(out.read_text(encoding="utf-8"))
    # 50 simulated studies is a smoke run (chance alone can fail a check, the note says): the
    # verdict printed and the exit status agree, whichever it is.
    assert result["verdict"] in ("calibrated", "not calibrated")
    if result["verdict"] == "calibrated":
        assert status == 0 and result["verdict_text"] in stdout
    else:
        assert status == 1 and stderr.strip().splitlines() == [
            f"CommandError: {result['verdict_text']}"
        ]
        assert all(f"- {reason}" in stdout for reason in result["verdict_reasons"])
    assert "chance alone can make a calibrated check miss its target" in stdout
    header = stdout.splitlines()[0].split()
    assert header == ["statistic", "scenario", "measures", "rate", "target", "ok"]
    assert "culture: equal rates" in stdout and "judge sim-vlm-a@1" in stdout
    design = result["design"]
    assert design["annotators_per_item"]["value"] == 2
    assert design["domains"]["value"] == 4 and design["base_prompts"]["value"] == 11
    assert design["attributes"]["culture"]["items_per_value"]["value"] == 11
    assert set(design["judges"]) == {"sim-vlm-a@1", "sim-vlm-b@1"}
    # The page reads the same result from the job.
    job = selectors.design_validation_state(study=Study.objects.get(slug="demo"))["latest"]
    assert job.params["result"] == result and job.status == "succeeded"


@pytest.mark.validity
@pytest.mark.django_db(transaction=True)
def test_your_own_study_queued_job_sets_aside_the_band_it_cannot_give(own_study, tmp_path):
    # Queued (Celery runs eagerly in the tests), as without --inline. Two base prompts in each of
    # three domains allow 8 distinct bootstrap resamples: the study reports no Δ interval
    # (too_few_resamples), so the suite sets Δ aside rather than failing it (it covered 0.62
    # before the study withheld it).
    status, stdout, stderr = _run("--study", "my-study", "--replications", "50")
    assert "Traceback" not in stderr
    assert status == 0, stdout + stderr
    assert "Calibrated for this design" in stdout
    assert "queued on the 'default' queue" in stdout
    assert "the interval of Δ (highest minus lowest rate)" in stdout
    assert "too few to judge" in stdout
    job = BackgroundJob.objects.get(kind=selectors.DESIGN_VALIDATION_JOB_KIND)
    assert job.status == "succeeded" and job.done == job.total == 2  # null, observed rates
    assert (
        job.params["result"]["design"]["attributes"]["culture"]["base_prompts_per_value"]["value"]
        == 6
    )


@pytest.mark.django_db(transaction=True)
def test_an_unknown_study_and_replications_out_of_range_are_one_line(own_study):
    status, _, stderr = _run("--study", "nope", "--inline")
    assert status == 1 and "Traceback" not in stderr
    [line] = stderr.strip().splitlines()
    assert "unknown study 'nope'" in line and "my-study" in line
    for replications in ("49", "5001", "many"):
        status, _, stderr = _run("--study", "my-study", "--replications", replications)
        assert status == 2 and "Traceback" not in stderr
        assert "argument --replications" in stderr.strip().splitlines()[-1]
    with pytest.raises(CommandError, match="out of range: use 50 to 5,000"):
        call_command("validate_design", "--study", "my-study", "--replications", "10")
    assert not BackgroundJob.objects.filter(kind=selectors.DESIGN_VALIDATION_JOB_KIND).exists()


@pytest.mark.django_db(transaction=True)
def test_no_labels_yet_is_a_verdict_with_its_reason(study):
    status, _, stderr = _run("--study", study.slug, "--replications", "50", "--inline")
    assert status == 1
    [line] = stderr.strip().splitlines()
    assert "Cannot validate this design: the study has no human labels" in line


@pytest.mark.validity
@pytest.mark.django_db
def test_the_study_page_shows_the_result_and_the_button_starts_one_job(
    own_study, staff_client, monkeypatch, django_capture_on_commit_callbacks
):
    page = staff_client.get(reverse("staff:study_detail", args=[own_study.slug]))
    fragment_url = reverse("design_validity:design_validity", args=[own_study.slug])
    assert fragment_url in page.content.decode()
    empty = staff_client.get(fragment_url, HTTP_HX_REQUEST="true").content.decode()
    assert "Not validated yet" in empty and "Validate the design" in empty

    # Without a worker the job stays queued: the block polls, and a second click starts nothing.
    sent = []
    monkeypatch.setattr(tasks.design_validation_task, "apply_async", sent.append)
    start = reverse("design_validity:design_validity_start", args=[own_study.slug])
    for _ in range(2):
        with django_capture_on_commit_callbacks(execute=True):
            response = staff_client.post(start, HTTP_HX_REQUEST="true")
        assert response.status_code == 200
    mine = BackgroundJob.objects.filter(kind=selectors.DESIGN_VALIDATION_JOB_KIND)
    assert len(sent) == 1 and mine.count() == 1
    polling = response.content.decode()
    assert 'hx-trigger="every 1s"' in polling and "queued" in polling
    assert "Validate the design" not in polling  # no button while a job is open

    # The worker runs it (here: the task, at the fewest replications).
    job = mine.get()
    job.params["replications"] = 50
    job.save(update_fields=["params"])
    tasks.design_validation_task(job.pk)
    done = staff_client.get(fragment_url, HTTP_HX_REQUEST="true").content.decode()
    assert "Calibrated" in done and "every 1s" not in done
    assert "too rarely defined" in done  # Δ band: too few distinct resamples at this design
    assert "Validate again" in done
    # Without htmx the button posts and comes back to a page of its own.
    with django_capture_on_commit_callbacks(execute=True):
        response = staff_client.post(start)
    assert response.status_code == 302 and response["Location"] == fragment_url
    assert len(sent) == 2
    assert "<html" in staff_client.get(fragment_url).content.decode()


@pytest.mark.django_db
def test_annotators_and_anonymous_visitors_may_not_see_or_start_it(
    own_study, annotators, staff_client
):
    fragment = reverse("design_validity:design_validity", args=[own_study.slug])
    start = reverse("design_validity:design_validity_start", args=[own_study.slug])
    annotator = client_for(annotators[0])
    assert annotator.get(fragment).status_code == 403
    assert annotator.post(start).status_code == 403
    assert Client().post(start).status_code == 302  # to the login page
    assert not BackgroundJob.objects.filter(kind=selectors.DESIGN_VALIDATION_JOB_KIND).exists()
    # Every staff account may see every study (docs/annotation.md, "Staff pages"); a study
    # that does not exist is a 404.
    missing = reverse("design_validity:design_validity_start", args=["no-such-study"])
    assert staff_client.post(missing).status_code == 404
