"""LevelLoco: a locomotive driven by speed levels, as a model-railway decoder drives one.

The control ``level`` (0 .. ``levels``) selects a target speed ``level *
speed_step``. Towards a higher target the drive accelerates at ``acceleration``,
towards a lower one (and to a stop at level 0) it brakes at ``deceleration``.
The force is what the vehicle's own inertia (body and rolling wheelsets) plus
``hauled_mass`` needs for that acceleration, so a lone LevelLoco on level track
without resistance moves with exactly these constant accelerations: the
kinematic model of seed 002, which makes it the test vehicle for calibration
(:mod:`rrscore.calibration`). Within the last control step before the target
the acceleration is cut to land on the target speed at the end of that step.

Traction is a force on the body (``Q_a[:, 0]``) and braking a body resistance
(``Q_r[:, 0]``), so the wheels never slip and a train at level 0 stands still.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rrscore import Param, VehicleModel, hookimpl


class LevelLoco(VehicleModel):
    """Locomotive with speed levels and constant acceleration and deceleration."""

    type_name = "level_loco"
    description = "speed levels with constant acceleration/deceleration (calibration tests)"
    params = {
        "speed_step": Param("m/s", 2.0, "target speed per level", min=0.0, exclusive_min=True),
        "levels": Param(kind=int, default=14, doc="highest level", min=1),
        "acceleration": Param("m/s^2", 0.3, "acceleration towards a higher level's speed",
                              min=0.0, exclusive_min=True),
        "deceleration": Param("m/s^2", 0.5, "deceleration towards a lower level's speed",
                              min=0.0, exclusive_min=True),
        "hauled_mass": Param("kg", 0.0, "mass of the train behind, which the drive's force "
                             "allows for (running resistance is not allowed for)", min=0.0),
    }
    keys = {"level_up": "one level up per press", "level_down": "one level down per press"}
    key_bindings = {"level_up": "w", "level_down": "s"}
    controls = {"level": "speed level, 0 (stop) .. levels (held until changed)"}
    # The top level is a parameter, so only the bottom is declared here.
    control_ranges = {"level": (0.0, float("inf"))}
    signals = {"level": "speed level in force", "target_speed_mps": "speed of that level"}

    def __init__(self, vehicles: list[dict[str, Any]], *args: Any, **kwargs: Any) -> None:
        super().__init__(vehicles, *args, **kwargs)
        # rolling wheelsets add J/r^2 each to the inertia the drive has to move
        inertia = np.array([v["wheelset_inertia"] for v in vehicles])
        self.inertial_mass = self.mass + self.num_axis * inertia / self.wheel_radius ** 2

    def setup(self) -> None:
        self.level = np.zeros(self.count)

    def on_key(self, key: str, rows: np.ndarray, pressed: bool) -> None:
        if pressed:
            self.level[rows] += 1 if key == "level_up" else -1

    def step(self, t: float, dt: float) -> None:
        p = self.p
        self.level = np.clip(np.round(self.level), 0, p.levels)
        target = self.level * p.speed_step
        accel = np.clip((target - self.v) / dt, -p.deceleration, p.acceleration)
        force = (self.inertial_mass + p.hauled_mass) * accel
        self.Q_a[:, 0] = np.maximum(force, 0.0)
        self.Q_r[:, 0] = np.maximum(-force, 0.0)
        self.out["level"] = self.level
        self.out["target_speed_mps"] = target


@hookimpl
def rrs_vehicle_types():
    """LevelLoco, for vehicle configs with ``type = "level_loco"``."""
    return [LevelLoco]
