"""Robustness variants of a face-only set: horizontal mirroring, and crops anchored on
the template's (source photo's) face box, so that every edit of a template is cropped
at the same place."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from generation.faces.qc import FaceBox


@dataclass(frozen=True)
class CropBox:
    left: int
    top: int
    right: int
    bottom: int


def mirror(image: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(image[:, ::-1])


def face_anchored_crop_box(
    face_box: FaceBox, image_width: int, image_height: int, *, scale: float = 2.0
) -> CropBox:
    """A square of side ``scale`` x the face's larger side, centred on the face and
    shifted (not shrunk) to stay inside the image where it fits."""
    if scale <= 0:
        raise ValueError("scale must be positive")
    side = int(round(max(face_box.width, face_box.height) * scale))
    side = min(side, image_width, image_height)
    centre_x = face_box.x + face_box.width / 2
    centre_y = face_box.y + face_box.height / 2
    left = int(round(min(max(centre_x - side / 2, 0), image_width - side)))
    top = int(round(min(max(centre_y - side / 2, 0), image_height - side)))
    return CropBox(left, top, left + side, top + side)


def crop(image: np.ndarray, box: CropBox) -> np.ndarray:
    return image[box.top : box.bottom, box.left : box.right]


def variant_set(
    source: np.ndarray, edits: dict[str, np.ndarray], face_box: FaceBox, *, crop_scales=(2.0,)
) -> dict[str, dict[str, np.ndarray]]:
    """``{variant: {"source": ..., group: ...}}`` for the original, the mirror and one
    crop per scale, all crops at the source's face box."""
    height, width = source.shape[:2]
    images = {"source": source, **edits}
    variants = {"original": images, "mirror": {k: mirror(v) for k, v in images.items()}}
    for scale in crop_scales:
        box = face_anchored_crop_box(face_box, width, height, scale=scale)
        variants[f"crop_{scale:g}x"] = {k: crop(v, box) for k, v in images.items()}
    return variants
