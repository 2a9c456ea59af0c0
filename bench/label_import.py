"""The label import (``importers.annotations_import``) on a 10,000-row CSV, in a scratch database.

Builds a study of ``--items`` items (no image files: the import reads none) and ``--annotators``
annotators in a fresh database (SQLite in a temporary folder by default, or ``--database-url``,
which is DROPPED and recreated for PostgreSQL), writes a labels CSV in which every annotator
labels every item (``--items`` × ``--annotators`` rows), then times the import, ``--repeats``
times after ``--warmup`` runs. Between runs the imported batch is deleted (not timed), so each
run imports into the same study. Counts the SQL statements of one import.
Prints progress lines, then one JSON line (bench/harness.py) holding ``import_s``,
``rows_per_s`` and ``queries``.

    python bench/label_import.py [--items 500] [--annotators 20] [--repeats 5]
"""

from __future__ import annotations

import argparse
import io
import random
import sys
import tempfile
import time
from pathlib import Path

from harness import Runs, emit, machine, recreate_postgres, setup_django

ROOT = Path(__file__).resolve().parents[1]
CUES = ("retained", "erased", "substituted")


class StatementCounter:
    """A ``connection.execute_wrapper`` that counts the statements sent (an executemany is one)."""

    def __init__(self):
        self.count = 0

    def __call__(self, execute, sql, params, many, context):
        self.count += 1
        return execute(sql, params, many, context)


def build_study(n_items: int, n_annotators: int):
    from annotations import services
    from annotations.models import AttributeValue, Item

    study = services.study_create(name="label import bench", slug="label-import-bench")
    value = AttributeValue.objects.create(study=study, attribute="culture", value="Korean")
    Item.objects.bulk_create(
        [
            Item(
                study=study,
                item_id=f"item-{i}",
                attribute_value=value,
                base_prompt_id=f"p{i % 50}",
                domain="food",
                generator="bench",
                mode="t2i",
            )
            for i in range(n_items)
        ],
        batch_size=5000,
    )
    for a in range(n_annotators):
        services.annotator_create(username=f"bench-ann{a}", group="Korean")
    return study


def labels_csv(n_items: int, n_annotators: int, seed: int) -> str:
    rng = random.Random(seed)
    out = io.StringIO()
    out.write("item_id,annotator,annotator_group,hard_refusal,cue\n")
    for i in range(n_items):
        for a in range(n_annotators):
            if rng.random() < 0.2:
                out.write(f"item-{i},bench-ann{a},Korean,true,\n")
            else:
                out.write(f"item-{i},bench-ann{a},Korean,false,{rng.choice(CUES)}\n")
    return out.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=500)
    parser.add_argument("--annotators", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--budget-s", type=float, default=None, help="stop after ≥ 3 runs past it")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--database-url",
        default="",
        help="postgres://... (dropped and recreated); default SQLite in a temp folder",
    )
    arguments = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="label-import-bench-")
    sys.path.insert(0, str(ROOT))
    if arguments.database_url:
        recreate_postgres(arguments.database_url)
    setup_django(
        var_dir=folder,
        database_url=arguments.database_url or f"sqlite:///{Path(folder) / 'bench.sqlite3'}",
    )
    from django.db import connection

    from annotations.imports import importers
    from annotations.models import Annotation, Batch

    study = build_study(arguments.items, arguments.annotators)
    text = labels_csv(arguments.items, arguments.annotators, arguments.seed)
    rows = arguments.items * arguments.annotators
    print(f"built {arguments.items} items, {arguments.annotators} annotators ({connection.vendor})")
    runs = Runs(repeats=arguments.repeats, warmup=arguments.warmup, budget_s=arguments.budget_s)
    for sample in runs:
        # Counted by a wrapper, not connection.queries: its log keeps only the last 9,000.
        statements = StatementCounter()
        with connection.execute_wrapper(statements):
            start = time.perf_counter()
            imported = importers.annotations_import(
                study=study, csv_text=text, source_name="bench.csv"
            )
            seconds = time.perf_counter() - start
        assert imported == rows == Annotation.objects.count(), (imported, rows)
        sample["import_s"] = seconds
        sample["rows_per_s"] = rows / seconds
        sample["queries"] = statements.count
        print(f"imported {rows} rows in {seconds:.3f} s, {statements.count} queries", flush=True)
        Batch.objects.filter(study=study).delete()
    if arguments.database_url:
        connection.close()
        recreate_postgres(arguments.database_url, create=False)
    emit(
        {
            "benchmark": "label_import",
            "timed_path": "importers.annotations_import",
            "rows": rows,
            "items": arguments.items,
            "annotators": arguments.annotators,
            "db_vendor": connection.vendor,
            **runs.summary(),
            **machine(["django", "psycopg"]),
        }
    )


if __name__ == "__main__":
    main()
