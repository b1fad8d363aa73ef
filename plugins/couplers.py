"""Coupler models shipped with rrscore."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
from numba import njit

from rrscore import CouplerModel, Param, hookimpl
from rrscore.state import StateSpec


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
        """Half slack on each side of neutral."""
        self.half = self.p.slack / 2.0
        # one row per parameter, for the compiled force
        self._table = np.ascontiguousarray(np.broadcast_arrays(
            self.half, self.p.stiffness, self.p.damping, self.p.damping_ramp)).astype(float)

    def kernel_params(self) -> np.ndarray:
        """Rows: half slack, stiffness, damping, damping ramp."""
        return self._table

    def force(self, d: np.ndarray, d_dot: np.ndarray, s: SimpleNamespace) -> np.ndarray:
        """Spring on the engagement plus the damper, ramped in over ``damping_ramp``."""
        if np.shape(d) == np.shape(d_dot) == self.half.shape:  # one value per coupling
            return _spring_damper_force(np.ascontiguousarray(d, dtype=float),
                                        np.ascontiguousarray(d_dot, dtype=float), self._table,
                                        np.empty(self.half.size))
        # other shapes (a coupling called alone) broadcast against the parameters
        engaged = d - np.minimum(np.maximum(d, -self.half), self.half)
        ramp = np.minimum(np.abs(engaged) / self.p.damping_ramp, 1.0)
        contact = np.where(self.half == 0.0, 1.0, ramp)
        return self.p.stiffness * engaged + self.p.damping * d_dot * contact

    def free_range(self) -> tuple[np.ndarray, np.ndarray]:
        """``(-slack/2, slack/2)``."""
        return -self.half, self.half.copy()

    def kinks(self) -> np.ndarray:
        """The two slack edges; none (NaN) without slack."""
        k = np.stack([-self.half, self.half], axis=1)
        return np.where(self.half[:, None] > 0, k, np.nan)


@njit(cache=True)
def _spring_damper_force(d, d_dot, table, out):  # pragma: no cover (compiled)
    """:meth:`SpringDamper.force` as one loop, into ``out`` (returned): a dozen numpy
    calls on arrays of a hundred couplings cost more than the arithmetic, at every stage
    of every step. ``table`` rows: half slack, stiffness, damping, damping ramp."""
    for i in range(d.size):
        half = table[0, i]
        engaged = d[i] - min(max(d[i], -half), half)
        contact = 1.0 if half == 0.0 else min(abs(engaged) / table[3, i], 1.0)
        out[i] = table[1, i] * engaged + table[2, i] * d_dot[i] * contact
    return out


def _spring_damper_kernel(d, d_dot, z, params, force, dz):  # pragma: no cover (compiled)
    """:attr:`SpringDamper.force_kernel`: no states."""
    _spring_damper_force(d, d_dot, params, force)


SpringDamper.force_kernel = staticmethod(_spring_damper_kernel)


def _stick_stiffness() -> Param:
    return Param(
        "N/m", 2e8,
        "stiffness of the gear while its friction wedges stick (the spring of the Jenkins "
        "element). A sticking gear is nearly solid: its force then changes through the "
        "elastic coupler body, yoke and wedges, so the default is of the order of the SA-3 "
        "solid stiffness. It sets the stick transition after each reversal, (loading - "
        "unloading) / stick_stiffness of travel (6 mm at the end of the SA-3 stroke), and "
        "the fastest mode of a coupling: two 92.5 t cars on 2e8 N/m ring at 66 rad/s "
        "(a 100-car chain at up to 98 rad/s), damped by stick_damping",
        min=0.0, exclusive_min=True,
    )


def _stick_damping() -> Param:
    return Param(
        "N*s/m", 3e6,
        "damping of the gear while its friction wedges stick, in parallel with the stick "
        "spring: the structural damping of the coupler body, yoke and gear parts. A stuck "
        "gear is otherwise lossless, and a train in steady draft rings at its stick "
        "frequencies (up to about 15 Hz) for as long as it runs. Being in parallel with a "
        "spring, it damps a mode of frequency w by w * stick_damping / (2 stick_stiffness) "
        "of critical: the default damps the 15 Hz ringing of a long train by 0.7 of "
        "critical and a 1 Hz surge by 4.7 %. The force it adds never leaves the band "
        "between the curves",
        min=0.0,
    )


# A gear that slides along a curve keeps its state on the curve only to rounding; the
# relative margin keeps it sliding rather than flickering into the steeper stick rate.
_SLIDE_RTOL = 1e-9

GEAR_FORCE = StateSpec(
    "N",
    "force of the friction element of the draft gear (signed, tension +), the gear's memory; "
    "the coupler force clips it to the band between the unloading and loading curves",
    # Matched to the default position tolerance (1e-5 m): the force error of a 20 MN/m
    # gear deflected 1e-5 m too far. 10 N (matched to the velocity tolerance instead)
    # tripled the rejected steps of long SA-3 trains for no gain in the loop areas; 1 kN
    # let errors reach 15 % of the peak force in a two-car impact.
    atol=200.0,
    initial=0.0,
)


class HystereticDraftGear(CouplerModel):
    """Base of friction draft gears: a free slack, then a friction element with memory.

    Outside the free range ``(lo, hi)`` (``free_range``) the gear is engaged,
    on side ``σ = +1`` (tension, ``d > hi``, engagement ``e = d - hi``) or
    ``σ = -1`` (compression, ``d < lo``, ``e = lo - d``). The friction
    element works on the engagement capped at the end of the stroke,
    ``g = min(e, cap)``; beyond it the gear is solid and the overtravel is
    elastic, with ``over_stiffness`` (both set by subclasses; ``cap = inf``
    and none for a gear without a stroke). Subclasses give the loading and
    unloading magnitude curves ``L(g) >= U(g) >= 0``, with ``L(0) = U(0) = 0``.

    The per-coupling state ``gear_force`` ``z`` (N, signed) is the force of a
    Jenkins element, a stiff spring in series with a slider, whose slip force
    is ``L`` on the way in and ``U`` on the way out. The coupler force is::

        F = σ * (clip(σ z, U(g), L(g)) + over_stiffness * (e - g))

    so it lies in the band exactly, is continuous in ``d`` and ``z`` and is
    nothing inside the slack (the band closes to 0 at the slack edges). A damper
    ``stick_damping`` ``c`` in parallel with the stick spring adds ``c ġ`` to the
    element's force before the clip (the formula above with ``σ z + c ġ`` in
    place of ``σ z``): it acts while the gear sticks (sliding, the clip holds the
    force on the curve), damps the stuck gear's ringing and steepens the fall
    from ``L`` to ``U`` after a turn. With ``ġ = σ ḋ`` while engaged within the stroke (0 in
    the slack and while solid)::

        ż = σ k ġ,   k = L'(g)   if ġ > 0 and σ z >= L(g)   (slides out along L)
                     k = U'(g)   if ġ < 0 and σ z <= U(g)   (slides back along U)
                     k = max(stick_stiffness, L'(g), U'(g))  otherwise (sticks)

    with the slopes taken on the side the gear moves to. The stick stiffness is
    raised to the steeper curve's slope where that is larger (only the SA-3
    preload ramp, 2.2e8 N/m over its first 25 micrometres, at the defaults) so
    a sticking gear cannot fall out of the band. Every branch is finite, so the
    right-hand side is piecewise smooth, with no rate scale such as a friction
    velocity: its stiffest term is ``k``. At rest (``ḋ = 0``) the state, and
    so the force, stays where it was.

    A gear loaded from its slack edge follows ``L``; at a reversal it sticks
    and its force falls at slope ``k`` until it meets ``U``, after
    ``(L - U) / (k - U')`` of travel, then follows ``U`` back to the slack edge.
    Tension and compression are symmetric: the force is odd in the signed
    engagement.
    """

    states = {"gear_force": GEAR_FORCE}

    cap: np.ndarray
    over_stiffness: np.ndarray

    def setup(self) -> None:
        """The stick stiffness; subclasses set the free range, ``cap`` and ``over_stiffness``."""
        self.k_stick = self.p.stick_stiffness.astype(float)
        self.c_stick = self.p.stick_damping.astype(float)

    # -- curves, given by subclasses ---------------------------------------------------------
    def loading(self, g: np.ndarray) -> np.ndarray:
        """Force magnitude of the friction element while its engagement ``g`` grows, N."""
        raise NotImplementedError

    def unloading(self, g: np.ndarray) -> np.ndarray:
        """Force magnitude of the friction element while its engagement ``g`` shrinks, N."""
        raise NotImplementedError

    def slopes(self, g: np.ndarray, outward: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Slopes ``(L', U')`` at engagements ``g``, on the side of larger ``g`` where
        ``outward`` is true and of smaller ``g`` elsewhere, N/m."""
        raise NotImplementedError

    def breakpoints(self) -> np.ndarray:
        """Engagements > 0 where either curve changes slope, shape ``(count, k)``, NaN-padded."""
        return np.zeros((self.count, 0))

    def kink_engagements(self) -> np.ndarray:
        """Engagements whose deflections ``kinks`` lists, shape ``(count, k)``, NaN-padded."""
        return self.breakpoints()

    # -- the friction element ----------------------------------------------------------------
    def _side(self, d: np.ndarray, d_dot: np.ndarray | None = None
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Side ``σ`` (+1, -1 or 0 in the slack), engagement ``e`` and ``g = min(e, cap)``.

        With ``d_dot``, a coupling exactly at a slack edge takes the side it moves
        into: the integrator stops steps there, and the rate must see the gear it
        is about to load.
        """
        lo, hi = self._edges()
        above = d - hi
        below = lo - d
        # Both are positive nowhere: at most one side is engaged.
        side = (above > 0.0).astype(float) - (below > 0.0)
        if d_dot is not None:
            side += (((above == 0.0) & (d_dot > 0.0)).astype(float)
                     - ((below == 0.0) & (d_dot < 0.0)))
        e = np.maximum(np.maximum(above, below), 0.0)
        return side, e, np.minimum(e, self.cap)

    def _edges(self) -> tuple[np.ndarray, np.ndarray]:
        """``free_range()``, computed once: the parameters do not change."""
        edges = self.__dict__.get("_edges_cache")
        if edges is None:
            edges = self._edges_cache = self.free_range()
        return edges

    def _band(self, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(U, L)`` at ``g``; ``U`` held to ``L`` where a table rounds it a hair above."""
        top = self.loading(g)
        return np.minimum(self.unloading(g), top), top

    def force(self, d: np.ndarray, d_dot: np.ndarray, s: SimpleNamespace) -> np.ndarray:
        """Coupler force (tension +): the friction element and its stick damper, clipped to
        the band, plus the elastic overtravel past the stroke."""
        side, e, g = self._side(d)
        under, top = self._band(g)
        g_dot = np.where(e < self.cap, side * d_dot, 0.0)
        gear = np.clip(side * s.gear_force + self.c_stick * g_dot, under, top)
        return side * (gear + self.over_stiffness * (e - g))

    def rates(self, d: np.ndarray, d_dot: np.ndarray, s: SimpleNamespace) -> dict[str, np.ndarray]:
        """``{"gear_force": ż}``: stick at ``k``, or slide along the curve reached."""
        side, e, g = self._side(d, d_dot)
        e_dot = side * d_dot
        # Solid past the stroke: the element is frozen until the gear comes back into it.
        g_dot = np.where((e < self.cap) | ((e <= self.cap) & (e_dot < 0.0)), e_dot, 0.0)
        outward = g_dot > 0.0
        slope_l, slope_u = self.slopes(g, outward)
        under, top = self._band(g)
        zm = side * s.gear_force
        k_stick = np.maximum(self.k_stick, np.maximum(slope_l, slope_u))
        k = np.where(outward & (zm >= top * (1.0 - _SLIDE_RTOL)), slope_l,
                     np.where(~outward & (zm <= under * (1.0 + _SLIDE_RTOL)), slope_u, k_stick))
        return {"gear_force": side * k * g_dot}

    def initial_state(self, d: np.ndarray) -> dict[str, np.ndarray]:
        """On the loading curve (a gear pressed into ``d`` from its slack edge); 0 in the
        slack and at the stroke-end value past the stroke."""
        side, _, g = self._side(np.asarray(d, dtype=float))
        return {"gear_force": side * self.loading(g)}

    def kinks(self) -> np.ndarray:
        """Slack edges ``lo``, ``hi`` and ``hi + b``, ``lo - b`` for every ``b`` of
        ``kink_engagements`` (for the SA-3 gear the stroke ends).

        Without slack both edges are ``d = 0``, listed once; absent entries are NaN.
        """
        lo, hi = self.free_range()
        lo, hi = lo[:, None], hi[:, None]
        b = self.kink_engagements()
        lower_edge = np.where(lo < hi, lo, np.nan)
        return np.concatenate([lower_edge, hi, hi + b, lo - b], axis=1)

    def energy_loop(self, e_max: float | np.ndarray, *, stick: bool = True) -> np.ndarray:
        """Work the gear absorbs in one cycle from its slack edge out to engagement
        ``e_max`` and back, J per coupling.

        ``stick=False``: the area between the loading and unloading curves over
        ``[0, min(e_max, cap)]``. Elastic overtravel past the stroke gives back
        what it took, so it adds nothing. ``stick=True`` (the default): what the
        quasi-static element (no ``stick_damping``) dissipates, the area less the
        corner that the stick transition cuts off at the turn (a stick damper
        gives part of the corner back, more the faster the turn): the force falls
        from ``L`` at slope ``k`` (see the class) and meets ``U`` after
        ``(L - U) / (k - U')``, which removes
        ``(L - U)**2 / (2 (k - U'))`` where the slopes stay constant over the
        transition (e.g. about 7 % of a full SA-3 stroke at the defaults).
        Both follow the piecewise-linear curves segment by segment, so they are
        exact, not quadratures.
        """
        top = np.broadcast_to(np.asarray(e_max, dtype=float), (self.count,))
        if (top < 0.0).any():
            raise ValueError("energy_loop: e_max must be >= 0")
        top = np.minimum(top, self.cap)[:, None]
        bp = self.breakpoints()
        inner = np.where(np.isfinite(bp), np.minimum(bp, top), top)
        grid = np.sort(np.concatenate([np.zeros_like(top), inner, top], axis=1), axis=1)
        # a few columns (the breakpoints), each one vectorised call over the couplings
        bands = [self._band(grid[:, i]) for i in range(grid.shape[1])]
        under = np.stack([u for u, _ in bands], axis=1)
        over = np.stack([t for _, t in bands], axis=1)
        width = np.diff(grid, axis=1)
        gap = over - under
        area = (0.5 * (gap[:, 1:] + gap[:, :-1]) * width).sum(axis=1)
        if not stick:
            return area
        # March back from the turn, one segment at a time, until the stick line meets U.
        cut = np.zeros(self.count)
        left = gap[:, -1].copy()  # the stick line's height above U
        done = left <= 0.0
        for i in range(grid.shape[1] - 2, -1, -1):
            w = width[:, i]
            live = ~done & (w > 0.0)
            safe = np.where(w > 0.0, w, 1.0)
            slope_l = (over[:, i + 1] - over[:, i]) / safe
            slope_u = (under[:, i + 1] - under[:, i]) / safe
            closing = np.maximum(self.k_stick, np.maximum(slope_l, slope_u)) - slope_u
            low = left - closing * w
            meets = live & (low <= 0.0)
            with np.errstate(divide="ignore", invalid="ignore"):  # closing 0: never meets
                cut += np.where(meets, left**2 / (2.0 * closing), 0.0)
            cut += np.where(live & ~meets, 0.5 * (left + low) * w, 0.0)
            left = np.where(live, low, left)
            done |= meets
        return area - cut


# -- the SA-3 gear compiled --------------------------------------------------------------------
# The friction element above, specialised to the SA-3 curves and written per coupling, so
# that numba compiles it (cached on disk): the numpy form costs about 60 array operations
# per right-hand side, most of a long train's evaluation. The numpy methods of
# HystereticDraftGear stay the reference: a test holds both to the same numbers.


# Rows of the parameter matrix the kernels take (one column per coupling): one argument
# instead of ten, as numba checks every argument's type at every call.
_LO, _HI, _CAP, _PRELOAD, _SOLID, _STIFF, _RATIO, _C_STICK, _K_STICK, _RAMP_END = range(10)


@njit(cache=True)
def _sa3_engagement(d, p, i):  # pragma: no cover (compiled)
    """Side, ``d - hi``, ``lo - d``, engagement, capped engagement and loading force of
    coupling ``i`` (parameters in column ``i`` of ``p``)."""
    above = d - p[_HI, i]
    below = p[_LO, i] - d
    side = (1.0 if above > 0.0 else 0.0) - (1.0 if below > 0.0 else 0.0)
    e = max(max(above, below), 0.0)
    cap = p[_CAP, i]
    g = min(e, cap)
    gs = min(g, cap)
    top = min(p[_PRELOAD, i], p[_SOLID, i] * gs) + p[_STIFF, i] * gs
    return side, above, below, e, g, top


@njit(cache=True)
def _sa3_force(d, d_dot, z, p, out):  # pragma: no cover (compiled)
    """The SA-3 coupler force into ``out`` (returned)."""
    for i in range(d.size):
        side, _, _, e, g, top = _sa3_engagement(d[i], p, i)
        under = p[_RATIO, i] * top
        g_dot = side * d_dot[i] if e < p[_CAP, i] else 0.0
        gear = min(max(side * z[i] + p[_C_STICK, i] * g_dot, under), top)
        out[i] = side * (gear + p[_SOLID, i] * (e - g))
    return out


@njit(cache=True)
def _sa3_rates(d, d_dot, z, p, out):  # pragma: no cover (compiled)
    """The rate of the SA-3 gear force (its state) into ``out`` (returned)."""
    for i in range(d.size):
        side, above, below, e, g, top = _sa3_engagement(d[i], p, i)
        # at a slack edge the rate sees the side the coupling moves into
        if above == 0.0 and d_dot[i] > 0.0:
            side += 1.0
        if below == 0.0 and d_dot[i] < 0.0:
            side -= 1.0
        e_dot = side * d_dot[i]
        cap = p[_CAP, i]
        g_dot = e_dot if (e < cap) or (e <= cap and e_dot < 0.0) else 0.0
        outward = g_dot > 0.0
        ramp_end = p[_RAMP_END, i]
        on_ramp = (g < ramp_end) or (g == ramp_end and not outward)
        slope_l = p[_STIFF, i] + (p[_SOLID, i] if on_ramp else 0.0)
        slope_u = p[_RATIO, i] * slope_l
        under = p[_RATIO, i] * top
        zm = side * z[i]
        if outward and zm >= top * (1.0 - _SLIDE_RTOL):
            k = slope_l
        elif not outward and zm <= under * (1.0 + _SLIDE_RTOL):
            k = slope_u
        else:
            k = max(p[_K_STICK, i], max(slope_l, slope_u))
        out[i] = side * k * g_dot
    return out


@njit(cache=True)
def _sa3_force_and_rates(d, d_dot, z, p):  # pragma: no cover (compiled)
    return (_sa3_force(d, d_dot, z, p, np.empty(d.size)),
            _sa3_rates(d, d_dot, z, p, np.empty(d.size)))


def _sa3_kernel(d, d_dot, z, params, force, dz):  # pragma: no cover (compiled)
    """:attr:`SA3DraftGear.force_kernel`: the gear force is the one state."""
    _sa3_force(d, d_dot, z[0], params, force)  # written in place: no copies per stage
    _sa3_rates(d, d_dot, z[0], params, dz[0])


class SA3DraftGear(HystereticDraftGear):
    """Russian SA-3 automatic coupler with a friction draft gear (such as Sh-1-TM).

    The free gap ``slack`` (11 mm) of the SA-3 coupler is on the compression
    side: the free range is ``(-slack, 0)``, so in tension the gear engages at
    once from ``d = 0`` (``e = d``) and in compression after the gap
    (``e = -slack - d``). Once engaged the gear, held by its ``preload``,
    compresses over its ``stroke`` with ``stiffness``; friction makes the
    unloading force a fixed fraction ``unloading_ratio`` of the loading
    force (magnitudes, ``g = min(e, stroke)``)::

        L(g) = min(preload, solid_stiffness * g) + stiffness * g
        U(g) = unloading_ratio * L(g)

    The preload takes hold over the first ``preload / solid_stiffness`` of
    travel (25 micrometres by default) instead of at once: the coupler faces
    meet elastically, and a force that jumped on contact would make the
    integrator chatter at every slack closing.

    The friction element with memory, its force and rates, are those of
    :class:`HystereticDraftGear`. Past the stroke the gear is solid: the
    friction element is frozen at the stroke end and the extra travel is
    elastic (coupler body, yoke, stops), without friction::

        F = σ * (clip(σ gear_force, U(g), L(g)) + solid_stiffness * (e - g))

    So a cycle past the stroke absorbs what one to the stroke end does, and
    nothing for the overtravel (``energy_loop`` caps ``e_max`` at the stroke).

    Parameters: ``slack`` (m, 0.011), ``preload`` (N, 5e3), ``stiffness``
    (N/m, 2e7), ``stroke`` (m, 0.09), ``solid_stiffness`` (N/m, 2e8),
    ``unloading_ratio`` (0.35), ``stick_stiffness`` (N/m, 2e8), ``stick_damping``
    (N*s/m, 3e6).
    """

    type_name = "sa3"
    description = "SA-3 coupler, friction draft gear with slack, preload and solid stop"
    params = {
        "slack": Param("m", 0.011, "free gap of the coupling, on the compression side",
                       min=0.0),
        "preload": Param("N", 5e3, "initial compression force of the gear springs", min=0.0),
        "stiffness": Param("N/m", 2e7, "gear stiffness while in stroke (loading curve)",
                           min=0.0),
        "stroke": Param("m", 0.09, "gear travel before it closes solid", min=0.0,
                        exclusive_min=True),
        "solid_stiffness": Param("N/m", 2e8, "elastic stiffness beyond the stroke, without "
                                 "friction; also takes up the preload", min=0.0),
        "unloading_ratio": Param(default=0.35, doc="unloading force / loading force within "
                                 "the stroke", min=0.0, max=1.0),
        "stick_stiffness": _stick_stiffness(),
        "stick_damping": _stick_damping(),
    }

    def setup(self) -> None:
        """Stroke cap, solid overtravel and the end of the preload ramp."""
        super().setup()
        self.cap = self.p.stroke.astype(float)
        self.over_stiffness = self.p.solid_stiffness.astype(float)
        with np.errstate(divide="ignore", invalid="ignore"):
            # NaN (no ramp) without solid stiffness: the preload is then never taken up.
            self.ramp_end = np.where(self.p.solid_stiffness > 0,
                                     self.p.preload / self.p.solid_stiffness, np.nan)

        lo, hi = self.free_range()
        self._matrix = np.ascontiguousarray(np.stack([
            lo, hi, self.cap, self.p.preload, self.p.solid_stiffness, self.p.stiffness,
            self.p.unloading_ratio, self.c_stick, self.k_stick, self.ramp_end]), dtype=float)

    def _kernel_input(self, d: np.ndarray, d_dot: np.ndarray, s: SimpleNamespace
                      ) -> tuple[np.ndarray, ...]:
        """The kernels' arguments; the parameters broadcast, as the numpy form does, when
        one model is called with another number of couplings."""
        d = np.ascontiguousarray(d, dtype=float)
        matrix = self._matrix
        if d.size != self.count:
            matrix = np.ascontiguousarray(np.broadcast_to(matrix, (matrix.shape[0], d.size)))
        return (d, np.ascontiguousarray(d_dot, dtype=float),
                np.ascontiguousarray(s.gear_force, dtype=float), matrix)

    def force(self, d: np.ndarray, d_dot: np.ndarray, s: SimpleNamespace) -> np.ndarray:
        """As :meth:`HystereticDraftGear.force`, compiled for the SA-3 curves."""
        args = self._kernel_input(d, d_dot, s)
        return _sa3_force(*args, np.empty(args[0].size))

    def rates(self, d: np.ndarray, d_dot: np.ndarray, s: SimpleNamespace) -> dict[str, np.ndarray]:
        """As :meth:`HystereticDraftGear.rates`, compiled for the SA-3 curves."""
        args = self._kernel_input(d, d_dot, s)
        return {"gear_force": _sa3_rates(*args, np.empty(args[0].size))}

    force_kernel = staticmethod(_sa3_kernel)

    def kernel_params(self) -> np.ndarray:
        """The SA-3 kernels' parameter matrix."""
        return self._matrix

    def force_and_rates(self, d: np.ndarray, d_dot: np.ndarray, s: SimpleNamespace
                        ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """:meth:`force` and :meth:`rates` in one compiled call."""
        f, r = _sa3_force_and_rates(*self._kernel_input(d, d_dot, s))
        return f, {"gear_force": r}

    def free_range(self) -> tuple[np.ndarray, np.ndarray]:
        """``(-slack, 0)``: the gap is on the compression side."""
        return -self.p.slack.astype(float), np.zeros(self.count)

    def loading(self, g: np.ndarray) -> np.ndarray:
        """``min(preload, solid_stiffness * g) + stiffness * g``, ``g`` capped at the stroke."""
        g = np.minimum(g, self.p.stroke)
        return np.minimum(self.p.preload, self.p.solid_stiffness * g) + self.p.stiffness * g

    def unloading(self, g: np.ndarray) -> np.ndarray:
        """``unloading_ratio * loading(g)``."""
        return self.p.unloading_ratio * self.loading(g)

    def _band(self, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        top = self.loading(g)  # once: U is a fixed fraction of it (the ratio is <= 1)
        return self.p.unloading_ratio * top, top

    def slopes(self, g: np.ndarray, outward: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``stiffness``, plus ``solid_stiffness`` on the preload ramp; times the ratio for U."""
        on_ramp = (g < self.ramp_end) | ((g == self.ramp_end) & ~outward)
        slope = self.p.stiffness + np.where(on_ramp, self.p.solid_stiffness, 0.0)
        return slope, self.p.unloading_ratio * slope

    def breakpoints(self) -> np.ndarray:
        """The end of the preload ramp and the end of the stroke."""
        return np.stack([self.ramp_end, self.cap], axis=1)

    def kink_engagements(self) -> np.ndarray:
        """The stroke end only: the preload ramp's end, 25 micrometres past the edge, is
        left to the error control, as locating it would double the events."""
        return self.cap[:, None].copy()


_TABLE_KEYS = ("deflection", "loading", "unloading")
# Tables are given in other units (kips, inches) and converted: a relative margin lets
# rounding pass where the table is exact (an unloading segment parallel to loading).
_TABLE_RTOL = 1e-9


def _interp(x: np.ndarray, xp: np.ndarray, fp: np.ndarray, slope: float) -> np.ndarray:
    """Piecewise-linear curve through (xp, fp), extended past xp[-1] with ``slope``."""
    return np.interp(x, xp, fp) + np.maximum(x - xp[-1], 0.0) * slope


class TableDraftGear(HystereticDraftGear):
    """Draft gear given by loading and unloading tables, as in US practice.

    Both curves are piecewise linear through ``(0, 0)`` and the points
    ``(deflection[i], loading[i])`` or ``(deflection[i], unloading[i])`` of
    the gear engagement, and continue past the last point with their last
    segment's slope (no stroke end: a table that ends solid gives the steep
    last segment itself). For example ``deflection = ["0.75 in", "3 in",
    "4 in"]``, ``loading = ["200 kips", "325 kips", "400 kips"]``.

    The slack keeps the ``±slack/2`` convention: a US knuckle coupler has
    free play on both sides of neutral, so the gear engages at ``|d| >
    slack/2`` (``e = |d| - slack/2``). The friction element with memory, its
    force and rates, are those of :class:`HystereticDraftGear`, without a cap.

    Parameters: ``slack`` (m, 0), ``deflection`` (list of m, strictly
    increasing from above 0; required), ``loading`` and ``unloading`` (lists of
    N, one per deflection, unloading <= loading, to a relative 1e-9 for
    rounding; required), ``stick_stiffness`` (N/m, 2e8), ``stick_damping``
    (N*s/m, 3e6). Couplings may have
    different tables; evaluation is one ``np.interp`` per distinct table, so
    the usual train-wide table costs one call over all couplings.
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
        "stick_stiffness": _stick_stiffness(),
        "stick_damping": _stick_damping(),
    }

    def __init__(self, params: list[dict[str, Any]]) -> None:
        # Tables may differ in length between couplings, so each is kept as one tuple
        # entry of an object array; the scalars stack into float arrays as usual.
        self.count = len(params)
        columns: dict[str, np.ndarray] = {}
        for key in self.params:
            if key in _TABLE_KEYS:
                column = np.empty(self.count, dtype=object)
                for i, row in enumerate(params):
                    column[i] = tuple(float(v) for v in row[key])
                columns[key] = column
            else:
                columns[key] = np.array([row[key] for row in params], dtype=float)
        self.p = SimpleNamespace(**columns)
        self.setup()

    def setup(self) -> None:
        """Check each distinct table once and build its curves."""
        super().setup()
        self.half = self.p.slack / 2.0
        self.cap = np.full(self.count, np.inf)
        self.over_stiffness = np.zeros(self.count)
        distinct: dict[tuple, int] = {}
        which = np.empty(self.count, dtype=int)
        for i in range(self.count):
            key = tuple(getattr(self.p, k)[i] for k in _TABLE_KEYS)
            if key not in distinct:
                _check_table(*(np.array(v) for v in key))
                distinct[key] = len(distinct)
            which[i] = distinct[key]
        # One curve set per distinct table: (xp, loading fp, unloading fp, segment slopes of
        # each, the last repeated for the extrapolation past the table).
        self._tables = []
        for x, lo, un in distinct:
            xp = np.concatenate([[0.0], x])
            lp = np.concatenate([[0.0], lo])
            up = np.concatenate([[0.0], un])
            sl = np.diff(lp) / np.diff(xp)
            su = np.diff(up) / np.diff(xp)
            self._tables.append((xp, lp, up, np.append(sl, sl[-1]), np.append(su, su[-1])))
        self._members = [np.flatnonzero(which == t) for t in range(len(self._tables))]
        width = max((len(t[0]) - 1 for t in self._tables), default=0)
        self._breaks = np.full((self.count, width), np.nan)
        for (xp, *_), idx in zip(self._tables, self._members, strict=True):
            self._breaks[idx, : len(xp) - 1] = xp[1:]

    def free_range(self) -> tuple[np.ndarray, np.ndarray]:
        """``(-slack/2, slack/2)``."""
        return -self.half, self.half.copy()

    def _each_table(self, g: np.ndarray, fn) -> np.ndarray:
        """``fn(table, g)`` per distinct table, gathered back into one array."""
        if len(self._tables) == 1:  # the common train-wide table: one call for all
            return fn(self._tables[0], g)
        out = np.empty(np.shape(g))
        for t, idx in zip(self._tables, self._members, strict=True):
            out[idx] = fn(t, g[idx])
        return out

    def loading(self, g: np.ndarray) -> np.ndarray:
        """The loading table, interpolated and extrapolated with its last slope."""
        return self._each_table(g, lambda t, x: _interp(x, t[0], t[1], t[3][-1]))

    def unloading(self, g: np.ndarray) -> np.ndarray:
        """The unloading table, interpolated and extrapolated with its last slope."""
        return self._each_table(g, lambda t, x: _interp(x, t[0], t[2], t[4][-1]))

    def slopes(self, g: np.ndarray, outward: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Slopes of the table segments on the side the engagement moves to."""
        def segment(t, x, out):
            n = len(t[0]) - 1
            right = np.searchsorted(t[0], x, side="right") - 1
            left = np.searchsorted(t[0], x, side="left") - 1
            return np.clip(np.where(out, right, left), 0, n)

        if len(self._tables) == 1:
            t = self._tables[0]
            i = segment(t, g, outward)
            return t[3][i], t[4][i]
        slope_l = np.empty(np.shape(g))
        slope_u = np.empty(np.shape(g))
        for t, idx in zip(self._tables, self._members, strict=True):
            i = segment(t, g[idx], outward[idx])
            slope_l[idx], slope_u[idx] = t[3][i], t[4][i]
        return slope_l, slope_u

    def breakpoints(self) -> np.ndarray:
        """The table's deflections."""
        return self._breaks


def _check_table(x: np.ndarray, lo: np.ndarray, un: np.ndarray) -> None:
    """Raise ValueError, naming the parameter, if a draft-gear table is unusable.

    Force comparisons allow a relative ``_TABLE_RTOL`` of the table's largest force,
    so rounding from unit conversion does not reject an exact table.
    """
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
    margin = _TABLE_RTOL * max(lo.max(), un.max())
    above = np.flatnonzero(un > lo + margin)
    if above.size:
        k = above[0]
        raise ValueError(f"{where} 'unloading': {un[k]:g} N exceeds 'loading' {lo[k]:g} N at "
                         f"deflection {x[k]:g} m; unloading must not exceed loading")
    # Past the table both curves run on with their last slopes; a steeper unloading
    # slope would take unloading above loading somewhere beyond the last point.
    x0 = x[-2] if x.size > 1 else 0.0
    lo0 = lo[-2] if x.size > 1 else 0.0
    un0 = un[-2] if x.size > 1 else 0.0
    if un[-1] - un0 > lo[-1] - lo0 + margin:
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

    def force(self, d: np.ndarray, d_dot: np.ndarray, s: SimpleNamespace) -> np.ndarray:
        """``stiffness * d + damping * d_dot``."""
        return self.p.stiffness * d + self.p.damping * d_dot

    @staticmethod
    def force_kernel(d, d_dot, z, params, force, dz):  # pragma: no cover (compiled)
        """:meth:`force` as a loop, for the compiled step loop."""
        for i in range(d.size):
            force[i] = params[0, i] * d[i] + params[1, i] * d_dot[i]

    def kernel_params(self) -> np.ndarray:
        """Rows: stiffness, damping."""
        return np.ascontiguousarray(np.broadcast_arrays(
            self.p.stiffness, self.p.damping), dtype=float)

    def kinks(self) -> np.ndarray:
        """None."""
        return np.zeros((self.count, 0))


@hookimpl
def rrs_coupler_models():
    """The shipped coupler models: spring_damper, sa3, table, linear."""
    return [SpringDamper, SA3DraftGear, TableDraftGear, Linear]
