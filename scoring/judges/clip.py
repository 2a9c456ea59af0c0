"""open_clip models for the judges: loaded from local files only, cached per process.

Weights come from one of:
- ``architecture="ViT-B-32", pretrained="openai"``: an open_clip tag, resolved in ``cache_dir``
  (the Hugging Face / open_clip cache). Run workers with ``HF_HUB_OFFLINE=1`` so a missing
  cache fails loudly instead of downloading.
- ``architecture="ViT-B-32", pretrained="/models/clip.safetensors"``: a checkpoint file.
- ``architecture="local-dir:/models/my-clip"``: a folder holding ``open_clip_config.json`` and
  the weights (open_clip's own export layout).
``model_config`` optionally names a JSON config (or folder of them) registered with
``open_clip.add_model_config`` first, for architectures open_clip does not bundle.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np
from PIL import Image

from scoring.judges.device_images import same_shape_groups


@dataclass(frozen=True)
class ClipConfig:
    architecture: str = "ViT-B-32"
    pretrained: str | None = "openai"
    cache_dir: str | None = None
    model_config: str | None = None
    device: str = "cpu"
    precision: str = "fp32"
    batch_size: int = 64
    # Without weights open_clip silently builds a random model: only benchmarks want that.
    allow_random_weights: bool = False

    def __post_init__(self):
        has_weights = self.pretrained or self.architecture.startswith("local-dir:")
        if not has_weights and not self.allow_random_weights:
            raise ValueError(
                "CLIP config names no weights: set 'pretrained' (a tag or a checkpoint path) "
                "or use 'local-dir:<folder>' as the architecture"
            )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ClipConfig:
        unknown = set(data) - set(cls.__dataclass_fields__)
        if unknown:
            raise ValueError(f"unknown CLIP config keys: {sorted(unknown)}")
        return cls(**data)

    def cache_key(self) -> tuple:
        values = asdict(self)
        values.pop("batch_size")
        return tuple(sorted(values.items()))


class ClipEncoder:
    """Normalised image and text embeddings from one loaded open_clip model."""

    def __init__(self, model: Any, preprocess: Any, tokenizer: Any, config: ClipConfig):
        self.model = model
        self.preprocess = preprocess
        self.tokenizer = tokenizer
        self.config = config
        self._text_cache: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    @property
    def version(self) -> str:
        return f"{self.config.architecture}:{self.config.pretrained}"

    @property
    def batch_size(self) -> int:
        return max(1, self.config.batch_size)

    def __getstate__(self) -> dict[str, Any]:
        """Pickled for a decode worker process: the preprocessing and the config, never the
        weights, the tokenizer or the text cache (``prepare`` needs none of them)."""
        return {"model": None, "preprocess": self.preprocess, "tokenizer": None,
                "config": self.config, "_text_cache": {}}  # fmt: skip

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def with_batch_size(self, batch_size: int) -> ClipEncoder:
        """The same loaded model (and text cache) batching ``batch_size`` images at a time."""
        # Shallow: model, tokenizer, text cache and lock are shared (not copy.copy, which
        # goes through __getstate__ and would drop the weights).
        view = object.__new__(type(self))
        view.__dict__.update(self.__dict__)
        view.config = replace(self.config, batch_size=batch_size)
        return view

    def prepare(self, image: Image.Image) -> np.ndarray:
        """The model's input for one image, as a float32 CHW array; safe to call from threads.

        open_clip's PIL steps (resize, crop, mode) run as they are; its ToTensor and
        Normalize are done in numpy with the same float32 operations, so worker threads never
        start torch's intra-op pool on a small tensor. An unknown step falls back to
        the whole torch transform.
        """
        steps = getattr(self.preprocess, "transforms", None)
        if steps is None:
            return self.preprocess(image).numpy()
        array: np.ndarray | None = None
        for position, step in enumerate(steps):
            kind = type(step).__name__
            if array is None and kind in _PIL_STEPS:
                image = step(image)
            elif array is None and kind in _TO_TENSOR_STEPS:
                rest = steps[position + 1 :]
                if len(rest) == 1 and type(rest[0]).__name__ == "Normalize":
                    return _normalised_by_lookup(np.asarray(image), rest[0])
                array = np.asarray(image, dtype=np.float32).transpose(2, 0, 1) / np.float32(255)
            elif array is not None and kind == "Normalize":
                mean = np.asarray(step.mean, dtype=np.float32)[:, None, None]
                std = np.asarray(step.std, dtype=np.float32)[:, None, None]
                array = (array - mean) / std
            else:
                return self.preprocess(image).numpy()  # a pipeline we do not know: as written
        return np.ascontiguousarray(array, dtype=np.float32)

    def prepare_pixels(self, image: Image.Image) -> np.ndarray:
        """``prepare``'s PIL steps only, as an H × W × 3 uint8 array, a quarter of the float32
        input's bytes to carry from a decode worker and copy to a GPU. ``encode_arrays``
        finishes it on the model's device with the same lookup table ``prepare`` uses, so the
        model sees identical values. A pipeline that does not end in ToTensor + Normalize
        gets ``prepare``'s float32 array instead."""
        steps = getattr(self.preprocess, "transforms", None) or ()
        kinds = [type(step).__name__ for step in steps]
        ends_normalised = (
            len(kinds) >= 2 and kinds[-1] == "Normalize" and kinds[-2] in _TO_TENSOR_STEPS
        )
        if not ends_normalised or not all(kind in _PIL_STEPS for kind in kinds[:-2]):
            return self.prepare(image)
        for step in steps[:-2]:
            image = step(image)
        pixels = np.asarray(image)
        if pixels.dtype != np.uint8 or pixels.ndim != 3 or pixels.shape[2] != 3:
            return _normalised_by_lookup(pixels, steps[-1])
        return pixels

    def prepare_tensors(self, images: Sequence[Any]) -> list[Any]:
        """``prepare`` for RGB uint8 CHW tensors on the model's device, batched: tensors of
        one size are stacked and go through each step once, run by torchvision on the batch
        (its bicubic resize with antialiasing, which follows PIL's to within rounding; each
        image's result is the one it gets alone, tested). One float32 CHW tensor per image,
        in order (views of its size's batch)."""
        import torch

        prepared: list[Any] = [None] * len(images)
        for indices in same_shape_groups(images).values():
            if images[indices[0]].device.type == "cpu":
                # torch's vectorised uint8 resize on the CPU takes one image at a time (a
                # stacked batch ran 3× slower per image); a GPU takes the batch in one kernel.
                for index in indices:
                    prepared[index] = self._prepare_batch(images[index][None])[0]
                continue
            batch = self._prepare_batch(torch.stack([images[i] for i in indices]))
            for index, tensor in zip(indices, batch, strict=True):
                prepared[index] = tensor
        return prepared

    def _prepare_batch(self, batch: Any) -> Any:
        import torch

        array = None
        for step in getattr(self.preprocess, "transforms", ()):
            kind = type(step).__name__
            if array is None and kind == "MaybeConvertMode":
                continue  # decoded as RGB already
            if array is None and kind in _PIL_STEPS:
                batch = step(batch)
            elif array is None and kind in _TO_TENSOR_STEPS:
                array = batch.to(torch.float32) / 255
            elif array is not None and kind == "Normalize":
                array = step(array)
            else:
                raise ValueError(f"no tensor path for the preprocessing step {kind}")
        if array is None:
            raise ValueError("the preprocessing has no to-tensor step")
        return array.contiguous()

    def encode_arrays(self, arrays: Sequence[Any]) -> np.ndarray:
        """One L2-normalised row per prepared input (float32 arrays from ``prepare``, uint8
        arrays from ``prepare_pixels``, or device tensors from ``prepare_tensors``, in any
        mix), as one batch."""
        import torch

        device = self.config.device
        if all(isinstance(a, torch.Tensor) for a in arrays):  # prepared on the device
            batch = torch.stack(list(arrays))
        elif all(isinstance(a, np.ndarray) and a.dtype == np.float32 for a in arrays):
            batch = torch.from_numpy(np.stack(arrays)).to(device)
        else:
            pixels = [i for i, a in enumerate(arrays) if isinstance(a, np.ndarray) and a.dtype == np.uint8]  # fmt: skip
            on_device = self._pixels_on_device([arrays[i] for i in pixels]) if pixels else None
            if len(pixels) == len(arrays):
                batch = on_device
            else:
                normalised = dict(zip(pixels, on_device if on_device is not None else (), strict=True))  # fmt: skip
                parts = [
                    normalised[i] if i in normalised else torch.as_tensor(a).to(device)
                    for i, a in enumerate(arrays)
                ]
                batch = torch.stack(parts)
        with torch.inference_mode(), self._autocast():
            features = self.model.encode_image(batch)
        return _normalise(features.float().cpu().numpy())

    def _pixels_on_device(self, pixels: Sequence[np.ndarray]) -> Any:
        """``prepare_pixels`` arrays (all of one size) to the normalised float32 batch on the
        model's device: one uint8 copy into a reused pinned buffer, a non-blocking transfer,
        and the lookup table gathered on the device (the values ``prepare`` computes)."""
        import torch

        device = torch.device(self.config.device)
        staging = self._staging_buffer((len(pixels), *pixels[0].shape), device)
        np.stack(pixels, out=staging.numpy())
        values = staging.to(device, non_blocking=True).permute(0, 3, 1, 2).long()
        table = self._device_table(device)
        return torch.stack([table[channel][values[:, channel]] for channel in range(3)], dim=1)

    def _staging_buffer(self, shape: tuple, device: Any) -> Any:
        """A host buffer for one batch's pixels, pinned when the model is on a GPU, reused
        from batch to batch (each batch's copy has finished when ``encode_arrays`` returns:
        its result comes back to the host)."""
        import torch

        buffers = self.__dict__.setdefault("_staging", {})
        buffer = buffers.get(shape)
        if buffer is None:
            buffer = torch.empty(shape, dtype=torch.uint8)
            if device.type == "cuda":
                buffer = buffer.pin_memory()
            buffers.clear()  # one batch size in use at a time; the last batch may be smaller
            buffers[shape] = buffer
        return buffer

    def _device_table(self, device: Any) -> Any:
        import torch

        tables = self.__dict__.setdefault("_tables", {})
        if str(device) not in tables:
            normalize = self.preprocess.transforms[-1]
            table = _lookup_table(tuple(normalize.mean), tuple(normalize.std))
            tables[str(device)] = torch.from_numpy(table).to(device)
        return tables[str(device)]

    def encode_images(self, images: Sequence[Image.Image]) -> np.ndarray:
        """One L2-normalised row per image, computed ``batch_size`` images at a time."""
        rows = []
        size = self.batch_size
        for start in range(0, len(images), size):
            rows.append(
                self.encode_arrays([self.prepare(im) for im in images[start : start + size]])
            )
        width = int(self.model.visual.output_dim) if not rows else rows[0].shape[1]
        return np.concatenate(rows) if rows else np.zeros((0, width), dtype=np.float32)

    def encode_texts(self, texts: Sequence[str]) -> np.ndarray:
        """Text embeddings, memoised: the judges reuse a handful of fixed descriptions."""
        import torch

        missing = [t for t in dict.fromkeys(texts) if t not in self._text_cache]
        if missing:
            tokens = self.tokenizer(missing).to(self.config.device)
            with torch.inference_mode(), self._autocast():
                features = _normalise(self.model.encode_text(tokens).float().cpu().numpy())
            with self._lock:
                self._text_cache.update(zip(missing, features, strict=True))
        return np.stack([self._text_cache[t] for t in texts])

    def _autocast(self):
        import torch

        dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(self.config.precision)
        if dtype is None or not self.config.device.startswith("cuda"):
            return _null_context()
        return torch.autocast(device_type="cuda", dtype=dtype)


