"""The export files of the demo study, byte for byte: every dataset (annotations, judgments,
aggregated labels) in every format, against the files the exports wrote before the pipeline was
renamed (issue 34 §4). A change here is a change users see; update the snapshots deliberately
with ``ACRB_UPDATE_EXPORT_SNAPSHOTS=1`` and say why in the commit.
"""

import datetime as dt
import gzip
import io
import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from django.core.management import call_command
from django.urls import reverse

from annotations.models import Annotation, Study

pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

SNAPSHOTS = Path(__file__).parent / "snapshots"
FORMATS = ("csv", "jsonl", "parquet")
# (file stem, extra export_annotations arguments)
DATASETS = [
    ("annotations", ()),
    ("judgments", ("--judgments",)),
    ("labels-majority", ("--aggregate", "majority")),
    ("labels-dawid-skene", ("--aggregate", "dawid-skene")),
]
# The staff page's download of the annotations: its type and file name, as before.
CONTENT_TYPES = {
    "csv": "text/csv",
    "jsonl": "application/x-ndjson",
    "parquet": "application/vnd.apache.parquet",
}
START = dt.datetime(2026, 1, 5, 9, 0, tzinfo=dt.UTC)


@pytest.fixture
def demo_study():
    """The seeded demo study with its clock readings replaced by fixed ones, so its export is
    the same file on every run."""
    call_command("seed_demo", stdout=io.StringIO())
    study = Study.objects.get(slug="demo")
    answers = Annotation.objects.filter(assignment__item__study=study).order_by(
        "assignment__item__item_id", "assignment__annotator__user__username"
    )
    for index, pk in enumerate(answers.values_list("pk", flat=True)):
        served = START + dt.timedelta(minutes=index)
        # update(), not save(): auto_now would stamp updated_at with the clock again.
        Annotation.objects.filter(pk=pk).update(
            served_at=served,
            submitted_at=served + dt.timedelta(seconds=20),
            updated_at=served + dt.timedelta(seconds=20),
            seconds_to_answer=20.0,
        )
    return study


def export_bytes(study, tmp_path, fmt, extra) -> bytes:
    out = tmp_path / f"export.{fmt}"
    call_command(
        "export_annotations",
        "--study",
        study.slug,
        "--format",
        fmt,
        "--out",
        str(out),
        *extra,
        stdout=io.StringIO(),
    )
    return out.read_bytes()


def assert_same_parquet(written: bytes, snapshot: bytes):
    """Byte for byte from the same Parquet writer; another pyarrow version stamps its own name in
    the file, so then the same table, schema metadata included."""
    new, old = pq.ParquetFile(io.BytesIO(written)), pq.ParquetFile(io.BytesIO(snapshot))
    if new.metadata.created_by == old.metadata.created_by:
        assert written == snapshot
    else:
        assert new.read().equals(old.read(), check_metadata=True)


def test_every_demo_export_is_its_snapshot(demo_study, tmp_path, staff_client):
    # One test over every file: seeding the demo once costs seconds.
    update = os.environ.get("ACRB_UPDATE_EXPORT_SNAPSHOTS") == "1"
    compared = 0
    for stem, extra in DATASETS:
        for fmt in FORMATS:
            written = export_bytes(demo_study, tmp_path, fmt, extra)
            # Stored gzipped (mtime 0, so an update without a change changes no byte).
            snapshot = SNAPSHOTS / f"demo-{stem}.{fmt}.gz"
            if update:
                snapshot.write_bytes(gzip.compress(written, mtime=0))
            expected = gzip.decompress(snapshot.read_bytes())
            assert len(written) > 1000, snapshot.name  # an empty export would prove nothing
            if fmt == "parquet":
                assert_same_parquet(written, expected)
            else:
                assert written == expected, snapshot.name
            compared += 1
            if stem == "annotations":
                response = staff_client.get(
                    reverse("staff:export_annotations", args=[demo_study.slug, fmt])
                )
                assert response["Content-Type"] == CONTENT_TYPES[fmt]
                disposition = f'attachment; filename="demo-annotations.{fmt}"'
                assert response["Content-Disposition"] == disposition
                assert response.content == written, f"staff download, {fmt}"
    assert compared == len(DATASETS) * len(FORMATS)
