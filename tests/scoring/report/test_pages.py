"""The audit report in the app: the staff page and its figures, the dashboard's disparities
fragment, and the ``audit_report`` command, whose numbers equal export_metrics'."""

import json

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotations import services
from annotations.models import Assignment, Item
from tests.support.django_fixtures import client_for

pytestmark = pytest.mark.django_db

FAST = {"n_resamples": 100, "n_permutations": 100}


@pytest.fixture
def answered_study(batch):
    """Both annotators answer every item; refusals on item-0 and item-3, erasures on Nigerian items."""
    rows = Assignment.objects.filter(batch=batch).select_related(
        "item", "item__attribute_value", "batch__study"
    )
    for row in rows:
        refused = row.item.item_id in ("item-0", "item-3")
        cue = (
            None
            if refused
            else ("erased" if row.item.attribute_value.value == "Nigerian" else "retained")
        )
        services.annotation_submit(assignment=row, hard_refusal=refused, cue_label=cue)
    gold = Item.objects.get(item_id="item-5")
    services.item_set_gold(item=gold, hard_refusal=False, cue="retained")
    return batch.study


@pytest.fixture
def fast_report(monkeypatch):
    """Page views use the report defaults; tests shorten the resampling."""
    from scoring.report import dataset as report

    monkeypatch.setattr(report, "DEFAULTS", {**report.DEFAULTS, **FAST})


def report_urls(study):
    return [
        reverse("report:study_report", args=[study.slug]),
        reverse("report:study_report_json", args=[study.slug]),
        reverse("report:study_disparities", args=[study.slug]),
        reverse("report:study_report_figure", args=[study.slug, "delta--human--all", "svg"]),
    ]


def test_report_pages_are_staff_only(answered_study, annotators, fast_report):
    annotator_client = client_for(annotators[0])
    for url in report_urls(answered_study):
        anonymous = Client().get(url)
        assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"], url
        assert annotator_client.get(url).status_code == 403, url


def test_report_page_renders_every_section_for_staff(answered_study, staff_client, fast_report):
    response = staff_client.get(reverse("report:study_report", args=[answered_study.slug]))
    assert response.status_code == 200
    page = response.content.decode()
    for heading in (
        "Legal mapping",
        "Study design and data sources",
        "Examination method",
        "Detected biases",
        "Regression",
        "Human validation",
        "Stated limitations",
        "Provenance",
    ):
        assert heading in page, heading
    assert "@media print" in page and "Korean markers" in page and "vlm-a" in page
    assert (
        reverse(
            "report:study_report_figure", args=[answered_study.slug, "delta--human--all", "svg"]
        )
        in page
    )


def test_figures_download_as_svg_png_and_csv(answered_study, staff_client, fast_report):
    def get(key, fmt):
        return staff_client.get(
            reverse("report:study_report_figure", args=[answered_study.slug, key, fmt])
        )

    for key in ("delta--human--all", "odds--human--refusal", "rates--auto:vlm-a@1--refusal"):
        assert get(key, "svg")["Content-Type"] == "image/svg+xml"
        assert get(key, "png").content.startswith(b"\x89PNG")
        csv = get(key, "csv")
        assert csv["Content-Type"] == "text/csv" and "attachment" in csv["Content-Disposition"]
    assert get("nope--human--all", "svg").status_code == 404
    assert get("delta--human--all", "gif").status_code == 404


def test_dashboard_links_the_report_and_loads_the_disparities_table(
    answered_study, staff_client, fast_report
):
    page = staff_client.get(
        reverse("staff:study_detail", args=[answered_study.slug])
    ).content.decode()
    fragment_url = reverse("report:study_disparities", args=[answered_study.slug])
    assert reverse("report:study_report", args=[answered_study.slug]) in page
    assert f'hx-get="{fragment_url}"' in page
    fragment = staff_client.get(fragment_url, HTTP_HX_REQUEST="true").content.decode()
    assert "<table" in fragment and "p Holm" in fragment and "<html" not in fragment
    assert "human" in fragment and "culture" in fragment
    # Δ's test is named, its family stated once, and n shows items beside labels.
    assert "max-t test from the same bootstrap as Δ" in fragment
    assert "p Holm adjusts p across" in fragment and "n items (labels)" in fragment
    assert "ermutation" not in fragment


