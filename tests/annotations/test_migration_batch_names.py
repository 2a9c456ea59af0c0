"""Migrations 0019-0020: batch names become unique per study; duplicates made before are renamed
"name (2)", "name (3)" …, the oldest keeping its name, and imported-label batches keep theirs."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("annotations", "0018_batch_probability_sample")]
AFTER = [("annotations", "0020_batch_job_and_unique_name")]


def _migrate(target):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(target)
    return executor.loader.project_state(target).apps


@pytest.mark.django_db(transaction=True)
def test_duplicate_batch_names_are_renamed_before_they_become_unique():
    old = _migrate(BEFORE)
    study_model = old.get_model("annotations", "Study")
    batch_model = old.get_model("annotations", "Batch")
    study = study_model.objects.create(name="S", slug="s")
    other = study_model.objects.create(name="O", slug="o")
    made = [
        batch_model.objects.create(study=study, name=name, policy=policy)
        for name, policy in [
            ("round 1", "k_overlap"),
            ("round 1", "k_overlap"),
            ("round 1 (2)", "expertise"),  # the first free number is 3
            ("round 1", "manual"),
            ("imported: a.csv", "imported"),
            ("imported: a.csv", "imported"),
        ]
    ]
    batch_model.objects.create(study=other, name="round 1", policy="k_overlap")
    try:
        new = _migrate(AFTER)
        rows = new.get_model("annotations", "Batch").objects
        names = [rows.get(pk=b.pk).name for b in made]
        assert rows.get(study__slug="o").name == "round 1"
    finally:
        # Back to the newest schema: the tests after this one share the database.
        _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
    assert names == [
        "round 1",
        "round 1 (3)",
        "round 1 (2)",
        "round 1 (4)",
        "imported: a.csv",
        "imported: a.csv",
    ]
