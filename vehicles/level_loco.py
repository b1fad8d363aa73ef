"""LevelLoco: a locomotive driven by speed levels, as a model-railway decoder drives one.

The control ``level`` (0 .. ``levels``) selects a target speed ``level * speed_step``.
Towards a higher target the drive accelerates at ``acceleration``, towards a lower one
(and to a stop at level 0) it brakes at ``deceleration``. The force is what the
vehicle's own inertia (body and rolling wheelsets) plus ``hauled_mass`` needs for that
acceleration, so a lone LevelLoco on level track without resistance moves with exactly
these constant accelerations: the kinematic model of seed 002, which makes it the test
vehicle for calibration (:mod:`rrscore.calibration`). Within the last control step before
the target the acceleration is cut to land on the target speed at the end of that step.

Traction is a force on the body (``q_a[:, 0]``) and braking a body resistance
(``q_r[:, 0]``), so the wheels never slip and a train at level 0 stands still.
"""

from __future__ import annotations

from rrscore import Control, Param, VehicleModel, hookimpl


def step(t, dt, veh):  # pragma: no cover (compiled)
    """The force towards the level's speed, at the set acceleration or deceleration."""
    for i in range(veh.count):
        level = min(max(float(round(veh.level[i])), 0.0), veh.levels[i])
        veh.level[i] = level
        target = level * veh.speed_step[i]
        accel = min(max((target - veh.v[i]) / dt, -veh.deceleration[i]), veh.acceleration[i])
        # rolling wheelsets add J/r^2 each to the inertia the drive has to move
        inertia = veh.mass[i] + veh.axles * veh.wheelset_inertia[i] / veh.wheel_radius[i] ** 2
        force = (inertia + veh.hauled_mass[i]) * accel
        veh.q_a[i, 0] = max(force, 0.0)
        veh.q_r[i, 0] = max(-force, 0.0)
        veh.target_speed_mps[i] = target


def on_input(veh, i, name, value):  # pragma: no cover (compiled)
    """A level key pressed moves the level by one."""
    if value != 0.0:
        if name == "level_up":
            veh.level[i] += 1.0
        elif name == "level_down":
            veh.level[i] -= 1.0


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
    notch_keys = ("level_up", "level_down")  # a cab stroke is one level
    # The top level is a parameter, so only the bottom is declared here.
    controls = {"level": Control("speed level, 0 (stop) .. levels (held until changed)",
                                 0.0, float("inf"))}
    signals = {"level": "speed level in force", "target_speed_mps": "speed of that level"}
    step = staticmethod(step)
    on_input = staticmethod(on_input)


@hookimpl
def rrs_vehicle_types():
    """LevelLoco, for vehicle configs with ``type = "level_loco"``."""
    return [LevelLoco]
