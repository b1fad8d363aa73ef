"""A diesel shunter with a notched throttle, as an rrscore vehicle plugin."""

import rrscore


def step(t, dt, veh):
    for i in range(veh.count):  # one entry per shunter in the train
        speed = max(abs(veh.v[i]), 0.1)
        force = veh.notch[i] / 8 * min(veh.max_force[i], veh.power[i] / speed)
        for j in range(1, veh.axles + 1):  # torque on each axle
            veh.q_a[i, j] = force * veh.wheel_radius[i] / veh.axles
        veh.force_N[i] = force


def on_input(veh, i, name, value):
    if value != 0.0:  # a key pressed: the throttle a notch up or down
        if name == "notch_up":
            veh.notch[i] = min(veh.notch[i] + 1.0, 8.0)
        elif name == "notch_down":
            veh.notch[i] = max(veh.notch[i] - 1.0, 0.0)


class Shunter(rrscore.VehicleModel):
    type_name = "shunter"
    description = "diesel shunter: 8 throttle notches, constant power at the rail"
    params = {
        "power": rrscore.Param("W", 600e3, "power at the rail, full throttle"),
        "max_force": rrscore.Param("N", 200e3, "starting tractive effort"),
    }
    keys = {"notch_up": "open the throttle a notch", "notch_down": "close it a notch"}
    controls = {"notch": rrscore.Control("throttle notch", low=0.0, high=8.0)}
    signals = {"force_N": "tractive effort"}
    step = staticmethod(step)
    on_input = staticmethod(on_input)


@rrscore.hookimpl
def rrs_vehicle_types():
    return [Shunter]
