"""The demo face set: ten recoloured versions of each shipped source photo, with their QC.

Django-free, Pillow and numpy only (the base install). ``make demo`` (``seed_reflect_demo``)
writes them as a REFLECT face-set folder. The sources are eight crops of scikit-image's
``astronaut`` photograph (NASA, public domain), made once by ``scripts/make_reflect_demo_faces.py``
and shipped with their detected face box in ``generation/data/reflect_demo/`` (README there).

A demo "edit" is not a face edit by a model: it blends a flat skin tone per race into an
ellipse inside the face box and, for "male", shades the lower face. It only gives each group a
visibly different image; nothing about real people's appearance is modelled. Each image is
checked with the project's edit QC (``edit_leakage`` against its source, with the shipped
face box), as an edit made by ``face_edit`` is.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

from generation.data import reflect_demo_sources
from generation.faces.qc import EditQC, FaceBox, edit_leakage

# A flat RGB tone per race: a label the eye can tell apart, not a model of anyone's skin.
DEMO_RACE_TONES = {
    "White": (236, 200, 180),
    "Black": (110, 74, 56),
    "Asian": (222, 188, 150),
    "Latino": (190, 142, 108),
    "Middle Eastern": (204, 160, 126),
}
DEMO_TONE_WEIGHT = 0.75  # how much of the tone replaces the face's own colour
DEMO_MALE_SHADE = 0.72  # brightness of the lower face for "male" (a stubble-like shadow)


@dataclass(frozen=True)
class DemoSource:
    occupation: str
    template: str
    source_gender: str
    pixels: np.ndarray  # RGB uint8
    face_box: FaceBox


def demo_sources() -> list[DemoSource]:
    """The shipped source photos with their face boxes (``reflect_demo/faces.json``)."""
    listing, read_bytes = reflect_demo_sources()
    sources = []
    for entry in listing["templates"]:
        image = Image.open(io.BytesIO(read_bytes(entry["file"]))).convert("RGB")
        sources.append(
            DemoSource(
                occupation=entry["occupation"],
                template=entry["template"],
                source_gender=entry["source_gender"],
                pixels=np.asarray(image),
                face_box=FaceBox(**entry["face_box"]),
            )
        )
    return sources


def demo_group_face(source: np.ndarray, box: FaceBox, race: str, gender: str) -> np.ndarray:
    """``source`` with a feathered ellipse inside ``box`` recoloured for (race, gender);
    every pixel outside the box is left as it was."""
    height, width = source.shape[:2]
    inset_x, inset_y = box.width * 0.12, box.height * 0.06
    ellipse = Image.new("L", (width, height), 0)
    ImageDraw.Draw(ellipse).ellipse(
        [
            box.x + inset_x,
            box.y + inset_y,
            box.x + box.width - inset_x,
            box.y + box.height - inset_y,
        ],
        fill=255,
    )
    mask = ellipse.filter(ImageFilter.GaussianBlur(max(1.0, box.width / 20)))
    alpha = np.asarray(mask, dtype=np.float64)[..., None] / 255.0
    inside_box = np.zeros((height, width, 1))
    inside_box[box.y : box.y + box.height, box.x : box.x + box.width] = 1.0
    alpha *= inside_box  # the blur must not reach outside the face box

    pixels = source.astype(np.float64)
    luminance = pixels.mean(axis=2, keepdims=True)
    face_mean = max(float(luminance[alpha[..., 0] > 0.5].mean()), 1.0)
    tone = np.array(DEMO_RACE_TONES[race], dtype=np.float64) * (luminance / face_mean)
    recoloured = (1 - DEMO_TONE_WEIGHT) * pixels + DEMO_TONE_WEIGHT * tone
    if gender == "male":
        rows = np.arange(height, dtype=np.float64)[:, None, None]
        ramp = np.clip((rows - (box.y + box.height * 0.55)) / (box.height * 0.15), 0.0, 1.0)
        recoloured = recoloured * (1.0 - (1.0 - DEMO_MALE_SHADE) * ramp)
    out = (1 - alpha) * pixels + alpha * recoloured
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


@dataclass(frozen=True)
class DemoImage:
    occupation: str
    template: str
    race: str
    gender: str
    pixels: np.ndarray
    qc: EditQC


def demo_face_images(groups, sources: list[DemoSource] | None = None) -> list[DemoImage]:
    """Every (template, group) image of the demo set with its edit QC."""
    images = []
    for source in demo_sources() if sources is None else sources:
        for race, gender in groups:
            pixels = demo_group_face(source.pixels, source.face_box, race, gender)
            qc = edit_leakage(source.pixels, pixels, face_box=source.face_box)
            images.append(DemoImage(source.occupation, source.template, race, gender, pixels, qc))
    return images


def write_demo_face_folder(root: Path, groups, *, file_stem) -> list[DemoImage]:
    """Write ``root/<occupation>/<template>/<file_stem(race, gender)>.png`` and each template's
    ``template.json`` (source gender; an image failing QC listed under ``qc_flags``, so the
    import stores it unaccepted, as it would a user's flagged image)."""
    sources = demo_sources()
    images = demo_face_images(groups, sources)
    flags: dict[tuple[str, str], dict[str, list[str]]] = {}
    for image in images:
        folder = root / image.occupation / image.template
        folder.mkdir(parents=True, exist_ok=True)
        stem = file_stem(image.race, image.gender)
        Image.fromarray(image.pixels).save(folder / f"{stem}.png", optimize=False)
        template_flags = flags.setdefault((image.occupation, image.template), {})
        if image.qc.flagged:
            template_flags[stem] = [image.qc.reason]
    for source in sources:
        metadata = {"source_gender": source.source_gender}
        if flags.get((source.occupation, source.template)):
            metadata["qc_flags"] = flags[(source.occupation, source.template)]
        (root / source.occupation / source.template / "template.json").write_text(
            json.dumps(metadata), encoding="utf-8"
        )
    return images
