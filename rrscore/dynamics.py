"""Equations of motion of a train on a route, for whole arrays of vehicles and axles.

State vector ``y`` (``n`` vehicles, ``A`` axles in total)::

    y = [x (n) | v (n) | phi (A) | omega (A)]

Body: ``M_i a_i = F_i - R_i sign(v_i)`` where ``F`` collects the signed forces
(drive, grade, air drag with wind, couplers, slipping wheels) and ``R >= 0`` the resistive ones
(running, starting and curve resistance, brakes on rolling axles, ``Q_r[0]``).
Resistive forces are Coulomb-like: at ``v = 0`` exactly they hold the vehicle
while ``|F| <= R`` and only the excess moves it, so they never reverse motion.
A step that carries ``v`` through zero is cut at the crossing and ``v`` set to
exactly 0 (event ``standstill``), after which the same rule decides.

Wheelsets are in one of two modes:

* rolling (adhered): ``omega = v/r``. Slip velocity is then quasi-static and
  small (the creep law's rising branch; reported, not integrated, because its
  time constant is some 50 microseconds), the axle's inertia ``J/r^2`` adds
  to the vehicle's effective mass (hence the hump-yard rotating-mass factor),
  and its drive and brake torques act on the body through the rail.
* slipping: ``omega`` is integrated, and the rail force is the creep law at
  slip velocity ``s = omega r - v`` beyond its peak (gross slip or slide).

An axle starts to slip when the tangential force its torques demand exceeds
``psi N``; it re-adheres when ``|s|`` falls back below the creep peak ``s0``.
Both are events located in time. Coupler slack closing is located as well.

The right-hand side has no Python loop over vehicles or axles; inputs from
vehicle plugins (``Q_a``, ``Q_r``) are gathered once per control step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from . import adhesion, resistance
from .track import Route
from .train import Train

G = 9.80665


def coulomb_net(force: np.ndarray, resist: np.ndarray, speed: np.ndarray) -> np.ndarray:
    """Net force when a resistance of magnitude ``resist`` opposes motion (or impending motion).

    Moving (``speed != 0``): ``force - resist*sign(speed)``. At rest: the
    resistance cancels ``force`` up to its magnitude (static friction), so the
    net force is the excess only, and zero while ``|force| <= resist``.
    """
    held = np.minimum(np.maximum(force, -resist), resist)  # np.clip is slower on small arrays
    return np.where(speed != 0.0, force - resist * np.sign(speed), force - held)


@dataclass
class EventBlock:
    """A vector of event functions ``g(t, y, f)`` and what happens when one crosses zero.

    ``direction`` -1: only falling crossings (+ to -) count; 0: both.
    ``action`` changes the state (and modes) for the crossing components ``idx``
    and returns a new ``y``, or ``y`` itself to decline (nothing changed); None
    for events that only end a step (kinks).
    ``condition`` events also fire when ``g < 0`` at a restart (after a control update).
    ``smooth``: the right-hand side stays continuous across the surface (a kink
    of the force law), so the dense output locates it well; otherwise the
    crossing time is refined by integrating from the side before it.
    """

    name: str
    values: Callable[[float, np.ndarray, np.ndarray], np.ndarray | None]
    direction: int
    action: Callable[[float, np.ndarray, np.ndarray], np.ndarray] | None = None
    condition: bool = False
    smooth: bool = False


class TrainDynamics:
    """The train's equations of motion: right-hand side, held inputs and events."""

    def __init__(self, train: Train, route: Route) -> None:
        self.train = train
        self.route = route
        n, na = train.count, train.axle_count
        self.n, self.na = n, na
        self.sx = slice(0, n)
        self.sv = slice(n, 2 * n)
        self.sphi = slice(2 * n, 2 * n + na)
        self.somega = slice(2 * n + na, 2 * n + 2 * na)
        self.size = 2 * n + 2 * na

        # Inputs held over a control step (train frame): drive torque and brake per axle,
        # body force and extra body resistance per vehicle.
        self.axle_torque = np.zeros(na)
        self.axle_brake = np.zeros(na)
        self.body_force = np.zeros(n)
        self.body_resist = np.zeros(n)
        self.rolling = np.ones(na, dtype=bool)
        self.rail_condition = train.rail_factor.copy()  # from configs and the driver program
        self.rail_factor = self.rail_condition.copy()  # times the vehicles' adhesion_factor
        self.wind = 0.0
        self.air_density = resistance.AIR_DENSITY  # kg/m^3; both set from the scenario
        self.last_coupler_force = np.zeros(max(n - 1, 0))
        self.log: list[tuple[float, str, int, str]] = []  # (t, event, index, detail)
        self.events = self._event_blocks()
        self.refresh()

    # ------------------------------------------------------------------ state
    def initial_state(self, lead_position: float, speed: float | np.ndarray,
                      slack: str = "neutral", gaps: np.ndarray | None = None) -> np.ndarray:
        """State with the lead vehicle's centre at ``lead_position``, all at ``speed``
        (a number, or one per vehicle).

        ``slack``: 'neutral' (couplers at nominal length), 'bunched' (every
        coupler at the compressed end of its slack) or 'stretched'. ``gaps``
        adds distance per coupling (cars standing apart).
        """
        tr = self.train
        lo, hi = tr.couplings.free_range()
        d = {"neutral": np.clip(0.0, lo, hi), "bunched": lo, "stretched": hi}[slack]
        spacing = tr.couplings.nominal + d + (0.0 if gaps is None else np.asarray(gaps))
        y = np.zeros(self.size)
        y[self.sx] = lead_position - np.concatenate([[0.0], np.cumsum(spacing)])
        y[self.sv] = speed
        y[self.somega] = y[self.sv][tr.axle_vehicle] / tr.axle_radius
        return y

    def refresh(self) -> None:
        """Recompute the per-vehicle sums that are constant between inputs or mode changes."""
        tr = self.train
        roll = self.rolling
        veh = tr.axle_vehicle
        n = self.n
        r = tr.axle_radius
        self.mass_eff = tr.mass + np.bincount(veh, roll * tr.axle_mass_equiv, n)
        self.force_held = self.body_force + np.bincount(veh, roll * self.axle_torque / r, n)
        self.resist_held = self.body_resist + np.bincount(veh, roll * self.axle_brake / r, n)
        self.slipping = np.flatnonzero(~roll)
        # Rolling axles with torque or brake: only they can be driven into slip.
        k = np.flatnonzero(roll & ((self.axle_torque != 0.0) | (self.axle_brake != 0.0)))
        self.loaded_axles = k
        self._loaded_vehicle = tr.axle_vehicle[k]
        # Vehicles that friction can hold; only their v = 0 crossings are events.
        self.has_friction = (self.resist_held + tr.c0 + tr.start0) > 0.0
        self.has_friction[tr.axle_vehicle[self.slipping]] = True  # sliding wheels hold too
        # Combinations the right-hand side would otherwise recompute at every stage.
        self.resist_base = self.resist_held + tr.c0
        self._inv_mass = 1.0 / self.mass_eff
        self._inv_radius = 1.0 / tr.axle_radius
        self._weight_kn = tr.weight * 1e-3
        self._any_starting = bool((tr.start0 > 0).any())
        self._inv_start_speed = 1.0 / tr.start_speed
        # Optional resistance terms; each flag keeps forces() at its old cost when unused.
        self._use_area = bool(tr.curve_area.any())
        if self._use_area:
            self.route.check_area_curves()  # AREA is undefined for R < 15.24 m
        self._use_tunnel = self.route.has_tunnel and bool((tr.tunnel_factor != 1.0).any())
        self._extra_lookup = self._use_area or self._use_tunnel
        self._tunnel_excess = tr.tunnel_factor - 1.0
        self._use_air = bool(tr.cd_a.any())

    def set_inputs(self) -> bool:
        """Gather ``Q_a``/``Q_r`` from every vehicle model (train frame) and refresh the sums.

        Returns whether anything changed: if not, the solver need not restart.
        """
        before = (self.body_force.copy(), self.body_resist.copy(), self.axle_torque.copy(),
                  self.axle_brake.copy(), self.rail_factor.copy())
        for b in self.train.batches:
            m = b.model
            sign = self.train.orientation[m.index]
            self.body_force[m.index] = m.Q_a[:, 0] * sign
            self.body_resist[m.index] = np.abs(m.Q_r[:, 0])
            self.axle_torque[b.axles] = m.Q_a[:, 1:] * sign[:, None]
            self.axle_brake[b.axles] = np.abs(m.Q_r[:, 1:])
            self.rail_factor[b.axles] = self.rail_condition[b.axles] * m.adhesion_factor
        after = (self.body_force, self.body_resist, self.axle_torque, self.axle_brake,
                 self.rail_factor)
        if all(np.array_equal(x, y) for x, y in zip(before, after, strict=True)):
            return False
        self.refresh()
        return True

    def set_rail_condition(self, factor: float) -> None:
        """Rail condition factor under the whole train from now on (wet rails, leaves, ...)."""
        self.rail_condition[:] = factor
        self.set_inputs()

    def psi(self, v_axle: np.ndarray, axles: np.ndarray | None = None) -> np.ndarray:
        """Adhesion coefficient times rail factor at axle speeds ``v_axle``, for all axles
        (or for the listed ``axles``, ``v_axle`` then being their speeds)."""
        tr = self.train
        law_of = tr.axle_law if axles is None else tr.axle_law[axles]
        if len(tr.adhesion_laws) == 1:
            out = tr.adhesion_laws[0](v_axle)
        else:
            out = np.empty(len(law_of))
            for i, law in enumerate(tr.adhesion_laws):
                sel = law_of == i
                if sel.any():
                    out[sel] = law(v_axle[sel])
        return out * (self.rail_factor if axles is None else self.rail_factor[axles])

    # -------------------------------------------------------------------- rhs
    def forces(self, y: np.ndarray):
        """Signed force, resistance magnitude, coupler forces and slip data at state ``y``."""
        tr = self.train
        x, v = y[self.sx], y[self.sv]
        grade, curve = self.route.mean_grade_and_curve(x, tr.half_length)
        force = self.force_held - tr.weight * grade / np.sqrt(1.0 + grade * grade)
        speed = np.abs(v)
        c2 = tr.c2
        if self._extra_lookup:  # AREA curves and/or tunnels: one more (complex) interpolation
            area, tunnel = self.route.mean_area_and_tunnel(x, tr.half_length)
            if self._use_area:
                curve = np.where(tr.curve_area, area, curve)
            if self._use_tunnel:
                # Only the aerodynamic part grows in a tunnel, in proportion to the share
                # of the vehicle's length inside it.
                aero = 1.0 + self._tunnel_excess * tunnel
                c2 = c2 * aero
        resist = self.resist_base + speed * (tr.c1 + c2 * speed) + curve * self._weight_kn
        if self._use_air:
            # Signed, unlike the running resistance: relative to the air, so a tailwind
            # faster than the train pushes it, and wind acts on a standing vehicle too.
            rel = v - self.wind
            drag = (0.5 * self.air_density) * tr.cd_a * rel * np.abs(rel)
            force -= drag * aero if self._use_tunnel else drag
        if self._any_starting:
            resist += tr.start0 * np.maximum(0.0, 1.0 - speed * self._inv_start_speed)
        if self.n > 1:
            cf = tr.couplings.force(x[:-1] - x[1:] - tr.couplings.nominal, v[:-1] - v[1:])
            force[:-1] -= cf
            force[1:] += cf
        else:
            cf = self.last_coupler_force
        slip = None
        if self.slipping.size:
            k = self.slipping
            veh = tr.axle_vehicle[k]
            s = y[self.somega][k] * tr.axle_radius[k] - v[veh]
            x = s / tr.creep_slip[k]
            # A slipping axle demands more than adhesion gives, so inside the creep peak
            # its contact is saturated (full psi N); beyond it, the creep law falls off.
            ratio = np.where(np.abs(x) <= 1.0, np.sign(x),
                             adhesion.creep_ratio_unchecked(x, tr.kinetic_ratio[k]))
            rail = self.psi(v[veh], k) * tr.axle_normal[k] * ratio
            force += np.bincount(veh, rail, self.n)
            slip = (k, rail)
        return force, resist, cf, slip

    def rhs(self, t: float, y: np.ndarray) -> np.ndarray:
        """``dy/dt`` for the solver."""
        tr = self.train
        force, resist, cf, slip = self.forces(y)
        self.last_coupler_force = cf
        v = y[self.sv]
        if v.all():  # nothing stands still: plain Coulomb resistance, no stiction branch
            a = (force - resist * np.sign(v)) * self._inv_mass
        else:
            a = coulomb_net(force, resist, v) * self._inv_mass
        dy = np.empty(self.size)
        dy[self.sx] = v
        dy[self.sv] = a
        omega = y[self.somega]
        dy[self.sphi] = omega
        if slip is None:
            dy[self.somega] = a[tr.axle_vehicle] * self._inv_radius
        else:
            domega = a[tr.axle_vehicle] * self._inv_radius
            k, rail = slip
            r = tr.axle_radius[k]
            drive = self.axle_torque[k] - rail * r
            domega[k] = coulomb_net(drive, self.axle_brake[k], omega[k]) / tr.axle_inertia[k]
            dy[self.somega] = domega
        return dy

    # ----------------------------------------------------------------- events
    def crosses_jump(self, y0: np.ndarray, y1: np.ndarray) -> bool:
        """Does a step from ``y0`` to ``y1`` carry a held vehicle or a slipping wheel through
        zero speed, where friction reverses and the right-hand side jumps?"""
        v0, v1 = y0[self.sv], y1[self.sv]
        if ((v0 * v1 < 0) & self.has_friction).any():
            return True
        k = self.slipping
        return bool(k.size and (y0[self.somega][k] * y1[self.somega][k] < 0).any())

    def required_rail_force(self, y: np.ndarray, f: np.ndarray,
                            axles: np.ndarray | None = None) -> np.ndarray:
        """Tangential rail force rolling axles must transmit, from their torques and inertia
        (all axles, or the listed ones)."""
        tr = self.train
        k = slice(None) if axles is None else axles
        veh = tr.axle_vehicle[k]
        v, a = y[self.sv][veh], f[self.sv][veh]
        torque, brake_max = self.axle_torque[k], self.axle_brake[k]
        brake = np.where(v != 0.0, brake_max * np.sign(v),
                         np.minimum(np.maximum(torque, -brake_max), brake_max))
        return (torque - brake) / tr.axle_radius[k] - tr.axle_mass_equiv[k] * a

    def slip_velocity(self, y: np.ndarray, f: np.ndarray | None = None) -> np.ndarray:
        """Slip velocity ``omega r - v`` per axle; rolling axles show their creep slip."""
        tr = self.train
        v = y[self.sv][tr.axle_vehicle]
        s = y[self.somega] * tr.axle_radius - v
        if f is not None and self.rolling.any():
            need = self.required_rail_force(y, f)
            cap = self.psi(v) * tr.axle_normal
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.clip(np.where(cap > 0, need / cap, 0.0), -1.0, 1.0)
            creep = adhesion.creep_slip_for_ratio(ratio, 1.0) * tr.creep_slip
            s = np.where(self.rolling, creep, s)
        return s

    def _event_blocks(self) -> list[EventBlock]:
        tr = self.train
        sv, som = self.sv, self.somega

        def standstill(t, y, f):
            return np.where(self.has_friction, y[sv], 1.0)

        def stop_vehicle(t, y, idx):
            y = y.copy()
            y[sv][idx] = 0.0
            axles = np.isin(tr.axle_vehicle, idx) & self.rolling
            y[som][axles] = 0.0
            return y

        def wheel_stop(t, y, f):
            if not self.slipping.size:
                return None
            g = np.ones(self.na)
            g[self.slipping] = y[som][self.slipping]
            return g

        def stop_wheel(t, y, idx):
            for k in idx:
                self.log.append((t, "wheel locked", int(k), ""))
            y = y.copy()
            y[som][idx] = 0.0
            return y

        def slip_margin(t, y, f):
            k = self.loaded_axles
            if not k.size:
                return None
            cap = self.psi(y[sv][self._loaded_vehicle], k) * tr.axle_normal[k]
            g = np.ones(self.na)
            g[k] = cap - np.abs(self.required_rail_force(y, f, k))
            return g

        def start_slip(t, y, idx):
            need = self.required_rail_force(y, self.rhs(t, y), idx)
            y = y.copy()
            v = y[sv][tr.axle_vehicle[idx]]
            y[som][idx] = (v + tr.creep_slip[idx] * np.sign(need)) / tr.axle_radius[idx]
            self.rolling[idx] = False
            for k, n in zip(idx, need, strict=True):
                self.log.append((t, "slip" if n > 0 else "slide", int(k), f"{n:.0f} N demanded"))
            self.refresh()
            return y

        def readhesion_margin(t, y, f):
            if not self.slipping.size:
                return None
            k = self.slipping
            s = y[som][k] * tr.axle_radius[k] - y[sv][tr.axle_vehicle[k]]
            g = np.ones(self.na)
            g[k] = np.abs(s) - tr.creep_slip[k]
            return g

        def readhere(t, y, idx):
            # Only where rolling would ask no more of the rail than adhesion gives: a
            # wheel locked by a brake stronger than adhesion slides on until the stop.
            f = self.rhs(t, y)
            veh = tr.axle_vehicle[idx]
            cap = self.psi(y[sv][veh], idx) * tr.axle_normal[idx]
            idx = idx[np.abs(self.required_rail_force(y, f, idx)) <= cap]
            if not idx.size:
                return y
            y = y.copy()
            y[som][idx] = y[sv][tr.axle_vehicle[idx]] / tr.axle_radius[idx]
            self.rolling[idx] = True
            for k in idx:
                self.log.append((t, "re-adhesion", int(k), ""))
            self.refresh()
            return y

        kinks = tr.couplings.kink_table
        kinks = np.where(np.isfinite(kinks), kinks, np.inf)

        def slack_edges(t, y, f):
            if kinks.shape[1] == 0:
                return None
            d = tr.couplings.deflection(y[self.sx])
            return (d[:, None] - kinks).ravel()

        blocks = [
            EventBlock("standstill", standstill, 0, stop_vehicle),
            EventBlock("wheel stops", wheel_stop, 0, stop_wheel),
            EventBlock("slip", slip_margin, -1, start_slip, condition=True),
            EventBlock("re-adhesion", readhesion_margin, -1, readhere, condition=True),
        ]
        if self.n > 1:
            blocks.append(EventBlock("slack edge", slack_edges, 0, smooth=True))
            blocks += self._coupling_events()
        return blocks

    def _coupling_events(self) -> list[EventBlock]:
        """Couplers that break above their limit and couple on contact when slow enough."""
        cp = self.train.couplings
        sv = self.sv
        breakable = np.isfinite(cp.break_force)

        def break_margin(t, y, f):
            if not (breakable & cp.coupled).any():
                return None
            x, v = y[self.sx], y[sv]
            force = cp.force(cp.deflection(x), v[:-1] - v[1:])
            return np.where(breakable & cp.coupled, cp.break_force - force, 1.0)

        def break_coupler(t, y, idx):
            x, v = y[self.sx], y[sv]
            force = cp.force(cp.deflection(x), v[:-1] - v[1:])
            cp.coupled[idx] = False
            for j in idx:
                self.log.append((t, "coupler break", int(j), f"{force[j]:.0f} N"))
            return y.copy()  # the force law changed: a new start for the solver

        lo, _ = cp.free_range()

        def contact_gap(t, y, f):
            if cp.all_coupled:
                return None
            return np.where(cp.coupled, 1.0, cp.deflection(y[self.sx]) - lo)

        def contact(t, y, idx):
            v = y[sv]
            closing = v[idx + 1] - v[idx]
            for j, c in zip(idx, closing, strict=True):
                joins = c <= cp.coupling_speed[j]
                cp.coupled[j] = cp.coupled[j] or joins
                self.log.append((t, "coupled" if joins else "impact", int(j), f"{c:.3f} m/s"))
            return y.copy()  # coupled or not, contact is a new start for the solver

        return [
            EventBlock("coupler break", break_margin, -1, break_coupler),
            EventBlock("contact", contact_gap, -1, contact, smooth=True),
        ]
