"""SimpleLoco: the locomotive of the RRS tutorial, as an rrscore plugin.

Traction characteristic F(v) = l * Fc(|v|) with the traction level l in [0, 1]:
below the nominal speed the force falls on a straight line from F_max (the
adhesion limit at standstill) to F_nom; above it the drive is at constant
power, Fc = F_nom * V_nom / |v|. The force is split evenly over the axles as
torque F * (D/2) / num_axis. Keys raise and lower the level at a set rate and
apply a simple locomotive brake.
"""

from __future__ import annotations

import numpy as np

from rrscore import Param, VehicleModel, hookimpl


def traction_characteristic(speed, f_max: float, f_nom: float, v_nom: float):
    """Full-level traction force (N) at ``speed`` (m/s), seed 003's two-part curve."""
    s = np.abs(speed)
    line = f_max + (f_nom - f_max) * s / v_nom
    with np.errstate(divide="ignore"):
        hyperbola = f_nom * v_nom / np.where(s > 0, s, 1.0)
    return np.where(s < v_nom, line, hyperbola)


class SimpleLoco(VehicleModel):
    """Locomotive with the seed-003 traction characteristic and a straight brake."""

    type_name = "simple_loco"
    description = "RRS tutorial locomotive: linear + constant-power traction, key-driven"
    params = {
        "F_max": Param("N", 450e3, "traction force at standstill", min=0.0),
        "F_nom": Param("N", 350e3, "traction force at the nominal speed", min=0.0),
        "V_nom": Param("m/s", 80 / 3.6, "nominal speed", min=0.0, exclusive_min=True),
        "traction_rate": Param("1/s", 0.5, "traction level change per second of key hold", min=0),
        "brake_force": Param("N", 300e3, "locomotive brake force at full application", min=0.0),
        "brake_rate": Param("1/s", 1.0, "brake level change per second of key hold", min=0.0),
        "sand_factor": Param(kind=float, default=1.25, doc="adhesion gain while sanding", min=0),
    }
    keys = {
        "traction_up": "raise the traction level while held",
        "traction_down": "lower the traction level while held",
        "brake": "apply the locomotive brake while held; release to release",
        "sand": "sand the rails in front of the wheels while held",
    }
    controls = {"traction_level": "traction level, 0..1", "brake_level": "brake level, 0..1"}
    signals = {"traction_force_N": "traction force demanded", "traction_level": "traction level"}

    def setup(self) -> None:
        self.traction_level = np.zeros(self.count)
        self.brake_level = np.zeros(self.count)

    def step(self, t: float, dt: float) -> None:
        p = self.p
        up = self.key_down("traction_up").astype(float) - self.key_down("traction_down")
        self.traction_level = np.clip(self.traction_level + up * p.traction_rate * dt, 0.0, 1.0)
        brake = np.where(self.key_down("brake"), 1.0, -1.0)
        self.brake_level = np.clip(self.brake_level + brake * p.brake_rate * dt, 0.0, 1.0)

        force = self.traction_level * traction_characteristic(self.v, p.F_max, p.F_nom, p.V_nom)
        self.Q_a[:, 1:] = (force * self.wheel_radius / self.num_axis)[:, None]
        self.Q_r[:, 1:] = (self.brake_level * p.brake_force * self.wheel_radius
                           / self.num_axis)[:, None]
        sanding = self.key_down("sand")[:, None]
        self.adhesion_factor[:] = np.where(sanding, p.sand_factor, 1.0)
        self.out["traction_force_N"] = force
        self.out["traction_level"] = self.traction_level


@hookimpl
def rrs_vehicle_types():
    """SimpleLoco, for vehicle configs with ``type = "simple_loco"``."""
    return [SimpleLoco]
