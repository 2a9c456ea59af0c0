"""The per-item half of the hard-refusal judge, runnable in a thread or in another process.

For one item: the provider signal, the empty-output check, **one** decode of the image, the
blank check on its nearest-neighbour thumbnail, CLIP's preprocessing of the same decoded
image, and the keyword rules. ``ItemChecks`` holds only plain settings and the CLIP encoder's
preprocessing (a pickled ``ClipEncoder`` carries no weights), so the same object runs on the
judge's thread pool or is sent once to each worker of a process pool (``pipeline.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scoring.judges.images import (
    check_pixel_budget,
    decode_image_and_pixels,
    decode_pixels,
    is_jpeg,
    read_image_bytes,
)
from scoring.judges.records import ItemInput
from scoring.judges.rules import (
    CheckResult,
    KeywordRules,
    blank_image_check,
    blank_verdict,
    empty_output_check,
    provider_signal_check,
)
from scoring.judges.shared_arrays import shareable


@dataclass
class PendingItem:
    """One item between the cheap checks and the CLIP stage: ``pixels`` is the CLIP input,
    prepared from the same decoded image the blank check looked at (decoded once)."""

    item: ItemInput
    checks: list[CheckResult]
    pixels: Any = None  # a numpy array, or a tensor on the model's device
    error: str | None = None
    # A JPEG left for the model's device to decode, or the decoded pixels (H × W × 3 uint8)
    # left for the device to check and preprocess, and where the blank check goes in
    # ``checks`` (the order of the checks is the order of the reasons).
    jpeg: bytes | None = None
    decoded: Any = None
    blank_at: int = 0

    @property
    def awaits_model(self) -> bool:
        """Whether this item goes into a model batch: it has a CLIP input, or will have one
        once the device has decoded or prepared it."""
        return self.pixels is not None or self.jpeg is not None or self.decoded is not None

    @property
    def awaits_device(self) -> bool:
        return self.jpeg is not None or self.decoded is not None

    def __getstate__(self) -> dict[str, Any]:
        """Pickled by a decode worker process: the pixel arrays travel through shared memory,
        not the pool's pipe (``shared_arrays.py``)."""
        state = dict(self.__dict__)
        state["pixels"], state["decoded"] = shareable(self.pixels), shareable(self.decoded)
        return state


@dataclass
class ItemChecks:
    """The cheap checks and the CLIP input for one item (``__call__``), with the judge's
    settings. ``clip`` is anything with a ``prepare(image)`` (a ``ClipEncoder``), or None."""

    refusal_codes: tuple[str, ...]
    refusal_phrases: tuple[str, ...]
    refusal_regexes: tuple[str, ...]
    blank_std_max: float
    blank_dominant_fraction_min: float
    blank_tolerance: int
    max_pixels: int
    clip: Any = None
    jpegs_on_device: bool = False
    # The CLIP input as uint8 pixels (``prepare_pixels``), normalised on the model's device:
    # a quarter of the bytes to carry from a worker and to copy to a GPU. Same values.
    pixels_for_device: bool = False
    # Pillow's JPEG draft: decode at the smallest DCT scale keeping both sides ≥ this (None: off).
    jpeg_draft_side: int | None = None
    # Decode only: the blank check and CLIP's preprocessing run on the model's device, a batch
    # at a time (the judge's ``preprocess_on_device``).
    preprocess_on_device: bool = False
    keywords: KeywordRules = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.keywords = KeywordRules(self.refusal_phrases, self.refusal_regexes)

    def __call__(self, item: ItemInput) -> PendingItem:
        pending = PendingItem(item, [provider_signal_check(item.provider_signal, self.refusal_codes)])  # fmt: skip
        try:
            empty = empty_output_check(item.image_path)
            pending.checks.append(empty)
            if not empty.fired:
                data, name = read_image_bytes(item.image_path), str(item.image_path)
                if self.jpegs_on_device and self.clip is not None and is_jpeg(data):
                    check_pixel_budget(data, max_pixels=self.max_pixels, name=name)
                    pending.jpeg, pending.blank_at = data, len(pending.checks)
                elif self.preprocess_on_device and self.clip is not None:
                    pending.decoded = decode_pixels(
                        data, max_pixels=self.max_pixels, name=name, draft_side=self.jpeg_draft_side
                    )
                    pending.blank_at = len(pending.checks)
                else:
                    image, pixels = decode_image_and_pixels(
                        data, max_pixels=self.max_pixels, name=name, draft_side=self.jpeg_draft_side
                    )
                    self.image_checks(pending, image, len(pending.checks), pixels=pixels)
        except Exception as exc:  # noqa: BLE001 - recorded as this item's error
            pending.error = f"{type(exc).__name__}: {exc}"
            pending.pixels = pending.jpeg = pending.decoded = None
        pending.checks.append(self.keywords.check(item.returned_text))
        return pending

    def image_checks(self, pending: PendingItem, image: Any, at: int, pixels: Any = None) -> None:
        """The blank check (at position ``at``) and the CLIP input, from one decoded image
        (and its pixels as an array, when the decoder gave one: the blank check reads them)."""
        self.blank_check(pending, image if pixels is None else pixels, at)
        if self.clip is not None:
            prepare = self.clip.prepare_pixels if self.pixels_for_device else self.clip.prepare
            pending.pixels = prepare(image)

    def blank_check(self, pending: PendingItem, image: Any, at: int) -> None:
        """``image``: a PIL image or an RGB uint8 array."""
        blank = blank_image_check(
            image,
            std_max=self.blank_std_max,
            dominant_fraction_min=self.blank_dominant_fraction_min,
            tolerance=self.blank_tolerance,
        )
        pending.checks.insert(at, blank)

    def blank_result(self, pending: PendingItem, stats: dict[str, Any], at: int) -> None:
        """The blank check from statistics computed elsewhere (on the model's device)."""
        blank = blank_verdict(
            stats,
            std_max=self.blank_std_max,
            dominant_fraction_min=self.blank_dominant_fraction_min,
        )
        pending.checks.insert(at, blank)