# open_clip's PIL-side steps (torchvision's and its own), and its to-tensor steps.
_PIL_STEPS = frozenset(
    {"Resize", "CenterCrop", "MaybeConvertMode", "ResizeKeepRatio", "ResizeMaxSize"}
)
_TO_TENSOR_STEPS = frozenset({"ToTensor", "MaybeToTensor"})


def _normalised_by_lookup(pixels: np.ndarray, normalize: Any) -> np.ndarray:
    """ToTensor then Normalize of an H × W × 3 uint8 array as one table lookup per channel:
    each of the 256 values goes through the same float32 operations as the two steps
    (``v / 255``, then ``(x − mean) / std``), so the result is identical, in a third of the
    time of the float passes over every pixel."""
    if pixels.dtype != np.uint8 or pixels.ndim != 3 or pixels.shape[2] != 3:
        array = np.asarray(pixels, dtype=np.float32).transpose(2, 0, 1) / np.float32(255)
        mean = np.asarray(normalize.mean, dtype=np.float32)[:, None, None]
        std = np.asarray(normalize.std, dtype=np.float32)[:, None, None]
        return np.ascontiguousarray((array - mean) / std, dtype=np.float32)
    table = _lookup_table(tuple(normalize.mean), tuple(normalize.std))
    out = np.empty((3, *pixels.shape[:2]), dtype=np.float32)
    for channel in range(3):
        np.take(table[channel], pixels[:, :, channel], out=out[channel])
    return out


