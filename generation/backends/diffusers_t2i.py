"""Text-to-image with any diffusers pipeline: ``AutoPipelineForText2Image.from_pretrained``
on a hub id or a local folder (SD 1.x/2.x, SDXL, SD 3.5, FLUX ...)."""

from __future__ import annotations

from collections.abc import Sequence

from generation.backends.base import GenerationRequest
from generation.backends.diffusers_common import COMMON_ARGUMENTS, DiffusersBackend
from generation.backends.torch_runtime import dtype_kwargs


class DiffusersText2Image(DiffusersBackend):
    def _load_pipeline(self):
        from diffusers import AutoPipelineForText2Image

        return AutoPipelineForText2Image.from_pretrained(
            self.config.model, **dtype_kwargs(self.dtype), **self.config.options
        )

    def size_for(self, request: GenerationRequest) -> tuple[int, int]:
        width = request.width if request.width is not None else self.config.width
        height = request.height if request.height is not None else self.config.height
        return width, height

    def _argument_names(self) -> set[str]:
        return {
            "prompt",
            "num_inference_steps",
            "guidance_scale",
            "width",
            "height",
            *COMMON_ARGUMENTS,
        }

    def _settings_key(self, request: GenerationRequest) -> tuple:
        return (self.steps_for(request), self.guidance_for(request), self.size_for(request))

    def _pipeline_call(self, batch: Sequence[GenerationRequest]) -> dict:
        first = batch[0]  # a batch shares its settings (see _settings_key)
        width, height = self.size_for(first)
        arguments = {
            "prompt": [request.prompt for request in batch],
            "num_inference_steps": self.steps_for(first),
            "guidance_scale": self.guidance_for(first),
            "width": width,
            "height": height,
        }
        if any(request.negative_prompt for request in batch):
            arguments["negative_prompt"] = [request.negative_prompt for request in batch]
        return arguments
