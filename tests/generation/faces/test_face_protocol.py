"""The FOCUS edit protocol and the mirror / face-anchored crop variants."""

import numpy as np
import pytest

from generation.faces import (
    FaceBox,
    FaceEditProtocol,
    face_anchored_crop_box,
    face_edit_requests,
    load_face_protocol,
    mirror,
    plan_face_edits,
    variant_set,
)


def test_default_protocol_has_ten_groups_and_one_template():
    protocol = load_face_protocol()
    assert len(protocol.target_groups) == 10
    assert protocol.target_groups[:2] == ["White female", "White male"]
    assert protocol.reference_group == "White female"
    fixed_parts = protocol.template.split("{TARGET_GROUP}")
    assert len(fixed_parts) > 2  # the group is named several times
    # The instruction's only variable is the target group: fixed text around it.
    for group in protocol.target_groups:
        assert protocol.instruction(group) == group.join(fixed_parts)
    assert "background" in protocol.template and "clothing" in protocol.template


def test_template_must_keep_the_placeholder():
    with pytest.raises(ValueError):
        load_face_protocol(template="Make the person look different.")


def test_plan_is_sources_times_groups_with_stable_ids():
    protocol = FaceEditProtocol("Make them {G}.", "{G}", ("Black", "Asian"), ("female", "male"))
    plan = plan_face_edits(["img1", "img2"], protocol)
    assert len(plan) == 8
    assert plan[0].request_id == "img1:Black:female"
    assert plan[0].instruction == "Make them Black female."
    assert plan[0].template == "img1"


def test_requests_carry_the_source_image():
    protocol = FaceEditProtocol("Make them {G}.", "{G}", ("Black",), ("male",))
    (request,) = face_edit_requests({"img1": b"png-bytes"}, protocol, seed=7)
    assert (request.source_image, request.seed, request.prompt) == (
        b"png-bytes",
        7,
        "Make them Black male.",
    )


def test_mirror_flips_the_image():
    image = np.arange(2 * 4 * 3).reshape(2, 4, 3)
    assert (mirror(image)[:, 0] == image[:, 3]).all()


def test_crop_is_anchored_on_the_face_and_stays_inside():
    box = face_anchored_crop_box(FaceBox(40, 40, 20, 20), 100, 100, scale=2.0)
    assert (box.left, box.top, box.right, box.bottom) == (30, 30, 70, 70)
    corner = face_anchored_crop_box(FaceBox(0, 0, 20, 20), 100, 100, scale=3.0)
    assert (corner.left, corner.top, corner.right - corner.left) == (0, 0, 60)


def test_variant_set_crops_every_edit_at_the_source_box():
    source = np.zeros((100, 100, 3), dtype=np.uint8)
    edits = {"Black male": np.ones((100, 100, 3), dtype=np.uint8)}
    variants = variant_set(source, edits, FaceBox(40, 40, 20, 20), crop_scales=(2.0, 3.0))
    assert set(variants) == {"original", "mirror", "crop_2x", "crop_3x"}
    assert variants["crop_2x"]["Black male"].shape == (40, 40, 3)
    assert variants["crop_3x"]["source"].shape == (60, 60, 3)
