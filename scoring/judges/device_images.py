"""The blank check for images on the model's device (JPEGs decoded there through nvJPEG, or
images the pool decoded and ``pixels_to_device`` sent whole), a batch at a time and where the
pixels are.

Images of one size are stacked, their nearest-neighbour thumbnail's pixels gathered (the
pixels ``rules.thumbnail_indices`` names, as on the host), and the exact integer sums of
``rules.blank_image_stats`` computed there: per-channel histograms, medians from them, the
pooled value and square sums, the count of pixels near the median colour. Nine integers per
image come back to the host in one transfer for the whole batch, where
``rules.blank_stats_from_sums`` turns them into the same numbers as the host's check.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from scoring.judges.rules import blank_stats_from_sums, thumbnail_indices


def blank_stats_on_device(
    tensors: Sequence[Any], *, tolerance: int, max_side: int = 256
) -> list[dict[str, float]]:
    """``rules.blank_image_stats`` of each RGB uint8 CHW tensor, computed on its device."""
    import torch

    if not tensors:
        return []
    sums, order, pixel_counts = [], [], []
    for indices in same_shape_groups(tensors).values():
        thumbs = thumbnails(torch.stack([tensors[i] for i in indices]), max_side)
        sums.append(_blank_sums(thumbs, tolerance))
        order += indices
        pixel_counts += [thumbs.shape[2] * thumbs.shape[3]] * len(indices)
    rows = torch.cat(sums).cpu().tolist()  # the batch's only device-to-host copy
    stats: list[dict[str, float]] = [{}] * len(tensors)
    for index, row, pixel_count in zip(order, rows, pixel_counts, strict=True):
        lower, upper, value_sum, square_sum, near_count = row[:3], row[3:6], *row[6:]
        stats[index] = blank_stats_from_sums(
            median=[(low + high) / 2 for low, high in zip(lower, upper, strict=True)],
            value_sum=value_sum,
            square_sum=square_sum,
            near_count=near_count,
            pixel_count=pixel_count,
        )
    return stats


def pixels_to_device(arrays: Sequence[Any], device: str) -> list[Any]:
    """H × W × 3 uint8 arrays (as the pool decoded them) as RGB uint8 CHW tensors on
    ``device``: one host copy per image size into a pinned buffer (torch's caching host
    allocator keeps it alive until the copy is done), one non-blocking transfer per size."""
    import numpy as np
    import torch

    target = torch.device(device)
    tensors: list[Any] = [None] * len(arrays)
    for indices in same_shape_groups(arrays).values():
        shape = (len(indices), *arrays[indices[0]].shape)
        staging = torch.empty(shape, dtype=torch.uint8, pin_memory=target.type == "cuda")
        np.stack([arrays[i] for i in indices], out=staging.numpy())
        batch = staging.to(target, non_blocking=True).permute(0, 3, 1, 2)
        for index, tensor in zip(indices, batch, strict=True):
            tensors[index] = tensor
    return tensors


def same_shape_groups(tensors: Sequence[Any]) -> dict[tuple, list[int]]:
    """Positions of the tensors of each shape, in first-seen order."""
    groups: dict[tuple, list[int]] = {}
    for index, tensor in enumerate(tensors):
        groups.setdefault(tuple(tensor.shape), []).append(index)
    return groups


def thumbnails(batch: Any, max_side: int = 256) -> Any:
    """The thumbnail pixels of an N × C × H × W batch (``rules.thumbnail_view`` per image)."""
    import torch

    height, width = batch.shape[-2:]
    rows, columns = thumbnail_indices(int(width), int(height), max_side)
    if not isinstance(rows, slice):
        rows = torch.as_tensor(rows, device=batch.device)
    if not isinstance(columns, slice):
        columns = torch.as_tensor(columns, device=batch.device)
    return batch[:, :, rows][:, :, :, columns]


def _blank_sums(thumbs: Any, tolerance: float) -> Any:
    """Per image (rows of the result): the three channels' lower and upper middle values, Σx
    and Σx² over all channels, and the count of pixels within ``tolerance`` of the median
    on every channel. Integers throughout, as on the host; the pixels stay uint8 (one
    int32 copy for the histogram), so each pass over them moves as few bytes as it can."""
    import torch

    count, channels = thumbs.shape[:2]
    flat = thumbs.reshape(count, channels, -1)
    offsets = torch.arange(count * channels, dtype=torch.int32, device=flat.device) * 256
    bins = count * channels * 256
    indices = flat.to(torch.int32) + offsets.reshape(count, channels, 1)
    histogram = torch.bincount(indices.reshape(-1), minlength=bins)
    histogram = histogram.reshape(count, channels, 256)
    cumulative = histogram.cumsum(-1)
    pixels = cumulative[..., -1:]
    # rules._histogram_median: the (n−1)//2-th and n//2-th values of the sorted channel.
    lower = torch.searchsorted(cumulative, (pixels - 1) // 2, right=True)
    upper = torch.searchsorted(cumulative, pixels // 2, right=True)
    # |x − median| ≤ tolerance for an integer x: ⌈median − tolerance⌉ ≤ x ≤ ⌊median + tolerance⌋.
    # Bounds as uint8, so the comparisons run on the uint8 pixels as they are; a channel with
    # no value in range gets the empty range [255, 0].
    median = (lower + upper).to(torch.float64) / 2
    low, high = torch.ceil(median - tolerance), torch.floor(median + tolerance)
    empty = (low > high) | (low > 255) | (high < 0)
    low = torch.where(empty, 255, low.clamp(0, 255)).to(torch.uint8)
    high = torch.where(empty, 0, high.clamp(0, 255)).to(torch.uint8)
    near = ((flat >= low) & (flat <= high)).all(dim=1).sum(-1)
    pooled = histogram.sum(1)
    values = torch.arange(256, device=flat.device)
    value_sum = (pooled * values).sum(-1)
    square_sum = (pooled * values * values).sum(-1)
    return torch.cat(
        [lower[..., 0], upper[..., 0], value_sum[:, None], square_sum[:, None], near[:, None]],
        dim=1,
    )
