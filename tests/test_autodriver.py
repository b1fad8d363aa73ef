"""The built-in driver: holding the limits, braking ahead of lower ones, stopping at a point."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import CONFIGS, car_config

from rrscore.config import Context
from rrscore.errors import ConfigError
from rrscore.scenario import scenario_from_table
from rrscore.simulation import Drive

LOCO = "vehicles/simple_loco.toml"


def _scenario(elements, cars, autodriver, points=(), **sections):
    table = {
        "train": {"vehicles": [{"config": LOCO},
                               {"config": "vehicles/freight_car_4axle.toml", "count": cars}],
                  "coupling": {"model": "spring_damper",
                               "params": {"stiffness": "20 MN/m", "damping": "200 kN*s/m",
                                          "slack": "11 mm"}}},
        "route": {"elements": elements, "points": list(points)},
        "autodriver": {"mode": "hold_limit", **autodriver},
        "output": {"sample_interval": 1.0},
        **sections,
    }
    return scenario_from_table(table, Context("<test>", "scenario", CONFIGS))


def _drive(sc):
    r = Drive(sc).run()
    s = r.series
    front = s["position_m"] + sc.train.half_length[0]
    return r, s["time_s"], front, s["speed_mps"]


def test_holds_the_limit_within_its_band_on_a_level_line():
    # 60 km/h with the default 1 m/s margin: once there, the speed stays between the
    # target less 0.3 m/s and the limit
    sc = _scenario([{"length": "20 km", "speed_limit": "60 km/h"}], 20, {},
                   start={"position": "1 km"}, stop={"max_time": "900 s"})
    _, t, _, v = _drive(sc)
    limit, target = 60 / 3.6, 60 / 3.6 - 1.0
    reached = np.argmax(v >= target - 0.3)
    assert reached > 0 and t[reached] < 600.0
    held = v[reached:]
    assert held.max() <= limit and held.min() >= target - 0.3


def test_brakes_ahead_of_a_lower_limit_and_speeds_up_when_the_rear_has_left_it():
    # 80 km/h, then 40 km/h over 1 km, then 80 again; the speed at the front never
    # exceeds the limit where the front is, and the train speeds up only once its rear
    # (about 300 m behind the front) has left the 40 km/h stretch
    elements = [{"length": "6 km", "speed_limit": "80 km/h"},
                {"length": "1 km", "speed_limit": "40 km/h"},
                {"length": "5 km", "speed_limit": "80 km/h"}]
    sc = _scenario(elements, 20, {"braking_deceleration": "0.1 m/s^2"},
                   start={"position": "500 m", "speed": "75 km/h"},
                   stop={"max_time": "700 s"})
    _, _, front, v = _drive(sc)
    limit = np.where((front > 6000) & (front < 7000), 40 / 3.6, 80 / 3.6)
    assert (v <= limit + 1e-9).all()
    rear = front - 2 * sc.train.half_length.sum()  # the train's length, slack aside
    slow = (rear > 5600) & (rear < 7000)  # the rear still on the 40 km/h stretch (or near)
    assert v[slow & (front > 6000)].max() <= 40 / 3.6 + 1e-9


@pytest.mark.parametrize("cars", [5, 20])
@pytest.mark.parametrize("speed_kmh", [40, 60, 80])
def test_stops_at_the_named_point(cars, speed_kmh):
    # cruising at the given speed, the train brakes on its curve and its front stops
    # within the tolerance (10 m) of the point
    sc = _scenario([{"length": "10 km", "speed_limit": "100 km/h"}], cars,
                   {"speed": f"{speed_kmh} km/h", "stop_at": "B",
                    "braking_deceleration": "0.1 m/s^2"},
                   points=[{"name": "B", "position": "4 km"}],
                   start={"position": "500 m", "speed": f"{speed_kmh - 1} km/h"},
                   stop={"max_time": "900 s", "standstill": True})
    r, _, front, v = _drive(sc)
    assert r.summary["stop_reason"] == "standstill"
    assert abs(front[-1] - 4000.0) <= 10.0
    assert v.max() <= speed_kmh / 3.6 + 0.3  # the cruising speed is a target, held to 0.3


def test_a_program_action_switches_the_driver_off_and_takes_over():
    sc = _scenario([{"length": "10 km"}], 5, {},
                   driver=[{"at_time": "60 s", "autodriver": False,
                            "set": {"traction_level": 0.0}}],
                   start={"position": "1 km"}, stop={"max_time": "120 s"})
    r, t, _, v = _drive(sc)
    # accelerating under the built-in driver, coasting (no traction) after 60 s
    assert v[t == 60.0][0] > v[t == 30.0][0] > 0.0
    traction = r.series["traction_force_N"]
    assert traction[t == 59.0][0] > 0.0 and (traction[t >= 60.0] == 0.0).all()
    assert v[-1] < v[t == 61.0][0]


def test_stop_point_must_be_a_point_of_the_route():
    with pytest.raises(ConfigError) as err:
        _scenario([{"length": "10 km"}], 5, {"stop_at": "nowhere"})
    assert err.value.key == "scenario.autodriver.stop_at"


def test_a_train_without_a_traction_control_is_refused():
    table = {"train": {"vehicles": [{"config": car_config()}]},
             "route": {"elements": [{"length": "1 km"}]},
             "autodriver": {"mode": "hold_limit"}}
    with pytest.raises(ConfigError) as err:
        scenario_from_table(table, Context("<test>", "scenario", CONFIGS))
    assert err.value.key == "scenario.autodriver.mode" and "traction_level" in err.value.message


def test_the_readme_demo_keeps_to_the_limits_and_stops_at_b():
    from rrscore.scenario import load_scenario

    sc = load_scenario(CONFIGS / "scenarios" / "freight_50.toml")
    r, _, front, v = _drive(sc)
    limit = np.array([sc.route.speed_limit(x) for x in front])
    assert (v <= limit).all()
    assert r.summary["stop_reason"] == "standstill"
    assert abs(front[-1] - sc.route.points["B"]) <= 10.0
