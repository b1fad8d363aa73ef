"""Advancing a solver to a time bound while locating events.

After every step the event functions of the dynamics are compared at both
ends. If one changed sign, the earliest crossing is found by bisection on the
solver's dense output, the step is taken again to end exactly there, and the
event's action (a mode change, a velocity set to exactly zero) is applied
before integration restarts. Discontinuities therefore fall on step
boundaries instead of being smeared across a step.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .dynamics import TrainDynamics
from .solvers import Solver

#: Relative precision of event times (fraction of the step in which they fall).
EVENT_RTOL = 1e-7


def _values(dyn: TrainDynamics, t: float, y: np.ndarray, f: np.ndarray) -> list:
    return [b.values(t, y, f) for b in dyn.events]


def _crossed(block, g0, g1) -> np.ndarray:
    falling = (g0 > 0) & (g1 < 0)
    if block.direction == 0:
        return falling | ((g0 < 0) & (g1 > 0))
    return falling


class Integrator:
    """Drives a :class:`Solver` over the dynamics of a train, with event location.

    :param on_step: called after every accepted step with ``(t, y)``.
    """

    def __init__(self, solver: Solver, dyn: TrainDynamics,
                 on_step: Callable[[float, np.ndarray], None] | None = None) -> None:
        self.solver = solver
        self.dyn = dyn
        self.on_step = on_step
        self.event_counts: dict[str, int] = {b.name: 0 for b in dyn.events}
        solver.crossing = dyn.crosses_jump

    def _derivative(self) -> np.ndarray:
        s = self.solver
        if s.f is None:
            s.f = s._eval(s.t, s.y)
        return s.f

    def restart(self, t: float, y: np.ndarray) -> None:
        """Restart from ``(t, y)`` after inputs changed; fire condition events that hold now."""
        s, dyn = self.solver, self.dyn
        s.reset(t, y)
        for _ in range(4):  # one mode change can enable another; a few rounds settle it
            f = self._derivative()
            fired = False
            for block in dyn.events:
                if not block.condition:
                    continue
                g = block.values(s.t, s.y, f)
                if g is None:
                    continue
                idx = np.flatnonzero(g < 0)
                if idx.size:
                    y = block.action(s.t, s.y, idx)
                    if y is not s.y:  # the action may decline (returns y itself)
                        s.reset(s.t, y)
                        self.event_counts[block.name] += idx.size
                        fired = True
            if not fired:
                return

    def advance(self, t_end: float) -> None:
        """Integrate to exactly ``t_end``."""
        s, dyn = self.solver, self.dyn
        g_old = _values(dyn, s.t, s.y, self._derivative())
        located: tuple[int, int] | None = None  # a kink landed on but not yet crossed
        while s.t < t_end:
            t0, y0, f0 = s.t, s.y, s.f
            forced = False
            s.step(t_end)
            g_new = _values(dyn, s.t, s.y, s.f)
            hits = [
                None if a is None or b is None else _crossed(blk, a, b)
                for blk, a, b in zip(dyn.events, g_old, g_new, strict=True)
            ]
            if located is not None and hits[located[0]] is not None:
                # The dense output put it a hair early; this step takes it in stride.
                hits[located[0]][located[1]] = False
            located = None
            if not any(h is not None and h.any() for h in hits):
                g_old = g_new
                if self.on_step:
                    self.on_step(s.t, s.y)
                continue

            t_star, (b, j) = self._locate(t0, g_old, g_new, hits)
            if not dyn.events[b].smooth:
                forced = self._refine(t0, y0, f0, g_old[b][j], b, j, t_star, t_end)
            elif t_star < s.t and t_star - t0 > EVENT_RTOL * max(1.0, abs(t0)):
                # a kink: the dense output locates it well; a crossing this close
                # to the step start is taken as the step's own
                s.t, s.y, s.f = t0, y0, f0
                self._step_to(t_star)
                blk = dyn.events[b]
                g = blk.values(s.t, s.y, s.f)
                if g is not None and not _crossed(blk, g_old[b][j:j + 1], g[j:j + 1])[0]:
                    if blk.action is None:
                        located = (b, j)  # a bare kink: let the next step take it
                    else:
                        forced = True  # on the surface within tolerance: act now
            f_now = self._derivative()
            if self.on_step:
                self.on_step(s.t, s.y)
            y = s.y
            acted = False
            for blk, g0, hit in zip(dyn.events, g_old, hits, strict=True):
                if hit is None or not hit.any():
                    continue
                idx = np.flatnonzero(hit)
                crossed = _crossed(blk, g0[idx], blk.values(s.t, y, f_now)[idx])
                if forced and blk is dyn.events[b]:
                    crossed |= idx == j  # on the surface itself, by construction
                idx = idx[crossed]
                if idx.size:
                    if blk.action is None:
                        self.event_counts[blk.name] += idx.size
                        continue
                    new = blk.action(s.t, y, idx)
                    if new is not y:  # the action may decline (returns y itself)
                        self.event_counts[blk.name] += idx.size
                        y, acted = new, True
            if acted:
                self.restart(s.t, y)
            g_old = _values(dyn, s.t, s.y, self._derivative())

    def _step_to(self, t: float) -> None:
        s = self.solver
        while s.t < t:  # a step shorter than one just taken is almost always accepted at once
            s.step(t)

    def _refine(self, t0: float, y0: np.ndarray, f0: np.ndarray, g0: float, b: int, j: int,
                t_est: float, t_end: float) -> bool:
        """Move the solver onto the zero of component ``j`` of event block ``b``.

        Where the right-hand side jumps at the surface, the dense output of a
        step across it is biased, and so is any step whose stages touch it. So
        the root is approached from the side before it only: each step aims just
        short of the root extrapolated from the last two points before it, and
        the final gap, below the tolerance, is a first-order Taylor step.
        Returns False if the component turns away (no crossing after all).
        """
        s, blk = self.solver, self.dyn.events[b]
        h = s.t - t0
        tol = max(EVENT_RTOL * h, 1e-14 * max(1.0, abs(t0)))
        befores = [(t0, y0, f0, g0)]
        t_after = s.t  # known to be past the crossing
        t_root = min(t_est, t_after)
        for _ in range(12):
            tb, yb, fb, gb = befores[-1]
            if t_root - tb <= tol:
                break
            s.t, s.y, s.f = tb, yb, fb
            self._step_to(tb + 0.999 * (t_root - tb))
            g = float(blk.values(s.t, s.y, s.f)[j])
            if (g < 0) if g0 > 0 else (g > 0):
                t_after = s.t
                t_root = 0.5 * (tb + t_after)
                continue
            befores.append((s.t, s.y, s.f, g))
            (ta, _, _, ga), (tb, _, _, gb) = befores[-2], befores[-1]
            slope = (gb - ga) / (tb - ta)
            if slope == 0.0 or (gb > 0) == (slope > 0):
                return False  # turning away: leave it to the next step
            t_root = min(tb - gb / slope, t_after)
        tb, yb, fb, _ = befores[-1]
        s.t, s.y, s.f = t_root, yb + (t_root - tb) * fb, None
        return True

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
        for _ in range(60):
            if b - a <= tol or gb == ga:
                break
            c = b - gb * (b - a) / (gb - ga)
            if not a < c < b:
                c = 0.5 * (a + b)
            gc = g(c)
            if (gc > 0) == sign0 and gc != 0:  # not crossed yet: root in (c, b]
                a, ga = c, gc
                if side == -1:
                    gb *= 0.5
                side = -1
            else:
                b, gb = c, gc
                if side == 1:
                    ga *= 0.5
                side = 1
        return a, b
