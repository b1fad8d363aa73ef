"""Tables of a quantity against another: linear between their points."""

from __future__ import annotations

import numpy as np

from ..jit import kernel


@kernel(inline=True)
def interp_one(x, xp, fp):  # pragma: no cover (compiled)
    """``np.interp(x, xp, fp)`` for one ``x`` in a table of strictly increasing finite
    ``xp``: linear between the points, the end values beyond them."""
    if x != x:
        return x
    m = xp.size
    if x <= xp[0]:
        return fp[0]
    if x >= xp[m - 1]:
        return fp[m - 1]
    j = np.searchsorted(xp, x, side="right") - 1
    if xp[j] == x:
        return fp[j]
    return fp[j] + (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j]) * (x - xp[j])
