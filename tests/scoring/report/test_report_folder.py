"""The report in the app: the legal route follows the study's
system kind (and an edit refreshes the cached page), the people and the data are documented,
and ``audit_report --out`` writes a folder that ``verify_report`` recomputes, and fails once a
raw row is changed."""

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from annotations import selectors
from generation.models import PlannedPrompt, StudyPlan
from scoring.report import bundle

pytestmark = pytest.mark.django_db


def page(client, study) -> str:
    response = client.get(reverse("report:study_report", args=[study.slug]))
    assert response.status_code == 200
    return response.content.decode()


def test_the_page_maps_evidence_by_system_kind_and_refreshes_after_an_edit(
    answered_study, staff_client, fast_report
):
    text = page(staff_client, answered_study)
    assert "does not state what kind of system" in text and "Article 53(1)(a)" in text
    answered_study.system_kind = "high_risk"
    answered_study.intended_purpose = "screen applicants for a salary band"
    answered_study.save()
    text = page(staff_client, answered_study)
    assert "Article 10(2)(f)" in text and "Article 10(5)" in text and "ISO/IEC TS 12791" in text
    assert "Article 53(1)(a)" not in text and "screen applicants for a salary band" in text
    assert "not a conformity assessment" in text
    answered_study.system_kind = "general_purpose"
    answered_study.save()
    text = page(staff_client, answered_study)
    assert "Article 53(1)(a)" in text and "Article 50(2)" in text and "Article 10(2)(f)" not in text


def test_the_page_documents_the_people_and_the_data(answered_study, staff_client, fast_report):
    answered_study.annotator_recruitment = "two bilingual students per culture"
    answered_study.save()
    PlannedPrompt.objects.create(
        study=answered_study,
        plan_id="p9-culture-x",
        prompt_id="p9",
        domain="sport",
        attribute="culture",
        value="Korean",
        status="skipped",
        skip_reason="no person in the prompt",
    )
    StudyPlan.objects.create(
        study=answered_study,
        taxonomy={"version": 1, "attributes": {}},
        taxonomy_source="generation/data/taxonomy.json",
        base_prompts_source="shipped default",
    )
    text = page(staff_client, answered_study)
    for expected in (
        "The people: annotator pool",
        "two bilingual students per culture",
        "Pay</dt><dd>not stated",
        "Text of the guidelines",
        "Is the output a refusal?",
        "k-overlap balanced random",
        "The data: statement for the prompt set",
        "no person in the prompt",
        "ACRB benign-but-boundary base prompts",
    ):
        assert expected in text, expected


def test_the_folder_verifies_and_a_changed_row_fails(answered_study, tmp_path, capsys):
    out = tmp_path / "report"
    call_command(
        "audit_report", study=answered_study.slug, out=out, bootstrap=50, permutations=20, seed=4
    )
    manifest = json.loads((out / bundle.MANIFEST).read_text())
    assert {
        "report.json",
        "report.html",
        "data/annotations.jsonl",
        "data/judgments.jsonl",
        "data/planned_prompts.jsonl",
        "data/items.jsonl",
        "data/judgment_log.jsonl",
        "data/context.json",
    } <= set(manifest["files"])
    assert manifest["seeds"] == {"report": 4, "batches": {"b1": 1}}
    assert manifest["settings"]["n_permutations"] == 20 and manifest["packages"]["Django"]
    report = json.loads((out / "report.json").read_text())
    assert report["validation"]["gold_accuracy"] == selectors.gold_accuracy(study=answered_study)
    assert report["people"]["batches"][0]["policy"] == "k_overlap"
    assert {row["value"]: row["n_items"] for row in report["design"]["taxonomy"]} == {
        "Korean": 2,
        "Nigerian": 2,
        "US": 1,
    }

    capsys.readouterr()
    call_command("verify_report", str(out))
    assert "OK: every hash and every number" in capsys.readouterr().out

    path = out / "data" / "annotations.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    changed = next(row for row in rows if not row["is_gold"] and not row["hard_refusal"])
    changed.update(hard_refusal=True, cue=None)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    with pytest.raises(CommandError, match="FAILED"):
        call_command("verify_report", str(out))
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("hash mismatch: data/annotations.jsonl")
    assert any(line.startswith("mismatch: rates.human.refusal") for line in lines)


def test_verify_report_names_a_missing_folder_in_one_line(tmp_path):
    with pytest.raises(CommandError, match=r"nowhere: not a folder$"):
        call_command("verify_report", str(tmp_path / "nowhere"))


def test_staff_set_the_audit_context_in_the_admin(study, client, django_user_model):
    admin = django_user_model.objects.create_superuser(username="root", password="pw-for-tests-1")
    client.force_login(admin)
    url = reverse("admin:annotations_study_change", args=[study.pk])
    page = client.get(url).content.decode()
    for field in ("system_kind", "intended_purpose", "annotator_recruitment", "annotator_pay"):
        assert f'name="{field}"' in page, field
    form = {
        "name": study.name,
        "slug": study.slug,
        "mode": study.mode,
        "overlap_k": 2,
        "label_scheme": "[]",
        "description": "",
        "min_seconds_per_item": 0,
        "system_kind": "high_risk",
        "intended_purpose": "pay decisions",
        "annotator_recruitment": "",
        "annotator_pay": "EUR 15 per hour",
    }
    response = client.post(url, form)
    assert response.status_code == 302, response.content.decode()[:2000]
    study.refresh_from_db()
    assert (study.system_kind, study.annotator_pay) == ("high_risk", "EUR 15 per hour")
    form["system_kind"] = "robot"
    assert client.post(url, form).status_code == 200  # the form shows the error
    study.refresh_from_db()
    assert study.system_kind == "high_risk"
