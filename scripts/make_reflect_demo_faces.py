"""Make the demo face set's source photos once: generation/data/reflect_demo/.

Needs the ml extra (scikit-image for the photograph, OpenCV for the face box); the demo itself
reads only the files this writes. Eight crops of scikit-image's ``astronaut`` (Eileen Collins,
NASA, public domain), 192 px, half of them mirrored, marked SYNTHETIC DEMO in a corner away
from the face, with the face box OpenCV's Haar cascade finds in each (the one ``face_edit``
would store).

    .venv/bin/python scripts/make_reflect_demo_faces.py
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont, ImageOps
from skimage import data

from generation.faces.qc import detect_face_box

OUT = Path(__file__).resolve().parent.parent / "generation" / "data" / "reflect_demo"
SIZE = 192
# (occupation, template, crop box in the 512-px photograph, mirrored): eight framings, so the
# template-cluster bootstrap has four templates per occupation to resample. Occupations are
# two of protocol.json's.
CROPS = [
    ("CEO", "t01", (100, 10, 340, 250), False),
    ("CEO", "t02", (60, 0, 380, 320), True),
    ("CEO", "t03", (120, 20, 300, 200), False),
    ("CEO", "t04", (40, 0, 440, 400), True),
    ("doctor", "t01", (80, 0, 360, 280), False),
    ("doctor", "t02", (140, 30, 320, 210), True),
    ("doctor", "t03", (90, 20, 330, 260), True),
    ("doctor", "t04", (20, 0, 460, 440), False),
]


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    photo = Image.fromarray(data.astronaut())
    templates = []
    for occupation, template, box, mirrored in CROPS:
        crop = photo.crop(box).resize((SIZE, SIZE), Image.LANCZOS)
        crop = ImageOps.mirror(crop) if mirrored else crop
        draw = ImageDraw.Draw(crop)
        font = ImageFont.load_default(size=10)
        left, top, right, bottom = draw.textbbox((4, SIZE - 14), "SYNTHETIC DEMO", font=font)
        draw.rectangle([left - 2, top - 2, right + 2, bottom + 2], fill=(255, 255, 255))
        draw.text((4, SIZE - 14), "SYNTHETIC DEMO", fill=(0, 0, 0), font=font)
        face = detect_face_box(np.asarray(crop))
        if face is None:
            raise SystemExit(f"no face found in {occupation}/{template}; change its crop")
        name = f"{occupation}_{template}.jpg"
        crop.save(OUT / name, quality=90)
        templates.append(
            {
                "occupation": occupation,
                "template": template,
                "file": name,
                "source_gender": "female",
                "face_box": face.__dict__,
            }
        )
    listing = {
        "source": "scikit-image data.astronaut(): Eileen Collins, NASA, public domain",
        "templates": templates,
    }
    (OUT / "faces.json").write_text(json.dumps(listing, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(templates)} source photos to {OUT}")


if __name__ == "__main__":
    main()
