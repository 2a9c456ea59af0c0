"""One mapping from format name to writer: an unknown name is refused in one line, and every
door (the command, the staff download, its buttons) offers exactly the writers there are."""

import io

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotations.common.row_fields import Field, RowTable
from annotations.exports import writers
from annotations.exports.datasets import ExportDataset


def test_an_unknown_format_is_refused_naming_the_ones_there_are():
    with pytest.raises(writers.UnknownFormat) as refused:
        writers.writer_for("xlsx")
    assert str(refused.value) == (
        f"unknown export format 'xlsx'; use one of {', '.join(writers.FORMATS)}"
    )
    assert isinstance(refused.value, ValueError)


def test_each_writer_carries_its_name_extension_and_content_type():
    assert {"csv", "jsonl", "parquet"} <= set(writers.FORMATS) == set(writers.WRITERS)
    for name, writer in writers.WRITERS.items():
        assert writer.name == name and writers.writer_for(name) is writer
        assert writer.extension and writer.label and "/" in writer.content_type
    table = RowTable("t", (Field("a", "string", "A"),))
    assert writers.WRITERS["csv"].write(ExportDataset("t", [{"a": "x"}], table)) == b"a\r\nx\r\n"
    assert (
        writers.WRITERS["jsonl"].write(ExportDataset("t", [{"a": "x"}], table)) == b'{"a": "x"}\n'
    )


@pytest.mark.django_db
def test_the_command_and_the_staff_page_offer_the_writers(study, staff_client, tmp_path):
    with pytest.raises(CommandError, match="invalid choice: 'xlsx'"):
        call_command(
            "export_annotations",
            "--study",
            study.slug,
            "--format",
            "xlsx",
            "--out",
            str(tmp_path / "x.xlsx"),
            stdout=io.StringIO(),
        )
    page = staff_client.get(reverse("staff:study_detail", args=[study.slug])).content.decode()
    for writer in writers.WRITERS.values():
        url = reverse("staff:export_annotations", args=[study.slug, writer.name])
        assert f'href="{url}">Annotations ({writer.label})</a>' in page
        assert staff_client.get(url)["Content-Type"] == writer.content_type
    unknown = reverse("staff:export_annotations", args=[study.slug, "xlsx"])
    assert staff_client.get(unknown).status_code == 404
