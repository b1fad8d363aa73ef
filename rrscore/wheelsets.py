"""Wheelsets: each axle's angle and spin, wheel-rail adhesion, slip and slide.

An axle is in one of two modes:

* rolling (adhered): ``omega = v/r``. The slip velocity is quasi-static and
  small (the creep law's rising branch; reported, not integrated, because its
  time constant is some 50 microseconds), the axle's inertia ``J/r^2`` adds
  to the vehicle's effective mass (hence the hump-yard rotating-mass factor),
  and its drive and brake torques act on the body through the rail. Its spin
  and angle are not integrated either: their rates are zero, and after each
  step (and in every state interpolated within one) they are read off the
  body, ``omega = v/r`` and the angle turned by the distance run over ``r``
  (:func:`fill_rolling`), so a train whose wheels roll integrates only its
  bodies (and the plugins' and couplers' states).
* slipping: ``omega`` is integrated, and the rail force is the creep law at
  slip velocity ``s = omega r - v`` beyond its peak (gross slip or slide). A
  brake on a slipping axle is Coulomb-like on ``omega``, with its direction
  held over each step as the bodies' resistances are.

An axle starts to slip when the tangential force its torques demand exceeds
``psi N``; it re-adheres when ``|s|`` falls back below the creep peak ``s0``.
Both are events located in time, as is a sliding wheel coming to a stop.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numba import njit

from . import adhesion
from .bodies import Bodies, coulomb_net
from .component import Component, EventBlock, Loads, Signal
from .events import Event
from .reductions import any_set
from .state import StateLayout, StateSpec
from .train import Train


@njit(cache=True)
def rail_force_one(v, a, torque, brake_max, r, mass_equiv):  # pragma: no cover (compiled)
    """Tangential rail force one rolling axle must transmit (see
    :meth:`Wheelsets.required_rail_force`): the brake acts against the motion, or at rest
    holds against the torque up to its magnitude."""
    if v > 0.0:
        brake = brake_max
    elif v < 0.0:
        brake = -brake_max
    else:
        brake = min(max(torque, -brake_max), brake_max)
    return (torque - brake) / r - mass_equiv * a


@njit(cache=True)
def _rail_force(v, a, torque, brake_max, r, mass_equiv):  # pragma: no cover (compiled)
    """:func:`rail_force_one` of every axle, as a fresh array."""
    out = np.empty(v.size)
    for j in range(v.size):
        out[j] = rail_force_one(v[j], a[j], torque[j], brake_max[j], r[j], mass_equiv[j])
    return out


@njit(cache=True)
def margin_one(v, a, psi, rail, normal, torque, brake_max, r,
               mass_equiv):  # pragma: no cover (compiled)
    """The slip margin of one loaded axle: its adhesion ``psi * rail * normal`` less the
    rail force it needs (:func:`rail_force_one`)."""
    return psi * rail * normal - abs(rail_force_one(v, a, torque, brake_max, r, mass_equiv))


@njit(cache=True)
def _margins(na, k, v, a, psi, rail, normal, torque, brake_max, r,
             mass_equiv):  # pragma: no cover (compiled)
    """The slip margins as a fresh array, one entry per axle: 1 for every axle, and for
    the loaded axles ``k`` :func:`margin_one`."""
    g = np.ones(na)
    for j in range(k.size):
        g[k[j]] = margin_one(v[j], a[j], psi[j], rail[j], normal[j], torque[j],
                             brake_max[j], r[j], mass_equiv[j])
    return g


@njit(cache=True, _nrt=False)
def fill_rolling(y0, y, axles, vehicle, inv_radius, sx, sv, sphi,
                 somega):  # pragma: no cover (compiled)
    """The spin and angle of each rolling axle in ``axles`` written into ``y`` from its
    body, a step (or part of one) on from ``y0``: ``omega = v / r``, and the angle at
    ``y0`` plus the distance run since over ``r`` (rolling without slip). ``sx``...
    ``somega``: where the blocks start."""
    # over views from 0, and with every axle rolling (as a rule) a loop over the axles
    # themselves: numba then checks fewer indices for wrapping around (see
    # rrscore.compiled.body_rates). The second loop is worth its place: without it the
    # spring benchmark took 3.7 % longer (bench_ab.py, slower in 6 rounds of 6).
    na = vehicle.size
    omega, phi, phi0 = y[somega:somega + na], y[sphi:sphi + na], y0[sphi:sphi + na]
    x, x0, v = y[sx:], y0[sx:], y[sv:]
    if axles.size == na:  # every axle: axles is 0, 1, ..., na - 1
        for k in range(na):
            i = vehicle[k]
            omega[k] = v[i] * inv_radius[k]
            phi[k] = phi0[k] + (x[i] - x0[i]) * inv_radius[k]
        return
    for j in range(axles.size):
        k = axles[j]
        i = vehicle[k]
        omega[k] = v[i] * inv_radius[k]
        phi[k] = phi0[k] + (x[i] - x0[i]) * inv_radius[k]


@njit(cache=True)
def _loaded_rows(rolling, torque, brake, vehicle, radius, mass_equiv, rail,
                 normal):  # pragma: no cover (compiled)
    """The rows of :attr:`Wheelsets.loaded_rows` (a fresh array: the last may still be
    read), filled by :func:`loaded_rows_into`."""
    m = 0
    for j in range(rolling.size):
        if rolling[j] and (torque[j] != 0.0 or brake[j] != 0.0):
            m += 1
    rows = np.empty((8, m))
    loaded_rows_into(rows, rolling, torque, brake, vehicle, radius, mass_equiv, rail, normal)
    return rows


@njit(cache=True, _nrt=False)
def loaded_rows_into(rows, rolling, torque, brake, vehicle, radius, mass_equiv, rail,
                     normal):  # pragma: no cover (compiled)
    """The rows of :attr:`Wheelsets.loaded_rows` written into ``rows`` (a column per
    loaded axle): one pass at each change of inputs, where numpy took a dozen small
    calls. Returns how many loaded axles it found; it writes no more columns than
    ``rows`` has (compiled without bounds checks, a wrong count would write past them)."""
    i = 0
    for j in range(rolling.size):
        if rolling[j] and (torque[j] != 0.0 or brake[j] != 0.0):
            if i >= rows.shape[1]:  # (the control steps hand back before: never here)
                i += 1
                continue
            rows[0, i] = j
            rows[1, i] = vehicle[j]
            rows[2, i] = torque[j]
            rows[3, i] = brake[j]
            rows[4, i] = radius[j]
            rows[5, i] = mass_equiv[j]
            rows[6, i] = rail[j]
            rows[7, i] = normal[j]
            i += 1
    return i


@njit(cache=True, _nrt=False)
def loaded_rows_update(rows, torque, brake, rail):  # pragma: no cover (compiled)
    """The rows of :attr:`Wheelsets.loaded_rows` given the axles' new torques, brakes and
    rail factors, where the same axles are loaded (the compiled loop's control steps hand
    back where one is newly driven or braked, or no longer): :func:`loaded_rows_into`'s
    rows, at the cost of the loaded axles instead of every axle."""
    for c in range(rows.shape[1]):
        j = int(rows[0, c])
        rows[2, c] = torque[j]
        rows[3, c] = brake[j]
        rows[6, c] = rail[j]


class Wheelsets(Component):
    """Every wheelset of a train, as whole arrays over the axles."""

    name = "wheel"

    def __init__(self, train: Train, bodies: Bodies, speed_tol: float,
                 accelerations: Callable[[float, np.ndarray], np.ndarray],
                 on_modes_changed: Callable[[], None]) -> None:
        """``accelerations(t, y)``: the train's right-hand side, which slip decisions need;
        ``on_modes_changed()``: called when axles start or stop slipping."""
        self.train, self.bodies = train, bodies
        self.rhs = accelerations
        #: ``loads(t, y)``, the right-hand side's forces (set by the dynamics).
        self.loads_at: Callable[[float, np.ndarray], Loads] | None = None
        self.on_modes_changed = on_modes_changed
        na = train.axle_count
        self.na = na
        self.speed_tol = speed_tol
        self.rolling = np.ones(na, dtype=bool)
        self.spin = np.zeros(na)  # held direction of a slipping axle's spin, -1, 0, +1
        # Inputs held over a control step (train frame).
        self.axle_torque = np.zeros(na)
        self.axle_brake = np.zeros(na)
        self.rail_condition = train.rail_factor.copy()  # from configs and the driver program
        self.rail_factor = self.rail_condition.copy()  # times the vehicles' adhesion_factor
        self.events_out: list[Event] = []
        self.sphi = self.somega = slice(0, 0)
        self._inv_radius = 1.0 / train.axle_radius
        first = np.concatenate([[0], np.cumsum(train.num_axis)[:-1]])
        self.axle_in_vehicle = np.arange(na) - first[train.axle_vehicle]
        self._modes: bytes | None = None  # the rolling modes refresh_modes last saw
        self.loaded_axles: np.ndarray | None = None
        self.refresh_modes()

    def declare(self, layout: StateLayout) -> None:
        # omega's tolerance is the speed tolerance at the rim: the dynamics divides it by
        # each axle's radius (a spec holds one number).
        self.sphi = layout.add("wheel.phi", StateSpec(
            "rad", "wheelset angle (feeds nothing back: uncontrolled)", np.inf), self.na)
        self.somega = layout.add("wheel.omega", StateSpec(
            "rad/s", "wheelset angular velocity (tolerance: speed_tol at the rim)",
            self.speed_tol), self.na)

    def initial(self, y: np.ndarray) -> None:
        tr = self.train
        y[self.somega] = y[self.bodies.sv][tr.axle_vehicle] / tr.axle_radius

    # ----------------------------------------------------------------- inputs
    def refresh_modes(self) -> None:
        """Recompute what depends on the modes (rolling/slipping) and the held inputs."""
        tr = self.train
        modes = self.rolling.tobytes()
        if modes != self._modes:  # an axle started or stopped slipping (rare)
            self._modes = modes
            self.slipping = np.flatnonzero(~self.rolling)
            self._rolling_axles = np.flatnonzero(self.rolling)
            self._equiv = np.bincount(tr.axle_vehicle, self.rolling * tr.axle_mass_equiv,
                                      tr.count)
        # Rolling axles with torque or brake: only they can be driven into slip. What the
        # slip margin needs of them, taken once per change of inputs or modes instead of
        # after every step, as rows of one array (as the compiled step loop reads them):
        # axle, vehicle, torque, brake, radius, J/r^2, rail factor, normal force.
        rows = _loaded_rows(self.rolling, self.axle_torque, self.axle_brake, tr.axle_vehicle,
                            tr.axle_radius, tr.axle_mass_equiv, self.rail_factor,
                            tr.axle_normal)
        k = rows[0].astype(np.int64)
        prev = self.loaded_axles
        if prev is None or k.size != prev.size or any_set(k != prev):  # else the same as before
            self.loaded_axles = k
            self._loaded_vehicle = tr.axle_vehicle[k]
            # the adhesion law of each: positions among them by law
            if len(tr.adhesion_laws) == 1:
                self._loaded_laws = [(tr.adhesion_laws[0], slice(None))] if k.size else []
                self.loaded_law = np.zeros(k.size, dtype=np.int64)
            else:
                self.loaded_law = tr.axle_law[k].astype(np.int64)
                self._loaded_laws = [(tr.adhesion_laws[i],
                                      np.flatnonzero(self.loaded_law == i))
                                     for i in np.unique(self.loaded_law)]
        self.loaded_rows = rows
        self._loaded = rows[2:]

    def mass_equiv_rolling(self) -> np.ndarray:
        """The rolling axles' equivalent mass ``J/r^2`` per vehicle (as of
        :meth:`refresh_modes`)."""
        return self._equiv

    def loaded_vehicle(self) -> np.ndarray:
        """The vehicle of each loaded axle (the columns of :attr:`loaded_rows`)."""
        return self._loaded_vehicle

    def psi(self, v_axle: np.ndarray, axles: np.ndarray | None = None) -> np.ndarray:
        """Adhesion coefficient times rail factor at axle speeds ``v_axle``, for all axles
        (or for the listed ``axles``, ``v_axle`` then being their speeds)."""
        tr = self.train
        if len(tr.adhesion_laws) == 1:
            out = tr.adhesion_laws[0](v_axle)
        else:
            law_of = tr.axle_law if axles is None else tr.axle_law[axles]
            out = np.empty(len(law_of))
            for i, law in enumerate(tr.adhesion_laws):
                sel = law_of == i
                if sel.any():
                    out[sel] = law(v_axle[sel])
        return out * (self.rail_factor if axles is None else self.rail_factor[axles])

    def start_step(self, y: np.ndarray) -> None:
        """Hold each slipping axle's spin direction for the coming steps."""
        self.spin = np.sign(y[self.somega])

    def commit(self, y: np.ndarray) -> None:
        """After each accepted step: as :meth:`start_step`, where an axle slips (only the
        slipping axles' directions are read, and an axle starts slipping at an event,
        after which the integrator calls :meth:`start_step`; a long train's every call of
        the compiled loop took the signs of some 40,000 spins)."""
        if self.slipping.size:
            self.spin = np.sign(y[self.somega])

    # ------------------------------------------------------------------- rhs
    def forces(self, t: float, y: np.ndarray, loads: Loads) -> None:
        if not self.slipping.size:
            return
        tr, k = self.train, self.slipping
        veh = tr.axle_vehicle[k]
        v = y[self.bodies.sv]
        s = y[self.somega][k] * tr.axle_radius[k] - v[veh]
        x = s / tr.creep_slip[k]
        # A slipping axle demands more than adhesion gives, so inside the creep peak
        # its contact is saturated (full psi N); beyond it, the creep law falls off.
        ratio = np.where(np.abs(x) <= 1.0, np.sign(x),
                         adhesion.creep_ratio_unchecked(x, tr.kinetic_ratio[k]))
        cap = self.psi(v[veh], k) * tr.axle_normal[k]
        rail = cap * ratio
        locked = self.spin[k] == 0.0
        if locked.any():
            # A locked wheel is friction at the rail: against the vehicle's motion and,
            # at rest, holding it up to the adhesion peak. As a signed force it would
            # vanish at v = 0 and flip as v passes zero, so a vehicle pushed against its
            # locked wheels would stop and slide off again at one instant, for ever.
            peak = np.where(np.abs(x) <= 1.0, 1.0, np.abs(ratio))
            held = np.bincount(veh[locked], (cap * peak)[locked], tr.count)
            loads.resist += held
            loads.rail_resist = held
            loads.force += np.bincount(veh[~locked], rail[~locked], tr.count)
        else:
            loads.force += np.bincount(veh, rail, tr.count)
        loads.rail = (k, rail)

    def rates(self, t: float, y: np.ndarray, loads: Loads, dy: np.ndarray) -> None:
        # a rolling axle's spin and angle are not integrated: zero rates, and
        # fill() reads them off the body after each step
        dy[self.sphi] = 0.0
        dy[self.somega] = 0.0
        if loads.rail is None:
            return
        tr = self.train
        omega = y[self.somega]
        k, rail = loads.rail  # the slipping axles, and the rail's force on each
        dy[self.sphi.start + k] = omega[k]
        drive = self.axle_torque[k] - rail * tr.axle_radius[k]
        direction = np.where(self.spin[k] != 0.0, self.spin[k], omega[k])
        dy[self.somega.start + k] = (coulomb_net(drive, self.axle_brake[k], direction)
                                     / tr.axle_inertia[k])

    def fill(self, y0: np.ndarray, y: np.ndarray) -> None:
        """Write the rolling axles' spins and angles into ``y``, a step (or part of one) on
        from ``y0`` (see :func:`fill_rolling`)."""
        if self._rolling_axles.size:
            fill_rolling(y0, y, self._rolling_axles, self.train.axle_vehicle, self._inv_radius,
                         self.bodies.sx.start, self.bodies.sv.start, self.sphi.start,
                         self.somega.start)

    # ---------------------------------------------------------------- events
    def required_rail_force(self, y: np.ndarray, f: np.ndarray,
                            axles: np.ndarray | None = None) -> np.ndarray:
        """Tangential rail force rolling axles must transmit, from their torques and inertia
        (all axles, or the listed ones)."""
        tr = self.train
        k = slice(None) if axles is None else axles
        veh = tr.axle_vehicle[k]
        sv = self.bodies.sv
        v, a = y[sv][veh], f[sv][veh]
        return _rail_force(np.ascontiguousarray(v, dtype=float),
                           np.ascontiguousarray(a, dtype=float),
                           *(np.ascontiguousarray(x[k], dtype=float) for x in (
                               self.axle_torque, self.axle_brake, tr.axle_radius,
                               tr.axle_mass_equiv)))

    def slip_velocity(self, y: np.ndarray, f: np.ndarray | None = None) -> np.ndarray:
        """Slip velocity ``omega r - v`` per axle; rolling axles show their creep slip."""
        tr = self.train
        v = y[self.bodies.sv][tr.axle_vehicle]
        s = y[self.somega] * tr.axle_radius - v
        if f is not None and self.rolling.any():
            need = self.required_rail_force(y, f)
            cap = self.psi(v) * tr.axle_normal
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.clip(np.where(cap > 0, need / cap, 0.0), -1.0, 1.0)
            creep = adhesion.creep_slip_for_ratio(ratio, 1.0) * tr.creep_slip
            s = np.where(self.rolling, creep, s)
        return s

    def events(self) -> list[EventBlock]:
        return [
            EventBlock("wheel stops", self._spinning, -1, self._lock),
            EventBlock("slip", self._slip_margin, -1, self._start_slip, condition=True),
            EventBlock("re-adhesion", self._readhesion_margin, -1, self._readhere,
                       condition=True),
        ]

    def _event(self, t: float, kind: str, k: int, value: float, detail: str = "") -> None:
        tr = self.train
        self.events_out.append(Event(t, kind, vehicle=int(tr.axle_vehicle[k]),
                                     axle=int(self.axle_in_vehicle[k]), value=float(value),
                                     detail=detail))

    def _spinning(self, t: float, y: np.ndarray, f: np.ndarray) -> np.ndarray | None:
        k = self.slipping
        if not k.size:
            return None
        g = np.ones(self.na)
        g[k] = np.where(self.spin[k] != 0.0, y[self.somega][k] * self.spin[k], 1.0)
        return g

    def _lock(self, t: float, y: np.ndarray, idx: np.ndarray) -> np.ndarray:
        v = y[self.bodies.sv]
        for k in idx:
            self._event(t, "wheel locked", k, v[self.train.axle_vehicle[k]])
        y = y.copy()
        y[self.somega][idx] = 0.0
        self.spin[idx] = 0.0
        return y

    def _slip_margin(self, t: float, y: np.ndarray, f: np.ndarray) -> np.ndarray | None:
        k = self.loaded_axles
        if not k.size:
            return None
        # As psi(v, k) * N - |required_rail_force(y, f, k)|, from the held arrays.
        veh, sv = self._loaded_vehicle, self.bodies.sv
        v, a = y[sv][veh], f[sv][veh]
        torque, brake_max, r, mass_equiv, rail, normal = self._loaded
        if len(self._loaded_laws) == 1:
            psi = self._loaded_laws[0][0](v)
        else:
            psi = np.empty(k.size)
            for law, at in self._loaded_laws:
                psi[at] = law(v[at])
        return _margins(self.na, k, v, a, psi, rail, normal, torque, brake_max, r, mass_equiv)

    def _start_slip(self, t: float, y: np.ndarray, idx: np.ndarray) -> np.ndarray:
        tr = self.train
        need = self.required_rail_force(y, self.rhs(t, y), idx)
        # Decline axles that need no more than adhesion gives where the event landed: a
        # braked axle's demand jumps from the full brake to the static hold as its
        # vehicle stops, so a crossing found just before the stop can be gone at it.
        veh = tr.axle_vehicle[idx]
        cap = self.psi(y[self.bodies.sv][veh], idx) * tr.axle_normal[idx]
        brink = (np.abs(need) <= cap) & (y[self.bodies.sv][veh] == 0.0)
        if brink.any() and self.loads_at is not None:
            # At rest a held vehicle's demand is constant, so a crossing located there is
            # the vehicle moving off (its push reaching its hold): from then on its brakes
            # act against the push.
            d = np.sign(self.loads_at(t, y).force[veh[brink]])
            kb = idx[brink]
            need[brink] = np.where(d != 0.0, (self.axle_torque[kb] - self.axle_brake[kb] * d)
                                   / tr.axle_radius[kb], need[brink])
        over = np.abs(need) > cap
        idx, need = idx[over], need[over]
        if not idx.size:
            return y
        y = y.copy()
        v = y[self.bodies.sv][tr.axle_vehicle[idx]]
        y[self.somega][idx] = (v + tr.creep_slip[idx] * np.sign(need)) / tr.axle_radius[idx]
        self.rolling[idx] = False
        for k, n in zip(idx, need, strict=True):
            self._event(t, "slip" if n > 0 else "slide", k, abs(n), f"{abs(n):.0f} N demanded")
        self.on_modes_changed()
        return y

    def _readhesion_margin(self, t: float, y: np.ndarray, f: np.ndarray) -> np.ndarray | None:
        k = self.slipping
        if not k.size:
            return None
        tr = self.train
        s = y[self.somega][k] * tr.axle_radius[k] - y[self.bodies.sv][tr.axle_vehicle[k]]
        g = np.ones(self.na)
        g[k] = np.abs(s) - tr.creep_slip[k]
        return g

    def _readhere(self, t: float, y: np.ndarray, idx: np.ndarray) -> np.ndarray:
        # Only where rolling would ask no more of the rail than adhesion gives: a
        # wheel locked by a brake stronger than adhesion slides on until the stop.
        tr = self.train
        f = self.rhs(t, y)
        veh = tr.axle_vehicle[idx]
        cap = self.psi(y[self.bodies.sv][veh], idx) * tr.axle_normal[idx]
        idx = idx[np.abs(self.required_rail_force(y, f, idx)) <= cap]
        if not idx.size:
            return y
        y = y.copy()
        s = y[self.somega][idx] * tr.axle_radius[idx] - y[self.bodies.sv][tr.axle_vehicle[idx]]
        y[self.somega][idx] = y[self.bodies.sv][tr.axle_vehicle[idx]] / tr.axle_radius[idx]
        self.rolling[idx] = True
        for k, sk in zip(idx, s, strict=True):
            self._event(t, "re-adhesion", k, sk)
        self.on_modes_changed()
        return y

    def stop_with_vehicles(self, y: np.ndarray, vehicles: np.ndarray) -> None:
        """Rolling wheels of vehicles that have just stopped stop with them."""
        axles = np.isin(self.train.axle_vehicle, vehicles) & self.rolling
        y[self.somega][axles] = 0.0

    # --------------------------------------------------------------- signals
    def signals(self) -> dict[str, Signal]:
        tr = self.train

        def max_slip(y, loads):
            f = np.zeros_like(y)
            f[self.bodies.sv] = loads.accel
            slip = np.abs(self.slip_velocity(y, f))
            out = np.zeros(tr.count)
            np.maximum.at(out, tr.axle_vehicle, slip)
            return out

        return {"max_slip_mps": ("vehicle", "m/s", max_slip)}
