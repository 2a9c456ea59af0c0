"""Parameter checks for the public statistics (``scoring.stats.__all__``), run at the entry point.

scikit-learn's habit (``check_array``, ``validate_params``): a caller's mistake fails at once,
with one line that names the parameter and what it got, instead of a NaN or a numpy traceback
three calls down. A wrong kind of value (a string for a number, a list for a mapping) is a
``TypeError``; a value of the right kind out of its range (a confidence of 95, a negative count,
two arrays of different lengths, an unknown method name) is a ``ValueError``.

The checks accept everything the app itself passes (effective, non-integer counts; numpy
scalars) and never copy or change the data.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping

import numpy as np


def check_confidence(confidence, name: str = "confidence") -> float:
    """A confidence level strictly between 0 and 1, as a float."""
    if isinstance(confidence, bool) or not isinstance(confidence, numbers.Real):
        raise TypeError(f"{name} must be a number in (0, 1), got {confidence!r}")
    if not 0.0 < float(confidence) < 1.0:
        raise ValueError(f"{name} must lie in (0, 1), got {confidence!r}")
    return float(confidence)


def check_integer(value, name: str, *, minimum: int | None = None) -> int:
    """A whole number (Python or numpy integer, not a bool) of at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value!r}")
    return int(value)


def check_real(value, name: str, *, low: float | None = None, high: float | None = None) -> float:
    """A finite real number in [``low``, ``high``] (either end optional)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if (low is not None and value < low) or (high is not None and value > high):
        raise ValueError(f"{name} must lie in [{low}, {high}], got {value!r}")
    return value


def check_choice(value, name: str, choices: Iterable):
    """One of ``choices`` (a method name, a weighting, a level of measurement)."""
    choices = tuple(choices)
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")
    return value


def check_counts(successes, n, *, successes_name: str = "successes", n_name: str = "n") -> None:
    """Counts (scalars or arrays of one shape; effective, non-integer counts allowed) with
    0 <= successes <= n everywhere. NaN is let through: a caller's undefined cell stays NaN."""
    successes_array = _numeric(successes, successes_name)
    n_array = _numeric(n, n_name)
    if successes_array.shape != n_array.shape and successes_array.ndim and n_array.ndim:
        raise ValueError(
            f"{successes_name} and {n_name} must have the same shape, got "
            f"{successes_array.shape} and {n_array.shape}"
        )
    if np.any(n_array < 0):
        raise ValueError(f"{n_name} must not be negative, got {_first(n_array, n_array < 0)!r}")
    if np.any(successes_array < 0):
        negative = successes_array < 0
        raise ValueError(
            f"{successes_name} must not be negative, got {_first(successes_array, negative)!r}"
        )
    over = successes_array > n_array * (1.0 + 1e-12)
    if np.any(over):
        raise ValueError(
            f"{successes_name} must not exceed {n_name}, got {successes_name}="
            f"{_first(np.broadcast_to(successes_array, over.shape), over)!r} > "
            f"{n_name}={_first(np.broadcast_to(n_array, over.shape), over)!r}"
        )


def check_same_length(**arrays) -> int:
    """Every array-like has the same length; returns it. The message names every parameter."""
    lengths = {name: _length(values) for name, values in arrays.items()}
    if len(set(lengths.values())) > 1:
        described = ", ".join(f"{name} has {length}" for name, length in lengths.items())
        raise ValueError(f"{' and '.join(lengths)} must have the same length: {described}")
    return next(iter(lengths.values()), 0)


def check_mapping(value, name: str) -> Mapping:
    if not isinstance(value, Mapping):
        raise TypeError(f"{name} must be a mapping, got {type(value).__name__}")
    return value


def check_columns(frame, name: str, columns: Iterable[str]) -> None:
    """``frame`` is a pandas DataFrame holding every column of ``columns``."""
    if not hasattr(frame, "columns") or not hasattr(frame, "iloc"):
        raise TypeError(f"{name} must be a pandas DataFrame, got {type(frame).__name__}")
    missing = [column for column in columns if column not in frame.columns]
    if missing:
        raise ValueError(f"{name} is missing column(s): {', '.join(missing)}")


def _length(values) -> int:
    try:
        return len(values)
    except TypeError:  # a scalar
        return int(np.size(values))


def _numeric(values, name: str) -> np.ndarray:
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be numbers, got {values!r}") from None
    return array


def _first(values: np.ndarray, mask: np.ndarray):
    picked = np.asarray(values)[np.asarray(mask)] if np.ndim(mask) else np.asarray(values)
    first = picked.flat[0]
    return int(first) if float(first).is_integer() else float(first)
