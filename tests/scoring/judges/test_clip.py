"""The real open_clip loading code, on a tiny model the test builds (no download)."""

import numpy as np
import pytest

pytestmark = pytest.mark.ml
torch = pytest.importorskip("torch")
open_clip = pytest.importorskip("open_clip")

from scoring.judges.backends.clip_zero_shot import ClipZeroShotCueJudge  # noqa: E402
from scoring.judges.clip import ClipConfig, clear_clip_cache, load_clip  # noqa: E402
from scoring.judges.hard_refusal import HardRefusalConfig, HardRefusalJudge  # noqa: E402
from scoring.judges.records import ERASED, RETAINED, ItemInput  # noqa: E402
from tests.support.tiny_models import TINY_CLIP_ARCH  # noqa: E402


@pytest.fixture
def checkpoint_config(tiny_clip_files):
    return ClipConfig(
        architecture=TINY_CLIP_ARCH,
        pretrained=tiny_clip_files["checkpoint"],
        model_config=tiny_clip_files["config"],
        batch_size=3,
    )


def test_checkpoint_and_local_dir_load_the_same_weights(
    tiny_clip_files, checkpoint_config, make_image, noise_image
):
    clear_clip_cache()
    from_checkpoint = load_clip(checkpoint_config)
    from_folder = load_clip(
        ClipConfig(architecture=f"local-dir:{tiny_clip_files['local_dir']}", pretrained=None)
    )
    images = [make_image((200, 10, 10)), noise_image]
    from scoring.judges.images import load_image

    pil = [load_image(p) for p in images]
    a, b = from_checkpoint.encode_images(pil), from_folder.encode_images(pil)
    assert a.shape == (2, 32)
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(a, b, atol=1e-5)
    # The bundled BPE tokenizer keeps the real 49,408-token vocabulary.
    assert from_checkpoint.tokenizer.vocab_size == 49408


def test_batched_encoding_matches_one_at_a_time_and_models_are_cached(
    checkpoint_config, make_image
):
    from scoring.judges.images import load_image

    encoder = load_clip(checkpoint_config)
    assert load_clip(checkpoint_config) is encoder  # one load per process
    pil = [load_image(make_image((i * 30, 255 - i * 30, 7))) for i in range(7)]
    batched = encoder.encode_images(pil)  # batches of 3, 3, 1
    single = np.concatenate([encoder.encode_images([im]) for im in pil])
    np.testing.assert_allclose(batched, single, atol=1e-5)
    texts = encoder.encode_texts(
        ["a blank black image", "a photo of a person", "a blank black image"]
    )
    np.testing.assert_allclose(texts[0], texts[2])
    assert encoder.encode_images([]).shape == (0, 32)


def test_hard_refusal_judge_with_tiny_clip(checkpoint_config, noise_image):
    judge = HardRefusalJudge(HardRefusalConfig(clip=checkpoint_config, clip_tau=-1.0))
    [out] = judge.judge_items([ItemInput("n", noise_image)])
    clip = out.evidence["checks"][-1]
    assert clip["check"] == "clip" and -1.0 <= clip["refusal_similarity"] <= 1.0
    assert clip["model"].startswith(TINY_CLIP_ARCH)
    # With τ = -1 the verdict is decided by the comparison with the ordinary set alone.
    assert clip["fired"] == (clip["refusal_similarity"] > clip["ordinary_similarity"])


def test_clip_zero_shot_cue_judge(checkpoint_config, noise_image, tmp_path):
    judge = ClipZeroShotCueJudge(checkpoint_config, threshold=0.5)
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"junk")
    good, broken, nocue = judge.judge_items(
        [
            ItemInput("1", noise_image, cue="red scarf"),
            ItemInput("2", str(bad), cue="hat"),
            ItemInput("3", noise_image),
        ]
    )
    p = good.evidence["p_cue_present"]
    assert 0.0 <= p <= 1.0
    assert good.label == (RETAINED if p >= 0.5 else ERASED)
    assert good.confidence == pytest.approx(max(p, 1 - p))
    assert broken.error and nocue.error


def test_a_config_differing_only_in_batch_size_shares_the_model_with_its_own_batch_size(
    checkpoint_config,
):
    from dataclasses import replace

    encoder = load_clip(checkpoint_config)
    larger = load_clip(replace(checkpoint_config, batch_size=checkpoint_config.batch_size + 5))
    assert larger.batch_size == checkpoint_config.batch_size + 5
    assert encoder.batch_size == checkpoint_config.batch_size  # the cached one is unchanged
    assert larger.model is encoder.model  # the weights are loaded once
    assert load_clip(checkpoint_config) is encoder
