"""export_metrics end to end: database rows -> frames -> study_metrics -> JSON, checked by hand
and against scikit-learn / krippendorff on the same labels."""

import json

import krippendorff
import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from sklearn.metrics import cohen_kappa_score

from annotations import services
from annotations.imports import importers
from annotations.models import Assignment, Item
from scoring.metrics import document as metrics
from tests.support.django_fixtures import manifest_line, write_manifest

pytestmark = pytest.mark.django_db

# 12 items: 4 Korean, 4 Nigerian, 4 neutral (two base prompts each); labels of two annotators.
LABELS_A = [
    "retained",
    "erased",
    None,
    "retained",
    None,
    None,
    "erased",
    "retained",
    "retained",
    "erased",
    "retained",
    "retained",
]
LABELS_B = [
    "retained",
    "erased",
    None,
    "erased",
    None,
    "retained",
    "erased",
    "retained",
    "retained",
    "retained",
    "retained",
    "retained",
]
JUDGE = [
    None,
    "erased",
    None,
    "retained",
    None,
    None,
    "retained",
    "retained",
    "retained",
    "erased",
    "erased",
    "retained",
]


@pytest.fixture
def labelled_study(study, tmp_path, annotators):
    values = (
        [("culture", "Korean")] * 4 + [("culture", "Nigerian")] * 4 + [("neutral", "neutral")] * 4
    )
    lines = []
    for i, (attribute, value) in enumerate(values):
        judgment = {"judge": "vlm@1", "hard_refusal": JUDGE[i] is None, "cue": JUDGE[i]}
        lines.append(
            manifest_line(
                f"i{i:02d}",
                attribute=attribute,
                value=value,
                base=f"bp{i % 2}",
                judgments=[judgment],
            )
        )
    lines.append(
        manifest_line(
            "gold",
            value="Korean",
            judgments=[{"judge": "vlm@1", "hard_refusal": True, "cue": None}],
        )
    )
    importers.items_import(study=study, manifest=write_manifest(tmp_path / "m", lines))
    gold = Item.objects.get(item_id="gold")
    services.item_set_gold(item=gold, hard_refusal=False, cue="retained")
    a, b = annotators[0], annotators[1]
    batch = services.batch_create(
        request=services.batch_request_build(
            study=study,
            name="b",
            policy="k_overlap",
            annotators=[a, b],
            overlap_k=2,
            seed=0,
            gold_per_annotator=1,
        )
    )
    for annotator, labels in ((a, LABELS_A), (b, LABELS_B)):
        for row in Assignment.objects.filter(batch=batch, annotator=annotator).select_related(
            "item", "batch__study"
        ):
            if row.item.is_gold:
                services.annotation_submit(
                    assignment=row, hard_refusal=True, cue_label=None
                )  # wrong on purpose
                continue
            label = labels[int(row.item.item_id[1:])]
            services.annotation_submit(assignment=row, hard_refusal=label is None, cue_label=label)
    return study


def export(study, tmp_path):
    out = tmp_path / "metrics.json"
    call_command("export_metrics", study=study.slug, out=str(out), bootstrap=200)
    text = out.read_text()
    assert "NaN" not in text and "Infinity" not in text
    return json.loads(text)


def test_human_rates_pool_annotations_by_value(labelled_study, tmp_path):
    doc = export(labelled_study, tmp_path)
    refusal = doc["rates"]["human"]["refusal"]
    # Korean items 0-3: refusals A: item 2; B: item 2 -> 2 of 8 annotations.
    assert refusal["culture"]["values"]["Korean"]["n"] == 8
    assert refusal["culture"]["values"]["Korean"]["rate"] == pytest.approx(2 / 8)
    # Nigerian items 4-7: A refuses 4, 5; B refuses 4 -> 3 of 8.
    assert refusal["culture"]["values"]["Nigerian"]["rate"] == pytest.approx(3 / 8)
    assert refusal["culture"]["delta"] == pytest.approx(1 / 8)
    assert (
        refusal["culture"]["max_value"] == "Nigerian"
        and refusal["culture"]["min_value"] == "Korean"
    )
    erasure = doc["rates"]["human"]["erasure"]["culture"]["values"]
    # Korean non-refused: A: retained, erased, retained; B: retained, erased, erased -> 3 of 6.
    assert erasure["Korean"]["n"] == 6 and erasure["Korean"]["rate"] == pytest.approx(3 / 6)
    assert "neutral" in doc["rates"]["human"]["refusal"]
    low, high = erasure["Korean"]["ci_low"], erasure["Korean"]["ci_high"]
    assert low < 0.5 < high


def test_automated_rates_use_one_judgment_per_item(labelled_study, tmp_path):
    doc = export(labelled_study, tmp_path)
    judge = doc["rates"]["auto:vlm@1"]["refusal"]["culture"]["values"]
    assert judge["Korean"]["n"] == 4 and judge["Korean"]["rate"] == pytest.approx(
        2 / 4
    )  # gold excluded
    assert judge["Nigerian"]["rate"] == pytest.approx(2 / 4)