@functools.lru_cache(maxsize=8)
def _lookup_table(mean: tuple, std: tuple) -> np.ndarray:
    values = np.arange(256, dtype=np.float32)[None, :] / np.float32(255)
    mean_column = np.asarray(mean, dtype=np.float32)[:, None]
    std_column = np.asarray(std, dtype=np.float32)[:, None]
    return np.ascontiguousarray((values - mean_column) / std_column, dtype=np.float32)


class _null_context:
    def __enter__(self):
        return None

    def __exit__(self, *exc_info: object) -> None:
        return None


def _normalise(features: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(features, axis=1, keepdims=True)
    return (features / np.maximum(norms, 1e-12)).astype(np.float32)


_ENCODERS: dict[tuple, ClipEncoder] = {}
_ENCODERS_LOCK = threading.Lock()


def load_clip(config: ClipConfig) -> ClipEncoder:
    """The process-wide encoder for this config, loading it on first use.

    The weights are loaded once per model (the key leaves out the batch size); a config that
    differs only in batch size gets a view of the same model with its own batch size.
    """
    key = config.cache_key()
    with _ENCODERS_LOCK:
        encoder = _ENCODERS.get(key)
        if encoder is None:
            encoder = _ENCODERS[key] = _build_encoder(config)
    if encoder.batch_size != max(1, config.batch_size):
        encoder = encoder.with_batch_size(config.batch_size)
    return encoder


def clear_clip_cache() -> None:
    with _ENCODERS_LOCK:
        _ENCODERS.clear()


def _build_encoder(config: ClipConfig) -> ClipEncoder:
    import open_clip

    if config.model_config:
        open_clip.add_model_config(config.model_config)
    model, _, preprocess = open_clip.create_model_and_transforms(
        config.architecture,
        pretrained=config.pretrained,
        precision=config.precision if config.device.startswith("cuda") else "fp32",
        device=config.device,
        cache_dir=config.cache_dir,
    )
    model.eval()
    tokenizer = open_clip.get_tokenizer(config.architecture, cache_dir=config.cache_dir)
    return ClipEncoder(model, preprocess, tokenizer, config)
