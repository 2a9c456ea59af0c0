"""Writes of FOCUS face-only sets: create a set, import its source photos (templates), make
one edit per target group with QC, let staff accept flagged edits, export to REFLECT.

Read top to bottom: ``face_set_create`` → ``face_templates_import`` (source photos, face
boxes) → ``face_set_edit`` (the protocol's instruction per target group, through the
set's editing generator; QC numbers per edit) → ``face_edit_accept`` → ``face_set_export``
(``<occupation>/<template>/<Race>_<gender>.png``; a template is exported only when all its
edits are usable, since REFLECT compares every group of a template). REFLECT publishes the same
complete templates straight into the set's images (``scoring.reflect.services.face_set_publish``).
"""

from __future__ import annotations

import io
import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from django.conf import settings
from django.db import transaction
from django.utils.text import slugify

from annotations.common.image_files import image_decoded
from annotations.common.jobs import Progress
from annotations.common.media import image_store
from generation import backends
from generation.faces import FaceBox, detect_face_box, edit_leakage, load_face_protocol
from generation.models import FaceEdit, FaceSet, FaceTemplate
from generation.runs.execution import generator_for
from generation.services import generator_config_resolve

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp")
QC_OPTION_KEYS = ("max_outside_diff", "min_ratio", "box_margin")
UNSPECIFIED_OCCUPATION = "unspecified"


def face_set_create(
    *,
    slug: str,
    name: str = "",
    generator_name: str,
    generator_config: dict | None = None,
    instruction_template: str | None = None,
    qc_options: dict | None = None,
    seed: int = 0,
) -> FaceSet:
    """Create or update the edit job of a face set; the instruction defaults to the shipped
    FOCUS one. Names are unique (the REFLECT commands find a set by name or slug)."""
    protocol = load_face_protocol(template=instruction_template)
    unknown = sorted(set(qc_options or {}) - set(QC_OPTION_KEYS))
    if unknown:
        raise ValueError(f"unknown QC options {unknown}; known: {QC_OPTION_KEYS}")
    config = generator_config_resolve(name=generator_name, config=generator_config)
    wanted = name or ("" if FaceSet.objects.filter(slug=slug).exists() else slug)
    if wanted and FaceSet.objects.filter(name=wanted).exclude(slug=slug).exists():
        raise ValueError(f"another face set is already named {wanted!r}; give this one a name")
    job = {
        "generator_name": generator_name,
        "generator_config": config,
        "instruction_template": protocol.template,
        "placeholder": protocol.placeholder,
        "qc_options": dict(qc_options or {}),
        "seed": seed,
    }
    # A set that exists (an imported one, say) keeps its name unless a new one is given.
    face_set, _ = FaceSet.objects.update_or_create(
        slug=slug,
        create_defaults={**job, "name": name or slug},
        defaults={**job, **({"name": name} if name else {})},
    )
    return face_set


def _source_files(folder: Path) -> list[tuple[str, Path]]:
    """(occupation, file) for ``folder/<occupation>/<template>.<ext>``, or ``folder/<t>.<ext>``
    (occupation "unspecified", the folder it is exported to and imported from)."""
    found = []
    for path in sorted(folder.rglob("*")):
        if path.suffix.lower() in IMAGE_SUFFIXES and not path.name.startswith("."):
            relative = path.relative_to(folder).parts
            found.append((relative[0] if len(relative) > 1 else UNSPECIFIED_OCCUPATION, path))
    return found


def face_templates_import(*, face_set: FaceSet, sources: str | Path) -> int:
    """Store every source photo of ``sources`` (content-addressed) with its detected face
    box; an unchanged photo is skipped. Returns how many templates were added or changed."""

    changed = 0
    for occupation, path in _source_files(Path(sources)):
        data = path.read_bytes()
        digest = backends.content_sha256(data)
        name = slugify(path.stem) or digest[:12]
        current = FaceTemplate.objects.filter(
            face_set=face_set, occupation=occupation, name=name
        ).first()
        if current and current.image_sha256 == digest:
            continue
        # Checked in full (every frame, the pixel budget) before anything else decodes it.
        checked = image_decoded(data, max_pixels=settings.ACRB_MAX_IMAGE_PIXELS, name=path.name)
        box = detect_face_box(_pixels(data))
        stored = image_store(
            data=data, image=checked, folder=f"face_sets/{face_set.slug}/sources", reuse=True
        )
        FaceTemplate.objects.update_or_create(
            face_set=face_set,
            occupation=occupation,
            name=name,
            defaults={
                "image": stored,
                "image_sha256": digest,
                "face_box": box.__dict__ if box else None,
            },
        )
        changed += 1
    return changed


def face_edits_create(*, face_set: FaceSet) -> int:
    """One pending edit per (template, target group) not yet there."""
    protocol = load_face_protocol(template=face_set.instruction_template)
    before = FaceEdit.objects.filter(template__face_set=face_set).count()
    FaceEdit.objects.bulk_create(
        [
            FaceEdit(
                template=template,
                race=race,
                gender=gender,
                instruction=protocol.instruction(f"{race} {gender}"),
            )
            for template in face_set.templates.all()
            for race in protocol.races
            for gender in protocol.genders
        ],
        ignore_conflicts=True,
    )
    return FaceEdit.objects.filter(template__face_set=face_set).count() - before


