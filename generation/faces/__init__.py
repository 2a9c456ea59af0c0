"""Face-only counterfactual sets (FOCUS): the edit protocol, per-edit QC and variants.

``protocol``, ``qc`` and ``variants`` are Django-free (named below); ``services`` holds the
writes of a face set (create it, import its templates, make, accept and publish its edits)."""

from generation.faces.protocol import (
    FaceEditPlan,
    FaceEditProtocol,
    face_edit_requests,
    load_face_protocol,
    plan_face_edits,
)
from generation.faces.qc import (
    EditQC,
    FaceBox,
    QCSummary,
    detect_face_box,
    edit_leakage,
    summarize_qc,
)
from generation.faces.variants import CropBox, crop, face_anchored_crop_box, mirror, variant_set

__all__ = [
    "CropBox",
    "EditQC",
    "FaceBox",
    "FaceEditPlan",
    "FaceEditProtocol",
    "QCSummary",
    "crop",
    "detect_face_box",
    "edit_leakage",
    "face_anchored_crop_box",
    "face_edit_requests",
    "load_face_protocol",
    "mirror",
    "plan_face_edits",
    "summarize_qc",
    "variant_set",
]
