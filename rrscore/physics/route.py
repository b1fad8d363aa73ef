"""The route under a vehicle: grade, curve resistance and tunnel, averaged over its length.

A route's profile is kept as cumulative integrals along it
(:class:`~rrscore.model.track.Track`): the
elevation, the curve resistance per unit of weight by the Russian rules (700/R) and by
AREA, and the length in tunnels, each exact at the knots (every element boundary, and
finer along spirals and vertical curves) and linear between them. The mean of a rate
over a vehicle from ``rear`` to ``front`` is then the difference of two lookups over
its length: the grade a vehicle standing across a change of grade feels, the curve
resistance of one entering a curve, both continuous as the vehicle moves.

A train's vehicles stand one behind the other and move little in a step, so each keeps
the piece of the route its front and rear stood in (``ends``) and walks from there.
"""

from __future__ import annotations

import numpy as np

from ..jit import kernel
from ..model.track import AREA, CURVE, ELEVATION, TUNNEL, Track


@kernel(inline=True)
def piece_of(track, x, j):  # pragma: no cover (compiled)
    """The piece of the track (see :class:`~rrscore.model.track.Track`) that holds ``x``,
    walked to from piece ``j`` (NaN: ``j``)."""
    while x >= track.hi[j]:
        j += 1
    while x < track.lo[j]:
        j -= 1
    return j


@kernel
def means_under(track, x, half, ends, extra, out):  # pragma: no cover (compiled)
    """Each vehicle's mean grade and curve resistance (700/R, N/kN) into rows 0 and 1 of
    ``out``, and where ``extra``, its mean AREA curve resistance and share of its length
    in tunnels into rows 2 and 3: vehicle ``i`` has its centre at ``x[i]`` and half its
    length ``half[i]``; ``ends`` (2, n) are the pieces of the track its front and rear
    stood in (updated)."""
    value, rate, base = track.value, track.rate, track.base
    rows = 4 if extra else 2
    for i in range(x.size):
        h = half[i]
        front, rear = x[i] + h, x[i] - h
        jf = piece_of(track, front, ends[0, i])
        jr = piece_of(track, rear, ends[1, i])
        ends[0, i] = jf
        ends[1, i] = jr
        df, dr = front - base[jf], rear - base[jr]
        length = 2.0 * h
        for c in range(rows):
            out[c, i] = ((value[c, jf] + rate[c, jf] * df)
                         - (value[c, jr] + rate[c, jr] * dr)) / length


@kernel(counted=True)
def column_at(track, column, x):  # pragma: no cover (compiled)
    """Column ``column`` of the cumulative table at each position of ``x`` (an array)."""
    out = np.empty(x.size)
    for i in range(x.size):
        j = piece_of(track, x[i], np.searchsorted(track.lo, x[i], side="right") - 1)
        out[i] = track.value[column, j] + track.rate[column, j] * (x[i] - track.base[j])
    return out


def mean_rate(track: Track, column: int, x: np.ndarray, half: np.ndarray) -> np.ndarray:
    """The mean of a column's rate over each vehicle (centre ``x``, half length ``half``):
    the grade for :data:`~rrscore.model.track.ELEVATION`, the curve resistance (N/kN) for
    :data:`~rrscore.model.track.CURVE` or :data:`~rrscore.model.track.AREA`, the share in
    tunnels for :data:`~rrscore.model.track.TUNNEL`."""
    x, half = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(half, dtype=float))
    flat, h = np.ascontiguousarray(x.ravel()), np.ascontiguousarray(half.ravel())
    out = np.empty((4, flat.size))
    ends = np.zeros((2, flat.size), dtype=np.int64)
    means_under(track, flat, h, ends, column >= AREA, out)
    return out[column].reshape(x.shape)


def elevation(track: Track, x: np.ndarray | float) -> np.ndarray:
    """The height of the track at ``x`` relative to the route's start, m."""
    q = np.asarray(x, dtype=float)
    return column_at(track, ELEVATION, np.ascontiguousarray(q.ravel())).reshape(q.shape)
