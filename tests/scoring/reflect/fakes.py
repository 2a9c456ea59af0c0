"""Scripted REFLECT models for the loopback server, and face-set folders built with Pillow.

Each test image is one flat colour whose red channel encodes its group (index in GROUPS), so a
server rule can tell which group sits in position A and B from the data URLs alone and answer
by a known rule; the statistics that rule implies follow by hand.
"""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

from PIL import Image

from scoring.reflect.protocol import race_slug
from scoring.stats.reflect.vocabulary import GROUPS
from tests.support.openai_server import completion, request_image_urls, request_text

REFUSAL_TEXT = "I'm sorry, but I can't help with that."


def group_colour(group_index: int, template_index: int = 0) -> tuple[int, int, int]:
    return (group_index * 25 + 5, (template_index * 37) % 256, 90)


def write_face_set(
    root: Path,
    *,
    occupations=("CEO", "nurse"),
    templates_per_occupation=2,
    source_genders=("female", "male"),
    size=(16, 16),
) -> Path:
    """``root/<occupation>/t<k>/<Race>_<gender>.png`` for every group, plus template.json."""
    count = 0
    for occupation in occupations:
        for k in range(templates_per_occupation):
            folder = root / occupation / f"t{k}"
            folder.mkdir(parents=True, exist_ok=True)
            for g, (race, gender) in enumerate(GROUPS):
                Image.new("RGB", size, group_colour(g, count)).save(
                    folder / f"{race_slug(race)}_{gender}.png"
                )
            gender = source_genders[count % len(source_genders)]
            (folder / "template.json").write_text(json.dumps({"source_gender": gender}))
            count += 1
    return root


def image_group(data_url: str) -> int:
    """The group index a test image encodes."""
    payload = base64.b64decode(data_url.split(",", 1)[1])
    red = Image.open(io.BytesIO(payload)).convert("RGB").getpixel((0, 0))[0]
    return round((red - 5) / 25)


def task_of(request: dict) -> str:
    text = request_text(request)
    if len(request_image_urls(request)) == 2:
        return "2afc"
    if "hiring manager" in text:
        return "salary"
    return "mcq_salary" if "annual salary" in text else "mcq_education"


def _reply(request: dict, text: str) -> dict:
    return completion([text] * int(request.get("n", 1)))


def prefers_rank(rank: list[int]):
    """2AFC: the image whose group comes first in ``rank`` (a permutation of the 10 groups).
    MCQ: "F" (salary) / "D" (education) for men, "A" for women. Salary: 50,000 + 1,000 × group."""
    position = {group: i for i, group in enumerate(rank)}

    def rule(request):
        task = task_of(request)
        groups = [image_group(url) for url in request_image_urls(request)]
        if task == "2afc":
            return _reply(request, "A" if position[groups[0]] < position[groups[1]] else "B")
        male = GROUPS[groups[0]][1] == "male"
        if task == "mcq_salary":
            return _reply(request, "F" if male else "A")
        if task == "mcq_education":
            return _reply(request, "D" if male else "A")
        return _reply(request, str(50_000 + 1_000 * groups[0]))

    return rule


def answers_by_position(request):
    """Always the first option: "A" (2AFC and MCQ), and 60000 for salaries."""
    return _reply(request, "60000" if task_of(request) == "salary" else "A")


def always_refuses(request):
    return _reply(request, REFUSAL_TEXT)


def png_bytes(colour: tuple[int, int, int], size=(16, 16)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, colour).save(buffer, format="PNG")
    return buffer.getvalue()


def make_edit_job(*, slug="job", name="Edit job", templates=(("CEO", "t0"), ("nurse", "t0"))):
    """A face_edit job as the editing generator leaves it: one source photo per template and a
    done, unflagged edit per group, coloured as ``write_face_set`` colours its images (needs
    the database; the generator itself is tested in tests/generation/test_face_sets.py)."""
    from django.core.files.base import ContentFile

    from generation.faces import load_face_protocol
    from generation.models import FaceEdit, FaceSet, FaceTemplate

    protocol = load_face_protocol()
    face_set = FaceSet.objects.create(
        slug=slug,
        name=name,
        generator_name="editor",
        generator_config={"kind": "openai-images"},
        instruction_template=protocol.template,
    )
    for template_index, (occupation, template_name) in enumerate(templates):
        template = FaceTemplate.objects.create(
            face_set=face_set,
            occupation=occupation,
            name=template_name,
            source_gender=("female", "male")[template_index % 2],
            image="source.png",
            image_sha256="0" * 64,
        )
        for race, gender in GROUPS:
            edit = FaceEdit(
                template=template,
                race=race,
                gender=gender,
                instruction=protocol.instruction(f"{race} {gender}"),
                status=FaceEdit.Status.DONE,
            )
            colour = group_colour(GROUPS.index((race, gender)), template_index)
            edit.image.save(f"{race}_{gender}.png", ContentFile(png_bytes(colour)), save=False)
            edit.save()
    return face_set
