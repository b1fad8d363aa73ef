"""The drive loop: stop conditions, orientation and sampling."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_scenario

from rrscore import Drive

LOCO = {"config": "vehicles/simple_loco.toml"}
FULL = [{"at_time": 0.0, "set": {"traction_level": 1.0}}]


def test_reversed_locomotive_drives_towards_minus_x():
    sc = make_scenario([{**LOCO, "orientation": "reversed"}], start={"position": "10 km"},
                       driver=FULL, stop={"max_time": 20.0})
    r = Drive(sc).run()
    assert r.series["speed_mps"][-1] < -1.0
    assert r.summary["distance_m"] < -10.0


def test_stop_after_a_distance():
    sc = make_scenario([LOCO], start={"position": "1 km"}, driver=FULL,
                       stop={"max_time": 600.0, "max_distance": "500 m"})
    r = Drive(sc).run()
    assert r.summary["stop_reason"] == "max_distance"
    # stopped at the first control step past 500 m: within one step's travel
    assert 500.0 <= r.summary["distance_m"] < 500.0 + 0.05 * r.summary["final_speed_mps"] + 1e-9


def test_stop_at_a_named_point_and_at_the_end_of_the_route():
    elements = [{"length": "3 km"}]
    sc = make_scenario([LOCO], elements, points=[{"name": "signal", "position": "2 km"}],
                       start={"position": "1 km"}, driver=FULL,
                       stop={"max_time": 600.0, "at_point": "signal"})
    r = Drive(sc).run()
    assert r.summary["stop_reason"] == "at_position"
    front = r.series["position_m"][-1] + 32.8 / 2
    assert front == pytest.approx(2000.0, abs=2.0)
    sc = make_scenario([LOCO], elements, start={"position": "1 km"}, driver=FULL,
                       stop={"max_time": 600.0})
    assert Drive(sc).run().summary["stop_reason"] == "end_of_route"


def test_samples_finer_than_the_control_step_are_taken_on_time():
    sc = make_scenario([LOCO], driver=FULL, stop={"max_time": 1.0},
                       output={"sample_interval": 0.01})
    t = Drive(sc).run().series["time_s"]
    np.testing.assert_allclose(t, np.arange(101) * 0.01, atol=1e-9)
