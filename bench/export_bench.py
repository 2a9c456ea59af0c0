"""export_metrics end to end on a real database: 25,000 items, 2 judges, 12 annotators over 450 items.

Builds the study with bulk inserts into a fresh database (SQLite in a temporary folder by
default, or ``--database-url``, which is DROPPED and recreated for PostgreSQL), then times the
``export_metrics`` command (``call_command``, as a user runs it): the database reads,
``study_metrics`` and writing the JSON, ``--repeats`` times after ``--warmup`` runs.
Prints progress lines, then one JSON line (bench/harness.py) holding ``export_s``.

    python bench/export_bench.py [--items 25000] [--repeats 5] [--database-url postgres://...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import Runs, emit, machine, recreate_postgres

ROOT = Path(__file__).resolve().parents[1]


def _cue(value) -> str:
    """pandas 3 holds a missing cue as NaN in a string column: store it as no label."""
    return value if isinstance(value, str) else ""


def build_study(n_items: int, seed: int):
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from annotations import services
    from annotations.models import (
        Annotation,
        Annotator,
        Assignment,
        AttributeValue,
        AutomatedJudgment,
        Batch,
        Item,
    )
    from scoring.stats.synthetic_study import synthetic_study

    annotations, judgments = synthetic_study(
        n_items=n_items, n_annotators=12, n_annotated_items=450, overlap=2, seed=seed
    )
    study = services.study_create(name="export bench", slug="export-bench")
    item_frame = judgments.drop_duplicates("item_id")
    values = {
        key: AttributeValue.objects.create(
            study=study, attribute=key[0], value=key[1], is_neutral=key[0] == "neutral"
        )
        for key in set(zip(item_frame["attribute"], item_frame["attribute_value"], strict=True))
    }
    rows = item_frame.to_dict("records")
    Item.objects.bulk_create(
        [
            Item(
                study=study,
                item_id=r["item_id"],
                attribute_value=values[(r["attribute"], r["attribute_value"])],
                base_prompt_id=r["base_prompt_id"],
                domain=r["domain"],
                generator=r["generator"],
                mode=r["mode"],
            )
            for r in rows
        ],
        batch_size=5000,
    )
    pk = dict(Item.objects.filter(study=study).values_list("item_id", "pk"))
    AutomatedJudgment.objects.bulk_create(
        [
            AutomatedJudgment(
                item_id=pk[r["item_id"]],
                judge=r["judge"].split("@")[0],
                judge_version=r["judge"].split("@")[1],
                hard_refusal=bool(r["hard_refusal"]),
                cue_label=_cue(r["cue"]),
            )
            for r in judgments.to_dict("records")
        ],
        batch_size=5000,
    )
    user_model = get_user_model()
    people = {}
    for name, group in (
        annotations[["annotator", "annotator_group"]].drop_duplicates().itertuples(index=False)
    ):
        people[name] = Annotator.objects.create(
            user=user_model.objects.create(username=name), group=group
        )
    batch = Batch.objects.create(study=study, name="bench", policy="k_overlap")
    now = timezone.now()
    records = annotations.to_dict("records")
    # bulk_create sets the primary keys (RETURNING on PostgreSQL and SQLite ≥ 3.35).
    assignments = Assignment.objects.bulk_create(
        [
            Assignment(
                batch=batch,
                item_id=pk[r["item_id"]],
                annotator=people[r["annotator"]],
                position=position,
                answered_at=now,
            )
            for position, r in enumerate(records)
        ],
        batch_size=5000,
    )
    Annotation.objects.bulk_create(
        [
            Annotation(
                assignment=assignment,
                hard_refusal=bool(r["hard_refusal"]),
                cue_label=_cue(r["cue"]),
                submitted_at=now,
                updated_at=now,
            )
            for assignment, r in zip(assignments, records, strict=True)
        ],
        batch_size=5000,
    )
    return study, len(annotations), len(judgments)


def run(arguments) -> dict:
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    start = time.perf_counter()
    study, n_annotations, n_judgments = build_study(arguments.items, arguments.seed)
    print(
        f"built {arguments.items} items, {n_judgments} judgments, {n_annotations} annotations in "
        f"{time.perf_counter() - start:.1f} s ({connection.vendor})",
        flush=True,
    )
    out = Path(tempfile.mkdtemp()) / "metrics.json"
    runs = Runs(repeats=arguments.repeats, warmup=arguments.warmup, budget_s=arguments.budget_s)
    for sample in runs:
        start = time.perf_counter()
        call_command("export_metrics", study=study.slug, out=str(out), verbosity=0)
        sample["export_s"] = time.perf_counter() - start
        print(f"export_metrics: {sample['export_s']:.3f} s", flush=True)
    return {
        "items": arguments.items,
        "annotations": n_annotations,
        "judgments": n_judgments,
        "db_vendor": connection.vendor,
        "json_bytes": out.stat().st_size,
        **runs.summary(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=25_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--budget-s", type=float, default=None, help="stop after ≥ 3 runs past it")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--database-url",
        default="",
        help="postgres://... (dropped and recreated); default SQLite in a temp folder",
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.child:
        print(json.dumps(run(arguments)))
        return
    with tempfile.TemporaryDirectory(prefix="export-bench-") as folder:
        env = dict(os.environ, ACRB_VAR_DIR=folder, DJANGO_SETTINGS_MODULE="acrb_web.settings")
        env.pop("DATABASE_URL", None)
        if arguments.database_url:
            recreate_postgres(arguments.database_url)
            env["DATABASE_URL"] = arguments.database_url
        command = [
            sys.executable,
            __file__,
            "--child",
            "--items",
            str(arguments.items),
            "--repeats",
            str(arguments.repeats),
            "--warmup",
            str(arguments.warmup),
            *(["--budget-s", str(arguments.budget_s)] if arguments.budget_s else []),
            "--seed",
            str(arguments.seed),
        ]
        result = subprocess.run(
            command, env=env, cwd=ROOT, capture_output=True, text=True, check=False
        )
        progress = result.stdout.rstrip("\n").splitlines()[:-1]  # the last line is the JSON
        sys.stdout.write("".join(f"{line}\n" for line in progress))
        if result.returncode != 0:
            sys.stderr.write(result.stderr)
            raise SystemExit(result.returncode)
        figures = json.loads(result.stdout.strip().splitlines()[-1])
        if arguments.database_url:
            recreate_postgres(arguments.database_url, create=False)
    emit(
        {
            "benchmark": "export_bench",
            "timed_path": "manage.py export_metrics (call_command)",
            **figures,
            **machine(["django", "numpy", "pandas", "scipy", "psycopg"]),
        }
    )


if __name__ == "__main__":
    main()
