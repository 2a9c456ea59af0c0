"""The judgments and cache rows study_score writes with ``rows_upsert`` are the rows the ORM's
``bulk_create(update_conflicts=True)`` wrote, column for column (timestamps aside: the ORM
takes one per row). Run on SQLite by default and on PostgreSQL with DATABASE_URL set."""

from __future__ import annotations

from dataclasses import fields

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from annotations.common.bulk import rows_upsert
from annotations.models import AutomatedJudgment
from scoring import services
from scoring.judges.records import JudgmentOutput
from scoring.models import JudgeResponse
from tests.scoring.conftest import add_item

pytestmark = pytest.mark.django_db

STAMPS = {"id", "created_at", "updated_at"}


def _outputs(items, *, rerun: bool = False) -> list[JudgmentOutput]:
    """Every kind of row: a CLIP verdict, an error, a cue label, an unparsed answer, and an
    ensemble with its members (text with quotes and non-ASCII, floats, nested evidence)."""
    a, b, c, d, e = (str(item.pk) for item in items)
    clip = {
        "check": "clip",
        "fired": rerun,
        "refusal_similarity": 0.2718281828459045,
        "tau": 0.25,
        "refusal_description": 'a plain white "empty" image — é',
    }
    member = JudgmentOutput(e, "rules", "1", label="refusal", confidence=1.0)
    return [
        JudgmentOutput(
            a,
            "hard",
            "1",
            label="refusal" if rerun else "not_refusal",
            evidence={"reason": None, "checks": [clip], "fired": []},
            needs_review=True,
        ),
        JudgmentOutput(b, "hard", "1", error="ImageLoadError: corrupt ü", needs_review=True),
        JudgmentOutput(c, "cue", "2", label="retained", confidence=0.75),
        JudgmentOutput(d, "cue", "2", label="invalid", evidence={"answer": "maybe\n🙂"}),
        JudgmentOutput(
            e,
            "ensemble",
            "3",
            label="refusal",
            confidence=0.5,
            member_outputs=[member],
            cached=rerun,
        ),
    ]


def _orm_store(items, outputs) -> None:
    """What judgments_store and the response cache wrote before: bulk_create upserts."""
    by_id = {str(item.pk): item for item in items}
    rows = []
    for output in outputs:
        for member in (*output.member_outputs, output):
            values = {"score": None, "cue_label": ""} | services.judgment_fields(member)
            values["cue_label"] = values["cue_label"] or ""
            rows.append(AutomatedJudgment(item=by_id[output.item_id], **values))
    AutomatedJudgment.objects.bulk_create(
        rows,
        update_conflicts=True,
        unique_fields=["item", "judge", "judge_version"],
        update_fields=services.JUDGMENT_UPDATE_FIELDS,
    )
    responses = [
        JudgeResponse(
            key=f"k{o.item_id}",
            judge=o.judge_name,
            judge_version=o.judge_version,
            response=o.to_dict(),
        )
        for o in outputs
        if o.error is None
    ]
    JudgeResponse.objects.bulk_create(
        responses,
        update_conflicts=True,
        unique_fields=["key"],
        update_fields=["judge", "judge_version", "response"],
    )


def _bulk_store(items, outputs) -> None:
    services.RESPONSE_CACHE.set_many(
        {f"k{o.item_id}": o.to_dict() for o in outputs if o.error is None}
    )
    services.judgments_store(items=items, outputs=outputs)


def _table(model) -> list[tuple]:
    """Every column of every row as the database returns it (JSON as stored: text on SQLite),
    timestamps checked for presence and left out."""
    columns = [f.column for f in model._meta.concrete_fields]
    order = "item_id, judge" if model is AutomatedJudgment else "key"
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {', '.join(columns)} FROM {model._meta.db_table} ORDER BY {order}")
        rows = cursor.fetchall()
    kept = [i for i, name in enumerate(columns) if name not in STAMPS]
    stamps = [i for i, name in enumerate(columns) if name in {"created_at", "updated_at"}]
    assert all(row[i] is not None for row in rows for i in stamps)
    return [tuple(row[i] for i in kept) for row in rows]


def _written(store, items) -> tuple[list, list]:
    AutomatedJudgment.objects.all().delete()
    JudgeResponse.objects.all().delete()
    store(items, _outputs(items))
    first = (_table(AutomatedJudgment), _table(JudgeResponse))
    store(items, _outputs(items, rerun=True))  # every row now conflicts: the update path
    return first, (_table(AutomatedJudgment), _table(JudgeResponse))


def test_the_bulk_write_stores_what_the_orm_stored(study):
    items = [add_item(study, f"i{index}") for index in range(5)]
    orm = _written(_orm_store, items)
    bulk = _written(_bulk_store, items)
    assert bulk == orm
    (judgments, responses), (updated, _) = bulk
    assert len(judgments) == 6 and len(responses) == 4  # the member's row; errors not cached
    assert updated != judgments


def test_a_rerun_updates_the_timestamp_and_keeps_the_creation_time(study):
    item = add_item(study, "i0")
    output = JudgmentOutput(str(item.pk), "hard", "1", label="not_refusal")
    started = timezone.now()
    services.judgments_store(items=[item], outputs=[output])
    first = AutomatedJudgment.objects.get()
    services.judgments_store(items=[item], outputs=[output])
    again = AutomatedJudgment.objects.get()
    assert started <= first.created_at == first.updated_at
    assert (again.pk, again.created_at) == (first.pk, first.created_at)
    assert again.updated_at >= first.updated_at


def test_to_dict_lists_every_field_in_order():
    output = JudgmentOutput("1", "j", "1", member_outputs=[JudgmentOutput("1", "m", "1")])
    data = output.to_dict()
    assert list(data) == [f.name for f in fields(JudgmentOutput)]
    assert data["member_outputs"] == [JudgmentOutput("1", "m", "1").to_dict()]
    assert JudgmentOutput.from_dict(data) == output


def test_a_missing_json_value_is_refused_as_the_orm_refuses_it(study):
    # None goes to the database as NULL (the ORM's way), so a NOT NULL JSON column refuses it
    # instead of storing the JSON text "null".
    with pytest.raises(IntegrityError), transaction.atomic():
        rows_upsert(
            JudgeResponse,
            [("k-none", "j", "1", None)],
            fields=["key", "judge", "judge_version", "response"],
            unique_fields=["key"],
            update_fields=["response"],
        )
    assert not JudgeResponse.objects.filter(key="k-none").exists()
