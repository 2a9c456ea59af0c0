"""Tiny random-weight diffusers pipelines, saved to a folder so that tests and the demo
exercise the real ``from_pretrained(folder)`` loading path. No download: the tokenizer's
vocab.json and merges.txt are written here, every weight is random.

    folder = build_tiny_text2image(tmp_path / "t2i")
    pipe = AutoPipelineForText2Image.from_pretrained(folder)   # StableDiffusionPipeline

``safety="always"`` / ``"never"`` adds a tiny StableDiffusionSafetyChecker whose concept
thresholds make it flag every image / no image, so the ``nsfw_content_detected`` path
runs for real. Images are noise.
"""

from __future__ import annotations

import json
from pathlib import Path

SPECIAL_TOKENS = ["<|startoftext|>", "<|endoftext|>"]


def _byte_alphabet() -> list[str]:
    # GPT-2 / CLIP byte-to-unicode table: every byte maps to one printable character.
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
    printable += list(range(ord("®"), ord("ÿ") + 1))
    extra = [b for b in range(256) if b not in printable]
    codes = printable + [256 + i for i in range(len(extra))]
    return [chr(code) for code in codes]


def write_tiny_tokenizer(folder: Path):
    """A CLIPTokenizer over single characters (plus a few merges), written to ``folder``."""
    from transformers import CLIPTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    alphabet = _byte_alphabet()
    tokens = alphabet + [f"{char}</w>" for char in alphabet]
    merges = ["t h", "th e</w>", "a n", "o n</w>", "e r</w>", "i n", "in g</w>"]
    tokens += [merge.replace(" ", "") for merge in merges] + SPECIAL_TOKENS
    vocab = {token: index for index, token in enumerate(dict.fromkeys(tokens))}
    (folder / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    (folder / "merges.txt").write_text("#version: 0.2\n" + "\n".join(merges) + "\n", "utf-8")
    return CLIPTokenizer.from_pretrained(str(folder), model_max_length=32)


def _text_encoder(vocab_size: int, hidden_size: int):
    from transformers import CLIPTextConfig, CLIPTextModel

    config = CLIPTextConfig(
        vocab_size=vocab_size,
        hidden_size=hidden_size,
        intermediate_size=hidden_size * 2,
        num_attention_heads=4,
        num_hidden_layers=2,
        max_position_embeddings=32,
        bos_token_id=vocab_size - 2,
        eos_token_id=vocab_size - 1,
        pad_token_id=vocab_size - 1,
    )
    return CLIPTextModel(config)


def _unet(channels: tuple[int, ...], cross_attention_dim: int, in_channels: int, layers: int):
    from diffusers import UNet2DConditionModel

    down = ["DownBlock2D"] + ["CrossAttnDownBlock2D"] * (len(channels) - 1)
    up = ["CrossAttnUpBlock2D"] * (len(channels) - 1) + ["UpBlock2D"]
    return UNet2DConditionModel(
        sample_size=16,
        in_channels=in_channels,
        out_channels=4,
        block_out_channels=channels,
        layers_per_block=layers,
        down_block_types=tuple(down),
        up_block_types=tuple(up),
        cross_attention_dim=cross_attention_dim,
        attention_head_dim=4,
        norm_num_groups=min(8, channels[0]),
    )


def _vae(channels: tuple[int, ...]):
    from diffusers import AutoencoderKL

    return AutoencoderKL(
        in_channels=3,
        out_channels=3,
        block_out_channels=channels,
        down_block_types=["DownEncoderBlock2D"] * len(channels),
        up_block_types=["UpDecoderBlock2D"] * len(channels),
        latent_channels=4,
        norm_num_groups=min(8, channels[0]),
        sample_size=32,
    )


def _safety_checker(mode: str):
    from diffusers.pipelines.stable_diffusion.safety_checker import StableDiffusionSafetyChecker
    from transformers import CLIPConfig, CLIPImageProcessor

    small = {
        "hidden_size": 32,
        "intermediate_size": 37,
        "num_attention_heads": 4,
        "num_hidden_layers": 2,
    }
    config = CLIPConfig(
        text_config=small,
        vision_config={**small, "image_size": 32, "patch_size": 4},
        projection_dim=32,
    )
    checker = StableDiffusionSafetyChecker(config).eval()
    # A threshold below any cosine flags everything; one above any cosine flags nothing.
    threshold = -2.0 if mode == "always" else 2.0
    checker.concept_embeds_weights.data.fill_(threshold)
    checker.special_care_embeds_weights.data.fill_(2.0)
    processor = CLIPImageProcessor(
        size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}
    )
    return checker, processor


def tiny_components(
    folder: Path,
    *,
    unet_channels: tuple[int, ...] = (8, 16),
    vae_channels: tuple[int, ...] = (8, 16),
    text_hidden: int = 32,
    unet_in_channels: int = 4,
    layers_per_block: int = 1,
    safety: str = "none",
    seed: int = 0,
) -> dict:
    import torch
    from diffusers import DDIMScheduler

    torch.manual_seed(seed)
    tokenizer = write_tiny_tokenizer(folder / "_tokenizer_source")
    components = {
        "unet": _unet(unet_channels, text_hidden, unet_in_channels, layers_per_block),
        "vae": _vae(vae_channels),
        "text_encoder": _text_encoder(len(tokenizer), text_hidden),
        "tokenizer": tokenizer,
        "scheduler": DDIMScheduler(
            beta_start=0.00085, beta_end=0.012, clip_sample=False, steps_offset=1
        ),
        "safety_checker": None,
        "feature_extractor": None,
        "requires_safety_checker": False,
    }
    if safety != "none":
        checker, processor = _safety_checker(safety)
        components.update(safety_checker=checker, feature_extractor=processor)
        components["requires_safety_checker"] = True
    return components


def build_tiny_text2image(folder: Path, **options) -> Path:
    """A StableDiffusionPipeline saved to ``folder`` (loads with AutoPipelineForText2Image)."""
    from diffusers import StableDiffusionPipeline

    folder = Path(folder)
    StableDiffusionPipeline(**tiny_components(folder, **options)).save_pretrained(folder)
    return folder


def build_tiny_instruct_pix2pix(folder: Path, **options) -> Path:
    """A StableDiffusionInstructPix2PixPipeline (UNet with 8 input channels) saved to ``folder``."""
    from diffusers import StableDiffusionInstructPix2PixPipeline

    folder = Path(folder)
    components = tiny_components(folder, unet_in_channels=8, **options)
    StableDiffusionInstructPix2PixPipeline(**components).save_pretrained(folder)
    return folder
