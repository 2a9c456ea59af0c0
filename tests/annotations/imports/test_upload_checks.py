"""Uploads refused in the words of their problem, once, before work is wasted (issue 36 §2):
a CSV given to import_items, a missing CSV column, TIFF/SVG/ICO files in a new study, a zip
member larger than an image may be, and upload folders nobody came back for."""

from __future__ import annotations

import io
import os
import time
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from PIL import Image

from annotations.imports.attributes import manifest_draft
from annotations.imports.manifest import ManifestInvalid
from annotations.imports.study_upload import study_upload_stage
from annotations.imports.uploads import UploadInvalid, unpack_upload, uploads_prune
from annotations.models import Item, Study

pytestmark = pytest.mark.django_db

DEFAULTS = {
    "generator": "sdxl",
    "prompt": "a doctor",
    "domain": "occupation",
    "attribute": "neutral",
    "attribute_value": "neutral",
}


def png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (16, 16), (10, 20, 30)).save(buffer, format="PNG")
    return buffer.getvalue()


def _stage_problems(tmp_path, *, names, csv=None, defaults=DEFAULTS) -> list[str]:
    images = [SimpleUploadedFile(name, png()) for name in names]
    with pytest.raises(ManifestInvalid) as refused:
        study_upload_stage(
            root=tmp_path / "uploads",
            images=images,
            csv_bytes=csv.encode() if csv is not None else None,
            defaults=defaults,
            mode="t2i",
        )
    assert not list((tmp_path / "uploads").glob("new-study-*"))  # nothing kept
    return [str(error) for error in refused.value.errors]


# --- import_items given a CSV -----------------------------------------------------------------


def test_import_items_given_a_csv_says_it_expects_jsonl_or_a_zip(tmp_path):
    path = tmp_path / "attributes.csv"
    path.write_text("image,generator\na.png,sdxl\nb.png,sdxl\n" * 20)
    with pytest.raises(CommandError) as refused:
        call_command("import_items", str(path), study="fresh", create=True, verbosity=0)
    [line] = str(refused.value).splitlines()
    assert line == (
        f"{path}: expected a JSONL manifest (.jsonl) or a .zip holding one manifest and its "
        "images, not a CSV file (docs/formats.md)"
    )
    assert not Study.objects.exists()


# --- the new study's CSV: a missing column is one line, first ----------------------------------


def test_a_missing_image_column_comes_first_and_alone(tmp_path):
    names = [f"img{i}.png" for i in range(15)]
    rows = "".join(f"x{i},sdxl\n" for i in range(15))
    problems = _stage_problems(tmp_path, names=names, csv="imag,generator\n" + rows)
    assert problems[0] == "line 1: image: column is missing: the CSV names each row's image"
    assert problems[1:] == [
        "line 1: imag: unknown column (use image, item_id, generator, prompt, base_prompt_id, "
        "domain, attribute, attribute_value, cue, source_image, intent)"
    ]  # no line per row or per image that the missing column caused


def test_a_missing_column_is_one_line_naming_it_not_one_per_row(tmp_path):
    names = [f"img{i}.png" for i in range(12)]
    csv = "image,prompt,domain,attribute,attribute_value\n" + "".join(
        f"{name},a doctor,occupation,neutral,neutral\n" for name in names
    )
    problems = _stage_problems(tmp_path, names=names, csv=csv, defaults={})
    assert problems == [
        "line 1: generator: column is missing: add it to the CSV, or give one value for all"
    ]


def test_without_a_csv_a_value_missing_from_the_form_is_one_line(tmp_path):
    defaults = {**DEFAULTS, "domain": ""}
    problems = _stage_problems(tmp_path, names=["a.png", "b.png", "c.png"], defaults=defaults)
    assert problems == ["line 0: domain: is missing: give one value for all"]


# --- formats the app does not take are listed, not dropped ---------------------------------------


