"""LevelLoco: speed levels reached at the configured constant accelerations."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_scenario

from rrscore.run.drive import Drive

LOCO = {"config": "vehicles/level_loco.toml"}


def _drive(program, max_time, **sections):
    sc = make_scenario([LOCO], driver=[{"at_time": t, "set": {"level": lv}}
                                       for t, lv in program],
                       stop={"max_time": max_time},
                       output={"sample_interval": 0.05, "plots": False}, **sections)
    s = Drive(sc).run().series
    return s["time_s"], s["position_m"] - s["position_m"][0], s["speed_mps"]


def test_speeds_up_at_the_set_acceleration_and_holds_the_level_speed():
    # level 5 = 10 m/s at 0.3 m/s^2: 33.3 s to get there, x = 0.15 t^2 until then
    t, x, v = _drive([(0.0, 5)], 60.0)
    early = t < 30.0
    np.testing.assert_allclose(v[early], 0.3 * t[early], atol=1e-6)
    np.testing.assert_allclose(x[early], 0.15 * t[early] ** 2, atol=1e-5)
    late = t > 34.0
    np.testing.assert_allclose(v[late], 10.0, atol=1e-6)
    # 33.33 s speeding up covers 166.7 m, then 10 m/s
    np.testing.assert_allclose(x[late], 500.0 / 3.0 + 10.0 * (t[late] - 100.0 / 3.0),
                               atol=1e-3)


def test_slows_down_at_the_set_deceleration_and_stands_still_at_level_0():
    # from 10 m/s, level 0 at t = 0: 0.5 m/s^2, 20 s, 100 m
    t, x, v = _drive([(0.0, 0)], 40.0, start={"speed": "10 m/s"})
    early = t < 19.0
    np.testing.assert_allclose(v[early], 10.0 - 0.5 * t[early], atol=1e-6)
    assert x[-1] == pytest.approx(100.0, abs=1e-3)
    assert v[-1] == 0.0


def test_level_keys_step_the_level():
    sc = make_scenario([LOCO], driver=[{"at_time": 0.0, "press": "level_up"},
                                       {"at_time": 0.1, "release": "level_up"},
                                       {"at_time": 0.2, "press": "level_up"}],
                       stop={"max_time": 30.0},
                       output={"vehicles": [0], "vehicle_signals": ["level"], "plots": False})
    s = Drive(sc).run().series
    assert s["v0_level"][-1] == 2.0
    assert s["speed_mps"][-1] == pytest.approx(4.0, abs=1e-9)
