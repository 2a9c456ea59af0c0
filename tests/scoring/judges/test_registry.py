import pytest

from scoring.judges import ItemInput, load_judge
from scoring.judges.cache import CachedJudge, MemoryCacheStore
from scoring.judges.ensemble import EnsembleJudge
from scoring.judges.hard_refusal import HardRefusalJudge
from tests.support.openai_server import OpenAIServer, answer_with


def test_hard_refusal_rules_only_from_config(make_image):
    judge = load_judge(
        {"kind": "hard_refusal", "name": "hr", "version": "3", "clip": None, "blank_std_max": 1.0}
    )
    assert isinstance(judge, HardRefusalJudge) and (judge.name, judge.version) == ("hr", "3")
    [out] = judge.judge_items([ItemInput("1", make_image((0, 0, 0)))])
    assert out.label == "refusal" and out.judge_name == "hr"


def test_api_cue_judge_and_ensemble_with_cache(make_image):
    with OpenAIServer(answer_with("erased")) as server:
        member = {
            "kind": "cue_vlm", "name": "api", "version": "v1",
            "backend": {"type": "openai", "endpoint": server.base_url, "model": "m", "max_retries": 0},
            "decoding": {"max_new_tokens": 4},
        }  # fmt: skip
        store = MemoryCacheStore()
        config = {"kind": "ensemble", "name": "ens", "members": [member], "min_confidence": 0.0}
        judge = load_judge(config, cache=store, device="cuda")  # device leaves API backends alone
        assert isinstance(judge, EnsembleJudge) and isinstance(judge.members[0], CachedJudge)
        item = ItemInput("1", make_image((5, 5, 5)), cue="hat")
        [first] = judge.judge_items([item])
        [second] = load_judge(config, cache=store).judge_items([item])
    assert first.label == second.label == "erased"
    assert second.member_outputs[0].cached and len(server.requests) == 1
    assert server.requests[0]["max_tokens"] == 4


def test_config_errors_are_precise():
    with pytest.raises(ValueError, match="unknown judge kind"):
        load_judge({"kind": "oracle", "name": "x"})
    with pytest.raises(ValueError, match="needs a 'name'"):
        load_judge({"kind": "hard_refusal"})
    with pytest.raises(ValueError, match="backend type"):
        load_judge({"kind": "cue_vlm", "name": "x", "backend": {"type": "magic"}})


@pytest.mark.ml
def test_clip_and_vlm_judges_from_config(tiny_clip_files, rigged_llava_dir, make_image):
    pytest.importorskip("torch")
    from tests.support.tiny_models import TINY_CLIP_ARCH

    clip = {"architecture": TINY_CLIP_ARCH, "pretrained": tiny_clip_files["checkpoint"],
            "model_config": tiny_clip_files["config"], "device": "cuda"}  # fmt: skip
    config = {
        "kind": "ensemble", "name": "cue_ensemble", "min_valid_votes": 2,
        "members": [
            {"kind": "cue_clip", "name": "clip_cue", "clip": clip},
            {"kind": "cue_vlm", "name": "tiny_vlm", "decoding": {"max_new_tokens": 1},
             "backend": {"type": "transformers", "model": rigged_llava_dir, "device": "cuda"}},
        ],
    }  # fmt: skip
    judge = load_judge(config, device="cpu")  # the worker's --device wins over the config
    [out] = judge.judge_items([ItemInput("1", make_image((9, 9, 9)), cue="hat")])
    assert [m.judge_name for m in out.member_outputs] == ["clip_cue", "tiny_vlm"]
    assert out.member_outputs[1].label == "erased"
    assert out.label in ("erased", "retained")


def test_configured_batch_size_reads_the_model_batch_without_loading():
    from scoring.judges.registry import configured_batch_size

    clip = {"kind": "hard_refusal", "clip": {"architecture": "ViT-B-32", "batch_size": 128}}
    vlm = {"kind": "cue_vlm", "backend": {"type": "transformers", "batch_size": 8}}
    assert configured_batch_size(clip) == 128
    assert configured_batch_size(vlm) == 8
    assert configured_batch_size({"kind": "hard_refusal", "clip": None}) == 1  # rules only
    assert configured_batch_size({"kind": "ensemble", "members": [clip, vlm]}) == 128
    assert configured_batch_size({"kind": "ensemble", "members": []}) == 1
    # No batch_size named: the model config's own default, not 1.
    assert (
        configured_batch_size({"kind": "hard_refusal", "clip": {"architecture": "ViT-B-32"}}) == 64
    )
    assert configured_batch_size({"kind": "cue_vlm", "backend": {"model": "m"}}) == 8
    api = {"kind": "cue_vlm", "backend": {"type": "openai", "batch_size": 99}}
    assert configured_batch_size(api) == 1  # requests run one each, whatever the section says