def test_tiff_svg_and_ico_files_are_each_a_problem(tmp_path):
    names = ["a.png", "b.tif", "c.TIFF", "d.svg", "e.ico", "notes.txt"]
    problems = _stage_problems(tmp_path, names=names)
    assert problems == [
        f"line 0: (upload): {name} is a {kind} image, which the app does not take: convert it "
        "to PNG, JPEG, WebP, GIF or BMP, or leave it out"
        for name, kind in [
            ("b.tif", "TIFF"),
            ("c.TIFF", "TIFF"),
            ("d.svg", "SVG"),
            ("e.ico", "ICO"),
        ]
    ]


def test_the_draft_names_them_with_a_csv_too():
    csv = "image\na.png\n"
    draft = manifest_draft(
        csv_bytes=csv.encode(), members=["a.png", "x/b.svg"], defaults=DEFAULTS, mode="t2i"
    )
    assert [str(p) for p in draft.problems] == [
        "line 0: (upload): x/b.svg is a SVG image, which the app does not take: convert it to "
        "PNG, JPEG, WebP, GIF or BMP, or leave it out"
    ]


# --- a zip member larger than an image may be ---------------------------------------------------


def _zip(path, members: dict[str, bytes]):
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        for name, data in members.items():
            bundle.writestr(name, data)
    return path


def test_a_member_declared_larger_than_the_image_limit_is_refused_before_any_write(tmp_path):
    archive = _zip(
        tmp_path / "up.zip",
        {"manifest.jsonl": b"{}\n", "a.png": png(), "huge.png": b"\0" * (30 * 1024**2)},
    )
    out = tmp_path / "out"
    started = time.perf_counter()
    with pytest.raises(UploadInvalid) as refused:
        unpack_upload(archive, out, max_member_bytes=25 * 1024**2)
    assert time.perf_counter() - started < 2
    assert str(refused.value) == "up.zip: member 'huge.png' unpacks to more than 25 MiB, the limit"
    assert not [p for p in out.rglob("*") if p.is_file()]  # not a byte written


def test_the_image_limit_is_the_settings_one_on_every_path(tmp_path, settings, study):
    settings.ACRB_MAX_IMAGE_BYTES = 1024**2
    archive = _zip(
        tmp_path / "up.zip", {"manifest.jsonl": b"{}\n", "big.png": b"\0" * (2 * 1024**2)}
    )
    with pytest.raises(CommandError, match="'big.png' unpacks to more than 1 MiB, the limit"):
        call_command("import_items", str(archive), study=study.slug, verbosity=0)
    assert not Item.objects.exists()


def test_the_manifest_may_be_larger_than_an_image(tmp_path):
    manifest = b"\n" * (2 * 1024**2)  # blank lines: only its size matters here
    archive = _zip(tmp_path / "up.zip", {"manifest.jsonl": manifest, "a.png": png()})
    path = unpack_upload(archive, tmp_path / "out", max_member_bytes=1024**2)
    assert path.stat().st_size == len(manifest)


# --- upload folders nobody came back for --------------------------------------------------------


def test_abandoned_upload_folders_go_after_a_day(tmp_path, settings):
    root = tmp_path / "uploads"
    old, fresh = time.time() - 25 * 3600, time.time() - 3 * 3600
    for name, when in [
        ("upload-old", old),
        ("replace-old", old),
        ("new-study-old", old),
        ("upload-fresh", fresh),
        ("keep-me", old),
    ]:
        folder = root / name
        folder.mkdir(parents=True)
        (folder / "upload.zip").write_bytes(b"x")
        os.utime(folder, (when, when))
    removed = uploads_prune(root)
    assert sorted(p.name for p in removed) == ["new-study-old", "replace-old", "upload-old"]
    assert sorted(p.name for p in root.iterdir()) == ["keep-me", "upload-fresh"]

    settings.VAR_DIR = tmp_path
    out = io.StringIO()
    call_command("prune_uploads", "--hours", "2", stdout=out)
    assert out.getvalue().strip() == "removed 1 upload folder(s) older than 2 h"
    assert [p.name for p in root.iterdir()] == ["keep-me"]
    with pytest.raises(CommandError, match="--hours: 0.5 is out of range: use 1 to 8760"):
        call_command("prune_uploads", "--hours", "0.5")