def test_inter_annotator_agreement_matches_references(labelled_study, tmp_path):
    doc = export(labelled_study, tmp_path)
    refusal_a = [label is None for label in LABELS_A]
    refusal_b = [label is None for label in LABELS_B]
    block = doc["agreement"]["inter_annotator"]["hard_refusal"]
    assert block["n_items"] == 12
    expected = cohen_kappa_score(refusal_a, refusal_b)
    kappa = block["cohen_kappa_pairwise_mean"]
    assert (kappa["value"] if isinstance(kappa, dict) else kappa) == pytest.approx(expected)
    alpha = block["krippendorff_alpha"]
    reference = krippendorff.alpha(
        reliability_data=np.array([refusal_a, refusal_b], dtype=float),
        level_of_measurement="nominal",
    )
    assert (alpha["value"] if isinstance(alpha, dict) else alpha) == pytest.approx(reference)
    cue = doc["agreement"]["inter_annotator"]["cue"]
    both = [i for i in range(12) if LABELS_A[i] is not None and LABELS_B[i] is not None]
    assert cue["n_items"] == len(both)
    agree = np.mean([LABELS_A[i] == LABELS_B[i] for i in both])
    pa = cue["percent_agreement"]
    assert (pa["value"] if isinstance(pa, dict) else pa) == pytest.approx(agree)


def test_human_vs_judge_counts_every_annotation_judgment_pair(labelled_study, tmp_path):
    doc = export(labelled_study, tmp_path)
    block = doc["agreement"]["human_vs_auto"]["vlm@1"]["hard_refusal"]
    humans = [label is None for label in LABELS_A] + [label is None for label in LABELS_B]
    judge = [label is None for label in JUDGE] * 2
    assert block["n"] == 24
    kappa = block["cohen_kappa"]
    assert (kappa["value"] if isinstance(kappa, dict) else kappa) == pytest.approx(
        cohen_kappa_score(humans, judge)
    )
    assert set(block["by_attribute"]) == {"culture", "neutral"}


def test_gold_answers_are_scored_and_left_out(labelled_study, tmp_path):
    doc = export(labelled_study, tmp_path)
    assert [row["accuracy"] for row in doc["gold_accuracy"]] == [0.0, 0.0]
    assert doc["counts"]["gold"] == 1


def test_undefined_kappa_is_null_with_a_reason(study, tmp_path, annotators):
    lines = [manifest_line(f"i{i}", base=f"bp{i}") for i in range(3)]
    importers.items_import(study=study, manifest=write_manifest(tmp_path / "m", lines))
    batch = services.batch_create(
        request=services.batch_request_build(
            study=study,
            name="b",
            policy="k_overlap",
            annotators=annotators[:2],
            overlap_k=2,
            seed=0,
        )
    )
    for row in Assignment.objects.filter(batch=batch).select_related("batch__study"):
        services.annotation_submit(assignment=row, hard_refusal=False, cue_label="retained")
    doc = export(study, tmp_path)
    fleiss = doc["agreement"]["inter_annotator"]["hard_refusal"]["fleiss_kappa"]
    value = fleiss["value"] if isinstance(fleiss, dict) else fleiss
    assert value is None
    assert json.dumps(doc).count("reason") > 0


@pytest.mark.parametrize("flag", ["--resamples", "--bootstrap"])
def test_resamples_flag_and_its_earlier_spelling_reach_the_export(labelled_study, tmp_path, flag):
    out = tmp_path / "metrics.json"
    call_command("export_metrics", "--study", labelled_study.slug, "--out", str(out), flag, "30")
    assert json.loads(out.read_text())["meta"]["n_resamples"] == 30


def test_negative_resamples_is_one_clear_error_and_writes_nothing(labelled_study, tmp_path):
    out = tmp_path / "metrics.json"
    with pytest.raises(CommandError, match="--resamples/--bootstrap: -1 is out of range: use 0 to"):
        call_command(
            "export_metrics", "--study", labelled_study.slug, "--out", str(out), "--resamples", "-1"
        )
    assert not out.exists()


def test_dashboard_metrics_follow_every_change(batch, annotators, staff_client):
    """The cached metrics are recomputed after an answer, an edit or a gold flag changes."""
    first = metrics.metrics_document_cached(study=batch.study)
    assert (
        metrics.metrics_document_cached(study=batch.study)["generated_at"] == first["generated_at"]
    )
    assignment = Assignment.objects.filter(batch=batch).first()
    services.annotation_submit(assignment=assignment, hard_refusal=True, cue_label=None)
    second = metrics.metrics_document_cached(study=batch.study)
    assert second["counts"]["answered"] == 1
    services.item_set_gold(
        item=Item.objects.exclude(pk=assignment.item_id).first(), hard_refusal=False, cue="retained"
    )
    third = metrics.metrics_document_cached(study=batch.study)
    assert third["counts"]["gold"] == 1


def test_dashboard_validation_table_rows(batch, annotators, staff_client):
    """One row per judge, question and scope; overall rows carry inter-annotator agreement."""
    for assignment in Assignment.objects.filter(batch=batch).select_related("batch__study"):
        services.annotation_submit(assignment=assignment, hard_refusal=False, cue_label="retained")
    rows = metrics.validation_table(metrics.metrics_document(study=batch.study, n_resamples=50))
    overall = [r for r in rows if r["scope"] == "overall"]
    assert {(r["judge"], r["question"]) for r in overall} == {
        ("vlm-a@1", "hard_refusal"),
        ("vlm-a@1", "cue"),
    }
    refusal = next(r for r in overall if r["question"] == "hard_refusal")
    assert refusal["n"] == 12 and "inter_annotator_alpha" in refusal
    assert all(
        "inter_annotator_alpha" not in r or r["inter_annotator_alpha"] is None
        for r in rows
        if r["scope"] != "overall"
    )
    page = staff_client.get(
        reverse("metrics:study_statistics", args=[batch.study.slug])
    ).content.decode()
    assert "vlm-a@1" in page
