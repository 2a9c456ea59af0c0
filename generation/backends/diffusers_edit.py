"""Image editing with diffusers: instruction editors (InstructPix2Pix and the pipelines
named in a folder's ``model_index.json``) or any text-to-image model run as img2img
through ``AutoPipelineForImage2Image``. The request's prompt is the edit instruction
and its ``source_image`` the photo to edit."""

from __future__ import annotations

import io
from collections.abc import Sequence

from generation.backends.base import GenerationRequest, read_source_image
from generation.backends.diffusers_common import COMMON_ARGUMENTS, DiffusersBackend
from generation.backends.torch_runtime import dtype_kwargs

EDIT_PIPELINES = ("auto", "img2img", "instruct-pix2pix")
# Pipelines that edit by instruction, loaded as the class their folder names.
INSTRUCTION_EDIT_MARKERS = ("InstructPix2Pix", "Kontext", "QwenImageEdit", "CosmosEdit")


class DiffusersImageEdit(DiffusersBackend):
    def _load_pipeline(self):
        from diffusers import AutoPipelineForImage2Image, DiffusionPipeline

        mode = self.config.edit_pipeline
        if mode not in EDIT_PIPELINES:
            raise ValueError(f"edit_pipeline '{mode}' is not one of {EDIT_PIPELINES}")
        kwargs = {**dtype_kwargs(self.dtype), **self.config.options}
        if mode == "auto":
            class_name = DiffusionPipeline.load_config(self.config.model).get("_class_name", "")
            mode = "instruct-pix2pix" if _is_instruction_editor(class_name) else "img2img"
        self.mode = mode
        if mode == "instruct-pix2pix":
            return DiffusionPipeline.from_pretrained(self.config.model, **kwargs)
        return AutoPipelineForImage2Image.from_pretrained(self.config.model, **kwargs)

    def _argument_names(self) -> set[str]:
        mode_argument = "image_guidance_scale" if self.mode == "instruct-pix2pix" else "strength"
        return {
            "prompt",
            "image",
            "num_inference_steps",
            "guidance_scale",
            mode_argument,
            *COMMON_ARGUMENTS,
        }

    def _settings_key(self, request: GenerationRequest) -> tuple:
        if request.source_image is None:
            raise ValueError(f"request {request.request_id}: an edit needs a source_image")
        size = _source(request).size
        return (self.steps_for(request), self.guidance_for(request), size)

    def _pipeline_call(self, batch: Sequence[GenerationRequest]) -> dict:
        first = batch[0]
        arguments = {
            "prompt": [request.prompt for request in batch],
            "image": [_source(request) for request in batch],
            "num_inference_steps": self.steps_for(first),
            "guidance_scale": self.guidance_for(first),
        }
        if self.mode == "instruct-pix2pix":
            arguments["image_guidance_scale"] = self.config.image_guidance
        else:
            arguments["strength"] = self.config.strength
        if any(request.negative_prompt for request in batch):
            arguments["negative_prompt"] = [request.negative_prompt for request in batch]
        return arguments

    def _results(self, batch, output, latency: float):
        results = super()._results(batch, output, latency)
        return [_with_mode(result, self.mode) for result in results]


def _is_instruction_editor(class_name: str) -> bool:
    return any(marker in class_name for marker in INSTRUCTION_EDIT_MARKERS)


def _source(request: GenerationRequest):
    from PIL import Image

    return Image.open(io.BytesIO(read_source_image(request.source_image))).convert("RGB")


def _with_mode(result, mode: str):
    from dataclasses import replace

    return replace(result, extra={**result.extra, "edit_pipeline": mode})
