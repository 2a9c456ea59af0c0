"""What the diffusers backends share: batching, OOM back-off and turning outputs into results.

A subclass loads its pipeline and implements ``_pipeline_call(batch)`` (the keyword
arguments for one batched ``pipe(...)`` call), ``_argument_names()`` (the names it passes on
every call) and ``_settings_key(request)``.

An argument the loaded pipeline's ``__call__`` does not name is refused, never dropped: the
arguments every call passes when the generator is built (a text-to-image folder loaded as an
instruction editor would otherwise ignore the source image), one a request adds (a negative
prompt) when that batch runs, as an error result. The message is one line naming the
argument, as diffusers' own ``check_inputs`` refuses bad input.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Sequence

from generation.backends.base import (
    ERROR,
    OK,
    REFUSED,
    BackendConfigError,
    GenerationRequest,
    GenerationResult,
    GeneratorConfig,
    result_for,
)
from generation.backends.torch_runtime import (
    chunks,
    group_by_settings,
    is_out_of_memory,
    nsfw_flags,
    png_bytes,
    resolve_device,
    resolve_dtype,
    seeded_generators,
)


class DiffusersBackend:
    def __init__(self, config: GeneratorConfig):
        self.config = config
        self.device = resolve_device(config.device)
        self.dtype = resolve_dtype(config.dtype, self.device)
        self.pipeline = self._load_pipeline()
        if not config.safety_checker and hasattr(self.pipeline, "safety_checker"):
            self.pipeline.safety_checker = None
        self.pipeline.to(self.device)
        self.pipeline.set_progress_bar_config(disable=True)
        self._accepted = accepted_arguments(self.pipeline)
        self._refuse_unaccepted(self._argument_names())

    def _load_pipeline(self):
        raise NotImplementedError

    def _argument_names(self) -> set[str]:
        """The keyword arguments every ``pipe(...)`` call passes, checked once at load."""
        raise NotImplementedError

    def _refuse_unaccepted(self, names) -> None:
        refused = sorted(set(names) - self._accepted)
        if refused:
            listed = ", ".join(repr(name) for name in refused)
            raise BackendConfigError(
                f"generator {self.config.name!r}: {type(self.pipeline).__name__} does not "
                f"accept {listed} (model {self.config.model})"
            )

    def _settings_key(self, request: GenerationRequest) -> tuple:
        raise NotImplementedError

    def _pipeline_call(self, batch: Sequence[GenerationRequest]) -> dict:
        raise NotImplementedError

    def steps_for(self, request: GenerationRequest) -> int:
        return request.steps if request.steps is not None else self.config.steps

    def guidance_for(self, request: GenerationRequest) -> float:
        return request.guidance if request.guidance is not None else self.config.guidance

    def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        results: list[GenerationResult | None] = [None] * len(requests)
        for indices in group_by_settings(requests, self._settings_key):
            for chunk in chunks(indices, self.config.batch_size):
                batch = [requests[i] for i in chunk]
                for index, result in zip(chunk, self._run(batch), strict=True):
                    results[index] = result
        return results

    def close(self) -> None:
        self.pipeline = None

    def _run(self, batch: Sequence[GenerationRequest]) -> list[GenerationResult]:
        """One batched call; on out-of-memory, halve the batch until one image fails."""
        started = time.perf_counter()
        try:
            output = self._call(batch)
        except Exception as error:  # noqa: BLE001 - a failed batch becomes error results
            if is_out_of_memory(error) and len(batch) > 1:
                self._empty_cache()
                middle = len(batch) // 2
                return self._run(batch[:middle]) + self._run(batch[middle:])
            message = f"{type(error).__name__}: {error}"[:500]
            return [result_for(r, self.config, ERROR, error=message) for r in batch]
        latency = (time.perf_counter() - started) / len(batch)
        return self._results(batch, output, latency)

    def _call(self, batch: Sequence[GenerationRequest]):
        import torch

        arguments = self._pipeline_call(batch)
        arguments["generator"] = seeded_generators(r.seed for r in batch)
        arguments["output_type"] = "pil"
        self._refuse_unaccepted(arguments)
        with torch.inference_mode():
            return self.pipeline(**arguments)

    def _results(self, batch, output, latency: float) -> list[GenerationResult]:
        flags = nsfw_flags(output, len(batch))
        results = []
        for request, image, flagged in zip(batch, output.images, flags, strict=True):
            encoded = png_bytes(image)
            status = REFUSED if flagged else OK
            results.append(
                result_for(
                    request,
                    self.config,
                    status,
                    image=encoded,
                    mime_type="image/png",
                    refusal_reason="nsfw_content_detected" if flagged else "",
                    steps=self.steps_for(request),
                    guidance=self.guidance_for(request),
                    width=image.width,
                    height=image.height,
                    latency_s=round(latency, 4),
                    extra={"device": self.device, "dtype": str(self.dtype).removeprefix("torch.")},
                )
            )
        return results

    def _empty_cache(self) -> None:
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()


# Passed by the base class on every call, whatever the subclass.
COMMON_ARGUMENTS = frozenset({"generator", "output_type"})


def accepted_arguments(pipeline) -> set[str]:
    """The keyword arguments ``pipeline.__call__`` names. A catch-all ``**kwargs`` does not
    count: the pipelines that have one keep it for deprecated names and ignore the rest."""
    parameters = inspect.signature(pipeline.__call__).parameters.values()
    return {
        parameter.name
        for parameter in parameters
        if parameter.kind not in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD)
    }
