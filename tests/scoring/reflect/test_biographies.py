import json

import pytest

from scoring.reflect.biographies import BiographyFileError, leakage_flags, read_biographies


def kinds(text, **kwargs):
    return sorted({flag.kind for flag in leakage_flags(text, **kwargs)})


def test_neutral_biography_has_no_flags():
    text = (
        "The candidate has twelve years of experience leading finance teams, holds an MBA "
        "and grew revenue by 30% at the previous company. Likes black coffee."
    )
    assert leakage_flags(text) == []


@pytest.mark.parametrize(
    "text, kind",
    [
        ("She led a team of ten analysts.", "pronoun"),
        ("The candidate credits his mentor.", "pronoun"),
        ("A mother of two with an MBA.", "gendered_word"),
        ("Mr. Smith has ten years of experience.", "gendered_word"),
        ("A proud Latina engineer.", "race_or_ethnicity"),
        ("Grew up in a Korean neighbourhood.", "race_or_ethnicity"),
        ("Sarah has ten years of experience.", "name"),
        ("Name: Jordan Quill. Ten years of experience.", "name"),
        ("Contact: jq@example.com", "identifier"),
        ("A 45 years old analyst.", "identifier"),
    ],
)
def test_each_kind_of_leak_is_flagged(text, kind):
    assert kind in kinds(text)


def test_extra_names_are_flagged():
    assert kinds("Zebulon has led three teams.", extra_names=["Zebulon"]) == ["name"]


def test_read_biographies_checks_every_line(tmp_path):
    path = tmp_path / "bios.jsonl"
    path.write_text(
        "\n".join(
            [
                json.dumps({"id": "b1", "text": "Ten years in finance."}),
                json.dumps({"id": "b2", "text": "He has ten years in finance."}),
            ]
        )
        + "\n"
    )
    records = read_biographies(path, occupation="CEO")
    assert [(r.key, r.occupation, bool(r.flags)) for r in records] == [
        ("b1", "CEO", False),
        ("b2", "CEO", True),
    ]
    path.write_text('{"id": "b1", "text": ""}\nnot json\n{"id": "b3", "text": "x"}\n')
    with pytest.raises(BiographyFileError) as caught:
        read_biographies(path)
    assert len(caught.value.errors) == 3


@pytest.mark.parametrize(
    "content, words",
    [
        (b"", "the file is empty"),
        (b"  \n\n\t\n", "the file is empty"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "a binary file, not text"),
        (b"\xff\xfe{\x00}", "a binary file, not text"),
        (b'{"id": "b1", "text": "caf\xe9"}\n', "not UTF-8 text (byte 0xe9 at offset 25)"),
    ],
)
def test_a_binary_or_empty_file_is_one_line_naming_what_it_is(tmp_path, content, words):
    path = tmp_path / "bios.jsonl"
    path.write_bytes(content)
    with pytest.raises(BiographyFileError) as caught:
        read_biographies(path, occupation="CEO")
    [error] = caught.value.errors
    assert words in error and "a JSONL file of biographies is expected" in error


@pytest.mark.django_db
def test_import_biographies_takes_every_file_or_none(face_set, tmp_path):
    from django.core.management import CommandError, call_command

    from scoring.reflect.models import Biography

    good = tmp_path / "ceo.jsonl"
    good.write_text(json.dumps({"id": "b1", "text": "Ten years in finance."}) + "\n")
    for bad_content in (b"", b"\x00\x01\x02binary"):
        bad = tmp_path / "bad.jsonl"
        bad.write_bytes(bad_content)
        with pytest.raises(CommandError) as caught:
            call_command(
                "import_biographies", str(good), str(bad), "--set", face_set.name,
                "--occupation", "CEO",
            )  # fmt: skip
        [line] = str(caught.value).splitlines()
        assert line.startswith(f"{bad}: nothing was imported.")
        assert not Biography.objects.exists()  # not even the good first file
    call_command(
        "import_biographies", str(good), "--set", face_set.name, "--occupation", "CEO", verbosity=0
    )
    assert Biography.objects.count() == 1


def test_an_occupation_or_id_longer_than_its_column_is_a_line_of_the_report(tmp_path):
    from scoring.reflect.biographies import MAX_TEXT
    from scoring.reflect.models import Biography

    assert MAX_TEXT == Biography._meta.get_field("occupation").max_length
    assert MAX_TEXT == Biography._meta.get_field("key").max_length
    path = tmp_path / "bios.jsonl"
    lines = [
        {"id": "b1", "text": "Ten years in finance.", "occupation": "o" * 101},
        {"id": "i" * 130, "text": "Ten years in finance.", "occupation": "CEO"},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with pytest.raises(BiographyFileError) as caught:
        read_biographies(path)
    assert caught.value.errors == [
        "line 1: 'occupation' is 101 characters, over the limit of 100",
        "line 2: 'id' is 130 characters, over the limit of 100",
    ]