def face_set_edit(*, face_set: FaceSet, progress: Progress = None) -> int:
    """Make every missing edit (pending, or error on an earlier run) and its QC; returns
    how many edits were attempted. A template's edits go to the generator as one batch."""
    face_edits_create(face_set=face_set)
    todo = FaceEdit.objects.filter(
        template__face_set=face_set, status__in=[FaceEdit.Status.PENDING, FaceEdit.Status.ERROR]
    ).select_related("template")
    by_template: dict[int, list[FaceEdit]] = {}
    for edit in todo:
        by_template.setdefault(edit.template_id, []).append(edit)
    total, attempted = sum(map(len, by_template.values())), 0
    generator = generator_for(face_set.generator_config) if by_template else None
    for edits in by_template.values():
        template = edits[0].template
        source = template.image.open("rb").read()
        template.image.close()
        requests = [
            backends.GenerationRequest(
                request_id=str(edit.pk),
                prompt=edit.instruction,
                seed=face_set.seed,
                source_image=source,
            )
            for edit in edits
        ]
        for edit, result in zip(edits, generator.generate(requests), strict=True):
            face_edit_record(edit=edit, result=result, source=source)
        attempted += len(edits)
        if progress:
            progress(attempted, total)
    return attempted


def _pixels(data: bytes) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


def face_edit_record(
    *, edit: FaceEdit, result: backends.GenerationResult, source: bytes
) -> FaceEdit:
    """Store one edit's image and QC numbers (refusals and errors as statuses)."""
    template, face_set = edit.template, edit.template.face_set
    edit.params = {k: v for k, v in result.to_record().items() if k != "prompt"}
    if result.status != backends.OK:
        edit.status = FaceEdit.Status.REFUSED if result.refused else FaceEdit.Status.ERROR
        edit.error = result.error or result.refusal_reason
        edit.save()
        return edit
    digest = result.content_sha256 or backends.content_sha256(result.image)
    edit.image.name = image_store(
        data=result.image, folder=f"face_sets/{face_set.slug}/edits", reuse=True
    )
    box = FaceBox(**template.face_box) if template.face_box else None
    # Without a stored box edit_leakage looks for the face again, and flags "no_face".
    qc = edit_leakage(_pixels(source), _pixels(result.image), face_box=box, **face_set.qc_options)
    edit.status, edit.error, edit.image_sha256 = FaceEdit.Status.DONE, "", digest
    edit.inside_diff, edit.outside_diff, edit.ratio = qc.inside_diff, qc.outside_diff, qc.ratio
    edit.flagged, edit.flag_reason = qc.flagged, qc.reason
    edit.save()
    return edit


def face_edit_accept(*, edit: FaceEdit, user, accepted: bool = True) -> FaceEdit:
    """Set (not toggle) staff acceptance of a flagged edit, so a repeated request is harmless."""
    with transaction.atomic():
        edit = FaceEdit.objects.select_for_update().get(pk=edit.pk)
        edit.accepted_by_staff = accepted
        edit.accepted_by = user if accepted else None
        edit.save(update_fields=["accepted_by_staff", "accepted_by"])
    return edit


@dataclass
class ExportReport:
    templates: int = 0
    images: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (template, why)


def race_file_stem(race: str, gender: str) -> str:
    """'Middle Eastern', 'female' → 'Middle-Eastern_female' (the REFLECT file name)."""
    return f"{race.replace(' ', '-')}_{gender}"


def face_set_complete_templates(
    *, face_set: FaceSet
) -> tuple[list[tuple[FaceTemplate, list[FaceEdit]]], list[tuple[str, str]]]:
    """The templates whose every target group has a usable edit, with those edits, and
    (template, why) for the others: REFLECT compares every group of a template, so a template
    is exported or published whole or not at all."""
    expected = len(load_face_protocol(template=face_set.instruction_template).target_groups)
    complete, skipped = [], []
    templates = FaceTemplate.objects.filter(face_set=face_set).prefetch_related("edits")
    for template in templates:
        edits = list(template.edits.all())
        unusable = [edit.target_group for edit in edits if not edit.usable]
        if len(edits) < expected or unusable:
            why = f"unusable: {', '.join(unusable)}" if unusable else "edits missing"
            skipped.append((template.name, why))
        else:
            complete.append((template, edits))
    return complete, skipped


def face_set_export(*, face_set: FaceSet, out_dir: str | Path) -> ExportReport:
    """Write every complete template to ``out_dir/<occupation>/<template>/<Race>_<gender>.png``.
    An edit counts when done and not flagged, or flagged but accepted by staff."""
    out_dir = Path(out_dir)
    complete, skipped = face_set_complete_templates(face_set=face_set)
    report = ExportReport(skipped=skipped)
    for template, edits in complete:
        folder = out_dir / template.occupation / template.name
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        for edit in edits:
            (folder / f"{race_file_stem(edit.race, edit.gender)}.png").write_bytes(
                face_edit_png(edit)
            )
        if template.source_gender:
            metadata = {"source_gender": template.source_gender}
            (folder / "template.json").write_text(json.dumps(metadata), encoding="utf-8")
        report.templates += 1
        report.images += len(edits)
    return report


def face_edit_png(edit: FaceEdit) -> bytes:
    """The edit's image as PNG bytes, as exported and published."""
    with edit.image.open("rb") as handle:
        return _as_png(handle.read())


def _as_png(data: bytes) -> bytes:
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return data
    from PIL import Image

    buffer = io.BytesIO()
    Image.open(io.BytesIO(data)).convert("RGB").save(buffer, format="PNG")
    return buffer.getvalue()
