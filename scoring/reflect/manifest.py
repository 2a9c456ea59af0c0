"""Read a face-set manifest (CSV) into the same records as a folder, or list every problem.

Django-free. Columns (docs/reflect.md, "Manifest"): ``occupation, template, race, gender,
image`` and optionally ``source_gender`` and ``qc_flags`` (``;``-separated). ``race`` as in
protocol.json, with a space or a hyphen (``Middle Eastern`` or ``Middle-Eastern``); ``image``
relative to the manifest's folder. Every template needs all ten groups.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path

from scoring.judges.images import ImageLoadError, image_sha256, load_image
from scoring.reflect.layout import FaceImageRecord, FaceSetLayoutError, TemplateRecord
from scoring.reflect.protocol import race_slug
from scoring.stats.reflect.vocabulary import GENDERS, GROUPS, RACES

REQUIRED_COLUMNS = ("occupation", "template", "race", "gender", "image")
_RACES = {**{race: race for race in RACES}, **{race_slug(race): race for race in RACES}}


def read_manifest(path: str | Path) -> list[TemplateRecord]:
    """Every template of the manifest with its ten images; FaceSetLayoutError otherwise."""
    path = Path(path)
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            missing = [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or [])]
            if missing:
                raise FaceSetLayoutError([f"{path.name}: missing columns {', '.join(missing)}"])
            rows = list(enumerate(reader, start=2))
    except OSError as error:
        raise FaceSetLayoutError([f"{path}: {error}"]) from error
    errors: list[str] = []
    by_template: dict[tuple[str, str], list[FaceImageRecord]] = defaultdict(list)
    source_genders: dict[tuple[str, str], set[str]] = defaultdict(set)
    for line, row in rows:
        record = _image_record(path.parent, line, row, errors)
        if record is None:
            continue
        key = (record.occupation, record.template)
        if any((i.race, i.gender) == (record.race, record.gender) for i in by_template[key]):
            errors.append(
                f"line {line}: second image for {key[0]}/{key[1]} {record.race} {record.gender}"
            )
            continue
        by_template[key].append(record)
        source_genders[key].add((row.get("source_gender") or "").strip())
    templates = [
        _template(key, images, source_genders[key], errors)
        for key, images in sorted(by_template.items())
    ]
    if not rows:
        errors.append(f"{path.name}: no rows")
    if errors:
        raise FaceSetLayoutError(errors)
    return templates


def _image_record(folder: Path, line: int, row: dict, errors: list[str]) -> FaceImageRecord | None:
    values = {column: (row.get(column) or "").strip() for column in REQUIRED_COLUMNS}
    empty = [column for column, value in values.items() if not value]
    if empty:
        errors.append(f"line {line}: empty {', '.join(empty)}")
        return None
    race = _RACES.get(values["race"])
    if race is None:
        errors.append(
            f"line {line}: unknown race {values['race']!r}; expected one of {list(RACES)}"
        )
        return None
    if values["gender"] not in GENDERS:
        errors.append(
            f"line {line}: unknown gender {values['gender']!r}; expected 'female' or 'male'"
        )
        return None
    source = (row.get("source_gender") or "").strip()
    if source not in ("", *GENDERS):
        errors.append(f"line {line}: source_gender must be 'female' or 'male'")
        return None
    image = folder / values["image"]
    try:
        load_image(image)
    except ImageLoadError as error:
        errors.append(f"line {line}: {error}")
        return None
    flags = tuple(f.strip() for f in (row.get("qc_flags") or "").split(";") if f.strip())
    return FaceImageRecord(
        values["occupation"],
        values["template"],
        race,
        values["gender"],
        image,
        image_sha256(image),
        flags,
    )


def _template(key, images, source_genders: set[str], errors: list[str]) -> TemplateRecord:
    occupation, template = key
    present = {(i.race, i.gender) for i in images}
    missing = [f"{race} {gender}" for race, gender in GROUPS if (race, gender) not in present]
    if missing:
        errors.append(f"{occupation}/{template}: missing {', '.join(missing)} (needs all ten)")
    if len(source_genders) > 1:
        errors.append(f"{occupation}/{template}: rows disagree on source_gender")
    source = next(iter(source_genders)) if len(source_genders) == 1 else ""
    ordered = tuple(sorted(images, key=lambda i: GROUPS.index((i.race, i.gender))))
    return TemplateRecord(occupation, template, source, ordered)
