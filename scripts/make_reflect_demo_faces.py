"""Make the demo face set's source photos once: generation/data/reflect_demo/.

Needs the ml extra (scikit-image for the photograph, OpenCV for the face box); the demo itself
reads only the files this writes. Four crops of scikit-image's ``astronaut`` (Eileen Collins,
NASA, public domain), 224 px, marked SYNTHETIC DEMO in a corner away from the face, with the
face box OpenCV's Haar cascade finds in each (the one ``face_edit`` would store).

    .venv/bin/python scripts/make_reflect_demo_faces.py
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont
from skimage import data

from generation.faces.qc import detect_face_box

OUT = Path(__file__).resolve().parent.parent / "generation" / "data" / "reflect_demo"
SIZE = 224
# (occupation, template, crop box in the 512-px photograph): occupations from protocol.json.
CROPS = [
    ("CEO", "t01", (100, 10, 340, 250)),
    ("CEO", "t02", (60, 0, 380, 320)),
    ("doctor", "t01", (120, 20, 300, 200)),
    ("doctor", "t02", (40, 0, 440, 400)),
]


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    photo = Image.fromarray(data.astronaut())
    templates = []
    for occupation, template, box in CROPS:
        crop = photo.crop(box).resize((SIZE, SIZE), Image.LANCZOS)
        draw = ImageDraw.Draw(crop)
        font = ImageFont.load_default(size=11)
        left, top, right, bottom = draw.textbbox((4, SIZE - 16), "SYNTHETIC DEMO", font=font)
        draw.rectangle([left - 2, top - 2, right + 2, bottom + 2], fill=(255, 255, 255))
        draw.text((4, SIZE - 16), "SYNTHETIC DEMO", fill=(0, 0, 0), font=font)
        face = detect_face_box(np.asarray(crop))
        if face is None:
            raise SystemExit(f"no face found in {occupation}/{template}; change its crop")
        name = f"{occupation}_{template}.jpg"
        crop.save(OUT / name, quality=90)
        templates.append(
            {"occupation": occupation, "template": template, "file": name,
             "source_gender": "female", "face_box": face.__dict__}
        )  # fmt: skip
    listing = {
        "source": "scikit-image data.astronaut(): Eileen Collins, NASA, public domain",
        "templates": templates,
    }
    (OUT / "faces.json").write_text(json.dumps(listing, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(templates)} source photos to {OUT}")


if __name__ == "__main__":
    main()
