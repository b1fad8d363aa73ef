"""Vehicle bodies: position and velocity along the route, and every force that acts on a
body as a whole (grade, running, starting and curve resistance, air, held inputs).

``M_i a_i = F_i - R_i d_i`` where ``F`` collects the signed forces and
``R >= 0`` the Coulomb-like resistances, acting against the direction of
motion ``d_i``. Resistances never reverse motion:

* The direction a resistance acts in is a mode held over each step: the sign
  of the velocity at the step's start. Within a step the right-hand side is
  therefore smooth, even for a step that would carry ``v`` through zero; that
  crossing is an event (``standstill``), located in time, where ``v`` is set to
  exactly 0. (Taking the sign of ``v`` at every stage instead lets the
  resistance flip back and forth between the stages of one step, and a fixed
  step solver then misses the stop.)
* At exactly ``v = 0`` the resistance holds the vehicle while ``|F| <= R``
  (static friction) and only the excess moves it.

Vehicles whose resistance vanishes at standstill (no constant term, no brake)
have no such jump, and use the sign of ``v`` at every stage.

A rigid train (``rigid=True``, the scenario's ``dynamics = "rigid"``) moves as one
body, as point-mass simulators treat it: the vehicles' forces, resistances and
effective masses are summed, the Coulomb rule applies to the sums (a train held
by the brakes of a few cars stands still as a whole), and every vehicle gets the
one acceleration. The couplers carry what that takes (:func:`rigid_coupler_forces`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from . import resistance
from .component import Component, EventBlock, Loads, Signal
from .reductions import all_set, any_set
from .state import StateLayout, StateSpec
from .track import Route
from .train import Train


@njit(cache=True)
def held_rows(force, resist, mass_eff, c0, start0, rigid):  # pragma: no cover (compiled)
    """:attr:`Bodies.held` from the signed force, the resistance magnitude and the
    effective mass per vehicle (rows: force, resistance with ``c0``, resistance alone,
    inverse effective mass, effective mass), and which vehicles friction can hold at
    standstill (all of a rigid train if any): fresh arrays, filled by
    :func:`held_rows_into`."""
    n = force.size
    held = np.empty((5, n))
    friction = np.empty(n, dtype=np.bool_)
    held_rows_into(held, friction, force, resist, mass_eff, c0, start0, rigid)
    return held, friction


@njit(inline="always")
def held_force_rows(held, i, force, resist, c0):  # pragma: no cover (compiled)
    """Vehicle ``i``'s rows of the held force and resistance (rows 0 to 2 of
    :func:`held_rows`) from its force, resistance magnitude and ``c0``."""
    held[0, i] = force
    held[1, i] = resist + c0
    held[2, i] = resist


@njit(cache=True, _nrt=False)
def held_friction_into(held, friction, start0, rigid):  # pragma: no cover (compiled)
    """Which vehicles friction can hold at standstill, from their held resistance (row 1
    of ``held``) and starting resistance: all of a rigid train if any."""
    n = friction.size
    any_friction = False
    for i in range(n):
        friction[i] = (held[1, i] + start0[i]) > 0.0
        any_friction = any_friction or friction[i]
    if rigid:
        for i in range(n):
            friction[i] = any_friction


@njit(cache=True, _nrt=False)
def held_rows_into(held, friction, force, resist, mass_eff, c0, start0,
                   rigid):  # pragma: no cover (compiled)
    """:func:`held_rows` written into ``held`` (five rows of a value per vehicle) and
    ``friction``. It runs at every control step whose inputs changed."""
    for i in range(force.size):
        held_force_rows(held, i, force[i], resist[i], c0[i])
        held[3, i] = 1.0 / mass_eff[i]
        held[4, i] = mass_eff[i]
    held_friction_into(held, friction, start0, rigid)


def coulomb_net(force: np.ndarray, resist: np.ndarray, direction: np.ndarray) -> np.ndarray:
    """Net force when a resistance of magnitude ``resist`` opposes motion.

    ``direction`` is the direction of motion (-1, +1; or a velocity, whose sign is
    taken), 0 at rest. Moving: ``force - resist * direction``. At rest the
    resistance cancels ``force`` up to its magnitude (static friction), so the net
    force is the excess only, and zero while ``|force| <= resist``.
    """
    d = np.sign(direction)
    held = np.minimum(np.maximum(force, -resist), resist)  # np.clip is slower on small arrays
    return np.where(d != 0.0, force - resist * d, force - held)


def rigid_net(force: np.ndarray, resist: np.ndarray, direction: float) -> np.ndarray:
    """Each vehicle's share of the net force on a rigid train moving in ``direction``
    (-1, 0, +1). Moving, each resistance opposes the motion; standing, the resistances
    hold the train's summed force up to their sum, each in proportion to its size (how
    a statically indeterminate hold is shared is a choice: this one is smooth)."""
    if direction != 0.0:
        return force - resist * direction
    total_f, total_r = float(force.sum()), float(resist.sum())
    share = min(max(total_f / total_r, -1.0), 1.0) if total_r > 0.0 else 0.0
    return force - resist * share


def rigid_coupler_forces(net: np.ndarray, mass_eff: np.ndarray, accel: float) -> np.ndarray:
    """Coupler forces (tension +) that make every vehicle of a rigid train take the
    acceleration ``accel``: coupling ``j`` pulls back on vehicles ``0..j`` as much as their
    net force exceeds what their own acceleration needs."""
    return np.cumsum(net - mass_eff * accel)[:-1]


class Bodies(Component):
    """The bodies of every vehicle of a train, as whole arrays."""

    name = "body"

    def __init__(self, train: Train, route: Route, wind: float, air_density: float,
                 position_tol: float, speed_tol: float, rigid: bool = False) -> None:
        self.train, self.route = train, route
        self.n = train.count
        self.rigid = rigid
        self.wind = wind
        self.air_density = air_density
        self.position_tol, self.speed_tol = position_tol, speed_tol
        self.direction = np.zeros(self.n)  # -1, 0 (standing: static friction), +1
        self.frozen = np.zeros(self.n, dtype=bool)  # direction held over the step
        self._all_frozen = False
        self.sx = self.sv = slice(0, 0)
        tr = train
        self._half_rho_cd_a = 0.5 * air_density * tr.cd_a
        self._use_air = bool(tr.cd_a.any())
        # AREA curves take a second table lookup: not needed where no track is curved
        self._use_area = bool(tr.curve_area.any()) and route.has_curves
        if self._use_area:
            route.check_area_curves()  # AREA is undefined for R < 15.24 m
        self._use_tunnel = route.has_tunnel and bool((tr.tunnel_factor != 1.0).any())
        self._extra_lookup = self._use_area or self._use_tunnel
        self._tunnel_excess = tr.tunnel_factor - 1.0
        self._any_starting = bool((tr.start0 > 0).any())
        self._weight_kn = tr.weight * 1e-3
        self.set_held(np.zeros(self.n), np.zeros(self.n), tr.mass.copy())

    def declare(self, layout: StateLayout) -> None:
        self.sx = layout.add("body.x", StateSpec(
            "m", "position of the vehicle's centre along the route", self.position_tol), self.n)
        self.sv = layout.add("body.v", StateSpec(
            "m/s", "velocity along the route (error held relative to the train's mean)",
            self.speed_tol), self.n)

    def set_held(self, force: np.ndarray, resist: np.ndarray, mass_eff: np.ndarray) -> None:
        """Inputs held over a control step: signed force, resistance magnitude (brakes,
        ``Q_r``) and effective mass (rolling wheelsets' inertia included), per vehicle."""
        tr = self.train
        self.take_held(*held_rows(np.ascontiguousarray(force, dtype=float),
                                  np.ascontiguousarray(resist, dtype=float),
                                  np.ascontiguousarray(mass_eff, dtype=float), tr.c0,
                                  tr.start0, self.rigid))

    def take_held(self, held: np.ndarray, has_friction: np.ndarray) -> None:
        """Take the held inputs as :func:`held_rows` returns them."""
        #: The held inputs as rows of one array (force, resistance with ``c0``,
        #: resistance alone, inverse effective mass, effective mass), for the compiled
        #: right-hand side.
        self.held = held
        self.force_held = held[0]
        self.resist_held = held[2]  # brakes and Q_r: the energy account's brake flow
        self.resist_base = held[1]
        self.mass_eff = held[4]
        self._inv_mass = held[3]
        #: Vehicles that friction can hold at standstill: only they have a jump at v = 0.
        self.has_friction = has_friction

    def mark_friction(self, vehicles: np.ndarray) -> None:
        """Sliding wheels hold their vehicles too (the wheelsets call this)."""
        self.has_friction[slice(None) if self.rigid else vehicles] = True

    def start_step(self, y: np.ndarray) -> None:
        """Hold each moving vehicle's friction direction for the coming steps."""
        v = y[self.sv]
        self.direction = np.sign(v)
        self.frozen = self.has_friction & (self.direction != 0.0)
        self._all_frozen = all_set(self.frozen)

    commit = start_step

    def hold_directions(self, direction: np.ndarray, frozen: np.ndarray) -> None:
        """Take the friction directions :meth:`commit` would hold at the state the
        compiled step loop ended at (it holds them from each new state, as commit does)."""
        self.direction, self.frozen = direction, frozen
        self._all_frozen = all_set(frozen)

    def forces(self, t: float, y: np.ndarray, loads: Loads) -> None:
        tr = self.train
        x, v = y[self.sx], y[self.sv]
        grade, curve = self.route.mean_grade_and_curve(x, tr.half_length)
        loads.gravity = resistance.gravity_force(tr.weight, grade)
        loads.force += self.force_held + loads.gravity
        speed = np.abs(v)
        c2 = tr.c2
        aero = 1.0
        if self._extra_lookup:  # AREA curves and/or tunnels: one more (complex) interpolation
            area, tunnel = self.route.mean_area_and_tunnel(x, tr.half_length)
            if self._use_area:
                curve = np.where(tr.curve_area, area, curve)
            if self._use_tunnel:
                # Only the aerodynamic part grows in a tunnel, in proportion to the share
                # of the vehicle's length inside it.
                aero = 1.0 + self._tunnel_excess * tunnel
                c2 = c2 * aero
        r = resistance.quadratic_force(speed, self.resist_base, tr.c1, c2)
        r += curve * self._weight_kn
        if self._any_starting:
            r += resistance.starting_force(speed, tr.start0, tr.start_speed)
        loads.resist += r
        if self._use_air:
            # Signed, unlike the running resistance: relative to the air, so a tailwind
            # faster than the train pushes it, and wind acts on a standing vehicle too.
            loads.air = resistance.air_force(v - self.wind, self._half_rho_cd_a * aero)
            loads.force += loads.air

    def accelerate(self, y: np.ndarray, loads: Loads) -> None:
        """Accelerations from the summed forces, with the Coulomb rule, into ``loads``."""
        v = y[self.sv]
        force, resist = loads.force, loads.resist
        if self.rigid:
            d = self.direction[0] if self.frozen[0] else float(np.sign(v[0]))
            net = rigid_net(force, resist, d)
            # sums taken in order, as the compiled pass takes them (cumsum is sequential)
            total = np.cumsum(net)[-1] / np.cumsum(self.mass_eff)[-1]
            loads.accel = np.full(self.n, total)
            loads.net = net
            return
        if self._all_frozen:  # everything moves: plain Coulomb resistance
            net = force - resist * self.direction
        else:
            net = coulomb_net(force, resist, np.where(self.frozen, self.direction, v))
        loads.accel = net * self._inv_mass

    def rates(self, t: float, y: np.ndarray, loads: Loads, dy: np.ndarray) -> None:
        dy[self.sx] = y[self.sv]
        dy[self.sv] = loads.accel

    # ---------------------------------------------------------------- events
    def events(self) -> list[EventBlock]:
        return [EventBlock("standstill", self._moving, -1, self._stop)]

    def _moving(self, t: float, y: np.ndarray, f: np.ndarray) -> np.ndarray | None:
        if not any_set(self.frozen):
            return None
        return np.where(self.frozen, y[self.sv] * self.direction, 1.0)

    def _stop(self, t: float, y: np.ndarray, idx: np.ndarray) -> np.ndarray:
        y = y.copy()
        y[self.sv][idx] = 0.0
        self.direction[idx] = 0.0
        self.frozen[idx] = False
        self._all_frozen = False
        self.on_stop(y, idx)
        return y

    def on_stop(self, y: np.ndarray, idx: np.ndarray) -> None:
        """Hook for the wheelsets: rolling wheels stop with their vehicle."""

    def signals(self) -> dict[str, Signal]:
        return {
            "position_m": ("vehicle", "m", lambda y, loads: y[self.sx]),
            "speed_mps": ("vehicle", "m/s", lambda y, loads: y[self.sv]),
            "accel_mps2": ("vehicle", "m/s^2", lambda y, loads: loads.accel),
        }
