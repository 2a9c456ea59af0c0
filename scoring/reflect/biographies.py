"""Candidate biographies for the salary task: JSONL parsing and the demographic-leakage check.

Django-free. A biography must not reveal the candidate's race or gender, or the face would
not be the only thing that varies. The check flags (never silently edits):

- ``pronoun``: gendered pronouns (he, she, his, hers, himself, ...);
- ``gendered_word``: man, woman, husband, mother, Mr., Ms., ...;
- ``race_or_ethnicity``: the protocol's races and common ethnicity / nationality words;
- ``name``: a first name from a small built-in list, a ``Name:`` field, or a name the caller
  lists (``extra_names``);
- ``identifier``: e-mail addresses, phone numbers, URLs, birth dates and ages.

A flagged biography is stored but not used unless staff accept it (docs/reflect.md).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

PRONOUNS = ("he", "she", "him", "her", "his", "hers", "himself", "herself")
GENDERED_WORDS = (
    "man", "woman", "men", "women", "male", "female", "boy", "girl", "gentleman", "lady",
    "husband", "wife", "father", "mother", "son", "daughter", "brother", "sister", "mr",
    "mrs", "ms", "miss", "sir", "madam", "boyfriend", "girlfriend", "businessman",
    "businesswoman", "chairman", "chairwoman", "actress", "waitress",
)  # fmt: skip
RACE_WORDS = (
    "white", "black", "asian", "latino", "latina", "latinx", "hispanic", "middle eastern",
    "arab", "caucasian", "african", "african american", "chinese", "japanese", "korean",
    "indian", "mexican", "persian", "iranian", "turkish", "nigerian", "european",
)  # fmt: skip
# A deliberately small list of frequent first names (US census and international); callers
# add their own with ``extra_names``.
COMMON_FIRST_NAMES = (
    "james", "john", "robert", "michael", "william", "david", "richard", "joseph", "thomas",
    "charles", "mary", "patricia", "jennifer", "linda", "elizabeth", "barbara", "susan",
    "jessica", "sarah", "karen", "emily", "emma", "olivia", "sophia", "daniel", "matthew",
    "anthony", "mark", "paul", "steven", "andrew", "kevin", "brian", "nancy", "lisa", "betty",
    "maria", "jose", "juan", "carlos", "luis", "ana", "mohammed", "muhammad", "ahmed", "ali",
    "fatima", "omar", "wei", "li", "ming", "yuki", "hiroshi", "jin", "ji-woo", "priya",
    "raj", "aisha", "kwame", "chinedu", "ngozi", "jamal", "latoya", "deshawn", "keisha",
)  # fmt: skip

_IDENTIFIERS = {
    "email": r"[\w.+-]+@[\w-]+\.[\w.]+",
    "phone": r"\+?\d[\d\s().-]{7,}\d",
    "url": r"https?://\S+|www\.\S+",
    "age": r"\b\d{2}\s*(?:years?|yrs?)[\s-]*old\b|\baged?\s+\d{2}\b",
    "birth_date": r"\bborn\s+(?:in|on)\b",
}


def _word_pattern(words: Iterable[str]) -> re.Pattern:
    alternatives = sorted(
        (re.escape(w).replace(r"\ ", r"\s+") for w in words), key=len, reverse=True
    )
    return re.compile(r"\b(?:" + "|".join(alternatives) + r")\b\.?", re.IGNORECASE)


_PRONOUN_RE = _word_pattern(PRONOUNS)
_GENDERED_RE = _word_pattern(GENDERED_WORDS)
_RACE_RE = _word_pattern(RACE_WORDS)
_NAME_FIELD_RE = re.compile(r"\bname\s*:", re.IGNORECASE)


@dataclass(frozen=True)
class LeakageFlag:
    kind: str
    match: str

    def as_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "match": self.match}


@dataclass(frozen=True)
class BiographyRecord:
    occupation: str
    key: str
    text: str
    flags: tuple[LeakageFlag, ...] = field(default=())


# The longest occupation and id a biography keeps: its columns' max_length (a test compares
# them), checked here so that SQLite does not store what PostgreSQL refuses.
MAX_TEXT = 100


class BiographyFileError(ValueError):
    path: str | None = None  # the file it is about, where several are read

    def __init__(self, errors: list[str]):
        self.errors = errors
        if len(errors) == 1:
            super().__init__(f"biography file rejected: {errors[0]}")
        else:
            super().__init__("biography file rejected:\n  " + "\n  ".join(errors[:50]))


def leakage_flags(text: str, *, extra_names: Iterable[str] = ()) -> list[LeakageFlag]:
    """Every demographic cue found in ``text`` (empty list: safe to use)."""
    flags: list[LeakageFlag] = []
    for kind, pattern in (
        ("pronoun", _PRONOUN_RE),
        ("gendered_word", _GENDERED_RE),
        ("race_or_ethnicity", _RACE_RE),
        ("name", _word_pattern(COMMON_FIRST_NAMES + tuple(n.lower() for n in extra_names))),
    ):
        for match in pattern.finditer(text):
            # Names and race words are capitalised in running text; "black coffee" is not a cue.
            if kind in ("name", "race_or_ethnicity") and not match.group(0)[0].isupper():
                continue
            flags.append(LeakageFlag(kind, match.group(0).rstrip(".")))
    if _NAME_FIELD_RE.search(text):
        flags.append(LeakageFlag("name", "Name:"))
    for kind, pattern in _IDENTIFIERS.items():
        for match in re.finditer(pattern, text, re.IGNORECASE):
            flags.append(LeakageFlag("identifier", f"{kind}: {match.group(0)}"))
    return flags


def read_biographies(
    path: str | Path, *, occupation: str | None = None, extra_names: Iterable[str] = ()
) -> list[BiographyRecord]:
    """Parse a JSONL file: ``{"id": ..., "text": ..., "occupation": ...}`` per line.

    ``occupation`` may come from the argument instead of each line. Every line is checked
    before anything is returned; leakage is flagged, not rejected.
    """
    errors: list[str] = []
    records: list[BiographyRecord] = []
    seen: set[tuple[str, str]] = set()
    lines = _text_lines(Path(path).read_bytes())
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            if not isinstance(data, dict):
                raise ValueError("not a JSON object")
        except ValueError as error:
            errors.append(f"line {number}: {error}")
            continue
        text = data.get("text") or data.get("bio") or data.get("biography")
        job = data.get("occupation") or occupation
        key = str(data.get("id", data.get("key", number)))
        if not isinstance(text, str) or not text.strip():
            errors.append(f"line {number}: needs a non-empty 'text'")
            continue
        if not job:
            errors.append(f"line {number}: needs an 'occupation' (or pass one for the file)")
            continue
        long = [(f, v) for f, v in (("occupation", str(job)), ("id", key)) if len(v) > MAX_TEXT]
        if long:
            field_name, value = long[0]
            errors.append(
                f"line {number}: {field_name!r} is {len(value)} characters, over the limit of "
                f"{MAX_TEXT}"
            )
            continue
        if (job, key) in seen:
            errors.append(f"line {number}: duplicate id {key!r} for {job}")
            continue
        seen.add((job, key))
        flags = tuple(leakage_flags(text, extra_names=extra_names))
        records.append(BiographyRecord(str(job), key, text.strip(), flags))
    if errors:
        raise BiographyFileError(errors)
    return records


def _text_lines(data: bytes) -> list[str]:
    """The file's lines; a binary or empty file is one error naming what it is, not a JSON
    error per line or zero biographies imported in silence."""
    expected = "a JSONL file of biographies is expected, one JSON object per line"
    if b"\x00" in data:
        raise BiographyFileError([f"a binary file, not text: {expected}"])
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise BiographyFileError(
            [f"not UTF-8 text (byte 0x{data[error.start]:02x} at offset {error.start}): {expected}"]
        ) from None
    if not text.strip():
        raise BiographyFileError([f"the file is empty: {expected}"])
    return text.splitlines()
