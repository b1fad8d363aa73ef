"""Couplings between neighbouring vehicles: deflections, contact and the couplers' events.

The force law of each coupling is its coupler model's (a plugin,
:class:`~rrscore.model.couplers.CouplerModel`); what every coupling shares is here. An
uncoupled coupling carries nothing until its faces touch, and then only pushes
(:func:`uncoupled_force`). Its events: the slack edges and other kinks of the force law
(located, no action), a coupler breaking above its ``break_force``, and the faces of an
uncoupled coupling meeting (they couple when the closing speed is at most
``coupling_speed``). A train whose slack runs in and out meets thousands of slack edges,
so a step about to meet one is foreseen and cut to end just past it
(:func:`kink_bound`), instead of costing a rejected trial or two and a step taken again.
"""

from __future__ import annotations

import numpy as np

from ..jit import kernel, law

#: A step about to meet a kink is cut to end this fraction of the time to it past it, so
#: that the kink falls in its last percent (where the loop lets it stand).
KINK_AIM = 0.005


@law
def uncoupled_force(force, d, lo, coupled):  # pragma: no cover (compiled)
    """The force of a coupling: its coupler's where ``coupled``; else nothing until the
    faces touch (``d <= lo``, the slack's compressed end), and then only a push."""
    if coupled != 0.0:
        return force
    if d <= lo:
        return min(force, 0.0)
    return 0.0


@kernel
def deflections(x, v, nominal, d, d_dot):  # pragma: no cover (compiled)
    """Each coupling's deflection (stretched +) and its rate, from the bodies' positions
    and speeds: vehicle ``j`` ahead of coupling ``j``, vehicle ``j + 1`` behind it."""
    for j in range(nominal.size):
        d[j] = x[j] - x[j + 1] - nominal[j]
        d_dot[j] = v[j] - v[j + 1]


@kernel
def slack_edges(x, nominal, kinks, g):  # pragma: no cover (compiled)
    """The slack-edge (kink) events into ``g``: each coupling's deflection less each of its
    kinks (``kinks`` (nc, k); a NaN kink is none and is written as inf)."""
    nk = kinks.shape[1]
    for j in range(nominal.size):
        d = x[j] - x[j + 1] - nominal[j]
        for k in range(nk):
            e = kinks[j, k]
            g[j * nk + k] = d - e if e == e else np.inf


@kernel
def edge_met(side, a0, end):  # pragma: no cover (compiled)
    """Whether a slack edge's function, from ``a0`` (the deflection less the edge) on the
    side ``side`` says, ends a step at ``end`` on the other side (without branches)."""
    return ((side > 0.0) & (a0 > 0.0) & (end <= 0.0)) | ((side < 0.0) & (a0 <= 0.0)
                                                         & (end > 0.0))


@kernel
def edge_ahead(horizon, x, v, a, nominal, kinks, g):  # pragma: no cover (compiled)
    """Whether any slack edge's quadratic (see :func:`kink_bound`) meets its edge within
    ``horizon`` (:func:`edge_met`): as a rule none, found by a loop on vectors."""
    found = 0
    nk = kinks.shape[1]
    for k in range(nk):
        for j in range(nominal.size):
            a0 = (x[j] - x[j + 1] - nominal[j]) - kinks[j, k]
            end = a0 + horizon * ((v[j] - v[j + 1]) + horizon * (0.5 * (a[j] - a[j + 1])))
            found += edge_met(g[j * nk + k], a0, end)
    return found > 0


@kernel
def kink_bound(t, t_bound, h, x, v, a, nominal, kinks, g):  # pragma: no cover (compiled)
    """The end for a step from ``t`` of size ``h`` (not past ``t_bound``) that would meet a
    slack edge: :data:`KINK_AIM` past the time the earliest edge is foreseen to be
    crossed, else ``t_bound``. Each edge's function (``g``, its value with the sign of the
    side the state is on) is taken as a quadratic in time from the deflection's rate and
    acceleration (the bodies' ``v`` and ``a``). An edge counts where the quadratic has
    changed sign by the step's end (one crossing, not an edge touched and left inside the
    step) and the time is past the step's first thousandth (else the step would be cut to
    almost nothing: the edge is met as any event is). The time is found by bisection to
    2**-40 of the step."""
    horizon = min(h, t_bound - t)
    if not edge_ahead(horizon, x, v, a, nominal, kinks, g):
        return t_bound
    best = np.inf
    nk = kinks.shape[1]
    for j in range(nominal.size):
        d = x[j] - x[j + 1] - nominal[j]
        a1 = v[j] - v[j + 1]
        a2 = 0.5 * (a[j] - a[j + 1])
        for k in range(nk):
            side = g[j * nk + k]
            a0 = d - kinks[j, k]
            # (not on the surface, an edge just reached, nor without an edge here)
            if not edge_met(side, a0, a0 + horizon * (a1 + horizon * a2)):
                continue
            positive = side > 0.0
            lo, hi = 0.0, horizon
            for _ in range(40):
                mid = 0.5 * (lo + hi)
                if (a0 + mid * (a1 + mid * a2) > 0.0) == positive:
                    lo = mid
                else:
                    hi = mid
            best = min(best, hi)
    if best < horizon and best > 1e-3 * horizon:
        return min(t_bound, t + best * (1.0 + KINK_AIM))
    return t_bound


@kernel
def break_margins(force, break_force, coupled, g):  # pragma: no cover (compiled)
    """The coupler-break events into ``g``: ``break_force - force`` of each coupled coupling
    with a break force (it falls through zero as the coupler breaks), 1 elsewhere."""
    for j in range(force.size):
        watched = coupled[j] != 0.0 and break_force[j] < np.inf
        g[j] = break_force[j] - force[j] if watched else 1.0


@kernel
def contact_gaps(x, nominal, lo, coupled, g):  # pragma: no cover (compiled)
    """The contact events into ``g``: each uncoupled coupling's deflection less its slack's
    compressed end (it falls through zero as the faces meet), 1 where coupled."""
    for j in range(nominal.size):
        g[j] = x[j] - x[j + 1] - nominal[j] - lo[j] if coupled[j] == 0.0 else 1.0