def test_command_writes_a_self_contained_html_and_the_export_numbers(answered_study, tmp_path):
    out = tmp_path / "report"
    call_command(
        "audit_report", study=answered_study.slug, out=out, bootstrap=200, permutations=100, seed=4
    )
    html = (out / "report.html").read_text()
    assert (
        "<svg" in html and "<img" not in html and "/static/" not in html and 'href="/' not in html
    )
    text = (out / "report.json").read_text()
    assert "NaN" not in text and "Infinity" not in text
    report = json.loads(text)
    call_command(
        "export_metrics",
        study=answered_study.slug,
        out=str(tmp_path / "metrics.json"),
        bootstrap=200,
        seed=4,
    )
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert report["rates"] == metrics["rates"]
    assert report["agreement"] == metrics["agreement"]
    assert report["validation"]["gold_accuracy"] == metrics["gold_accuracy"]
    assert report["counts"] == metrics["meta"]["counts"]
    assert report["provenance"]["seed"] == 4 and report["provenance"]["n_resamples"] == 200
    assert report["provenance"]["data_fingerprint"]
    assert {row["value"] for row in report["design"]["taxonomy"]} == {"Korean", "Nigerian", "US"}
    assert report["design"]["judges"][0]["judge"] == "vlm-a"


def test_command_takes_a_reference_value(answered_study, tmp_path):
    call_command(
        "audit_report",
        study=answered_study.slug,
        out=tmp_path,
        bootstrap=0,
        permutations=10,
        reference=["culture=US"],
    )
    report = json.loads((tmp_path / "report.json").read_text())
    assert {t["reference"] for t in report["regression"]} == {"US"}
    assert {t["reference_chosen_by"] for t in report["regression"]} == {"configured"}


def test_degenerate_intervals_show_their_reason_not_a_zero_width_interval(
    answered_study, staff_client, fast_report
):
    # Two base prompts in one domain: too few to resample, so every Δ interval is null with a
    # reason, which the dashboard fragment and the report page print beside the number.
    report = staff_client.get(reverse("report:study_report_json", args=[answered_study.slug]))
    rows = [row for row in report.json()["disparities"] if row.get("delta") is not None]
    assert rows and all(row["delta_ci_low"] is None for row in rows)
    assert {row["delta_ci_reason_code"] for row in rows} == {"too_few_clusters"}
    fragment_url = reverse("report:study_disparities", args=[answered_study.slug])
    fragment = staff_client.get(fragment_url, HTTP_HX_REQUEST="true").content.decode()
    page = staff_client.get(reverse("report:study_report", args=[answered_study.slug]))
    for html in (fragment, page.content.decode()):
        assert "no interval: fewer than 5 base prompts can be resampled" in html


def test_report_page_opens_with_the_summary_and_offers_the_pdf(
    answered_study, staff_client, fast_report
):
    page = staff_client.get(reverse("report:study_report", args=[answered_study.slug]))
    html = page.content.decode()
    assert html.index("Executive summary") < html.index("Legal mapping")
    assert "What was audited" in html and "Contents" in html
    assert reverse("report:study_report_pdf", args=[answered_study.slug]) in html
    assert "no interval: fewer than 5 base prompts can be resampled" in html.split("Contents")[0]


@pytest.mark.browser
def test_staff_download_the_report_as_pdf(answered_study, staff_client, annotators, fast_report):
    url = reverse("report:study_report_pdf", args=[answered_study.slug])
    assert client_for(annotators[0]).get(url).status_code == 403
    response = staff_client.get(url)
    assert response.status_code == 200 and response["Content-Type"] == "application/pdf"
    assert response.content.startswith(b"%PDF") and "attachment" in response["Content-Disposition"]


@pytest.mark.browser
def test_command_writes_the_pdf(answered_study, tmp_path):
    call_command(
        "audit_report",
        study=answered_study.slug,
        out=tmp_path,
        bootstrap=0,
        permutations=10,
        output_format="pdf",
    )
    assert (tmp_path / "report.pdf").read_bytes().startswith(b"%PDF")
    assert (tmp_path / "report.html").exists() and (tmp_path / "report.json").exists()


def test_pdf_without_chromium_is_one_line_and_writes_nothing(answered_study, tmp_path, monkeypatch):
    from django.core.management.base import CommandError

    monkeypatch.setenv("ACRB_CHROMIUM", str(tmp_path / "no-chromium"))
    with pytest.raises(CommandError) as error:
        call_command(
            "audit_report",
            study=answered_study.slug,
            out=tmp_path / "out",
            bootstrap=0,
            permutations=10,
            output_format="pdf",
        )
    assert "PDF needs headless Chromium" in str(error.value) and "\n" not in str(error.value)
    assert not (tmp_path / "out").exists()
