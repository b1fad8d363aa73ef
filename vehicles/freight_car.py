"""Freight car: no traction; main resistance from its config (Russian rules by axle load)
and a hand brake that the driver program can set."""

from __future__ import annotations

import numpy as np

from rrscore import Param, VehicleModel, hookimpl


class FreightCar(VehicleModel):
    """Unpowered freight car with a hand (parking) brake."""

    type_name = "freight_car"
    description = "unpowered freight car with a hand brake"
    params = {
        "hand_brake_force": Param("N", 60e3, "brake force at the rail with the hand brake on",
                                  min=0.0),
    }
    controls = {"hand_brake": "hand brake application, 0 (off) .. 1 (on)"}
    control_ranges = {"hand_brake": (0.0, 1.0)}

    def setup(self) -> None:
        self.hand_brake = np.zeros(self.count)

    def step(self, t: float, dt: float) -> None:
        torque = np.clip(self.hand_brake, 0.0, 1.0) * self.p.hand_brake_force * self.wheel_radius
        self.Q_r[:, 1:] = (torque / self.num_axis)[:, None]


@hookimpl
def rrs_vehicle_types():
    """The freight car, for vehicle configs with ``type = "freight_car"``."""
    return [FreightCar]
