"""Freight car: no traction; main resistance from its config (Russian rules by axle load),
a hand brake and wheel chocks that the driver program can set."""

from __future__ import annotations

import numpy as np

from rrscore import Param, VehicleModel, hookimpl
from rrscore.units import G


def freight_car_step(t, dt, x, v, f, q_a, q_r):
    """:meth:`FreightCar.step` vehicle by vehicle, for the compiled loop: the same
    arithmetic, so the same values to the bit. ``f``: hand brake, chocks, the hand brake's
    force, the chock's friction, wheel radius and mass (``FreightCar.step_fields``)."""
    n, k = v.size, q_a.shape[1] - 1
    idle = True  # nothing applied and nothing left to release: Q_r stays as it is
    for i in range(n):
        idle = idle and f[0, i] == 0.0 and f[1, i] == 0.0
        for j in range(k + 1):
            idle = idle and q_r[i, j] == 0.0
    if idle:
        return 0
    for i in range(n):
        torque = min(max(f[0, i], 0.0), 1.0) * f[2, i] * f[4, i]
        for j in range(1, k + 1):
            q_r[i, j] = torque / k
        axle_load = f[5, i] * G / k
        q_r[i, 0] = (1.0 if f[1, i] > 0.0 else 0.0) * f[3, i] * axle_load
    return 0


class FreightCar(VehicleModel):
    """Unpowered freight car with a hand (parking) brake and wheel chocks.

    A wheel chock (a skid under one wheelset) holds a standing car against any push up
    to the friction it gives, and a car that runs onto it slides the skid along the rail
    at that friction: ``chock_friction`` times the load on one axle, ``m g /
    num_axis``, opposing the motion (a Coulomb resistance on the body, like the hand
    brake). The chocked wheelset is still taken as rolling with the others; its spin
    energy, ``J/r^2`` against the car's mass (0.4 % for a loaded four-axle car), goes
    into the skid's work as the car stops.
    """

    type_name = "freight_car"
    description = "unpowered freight car with a hand brake and wheel chocks"
    params = {
        "hand_brake_force": Param("N", 60e3, "brake force at the rail with the hand brake on",
                                  min=0.0),
        "chock_friction": Param(default=0.2, doc="friction of a wheel chock (skid) sliding "
                                "on the rail, times the load of one axle", min=0.0),
    }
    controls = {"hand_brake": "hand brake application, 0 (off) .. 1 (on)",
                "chocks": "wheel chocks under the car: 0 (none) or 1 (one wheelset)"}
    control_ranges = {"hand_brake": (0.0, 1.0), "chocks": (0.0, 1.0)}

    def setup(self) -> None:
        self.hand_brake = np.zeros(self.count)
        self.chocks = np.zeros(self.count)

    def step(self, t: float, dt: float) -> None:
        # np.count_nonzero, not .any(): a fifth of the cost, at every control step
        if not (np.count_nonzero(self.hand_brake) or np.count_nonzero(self.chocks)
                or np.count_nonzero(self.Q_r)):
            return  # nothing applied and nothing left to release: Q_r stays zero
        torque = np.clip(self.hand_brake, 0.0, 1.0) * self.p.hand_brake_force * self.wheel_radius
        self.Q_r[:, 1:] = (torque / self.num_axis)[:, None]
        axle_load = self.mass * G / self.num_axis
        self.Q_r[:, 0] = (self.chocks > 0.0) * self.p.chock_friction * axle_load

    # step, compiled and run inside the step loop by the framework
    step_kernel = staticmethod(freight_car_step)
    step_fields = ("hand_brake", "chocks", "p.hand_brake_force", "p.chock_friction",
                   "wheel_radius", "mass")


@hookimpl
def rrs_vehicle_types():
    """The freight car, for vehicle configs with ``type = "freight_car"``."""
    return [FreightCar]
