"""Gold items at a configured rate, through the service and the command."""

import pytest
from django.core.management import CommandError, call_command

from annotations import services
from annotations.imports import importers
from annotations.models import Assignment, Batch, Item

pytestmark = pytest.mark.django_db


def test_batch_with_a_gold_rate(study, annotators, make_manifest):
    imported_study = study
    importers.items_import(study=study, manifest=make_manifest(n=24))
    for item in Item.objects.filter(study=study).order_by("pk")[:4]:
        services.item_set_gold(item=item, hard_refusal=False, cue="retained")
    batch = services.batch_create(
        request=services.batch_request_build(
            study=imported_study,
            name="g",
            policy="k_overlap",
            annotators=annotators[:2],
            overlap_k=2,
            seed=5,
            gold_rate=0.1,
        )
    )
    for annotator in annotators[:2]:
        queue = Assignment.objects.filter(batch=batch, annotator=annotator)
        regular = queue.filter(item__is_gold=False).count()
        assert queue.filter(item__is_gold=True).count() == round(0.1 * regular / 0.9)
    assert batch.params["gold_rate"] == 0.1


def test_command_refuses_a_bad_rate(imported_study, annotators):
    with pytest.raises(CommandError, match="--gold-rate: 1.5 is out of range"):
        call_command(
            "create_batch",
            "--study",
            imported_study.slug,
            "--name",
            "x",
            "--annotators",
            "ann0,ann1",
            "--gold-rate",
            "1.5",
        )
    assert not Batch.objects.exists()
