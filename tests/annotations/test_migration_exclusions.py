"""Migrations 0009-0010: a label exclusion made before exclusions were per study becomes one
exclusion in each study the annotator works in, so no statistic changes on upgrade."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

BEFORE = [("annotations", "0012_label_example")]
AFTER = [("annotations", "0014_annotator_label_exclusion_study_required")]


@pytest.mark.django_db(transaction=True)
def test_an_old_exclusion_becomes_one_per_study(batch, annotators, make_manifest):
    from annotations import services
    from annotations.imports import importers

    second = services.study_create(name="Second", slug="second")
    importers.items_import(study=second, manifest=make_manifest(folder="second"))
    services.batch_create(
        request=services.batch_request_build(
            study=second,
            name="b2",
            policy="k_overlap",
            annotators=annotators[:1],
            overlap_k=1,
            seed=1,
        )
    )
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    old.get_model("annotations", "AnnotatorLabelExclusion").objects.create(
        annotator_id=annotators[0].pk, reason="spam", excluded_at=timezone.now()
    )
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(AFTER)
    new = executor.loader.project_state(AFTER).apps
    rows = new.get_model("annotations", "AnnotatorLabelExclusion").objects.order_by("study__slug")
    found = [(r.annotator_id, r.study.slug, r.reason) for r in rows]
    # Back to the newest schema: the tests after this one share the database.
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
    assert found == [
        (annotators[0].pk, "second", "spam"),
        (annotators[0].pk, "test-study", "spam"),
    ]
