"""One explicit Runge-Kutta step from a Butcher tableau, its error and its dense output.

Every method is data (:mod:`rrscore.engine.tableau`); this is the only code that steps.
A trial step forms its inner stages on the entries a right-hand side reads (the
system's ``live`` ranges: a long train's energy account and rolling wheels are most of
its state and feed nothing back), its end on the entries it integrates (``formed``),
and its error on the entries under error control (``controlled``). The sums skip zero
weights, so a stage whose derivative nothing reads (Dormand-Prince's second, in the
step's end and its dense output) costs only the entries the next stages read.

The error is measured in the max norm: every entry ``i`` under control must satisfy
``|err_i| <= atol_i + rtol_i * max(|y0_i - ref0_i|, |y1_i - ref1_i|)``, ``ref`` being the
system's reference motion (a train's mean velocity, so its relative motions are held to
the same accuracy at any speed). The step size then scales by ``0.9 * norm**(-1/(q+1))``
(between 0.2 and 5, and not above 1 right after a rejected trial), as in scipy's
``_ivp/rk.py``, from which this module takes its shape: a method is its tableau.
"""

from __future__ import annotations

import numpy as np

from ..jit import kernel
from .system import reference, rhs

#: Smallest step, relative to ``max(1 s, |t|)``, before an adaptive step gives up.
MIN_STEP = 1e-12
#: Bounds and safety factor of the step-size control.
SAFETY, MIN_FACTOR, MAX_FACTOR = 0.9, 0.2, 5.0


@kernel(inline=True)
def stage_sum(ks, weights, count, lo, hi, acc):  # pragma: no cover (compiled)
    """``acc = sum(weights[j] * ks[j, lo:hi] for j < count)``, zero weights skipped (their
    stage may not be formed there)."""
    for c in range(hi - lo):
        acc[c] = 0.0
    for j in range(count):
        w = weights[j]
        if w == 0.0:
            continue
        k = ks[j, lo:hi]
        for c in range(hi - lo):
            acc[c] += w * k[c]


@kernel
def combine(y, h, weights, ks, count, ranges, out):  # pragma: no cover (compiled)
    """``out = y + h * sum(weights[j] * ks[j] for j < count)`` on the entries in
    ``ranges`` (rows ``start, stop``), the others of ``out`` left as they are. Zero
    weights are skipped (their stage may not be formed there). Returns whether the
    entries written are finite."""
    bad = 0
    for r in range(ranges.shape[0]):
        lo, hi = ranges[r, 0], ranges[r, 1]
        acc = out[lo:hi]  # views from 0: numba then knows no index is negative
        stage_sum(ks, weights, count, lo, hi, acc)
        start = y[lo:hi]
        for c in range(hi - lo):
            v = start[c] + h * acc[c]
            acc[c] = v
            bad |= np.int64((v - v) != 0.0)  # NaN for an infinite or NaN v
    return bad == 0


@kernel
def copy_ranges(dst, src, ranges):  # pragma: no cover (compiled)
    """``src``'s entries in ``ranges`` into ``dst``."""
    for r in range(ranges.shape[0]):
        lo, hi = ranges[r, 0], ranges[r, 1]
        a, b = dst[lo:hi], src[lo:hi]
        for c in range(hi - lo):
            a[c] = b[c]


@kernel
def finite_in(x, ranges):  # pragma: no cover (compiled)
    """Whether the entries of ``x`` in ``ranges`` are finite."""
    bad = 0
    for r in range(ranges.shape[0]):
        part = x[ranges[r, 0]:ranges[r, 1]]
        for c in range(part.size):
            v = part[c]
            bad |= np.int64((v - v) != 0.0)
    return bad == 0


@kernel
def error_norm(h, e, ks, count, atol, rtol, mag0, y1, ref1, ranges,
               scratch):  # pragma: no cover (compiled)
    """The max norm of the embedded error ``h * sum(e[j] * ks[j])`` over the entries in
    ``ranges`` (see the module): ``(finite, norm)``. ``mag0``: ``|y0 - ref0|`` there;
    ``scratch``: room for the error (as long as the state)."""
    worst = 0.0
    for r in range(ranges.shape[0]):
        lo, hi = ranges[r, 0], ranges[r, 1]
        err = scratch[lo:hi]
        stage_sum(ks, e, count, lo, hi, err)
        at, rt, m0, yy, rr = atol[lo:hi], rtol[lo:hi], mag0[lo:hi], y1[lo:hi], ref1[lo:hi]
        for c in range(hi - lo):
            a = abs(err[c] * h)
            if a > 0.0:
                ratio = a / (at[c] + rt[c] * max(m0[c], abs(yy[c] - rr[c])))
                if not ratio <= worst:  # NaN wins
                    worst = ratio
    return worst == worst and worst < np.inf, worst


