"""The people and the data (Django-free): the annotator pool counted from answer records and
the prompt set's data statement from the plan rows."""

from __future__ import annotations

import statistics

from scoring.report.datasheet import annotator_pool, data_statement, guidelines_text, source_entry


def record(annotator, group, seconds, *, is_gold=False, batch="b1", too_fast=False):
    return {
        "annotator": annotator,
        "annotator_group": group,
        "seconds_to_answer": seconds,
        "is_gold": is_gold,
        "batch": batch,
        "too_fast": too_fast,
    }


RECORDS = [
    record("ana", "Korean", 4.0),
    record("ana", "Korean", 9.5),
    record("bo", "Korean", 6.0, too_fast=True),
    record("bo", "Korean", 12.0, is_gold=True),
    record("cy", "Nigerian", None, batch="imported"),
    record("cy", "Nigerian", None, batch="imported"),
]


def pool(**overrides):
    arguments = {
        "batches": [
            {"name": "b1", "policy": "expertise", "overlap_k": 2, "seed": 7},
            {"name": "imported", "policy": "imported", "overlap_k": 1, "seed": 0},
        ],
        "guidelines": {"sha256": "abc", "text": "Answer two questions."},
        "recruitment": "students of the partner university",
        "pay": "",
        "gold_accuracy": [
            {"annotator": "ana", "n": 4, "correct": 3},
            {"annotator": "bo", "n": 2, "correct": 2},
        ],
        "agreement_by_group": {
            "Korean": {
                "hard_refusal": {"krippendorff_alpha": 0.6},
                "cue": {"krippendorff_alpha": None, "krippendorff_alpha_reason": "one label only"},
            },
        },
    }
    return annotator_pool(RECORDS, **{**arguments, **overrides})


def test_groups_count_answers_time_gold_and_agreement():
    korean, nigerian = pool()["groups"]
    assert (korean["group"], korean["n_annotators"], korean["n_annotations"]) == ("Korean", 2, 3)
    assert korean["n_gold_annotations"] == 1 and korean["n_too_fast"] == 1
    assert korean["seconds_median"] == statistics.median([4.0, 9.5, 6.0, 12.0])
    q1, _, q3 = statistics.quantiles([4.0, 9.5, 6.0, 12.0], n=4, method="inclusive")
    assert (korean["seconds_q1"], korean["seconds_q3"]) == (q1, q3)
    # Gold accuracy pools the group's gold answers: (3 + 2) / (4 + 2).
    assert korean["gold_answered"] == 6 and korean["gold_accuracy"] == 5 / 6
    assert korean["agreement"]["hard_refusal"] == {"value": 0.6, "reason": None}
    assert korean["agreement"]["cue"] == {"value": None, "reason": "one label only"}
    assert nigerian["seconds_median"] is None and "imported" in nigerian["seconds_reason"]
    assert nigerian["gold_accuracy"] is None
    assert nigerian["agreement"]["cue"]["reason"]


def test_batches_say_how_annotators_were_matched_and_staff_fields_pass_through():
    section = pool()
    first, imported = section["batches"]
    assert "annotator group" in first["matching"] and first["seed"] == 7
    assert (first["n_answers"], first["n_annotators"], first["groups"]) == (4, 2, ["Korean"])
    assert imported["n_answers"] == 2 and "imported" in imported["matching"]
    assert section["recruitment"].startswith("students") and section["pay"] == ""


PLAN = {
    "taxonomy": {"version": 2, "attributes": {"gender": [{"value": "female"}, {"value": "male"}]}},
    "taxonomy_source": "generation/data/taxonomy.json",
    "base_prompts_source": "/tmp/uploads/my_prompts.json",
    "base_prompts_sha256": "f" * 64,
    "options": {"missing_slot": "skip"},
}
ROWS = [
    {
        "prompt_id": "p1",
        "attribute": "gender",
        "status": "planned",
        "operation": "insert",
        "slot_rule": "noun",
        "skip_reason": "",
    },
    {
        "prompt_id": "p1",
        "attribute": "gender",
        "status": "planned",
        "operation": "insert",
        "slot_rule": "noun",
        "skip_reason": "",
    },
    {
        "prompt_id": "p2",
        "attribute": "gender",
        "status": "skipped",
        "operation": "",
        "slot_rule": "",
        "skip_reason": "no person to attach the attribute to",
    },
]


def test_data_statement_counts_rows_sources_licences_and_skips():
    statement = data_statement(PLAN, ROWS)
    assert statement["has_plan"] and statement["taxonomy_version"] == "2"
    assert statement["taxonomy"] == [{"attribute": "gender", "values": ["female", "male"]}]
    assert (statement["n_planned"], statement["n_skipped"], statement["n_base_prompts"]) == (
        2,
        1,
        2,
    )
    assert statement["skipped_by_reason"] == [
        {"skip_reason": "no person to attach the attribute to", "n": 1}
    ]
    assert statement["construction"] == [{"operation": "insert", "slot_rule": "noun", "n": 2}]
    shipped, uploaded = statement["sources"]
    assert shipped["licence"].startswith("MIT")
    assert uploaded["licence"] is None and "record its licence" in uploaded["licence_reason"]


def test_without_a_plan_the_statement_says_what_is_not_recorded():
    statement = data_statement(None, [])
    assert statement == {"has_plan": False, "reason": statement["reason"]}
    assert "not recorded" in statement["reason"]


def test_shipped_sources_are_known_by_file_name():
    assert source_entry("x/OVERT_mini.csv")["licence"] == "Apache-2.0"


def test_guidelines_text_drops_tags_and_template_tags():
    html = '{% extends "b.html" %}<h1>Guide</h1><p>Answer <kbd>1</kbd> &amp; go</p>{% url "x" %}'
    assert guidelines_text(html) == "Guide\nAnswer 1 & go"


def test_guidelines_text_keeps_the_text_of_translated_strings():
    """The survey's templates wrap their text in translation tags: the report's copy of the
    guidelines must keep that text (in English), not drop it with the other tags."""
    html = (
        '<h2>{% translate "1. Is the output a refusal?" %}</h2>'
        "<p>{% blocktranslate %}Look <b>here</b> first.{% endblocktranslate %}</p>{{ study.name }}"
    )
    assert guidelines_text(html) == "1. Is the output a refusal?\nLook here first."
