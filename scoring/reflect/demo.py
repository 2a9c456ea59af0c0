"""The REFLECT demo audit ``make demo`` seeds: a small synthetic face set asked by a scripted model.

Read top to bottom: write the demo faces as a face-set folder (``generation.faces.demo``, each
image checked by the edit QC) → import it as a user's folder is imported (every layout check)
→ import biographies (leakage checks) → one run of the ``scripted`` backend through
``run_execute``, as ``run_reflect`` does → the staff page's cached report. Nothing here writes
a statistic: every number comes from the stored answers. Idempotent: a second call keeps the
set, asks only missing questions and recomputes the report only when the answers changed.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

from django.core.files.storage import default_storage
from django.db import transaction

from generation.faces.demo import write_demo_face_folder
from generation.faces.services import race_file_stem
from generation.models import FaceSet
from scoring.reflect import reports, services
from scoring.reflect.backends import ModelChoice, model_choice
from scoring.reflect.models import FaceImage, ReflectRun
from scoring.reflect.protocol import TASKS
from scoring.stats.reflect.vocabulary import GROUPS

DEMO_FACE_SET = "REFLECT demo (synthetic faces)"
DEMO_MARK = "SYNTHETIC DEMO"
DEMO_DESCRIPTION = (
    f"{DEMO_MARK}: eight crops of one public-domain NASA photograph, recoloured per group by the "
    "app (not a face edit), asked by the scripted model 'scripted-demo', whose bias is written "
    "into its script (docs/reflect.md, 'Scripted backend'). No finding here is about a real model."
)
DEMO_MODEL = "scripted-demo"
DEMO_MODEL_CONFIG = {"type": "scripted", "model": DEMO_MODEL, "seed": 7}
# Salary task: job summaries without names, pronouns, ages or places (the leakage checks).
DEMO_BIOGRAPHIES = {
    "CEO": [
        (
            "ceo-1",
            "Leads a logistics company of 2,000 staff; doubled revenue over the last "
            "five years and opened three new distribution hubs.",
        ),
        (
            "ceo-2",
            "Runs a software firm listed on the stock exchange; previously chief "
            "operating officer at a retail chain, with an MBA in finance.",
        ),
    ],
    "doctor": [
        (
            "doctor-1",
            "Consultant cardiologist at a teaching hospital; leads the catheter "
            "laboratory and supervises six junior doctors.",
        ),
        (
            "doctor-2",
            "General practitioner in a group practice of twelve clinicians; "
            "coordinates the practice's diabetes clinic.",
        ),
    ],
}


class DemoFaceSetTaken(ValueError):
    """A face set with the demo's name exists and is not the demo: it is left alone."""


@dataclass(frozen=True)
class DemoAudit:
    face_set: FaceSet
    created: bool
    answers: dict[str, int]  # stored answers per task
    flagged_images: int  # demo images the edit QC flagged (stored, not asked about)


def demo_choice() -> ModelChoice:
    """The scripted model, configured as a backends file would configure it."""
    return model_choice(DEMO_MODEL, {DEMO_MODEL: DEMO_MODEL_CONFIG})


def reflect_demo_seed(*, reset: bool = False) -> DemoAudit:
    existing = FaceSet.objects.filter(name=DEMO_FACE_SET).first()
    if existing is not None and not existing.description.startswith(DEMO_MARK):
        raise DemoFaceSetTaken(
            f"face set {DEMO_FACE_SET!r} exists and is not the demo; the REFLECT demo leaves it "
            "alone (rename that set, or use another database)"
        )
    if existing is not None and reset:
        reflect_demo_delete(face_set=existing)
        existing = None
    flagged = 0
    if existing is None:
        face_set, flagged = _face_set_create()
    else:
        face_set = existing
    choice = demo_choice()
    run = services.run_get_or_create(face_set=face_set, choice=choice)
    for task in TASKS:
        services.run_execute(run=run, choice=choice, task=task)
    _, current = reports.report_cached(face_set=face_set)
    if not current:
        reports.report_refresh(face_set=face_set)
    answers = {task: run.answers.filter(task=task).count() for task in TASKS}
    return DemoAudit(face_set, existing is None, answers, flagged)


def _face_set_create() -> tuple[FaceSet, int]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        images = write_demo_face_folder(root / "faces", GROUPS, file_stem=race_file_stem)
        with transaction.atomic():
            face_set = services.face_set_import(name=DEMO_FACE_SET, folder=root / "faces")
            face_set.description = DEMO_DESCRIPTION
            face_set.save(update_fields=["description"])
            for occupation, biographies in DEMO_BIOGRAPHIES.items():
                path = root / f"{occupation}.jsonl"
                path.write_text(
                    "".join(
                        json.dumps({"id": key, "text": text}) + "\n" for key, text in biographies
                    ),
                    encoding="utf-8",
                )
                services.biographies_import(face_set=face_set, path=path, occupation=occupation)
    return face_set, sum(image.qc.flagged for image in images)


def reflect_demo_delete(*, face_set: FaceSet) -> None:
    """Delete the demo set with its runs (answers protect the images they asked about) and,
    once that commits, its image files: the rebuilt set then takes the same file names
    rather than piling up renamed copies."""
    names = list(
        FaceImage.objects.filter(template__face_set=face_set).values_list("file", flat=True)
    )
    with transaction.atomic():
        ReflectRun.objects.filter(face_set=face_set).delete()
        face_set.delete()
        transaction.on_commit(lambda: [default_storage.delete(name) for name in names if name])
