"""Folder layout of a face set: what is accepted, and the error for everything else."""

import json

import pytest
from PIL import Image

from scoring.reflect.layout import FaceSetLayoutError, parse_image_name, read_face_set
from tests.scoring.reflect.fakes import write_face_set


def test_reads_every_template_with_its_ten_images_and_source_gender(tmp_path):
    templates = read_face_set(write_face_set(tmp_path, occupations=("CEO", "nurse")))
    assert [(t.occupation, t.template) for t in templates] == [
        ("CEO", "t0"),
        ("CEO", "t1"),
        ("nurse", "t0"),
        ("nurse", "t1"),
    ]
    assert all(len(t.images) == 10 for t in templates)
    assert [t.source_gender for t in templates] == ["female", "male", "female", "male"]
    assert {(i.race, i.gender) for i in templates[0].images} >= {("Middle Eastern", "female")}
    assert all(len(i.sha256) == 64 for i in templates[0].images)


@pytest.mark.parametrize(
    "name, race, gender",
    [
        ("Middle-Eastern_female.png", "Middle Eastern", "female"),
        ("White_male.JPG", "White", "male"),
        ("Latino_female.webp", "Latino", "female"),
    ],
)
def test_parse_image_name_accepts_protocol_spellings(name, race, gender):
    assert parse_image_name(name) == (race, gender)


@pytest.mark.parametrize(
    "name, message",
    [
        ("Middle Eastern_female.png", "unknown race 'Middle Eastern'"),
        ("middle-eastern_female.png", "unknown race 'middle-eastern'"),
        ("Hispanic_male.png", "unknown race 'Hispanic'"),
        ("White_Female.png", "unknown gender 'Female'"),
        ("White-female.png", "expected <Race>_<gender>"),
        ("White_female.gif", "extension must be one of"),
    ],
)
def test_parse_image_name_rejects_with_a_clear_reason(name, message):
    with pytest.raises(ValueError, match=message):
        parse_image_name(name)


def _errors(root):
    with pytest.raises(FaceSetLayoutError) as caught:
        read_face_set(root)
    return caught.value.errors


def test_every_problem_of_the_folder_is_listed(tmp_path):
    root = write_face_set(tmp_path / "faces")
    (root / "CEO" / "t0" / "Black_male.png").unlink()
    (root / "CEO" / "t1" / "White_Female.png").write_bytes(b"x")
    Image.new("RGB", (8, 8)).save(root / "nurse" / "t0" / "White_female.jpg")
    (root / "nurse" / "t1" / "Asian_male.png").write_bytes(b"not an image")
    (root / "CEO" / "notes.txt").write_text("hello")
    (root / "nurse" / "t1" / "template.json").write_text(json.dumps({"source_gender": "x"}))
    errors = _errors(root)
    text = "\n".join(errors)
    assert "CEO/t0/: missing Black_male" in text
    assert "CEO/t1/White_Female.png: unknown gender 'Female'" in text
    assert (
        "nurse/t0/White_female.png: second image for White female" in text
        or "nurse/t0/White_female.jpg: second image for White female" in text
    )
    assert "nurse/t1/Asian_male.png: " in text and "not a recognised image" in text
    assert "notes.txt: a file where a template folder was expected" in text
    assert "source_gender must be 'female' or 'male'" in text


def test_empty_or_missing_folder(tmp_path):
    assert "no <occupation>/<template>/ folders" in _errors(tmp_path)[0]
    assert "not a folder" in _errors(tmp_path / "absent")[0]


def test_nested_folder_inside_template_is_an_error(tmp_path):
    root = write_face_set(tmp_path / "faces", occupations=("CEO",), templates_per_occupation=1)
    (root / "CEO" / "t0" / "extra").mkdir()
    assert any("unexpected folder inside a template" in e for e in _errors(root))


def test_qc_flags_in_template_json_reach_the_images(tmp_path):
    root = write_face_set(tmp_path / "faces", occupations=("CEO",), templates_per_occupation=1)
    (root / "CEO" / "t0" / "template.json").write_text(
        json.dumps({"source_gender": "male", "qc_flags": {"Black_male": ["leaks_outside_face"]}})
    )
    images = {(i.race, i.gender): i for i in read_face_set(root)[0].images}
    assert images[("Black", "male")].qc_flags == ("leaks_outside_face",)
    assert images[("White", "male")].qc_flags == ()
    (root / "CEO" / "t0" / "template.json").write_text(json.dumps({"qc_flags": {"Blue_male": []}}))
    assert any("qc_flags must map" in e for e in _errors(root))


