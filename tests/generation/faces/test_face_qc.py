"""Face QC on a real photo shipped by scikit-image, with synthetic edits."""

import numpy as np
import pytest

from generation.faces import FaceBox, edit_leakage, summarize_qc

pytest.importorskip("cv2")
skimage_data = pytest.importorskip("skimage.data")

from generation.faces import detect_face_box  # noqa: E402


@pytest.fixture(scope="module")
def astronaut():
    return skimage_data.astronaut()  # 512x512 RGB, Eileen Collins' face upper centre


@pytest.fixture(scope="module")
def face(astronaut):
    box = detect_face_box(astronaut)
    assert box is not None
    return box


def shifted(image, region, amount):
    edited = image.astype(np.int16)
    edited[region] += amount
    return np.clip(edited, 0, 255).astype(np.uint8)


def test_face_is_found_where_the_astronaut_face_is(face):
    centre_x, centre_y = face.x + face.width / 2, face.y + face.height / 2
    assert 150 < centre_x < 300 and 50 < centre_y < 200
    assert 60 < face.width < 200


def test_edit_inside_the_face_passes(astronaut, face):
    region = np.s_[face.y : face.y + face.height, face.x : face.x + face.width]
    qc = edit_leakage(astronaut, shifted(astronaut, region, 40))
    assert not qc.flagged and qc.face_box == face
    assert qc.inside_diff == pytest.approx(40 / 255, abs=0.02)
    assert qc.outside_diff == 0.0 and qc.ratio > 1000


def test_edit_outside_the_face_is_flagged(astronaut, face):
    edited = shifted(astronaut, np.s_[face.y + face.height + 20 :, :], 60)  # below the face
    qc = edit_leakage(astronaut, edited)
    assert qc.flagged and qc.reason == "leaks_outside_face"
    assert qc.inside_diff == 0.0 and qc.outside_diff > 0.05


def test_global_change_gives_a_low_ratio(astronaut):
    qc = edit_leakage(astronaut, shifted(astronaut, np.s_[:, :], 8), max_outside_diff=0.5)
    assert qc.flagged and qc.reason == "low_ratio" and qc.ratio == pytest.approx(1.0, abs=0.05)


def test_limit_is_configurable(astronaut, face):
    edited = shifted(astronaut, np.s_[face.y + face.height + 20 :, :], 60)
    assert not edit_leakage(astronaut, edited, max_outside_diff=0.5, min_ratio=None).flagged


def test_no_face_is_flagged():
    blank = np.full((64, 64, 3), 128, dtype=np.uint8)
    qc = edit_leakage(blank, blank)
    assert qc.flagged and qc.reason == "no_face" and qc.face_box is None


def test_edit_returned_at_another_size_is_resized(astronaut, face):
    from PIL import Image

    smaller = np.asarray(Image.fromarray(astronaut).resize((256, 256)))
    qc = edit_leakage(astronaut, smaller, face_box=face)
    assert qc.resized and qc.outside_diff < 0.05


def test_summary_reproduces_published_style_figures():
    # Synthetic 100x100 edits with 0.141 mean change inside a 50x50 box and 0.022 outside,
    # the REFLECT paper's reported means: the ratio is then 0.141 / 0.022.
    box = FaceBox(25, 25, 50, 50)
    source = np.zeros((100, 100, 3), dtype=np.float64)
    results = []
    for inside, outside in [(0.141, 0.022), (0.2, 0.01), (0.1, 0.03)]:
        edited = np.full((100, 100, 3), outside * 255)
        edited[25:75, 25:75] = inside * 255
        results.append(edit_leakage(source, edited, face_box=box, max_outside_diff=0.05))
    assert results[0].ratio == pytest.approx(0.141 / 0.022)
    summary = summarize_qc(results)
    assert summary.edits == 3 and summary.flagged == 0
    assert summary.mean_inside_diff == pytest.approx((0.141 + 0.2 + 0.1) / 3)
    assert summary.median_ratio == pytest.approx(0.141 / 0.022)


def test_box_margin_grows_the_face_region(astronaut, face):
    grown = face.expanded(0.25, 512, 512)
    assert grown.width > face.width and grown.x < face.x
    assert edit_leakage(astronaut, astronaut, box_margin=0.25).face_box == grown
