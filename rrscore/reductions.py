"""Reductions over a train's short arrays, for the code that runs at every control step.

numpy's reductions (``a.any()``, ``a.all()``, ``a.max()``) cost about 2.5 microseconds
each on arrays of a hundred entries, more than the arithmetic around them, and a
control step took some thirty. ``np.count_nonzero`` answers ``any`` and ``all`` in a
fifth of that; the rest are plain loops compiled with numba (cached on disk).
"""

from __future__ import annotations

import numpy as np
from numba import njit


def any_set(a: np.ndarray) -> bool:
    """``a.any()``: whether any entry is nonzero (or NaN)."""
    return np.count_nonzero(a) > 0


def all_set(a: np.ndarray) -> bool:
    """``a.all()``: whether every entry is nonzero (or NaN); true for an empty array."""
    return np.count_nonzero(a) == a.size


@njit(cache=True)
def _all_finite(a):  # pragma: no cover (compiled)
    for x in a.flat:
        if not np.isfinite(x):
            return False
    return True


def all_finite(a: np.ndarray) -> bool:
    """``np.isfinite(a).all()`` for a float array of any shape."""
    return bool(_all_finite(a))


@njit(cache=True)
def _extremes(a):  # pragma: no cover (compiled)
    lo = hi = a[0]
    for x in a:
        if x != x:  # NaN wins, as in numpy's min and max
            return x, x
        if x < lo:
            lo = x
        elif x > hi:
            hi = x
    return lo, hi


def extremes(a: np.ndarray) -> tuple[float, float]:
    """``(a.min(), a.max())`` of a non-empty 1-D float array, NaN if any entry is."""
    lo, hi = _extremes(a)
    return float(lo), float(hi)


@njit(cache=True)
def _max_abs(a):  # pragma: no cover (compiled)
    top = 0.0
    for x in a:
        if x != x:  # NaN wins, as in numpy's max
            return x
        if abs(x) > top:
            top = abs(x)
    return top


def max_abs(a: np.ndarray) -> float:
    """``np.abs(a).max()`` of a non-empty 1-D float array, NaN if any entry is."""
    return float(_max_abs(a))
