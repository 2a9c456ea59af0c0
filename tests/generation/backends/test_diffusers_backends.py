"""The real diffusers loading path on tiny random-weight pipelines built in a tmp folder."""

import io

import numpy as np
import pytest

pytestmark = pytest.mark.ml

torch = pytest.importorskip("torch")
pytest.importorskip("diffusers")

from generation.backends import ERROR, OK, REFUSED, GenerationRequest, load_generator  # noqa: E402
from generation.backends.diffusers_common import (  # noqa: E402
    COMMON_ARGUMENTS,
    accepted_arguments,
)
from generation.backends.registry import BackendConfigError  # noqa: E402
from tests.support.tiny_pipelines import (  # noqa: E402
    build_tiny_instruct_pix2pix,
    build_tiny_text2image,
)


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny")
    return {
        "t2i": build_tiny_text2image(root / "t2i"),
        "flagging": build_tiny_text2image(root / "flagging", safety="always"),
        "passing": build_tiny_text2image(root / "passing", safety="never"),
        "pix2pix": build_tiny_instruct_pix2pix(root / "pix2pix"),
    }


@pytest.fixture(scope="module")
def default_t2i(folders):
    return t2i(folders["t2i"])


def t2i(folder, **overrides):
    config = {
        "name": "tiny",
        "kind": "diffusers-t2i",
        "model": str(folder),
        "device": "cpu",
        "steps": 2,
        "width": 32,
        "height": 32,
        "guidance": 5.0,
        "batch_size": 4,
        **overrides,
    }
    return load_generator(config)


def pixels(result):
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(result.image)), dtype=np.float32)


def test_text2image_records_settings_per_result(default_t2i):
    requests = [GenerationRequest(f"r{i}", f"a person number {i}", seed=i) for i in range(3)]
    results = default_t2i.generate(requests)
    assert [r.request_id for r in results] == ["r0", "r1", "r2"]
    for result, request in zip(results, requests, strict=True):
        assert result.status == OK and result.mime_type == "image/png"
        assert (result.seed, result.steps, result.guidance) == (request.seed, 2, 5.0)
        assert (result.width, result.height) == (32, 32)
        assert len(result.content_sha256) == 64
        assert result.extra["dtype"] == "float32"  # CPU falls back to fp32


def test_same_seed_same_image_whatever_the_batch(default_t2i):
    generator = default_t2i
    batched = generator.generate([GenerationRequest(f"r{i}", "a person", seed=i) for i in range(4)])
    single = generator.generate([GenerationRequest("again", "a person", seed=2)])[0]
    assert np.abs(pixels(batched[2]) - pixels(single)).max() <= 2  # float noise only
    assert batched[0].content_sha256 != batched[1].content_sha256


def test_per_request_size_and_steps_split_the_batch(default_t2i):
    requests = [
        GenerationRequest("a", "a person", seed=1),
        GenerationRequest("b", "a person", seed=1, width=48, height=32, steps=1),
    ]
    first, second = default_t2i.generate(requests)
    assert (first.width, second.width, second.height, second.steps) == (32, 48, 32, 1)


def test_safety_checker_flag_is_the_refusal_signal(folders):
    flagged = t2i(folders["flagging"]).generate([GenerationRequest("r1", "a person", seed=0)])[0]
    assert flagged.status == REFUSED and flagged.refusal_reason == "nsfw_content_detected"
    assert pixels(flagged).max() == 0  # diffusers blacks out flagged images
    passed = t2i(folders["passing"]).generate([GenerationRequest("r1", "a person", seed=0)])[0]
    assert passed.status == OK and not passed.refusal_reason


def test_safety_checker_can_be_switched_off(folders):
    result = t2i(folders["flagging"], safety_checker=False).generate([GenerationRequest("r", "x")])[
        0
    ]
    assert result.status == OK


def test_pipeline_failure_is_an_error_result_not_an_exception(default_t2i):
    request = GenerationRequest("r1", "a person", width=30)
    result = default_t2i.generate([request])[0]
    assert result.status == ERROR and "ValueError" in result.error  # 30 is not a multiple of 8


def test_instruct_pix2pix_edit(folders, default_t2i):
    source = default_t2i.generate([GenerationRequest("src", "a person", seed=5)])[0].image
    edit = load_generator(
        {
            "name": "edit",
            "kind": "diffusers-edit",
            "model": str(folders["pix2pix"]),
            "device": "cpu",
            "steps": 2,
        }
    )
    results = edit.generate(
        [
            GenerationRequest(f"e{i}", "make the person Asian", seed=i, source_image=source)
            for i in range(2)
        ]
    )
    assert [r.status for r in results] == [OK, OK]
    assert results[0].extra["edit_pipeline"] == "instruct-pix2pix"
    assert (results[0].width, results[0].height) == (32, 32)


def test_text2image_folder_runs_as_img2img(folders, default_t2i):
    source = default_t2i.generate([GenerationRequest("src", "a person", seed=5)])[0].image
    edit = load_generator(
        {
            "name": "i2i",
            "kind": "diffusers-edit",
            "model": str(folders["t2i"]),
            "device": "cpu",
            "steps": 2,
            "strength": 0.5,
        }
    )
    (result,) = edit.generate([GenerationRequest("e", "older", seed=0, source_image=source)])
    assert result.status == OK and result.extra["edit_pipeline"] == "img2img"


def test_an_argument_the_pipeline_does_not_take_is_refused_when_it_is_built(folders):
    # A text-to-image folder run as an instruction editor: StableDiffusionPipeline takes no
    # source image, and dropping it would make text-to-image pictures labelled as edits.
    with pytest.raises(BackendConfigError) as refused:
        load_generator(
            {
                "name": "not-an-editor",
                "kind": "diffusers-edit",
                "model": str(folders["t2i"]),
                "device": "cpu",
                "steps": 2,
                "edit_pipeline": "instruct-pix2pix",
            }
        )
    [line] = str(refused.value).splitlines()
    assert line.startswith(
        "generator 'not-an-editor': StableDiffusionPipeline does not accept 'image', "
        "'image_guidance_scale'"
    )


def test_a_request_argument_the_pipeline_does_not_take_is_an_error_result(folders):
    generator = t2i(folders["t2i"])
    # As a pipeline without negative prompts (some distilled ones) would name its arguments.
    generator._accepted = accepted_arguments(generator.pipeline) - {"negative_prompt"}
    [plain] = generator.generate([GenerationRequest("a", "a person", seed=1)])
    assert plain.status == OK
    [negative] = generator.generate(
        [GenerationRequest("b", "a person", seed=1, negative_prompt="blurry")]
    )
    assert negative.status == ERROR
    assert negative.error == (
        "BackendConfigError: generator 'tiny': StableDiffusionPipeline does not accept "
        f"'negative_prompt' (model {folders['t2i']})"
    )


def test_every_argument_a_call_passes_is_checked_at_load(default_t2i, folders):
    requests = [GenerationRequest("a", "a person", seed=1)]
    passed = set(default_t2i._pipeline_call(requests)) | COMMON_ARGUMENTS
    assert passed == default_t2i._argument_names()
    assert default_t2i._argument_names() <= accepted_arguments(default_t2i.pipeline)
