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
