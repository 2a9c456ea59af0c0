"""Tiny random-weight models, built and saved to a folder by the tests themselves.

Nothing is downloaded: the open_clip model comes from a tiny custom config (keeping open_clip's
bundled BPE tokenizer, vocabulary 49,408), the vision-language model is a LLaVA-style
``LlavaForConditionalGeneration`` (tiny CLIP vision tower + tiny Llama) with a word-level
tokenizer and a chat template written here. The real loading code then reads these folders.
"""

from __future__ import annotations

import json
from pathlib import Path

TINY_CLIP_ARCH = "TinyCLIP-acrb-test"
TINY_CLIP_CONFIG = {
    "embed_dim": 32,
    "vision_cfg": {"image_size": 32, "layers": 1, "width": 32, "head_width": 16, "patch_size": 16},
    "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 1},
}

VLM_WORDS = (
    "retained erased substituted confidence yes no a an the image photo shows attribute "
    "requested request was is not of in with answer one word exactly or you may add line "
    'number from to red scarf person nurse doctor hat glasses : . , " - ( )'
).split()
VLM_SPECIAL = ("<pad>", "<s>", "</s>", "<unk>", "<image>")
VLM_CHAT_TEMPLATE = (
    "{% for message in messages %}{{ message['role'] }} :"
    "{% if message['content'] is string %} {{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %} <image>{% elif part['type'] == 'text' %} {{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %} </s> {% endfor %}"
    "{% if add_generation_prompt %}assistant :{% endif %}"
)


def build_tiny_open_clip(folder: str | Path) -> dict[str, str]:
    """Writes three ways to load the same tiny model; returns their paths.

    ``config``: the architecture JSON (register with ``open_clip.add_model_config``);
    ``checkpoint``: a state-dict file for ``pretrained=``; ``local_dir``: a folder with
    ``open_clip_config.json`` + ``open_clip_model.safetensors`` for ``local-dir:``.
    """
    import open_clip
    import torch
    from safetensors.torch import save_file

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    config_path = folder / f"{TINY_CLIP_ARCH}.json"
    config_path.write_text(json.dumps(TINY_CLIP_CONFIG))
    open_clip.add_model_config(config_path)
    torch.manual_seed(0)
    model = open_clip.create_model(TINY_CLIP_ARCH, pretrained=None)
    state = {k: v.contiguous() for k, v in model.state_dict().items()}
    checkpoint = folder / "tiny_clip.pt"
    torch.save(state, checkpoint)
    local_dir = folder / "local_dir"
    local_dir.mkdir(exist_ok=True)
    (local_dir / "open_clip_config.json").write_text(
        json.dumps({"model_cfg": TINY_CLIP_CONFIG, "preprocess_cfg": {}})
    )
    save_file(state, local_dir / "open_clip_model.safetensors")
    return {"config": str(config_path), "checkpoint": str(checkpoint), "local_dir": str(local_dir)}


def _write_tokenizer(folder: Path):
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {
        token: index for index, token in enumerate(VLM_SPECIAL + tuple(dict.fromkeys(VLM_WORDS)))
    }
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        pad_token="<pad>",
        extra_special_tokens={"image_token": "<image>"},
    )
    tokenizer.add_special_tokens({"additional_special_tokens": ["<image>"]})
    tokenizer.chat_template = VLM_CHAT_TEMPLATE
    return tokenizer


def build_tiny_llava(folder: str | Path, *, answer_word: str | None = None) -> str:
    """A LLaVA-style image-text-to-text model with random weights, saved for ``from_pretrained``.

    With ``answer_word``, the weights are rigged so that word is by far the likeliest next
    token after any prompt: generation and option scoring then have a known right answer.
    """
    import torch
    from transformers import (
        CLIPImageProcessor,
        CLIPVisionConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
    )

    folder = Path(folder)
    tokenizer = _write_tokenizer(folder)
    vision = CLIPVisionConfig(
        image_size=32,
        patch_size=16,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        projection_dim=32,
    )
    text = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=512,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        mlp_bias=True,
    )
    config = LlavaConfig(
        vision_config=vision,
        text_config=text,
        image_token_index=tokenizer.convert_tokens_to_ids("<image>"),
        image_seq_length=4,
        vision_feature_select_strategy="default",
        vision_feature_layer=-2,
    )
    torch.manual_seed(0)
    model = LlavaForConditionalGeneration(config).eval()
    if answer_word is not None:
        _rig_answer(model, tokenizer.convert_tokens_to_ids(answer_word))
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(folder)
    image_processor = CLIPImageProcessor(
        size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}
    )
    processor = LlavaProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        patch_size=16,
        vision_feature_select_strategy="default",
        num_additional_image_tokens=1,
        chat_template=VLM_CHAT_TEMPLATE,
    )
    processor.save_pretrained(folder)
    return str(folder)


def _rig_answer(model, token_id: int) -> None:
    """A huge constant from the last MLP's bias swamps the residual stream, so the final
    hidden state points along one axis whatever the input; only ``token_id``'s output row
    reads that axis."""
    import torch

    with torch.no_grad():
        language_model = model.model.language_model
        mlp = language_model.layers[-1].mlp
        mlp.down_proj.weight.zero_()
        mlp.down_proj.bias.zero_()
        mlp.down_proj.bias[0] = 1e4
        model.lm_head.weight.zero_()
        model.lm_head.weight[token_id, 0] = 20.0
