"""Advancing a solver to a time bound while locating events.

After every step the event functions of the dynamics are compared at both
ends. If one changed sign, the earliest crossing is found by the Illinois
method on the solver's dense output, the step is taken again to end exactly
there, and the event's action (a mode change, a velocity set to exactly zero)
is applied before integration restarts. Discontinuities therefore fall on step
boundaries instead of being smeared across a step. Within a step the
right-hand side is smooth: the modes that would make it jump (the direction
friction acts in, rolling or slipping, coupled or not) are held over the step
and change only at these events.

Every stretch of time the integrator commits (a step, or the part of a step up
to an event) is handed to ``on_segment`` with an interpolant valid on it, so
outputs are sampled from the dense output instead of forcing steps to end at
sample times.

Kinks (events without an action: the couplers' slack edges, where a force law
changes slope) are foreseen as well: a step about to meet one is cut to end just
past it (:func:`kink_bound`), and a step whose only crossings are kinks in its
last :data:`KINK_END` is kept as it is, the kinks counted, instead of being taken
again to end on the first. Otherwise a kink met mid-step costs a rejected trial
or two, the step and the step taken again; a train whose slack runs in and out
meets thousands.

A solver step that fails (step size underflow, a non-finite state) is a
status, not an exception: :meth:`Integrator.advance` returns the message.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from .dynamics import TrainDynamics
from .errors import take_interruption
from .solvers import Solver

if TYPE_CHECKING:
    from .steploop import LoopSamples, Steps

#: Relative precision of event times (fraction of the step in which they fall).
EVENT_RTOL = 1e-7
#: An event function this close to zero, relative to its change over the step that
#: crossed it, is on its surface: the event is acted on now even if the dense output
#: left it a hair before.
ON_SURFACE = 1e-4
#: A drive is stuck when this many passes of the loop in a row leave simulated time where
#: it was (events firing again and again at one instant) ...
MAX_PASSES_AT_ONE_INSTANT = 500
#: ... or when this many steps in a row together cover less than :data:`MIN_PROGRESS`
#: seconds (steps collapsing).
STALL_WINDOW = 20000
MIN_PROGRESS = 1e-3
#: A step whose only crossings are kinks (events without an action) all in its last
#: this fraction stands as it is, the kinks counted: the force law's change of slope
#: that close to the step's end adds an error far below the one the step was accepted
#: with.
KINK_END = 0.01
#: A step about to meet a kink is cut to end this fraction of the time to it past it,
#: so that the kink falls in its last :data:`KINK_END` (the time is foreseen from
#: the deflection, its rate and its acceleration at the step's start).
KINK_AIM = 0.005


@njit(cache=True)
def kink_bound(t, t_bound, h, max_step, y, f, side, first, nk, sx, sv, nominal,
               kinks):  # pragma: no cover (compiled)
    """The bound for a step from ``t`` (size ``min(h, max_step)``, not past ``t_bound``)
    that would meet a slack edge: ``t_bound``, or :data:`KINK_AIM` past the time at
    which the earliest edge is foreseen to be crossed.

    Each edge's function (``side[first + i * nk + k]``, its value with the sign of the
    side the state is on: ``d_i - kinks[i, k]``, ``d_i = y[sx + i] - y[sx + i + 1] -
    nominal[i]``) is taken as a quadratic in time from the deflection's rate and
    acceleration (``y`` and ``f`` at ``sv``). An edge counts where the quadratic has
    changed sign by the step's end (one crossing, not an edge touched and left inside
    the step) and the foreseen time is past the step's first thousandth (else the
    step would be cut to almost nothing: the edge is met as any event is). The time is
    found by bisection to 2**-40 of the step: the same arithmetic on the Python path
    and in the compiled loop, hence the same steps."""
    horizon = min(h, max_step, t_bound - t)
    best = np.inf
    # coupling by coupling, its edges inside (no division of a flat index: it ran at
    # every step, for every edge)
    nc = kinks.shape[0]
    # over views from 0 (an offset index keeps numba's wraparound check in the loop)
    x_ahead, x_behind = y[sx:sx + nc], y[sx + 1:sx + 1 + nc]
    v_ahead, v_behind = y[sv:sv + nc], y[sv + 1:sv + 1 + nc]
    a_ahead, a_behind = f[sv:sv + nc], f[sv + 1:sv + 1 + nc]
    sides = side[first:first + nc * nk]
    for i in range(nc):
        d = x_ahead[i] - x_behind[i] - nominal[i]
        for k in range(nk):
            g = sides[i * nk + k]
            if not (g > 0.0 or g < 0.0):
                continue
            positive = g > 0.0
            a0 = d - kinks[i, k]
            if (a0 > 0.0) != positive or not np.isfinite(a0):
                continue  # on the surface (an edge just reached), or no edge here
            a1 = v_ahead[i] - v_behind[i]
            a2 = 0.5 * (a_ahead[i] - a_behind[i])
            if (a0 + horizon * (a1 + horizon * a2) > 0.0) == positive:
                continue
            lo, hi = 0.0, horizon
            for _ in range(40):
                mid = 0.5 * (lo + hi)
                if (a0 + mid * (a1 + mid * a2) > 0.0) == positive:
                    lo = mid
                else:
                    hi = mid
            if hi < best:
                best = hi
    if best < horizon and best > 1e-3 * horizon:
        return min(t_bound, t + best * (1.0 + KINK_AIM))
    return t_bound


class Segment:
    """A committed stretch ``[t0, t1]`` of the solution with an interpolant on it;
    ``coupler_forces`` at ``t1`` where the compiled step loop had them at hand."""

    __slots__ = ("t0", "y0", "f0", "t1", "y1", "f1", "_dense", "coupler_forces", "_fill")

    def __init__(self, t0: float, y0: np.ndarray, f0: np.ndarray, t1: float, y1: np.ndarray,
                 f1: np.ndarray, dense: Callable[[float], np.ndarray] | None,
                 coupler_forces: np.ndarray | None = None,
                 fill: Callable[[np.ndarray, np.ndarray], None] | None = None) -> None:
        self.t0, self.y0, self.f0, self.t1, self.y1, self.f1 = t0, y0, f0, t1, y1, f1
        self._dense = dense
        self.coupler_forces = coupler_forces
        self._fill = fill

    def __call__(self, t: float) -> np.ndarray:
        """The state at ``t`` in ``[t0, t1]``: the solver's own dense output where the
        segment is one whole step, else cubic Hermite between its ends; the entries not
        integrated (the rolling axles' spins and angles) read off the others."""
        if t >= self.t1:
            return self.y1
        if t <= self.t0:
            return self.y0
        if self._dense is not None:
            y = self._dense(t)
        else:
            h = self.t1 - self.t0
            s = (t - self.t0) / h
            y = ((1 + 2 * s) * (1 - s) ** 2 * self.y0 + s * (1 - s) ** 2 * h * self.f0
                 + s * s * (3 - 2 * s) * self.y1 + s * s * (s - 1) * h * self.f1)
        if self._fill is not None:
            self._fill(self.y0, y)
        return y

    def lead(self, t: float, sx: int, sv: int) -> tuple[float, float]:
        """The lead vehicle's position and speed at ``t`` (entries ``sx`` and ``sv`` of
        the state)."""
        y = self(t)
        return float(y[sx]), float(y[sv])


#: Iterations of the Illinois method at most (it stops when the bracket is
#: :data:`EVENT_RTOL` of the step).
ILLINOIS_ITERATIONS = 60


@njit(cache=True)
def illinois_point(a, b, ga, gb):  # pragma: no cover (compiled)
    """The Illinois method's next trial point in the bracket ``[a, b]`` (values ``ga``,
    ``gb``): the secant's root, or the midpoint where that falls outside."""
    c = b - gb * (b - a) / (gb - ga)
    if not a < c < b:
        c = 0.5 * (a + b)
    return c


@njit(cache=True)
def illinois_update(a, b, ga, gb, c, gc, sign0, side):  # pragma: no cover (compiled)
    """The bracket after the trial ``(c, gc)``: ``(a, b, ga, gb, side)``. The end kept
    twice running has its value halved (the Illinois modification of regula falsi).
    ``sign0``: the sign of ``g`` before the crossing (``ga > 0`` at the start)."""
    if (gc > 0) == sign0 and gc != 0:  # not crossed yet: the root is in (c, b]
        a, ga = c, gc
        if side == -1:
            gb *= 0.5
        side = -1
    else:
        b, gb = c, gc
        if side == 1:
            ga *= 0.5
        side = 1
    return a, b, ga, gb, side


@njit(cache=True)
def _any_crossing(g0, g1, both):  # pragma: no cover (compiled)
    """Whether any entry falls from > 0 to < 0 (or, with ``both``, rises from < 0 to > 0):
    the common answer after a step is no, and this says it without temporary arrays."""
    for i in range(g0.size):
        if (g0[i] > 0.0 and g1[i] < 0.0) or (both and g0[i] < 0.0 and g1[i] > 0.0):
            return True
    return False


def _crossed(block, g0, g1) -> np.ndarray:
    falling = (g0 > 0) & (g1 < 0)
    if block.direction == 0:
        return falling | ((g0 < 0) & (g1 > 0))
    return falling


class Integrator:
    """Drives a :class:`Solver` over the dynamics of a train, with event location.

    :param on_segment: called with every committed :class:`Segment`, in time order.
    :param on_steps: if given, called instead of ``on_segment`` with the steps the
        compiled step loop takes in one call, all together
        (:class:`~rrscore.steploop.Steps`): a consumer takes them as arrays. Without
        it, ``on_segment`` is called with each of them.
    :param on_samples: called with the samples the compiled loop recorded in a call
        (:class:`~rrscore.steploop.LoopSamples`), before the steps of that call are
        handed on.
    """

    def __init__(self, solver: Solver, dyn: TrainDynamics,
                 on_segment: Callable[[Segment], None] | None = None,
                 compiled: bool = True, on_steps: Callable[[Steps], None] | None = None,
                 on_samples: Callable[[LoopSamples], None] | None = None) -> None:
        self.solver = solver
        self.dyn = dyn
        self.on_segment = on_segment
        self.on_steps = on_steps
        self.on_samples = on_samples
        from .steploop import StepLoop  # it builds on this module's event rules

        #: The compiled step loop where the train and solver allow it (and ``compiled``).
        self.loop = StepLoop.build(solver, dyn) if compiled else None
        if self.loop is not None:  # the Python path's steps use the compiled pass too
            solver.fun = self.loop.rhs
        self.event_counts: dict[str, int] = {b.name: 0 for b in dyn.events}
        self._declined: tuple | None = None  # an action refused at a step's start
        #: Set, with :meth:`advance` returning its message, when the drive stops making
        #: progress in simulated time.
        self.stalled: str | None = None
        self._located: dict[tuple[int, int], int] = {}  # events found in the stall window
        self._passes = 0
        self._window = (0, 0.0)  # passes so far, and the time at the window's start
        self._last_t = -1.0
        #: Set by :meth:`restart` where the loop is to check the restart's conditions.
        self._fresh = False

    def _derivative(self) -> np.ndarray:
        s = self.solver
        if s.f is None:
            s.f = s._eval(s.t, s.y)
        return s.f

    def _values(self, t: float, y: np.ndarray, f: np.ndarray) -> list:
        return [b.values(t, y, f) for b in self.dyn.events]

    def restart(self, t: float, y: np.ndarray) -> None:
        """Restart from ``(t, y)`` after inputs changed; fire condition events that hold now.

        Where the compiled step loop takes the next step, it takes the derivative and
        checks the condition events (the slip margins) itself, compiled: a control step
        with new inputs then costs no Python evaluation of either. Should one hold, or the
        loop take no step, :meth:`advance` settles the restart here before anything
        steps."""
        if self.loop is not None and self.loop.applies():
            self.dyn.start_step(y)
            self.solver.reset(t, y)
            self._fresh = True
            return
        self._restart(t, y)

    def _restart(self, t: float, y: np.ndarray) -> None:
        """:meth:`restart` settled at once (after an event's action on the Python path,
        which takes the event values there next)."""
        self.dyn.start_step(y)
        self.solver.reset(t, y)
        self._settle()

    def _settle(self) -> None:
        """Take the derivative at the solver's (reset) state and act on the condition events
        that hold there, until none does."""
        s, dyn = self.solver, self.dyn
        self._fresh = False
        for _ in range(4):  # one mode change can enable another; a few rounds settle it
            f = self._derivative()
            fired = False
            for block in dyn.events:
                if not block.condition:
                    continue
                g = block.values(s.t, s.y, f)
                if g is None:
                    continue
                if not g.min() < 0.0:  # most restarts: no condition holds
                    continue
                idx = np.flatnonzero(g < 0)
                y = block.action(s.t, s.y, idx)
                if y is not s.y:  # the action may decline (returns y itself)
                    dyn.start_step(y)
                    s.reset(s.t, y)
                    self.event_counts[block.name] += idx.size
                    fired = True
            if not fired:
                return

    def _commit(self, t0: float, y0: np.ndarray, f0: np.ndarray, whole_step: bool) -> None:
        s = self.solver
        if self.on_segment is not None and s.t > t0:
            dense = s.dense if whole_step and s.t_old == t0 else None
            self.on_segment(Segment(t0, y0, f0, s.t, s.y, self._derivative(), dense,
                                    fill=self.dyn.wheelsets.fill))

    def advance(self, t_end: float) -> str | None:
        """Integrate to exactly ``t_end``. Returns None, or the solver's message if a step
        failed (the solver then stands at the last good point)."""
        s, dyn = self.solver, self.dyn
        g_old = None  # the event values at the step's start, taken when the Python path steps
        python_next = False  # the last step's events left values the loop cannot see
        resume = False  # the loop's last call filled its buffer
        from_loop = False  # the solver stands where the loop's steps left it
        # (at t_end itself the loop may still have a control step to take: a sample is due)
        while s.t < t_end or (self.loop is not None and self.loop.control_due(s.t)):
            if self.loop is not None and not python_next and self.loop.applies():
                message = self._watch(s.t)
                if message is not None:
                    return message
                loop = self.loop
                # after a full buffer the loop goes on with the slack edges' values as it
                # left them, as the Python path goes on with its own (else an edge just
                # reached would be found again)
                status, steps = loop.run(t_end, resume=resume, fresh=self._fresh)
                resume = status == loop.FULL
                if steps is not None:
                    self._fresh = False  # the loop took the restart on (else: below)
                if loop.edges:
                    self.event_counts["slack edge"] += loop.edges
                if loop.samples is not None and self.on_samples is not None:
                    self.on_samples(loop.samples)
                if steps is not None:
                    if self.on_steps is not None:
                        self.on_steps(steps)
                    elif self.on_segment is not None:
                        for seg in steps:
                            self.on_segment(seg)
                interruption = take_interruption()
                if interruption is not None:  # a signal whose exception the call lost: the
                    raise interruption  # drive ends here, not calls later (full buffers)
                if status == loop.DONE or status == loop.HANDED:
                    return None  # t_end, or a control time the run takes (rrscore.run)
                if steps is not None:
                    # the event values there are taken only if the Python path steps next
                    # (after a full buffer the loop goes on and needs none)
                    g_old, from_loop = None, True
                if status == loop.FULL:
                    continue
                f_restart = loop.take_restart()
                if f_restart is not None:
                    # the loop took a control step with new inputs, and no step followed:
                    # the restart settled here, as after the run's own control step (with
                    # the derivative the loop took there)
                    dyn.refresh()
                    dyn.start_step(s.y)
                    s.reset(s.t, s.y)
                    s.f = f_restart
                    self._fresh = True
                # an event in the next step, or a failure: the Python path takes that step
            if self.loop is not None:
                # the Python path takes no control step: it stops at the next control time
                # the loop did not take (where the run takes it)
                t_end = self.loop.stop_ahead(t_end)
                if s.t >= t_end:
                    return None
            python_next = resume = False
            if self._fresh:
                self._settle()
            if g_old is None:
                g_old = self._values(s.t, s.y, self._derivative())
                if from_loop:
                    # the loop locates the events that only end a step (kinks: the slack
                    # edges) itself; where it left them, edges just reached are beyond
                    # their surface
                    for b, blk in enumerate(dyn.events):
                        if blk.action is None and g_old[b] is not None:
                            g_old[b] = self.loop.kinks_out()
            from_loop = False
            t0, y0, f0 = s.t, s.y, s.f
            message = self._watch(t0)
            if message is not None:
                return message
            ok, message = self._step(self._kink_bound(t0, y0, self._derivative(), g_old, t_end))
            if not ok:
                return message or f"solver {s.name} failed at t = {s.t:.6g} s"
            g_new = self._values(s.t, s.y, s.f)
            hits = [
                None if a is None or b is None
                or not _any_crossing(a, b, blk.direction == 0) else _crossed(blk, a, b)
                for blk, a, b in zip(dyn.events, g_old, g_new, strict=True)
            ]
            if not any(h is not None and h.any() for h in hits):
                self._commit(t0, y0, f0, True)
                dyn.commit(s.y)
                g_old = g_new
                continue

            t_star, (b, j) = self._locate(t0, g_old, g_new, hits)
            self._located[(b, j)] = self._located.get((b, j), 0) + 1
            whole = True
            near_start = t_star - t0 <= EVENT_RTOL * max(1.0, abs(t0))
            # only kinks crossed, all in the step's last part: the step stands
            near_end = s.t - t_star <= KINK_END * (s.t - t0) and all(
                h is None or not h.any() for blk, h in zip(dyn.events, hits, strict=True)
                if blk.action is not None)
            if near_start and dyn.events[b].action is not None \
                    and self._declined != (t0, b, j):
                # the crossing is at the step's start: act there, not a step late
                s.t, s.y, s.f = t0, y0, f0
            elif t_star < s.t and not near_start and not near_end:
                # end the step on the surface: take it again from its start, shorter
                s.t, s.y, s.f = t0, y0, f0
                message = self._step_to(t_star)
                if message is not None:
                    return message
                whole = s.t_old == t0
            self._commit(t0, y0, f0, whole)
            f_now = self._derivative()
            y = s.y
            acted = False
            landed: list[tuple[int, np.ndarray]] = []  # on a surface, not past it
            for bi, (blk, g0, hit) in enumerate(zip(dyn.events, g_old, hits, strict=True)):
                if hit is None or not hit.any():
                    continue
                idx = np.flatnonzero(hit)
                g_now = blk.values(s.t, y, f_now)
                if g_now is None:
                    continue
                g_now = g_now[idx]
                # crossed, or on the surface within rounding (the dense output may put
                # the step end a hair before it): several events at one instant (a
                # contact where a slack edge is) are all acted on now, none a step late
                crossed = _crossed(blk, g0[idx], g_now)
                on = crossed | (np.abs(g_now) <= ON_SURFACE * np.abs(g0[idx] - g_new[bi][idx]))
                if near_start and bi == b:
                    on |= idx == j  # located at the step's start: it is this instant's
                if (on & ~crossed).any():
                    landed.append((bi, idx[on & ~crossed]))
                idx = idx[on]
                if not idx.size:
                    continue
                if blk.action is None:
                    self.event_counts[blk.name] += idx.size
                    continue
                new = blk.action(s.t, y, idx)
                if new is not y:  # the action may decline (returns y itself)
                    self.event_counts[blk.name] += idx.size
                    y, acted = new, True
                elif near_start and bi == b:
                    self._declined = (t0, b, j)  # take the whole step next time
            if acted:
                self._restart(s.t, y)
            else:
                dyn.commit(s.y)
            g_old = self._values(s.t, s.y, self._derivative())
            python_next = bool(landed)  # the loop would see these values afresh
            for bl, idx in landed:
                # taken as crossed: put it on the far side so the next step does not
                # find the same crossing again
                g = g_old[bl]
                if g is not None:
                    g_old[bl] = g = g.copy()
                    g[idx] = np.sign(g_new[bl][idx]) * np.maximum(np.abs(g[idx]), 1e-300)
        if self._fresh:  # already at t_end: nothing stepped, the restart is settled here
            self._settle()
        return None

    def _kink_bound(self, t: float, y: np.ndarray, f: np.ndarray, g: list,
                    t_bound: float) -> float:
        """The next step's bound: :func:`kink_bound` where the slack edges are watched
        (``g``: the event values at the step's start) and the solver sizes its steps."""
        s, dyn = self.solver, self.dyn
        if not s.adaptive:
            return t_bound
        for blk, values in zip(dyn.events, g, strict=True):
            if blk.name == "slack edge" and blk.action is None and values is not None:
                cp = dyn.couplings
                return kink_bound(t, t_bound, s.h, s.max_step, y, f, values, 0,
                                  cp._kinks.shape[1], dyn.sx.start, dyn.sv.start,
                                  cp.nominal, cp._kinks)
        return t_bound

    def _watch(self, t: float) -> str | None:
        """Count passes of the loop; the stall message once the drive makes no progress."""
        if t > self._window[1] + MIN_PROGRESS:
            self._window, self._passes = (0, t), 0
            self._located.clear()
        n, t_start = self._window
        self._window = (n + 1, t_start)
        self._passes = self._passes + 1 if t == self._last_t else 0
        self._last_t = t
        if self._passes < MAX_PASSES_AT_ONE_INSTANT and n + 1 < STALL_WINDOW:
            return None
        if self._located:
            (b, j), count = max(self._located.items(), key=lambda kv: kv[1])
            what = (f"event {self.dyn.events[b].name!r} at {self.dyn.event_where(b, j)} "
                    f"located {count} times")
        else:
            what = "no event"
        how = (f"{self._passes} passes at one instant" if self._passes >= MAX_PASSES_AT_ONE_INSTANT
               else f"{n + 1} steps covered {t - t_start:.3g} s")
        self.stalled = (f"no progress in simulated time at t = {t:.6f} s: {how}, {what}")
        return self.stalled

    def _step(self, t_bound: float) -> tuple[bool, str | None]:
        """One solver step (the solver's status and message), the rolling axles' spins
        and angles then read off their bodies: they are not integrated."""
        s = self.solver
        y0 = s.y
        ok, message = s.step(t_bound)
        if ok:
            self.dyn.wheelsets.fill(y0, s.y)
        return ok, message

    def _step_to(self, t: float) -> str | None:
        s = self.solver
        while s.t < t:  # a step shorter than one just taken is almost always accepted at once
            ok, message = self._step(t)
            if not ok:
                return message
        return None

    def _locate(self, t0: float, g_old: list, g_new: list,
                hits: list) -> tuple[float, tuple[int, int]]:
        """Earliest crossing time in the last step, and its (block, component).

        The candidate with the earliest linear estimate is refined by the
        Illinois method on the dense output; if another component turns out to
        cross earlier, it becomes the candidate. Returns the upper end of the
        final bracket, so the crossing has happened there.
        """
        s, dyn = self.solver, self.dyn
        t1 = s.t

        def values(t: float, b: int) -> np.ndarray:
            w = (t - t0) / (t1 - t0)
            return dyn.events[b].values(t, s.dense(t), (1 - w) * s.f_old + w * s.f)

        def crossed_at(t: float) -> list:
            out = []
            for b, (g0, hit) in enumerate(zip(g_old, hits, strict=True)):
                if hit is None or not hit.any():
                    out.append(None)
                    continue
                idx = np.flatnonzero(hit)
                out.append(idx[_crossed(dyn.events[b], g0[idx], values(t, b)[idx])])
            return out

        best = (np.inf, -1, -1)
        for b, hit in enumerate(hits):
            if hit is None or not hit.any():
                continue
            idx = np.flatnonzero(hit)
            g0, g1 = g_old[b][idx], g_new[b][idx]
            est = t0 + (t1 - t0) * g0 / (g0 - g1)
            k = int(est.argmin())
            if est[k] < best[0]:
                best = (est[k], b, int(idx[k]))
        _, b, j = best
        lo, hi = t0, t1
        for _ in range(4):  # rarely more than one round
            lo, hi = self._illinois(lambda t, b=b, j=j: values(t, b)[j],
                                    lo, hi, g_old[b][j], values(hi, b)[j])
            earlier = crossed_at(lo) if lo > t0 else [None] * len(hits)
            nxt = next(((bb, c) for bb, c in enumerate(earlier) if c is not None and c.size),
                       None)
            if nxt is None:
                break
            b, j = nxt[0], int(nxt[1][0])
            lo, hi = t0, lo
        return hi, (b, j)

    @staticmethod
    def _illinois(g, a: float, b: float, ga: float, gb: float) -> tuple[float, float]:
        """Bracket ``[a, b]`` around the sign change of ``g`` (``ga`` before it, ``gb`` after)."""
        sign0 = ga > 0
        tol = EVENT_RTOL * max(b - a, 1e-300)
        side = 0
        for _ in range(ILLINOIS_ITERATIONS):
            if b - a <= tol or gb == ga:
                break
            c = illinois_point(a, b, ga, gb)
            a, b, ga, gb, side = illinois_update(a, b, ga, gb, c, g(c), sign0, side)
        return a, b
