"""OpenAI images API (``/images/generations`` and, with a source image, ``/images/edits``).

Also fits servers that copy that API. Refusals: a 400 whose error code is a policy
code (``content_policy_violation``, ``moderation_blocked``) or whose message names the
safety system, and a 200 without any image (``empty_result``). The API takes no seed:
the request's seed is recorded but not sent (``extra.seed_sent = False``).
"""

from __future__ import annotations

from generation.backends.api_base import POLICY_MESSAGE, ApiBackend, error_message
from generation.backends.base import GenerationRequest, GenerationResult, read_source_image

POLICY_CODES = {"content_policy_violation", "moderation_blocked", "safety_violations"}


class OpenAIImages(ApiBackend):
    default_base_url = "https://api.openai.com/v1"

    def _generate_one(self, request: GenerationRequest) -> GenerationResult:
        width, height = self.size_for(request)
        fields = {
            "model": self.config.model,
            "prompt": request.prompt,
            "n": 1,
            "size": f"{width}x{height}",
            **self.config.options,
        }
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        if request.source_image is None:
            outcome = self._retry(
                "POST", f"{self.base_url}/images/generations", json=fields, headers=headers
            )
        else:
            image = read_source_image(request.source_image)
            outcome = self._retry(
                "POST",
                f"{self.base_url}/images/edits",
                data={key: str(value) for key, value in fields.items()},
                files={"image": ("source.png", image, "image/png")},
                headers=headers,
            )
        return self._parse(request, outcome)

    def _parse(self, request, outcome) -> GenerationResult:
        if outcome.ok:
            body = outcome.body if isinstance(outcome.body, dict) else {}
            items = body.get("data") or []
            for item in items:
                if item.get("b64_json"):
                    extra = {"seed_sent": False}
                    if item.get("revised_prompt"):
                        extra["revised_prompt"] = item["revised_prompt"]
                    return self.image_result(
                        request, outcome, item["b64_json"], "image/png", **extra
                    )
                if item.get("url"):
                    return self._download(request, outcome, item["url"])
            return self.refusal_result(request, outcome, "empty_result", outcome.text)
        code, message = error_message(outcome.body)
        if outcome.status == 400 and (code in POLICY_CODES or POLICY_MESSAGE.search(message)):
            return self.refusal_result(
                request, outcome, code or "content_policy_violation", message
            )
        return self.failure_result(request, outcome)

    def _download(self, request, outcome, url: str) -> GenerationResult:
        import base64

        import requests

        try:
            fetched = self.session.get(url, timeout=self.config.timeout_s)
        except requests.RequestException:
            return self.failure_result(request, outcome)
        if fetched.status_code != 200 or not fetched.content:
            return self.failure_result(request, outcome)
        encoded = base64.b64encode(fetched.content).decode()
        mime = fetched.headers.get("Content-Type", "image/png")
        return self.image_result(request, outcome, encoded, mime, seed_sent=False, url=url)
