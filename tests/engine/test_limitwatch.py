"""The speed-limit watch against exceedances worked out by hand: on hand-made series
(the detector alone) and in a drive slowing at a constant rate through a limit."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import car_config, make_scenario

from rrscore.engine.limitwatch import (
    SPEED_TOLERANCE,
    exceedance_note,
    exceedance_totals,
    exceedances,
    limit_watch,
    watch_series,
)
from rrscore.run.run import Run

KMH = 1 / 3.6


def _watch(limits_kmh, length=1000.0):
    n = len(limits_kmh)
    return limit_watch(np.arange(n) * length, np.full(n, length),
                       np.array(limits_kmh, dtype=float) * KMH)


def test_a_speed_rising_and_falling_through_a_limit_is_one_exceedance_found_exactly():
    # 50 km/h limit; the speed rises at 0.1 m/s^2 from 13 m/s, then falls at 0.1 m/s^2 from
    # t = 20 s: above 13.889 m/s from t = 8.889 s to 31.111 s, 0.889 m/s (3.2 km/h) at most.
    # Checks every 0.5 s, which do not fall on the crossings: the linear interpolation
    # finds them all the same (the speed is linear between checks).
    t = np.arange(0.0, 40.01, 0.5)
    v = np.where(t <= 20.0, 13.0 + 0.1 * t, 15.0 - 0.1 * (t - 20.0))
    front = 100.0 + np.concatenate([[0.0], np.cumsum(0.5 * (v[1:] + v[:-1]) * 0.5)])
    w = _watch([50.0, 50.0])
    watch_series(w, t, front, front - 300.0, v)
    (one,) = exceedances(w, float(t[-1]), float(front[-1]))
    limit = 50 * KMH
    start, end = (limit - 13.0) / 0.1, 20.0 + (15.0 - limit) / 0.1
    assert one["start_time_s"] == pytest.approx(start, abs=1e-9)
    assert one["end_time_s"] == pytest.approx(end, abs=1e-9)
    assert one["time_s"] == pytest.approx(end - start, abs=1e-9)
    assert one["max_excess_mps"] == pytest.approx(15.0 - limit, abs=1e-12)
    assert one["max_excess_kmh"] == pytest.approx(54.0 - 50.0, abs=1e-9)
    assert one["limit_kmh"] == pytest.approx(50.0)
    assert one["end"] == "speed back within the limit"
    # the distance: the front's travel between the crossings (trapezoids are exact on a
    # linear speed; the crossing lies within a check interval: linear in position too,
    # to the speed's change across half a second)
    travel = (limit + 15.0) / 2 * (20.0 - start) + (15.0 + limit) / 2 * (end - 20.0)
    assert one["distance_m"] == pytest.approx(travel, abs=0.05)
    assert exceedance_totals(w) == (1, pytest.approx(15.0 - limit))


def test_a_train_keeps_a_lower_limit_until_its_rear_has_left_it():
    # Elements of 1 km at 40 and 80 km/h; a 300 m train at 60 km/h: over the limit until
    # its rear passes 1000 m, whatever its front does. Its element is the first (index 0).
    v = 60 * KMH
    t = np.arange(0.0, 100.0, 0.25)
    front = 900.0 + v * t
    w = _watch([40.0, 80.0])
    watch_series(w, t, front, front - 300.0, np.full(t.size, v))
    (one,) = exceedances(w, float(t[-1]), float(front[-1]))
    assert one["start_time_s"] == 0.0
    assert one["element"] == 0
    assert one["end_position_m"] == pytest.approx(1300.0, abs=v * 0.25)
    assert one["max_excess_kmh"] == pytest.approx(20.0)


def test_a_brush_with_the_limit_below_the_tolerance_is_not_an_exceedance():
    t = np.arange(0.0, 10.0, 0.1)
    v = 50 * KMH + 0.5 * SPEED_TOLERANCE * np.sin(t)
    front = 100.0 + 50 * KMH * t
    w = _watch([50.0])
    watch_series(w, t, front, front - 100.0, v)
    assert exceedances(w, 10.0, 300.0) == []
    assert exceedance_totals(w) == (0, 0.0)


def test_a_route_without_limits_is_never_exceeded():
    t = np.arange(0.0, 10.0, 0.1)
    w = _watch([0.0, 0.0])
    watch_series(w, t, 100 + 40 * t, 40 * t, np.full(t.size, 40.0))
    assert exceedances(w, 10.0, 500.0) == []


# A car slowing on its Davis A term alone (no speed terms, no starting resistance): a
# constant deceleration A / (m + 4 J / r^2).
A, MASS, J, R = 9250.0, 92.5e3, 96.0, 0.957 / 2
DECEL = A / (MASS + 4 * J / R**2)


def test_a_drive_started_above_its_limit_reports_the_exceedance_worked_out_by_hand():
    # From 60 km/h under a 50 km/h limit: 10 km/h over at the start, back within the
    # limit after (60 - 50) / 3.6 / DECEL seconds, (v0^2 - v1^2) / (2 DECEL) metres on.
    car = car_config(resistance={"formula": "davis", "A": f"{A} N", "B": 0.0, "C": 0.0,
                                 "starting": False})
    run = Run(make_scenario([{"config": car}], [{"length": "5 km", "speed_limit": "50 km/h"}],
                            start={"speed": "60 km/h", "position": "1 km"},
                            stop={"max_time": "60 s"}))
    run.advance()
    summary = run.summary(1.0)
    v0, v1 = 60 * KMH, 50 * KMH
    (one,) = summary["speed_limit_exceedances"]
    assert one["start_time_s"] == 0.0
    assert one["start_position_m"] == pytest.approx(1000.0)
    assert one["max_excess_kmh"] == pytest.approx(10.0, abs=1e-9)
    assert one["time_s"] == pytest.approx((v0 - v1) / DECEL, rel=1e-6)
    assert one["distance_m"] == pytest.approx((v0**2 - v1**2) / (2 * DECEL), rel=1e-4)
    assert one["element"] == 0
    assert summary["speed_limit_exceeded"]["count"] == 1
    assert summary["speed_limit_exceeded"]["max_excess_kmh"] == pytest.approx(10.0)


def test_an_exceedance_still_under_way_at_the_end_is_reported_as_such():
    car = car_config(resistance={"formula": "davis", "A": f"{A} N", "B": 0.0, "C": 0.0,
                                 "starting": False})
    run = Run(make_scenario([{"config": car}], [{"length": "5 km", "speed_limit": "50 km/h"}],
                            start={"speed": "60 km/h"}, stop={"max_time": "10 s"}))
    run.advance()
    (one,) = run.summary(1.0)["speed_limit_exceedances"]
    assert one["end"] == "under way"
    assert one["end_time_s"] == pytest.approx(10.0)
    assert one["time_s"] == pytest.approx(10.0)


@pytest.mark.parametrize(("count", "said"), [(1, "once"), (2, "twice"), (3, "3 times")])
def test_the_one_line_result_names_the_exceedances_and_the_largest(count, said):
    summary = {"speed_limit_exceeded": {"count": count, "max_excess_kmh": 7.24}}
    assert exceedance_note(summary) == (f"; speed limit exceeded {said}, up to 7.2 km/h over "
                                        "(see summary.json)")
    assert exceedance_note({"speed_limit_exceeded": {"count": 0, "max_excess_kmh": 0.0}}) == ""
