"""Scoring reads: the judges page's counts agree with what a scoring run reports."""

import pytest

from annotations.models import AutomatedJudgment
from scoring import selectors
from scoring.judges.records import JudgmentOutput
from scoring.services import ScoreSummary, judgment_fields
from tests.scoring.conftest import add_item

pytestmark = pytest.mark.django_db


def output(item_id, label, *, error=None):
    return JudgmentOutput(
        item_id=item_id, judge_name="cue-vlm", judge_version="1", label=label, error=error
    )


def test_judgment_counts_count_invalid_as_the_score_summary_does(study):
    """A cue judge's valid verdicts leave hard_refusal empty; only label "invalid" is invalid."""
    outputs = [
        output("item-0", "retained"),
        output("item-1", "erased"),
        output("item-2", "invalid"),
        output("item-3", None, error="corrupt image"),
    ]
    summary = ScoreSummary(judge="cue-vlm", judge_version="1")
    for out in outputs:
        item = add_item(study, out.item_id)
        AutomatedJudgment.objects.create(item=item, **judgment_fields(out))
        summary.add(out)
    (row,) = selectors.judgment_counts(study=study)
    assert (row["total"], row["invalid"], row["errors"], row["refusals"]) == (4, 1, 1, 0)
    assert (row["invalid"], row["errors"]) == (summary.invalid, summary.errors)
