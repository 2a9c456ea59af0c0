"""CLIP zero-shot cue presence: a cheap baseline cue judge.

The image is compared with "a photo showing {cue}" and with a neutral "a photo"; a softmax
over the two (CLIP's own logit scale) gives P(cue present). It labels ``retained`` or
``erased`` only: CLIP cannot say what replaced a missing cue, so it never says
``substituted`` (the ensemble's VLM judges do).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

import numpy as np

from scoring.judges.clip import ClipConfig, ClipEncoder, load_clip
from scoring.judges.images import load_image
from scoring.judges.records import ERASED, RETAINED, ItemInput, JudgmentOutput, error_output

PRESENT_TEMPLATE = "a photo showing {cue}"
NEUTRAL_TEXT = "a photo"


class ClipZeroShotCueJudge:
    def __init__(
        self,
        clip: ClipConfig | ClipEncoder,
        *,
        name: str = "clip_cue",
        version: str = "1",
        present_template: str = PRESENT_TEMPLATE,
        neutral_text: str = NEUTRAL_TEXT,
        threshold: float = 0.5,
    ):
        self._clip_config = clip if isinstance(clip, ClipConfig) else None
        self._clip = clip if isinstance(clip, ClipEncoder) else None
        self.name = name
        self.present_template = present_template
        self.neutral_text = neutral_text
        self.threshold = threshold
        self.version = version

    @property
    def clip(self) -> ClipEncoder:
        if self._clip is None:
            self._clip = load_clip(self._clip_config)
        return self._clip

    def cache_prompt(self, item: ItemInput) -> str:
        return json.dumps(
            {
                "present": self.present_template.format(cue=item.cue),
                "neutral": self.neutral_text,
                "threshold": self.threshold,
                "model": self.clip.version,
            },
            sort_keys=True,
        )

    def judge_items(self, items: Sequence[ItemInput]) -> list[JudgmentOutput]:
        outputs: list[JudgmentOutput | None] = [None] * len(items)
        images, positions = [], []
        for index, item in enumerate(items):
            try:
                if not item.cue or not item.image_path:
                    raise ValueError("item needs a cue and an image")
                images.append(load_image(item.image_path))
                positions.append(index)
            except Exception as exc:  # noqa: BLE001 - recorded per item
                outputs[index] = error_output(self, item, exc)
        if images:
            try:
                probabilities = self._presence([items[i].cue for i in positions], images)
            except Exception as exc:  # noqa: BLE001 - the whole CLIP batch failed
                for i in positions:
                    outputs[i] = error_output(self, items[i], exc)
            else:
                for i, p in zip(positions, probabilities, strict=True):
                    outputs[i] = self._output(items[i], float(p))
        return [o for o in outputs if o is not None]

    def _presence(self, cues: list[str], images: list) -> np.ndarray:
        image_features = self.clip.encode_images(images)
        present = self.clip.encode_texts([self.present_template.format(cue=c) for c in cues])
        neutral = self.clip.encode_texts([self.neutral_text])[0]
        scale = _logit_scale(self.clip)
        present_logit = scale * np.sum(image_features * present, axis=1)
        neutral_logit = scale * (image_features @ neutral)
        return 1.0 / (1.0 + np.exp(neutral_logit - present_logit))

    def _output(self, item: ItemInput, p_present: float) -> JudgmentOutput:
        retained = p_present >= self.threshold
        return JudgmentOutput(
            item_id=item.item_id,
            judge_name=self.name,
            judge_version=self.version,
            label=RETAINED if retained else ERASED,
            confidence=p_present if retained else 1.0 - p_present,
            evidence={"p_cue_present": p_present, "model": self.clip.version},
        )


def _logit_scale(encoder: ClipEncoder) -> float:
    scale = getattr(encoder.model, "logit_scale", None)
    try:
        value = float(scale.exp().item())
    except AttributeError:
        return 100.0  # CLIP's trained value
    return value if math.isfinite(value) else 100.0
