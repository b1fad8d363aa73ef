"""A diesel shunter with a notched throttle, as an rrscore vehicle plugin."""

import numpy as np

import rrscore


class Shunter(rrscore.VehicleModel):
    type_name = "shunter"
    description = "diesel shunter: 8 throttle notches, constant power at the rail"
    params = {
        "power": rrscore.Param("W", 600e3, "power at the rail, full throttle"),
        "max_force": rrscore.Param("N", 200e3, "starting tractive effort"),
    }
    keys = {"notch_up": "open the throttle a notch", "notch_down": "close it a notch"}
    controls = {"notch": "throttle notch, 0..8"}
    control_ranges = {"notch": (0.0, 8.0)}
    signals = {"force_N": "tractive effort"}

    def setup(self):
        self.notch = np.zeros(self.count)  # one entry per shunter in the train

    def on_key(self, key, rows, pressed):
        if pressed:
            self.notch[rows] = np.clip(self.notch[rows] + (1 if key == "notch_up" else -1), 0, 8)

    def step(self, t, dt):
        speed = np.maximum(np.abs(self.v), 0.1)
        force = self.notch / 8 * np.minimum(self.p.max_force, self.p.power / speed)
        self.Q_a[:, 1:] = (force * self.wheel_radius / self.num_axis)[:, None]
        self.out["force_N"] = force


@rrscore.hookimpl
def rrs_vehicle_types():
    return [Shunter]
