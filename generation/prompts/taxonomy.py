"""Attribute taxonomy: editable data, validated once at load time.

A taxonomy maps each attribute type (culture, gender, ...) to values; each value
carries the phrase inserted into prompts, how that phrase attaches to the person
noun (its grammatical ``form``) and the cue description judges and annotators
look for. The shipped default lives in ``generation/data/taxonomy.json``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from annotations.labels import NEUTRAL

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
DEFAULT_TAXONOMY_PATH = DATA_DIR / "taxonomy.json"

# How a phrase attaches to the person noun of a prompt:
#   adjective     before the noun phrase        "a Korean doctor"
#   postmodifier  right after the noun phrase   "a doctor in a wheelchair"
#   noun          replaces a generic "person"   "a woman", else ``modifier``
#                 before the noun phrase        "a female doctor"
FORMS = ("adjective", "postmodifier", "noun")


class TaxonomyError(ValueError):
    """The taxonomy file is malformed; the message names the offending entry."""


@dataclass(frozen=True)
class AttributeValue:
    attribute: str
    value: str
    phrase: str
    form: str
    cue: str
    cue_markers: tuple[str, ...] = ()
    modifier: str = ""

    @property
    def key(self) -> str:
        return f"{self.attribute}:{self.value}"


@dataclass(frozen=True)
class Taxonomy:
    values: tuple[AttributeValue, ...]
    neutral_cue: str = ""
    source: str = ""
    attributes: tuple[str, ...] = field(default=())

    def by_attribute(self, attribute: str) -> list[AttributeValue]:
        return [value for value in self.values if value.attribute == attribute]

    def get(self, attribute: str, value: str) -> AttributeValue:
        for candidate in self.values:
            if candidate.attribute == attribute and candidate.value == value:
                return candidate
        raise KeyError(f"{attribute}:{value}")


def load_taxonomy(path: str | Path | None = None) -> Taxonomy:
    """Load and validate a taxonomy JSON file (the shipped default when ``path`` is None)."""
    path = Path(path) if path is not None else DEFAULT_TAXONOMY_PATH
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise TaxonomyError(f"{path}: not valid JSON ({error})") from error
    return taxonomy_from_dict(raw, origin=str(path))


def taxonomy_from_dict(raw: dict, *, origin: str = "<dict>") -> Taxonomy:
    if not isinstance(raw, dict) or not isinstance(raw.get("attributes"), dict):
        raise TaxonomyError(f"{origin}: expected an object with an 'attributes' object")
    values: list[AttributeValue] = []
    for attribute, entries in raw["attributes"].items():
        if attribute == NEUTRAL:
            raise TaxonomyError(f"{origin}: '{NEUTRAL}' is reserved for the baseline")
        if not isinstance(entries, list) or not entries:
            raise TaxonomyError(f"{origin}: attribute '{attribute}' needs a non-empty list")
        for index, entry in enumerate(entries):
            values.append(_parse_value(attribute, entry, f"{origin}: {attribute}[{index}]"))
    keys = [value.key for value in values]
    duplicates = sorted({key for key in keys if keys.count(key) > 1})
    if duplicates:
        raise TaxonomyError(f"{origin}: duplicate values {duplicates}")
    neutral = raw.get("neutral") or {}
    return Taxonomy(
        values=tuple(values),
        neutral_cue=str(neutral.get("cue") or ""),
        source=str(raw.get("source", "")),
        attributes=tuple(raw["attributes"]),
    )


def _parse_value(attribute: str, entry: dict, where: str) -> AttributeValue:
    if not isinstance(entry, dict):
        raise TaxonomyError(f"{where}: expected an object")
    for required in ("value", "phrase"):
        if not str(entry.get(required, "")).strip():
            raise TaxonomyError(f"{where}: missing '{required}'")
    form = entry.get("form", "adjective")
    if form not in FORMS:
        raise TaxonomyError(f"{where}: form '{form}' is not one of {FORMS}")
    modifier = str(entry.get("modifier", "")).strip()
    if form == "noun" and not modifier:
        raise TaxonomyError(f"{where}: a noun-form value needs a 'modifier' (its adjective form)")
    markers = entry.get("cue_markers", [])
    if not isinstance(markers, list) or not all(isinstance(m, str) for m in markers):
        raise TaxonomyError(f"{where}: 'cue_markers' must be a list of strings")
    cue = str(entry.get("cue") or ", ".join(markers))
    return AttributeValue(
        attribute=attribute,
        value=str(entry["value"]).strip(),
        phrase=" ".join(str(entry["phrase"]).split()),
        form=form,
        cue=cue,
        cue_markers=tuple(markers),
        modifier=modifier,
    )
