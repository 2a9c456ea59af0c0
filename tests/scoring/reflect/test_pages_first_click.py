"""Issue 21 §1.7: the REFLECT pages a new user read: a link to the report after "Compute
report", a readable heat map, human captions, and a hint when the page shows some templates."""

import math

import pytest
from django.core.management import call_command
from django.urls import reverse

from generation.models import FaceSet
from scoring.reflect import page_figures as figures
from tests.scoring.reflect.fakes import write_face_set

pytestmark = pytest.mark.django_db


def test_compute_report_ends_on_a_job_page_with_a_link_to_the_report(
    face_set, staff_client, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = staff_client.post(reverse("reflect:report_refresh", args=[face_set.slug]))
    page = staff_client.get(response["Location"]).content.decode()
    target = reverse("reflect:face_set_detail", args=[face_set.slug]) + "#report"
    assert f'href="{target}"' in page and "Open the report of Faces A" in page


def test_heat_map_text_is_readable_and_empty_cells_are_not_white():
    assert figures.cell_text_colour(0.95) == "white" == figures.cell_text_colour(0.05)
    assert figures.cell_text_colour(0.5) == "black"
    colours = figures.win_matrix_colours()
    empty, middle = colours(math.nan), colours(0.5)
    assert empty != middle and empty[:3] == pytest.approx((200 / 255,) * 3)


def test_figures_have_human_captions_not_file_slugs():
    listed = figures.figure_list(
        {"models": {"fake-vlm": {"2afc": {"education": {}}, "mcq": {1: 1}}}}
    )
    assert [f["caption"] for f in listed] == [
        "2AFC win matrix (row image chosen over column image) — fake-vlm, education",
        "2AFC win rates within a gender and within a race — fake-vlm, education",
        "MCQ: Jensen–Shannon divergence of each group's answers from the pooled ones — fake-vlm",
    ]


def test_the_set_page_says_when_it_shows_only_some_templates(tmp_path, staff_client):
    folder = write_face_set(
        tmp_path / "faces", occupations=("CEO", "nurse"), templates_per_occupation=2
    )
    call_command("import_face_set", str(folder), "--set", "Four", verbosity=0)
    face_set = FaceSet.objects.get(name="Four")
    page = staff_client.get(reverse("reflect:face_set_detail", args=[face_set.slug]))
    assert "The first 3 of 4 templates" in page.content.decode()
