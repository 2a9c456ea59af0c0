"""The REFLECT report in the audit report's format: the part is the statistics core's numbers
plus what the folder records, the summary and legal mapping are built from them, the folder
verifies and fails on a changed answer, and a study with a REFLECT part is one document."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from scoring.report import bundle
from scoring.report.executive_summary import executive_summary
from scoring.report.folder import write_report_folder
from scoring.report.legal import legal_mapping
from scoring.report.reflect import figures as reflect_figures
from scoring.report.reflect.dataset import dump_context, full_report, reflect_part
from scoring.report.render import render_report_html
from scoring.report.verify import main, verify_folder
from tests.scoring.reflect.conftest import face_folder, face_set, run_reflect, serve  # noqa: F401
from tests.scoring.reflect.fakes import prefers_rank
from tests.scoring.report.reflect_answers import answer_rows

SETTINGS = {"n_resamples": 100, "seed": 3, "min_n": 30}


@pytest.fixture(scope="module")
def rows():
    return answer_rows()


@pytest.fixture(scope="module")
def inputs(rows):
    return {
        "reflect": {"answers": rows, "context": dump_context(rows, sources=["a.jsonl"], **SETTINGS)}
    }


@pytest.fixture(scope="module")
def report(inputs):
    return bundle.report_from_inputs(inputs)


def write_folder(tmp_path, inputs, report):
    folder = tmp_path / "r"
    write_report_folder(
        folder, report, inputs, argv=["reflect_report"], seeds={"reflect": 3}, with_figures=False
    )
    return folder


def test_the_part_holds_the_statistics_core_numbers_and_the_answer_counts(rows, report):
    part = report["reflect"]
    core = full_report(rows, n_resamples=100, seed=3)
    assert part["models"] == json.loads(json.dumps(core["models"]))
    assert part["discard_table"] == core["discard_table"]
    assert part["answers"]["n_answers"] == len(rows) == 2 * (540 + 60 + 120)
    assert part["answers"]["by_model"]["vlm-a"] == {"2afc": 540, "mcq": 60, "salary": 120}
    assert report["kind"] == "reflect" and report["provenance"]["seed"] == 3


def test_the_summary_states_headline_gaps_with_intervals_and_all_trials_rates(report):
    from scoring.report.reflect.text import gap_sentence, win_rate_gaps

    part = report["reflect"]
    summary = executive_summary(report)
    assert summary["verdicts"] is None
    gaps = win_rate_gaps(part)
    assert summary["findings"][0] == gap_sentence(gaps[0])
    race = next(row for row in gaps if row["kind"] == "race")
    cell, high = race["cell"], race["high"]
    low, high_ci = cell["win_rate_ci"]["race"][high]
    all_trials = cell["win_rate_all_trials"]["race"][high]
    all_low, all_high = cell["win_rate_all_trials_ci"]["race"][high]
    sentence = gap_sentence(race)
    assert f"{high} {cell['win_rate']['race'][high]:.2f} [{low:.2f}, {high_ci:.2f}]" in sentence
    assert f"(all trials {all_trials:.2f} [{all_low:.2f}, {all_high:.2f}])" in sentence
    everything = " ".join(summary["findings"])
    pol = part["models"]["vlm-a"]["2afc"]["income"]
    assert f"income {pol['pol']:.2f} [{pol['pol_ci'][0]:.2f}, {pol['pol_ci'][1]:.2f}]" in everything
    discards = part["discard_table"]["all"]
    assert any(
        line.startswith(
            f"{discards['attempted'] - discards['kept']} of {discards['attempted']} 2AFC"
        )
        for line in summary["evidence"]
    )
    assert any("Fewer than 5 templates per occupation" in line for line in summary["evidence"])


def test_the_largest_gap_sentence_is_the_largest_gap(report):
    from scoring.report.reflect.text import win_rate_gaps

    gaps = win_rate_gaps(report["reflect"])
    by_hand = max(
        max(v for v in cell["win_rate"][kind].values() if v is not None)
        - min(v for v in cell["win_rate"][kind].values() if v is not None)
        for block in report["reflect"]["models"].values()
        for cell in block["2afc"].values()
        for kind in ("race", "gender", "race_gender")
    )
    assert gaps[0]["gap"] == pytest.approx(by_hand)


def test_undefined_statistics_are_null_with_their_reason(rows):
    by_position = [
        {**row, "raw_answer": "A"} if row["model"] == "vlm-b" and row["task"] == "2afc" else row
        for row in rows
    ]
    part = reflect_part(by_position, dump_context(by_position, sources=["a"], **SETTINGS))
    cell = part["models"]["vlm-b"]["2afc"]["income"]
    assert cell["kept"] == 0 and cell["pol"] is None
    undefined = next(item for item in part["limitations"] if item["kind"] == "undefined")
    assert "vlm-b.2afc.income.pol (no comparison kept)" in undefined["text"]
    small = next(item for item in part["limitations"] if item["kind"] == "small_cells")
    assert "vlm-b 2AFC income (0 kept)" in small["text"]


def test_reflect_maps_to_article_10_by_default_and_to_the_stated_kind_otherwise(report, rows):
    provisions = [entry["provision"] for entry in report["legal"]["obligations"]]
    assert (
        "Article 10(2)(f)" in provisions
        and "Article 53(1)(a) and Annex XI, Section 1" not in provisions
    )
    article_10 = report["legal"]["obligations"][provisions.index("Article 10(2)(f)")]
    assert article_10["evidence_lines"][0].startswith(
        "2 2AFC scenario, 2 MCQ question and 2 salary"
    )
    assert article_10["sections"] == ["reflect-findings"]
    assert "high-risk" in report["legal"]["route_note"]
    stated = dump_context(rows, sources=["a"], system_kind="general_purpose", **SETTINGS)
    general = legal_mapping({"reflect": {**report["reflect"], "system": stated["system"]}})
    provisions = [entry["provision"] for entry in general["obligations"]]
    assert "Article 10(2)(f)" not in provisions and "Article 50(2)" in provisions


def test_one_mapping_for_a_study_and_a_reflect_part_of_different_kinds(report):
    from tests.scoring.report.test_legal import MINIMAL_REPORT

    combined = {
        **MINIMAL_REPORT,
        "study": {"system_kind": "general_purpose", "name": "S"},
        "reflect": report["reflect"],
    }
    mapping = legal_mapping(combined)
    by_id = {entry["id"]: entry for entry in mapping["obligations"]}
    assert [s["part"] for s in mapping["systems"]] == ["study", "reflect"]
    # Article 10 applies to the REFLECT part only; Article 53 to the study only; ISO to both.
    assert by_id["eu_ai_act_art_10_2_f"]["parts"] == ["reflect"]
    assert all(
        line.startswith("REFLECT: ") for line in by_id["eu_ai_act_art_10_2_f"]["evidence_lines"]
    )
    assert by_id["eu_ai_act_art_53_1_a_annex_xi_1"]["parts"] == ["study"]
    assert not any(
        line.startswith("REFLECT")
        for line in by_id["eu_ai_act_art_53_1_a_annex_xi_1"]["evidence_lines"]
    )
    assert by_id["iso_iec_tr_24027"]["parts"] == ["study", "reflect"]
    assert len(mapping["obligations"]) == len({entry["id"] for entry in mapping["obligations"]})


def test_figures_draw_the_part_numbers_with_their_intervals(report):
    part = report["reflect"]
    specs = reflect_figures.figure_list(part)
    assert [s["kind"] for s in specs] == [
        "reflect_win_rate",
        "reflect_figure_4",
        "reflect_jsd",
        "reflect_salary",
    ] * 2
    rows, columns = reflect_figures.figure_rows(part, specs[0])
    cell = part["models"]["vlm-a"]["2afc"]["income"]
    white = next(r for r in rows if r["attribute"] == "race" and r["value"] == "White")
    assert (white["rate"], [white["ci_low"], white["ci_high"]]) == (
        cell["win_rate"]["race"]["White"],
        cell["win_rate_ci"]["race"]["White"],
    )
    salary, _ = reflect_figures.figure_rows(part, specs[3])
    male = next(r for r in salary if r["value"] == "male")
    gaps = part["models"]["vlm-a"]["salary"]
    assert male["rate"] == gaps["gap_mean"]["all"]["gender"]["male"]
    assert [male["ci_low"], male["ci_high"]] == gaps["gap_mean_ci"]["all"]["gender"]["male"]
    assert reflect_figures.figure_image(part, specs[2], "svg").lstrip().startswith(b"<?xml")
    # The paper's Figure 4(d-f): (f) is the male image's win rate within each race.
    views, _ = reflect_figures.figure_rows(part, specs[1])
    within_race = cell["male_win_rate_within_race"]["race"]
    drawn = {r["value"]: r["rate"] for r in views if r["attribute"].startswith("(f)")}
    assert drawn == within_race


def test_the_document_has_one_summary_one_contents_and_the_legal_mapping(report):
    html = render_report_html(report, with_figures=False)
    assert html.count('id="summary"') == 1 and html.count('<h2 class="toc-title">Contents') == 1
    assert (
        html.index("Executive summary") < html.index("1. Legal mapping") < html.index("2. REFLECT")
    )
    assert "Verdict per attribute type" not in html and "Article 10(2)(f)" in html
    assert "reflect_report --set" in html


def test_an_untouched_reflect_folder_verifies_and_a_changed_answer_fails(
    tmp_path, inputs, report, capsys
):
    folder = write_folder(tmp_path, inputs, report)
    manifest = json.loads((folder / bundle.MANIFEST).read_text())
    assert {bundle.REFLECT_ANSWERS_FILE, bundle.REFLECT_CONTEXT_FILE, "report.html"} <= set(
        manifest["files"]
    )
    assert manifest["seeds"] == {"reflect": 3} and manifest["packages"]["numpy"]
    assert verify_folder(folder) == ([], [])
    assert main([str(folder)]) == 0
    call_command("verify_report", str(folder))  # exit 0: no CommandError
    # Tamper: one 2AFC answer of vlm-a flips its letter, and the forger rewrites the manifest.
    path = folder / bundle.REFLECT_ANSWERS_FILE
    lines = path.read_text().splitlines()
    index = next(
        i
        for i, line in enumerate(lines)
        if '"task": "2afc"' in line and '"raw_answer": "A"' in line and '"model": "vlm-a"' in line
    )
    row = json.loads(lines[index])
    lines[index] = json.dumps({**row, "raw_answer": "B"}, sort_keys=True)
    path.write_text("\n".join(lines) + "\n")
    mismatches, _ = verify_folder(folder)
    assert mismatches[0].startswith(f"hash mismatch: {bundle.REFLECT_ANSWERS_FILE}")
    assert any(line.startswith("mismatch: reflect.models.vlm-a.2afc.income") for line in mismatches)
    assert main([str(folder)]) == 1
    bundle.write_manifest(folder, argv=["forged"], settings={}, seeds={})
    mismatches, _ = verify_folder(folder)
    assert mismatches and not any(line.startswith("hash mismatch") for line in mismatches)
    with pytest.raises(CommandError, match="FAILED"):
        call_command("verify_report", str(folder))
    assert "mismatch: reflect.models.vlm-a.2afc.income" in capsys.readouterr().out


# --- from the database: the command, the PDF, the combined document -------------------------


@pytest.mark.django_db
def test_reflect_report_writes_the_folder_from_the_database(face_set, serve, tmp_path):  # noqa: F811
    run_reflect(serve(prefers_rank([3, 1, 4, 0, 5, 9, 2, 6, 8, 7])), tasks="2afc,mcq,salary")
    out = tmp_path / "out"
    call_command(
        "reflect_report",
        "--set",
        face_set.slug,
        "--out",
        str(out),
        "--resamples",
        "50",
        "--intended-purpose",
        "shortlisting nurses",
        verbosity=0,
    )
    report = json.loads((out / "report.json").read_text())
    part = report["reflect"]
    assert part["face_set"]["slug"] == face_set.slug and part["runs"][0]["model"] == "fake-vlm"
    assert part["system"] == {
        "system_kind": "high_risk",
        "intended_purpose": "shortlisting nurses",
        "kind_source": "default",
    }
    assert part["face_set"]["counts"]["templates"] == 2
    for name in ("report.html", "tables/win_rates.csv", "figures/jsd__fake-vlm.svg"):
        assert (out / name).stat().st_size > 0
    assert "shortlisting nurses" in (out / "report.html").read_text()
    assert verify_folder(out) == ([], [])


@pytest.mark.django_db
def test_a_study_with_a_reflect_part_is_one_document(answered_study, face_set, serve, tmp_path):  # noqa: F811
    run_reflect(serve(prefers_rank(list(range(10)))), tasks="2afc")
    out = tmp_path / "both"
    call_command(
        "audit_report",
        study=answered_study.slug,
        out=out,
        bootstrap=0,
        permutations=10,
        reflect_set=face_set.slug,
    )
    report = json.loads((out / "report.json").read_text())
    assert report["study"]["slug"] == answered_study.slug
    assert report["reflect"]["models"]["fake-vlm"]["2afc"]["income"]["kept"] == 90
    assert [s["part"] for s in report["legal"]["systems"]] == ["study", "reflect"]
    html = (out / "report.html").read_text()
    assert html.count('<nav class="toc"') == 1 and html.count('id="summary"') == 1
    assert html.count('id="evidence"') == 1 and "12. REFLECT: decision tasks" in html
    summary = html[html.index('id="summary"') : html.index('<nav class="toc"')]
    assert "REFLECT face set" in summary and "Study “" in summary
    assert verify_folder(out) == ([], [])
    with pytest.raises(CommandError, match="unknown face set"):
        call_command(
            "audit_report", study=answered_study.slug, out=tmp_path / "x", reflect_set="nope"
        )


@pytest.mark.browser
@pytest.mark.django_db
def test_reflect_report_prints_the_same_document_to_pdf(face_set, serve, tmp_path):  # noqa: F811
    if not shutil.which("pdftotext"):
        pytest.skip("poppler-utils (pdftotext) not installed: make browser")
    run_reflect(serve(prefers_rank(list(range(10)))), tasks="2afc,mcq")
    out = tmp_path / "pdf"
    call_command(
        "reflect_report",
        "--set",
        face_set.name,
        "--out",
        str(out),
        "--resamples",
        "50",
        "--format",
        "pdf",
        verbosity=0,
    )
    pdf = out / "report.pdf"
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
    pages = int(next(line for line in info.splitlines() if line.startswith("Pages:")).split()[1])
    assert 4 <= pages <= 20
    first = subprocess.run(
        ["pdftotext", "-f", "1", "-l", "1", "-layout", str(pdf), "-"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "REFLECT audit: Faces A" in first and "Executive summary" in first
    assert "Headline findings" in first and "fake-vlm, 2AFC" in first
    assert "report.pdf" in json.loads((out / bundle.MANIFEST).read_text())["files"]


def test_a_reflect_folder_verifies_without_django(tmp_path, inputs, report):
    from tests.scoring.report.test_verify import verify_without_django

    done = verify_without_django(write_folder(tmp_path, inputs, report))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("OK:")
