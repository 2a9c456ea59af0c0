"""Quality control of face-only edits (FOCUS protocol).

Per edit: detect the face in the source photo (OpenCV's bundled frontal-face Haar
cascade), then compare source and edit by the mean absolute pixel difference (RGB in
[0, 1]) inside the face box and outside it. A face-only edit changes the inside much
more than the outside; an edit whose outside difference exceeds ``max_outside_diff``
(or whose inside/outside ratio is below ``min_ratio``) is flagged as leaking.
The paper reports mean 0.141 inside vs 0.022 outside, median ratio 8.16
(REFLECT, arXiv:2601.06931v2, Appendix A; ``published_figures.focus_qc``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

DEFAULT_MAX_OUTSIDE_DIFF = 0.05
DEFAULT_MIN_RATIO = 2.0
_RATIO_FLOOR = 1e-6  # an untouched outside would give an infinite ratio


@dataclass(frozen=True)
class FaceBox:
    x: int
    y: int
    width: int
    height: int

    def expanded(self, margin: float, image_width: int, image_height: int) -> FaceBox:
        """The box grown by ``margin`` x its size on each side, clipped to the image."""
        dx, dy = int(round(self.width * margin)), int(round(self.height * margin))
        left, top = max(0, self.x - dx), max(0, self.y - dy)
        right = min(image_width, self.x + self.width + dx)
        bottom = min(image_height, self.y + self.height + dy)
        return FaceBox(left, top, right - left, bottom - top)


@dataclass(frozen=True)
class EditQC:
    inside_diff: float
    outside_diff: float
    ratio: float
    flagged: bool
    reason: str  # "" when it passes; "no_face", "leaks_outside_face", "low_ratio"
    face_box: FaceBox | None
    resized: bool = False  # the edit came back at another size and was resized to the source


def detect_face_box(image: np.ndarray, *, min_size_fraction: float = 0.1) -> FaceBox | None:
    """The largest frontal face in an RGB uint8 image, or None."""
    import cv2

    cascade = cv2.CascadeClassifier(cv2.data.haarcascades + "haarcascade_frontalface_default.xml")
    gray = cv2.cvtColor(np.ascontiguousarray(image[..., :3]), cv2.COLOR_RGB2GRAY)
    smallest = max(16, int(min(gray.shape) * min_size_fraction))
    faces = cascade.detectMultiScale(
        gray, scaleFactor=1.1, minNeighbors=5, minSize=(smallest, smallest)
    )
    if len(faces) == 0:
        return None
    x, y, width, height = max(faces, key=lambda face: face[2] * face[3])
    return FaceBox(int(x), int(y), int(width), int(height))


def edit_leakage(
    source: np.ndarray,
    edited: np.ndarray,
    *,
    face_box: FaceBox | None = None,
    box_margin: float = 0.0,
    max_outside_diff: float = DEFAULT_MAX_OUTSIDE_DIFF,
    min_ratio: float | None = DEFAULT_MIN_RATIO,
) -> EditQC:
    """QC of one edit. ``face_box`` defaults to the face detected in ``source``."""
    source, edited, resized = _same_size(source, edited)
    box = face_box if face_box is not None else detect_face_box(source)
    if box is None:
        return EditQC(0.0, 0.0, 0.0, True, "no_face", None, resized)
    height, width = source.shape[:2]
    box = box.expanded(box_margin, width, height) if box_margin else box
    difference = np.abs(source.astype(np.float64) - edited.astype(np.float64)).mean(axis=2) / 255.0
    inside = np.zeros(difference.shape, dtype=bool)
    inside[box.y : box.y + box.height, box.x : box.x + box.width] = True
    inside_diff = float(difference[inside].mean())
    outside_diff = float(difference[~inside].mean()) if (~inside).any() else 0.0
    ratio = inside_diff / max(outside_diff, _RATIO_FLOOR)
    reason = ""
    if outside_diff > max_outside_diff:
        reason = "leaks_outside_face"
    elif min_ratio is not None and ratio < min_ratio:
        reason = "low_ratio"
    return EditQC(inside_diff, outside_diff, ratio, bool(reason), reason, box, resized)


def _same_size(source: np.ndarray, edited: np.ndarray):
    source, edited = source[..., :3], edited[..., :3]
    if source.shape == edited.shape:
        return source, edited, False
    from PIL import Image

    height, width = source.shape[:2]
    resized = Image.fromarray(edited.astype(np.uint8)).resize((width, height), Image.BILINEAR)
    return source, np.asarray(resized), True


@dataclass(frozen=True)
class QCSummary:
    edits: int
    flagged: int
    mean_inside_diff: float
    mean_outside_diff: float
    median_ratio: float
    mean_ratio: float


def summarize_qc(results: Iterable[EditQC]) -> QCSummary:
    """Per-template summary over edits with a detected face (the paper's QC table)."""
    results = list(results)
    measured = [result for result in results if result.face_box is not None]
    flagged = sum(result.flagged for result in results)
    if not measured:
        return QCSummary(len(results), flagged, 0.0, 0.0, 0.0, 0.0)
    ratios = np.array([result.ratio for result in measured])
    return QCSummary(
        edits=len(results),
        flagged=flagged,
        mean_inside_diff=float(np.mean([result.inside_diff for result in measured])),
        mean_outside_diff=float(np.mean([result.outside_diff for result in measured])),
        median_ratio=float(np.median(ratios)),
        mean_ratio=float(np.mean(ratios)),
    )
