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
from ..model.track import AREA, CURVE, ELEVATION, Track
from .resistance import gravity_force


@kernel(inline=True)
def piece_of(track, x, j):  # pragma: no cover (compiled)
    """The piece of the track (see :class:`~rrscore.model.track.Track`) that holds ``x``,
    walked to from piece ``j`` (NaN: ``j``)."""
    while x >= track.hi[j]:
        j += 1
    while x < track.lo[j]:
        j -= 1
    return j


@kernel(inline=True)
def column_between(track, c, front, jf, rear, jr):  # pragma: no cover (compiled)
    """Column ``c`` of the cumulative table at ``front`` (in piece ``jf``) less at ``rear``
    (in piece ``jr``)."""
    return ((track.offset[c, jf] + track.rate[c, jf] * front)
            - (track.offset[c, jr] + track.rate[c, jr] * rear))


@kernel
def means_under(track, x, half, inv_length, ends, extra, out):  # pragma: no cover
    """Each vehicle's mean grade and curve resistance (700/R, N/kN) into rows 0 and 1 of
    ``out``, and where ``extra``, its mean AREA curve resistance and share of its length
    in tunnels into rows 2 and 3: vehicle ``i`` has its centre at ``x[i]``, half its
    length ``half[i]`` and the inverse of its length ``inv_length[i]``; ``ends`` (2, n)
    are the pieces of the track its front and rear stood in (updated)."""
    if not on_two_pieces(track, x, half, inv_length, ends, 4 if extra else 2, out):
        for i in range(x.size):
            h = half[i]
            front, rear = x[i] + h, x[i] - h
            jf = piece_of(track, front, ends[0, i])  # (a walk: rarely more than a step)
            jr = piece_of(track, rear, ends[1, i])
            ends[0, i] = jf
            ends[1, i] = jr
            for c in range(4 if extra else 2):
                out[c, i] = column_between(track, c, front, jf, rear, jr) * inv_length[i]


@kernel(inline=True)
def on_two_pieces(track, x, half, inv_length, ends, rows, out):  # pragma: no cover
    """:func:`means_under` where every vehicle's ends lie on the pieces of the first's
    front and the last's rear, which follow each other or are one (the rule for a train:
    its pieces are longer than it), without walks: the same sums, each end's piece taken
    by a comparison with the boundary, in loops LLVM runs on vectors. False (and nothing
    written) where the vehicles are not so."""
    n = x.size
    if n == 0:
        return True
    ja = piece_of(track, x[n - 1] - half[n - 1], ends[1, n - 1])
    jb = piece_of(track, x[0] + half[0], ends[0, 0])
    if jb != ja and jb != ja + 1:
        return False
    first, last, cut = track.lo[ja], track.hi[jb], track.lo[jb]
    outside = 0
    for i in range(n):
        outside += (x[i] - half[i] < first) | (x[i] + half[i] >= last)
    if outside > 0:
        return False
    for i in range(n):
        ends[0, i] = jb if x[i] + half[i] >= cut else ja
        ends[1, i] = jb if x[i] - half[i] >= cut else ja
    for c in range(rows):
        offset_a, rate_a = track.offset[c, ja], track.rate[c, ja]
        offset_b, rate_b = track.offset[c, jb], track.rate[c, jb]
        for i in range(n):
            front, rear = x[i] + half[i], x[i] - half[i]
            # (column_between's sums, written out so the loop has no gathers)
            at_front = (offset_b + rate_b * front) if front >= cut else (offset_a + rate_a * front)
            at_rear = (offset_b + rate_b * rear) if rear >= cut else (offset_a + rate_a * rear)
            out[c, i] = (at_front - at_rear) * inv_length[i]
    return True


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
    means_under(track, flat, h, 0.5 / h, ends, column >= AREA, out)
    return out[column].reshape(x.shape)


def elevation(track: Track, x: np.ndarray | float) -> np.ndarray:
    """The height of the track at ``x`` relative to the route's start, m."""
    q = np.asarray(x, dtype=float)
    return column_at(track, ELEVATION, np.ascontiguousarray(q.ravel())).reshape(q.shape)



@kernel
def grade_and_curve(track, x, half):  # pragma: no cover (compiled)
    """The mean grade and curve resistance (700/R, N/kN) under a vehicle with its centre at
    ``x`` and half its length ``half`` (its ends' pieces found by bisection)."""
    front, rear = x + half, x - half
    jf = piece_of(track, front, np.searchsorted(track.lo, front, side="right") - 1)
    jr = piece_of(track, rear, np.searchsorted(track.lo, rear, side="right") - 1)
    inv = 0.5 / half
    return (column_between(track, ELEVATION, front, jf, rear, jr) * inv,
            column_between(track, CURVE, front, jf, rear, jr) * inv)


@kernel
def path_work(track, x0, x1, half):  # pragma: no cover (compiled)
    """Along a vehicle's path from ``x0`` to ``x1`` (its centre; half its length ``half``):
    the integral over position of ``g / sqrt(1 + g^2)`` of its mean grade ``g`` (signed:
    the work of gravity on it is minus its weight times this) and of its mean curve
    resistance over the distance (unsigned). The path is split where an end of the vehicle
    meets a knot: between, both run linearly, and each piece's integral is exact (the first
    one's antiderivative is ``sqrt(1 + g^2)`` over the grade's slope, written here without
    the cancellation)."""
    lo, hi = min(x0, x1), max(x0, x1)
    sign = 1.0 if x1 >= x0 else -1.0
    g_int = c_int = 0.0
    p = lo
    gp, cp = grade_and_curve(track, p, half)
    knots = track.knots
    for _ in range(2 * knots.size + 2):
        if not p < hi:
            break
        jf = np.searchsorted(knots, p + half, side="right")
        jr = np.searchsorted(knots, p - half, side="right")
        q = hi
        if jf < knots.size:
            q = min(q, knots[jf] - half)
        if jr < knots.size:
            q = min(q, knots[jr] + half)
        if not q > p:  # (rounding at a knot: the rest in one piece)
            q = hi
        gq, cq = grade_and_curve(track, q, half)
        dx = q - p
        g_int += dx * (gp + gq) / (np.sqrt(1.0 + gp * gp) + np.sqrt(1.0 + gq * gq))
        c_int += dx * 0.5 * (cp + cq)
        p, gp, cp = q, gq, cq
    return sign * g_int, c_int


@kernel
def train_sums(track, lead, rel, half, weight, weight_kn, gravity,
               curve):  # pragma: no cover (compiled)
    """The gravity force and the curve resistance summed over a train's vehicles (each
    where it stands: its centre at ``lead[k] + rel[i]``, as the body forces take them),
    into ``gravity[k]`` and ``curve[k]``, with the lead's centre at each of ``lead``
    (ascending)."""
    for k in range(lead.size):
        gravity[k] = 0.0
        curve[k] = 0.0
    for i in range(rel.size):
        h = half[i]
        jf = jr = 0
        for k in range(lead.size):
            x = lead[k] + rel[i]
            front, rear = x + h, x - h
            jf = piece_of(track, front, jf)
            jr = piece_of(track, rear, jr)
            inv = 0.5 / h
            g = column_between(track, ELEVATION, front, jf, rear, jr) * inv
            gravity[k] += gravity_force(weight[i], g)
            curve[k] += column_between(track, CURVE, front, jf, rear, jr) * inv \
                * weight_kn[i]
