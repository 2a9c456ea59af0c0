"""The paper's Figure 4(d-f) views on the REFLECT page: rows from report.json, the chart, the
numbers table, and null + reason where a rate or its interval is undefined."""

import pytest
from django.template.loader import render_to_string
from django.urls import reverse

from scoring.reflect import reports, selectors
from scoring.reflect.page_figures import figure_4_charts, figure_list
from scoring.report.reflect.dataset import answer_frames
from scoring.report.reflect.figure_4 import (
    FIGURE_4_VIEWS,
    NO_BOOTSTRAP,
    NO_COMPARISON,
    NO_DEFINED_RESAMPLE,
    figure_4_rows,
)
from scoring.stats.reflect.parsing import two_afc_records
from scoring.stats.reflect.two_afc import figure_4_views, two_afc_counts
from scoring.stats.reflect.vocabulary import GROUPS, RACES
from tests.scoring.reflect.conftest import run_reflect
from tests.scoring.reflect.fakes import prefers_rank

# Groups in order of preference: the model always picks the group that comes first.
RANK = [3, 8, 0, 5, 9, 1, 6, 2, 7, 4]
VIEW_D, VIEW_E, VIEW_F = FIGURE_4_VIEWS


def expected_by_hand(view: str, race: str) -> float:
    """What RANK implies: (d)/(e) the share of the 4 other-race groups of the same gender
    ranked below, (f) 1 when the male group of the race is ranked above its female group."""
    position = {GROUPS[g]: i for i, g in enumerate(RANK)}
    if view == VIEW_F:
        return float(position[(race, "male")] < position[(race, "female")])
    gender = "female" if view == VIEW_D else "male"
    others = [r for r in RACES if r != race]
    return sum(position[(race, gender)] < position[(r, gender)] for r in others) / len(others)


@pytest.mark.django_db
def test_the_page_draws_the_views_with_the_numbers_of_the_statistics_function(
    face_set, staff_client, serve
):
    run_reflect(serve(prefers_rank(RANK)), tasks="2afc")
    report = reports.report_refresh(face_set=face_set, n_resamples=20)
    page = staff_client.get(reverse("reflect:face_set_detail", args=[face_set.slug]))
    html = page.content.decode()
    assert "the paper&#x27;s Figure 4(d–f)" in html or "the paper's Figure 4(d–f)" in html
    for scenario in ("income", "education", "perceived_safety"):
        name = f"figure_4__fake-vlm__{scenario}"
        assert reverse("reflect:report_figure", args=[face_set.slug, name, "svg"]) in html
        svg = staff_client.get(reverse("reflect:report_figure", args=[face_set.slug, name, "svg"]))
        assert svg.status_code == 200 and b"<svg" in svg.content
        assert b"(f) male vs female, same race" in svg.content

    # The reference: the statistics function on the counts of the stored answers.
    records = two_afc_records(answer_frames(selectors.answer_rows(face_set=face_set))["2afc"])
    income = records[(records["scenario"] == "income") & (records["variant"] == "original")]
    views = figure_4_views(two_afc_counts(income).wins.sum(axis=0))
    arrays = {
        VIEW_D: views["win_rate_within_gender.female.race"],
        VIEW_E: views["win_rate_within_gender.male.race"],
        VIEW_F: views["male_win_rate_within_race.race"],
    }
    rows = [r for r in figure_4_rows(report) if r["scenario"] == "income"]
    assert len(rows) == 15
    for row in rows:
        reference = arrays[row["view"]][RACES.index(row["group"])]
        assert row["win_rate"] == pytest.approx(reference)
        assert row["win_rate"] == pytest.approx(expected_by_hand(row["view"], row["group"]))
        assert row["ci_low"] is not None and row["reason"] == ""
    # The numbers table beside the chart prints the same values.
    chart = next(c for c in figure_4_charts(report) if c["scenario"] == "income")
    table = render_to_string("reflect/partials/figure_4_numbers.html", {"chart": chart})
    assert table in html
    latino = next(r for r in chart["rows_by_race"] if r["group"] == "Latino")
    assert [c["win_rate"] for c in latino["cells"]] == [0.5, 0.0, 0.0]
    assert ">0.500" in table and "Latino" in table
    # a scripted model answers the same in every resample: no zero-width "[0.000, 0.000]"
    assert "[0.000, 0.000]" not in table and "[0.500, 0.500]" not in table
    # The audit report document draws the same views.
    document = staff_client.get(reverse("reflect:report_document", args=[face_set.slug, "html"]))
    text = document.content.decode()
    assert "Figure 4(d-f)) with 95% CI — fake-vlm, income" in text, text[
        text.find("Figure 4(d-f))") - 80 :
    ][:200]


def test_undefined_rates_and_intervals_are_null_with_a_reason():
    cell = {
        "win_rate_within_gender": {"female": {"race": {"White": 0.6}}, "male": {"race": {}}},
        "win_rate_within_gender_ci": {
            "female": {"race": {"White": [0.5, 0.7]}},
            "male": {"race": {}},
        },
        "male_win_rate_within_race": {"race": {"White": 0.4, "Black": None}},
    }
    rows = figure_4_rows({"models": {"m": {"2afc": {"income": cell}}}})
    by = {(r["view"], r["group"]): r for r in rows}
    assert by[(VIEW_D, "White")] == {
        "model": "m",
        "scenario": "income",
        "view": VIEW_D,
        "group": "White",
        "win_rate": 0.6,
        "ci_low": 0.5,
        "ci_high": 0.7,
        "reason": "",
    }
    assert by[(VIEW_D, "Black")]["win_rate"] is None
    assert by[(VIEW_D, "Black")]["reason"] == NO_COMPARISON
    assert by[(VIEW_E, "White")]["reason"] == NO_COMPARISON
    assert by[(VIEW_F, "White")]["win_rate"] == 0.4
    assert by[(VIEW_F, "White")]["reason"] == NO_BOOTSTRAP  # no _ci block at all
    cell["win_rate_within_gender_ci"]["female"]["race"]["White"] = [None, None]
    rows = figure_4_rows({"models": {"m": {"2afc": {"income": cell}}}})
    assert rows[0]["reason"] == NO_DEFINED_RESAMPLE and rows[0]["ci_low"] is None


def test_the_numbers_table_prints_the_reason_instead_of_a_number():
    cell = {"male_win_rate_within_race": {"race": {"White": 0.4}}}
    report = {"models": {"m": {"2afc": {"income": cell}}}}
    (chart,) = figure_4_charts(report)
    table = render_to_string("reflect/partials/figure_4_numbers.html", {"chart": chart})
    assert table.count(NO_COMPARISON) == 14
    assert table.count(NO_BOOTSTRAP) == 1 and "0.400" in table
    names = [f["name"] for f in figure_list(report)]
    assert "figure_4__m__income" in names
