"""Stand-ins with hand-set outputs, for checking the judges' arithmetic exactly."""

from __future__ import annotations

import numpy as np

from scoring.judges.backends.base import VLMResponse
from scoring.judges.records import ItemInput, JudgmentOutput


def unit(vector) -> np.ndarray:
    vector = np.asarray(vector, dtype=np.float32)
    return vector / np.linalg.norm(vector)


class FakeClip:
    """Image embeddings chosen by image width; text embeddings by text."""

    version = "fake-clip"

    def __init__(
        self,
        image_vectors: dict[int, list[float]],
        text_vectors: dict[str, list[float]],
        batch_size: int = 64,
    ):
        self.image_vectors = image_vectors
        self.text_vectors = text_vectors
        self.batch_size = batch_size
        self.image_batches: list[int] = []

    def prepare(self, image):
        return np.array([image.size[0]])

    def encode_arrays(self, arrays):
        self.image_batches.append(len(arrays))
        return np.stack([unit(self.image_vectors[int(a[0])]) for a in arrays])

    def encode_images(self, images):
        self.image_batches.append(len(images))
        return np.stack([unit(self.image_vectors[im.size[0]]) for im in images])

    def encode_texts(self, texts):
        return np.stack([unit(self.text_vectors[t]) for t in texts])


class ScriptedBackend:
    """A VLM backend answering from a dict of request_id → response (or text)."""

    name = "scripted"
    version = "scripted-1"

    def __init__(self, answers):
        self.answers = answers
        self.requests = []

    def generate(self, requests):
        self.requests.extend(requests)
        responses = []
        for request in requests:
            answer = self.answers[request.request_id]
            responses.append(
                answer if isinstance(answer, VLMResponse) else VLMResponse(texts=[answer])
            )
        return responses


class FixedJudge:
    """Returns preset outputs by item id; counts what it was asked to judge."""

    def __init__(self, name, outputs: dict[str, tuple], version="1"):
        self.name = name
        self.version = version
        self.outputs = outputs
        self.seen: list[str] = []

    def cache_prompt(self, item: ItemInput) -> str:
        return f"prompt for {item.cue}"

    def judge_items(self, items):
        results = []
        for item in items:
            self.seen.append(item.item_id)
            label, confidence, error = (self.outputs[item.item_id] + (None,))[:3]
            results.append(
                JudgmentOutput(
                    item_id=item.item_id,
                    judge_name=self.name,
                    judge_version=self.version,
                    label=label,
                    confidence=confidence,
                    error=error,
                )
            )
        return results
