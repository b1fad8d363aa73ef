"""Coupler models shipped with rrscore."""

from __future__ import annotations

from typing import Any

import numpy as np

from rrscore import CouplerModel, Param, hookimpl


class SpringDamper(CouplerModel):
    """Linear spring and damper behind a free slack.

    Within ``|d| <= slack/2`` the coupler carries nothing; beyond it, at
    engagement ``e = d -+ slack/2``, the force is ``stiffness * e + damping *
    d_dot * min(|e| / damping_ramp, 1)``. The damper takes hold over the first
    ``damping_ramp`` of travel, as a contact does, so the force is continuous when
    the slack closes (a damper that engaged at once would bounce the coupler
    in and out of contact). With ``slack = 0`` it is a plain spring-damper.
    """

    type_name = "spring_damper"
    description = "linear spring-damper with free slack"
    params = {
        "stiffness": Param("N/m", 2e7, "spring stiffness once the slack is taken up", min=0.0),
        "damping": Param("N*s/m", 2e5, "viscous damping once the slack is taken up", min=0.0),
        "slack": Param("m", 0.011, "total free slack (half each side of neutral)", min=0.0),
        "damping_ramp": Param("m", 0.001, "travel over which the damper takes hold", min=0.0,
                              exclusive_min=True),
    }

    def setup(self) -> None:
        self.half = self.p["slack"] / 2.0
        self.rigid = self.half == 0.0

    def force(self, d, d_dot):
        engaged = d - np.minimum(np.maximum(d, -self.half), self.half)
        ramp = np.minimum(np.abs(engaged) / self.p["damping_ramp"], 1.0)
        contact = np.where(self.rigid, 1.0, ramp)
        return self.p["stiffness"] * engaged + self.p["damping"] * d_dot * contact

    def free_range(self):
        return -self.half, self.half.copy()

    def kinks(self):
        k = np.stack([-self.half, self.half], axis=1)
        return np.where(self.half[:, None] > 0, k, np.nan)


def _friction_velocity() -> Param:
    return Param(
        "m/s", 0.05,
        "regularisation of the stick/slip of the friction wedges: below this rate of "
        "engagement the gear acts as a stiff damper between its loading and unloading "
        "curves, which keeps the force continuous for the explicit solvers; loop areas "
        "are reproduced when the gear is worked at speeds well above it",
        min=0.0, exclusive_min=True,
    )


