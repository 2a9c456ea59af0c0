"""bench/judge_bench.py's FLOP count and tower timing with a bf16 tower (issue 24: the counter
fed float32 images to bf16 weights and failed before timing anything). CPU runs bf16."""

import pytest

from tests.support.bench_scripts import load_bench_script

pytestmark = pytest.mark.ml


@pytest.fixture(scope="module")
def judge_bench():
    pytest.importorskip("open_clip")
    return load_bench_script("judge_bench")


@pytest.fixture(scope="module")
def tiny_clip_dir(tmp_path_factory):
    from tests.support.tiny_models import build_tiny_open_clip

    return build_tiny_open_clip(tmp_path_factory.mktemp("tiny_clip"))["local_dir"]


@pytest.fixture
def tiny_encoder(tiny_clip_dir):
    import copy

    from scoring.judges.clip import ClipConfig, ClipEncoder, load_clip

    config = ClipConfig(architecture=f"local-dir:{tiny_clip_dir}", pretrained=None)
    loaded = load_clip(config)
    # A private copy of the model: these tests cast it.
    return ClipEncoder(copy.deepcopy(loaded.model), loaded.preprocess, loaded.tokenizer, config)


def test_the_flop_count_of_a_bf16_tower_is_that_of_the_float32_one(judge_bench, tiny_encoder):
    import torch
    from open_clip.model import convert_weights_to_lp

    float32_flops = judge_bench.model_flops_per_image(tiny_encoder.model, "cpu")
    model = tiny_encoder.model
    convert_weights_to_lp(model, dtype=torch.bfloat16)  # as open_clip does for precision bf16
    # open_clip leaves the class and position embeddings in float32: the first parameter is
    # not the input's dtype, the patch embedding is.
    assert next(model.parameters()).dtype == torch.float32
    assert judge_bench.tower_dtype(model) == torch.bfloat16
    assert judge_bench.model_flops_per_image(model, "cpu") == float32_flops > 0


def test_the_tower_is_timed_in_both_precisions(judge_bench, tiny_encoder):
    import torch

    towers = {p: judge_bench.tower_in_precision(tiny_encoder, p) for p in ("fp32", "bf16")}
    assert towers["fp32"] is tiny_encoder  # already float32: the configured encoder itself
    assert judge_bench.tower_dtype(towers["bf16"].model) == torch.bfloat16
    assert judge_bench.tower_dtype(tiny_encoder.model) == torch.float32  # a copy was cast
    for tower in towers.values():
        images = judge_bench.tower_input(tower.model, "cpu", batch=4)
        assert judge_bench.tower_seconds(tower, images, batch_size=2) > 0
