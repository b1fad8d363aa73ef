"""Route profile lookups against values worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rrscore.config import Context, validate
from rrscore.track import ROUTE_SCHEMA, Route


def _route(elements, points=()):
    cfg = validate({"elements": elements, "points": list(points)}, ROUTE_SCHEMA, Context("t"))
    return Route.from_config(cfg)


def test_grade_is_averaged_over_the_vehicle_length():
    # 1 km level, then 10 per mille up. A 20 m car centred 5 m past the change
    # has 15 m on the grade: mean grade 0.010 * 15/20.
    r = _route([{"length": 1000.0}, {"length": 1000.0, "grade": "10 permille"}])
    g = r.mean_grade(np.array([1005.0, 500.0, 1500.0]), np.array([10.0, 10.0, 10.0]))
    np.testing.assert_allclose(g, [0.0075, 0.0, 0.010], rtol=1e-12, atol=1e-15)


def test_curve_resistance_is_700_over_r_averaged_over_the_length():
    r = _route([{"length": 100.0}, {"length": 100.0, "radius": 350.0}, {"length": 100.0}])
    w = r.mean_curve_specific(np.array([150.0, 100.0, 50.0]), np.array([10.0, 10.0, 10.0]))
    np.testing.assert_allclose(w, [2.0, 1.0, 0.0], rtol=1e-12, atol=1e-15)


def test_elevation_accumulates_grade_times_length():
    r = _route([{"length": 1000.0, "grade": 0.005}, {"length": 2000.0, "grade": -0.002}])
    assert r.elevation(3000.0) == pytest.approx(5.0 - 4.0)
    assert r.length == 3000.0


def test_profile_is_extended_beyond_the_ends_with_the_end_grades():
    r = _route([{"length": 100.0, "grade": 0.01}])
    assert r.mean_grade(np.array([-50.0, 500.0]), np.array([5.0, 5.0])) == pytest.approx(0.01)


def test_speed_limits_and_points():
    r = _route([{"length": 100.0, "speed_limit": "60 km/h"}, {"length": 100.0}],
               [{"name": "signal 1", "position": "150 m"}])
    assert r.speed_limit(50.0) == pytest.approx(60 / 3.6)
    assert math.isinf(r.speed_limit(150.0))
    assert r.position_of("signal 1") == 150.0