class HystereticDraftGear(CouplerModel):
    """Base of friction draft gears: a free slack, then a loading and an unloading curve.

    Within ``|d| <= slack/2`` the coupling carries nothing. Beyond it the
    engagement ``e = |d| - slack/2`` loads the gear, in tension or compression
    alike (the force is odd in ``d``). Friction wedges make the force on the way
    in, ``loading(e)``, larger than on the way out, ``unloading(e)``; subclasses
    give the two magnitude curves (``unloading <= loading``). The force blends
    them by the rate of engagement ``ė = sign(d) * d_dot``::

        F = U + (L - U) * (1 + tanh(ė / friction_velocity)) / 2

    so a gear worked much faster than ``friction_velocity`` runs round the loop
    L out, U back, and a gear at rest sits at the mean of the two curves. The
    true stick/slip of the wedges is a set-valued force at ``ė = 0``; the tanh
    replaces it with a steep but finite damper so the right-hand side stays
    continuous. Curves should start from 0 at ``e = 0`` for the same reason
    (the SA-3 gear ramps its preload in over a few micrometres).

    Parameters common to all subclasses: ``slack`` (m, total free play, half on
    each side of neutral) and ``friction_velocity`` (m/s).
    """

    def setup(self) -> None:
        self.half = self.p["slack"] / 2.0
        self.v0 = self.p["friction_velocity"]

    def loading(self, e: np.ndarray) -> np.ndarray:
        """Force magnitude while the engagement ``e >= 0`` (one per coupling) grows, N."""
        raise NotImplementedError

    def unloading(self, e: np.ndarray) -> np.ndarray:
        """Force magnitude while the engagement ``e >= 0`` (one per coupling) shrinks, N."""
        raise NotImplementedError

    def breakpoints(self) -> np.ndarray:
        """Engagements > 0 where either curve changes slope, shape ``(count, k)``, NaN-padded."""
        return np.zeros((self.count, 0))

    def force(self, d: np.ndarray, d_dot: np.ndarray) -> np.ndarray:
        magnitude = np.abs(d)
        side = np.sign(d)
        e = np.maximum(magnitude - self.half, 0.0)
        lo = self.loading(e)
        un = self.unloading(e)
        blend = 0.5 * (1.0 + np.tanh(side * d_dot / self.v0))
        return np.where(magnitude > self.half, side * (un + (lo - un) * blend), 0.0)

    def free_range(self) -> tuple[np.ndarray, np.ndarray]:
        return -self.half, self.half.copy()

    def kinks(self) -> np.ndarray:
        """Slack edges ``±slack/2`` and ``±(slack/2 + b)`` for every curve breakpoint ``b``.

        For the SA-3 gear the breakpoint is the end of the stroke. Without slack
        both edges are ``d = 0``, listed once; absent breakpoints are NaN.
        """
        half = self.half[:, None]
        bp = self.breakpoints()
        lower_edge = np.where(half > 0.0, -half, np.nan)
        return np.concatenate([lower_edge, half, half + bp, -(half + bp)], axis=1)

    def energy_loop(self, e_max: float | np.ndarray) -> np.ndarray:
        """Energy absorbed by one load/unload cycle from ``e = 0`` to ``e_max``, J per coupling.

        The area between the loading and unloading curves over ``[0, e_max]``.
        Both curves are piecewise linear, so the trapezoid rule on their
        breakpoints (plus the ends) is exact.
        """
        top = np.broadcast_to(np.asarray(e_max, dtype=float), (self.count,))[:, None]
        if (top < 0.0).any():
            raise ValueError("energy_loop: e_max must be >= 0")
        bp = self.breakpoints()
        inner = np.where(np.isfinite(bp), np.minimum(bp, top), top)
        grid = np.sort(np.concatenate([np.zeros_like(top), inner, top], axis=1), axis=1)
        # a few columns (the breakpoints), each one vectorised call over the couplings
        gap = np.stack([self.loading(grid[:, i]) - self.unloading(grid[:, i])
                        for i in range(grid.shape[1])], axis=1)
        return (0.5 * (gap[:, 1:] + gap[:, :-1]) * np.diff(grid, axis=1)).sum(axis=1)


