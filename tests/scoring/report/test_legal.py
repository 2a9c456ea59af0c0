"""The legal mapping (Django-free): obligations chosen by the kind of system audited, evidence
counted from the report, and never a claim of compliance."""

from __future__ import annotations

import json

import pytest

from scoring.report.legal import SECTIONS, legal_mapping, load_obligations, obligations_for


def provisions(kind):
    return {entry["provision"] for entry in obligations_for(kind)}


def test_high_risk_maps_to_article_10_and_not_to_the_general_purpose_route():
    found = provisions("high_risk")
    for provision in (
        "Article 10(2)(f)",
        "Article 10(2)(g)",
        "Article 10(3)",
        "Article 10(4)",
        "Article 10(5)",
    ):
        assert provision in found
    assert not any("53" in p or "Annex XI" in p or "Article 50" in p for p in found)


def test_general_purpose_maps_to_article_53_annex_xi_and_article_50_not_article_10():
    found = provisions("general_purpose")
    assert any(p.startswith("Article 53(1)(a)") for p in found)
    assert any(p.startswith("Annex XI, Section 2") for p in found)
    assert "Article 50(2)" in found
    assert not any(p.startswith("Article 10") for p in found)


@pytest.mark.parametrize("kind", ["general_purpose", "high_risk", "other"])
def test_both_iso_documents_apply_to_every_kind(kind):
    instruments = {entry["instrument"] for entry in obligations_for(kind)}
    assert any("ISO/IEC TR 24027" in i for i in instruments)
    assert any("ISO/IEC TS 12791" in i for i in instruments)


def test_kind_not_stated_lists_every_route_and_an_unknown_kind_is_refused():
    assert len(obligations_for("")) == len(load_obligations()["obligations"])
    with pytest.raises(ValueError, match="unknown system kind 'robot'"):
        obligations_for("robot")


def test_the_document_is_well_formed():
    document = load_obligations()
    kinds = set(document["system_kinds"])
    ids = [entry["id"] for entry in document["obligations"]]
    assert len(ids) == len(set(ids))
    for entry in document["obligations"]:
        assert set(entry["applies_to"]) <= kinds and entry["applies_to"], entry["id"]
        assert set(entry["evidence"]) <= set(SECTIONS), entry["id"]
        assert entry["summary"] and entry["limits"], entry["id"]


MINIMAL_REPORT = {
    "study": {"system_kind": "high_risk", "intended_purpose": "rank job applicants"},
    "settings": {"alpha": 0.05, "n_resamples": 100, "n_permutations": 100},
    "counts": {"n_items": 12, "n_annotations": 20, "n_items_annotated": 10},
    "design": {"taxonomy": [{"attribute": "gender", "value": "f", "is_neutral": False}]},
    "disparities": [{"flagged": True}, {"flagged": False}],
    "regression": [{"cluster": {"fitted": True}, "gee": {"fitted": False}}],
    "validation": {"human_vs_auto": [{"judge": "vlm@1"}]},
    "limitations": [{"kind": "x", "text": "y"}],
    "people": {"groups": [{"n_annotators": 3}], "batches": [{}], "recruitment": "", "pay": "x"},
    "data_statement": {"has_plan": False},
}


def test_mapping_counts_evidence_from_the_report_and_never_claims_compliance():
    mapping = legal_mapping(MINIMAL_REPORT)
    assert mapping["system_kind"] == "high_risk" and mapping["route_note"] == ""
    by_provision = {entry["provision"]: entry for entry in mapping["obligations"]}
    assert by_provision["Article 10(2)(f)"]["evidence_lines"][0].startswith(
        "2 disparities examined; 1 flagged"
    )
    assert "1 of 2 fits defined" in by_provision["Article 10(2)(f)"]["evidence_lines"][1]
    assert by_provision["Article 10(2)(f)"]["sections"] == ["disparities", "regression"]
    text = json.dumps(mapping).lower()
    assert "not a conformity assessment" in text
    for claim in ("complies", "is compliant", "compliance is met", "conforms to"):
        assert claim not in text


def test_a_study_that_states_nothing_says_so():
    mapping = legal_mapping({**MINIMAL_REPORT, "study": {}})
    assert mapping["system_kind_label"] == "not stated"
    assert "does not state what kind of system" in mapping["route_note"]
    assert "No intended purpose" in mapping["route_note"]
    article_50 = next(e for e in mapping["obligations"] if e["provision"] == "Article 50(2)")
    assert article_50["evidence_lines"] == ["No evidence in this report (not examined)."]