@pytest.mark.django_db
def test_flagged_image_is_stored_but_not_asked_about(tmp_path):
    from scoring.reflect import selectors, services
    from scoring.reflect.models import FaceImage

    root = write_face_set(tmp_path / "faces", occupations=("CEO",), templates_per_occupation=1)
    (root / "CEO" / "t0" / "template.json").write_text(
        json.dumps({"qc_flags": {"Black_male": ["low_ratio"]}})
    )
    face_set = services.face_set_import(folder=root, name="qc")
    flagged = FaceImage.objects.get(race="Black", gender="male")
    assert flagged.qc_flags == ["low_ratio"] and not flagged.accepted
    assert len(selectors.image_refs(face_set=face_set)) == 9
    again = services.face_set_import(folder=root, name="qc")  # idempotent
    assert again == face_set and FaceImage.objects.count() == 10


def write_manifest(root, rows):
    lines = ["occupation,template,race,gender,image,source_gender,qc_flags"]
    lines += [",".join(row) for row in rows]
    (root / "manifest.csv").write_text("\n".join(lines) + "\n")
    return root / "manifest.csv"


def manifest_rows(root, occupation="CEO", template="t0"):
    from scoring.reflect.protocol import race_slug
    from scoring.stats.reflect.vocabulary import GROUPS

    return [
        [
            occupation,
            template,
            race,
            gender,
            f"{occupation}/{template}/{race_slug(race)}_{gender}.png",
            "male",
            "",
        ]
        for race, gender in GROUPS
    ]


def test_manifest_gives_the_same_records_as_the_folder(tmp_path):
    from scoring.reflect.manifest import read_manifest

    root = write_face_set(tmp_path / "faces", occupations=("CEO",), templates_per_occupation=1)
    from_folder = read_face_set(root)[0]
    rows = manifest_rows(root)
    rows[3][-1] = "low_ratio;no_face"
    templates = read_manifest(write_manifest(root, rows))
    assert [(t.occupation, t.template, t.source_gender) for t in templates] == [
        ("CEO", "t0", "male")
    ]
    assert [i.sha256 for i in templates[0].images] == [i.sha256 for i in from_folder.images]
    assert templates[0].images[3].qc_flags == ("low_ratio", "no_face")
    assert templates[0].images[8].race == "Middle Eastern"


def test_manifest_lists_every_problem(tmp_path):
    from scoring.reflect.manifest import read_manifest

    root = write_face_set(tmp_path / "faces", occupations=("CEO",), templates_per_occupation=1)
    rows = manifest_rows(root)
    rows[0][2] = "Hispanic"
    rows[1][3] = "Male"
    rows[2][4] = "CEO/t0/absent.png"
    rows.append(list(rows[5]))
    with pytest.raises(FaceSetLayoutError) as caught:
        read_manifest(write_manifest(root, rows))
    text = "\n".join(caught.value.errors)
    assert "line 2: unknown race 'Hispanic'" in text
    assert "line 3: unknown gender 'Male'" in text
    assert "line 4: image file not found" in text
    assert "line 12: second image for CEO/t0 Asian male" in text
    assert "CEO/t0: missing White female, White male, Black female" in text


@pytest.mark.django_db
def test_import_face_set_from_a_manifest(tmp_path):
    from django.core.management import call_command
    from django.core.management.base import CommandError

    from generation.models import FaceTemplate

    root = write_face_set(tmp_path / "faces", occupations=("CEO",), templates_per_occupation=1)
    manifest = write_manifest(root, manifest_rows(root))
    call_command("import_face_set", "--manifest", str(manifest), "--set", "M", verbosity=0)
    template = FaceTemplate.objects.get()
    assert template.source_gender == "male" and template.images.count() == 10
    with pytest.raises(CommandError, match="give a folder or --manifest"):
        call_command("import_face_set", str(root), "--manifest", str(manifest), "--set", "M")