class SA3DraftGear(HystereticDraftGear):
    """Russian SA-3 automatic coupler with a friction draft gear (such as Sh-1-TM).

    After the free ``slack`` the gear, held by its ``preload``, compresses over
    its ``stroke`` with ``stiffness``; friction makes the unloading force a
    fixed fraction ``unloading_ratio`` of the loading force::

        loading(e)   = preload + stiffness * e                  (e <= stroke)
        unloading(e) = unloading_ratio * (preload + stiffness * e)

    The preload takes hold over the first ``preload / solid_stiffness`` of
    travel (25 micrometres by default) instead of at once: the coupler faces
    meet elastically, and a force that jumped on contact would make the
    integrator chatter at every slack closing.

    Beyond the stroke the gear is closed solid and the extra travel is elastic
    (coupler body, yoke, stops) with ``solid_stiffness``, the same slope both
    ways: both curves continue from their end-of-stroke values,
    ``+ solid_stiffness * (e - stroke)``. So loading - unloading stays at the
    end-of-stroke friction band ``(1 - unloading_ratio) * (preload + stiffness
    * stroke)`` there, unloading never exceeds loading, and the force stays
    continuous at the end of the stroke. (A history-free law cannot drop the
    band only on return to the stroke end, so cycles past the stroke absorb that
    band times the overtravel.)

    Parameters: ``slack`` (m, 0.011), ``preload`` (N, 5e3), ``stiffness`` (N/m,
    2e7), ``stroke`` (m, 0.09), ``solid_stiffness`` (N/m, 2e8),
    ``unloading_ratio`` (0.35), ``friction_velocity`` (m/s, 0.02).
    """

    type_name = "sa3"
    description = "SA-3 coupler, friction draft gear with slack, preload and solid stop"
    params = {
        "slack": Param("m", 0.011, "whole free play of the coupling (half each side of neutral)",
                       min=0.0),
        "preload": Param("N", 5e3, "initial compression force of the gear springs", min=0.0),
        "stiffness": Param("N/m", 2e7, "gear stiffness while in stroke (loading curve)",
                           min=0.0),
        "stroke": Param("m", 0.09, "gear travel before it closes solid", min=0.0,
                        exclusive_min=True),
        "solid_stiffness": Param("N/m", 2e8, "stiffness beyond the stroke, both ways", min=0.0),
        "unloading_ratio": Param(default=0.35, doc="unloading force / loading force within "
                                 "the stroke", min=0.0, max=1.0),
        "friction_velocity": _friction_velocity(),
    }

    def _in_stroke(self, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Gear force at min(e, stroke) on the loading curve, and the overtravel."""
        within = np.minimum(e, self.p["stroke"])
        preload = np.minimum(self.p["preload"], self.p["solid_stiffness"] * e)
        return preload + self.p["stiffness"] * within, e - within

    def loading(self, e: np.ndarray) -> np.ndarray:
        gear, over = self._in_stroke(e)
        return gear + self.p["solid_stiffness"] * over

    def unloading(self, e: np.ndarray) -> np.ndarray:
        gear, over = self._in_stroke(e)
        return self.p["unloading_ratio"] * gear + self.p["solid_stiffness"] * over

    def kinks(self) -> np.ndarray:
        # Slack edges and stroke ends. The preload ramp's end, 25 micrometres past the
        # edge, is left to the error control: locating it would double the events.
        h, s = self.p["slack"] / 2.0, self.p["stroke"]
        return np.stack([-h - s, -h, h, h + s], axis=1)

    def breakpoints(self) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            ramp = np.where(self.p["solid_stiffness"] > 0,
                            self.p["preload"] / self.p["solid_stiffness"], np.nan)
        return np.stack([ramp, self.p["stroke"].astype(float)], axis=1)


_TABLE_KEYS = ("deflection", "loading", "unloading")


def _interp(x: np.ndarray, xp: np.ndarray, fp: np.ndarray, slope: float) -> np.ndarray:
    """Piecewise-linear curve through (xp, fp), extended past xp[-1] with ``slope``."""
    return np.interp(x, xp, fp) + np.maximum(x - xp[-1], 0.0) * slope


class TableDraftGear(HystereticDraftGear):
    """Draft gear given by loading and unloading tables, as in US practice.

    Both curves are piecewise linear through ``(0, 0)`` and the points
    ``(deflection[i], loading[i])`` or ``(deflection[i], unloading[i])`` of
    the gear engagement, and continue past the last point with their last
    segment's slope. For example ``deflection = ["0.75 in", "3 in", "4 in"]``,
    ``loading = ["200 kips", "325 kips", "400 kips"]``.

    Parameters: ``slack`` (m, 0), ``deflection`` (list of m, strictly
    increasing from above 0; required), ``loading`` and ``unloading`` (lists of
    N, one per deflection, unloading <= loading; required),
    ``friction_velocity`` (m/s, 0.02). Couplings may have different tables;
    evaluation is one ``np.interp`` per distinct table, so the usual train-wide
    table costs one call over all couplings.
    """

    type_name = "table"
    description = "draft gear from loading/unloading tables (US style) with slack"
    params = {
        "slack": Param("m", 0.0, "whole free play of the coupling (half each side of neutral)",
                       min=0.0),
        "deflection": Param("m", kind=list, doc="gear deflections of the table points, "
                            "increasing", min=0.0, exclusive_min=True),
        "loading": Param("N", kind=list, doc="force at each deflection while loading",
                         min=0.0),
        "unloading": Param("N", kind=list, doc="force at each deflection while unloading "
                           "(<= loading)", min=0.0),
        "friction_velocity": _friction_velocity(),
    }

    def __init__(self, params: list[dict[str, Any]]) -> None:
        # The base stacks each parameter into one numeric array; tables may differ
        # in length between couplings, so they are kept as one entry per coupling.
        self.count = len(params)
        self.p = {}
        for key in self.params:
            if key in _TABLE_KEYS:
                column = np.empty(self.count, dtype=object)
                for i, row in enumerate(params):
                    column[i] = tuple(float(v) for v in row[key])
                self.p[key] = column
            else:
                self.p[key] = np.array([row[key] for row in params], dtype=float)
        self.setup()

    def setup(self) -> None:
        super().setup()
        distinct: dict[tuple, int] = {}
        which = np.empty(self.count, dtype=int)
        for i in range(self.count):
            key = tuple(self.p[k][i] for k in _TABLE_KEYS)
            if key not in distinct:
                _check_table(*(np.array(v) for v in key))
                distinct[key] = len(distinct)
            which[i] = distinct[key]
        # One curve set per distinct table: (xp, loading fp, unloading fp, end slopes).
        self._tables = []
        for x, lo, un in distinct:
            xp = np.concatenate([[0.0], x])
            lp = np.concatenate([[0.0], lo])
            up = np.concatenate([[0.0], un])
            dx = xp[-1] - xp[-2]
            self._tables.append((xp, lp, up, (lp[-1] - lp[-2]) / dx, (up[-1] - up[-2]) / dx))
        self._members = [np.flatnonzero(which == t) for t in range(len(self._tables))]
        width = max((len(t[0]) - 1 for t in self._tables), default=0)
        self._breaks = np.full((self.count, width), np.nan)
        for (xp, *_), idx in zip(self._tables, self._members, strict=True):
            self._breaks[idx, : len(xp) - 1] = xp[1:]

    def _curve(self, e: np.ndarray, unloading: bool) -> np.ndarray:
        col, slope = (2, 4) if unloading else (1, 3)
        if len(self._tables) == 1:  # the common train-wide table: one call for all
            t = self._tables[0]
            return _interp(e, t[0], t[col], t[slope])
        out = np.empty(np.shape(e))
        for t, idx in zip(self._tables, self._members, strict=True):
            out[idx] = _interp(e[idx], t[0], t[col], t[slope])
        return out

    def loading(self, e: np.ndarray) -> np.ndarray:
        return self._curve(e, unloading=False)

    def unloading(self, e: np.ndarray) -> np.ndarray:
        return self._curve(e, unloading=True)

    def breakpoints(self) -> np.ndarray:
        return self._breaks


def _check_table(x: np.ndarray, lo: np.ndarray, un: np.ndarray) -> None:
    """Raise ValueError, naming the parameter, if a draft-gear table is unusable."""
    where = "table draft gear parameter"
    if x.size == 0:
        raise ValueError(f"{where} 'deflection': the table is empty, give at least one point")
    for name, values in (("loading", lo), ("unloading", un)):
        if values.size != x.size:
            raise ValueError(f"{where} {name!r}: {values.size} forces for {x.size} deflections; "
                             "give one force per entry of 'deflection'")
        if (values < 0.0).any():
            raise ValueError(f"{where} {name!r}: forces must not be negative, found "
                             f"{values.tolist()}")
    if x[0] <= 0.0 or (np.diff(x) <= 0.0).any():
        raise ValueError(f"{where} 'deflection': must increase strictly from above 0, found "
                         f"{x.tolist()} m")
    above = np.flatnonzero(un > lo)
    if above.size:
        k = above[0]
        raise ValueError(f"{where} 'unloading': {un[k]:g} N exceeds 'loading' {lo[k]:g} N at "
                         f"deflection {x[k]:g} m; unloading must not exceed loading")
    # Past the table both curves run on with their last slopes; a steeper unloading
    # slope would take unloading above loading somewhere beyond the last point.
    x0 = x[-2] if x.size > 1 else 0.0
    lo0 = lo[-2] if x.size > 1 else 0.0
    un0 = un[-2] if x.size > 1 else 0.0
    if un[-1] - un0 > lo[-1] - lo0:
        raise ValueError(f"{where} 'unloading': its last segment ({x0:g} to {x[-1]:g} m) rises "
                         "more steeply than that of 'loading', so unloading would exceed loading "
                         "past the end of the table")


class Linear(CouplerModel):
    """Rigid-ish linear coupler for simple studies: ``F = stiffness * d + damping * d_dot``.

    No slack, no hysteresis, no kinks. Parameters: ``stiffness`` (N/m, 1e8),
    ``damping`` (N*s/m, 1e5).
    """

    type_name = "linear"
    description = "linear spring-damper without slack"
    params = {
        "stiffness": Param("N/m", 1e8, "spring stiffness", min=0.0),
        "damping": Param("N*s/m", 1e5, "viscous damping", min=0.0),
    }

    def force(self, d: np.ndarray, d_dot: np.ndarray) -> np.ndarray:
        return self.p["stiffness"] * d + self.p["damping"] * d_dot

    def kinks(self) -> np.ndarray:
        return np.zeros((self.count, 0))


@hookimpl
def rrs_coupler_models():
    """The shipped coupler models: spring_damper, sa3, table, linear."""
    return [SpringDamper, SA3DraftGear, TableDraftGear, Linear]