@kernel
def magnitudes(y, ref, ranges, out):  # pragma: no cover (compiled)
    """``|y - ref|`` on the entries in ``ranges``, into ``out``."""
    for r in range(ranges.shape[0]):
        lo, hi = ranges[r, 0], ranges[r, 1]
        o, yy, rr = out[lo:hi], y[lo:hi], ref[lo:hi]
        for c in range(hi - lo):
            o[c] = abs(yy[c] - rr[c])


@kernel
def step_factor(norm, rejected, error_order):  # pragma: no cover (compiled)
    """The factor on the step size after a trial of error ``norm`` (<= 1: accepted)."""
    if norm == 0.0:
        factor = MAX_FACTOR
    else:
        factor = min(MAX_FACTOR, max(MIN_FACTOR,
                                     SAFETY * norm ** (-1.0 / (error_order + 1))))
    if norm <= 1.0 and rejected:
        factor = min(factor, 1.0)
    return factor


@kernel
def attempt(system, fns, tab, t, y, h, ks, stage, y1):  # pragma: no cover (compiled)
    """One trial step of size ``h`` from ``(t, y)``, whose derivative is ``ks[0]`` (``fns``:
    the plugins' functions, :mod:`rrscore.engine.adapters`): the
    stages into ``ks``, the step's end into ``y1`` (the ``formed`` entries; an FSAL
    method's last stage, its derivative there, into ``ks[-1]``). Returns whether the
    end is finite."""
    s = tab.stages
    last = s - 1 if tab.fsal else s
    for i in range(1, last):
        combine(y, h, tab.a[i], ks, i, system.live, stage)
        rhs(system, fns, t + tab.c[i] * h, stage, ks[i], tab.needed[i] != 0.0)
    if tab.fsal:
        finite = combine(y, h, tab.a[s - 1], ks, s - 1, system.formed, y1)
        rhs(system, fns, t + h, y1, ks[s - 1], True)
        return finite and finite_in(ks[s - 1], system.formed)
    return combine(y, h, tab.b, ks, s, system.formed, y1)


@kernel
def dense_weights(tab, s, out):  # pragma: no cover (compiled)
    """The weights of the stages in the continuous extension at fraction ``s``."""
    p = tab.dense.shape[1]
    for j in range(tab.stages):
        w = 0.0
        power = 1.0
        for k in range(p):
            power *= s
            w += tab.dense[j, k] * power
        out[j] = w


@kernel
def dense_state(tab, t, t0, h, y0, y1, f0, f1, ks, whole, ranges, weights,
                out):  # pragma: no cover (compiled)
    """The state at ``t`` within a step from ``(t0, y0)`` to ``y1`` (size ``h``), on the
    entries in ``ranges``: the method's continuous extension where it has one and the
    step is ``whole`` (else the cubic Hermite between the ends, whose derivatives are
    ``f0``, ``f1``); ``weights``: room for a weight per stage."""
    if t <= t0:
        copy_ranges(out, y0, ranges)
        return
    s = (t - t0) / h
    if whole and tab.dense.shape[1] > 0:
        dense_weights(tab, s, weights)
        combine(y0, h, weights, ks, tab.stages, ranges, out)
        return
    a = (1.0 + 2.0 * s) * (1.0 - s) ** 2
    b = s * (1.0 - s) ** 2 * h
    c = s * s * (3.0 - 2.0 * s)
    d = s * s * (s - 1.0) * h
    for r in range(ranges.shape[0]):
        lo, hi = ranges[r, 0], ranges[r, 1]
        o, p0, q0, p1, q1 = out[lo:hi], y0[lo:hi], f0[lo:hi], y1[lo:hi], f1[lo:hi]
        for k in range(hi - lo):
            o[k] = a * p0[k] + b * q0[k] + c * p1[k] + d * q1[k]


@kernel
def trial_error(system, fns, tab, h, ks, y, y1, work):  # pragma: no cover (compiled)
    """The error norm of a trial step just taken (see :func:`error_norm`), relative to the
    system's reference at both ends. ``work``: rows ``ref``, ``mag0``, ``scratch``."""
    ref, mag0, scratch = work[0], work[1], work[2]
    reference(system, fns, y, ref)
    magnitudes(y, ref, system.controlled, mag0)
    reference(system, fns, y1, ref)
    return error_norm(h, tab.e, ks, tab.stages, system.atol, system.rtol, mag0, y1, ref,
                      system.controlled, scratch)
