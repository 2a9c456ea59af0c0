"""The demo face set passes the project's face QC, as a user's edited set must."""

import hashlib

import numpy as np
import pytest

from generation.faces.demo import demo_face_images, demo_sources, write_demo_face_folder
from scoring.reflect.layout import read_face_set
from scoring.reflect.protocol import race_slug
from scoring.stats.reflect.vocabulary import GROUPS


def test_every_demo_image_passes_the_edit_qc_and_differs_only_inside_the_face():
    images = demo_face_images(GROUPS)
    assert len(images) == 8 * len(GROUPS)
    for image in images:
        assert not image.qc.flagged, (image.template, image.race, image.gender, image.qc)
        assert image.qc.outside_diff == 0.0 and image.qc.inside_diff > 0.01
    for source in demo_sources():
        digests = {
            hashlib.sha256(image.pixels.tobytes()).hexdigest()
            for image in images
            if (image.occupation, image.template) == (source.occupation, source.template)
        }
        assert len(digests) == len(GROUPS)  # ten distinguishable images per template


def test_the_demo_folder_passes_the_face_set_import_checks(tmp_path):
    write_demo_face_folder(
        tmp_path, GROUPS, file_stem=lambda race, gender: f"{race_slug(race)}_{gender}"
    )
    templates = read_face_set(tmp_path)  # raises FaceSetLayoutError listing any problem
    assert [(t.occupation, t.template, t.source_gender, len(t.images)) for t in templates] == [
        (occupation, f"t0{k}", "female", 10)
        for occupation in ("CEO", "doctor")
        for k in range(1, 5)
    ]
    assert not any(image.qc_flags for t in templates for image in t.images)


def test_the_shipped_face_boxes_are_what_the_face_detector_finds():
    pytest.importorskip("cv2", reason="OpenCV is in the ml extra")
    from generation.faces.qc import detect_face_box

    for source in demo_sources():
        found = detect_face_box(source.pixels)
        assert found is not None
        shipped = source.face_box
        overlap_w = min(found.x + found.width, shipped.x + shipped.width) - max(found.x, shipped.x)
        overlap_h = min(found.y + found.height, shipped.y + shipped.height) - max(
            found.y, shipped.y
        )
        overlap = max(0, overlap_w) * max(0, overlap_h)
        union = found.width * found.height + shipped.width * shipped.height - overlap
        assert overlap / union > 0.8
        assert np.asarray(source.pixels).shape == (192, 192, 3)
