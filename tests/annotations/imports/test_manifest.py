"""Manifest parsing: every bad line is named by line number and field; good lines become records."""

import json

import pytest
from PIL import Image

from annotations.imports.manifest import (
    ImageLimits,
    ManifestInvalid,
    parse_annotation_csv,
    parse_manifest,
)
from tests.support.django_fixtures import manifest_line, write_image, write_manifest

LIMITS = ImageLimits(max_bytes=1_000_000, max_pixels=1_000_000)


def _errors(path, limits=LIMITS):
    with pytest.raises(ManifestInvalid) as info:
        parse_manifest(path, limits)
    return [(e.line, e.field, e.message) for e in info.value.errors]


def test_valid_manifest_parses_into_records(tmp_path):
    write_image(tmp_path / "a.png")
    path = write_manifest(
        tmp_path,
        [
            manifest_line(
                "x1",
                image="a.png",
                judgments=[
                    {"judge": "clip@2", "hard_refusal": False, "cue": "erased", "score": 0.1}
                ],
            ),
            manifest_line(
                "x2",
                image=None,
                attribute="neutral",
                value="neutral",
                provider_refusal={"code": "content_policy", "message": "blocked"},
            ),
        ],
    )
    first, second = parse_manifest(path, LIMITS)
    assert first.image == (tmp_path / "a.png").resolve() and len(first.image_sha256) == 64
    assert (
        first.judgments[0].judge == "clip"
        and first.judgments[0].judge_version == "2"
        and first.judgments[0].cue == "erased"
    )
    assert second.image is None and second.provider_refusal_code == "content_policy"


def test_every_problem_is_reported_with_line_and_field(tmp_path):
    write_image(tmp_path / "ok.png")
    lines = [
        json.dumps(manifest_line("a", image="ok.png")),
        "{not json",
        json.dumps(manifest_line("b", image="../outside.png")),
        json.dumps(manifest_line("c", image="/etc/passwd")),
        json.dumps(manifest_line("d", image="missing.png")),
        json.dumps(
            manifest_line("e", judgments=[{"judge": "j", "hard_refusal": False, "cue": "vanished"}])
        ),
        json.dumps(manifest_line("a", image="ok.png")),
        json.dumps(manifest_line("f", mode="video")),
        json.dumps(manifest_line("g", attribute="neutral", value="Korean")),
        json.dumps({k: v for k, v in manifest_line("h").items() if k != "domain"}),
    ]
    (tmp_path / "manifest.jsonl").write_text("\n".join(lines) + "\n")
    errors = _errors(tmp_path / "manifest.jsonl")
    by_line = {line: (field, message) for line, field, message in errors}
    assert by_line[2][0] == "(json)"
    assert by_line[3][0] == "image" and "escapes" in by_line[3][1]
    assert by_line[4][0] == "image" and "absolute" in by_line[4][1]
    assert by_line[5][0] == "image" and "does not exist" in by_line[5][1]
    assert by_line[6][0] == "judgments[0].cue" and "vanished" in by_line[6][1]
    assert by_line[7][0] == "item_id" and "line 1" in by_line[7][1]
    assert by_line[8][0] == "mode"
    assert by_line[9][0] == "attribute_value"
    assert by_line[10] == ("domain", "is required")
    assert 1 not in by_line


def test_symlink_escaping_the_folder_is_refused(tmp_path):
    outside = write_image(tmp_path / "outside.png")
    (tmp_path / "bundle").mkdir()
    (tmp_path / "bundle" / "link.png").symlink_to(outside)
    path = write_manifest(tmp_path / "bundle", [manifest_line("a", image="link.png")])
    assert "escapes" in _errors(path)[0][2]


def test_corrupt_and_non_image_files_are_refused(tmp_path):
    (tmp_path / "corrupt.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 50)
    (tmp_path / "text.png").write_text("hello")
    (tmp_path / "empty.png").write_bytes(b"")
    path = write_manifest(
        tmp_path,
        [
            manifest_line("a", image="corrupt.png"),
            manifest_line("b", image="text.png"),
            manifest_line("c", image="empty.png"),
        ],
    )
    errors = _errors(path)
    assert all(field == "image" for _, field, _ in errors)
    assert (
        "not an image we can read" in errors[0][2]
        and "not an image we can read" in errors[1][2]
        and "empty" in errors[2][2]
    )
    # The user's words, never Pillow's class names or memory addresses (issue 36 §2).
    assert errors[1][2] == "text.png is not an image we can read (PNG, JPEG, WebP, GIF or BMP)"
    for _, _, message in errors:
        assert "Error" not in message and "0x" not in message and "BytesIO" not in message


def test_oversized_and_decompression_bomb_images_are_refused(tmp_path):
    Image.new("L", (2000, 2000)).save(tmp_path / "huge.png")  # 4 Mpx, compresses to a few kB
    path = write_manifest(tmp_path, [manifest_line("a", image="huge.png")])
    assert (
        "over the limit"
        in _errors(path, ImageLimits(max_bytes=10_000_000, max_pixels=1_000_000))[0][2]
    )
    assert (
        "bytes, over the limit" in _errors(path, ImageLimits(max_bytes=100, max_pixels=10**9))[0][2]
    )


def test_empty_manifest_is_an_error(tmp_path):
    (tmp_path / "manifest.jsonl").write_text("\n\n")
    assert _errors(tmp_path / "manifest.jsonl")[0][2] == "the manifest has no items"


def test_annotation_csv_parses_and_rejects_bad_rows():
    good = "item_id,annotator,annotator_group,hard_refusal,cue\nx1,alice,Korean,false,retained\nx2,alice,Korean,true,\n"
    records = parse_annotation_csv(good)
    assert [(r.item_id, r.hard_refusal, r.cue) for r in records] == [
        ("x1", False, "retained"),
        ("x2", True, None),
    ]
    bad = (
        "item_id,annotator,annotator_group,hard_refusal,cue\n"
        "x1,alice,,maybe,retained\nx2,alice,,false,gone\nx3,alice,,true,erased\nx4,,,false,retained\nx5,bob,,false,erased\nx5,bob,,false,erased\n"
    )
    with pytest.raises(ManifestInvalid) as info:
        parse_annotation_csv(bad)
    found = [(e.line, e.field) for e in info.value.errors]
    assert found == [
        (2, "hard_refusal"),
        (3, "cue"),
        (4, "cue"),
        (5, "annotator"),
        (7, "annotator"),
    ]


def test_annotation_csv_missing_columns_are_one_line():
    with pytest.raises(ManifestInvalid) as info:
        parse_annotation_csv("item_id,annotator,hard_refusal\nx1,alice,true\nx2,bob,false\n")
    assert [str(e) for e in info.value.errors] == [
        "line 1: (header): missing column(s) annotator_group, cue; "
        "expected item_id, annotator, annotator_group, hard_refusal, cue"
    ]
