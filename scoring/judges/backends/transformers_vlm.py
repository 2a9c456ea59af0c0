"""A local vision-language model: ``AutoModelForImageTextToText`` + ``AutoProcessor``.

Loads from a hub id (through the local Hugging Face cache only, unless
``local_files_only=False``) or a folder; requests are batched through the processor's chat
template. When a request lists ``options``, each option is scored by its likelihood as the
answer (the sum of its tokens' log-probabilities after the prompt, from one forward pass over
every prompt × option), and the probabilities are renormalised over the options.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from itertools import groupby
from typing import Any

from scoring.judges.backends.base import (
    DecodingConfig,
    VLMRequest,
    VLMResponse,
    normalise_option_probs,
)
from scoring.judges.images import load_image
from scoring.judges.pipeline import default_decode_workers, ordered_map


@dataclass(frozen=True)
class TransformersVLMConfig:
    model: str
    device: str = "cpu"
    dtype: str = "auto"
    batch_size: int = 8
    revision: str | None = None
    local_files_only: bool = True
    # Text between the generation prompt and an option when scoring options, e.g. " " for
    # templates that end in "ASSISTANT:" where the model writes " retained".
    option_prefix: str = ""


_MODELS: dict[tuple, tuple[Any, Any]] = {}
_MODELS_LOCK = threading.Lock()


def load_vlm(config: TransformersVLMConfig) -> tuple[Any, Any]:
    """(model, processor), loaded once per process for this model/device/dtype."""
    key = (config.model, config.device, config.dtype, config.revision, config.local_files_only)
    with _MODELS_LOCK:
        if key not in _MODELS:
            _MODELS[key] = _load(config)
        return _MODELS[key]


def _load(config: TransformersVLMConfig) -> tuple[Any, Any]:
    import torch
    from transformers import AutoModelForImageTextToText, AutoProcessor

    dtype = config.dtype if config.dtype == "auto" else getattr(torch, config.dtype)
    common = {"revision": config.revision, "local_files_only": config.local_files_only}
    processor = AutoProcessor.from_pretrained(config.model, **common)
    model = AutoModelForImageTextToText.from_pretrained(config.model, dtype=dtype, **common)
    return model.to(config.device).eval(), processor


class TransformersVLMBackend:
    def __init__(self, config: TransformersVLMConfig):
        self.config = config
        self.name = f"transformers:{config.model}"
        self.version = config.model if not config.revision else f"{config.model}@{config.revision}"
        self.model, self.processor = load_vlm(config)

    def generate(self, requests: Sequence[VLMRequest]) -> list[VLMResponse]:
        responses: list[VLMResponse | None] = [None] * len(requests)
        ready = []
        # Every image decoded once, on the decode pool (PIL releases the GIL), and the decoded
        # images reused by generation and option scoring alike.
        loaded = ordered_map(_load_images, requests, workers=default_decode_workers(),
                             lookahead=2 * max(1, self.config.batch_size))  # fmt: skip
        for index, (request, images) in enumerate(zip(requests, loaded, strict=True)):
            if isinstance(images, str):
                responses[index] = VLMResponse(error=images, request_id=request.request_id)
            else:
                ready.append((index, request, images))
        # Group by decoding settings, as one generate() call takes one setting.
        ready.sort(key=lambda entry: _decoding_key(entry[1].decoding))
        for _, group in groupby(ready, key=lambda entry: _decoding_key(entry[1].decoding)):
            group = list(group)
            for start in range(0, len(group), max(1, self.config.batch_size)):
                batch = group[start : start + self.config.batch_size]
                for (index, _, _), response in zip(batch, self._run_batch(batch), strict=True):
                    responses[index] = response
        return [r for r in responses if r is not None]

    def _run_batch(self, batch: list[tuple[int, VLMRequest, list]]) -> list[VLMResponse]:
        started = time.perf_counter()
        try:
            results = self._generate_batch([r for _, r, _ in batch], [ims for _, _, ims in batch])
        except Exception as exc:  # noqa: BLE001 - retry one by one to isolate the culprit
            if len(batch) == 1:
                return [
                    VLMResponse(
                        error=f"{type(exc).__name__}: {exc}", request_id=batch[0][1].request_id
                    )
                ]
            return [response for entry in batch for response in self._run_batch([entry])]
        elapsed = (time.perf_counter() - started) / len(batch)
        for response in results:
            response.latency_s = elapsed
        return results

    def _prompts(self, requests: Sequence[VLMRequest]) -> list[str]:
        prompts = []
        for request in requests:
            content = [{"type": "image"} for _ in request.images]
            content.append({"type": "text", "text": request.text})
            messages = [{"role": "user", "content": content}]
            if request.system:
                messages.insert(
                    0, {"role": "system", "content": [{"type": "text", "text": request.system}]}
                )
            prompts.append(
                self.processor.apply_chat_template(
                    messages, add_generation_prompt=True, tokenize=False
                )
            )
        return prompts

    def _encode(self, texts: list[str], images: list[list], padding_side: str):
        tokenizer = self.processor.tokenizer
        previous, tokenizer.padding_side = tokenizer.padding_side, padding_side
        try:
            inputs = self.processor(text=texts, images=images, padding=True, return_tensors="pt")
        finally:
            tokenizer.padding_side = previous
        return inputs.to(self.config.device)

    def _generate_batch(self, requests: list[VLMRequest], images: list[list]) -> list[VLMResponse]:
        import torch

        decoding = requests[0].decoding
        prompts = self._prompts(requests)
        # Left padding: generation continues from the last real token of every row.
        inputs = self._encode(prompts, images, padding_side="left")
        if decoding.seed is not None:
            torch.manual_seed(decoding.seed)
        with torch.inference_mode():
            generated = self.model.generate(**inputs, **_generate_kwargs(decoding))
        new_tokens = generated[:, inputs["input_ids"].shape[1] :]
        texts = self.processor.batch_decode(new_tokens, skip_special_tokens=True)
        responses = []
        for i, request in enumerate(requests):
            samples = [t.strip() for t in texts[i * decoding.n : (i + 1) * decoding.n]]
            probs = None
            if request.options:
                probs = self.option_probs(prompts[i], images[i], request.options)
            responses.append(
                VLMResponse(texts=samples, option_probs=probs, request_id=request.request_id)
            )
        return responses

    def option_probs(
        self, prompt: str, images: list, options: Sequence[str]
    ) -> dict[str, float] | None:
        """P(option | prompt, images) ∝ exp(sum of the option tokens' log-probabilities)."""
        import torch

        texts = [prompt] + [prompt + self.config.option_prefix + option for option in options]
        inputs = self._encode(texts, [images] * len(texts), padding_side="right")
        with torch.inference_mode():
            logits = self.model(**inputs).logits.float()
        log_probs = torch.log_softmax(logits[:, :-1], dim=-1)
        ids, mask = inputs["input_ids"], inputs["attention_mask"]
        prompt_ids = ids[0][mask[0].bool()]
        raw = {}
        for row, option in enumerate(options, start=1):
            row_ids = ids[row][mask[row].bool()]
            start = _common_prefix_length(prompt_ids, row_ids)
            if start == 0 or start == len(row_ids):
                return None  # no shared prompt, or the option added no token: cannot score
            targets = row_ids[start:]
            picked = log_probs[row, start - 1 : len(row_ids) - 1].gather(1, targets[:, None])
            raw[option] = float(picked.sum().exp())
        return normalise_option_probs(raw)


def _load_images(request: VLMRequest) -> list | str:
    """The request's images, or the one-line reason one of them cannot be read."""
    try:
        return [load_image(image) for image in request.images]
    except Exception as exc:  # noqa: BLE001 - that request's error
        return f"image: {exc}"


def _common_prefix_length(a, b) -> int:
    length = min(len(a), len(b))
    differs = (a[:length] != b[:length]).nonzero()
    return int(differs[0]) if len(differs) else length


def _decoding_key(decoding: DecodingConfig) -> tuple:
    return tuple(sorted((k, str(v)) for k, v in asdict(decoding).items()))


def _generate_kwargs(decoding: DecodingConfig) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "max_new_tokens": decoding.max_new_tokens,
        "num_return_sequences": decoding.n,
    }
    if decoding.greedy:
        kwargs["do_sample"] = False
    else:
        kwargs.update(do_sample=True, temperature=decoding.temperature)
        if decoding.top_p is not None:
            kwargs["top_p"] = decoding.top_p
    return kwargs
