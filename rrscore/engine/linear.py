"""The smallest system of the event loop: ``y' = A y + b + P(t)`` (``P`` a polynomial
per component), with one optional event ``y[k] - level``.

Its closed forms are what the stepper, the tableaus and the loop are checked against
(``tests/engine/test_tableau.py``); it also shows, in a page, what a system is: a struct
with the loop's fields and the functions of :mod:`rrscore.engine.system` registered for
it."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..jit import kernel, struct
from ..model.state import entry_ranges
from . import loop, system
from .adapters import (
    MAX_GROUPS,
    MAX_TYPES,
    function_table,
    no_force,
    no_input,
    no_rates,
    no_step,
)

Linear = struct("Linear", ("live", "formed", "controlled", "atol", "rtol", "ev_kind", "a",
                           "b", "poly", "event"), """``y' = a y + b + sum_k poly[:, k] t**k``,
    the event ``y[event[0]] - event[1]`` where ``event[0] >= 0``.""")


@kernel
def rhs(sys, fns, t, y, dy, full):  # pragma: no cover (compiled)
    """``a y + b + poly(t)``."""
    m = y.size
    for i in range(m):
        acc = sys.b[i]
        for j in range(m):
            acc += sys.a[i, j] * y[j]
        power = 1.0
        for k in range(sys.poly.shape[1]):
            acc += sys.poly[i, k] * power
            power *= t
        dy[i] = acc


@kernel
def events(sys, fns, t, y, f, g):  # pragma: no cover (compiled)
    """The one event, where there is one."""
    which = int(sys.event[0])
    if which < 0:
        return 0
    g[0] = y[which] - sys.event[1]
    return 1


@kernel
def sample(sys, fns, t, y, f, row):  # pragma: no cover (compiled)
    """The row ``(t, y...)``."""
    row[0] = t
    for i in range(y.size):
        row[1 + i] = y[i]
    return 1 + y.size


for _generic, _impl in ((system.rhs, rhs), (system.events, events),
                        (system.kink_bound, system.no_kinks),
                        (system.reference, system.no_reference),
                        (system.commit, system.nothing_to_commit),
                        (system.control, system.no_control), (system.sample, sample)):
    _generic.register(Linear, _impl)

#: No plugin functions (the loop passes them on; this system calls none).
FNS = function_table((no_step,) * MAX_TYPES, (no_rates,) * MAX_TYPES, (no_input,) * MAX_TYPES,
                     (no_force,) * MAX_GROUPS)


def linear(a: Any, b: Any = None, poly: Any = None, atol: Any = 1e-8, rtol: Any = 0.0,
           event: tuple[int, float] = (-1, 0.0), kind: int = system.FALLING) -> Any:
    """The system ``y' = a y + b + poly(t)`` (``atol``, ``rtol``: a number or one per
    component; ``event``: ``(component, level)``)."""
    a = np.atleast_2d(np.asarray(a, dtype=float))
    m = a.shape[0]
    b = np.zeros(m) if b is None else np.asarray(b, dtype=float)
    poly = np.zeros((m, 1)) if poly is None else np.atleast_2d(np.asarray(poly, dtype=float))
    atol = np.broadcast_to(np.asarray(atol, dtype=float), (m,)).copy()
    rtol = np.broadcast_to(np.asarray(rtol, dtype=float), (m,)).copy()
    every = entry_ranges(np.ones(m, dtype=bool))
    return Linear(every, every, entry_ranges(np.isfinite(atol)), atol, rtol,
                  np.array([kind], dtype=np.int64), a, b, np.ascontiguousarray(poly),
                  np.array([float(event[0]), float(event[1])]))


def integrate(sys: Any, tableau: Any, y0: Any, t_end: float, h: float = 1e-3,
              max_step: float = np.inf, sample_dt: float = 0.0, rows: int = 64) -> tuple:
    """``sys`` carried from ``y0`` at 0 to ``t_end`` (or to its event) by ``tableau``:
    ``(code, t, y, clock, samples)``; ``samples`` rows ``(t, y...)``."""
    tab = tableau.coefficients()
    y0 = np.asarray(y0, dtype=float)
    clock = loop.loop_state()
    st = clock[0]
    st.t_end, st.h, st.max_step, st.sample_dt = t_end, h, max_step, sample_dt
    w = loop.work_for(y0.size, tab.stages, 1, rows, 1 + y0.size, 0)
    w.y[:] = y0
    out = []
    while True:
        code = loop.advance(sys, FNS, tab, clock, w)
        out.append(w.rows[:st.samples].copy())
        if code != loop.SAMPLES:
            break
        st.samples = 0
    return code, float(st.t), w.y.copy(), clock, np.concatenate(out)
