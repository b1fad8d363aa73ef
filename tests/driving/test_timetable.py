"""Running to a timetable: the planning profile and the cruising speed against hand-worked
answers, and a drive that keeps its times with less traction energy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import car_config, make_scenario, shipped_drive

from rrscore.driving.timetable import cruising_speed, planning_profile, time_to_go
from rrscore.model.errors import ConfigError
from rrscore.model.track import Route


def _route_table(elements):
    from rrscore.model.config import Context, validate
    from rrscore.model.track import ROUTE_SCHEMA

    return validate({"elements": elements}, ROUTE_SCHEMA, Context("<test>", "route"))


def route(*elements):
    return Route.from_config(_route_table(list(elements)))


def test_cruising_speed_spends_the_time_left_over_the_distance_on_a_uniform_profile():
    r = route({"length": "10 km", "speed_limit": 20.0})
    s, V = planning_profile(r, 0.0, 0.0, 0.5, math.inf, None)
    # 10 km in 1000 s: 10 m/s, below the 20 m/s the profile allows everywhere.
    assert cruising_speed(s, V, 0.0, 10_000.0, 1000.0) == pytest.approx(10.0, rel=1e-12)
    assert time_to_go(s, V, 0.0, 10_000.0, 10.0) == pytest.approx(1000.0, rel=1e-12)


def test_cruising_speed_runs_slow_sections_at_their_own_speed():
    # 2 km limited to 5 m/s take 400 s whatever the cruising speed; 800 s are left for
    # the other 8 km (limit 20 m/s): 10 m/s. No braking curves: a high deceleration.
    r = route({"length": "2 km", "speed_limit": 5.0}, {"length": "8 km", "speed_limit": 20.0})
    s, V = planning_profile(r, 0.0, 0.0, 1e6, math.inf, None)
    assert cruising_speed(s, V, 0.0, 10_000.0, 1200.0) == pytest.approx(10.0, rel=1e-9)
    # Less time than the profile itself needs (400 + 400 s): no speed will do.
    assert cruising_speed(s, V, 0.0, 10_000.0, 790.0) == math.inf


def test_planning_profile_brakes_ahead_of_a_lower_limit_and_holds_it_until_the_rear_leaves():
    r = route({"length": "5 km", "speed_limit": 20.0}, {"length": "1 km", "speed_limit": 10.0},
              {"length": "4 km", "speed_limit": 20.0})
    b, L, margin = 0.5, 500.0, 1.0
    s, V = planning_profile(r, L, margin, b, math.inf, None)
    at = dict(zip(np.round((s[:-1] + s[1:]) / 2, 6), V, strict=True))
    # Braking curve to the 9 m/s (limit less margin) where the limit starts at 5 km; the
    # plan is made at the middles of 10 m cells, so the curve ends in the middle of the
    # first cell under the limit, at 5005 m.
    assert at[4905.0] == pytest.approx(math.sqrt(9.0**2 + 2 * b * 100.0), rel=1e-12)
    assert at[4505.0] == pytest.approx(19.0)  # the curve is above the 19 m/s here
    # The lower limit holds until the rear (500 m behind the front) has left it at 6 km.
    assert at[6495.0] == pytest.approx(9.0)
    assert at[6505.0] == pytest.approx(19.0)


def test_planning_profile_ends_on_the_braking_curve_to_the_stop_point():
    r = route({"length": "10 km", "speed_limit": 30.0})
    s, V = planning_profile(r, 0.0, 0.0, 0.1, math.inf, 8000.0)
    at = dict(zip(np.round((s[:-1] + s[1:]) / 2, 6), V, strict=True))
    assert at[7005.0] == pytest.approx(math.sqrt(2 * 0.1 * 995.0), rel=1e-12)
    assert at[8005.0] == 0.0 and at[9005.0] == 0.0


def test_timetable_drive_keeps_its_times_and_saves_traction_energy():
    tt = shipped_drive("freight_50_timetable")
    fast = shipped_drive("freight_50")
    rows = tt.summary["timetable"]
    assert [r["point"] for r in rows] == ["summit", "B"]
    for r in rows:
        # Each point within 1 % of its due time (the planned reserve is 2 % of the time
        # left; a train still accelerating runs a little behind the plan).
        assert abs(r["arrived_s"] - r["due_s"]) <= 0.01 * r["due_s"], r
    assert tt.summary["stop_reason"] == "standstill"
    # Running slower and coasting where time allows takes less work at the rail than
    # holding the limits, and wastes less in the brakes.
    assert tt.summary["energy"]["drive_J"] < 0.85 * fast.summary["energy"]["drive_J"]
    assert tt.summary["energy"]["brake_J"] < 0.5 * fast.summary["energy"]["brake_J"]
    # And it still keeps the limits and stops at B.
    ts = tt.series
    assert np.all(ts["speed_mps"] <= ts["speed_limit_mps"] + 0.1)


@pytest.mark.parametrize("entries, key, words", [
    ([{"point": "nowhere", "arrive": 100.0}], "timetable[0].point", "expected a point"),
    ([{"point": "B", "arrive": 100.0}, {"point": "A", "arrive": 200.0}], "timetable[1].point",
     "beyond the one before it"),
    ([{"point": "A", "arrive": 200.0}, {"point": "B", "arrive": 100.0}],
     "timetable[1].arrive", "after the one before it"),
])
def test_a_timetable_out_of_order_or_off_the_route_is_a_config_error(entries, key, words):
    with pytest.raises(ConfigError) as err:
        make_scenario([{"config": "vehicles/simple_loco.toml"},
                       {"count": 2, "config": car_config()}],
                      points=[{"name": "A", "position": "1 km"},
                              {"name": "B", "position": "2 km"}],
                      autodriver={"mode": "hold_limit", "timetable": entries})
    assert key in str(err.value) and words in str(err.value)


def test_a_timetable_without_the_built_in_driver_is_a_config_error():
    with pytest.raises(ConfigError, match=r"timetable: found a timetable with mode 'off'"):
        make_scenario([{"config": "vehicles/simple_loco.toml"}],
                      points=[{"name": "A", "position": "1 km"}],
                      autodriver={"timetable": [{"point": "A", "arrive": 60.0}]})


def test_a_timetable_point_beyond_the_stop_point_is_a_config_error():
    with pytest.raises(ConfigError, match=r"timetable\[0\]\.point: found 'B' at 2000 m, "
                       r"beyond the stop point 'A'"):
        make_scenario([{"config": "vehicles/simple_loco.toml"}],
                      points=[{"name": "A", "position": "1 km"},
                              {"name": "B", "position": "2 km"}],
                      autodriver={"mode": "hold_limit", "stop_at": "A",
                                  "timetable": [{"point": "B", "arrive": 60.0}]})
