"""Array copies for compiled code, written as loops.

numba compiles an array assigned to a slice (``a[:] = b``, ``a[i] = row``) with a
check whose error message it builds from the two shapes; that message's string
formatting took about 3 s of a first run's compile time for each pair of
dimensions. These loops do the same copy with nothing to format: the compiled step
loop (:mod:`rrscore.steploop`) and its control steps use them.
Both arrays must have the same shape (not checked: the callers' shapes are theirs).
"""

from __future__ import annotations

from numba import njit


@njit(cache=True)
def copy_into(dst, src):  # pragma: no cover (compiled)
    """``dst[:] = src`` for 1-d arrays of the same size."""
    for i in range(dst.size):
        dst[i] = src[i]


@njit(cache=True)
def copy_rows(dst, src):  # pragma: no cover (compiled)
    """``dst[:, :] = src`` for 2-d arrays of the same shape."""
    for i in range(dst.shape[0]):
        for j in range(dst.shape[1]):
            dst[i, j] = src[i, j]
