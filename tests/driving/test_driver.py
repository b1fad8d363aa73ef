"""The driver program: ramps of controls and speed-triggered actions."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_scenario

from rrscore import Drive
from rrscore.model.errors import ConfigError

LOCO = {"config": "vehicles/simple_loco.toml"}
CARS = {"config": "vehicles/freight_car_4axle.toml", "count": 5}


def _run(driver, max_time=80.0, sample=0.05, **sections):
    sc = make_scenario([LOCO, CARS], driver=driver, start={"position": "1 km"},
                       stop={"max_time": max_time},
                       output={"sample_interval": sample, "vehicles": [0],
                               "vehicle_signals": ["traction_level"]}, **sections)
    return Drive(sc).run().series


def test_a_ramp_over_time_moves_the_control_linearly_to_its_value():
    # 0 -> 0.8 over 20 s from t = 10 s: 0.04 per second, sampled at the control steps
    s = _run([{"at_time": "10 s", "set": {"traction_level": 0.8}, "ramp_time": "20 s"}])
    t, level = s["time_s"], s["v0_traction_level"]
    ramp = (t >= 10.0) & (t <= 30.0)
    np.testing.assert_allclose(level[ramp], 0.04 * (t[ramp] - 10.0), atol=1e-9)
    assert (level[t < 10.0] == 0.0).all() and (level[t > 30.0] == 0.8).all()


def test_a_ramp_over_distance_reaches_its_value_where_the_front_has_run_it():
    s = _run([{"at_time": "0 s", "set": {"traction_level": 0.5}},
              {"at_time": "20 s", "set": {"traction_level": 1.0}, "ramp_distance": "100 m"}],
             max_time=60.0)
    front, level, t = s["front_m"], s["v0_traction_level"], s["time_s"]
    x0 = np.interp(20.0, t, front)
    during = (t > 20.0) & (front - x0 < 100.0 - 2.0)
    # level = 0.5 + 0.5 * run / 100 m, to within what the front runs in a control step
    np.testing.assert_allclose(level[during], 0.5 + 0.5 * (front[during] - x0) / 100.0,
                               atol=0.5 * 0.05 * s["speed_mps"].max() / 100.0 + 1e-9)
    assert level[front - x0 > 100.0 + 2.0].min() == 1.0


def test_speed_triggers_fire_when_the_lead_reaches_the_speed():
    # full traction until 30 km/h, then coast; the brake goes on below 25 km/h
    s = _run([{"at_time": "0 s", "set": {"traction_level": 1.0}},
              {"at_speed_above": "30 km/h", "set": {"traction_level": 0.0}},
              {"at_speed_below": "29 km/h", "set": {"brake_level": 1.0}}], max_time=120.0)
    v, level = s["speed_mps"], s["v0_traction_level"]
    off = np.argmax(level == 0.0)
    assert v[off] >= 30 / 3.6 and v[off - 1] < 30 / 3.6 + 0.05  # at the control step
    assert v.max() < 30 / 3.6 + 0.1
    assert s["speed_mps"][-1] < 1.0  # braked down after it fell below 29 km/h


@pytest.mark.parametrize(("action", "key", "words"), [
    ({"at_time": 0.0, "at_speed_above": 3.0, "set": {"traction_level": 1.0}},
     "scenario.driver[0]", "exactly one of"),
    ({"at_time": 0.0, "press": "sand", "ramp_time": "3 s"},
     "scenario.driver[0].ramp_time", "without controls"),
    ({"at_time": 0.0, "set": {"traction_level": 1.0}, "ramp_time": 3.0, "ramp_distance": 5.0},
     "scenario.driver[0]", "at most one"),
    ({"at_time": 0.0, "set": {"traction_level": 1.5}},
     "scenario.driver[0].set.traction_level", "expected a value from 0 to 1"),
    ({"at_time": 0.0, "set": {"brake_level": -0.1}},
     "scenario.driver[0].set.brake_level", "expected a value from 0 to 1"),
])
def test_inconsistent_actions_are_config_errors(action, key, words):
    with pytest.raises(ConfigError) as err:
        make_scenario([LOCO], driver=[action])
    assert err.value.key == key and words in err.value.message


@pytest.mark.parametrize(("control", "words"), [
    ({"low": 8.0, "high": 0.0}, "starts at 0.0, outside its range 8.0 to 0.0"),
    ({"low": 0.0, "high": 8.0, "initial": 9.0}, "starts at 9.0, outside its range 0.0 to 8.0"),
])
def test_a_vehicle_type_with_an_inconsistent_control_range_is_refused(control, words):
    from rrscore import Control, VehicleModel
    from rrscore.model.vehicle import check_vehicle_type

    class Bad(VehicleModel):
        type_name = "bad"
        controls = {"notch": Control("throttle notch", **control)}
        step = staticmethod(lambda t, dt, veh: None)

    with pytest.raises(TypeError, match="Bad: control 'notch'") as err:
        check_vehicle_type(Bad)
    assert words in str(err.value)


def test_a_vehicle_type_declaring_a_control_as_something_else_is_refused():
    from rrscore import VehicleModel
    from rrscore.model.vehicle import check_vehicle_type

    class Bad(VehicleModel):
        type_name = "bad"
        controls = {"notch": (0.0, 8.0)}
        step = staticmethod(lambda t, dt, veh: None)

    with pytest.raises(TypeError, match="Bad: control 'notch' is \\(0.0, 8.0\\), expected an "
                       "rrscore.Control or a doc string"):
        check_vehicle_type(Bad)
