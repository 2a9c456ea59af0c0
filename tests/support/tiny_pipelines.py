"""Tiny random-weight diffusers pipelines for tests: the builders live in the package
(generation.backends.tiny) so that ``seed_pipeline_demo`` can use them too."""

from generation.backends.tiny import (
    SPECIAL_TOKENS,
    build_tiny_instruct_pix2pix,
    build_tiny_text2image,
    tiny_components,
    write_tiny_tokenizer,
)

__all__ = [
    "SPECIAL_TOKENS",
    "build_tiny_instruct_pix2pix",
    "build_tiny_text2image",
    "tiny_components",
    "write_tiny_tokenizer",
]
