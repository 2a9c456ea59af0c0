"""Device, dtype, seeds and image encoding shared by the diffusers backends."""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator, Sequence

from generation.backends.base import GenerationRequest

DTYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}


def resolve_device(name: str) -> str:
    import torch

    if name != "auto":
        return name
    if torch.cuda.is_available():
        return "cuda"
    if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def resolve_dtype(name: str, device: str):
    """fp32 on CPU whatever was asked (half precision is slow or unsupported there);
    on a GPU ``auto`` picks bf16 where supported, else fp16."""
    import torch

    if device == "cpu":
        return torch.float32
    if name == "auto":
        if device.startswith("cuda") and torch.cuda.is_bf16_supported():
            return torch.bfloat16
        return torch.float16
    if name not in DTYPES:
        raise ValueError(f"dtype '{name}' is not one of {sorted(DTYPES)} or 'auto'")
    return getattr(torch, DTYPES[name])


def dtype_kwargs(dtype) -> dict:
    """``dtype=`` for diffusers that take it (it deprecated ``torch_dtype=``), else the old name."""
    try:
        from diffusers.utils.deprecation_utils import _resolve_dtype  # noqa: F401
    except ImportError:
        return {"torch_dtype": dtype}
    return {"dtype": dtype}


def seeded_generators(seeds: Iterable[int]) -> list:
    """One CPU ``torch.Generator`` per image: the initial noise of a seed is then the
    same on CPU and GPU and whatever batch the image lands in."""
    import torch

    return [torch.Generator(device="cpu").manual_seed(int(seed)) for seed in seeds]


def png_bytes(image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def chunks(items: Sequence, size: int) -> Iterator[Sequence]:
    size = max(1, int(size))
    for start in range(0, len(items), size):
        yield items[start : start + size]


def group_by_settings(requests: Sequence[GenerationRequest], key) -> list[list[int]]:
    """Indices of requests grouped by ``key(request)``, in first-seen order, so that a
    batch only mixes requests that share steps, guidance and size."""
    groups: dict = {}
    for index, request in enumerate(requests):
        groups.setdefault(key(request), []).append(index)
    return list(groups.values())


def is_out_of_memory(error: BaseException) -> bool:
    import torch

    return isinstance(error, torch.cuda.OutOfMemoryError) or "out of memory" in str(error).lower()


def nsfw_flags(output, count: int) -> list[bool]:
    """The pipeline's ``nsfw_content_detected`` (None when it has no checker)."""
    flags = getattr(output, "nsfw_content_detected", None)
    if flags is None:
        return [False] * count
    return [bool(flag) for flag in flags]
