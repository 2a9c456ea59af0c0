"""The report's section registry (scoring/report/sections.py): every section's partials exist,
and the table of contents, the headings and the figures follow the registry's order, the
optional sections numbered after the others."""

import re

import pytest
from django.template.loader import get_template

from scoring.report import sections
from scoring.report.dataset import audit_report
from scoring.report.figures import figure_list
from scoring.report.render import numbered_sections, render_report_html
from scoring.stats.synthetic_study import synthetic_study

EVERY_SECTION = sections.STUDY_REPORT + sections.REFLECT_REPORT


@pytest.mark.parametrize(
    "section", EVERY_SECTION, ids=[f"{s.id}-{s.templates[0]}" for s in EVERY_SECTION]
)
def test_every_section_template_exists(section):
    assert section.templates
    for name in section.templates:
        get_template(name)


def test_a_document_names_each_section_once():
    for registry in (sections.STUDY_REPORT, sections.REFLECT_REPORT):
        ids = [section.id for section in registry]
        assert len(ids) == len(set(ids))


def test_optional_sections_are_numbered_after_the_others():
    study = {"study": {}}
    assert [s["title"] for s in numbered_sections(study)][-1] == "10. Provenance"
    both = numbered_sections({**study, "models_side_by_side": {}, "reflect": {}})
    assert [s["title"] for s in both[-3:]] == [
        "10. Provenance",
        "11. Models side by side",
        "12. REFLECT: decision tasks on face images",
    ]
    reflect = numbered_sections({**study, "reflect": {}})
    assert reflect[-1]["title"] == "11. REFLECT: decision tasks on face images"
    assert both[0]["heading"] == "1. Legal mapping: the evidence and the obligations it bears on"
    reflect_only = numbered_sections({"kind": "reflect", "reflect": {}})
    assert [s["title"] for s in reflect_only] == [
        "1. Legal mapping",
        "2. REFLECT: decision tasks on face images",
        "3. Provenance",
    ]


@pytest.fixture(scope="module")
def report():
    annotations, judgments = synthetic_study(n_items=240, n_annotated_items=60, seed=2)
    return audit_report(
        annotations,
        judgments,
        n_resamples=20,
        n_permutations=20,
        study={"slug": "s", "name": "Two generators", "mode": "t2i"},
    )


def test_the_contents_and_headings_follow_the_registry(report):
    present = [s for s in sections.STUDY_REPORT if s.present(report)]
    assert [s.id for s in present][-1] == "models"  # two generators: the optional section
    html = render_report_html(report, with_figures=False)
    contents = re.findall(r'<li><a href="#([^"]+)">', html)
    headings = re.findall(r'<h2 id="([^"]+)">', html)
    assert contents == ["summary"] + [s.id for s in present]
    assert headings == [s.id for s in present]


def test_the_figures_follow_the_sections(report):
    present = sections.present_sections(report)
    assert figure_list(report) == [spec for s in present for spec in s.figures(report)]
    assert {spec["kind"] for spec in figure_list(report)} >= {"rates", "delta", "odds"}
