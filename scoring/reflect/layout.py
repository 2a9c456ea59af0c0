"""Read a face-set folder into typed records, or say precisely what is wrong with it.

Django-free. Layout (docs/reflect.md)::

    <occupation>/<template>/<Race>_<gender>.<ext>      one image per race × gender group
    <occupation>/<template>/template.json              optional: {"source_gender": "male"}

Race as in protocol.json with spaces as hyphens (``Middle-Eastern_female.png``), gender
``female`` or ``male``. Every error of the whole folder is collected before anything is
returned, so an import either takes the whole set or nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from scoring.judges.images import ImageLoadError, image_sha256, load_image
from scoring.reflect.protocol import race_slug
from scoring.stats.reflect.vocabulary import GENDERS, GROUPS, RACES

IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".webp")
TEMPLATE_METADATA = "template.json"
_RACE_BY_SLUG = {race_slug(race): race for race in RACES}
_IGNORED = (".DS_Store", "Thumbs.db")


class FaceSetLayoutError(ValueError):
    """The folder does not follow the layout; ``errors`` lists every problem found."""

    def __init__(self, errors: list[str]):
        self.errors = errors
        shown = "\n  ".join(errors[:50])
        more = f"\n  ... and {len(errors) - 50} more" if len(errors) > 50 else ""
        super().__init__(f"{len(errors)} problem(s) in the face-set folder:\n  {shown}{more}")


@dataclass(frozen=True)
class FaceImageRecord:
    occupation: str
    template: str
    race: str
    gender: str
    path: Path
    sha256: str
    qc_flags: tuple[str, ...] = ()


@dataclass(frozen=True)
class TemplateRecord:
    occupation: str
    template: str
    source_gender: str
    images: tuple[FaceImageRecord, ...]


def expected_file_stems() -> list[str]:
    return [f"{race_slug(race)}_{gender}" for race in RACES for gender in GENDERS]


def parse_image_name(name: str) -> tuple[str, str]:
    """``'Middle-Eastern_female.png'`` → ``('Middle Eastern', 'female')``; ValueError otherwise."""
    path = Path(name)
    if path.suffix.lower() not in IMAGE_EXTENSIONS:
        raise ValueError(f"{name}: extension must be one of {', '.join(IMAGE_EXTENSIONS)}")
    race_part, separator, gender = path.stem.rpartition("_")
    if not separator:
        raise ValueError(f"{name}: expected <Race>_<gender>, e.g. Middle-Eastern_female.png")
    if race_part not in _RACE_BY_SLUG:
        raise ValueError(
            f"{name}: unknown race {race_part!r}; expected one of {sorted(_RACE_BY_SLUG)} "
            "(spelled as in protocol.json, spaces as hyphens, same capitals)"
        )
    if gender not in GENDERS:
        raise ValueError(f"{name}: unknown gender {gender!r}; expected 'female' or 'male'")
    return _RACE_BY_SLUG[race_part], gender


def read_face_set(root: str | Path, *, occupations: tuple[str, ...] | None = None):
    """Every template of the folder, each with its ten images; FaceSetLayoutError otherwise.

    ``occupations``, when given, restricts occupation folder names to those values.
    """
    root = Path(root)
    if not root.is_dir():
        raise FaceSetLayoutError([f"{root}: not a folder"])
    errors: list[str] = []
    templates: list[TemplateRecord] = []
    for occupation_dir in _entries(root, errors, depth="occupation"):
        if occupations is not None and occupation_dir.name not in occupations:
            errors.append(
                f"{occupation_dir.name}/: unknown occupation; expected one of {list(occupations)}"
            )
            continue
        for template_dir in _entries(occupation_dir, errors, depth="template"):
            record = _read_template(root, template_dir, errors)
            if record is not None:
                templates.append(record)
    if not templates and not errors:
        errors.append(f"{root}: no <occupation>/<template>/ folders found")
    if errors:
        raise FaceSetLayoutError(errors)
    return templates


def _entries(folder: Path, errors: list[str], *, depth: str) -> list[Path]:
    """Sub-folders of ``folder``; a stray file at this depth is an error."""
    folders = []
    for entry in sorted(folder.iterdir()):
        if entry.name in _IGNORED or entry.name.startswith("."):
            continue
        if entry.is_dir():
            folders.append(entry)
        else:
            errors.append(f"{entry}: a file where a {depth} folder was expected")
    return folders


def _read_template(root: Path, folder: Path, errors: list[str]) -> TemplateRecord | None:
    where = folder.relative_to(root).as_posix()
    found: dict[tuple[str, str], Path] = {}
    metadata, before = {"source_gender": "", "qc_flags": {}}, len(errors)
    for entry in sorted(folder.iterdir()):
        if entry.name in _IGNORED or entry.name.startswith("."):
            continue
        if entry.name == TEMPLATE_METADATA:
            metadata = _metadata(entry, where, errors)
            continue
        if entry.is_dir():
            errors.append(f"{where}/{entry.name}/: unexpected folder inside a template")
            continue
        try:
            group = parse_image_name(entry.name)
        except ValueError as error:
            errors.append(f"{where}/{error}")
            continue
        if group in found:
            errors.append(f"{where}/{entry.name}: second image for {group[0]} {group[1]}")
            continue
        found[group] = entry
    missing = [stem for stem in expected_file_stems() if _group_of(stem) not in found]
    if missing:
        errors.append(f"{where}/: missing {', '.join(missing)} (each template needs all ten)")
    images = []
    for (race, gender), path in sorted(found.items(), key=lambda item: GROUPS.index(item[0])):
        try:
            load_image(path)
        except ImageLoadError as error:
            errors.append(f"{where}/{path.name}: {error}")
            continue
        flags = tuple(metadata["qc_flags"].get(f"{race_slug(race)}_{gender}", ()))
        images.append(
            FaceImageRecord(
                folder.parent.name, folder.name, race, gender, path, image_sha256(path), flags
            )
        )
    if len(errors) > before:
        return None
    return TemplateRecord(folder.parent.name, folder.name, metadata["source_gender"], tuple(images))


def _group_of(stem: str) -> tuple[str, str]:
    race_part, _, gender = stem.rpartition("_")
    return _RACE_BY_SLUG[race_part], gender


def _metadata(path: Path, where: str, errors: list[str]) -> dict:
    """template.json: ``source_gender`` and ``qc_flags`` ({"<Race>_<gender>": [flag, ...]})."""
    empty = {"source_gender": "", "qc_flags": {}}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise ValueError("not an object")
    except ValueError as error:
        errors.append(f"{where}/{TEMPLATE_METADATA}: not a JSON object ({error})")
        return empty
    source_gender = data.get("source_gender", "")
    if source_gender not in ("", *GENDERS):
        errors.append(f"{where}/{TEMPLATE_METADATA}: source_gender must be 'female' or 'male'")
        return empty
    qc_flags = data.get("qc_flags", {})
    stems = set(expected_file_stems())
    if not isinstance(qc_flags, dict) or any(
        stem not in stems or not isinstance(flags, list) for stem, flags in qc_flags.items()
    ):
        errors.append(
            f"{where}/{TEMPLATE_METADATA}: qc_flags must map <Race>_<gender> to a list of flags"
        )
        return empty
    return {"source_gender": source_gender, "qc_flags": qc_flags}
