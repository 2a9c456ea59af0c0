"""The planning aid on the new-batch form (scoring.planning, metrics:batch_plan)."""

import pytest
from django.urls import reverse

from annotations.imports import importers
from scoring.planning import batch_plan

pytestmark = pytest.mark.django_db


@pytest.fixture
def plan_study(study, make_manifest):
    importers.items_import(study=study, manifest=make_manifest(n=60))
    return study


def test_plan_has_a_row_per_attribute_with_ppi_narrower_than_humans(plan_study):
    plan = batch_plan(study=plan_study, budget=30, accuracy=0.9, rate=0.3)
    (row,) = plan["rows"]
    assert row["attribute"] == "culture" and row["n_values"] == 3
    assert sum(row["labelled"]["uniform"].values()) == pytest.approx(30)
    assert sum(row["labelled"]["validate"].values()) == pytest.approx(30)
    assert row["ppi_uniform"] < row["human_uniform"]
    assert 0 < plan["ratio_single_rate"] < 1


def test_the_form_page_offers_the_planning_aid_and_the_fragment_answers(plan_study, staff_client):
    page = staff_client.get(reverse("staff:batch_create", args=[plan_study.slug])).content.decode()
    url = reverse("metrics:batch_plan", args=[plan_study.slug])
    assert f'hx-get="{url}"' in page and f'action="{url}"' in page
    fragment = staff_client.get(url, {"budget": 30, "accuracy": 0.9}, HTTP_HX_REQUEST="true")
    text = fragment.content.decode()
    assert fragment.status_code == 200 and "<html" not in text
    assert "culture" in text and "PPI, validate the judge" in text
    # Without JavaScript: the same table in a page of its own.
    page = staff_client.get(url, {"budget": 30, "rho": 0.8})
    assert page.status_code == 200 and "<html" in page.content.decode()
    assert "ρ = 0.80" in page.content.decode()


def test_an_impossible_budget_is_one_line_and_no_table(plan_study, staff_client):
    url = reverse("metrics:batch_plan", args=[plan_study.slug])
    text = staff_client.get(url, {"budget": 500}, HTTP_HX_REQUEST="true").content.decode()
    assert "larger than the 60 items" in text and "<table" not in text
    text = staff_client.get(url, {"budget": "x"}, HTTP_HX_REQUEST="true").content.decode()
    assert "Budget: Enter a whole number." in text


def test_staff_only(plan_study, client):
    response = client.get(reverse("metrics:batch_plan", args=[plan_study.slug]), {"budget": 5})
    assert response.status_code in (302, 403)
