"""Judgments cached by (judge, version, prompt, image content hash).

Re-running a study scores only what changed: a new image, a new prompt, a new judge
version. The store is pluggable (``get``/``set`` of JSON-ready dicts by key): a dict is here,
the web app backs it with a database table. Errors are never cached.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any, Protocol

from scoring.judges.images import image_sha256
from scoring.judges.records import ItemInput, Judge, JudgmentOutput, preferred_batch_size


class CacheStore(Protocol):
    """``get_many``/``set_many`` are what the judges call (one round trip per batch)."""

    def get(self, key: str) -> dict[str, Any] | None: ...

    def set(self, key: str, value: dict[str, Any]) -> None: ...

    def get_many(self, keys: Sequence[str]) -> dict[str, dict[str, Any]]: ...

    def set_many(self, entries: dict[str, dict[str, Any]]) -> None: ...


class MemoryCacheStore:
    def __init__(self) -> None:
        self.data: dict[str, dict[str, Any]] = {}

    def get(self, key: str) -> dict[str, Any] | None:
        return self.data.get(key)

    def set(self, key: str, value: dict[str, Any]) -> None:
        self.data[key] = value

    def get_many(self, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
        return {key: self.data[key] for key in keys if key in self.data}

    def set_many(self, entries: dict[str, dict[str, Any]]) -> None:
        self.data.update(entries)


def cache_key(judge_name: str, judge_version: str, prompt: str, image_hash: str | None) -> str:
    blob = json.dumps([judge_name, judge_version, prompt, image_hash], ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class CachedJudge:
    """Wraps a judge: cache hits come back with ``cached=True``; only misses are scored."""

    def __init__(self, judge: Judge, store: CacheStore):
        self.judge = judge
        self.store = store
        self.name = judge.name
        self.version = judge.version

    def cache_prompt(self, item: ItemInput) -> str:
        return self.judge.cache_prompt(item)

    @property
    def batch_size(self) -> int:
        return preferred_batch_size(self.judge)

    def key_for(self, item: ItemInput) -> str | None:
        """The hash the storage recorded (``image_sha256``) when there is one; else the file is
        hashed here. None when it cannot be (missing file): such items are not cached."""
        image_hash = item.image_sha256
        if image_hash is None and item.image_path:
            try:
                image_hash = image_sha256(item.image_path)
            except (OSError, ValueError):
                return None
        return cache_key(self.name, self.version, self.judge.cache_prompt(item), image_hash)

    def judge_items(self, items: Sequence[ItemInput]) -> list[JudgmentOutput]:
        """One ``get_many`` for the batch, the judge on the misses, one ``set_many``."""
        outputs: list[JudgmentOutput | None] = [None] * len(items)
        keys = [self.key_for(item) for item in items]
        stored = self.store.get_many([key for key in keys if key is not None])
        misses = []
        for index, (item, key) in enumerate(zip(items, keys, strict=True)):
            if key is not None and key in stored:
                output = JudgmentOutput.from_dict(stored[key])
                output.item_id, output.cached = item.item_id, True
                outputs[index] = output
            else:
                misses.append(index)
        fresh = self.judge.judge_items([items[i] for i in misses]) if misses else []
        entries = {}
        for index, output in zip(misses, fresh, strict=True):
            outputs[index] = output
            if keys[index] is not None and output.error is None:
                entries[keys[index]] = output.to_dict()
        if entries:
            self.store.set_many(entries)
        return [o for o in outputs if o is not None]
