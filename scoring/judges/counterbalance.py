"""Counterbalanced option orders: which answer is listed first (A/B in a 2AFC pair, the
labels of a multiple-choice question) varies from item to item, reproducibly, and is recorded,
so a judge's preference for a position can be measured rather than mistaken for a verdict.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Sequence
from typing import TypeVar

Option = TypeVar("Option")


def counterbalanced_order(options: Sequence[Option], *, key: str, salt: str = "") -> tuple:
    """One of the ``len(options)!`` orders, chosen by a hash of ``key`` (an item id): the same
    item always gets the same order; over many items every order is about equally common."""
    permutations = list(itertools.permutations(options))
    digest = hashlib.sha256(f"{salt}:{key}".encode()).digest()
    return permutations[int.from_bytes(digest[:8], "big") % len(permutations)]


def swapped(pair: Sequence[Option], *, key: str, salt: str = "") -> bool:
    """Whether a two-option presentation (image A, image B) shows them in reverse order."""
    return counterbalanced_order(tuple(pair), key=key, salt=salt) != tuple(pair)
