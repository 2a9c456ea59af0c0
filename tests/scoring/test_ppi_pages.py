"""The staff pages show the PPI estimates and each judge's error by value (issue 22 §2): the
summary leads with them, the statistics details and the judges page hold the tables. Written
against fixture sections in the export's shapes (tests/support/ppi_document.py)."""

import pytest
from django.core.cache import cache
from django.urls import reverse

from scoring.metrics import document as metrics
from tests.scoring.test_dashboard import study_of
from tests.support.ppi_document import JUDGE, ppi_sections

pytestmark = pytest.mark.django_db


@pytest.fixture
def with_ppi(monkeypatch):
    """The metrics document as the statistics will build it: with ``ppi`` and ``judge_error``."""
    real = metrics.study_metrics

    def study_metrics(*args, **kwargs):
        return {**real(*args, **kwargs), **ppi_sections()}

    monkeypatch.setattr(metrics, "study_metrics", study_metrics)
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def small_study(annotators, tmp_path):
    return study_of(9, "ppi-pages", annotators, tmp_path)


def test_summary_leads_with_the_ppi_delta_and_says_what_not_to_report(
    small_study, staff_client, with_ppi
):
    url = reverse("metrics:study_summary", args=[small_study.slug])
    text = staff_client.get(url, HTTP_HX_REQUEST="true").content.decode()
    lead = text.index("Disparities from judges corrected by human labels (PPI)")
    assert lead < text.index("Agreement between annotators") < text.index("Largest disparities")
    # The differential attribute is named, with the reason not to report the judge-only Δ.
    assert f"Do not report {JUDGE}'s own erasure Δ for culture (its error differs by value" in text
    assert "gender</td>" in text and "Δ for gender" not in text
    assert "0.288 [0.132, 0.432]" in text  # the largest PPI Δ (combined · culture) first


@pytest.fixture
def without_ppi(monkeypatch):
    """The metrics document of a study whose judges no human validated: no ``ppi`` section."""
    real = metrics.study_metrics

    def study_metrics(*args, **kwargs):
        document = real(*args, **kwargs)
        document.pop("ppi", None)
        document.pop("judge_error", None)
        return document

    monkeypatch.setattr(metrics, "study_metrics", study_metrics)
    cache.clear()
    yield
    cache.clear()


def test_summary_without_ppi_has_no_such_card(small_study, staff_client, without_ppi):
    url = reverse("metrics:study_summary", args=[small_study.slug])
    text = staff_client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert "corrected by human labels (PPI)" not in text and "Largest disparities" in text


def test_statistics_details_and_judges_page_show_the_error_per_group(
    small_study, staff_client, with_ppi
):
    details = staff_client.get(
        reverse("metrics:study_statistics", args=[small_study.slug]), HTTP_HX_REQUEST="true"
    ).content.decode()
    for expected in (
        "Judge vlm@1 · erasure",
        "False positives [95% CI]",
        "25.0% [17.0%, 35.0%]",
        "PPI rate [95% CI]",
        "no labelled item for this value",
        "do not report",
    ):
        assert expected in details, expected
    judges_page = staff_client.get(reverse("scoring:study_judges", args=[small_study.slug]))
    fairness_url = reverse("metrics:study_judge_fairness", args=[small_study.slug])
    assert f'hx-get="{fairness_url}"' in judges_page.content.decode()
    fragment = staff_client.get(fairness_url, HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in fragment and "Judge vlm@1 · combined" in fragment
    page = staff_client.get(fairness_url)
    assert page.status_code == 200 and "<html" in page.content.decode()


def test_judge_fairness_is_staff_only(small_study, client):
    response = client.get(reverse("metrics:study_judge_fairness", args=[small_study.slug]))
    assert response.status_code == 302


def test_the_summary_lists_a_few_cautions_and_counts_the_rest():
    from scoring.metrics.headlines import SUMMARY_CAUTIONS, ppi_headline

    document = ppi_sections()
    for outcome in ("refusal", "substitution"):  # four cautions in all
        document["judge_error"][JUDGE][outcome] = document["judge_error"][JUDGE]["erasure"]
    headline = ppi_headline(document)
    assert len(headline["cautions"]) == SUMMARY_CAUTIONS == 2  # the card stays one screen
    assert headline["more_cautions"] == 2
    assert [row["attribute"] for row in headline["differential"]] == ["culture"] * 4
    assert ppi_headline({})["present"] is False


def test_pages_say_which_labels_the_ppi_estimates_left_out(annotators, staff_client, tmp_path):
    """Issue 30: a batch from the "judges disagree" subset is not a probability sample of the
    attribute values; the statistics page and the report's PPI section say its labels are left
    out of the prediction-powered estimates, in one sentence."""
    from annotations import services
    from annotations.models import AutomatedJudgment, Item
    from annotations.staff.batch_subset import BatchSubsetForm, subset_item_ids
    from tests.scoring.test_dashboard import answer_all

    study = study_of(30, "left-out", annotators, tmp_path)  # a batch of every item, answered
    for item in Item.objects.filter(study=study)[:6]:
        AutomatedJudgment.objects.create(item=item, judge="vlm-b", hard_refusal=True, cue_label="")
    form = BatchSubsetForm(study, {"subset-judges_disagree": "on"}, prefix="subset")
    assert form.is_valid()
    disagreements = services.batch_create(
        request=services.batch_request_build(
            study=study,
            name="disagreements",
            policy="k_overlap",
            annotators=[annotators[3]],
            overlap_k=1,
            seed=2,
            item_ids=subset_item_ids(study=study, form=form),
            subset=form.description(),
        )
    )
    answer_all(disagreements)
    # The first batch took every item, so it drew these too and they would keep their labels:
    # take them out of it, as a uniform sample that did not draw them.
    first = study.batches.get(name="left-out-batch")
    first.assignments.filter(item__assignments__batch=disagreements).delete()
    n_labels = disagreements.assignments.count()
    sentence = (
        f"{n_labels} labels from batch &#x27;disagreements&#x27; (a subset: judges disagree) are "
        "left out of the prediction-powered estimates: they are not a probability sample of "
        "their cells."
    )
    cache.clear()
    details = staff_client.get(
        reverse("metrics:study_statistics", args=[study.slug]), HTTP_HX_REQUEST="true"
    ).content.decode()
    assert sentence in details
    report = staff_client.get(reverse("report:study_report", args=[study.slug])).content.decode()
    section = report[report.index('id="ppi-section"') :]
    assert sentence in section[: section.index("</div>")]
    cache.clear()
