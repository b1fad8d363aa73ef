"""Energy accounting: the work of every force, integrated with the motion.

Each flow is a state of its own (per vehicle, the coupler work per coupling),
integrated by the solver from the same forces the motion uses, and left out of
its error control (they feed nothing back). Positive values are energy:

* ``drive``: put in by traction (and taken out by dynamic brakes, negative):
  the rolling axles' torque and body forces times the speed, a slipping
  axle's motor torque times its spin;
* ``brake``: dissipated by friction brakes (shoe or disc torques, ``Q_r``);
* ``resistance``: dissipated by running, curve and starting resistance;
* ``gravity``: work of gravity (minus the change of potential energy);
* ``air``: work of the air force with wind (``air_cd_a``);
* ``slip``: dissipated in the wheel-rail contact of slipping axles;
* ``coupler``: work taken up by each coupling (stored in its springs and
  dissipated in its draft gears).

So that the balance ``drive - brake - resistance + gravity + air - slip -
coupler = change of kinetic energy`` holds to the solver's accuracy, the
kinetic energy including the rotating masses (every axle's ``J omega^2 / 2``).
"""

from __future__ import annotations

import numpy as np

from .bodies import Bodies, coulomb_net
from .component import Component, Loads, Signal
from .state import StateLayout, StateSpec
from .train import Train
from .wheelsets import Wheelsets

#: The flows per vehicle, in the order of their blocks.
FLOWS = ("drive", "brake", "resistance", "gravity", "air", "slip")


def _spec(what: str) -> StateSpec:
    return StateSpec("J", f"energy {what}, cumulative since the start", atol=np.inf,
                     initial=0.0)


_DOCS = {
    "drive": "put in by traction (negative: taken out by an electric brake)",
    "brake": "dissipated by friction brakes",
    "resistance": "dissipated by running, curve and starting resistance",
    "gravity": "work of gravity (the fall of potential energy)",
    "air": "work of the air force relative to the wind",
    "slip": "dissipated in the contact of slipping axles",
}


class EnergyAccount(Component):
    """Cumulative work of each force on each vehicle, and of each coupling."""

    name = "energy"

    def __init__(self, train: Train, bodies: Bodies, wheelsets: Wheelsets) -> None:
        self.train, self.bodies, self.wheelsets = train, bodies, wheelsets
        self.n = train.count

    def declare(self, layout: StateLayout) -> None:
        self.slices = {f: layout.add(f"energy.{f}", _spec(_DOCS[f]), self.n) for f in FLOWS}
        self.coupler = layout.add("energy.coupler",
                                  _spec("taken up by the coupling (springs and draft gear)"),
                                  max(self.n - 1, 0))

    def initial(self, y: np.ndarray) -> None:
        for sl in (*self.slices.values(), self.coupler):
            y[sl] = 0.0

    def rates(self, t: float, y: np.ndarray, loads: Loads, dy: np.ndarray) -> None:
        b, w, tr = self.bodies, self.wheelsets, self.train
        v = y[b.sv]
        speed = np.abs(v)
        drive = b.force_held * v
        brake = b.resist_held * speed
        slip = 0.0
        if loads.rail is not None:  # slipping axles: motor, brake and contact on the wheel
            k, rail = loads.rail
            veh = tr.axle_vehicle[k]
            omega = y[w.somega][k]
            r = tr.axle_radius[k]
            torque = w.axle_torque[k]
            direction = np.where(w.spin[k] != 0.0, w.spin[k], omega)
            applied = (torque - rail * r) - coulomb_net(torque - rail * r, w.axle_brake[k],
                                                        direction)
            drive = drive + np.bincount(veh, torque * omega, self.n)
            brake = brake + np.bincount(veh, applied * omega, self.n)
            slip = np.bincount(veh, rail * (omega * r - v[veh]), self.n)
        dy[self.slices["drive"]] = drive
        dy[self.slices["brake"]] = brake
        resist = loads.resist - b.resist_held
        if loads.rail_resist is not None:  # locked wheels: counted under slip
            resist -= loads.rail_resist
        dy[self.slices["resistance"]] = resist * speed
        dy[self.slices["gravity"]] = loads.gravity * v
        dy[self.slices["air"]] = 0.0 if loads.air is None else loads.air * v
        dy[self.slices["slip"]] = slip
        if self.n > 1:
            dy[self.coupler] = loads.coupler_force * (v[:-1] - v[1:])

    def kinetic(self, y: np.ndarray) -> np.ndarray:
        """Kinetic energy of each vehicle with its axles' rotation, J."""
        tr = self.train
        v = y[self.bodies.sv]
        spin = np.bincount(tr.axle_vehicle,
                           0.5 * tr.axle_inertia * y[self.wheelsets.somega] ** 2, self.n)
        return 0.5 * tr.mass * v * v + spin

    def totals(self, y: np.ndarray) -> dict[str, float]:
        """Train totals of every flow and the kinetic energy, J."""
        out = {f: float(y[sl].sum()) for f, sl in self.slices.items()}
        out["coupler"] = float(y[self.coupler].sum())
        out["kinetic"] = float(self.kinetic(y).sum())
        return out

    def signals(self) -> dict[str, Signal]:
        out: dict[str, Signal] = {
            f"energy_{f}_J": ("vehicle", "J", lambda y, loads, sl=sl: y[sl])
            for f, sl in self.slices.items()}
        out["energy_kinetic_J"] = ("vehicle", "J", lambda y, loads: self.kinetic(y))
        return out
