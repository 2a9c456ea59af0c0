"""Google image APIs: Imagen (``models/{model}:predict``) and Gemini image models
(``models/{model}:generateContent``), chosen by the config's kind.

Refusals: Imagen answers with no prediction or a ``raiFilteredReason``; Gemini with
``promptFeedback.blockReason``, a safety ``finishReason`` or a text-only answer; both
with a 400 whose message names the safety filters.
"""

from __future__ import annotations

import base64

from generation.backends.api_base import POLICY_MESSAGE, ApiBackend, error_message
from generation.backends.base import GenerationRequest, GenerationResult, read_source_image

SAFETY_FINISH_REASONS = {
    "SAFETY",
    "IMAGE_SAFETY",
    "PROHIBITED_CONTENT",
    "BLOCKLIST",
    "SPII",
    "RECITATION",
    "IMAGE_PROHIBITED_CONTENT",
}


class GoogleImages(ApiBackend):
    default_base_url = "https://generativelanguage.googleapis.com/v1beta"

    def _generate_one(self, request: GenerationRequest) -> GenerationResult:
        headers = {"x-goog-api-key": self.api_key} if self.api_key else {}
        if self.config.kind == "google-imagen":
            url = f"{self.base_url}/models/{self.config.model}:predict"
            outcome = self._retry("POST", url, json=self._imagen_body(request), headers=headers)
            parse = self._parse_imagen
        else:
            url = f"{self.base_url}/models/{self.config.model}:generateContent"
            outcome = self._retry("POST", url, json=self._gemini_body(request), headers=headers)
            parse = self._parse_gemini
        if not outcome.ok:
            return self._parse_error(request, outcome)
        body = outcome.body if isinstance(outcome.body, dict) else {}
        return parse(request, outcome, body)

    def _imagen_body(self, request: GenerationRequest) -> dict:
        parameters = {"sampleCount": 1, "includeRaiReason": True, **self.config.options}
        return {"instances": [{"prompt": request.prompt}], "parameters": parameters}

    def _gemini_body(self, request: GenerationRequest) -> dict:
        parts: list[dict] = [{"text": request.prompt}]
        if request.source_image is not None:
            data = base64.b64encode(read_source_image(request.source_image)).decode()
            parts.append({"inline_data": {"mime_type": "image/png", "data": data}})
        generation_config = {"responseModalities": ["TEXT", "IMAGE"], **self.config.options}
        return {"contents": [{"parts": parts}], "generationConfig": generation_config}

    def _parse_imagen(self, request, outcome, body: dict) -> GenerationResult:
        predictions = body.get("predictions") or []
        for prediction in predictions:
            if prediction.get("bytesBase64Encoded"):
                mime = prediction.get("mimeType", "image/png")
                return self.image_result(request, outcome, prediction["bytesBase64Encoded"], mime)
        reasons = [
            p.get("raiFilteredReason", "") for p in predictions if p.get("raiFilteredReason")
        ]
        if reasons:
            return self.refusal_result(request, outcome, "rai_filtered", " | ".join(reasons))
        return self.refusal_result(request, outcome, "empty_result", outcome.text)

    def _parse_gemini(self, request, outcome, body: dict) -> GenerationResult:
        block = (body.get("promptFeedback") or {}).get("blockReason")
        if block:
            return self.refusal_result(request, outcome, f"prompt_blocked:{block}", outcome.text)
        candidates = body.get("candidates") or []
        texts = []
        for candidate in candidates:
            for part in (candidate.get("content") or {}).get("parts") or []:
                inline = part.get("inlineData") or part.get("inline_data")
                if inline and inline.get("data"):
                    mime = inline.get("mimeType") or inline.get("mime_type") or "image/png"
                    return self.image_result(request, outcome, inline["data"], mime)
                if part.get("text"):
                    texts.append(part["text"])
        finish = next((c.get("finishReason") for c in candidates if c.get("finishReason")), "")
        if finish in SAFETY_FINISH_REASONS:
            return self.refusal_result(request, outcome, f"finish:{finish}", " ".join(texts))
        return self.refusal_result(
            request, outcome, "empty_result", " ".join(texts) or outcome.text
        )

    def _parse_error(self, request, outcome) -> GenerationResult:
        code, message = error_message(outcome.body)
        if outcome.status == 400 and POLICY_MESSAGE.search(message):
            return self.refusal_result(request, outcome, code or "policy_error", message)
        return self.failure_result(request, outcome)
