"""Routes (rrscore.model.track) and their lookups (rrscore.physics.route) against values
worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import CONFIGS

from rrscore.model.config import Context, validate
from rrscore.model.track import CURVE, ELEVATION, ROUTE_SCHEMA, Route
from rrscore.physics.route import elevation, mean_rate


def mean_grade(route, x, half):
    """The mean grade under vehicles centred at ``x``, half as long as ``half``."""
    return mean_rate(route.track, ELEVATION, x, half)


def mean_curve(route, x, half):
    """The mean curve resistance (700/R, N/kN) under those vehicles."""
    return mean_rate(route.track, CURVE, x, half)


def height(route, x):
    """The elevation of the track at ``x``, m, from the route's start."""
    return elevation(route.track, x)


def _route(elements, points=()):
    cfg = validate({"elements": elements, "points": list(points)}, ROUTE_SCHEMA, Context("t"))
    return Route.from_config(cfg)


def test_grade_is_averaged_over_the_vehicle_length():
    # 1 km level, then 10 per mille up. A 20 m car centred 5 m past the change
    # has 15 m on the grade: mean grade 0.010 * 15/20.
    r = _route([{"length": 1000.0}, {"length": 1000.0, "grade": "10 permille"}])
    g = mean_grade(r, np.array([1005.0, 500.0, 1500.0]), np.array([10.0, 10.0, 10.0]))
    np.testing.assert_allclose(g, [0.0075, 0.0, 0.010], rtol=1e-12, atol=1e-15)


def test_curve_resistance_is_700_over_r_averaged_over_the_length():
    r = _route([{"length": 100.0}, {"length": 100.0, "radius": 350.0}, {"length": 100.0}])
    w = mean_curve(r, np.array([150.0, 100.0, 50.0]), np.array([10.0, 10.0, 10.0]))
    np.testing.assert_allclose(w, [2.0, 1.0, 0.0], rtol=1e-12, atol=1e-15)


def test_elevation_accumulates_grade_times_length():
    r = _route([{"length": 1000.0, "grade": 0.005}, {"length": 2000.0, "grade": -0.002}])
    assert height(r, 3000.0) == pytest.approx(5.0 - 4.0)
    assert r.length == 3000.0


def test_profile_is_extended_beyond_the_ends_with_the_end_grades():
    r = _route([{"length": 100.0, "grade": 0.01}])
    assert mean_grade(r, np.array([-50.0, 500.0]), np.array([5.0, 5.0])) == pytest.approx(0.01)


def test_speed_limits_and_points():
    r = _route([{"length": 100.0, "speed_limit": "60 km/h"}, {"length": 100.0}],
               [{"name": "signal 1", "position": "150 m"}])
    assert r.speed_limit(50.0) == pytest.approx(60 / 3.6)
    assert math.isinf(r.speed_limit(150.0))
    assert r.position_of("signal 1") == 150.0


def test_speed_limits_at_many_positions_are_those_at_each():
    r = _route([{"length": 100.0, "speed_limit": "60 km/h"}, {"length": 100.0},
                {"length": 50.0, "speed_limit": "40 km/h"}])
    x = np.array([-10.0, 0.0, 50.0, 100.0, 150.0, 200.0, 249.0, 250.0, 400.0])
    np.testing.assert_array_equal(r.speed_limits_at(x), [r.speed_limit(p) for p in x])


# --- vertical profiles, spirals, degree of curve ---------------------------------------

def _profile_route(points, elements=None, interpolation="linear"):
    table = {"elements": elements or [{"length": "10 km"}],
             "profile": {"interpolation": interpolation, "points": points}}
    return Route.from_config(validate(table, ROUTE_SCHEMA, Context("t")))


def test_uniform_grade_as_a_profile_is_the_grade_as_elements():
    elements = _route([{"length": 4000.0, "grade": "6 permille"}])
    profile = _profile_route([{"position": 0.0, "elevation": 0.0},
                              {"position": 4000.0, "elevation": 24.0}],
                             elements=[{"length": 4000.0}])
    x = np.array([-100.0, 3.0, 1234.5, 3990.0, 4100.0])
    h = np.full(x.size, 7.0)
    np.testing.assert_allclose(mean_grade(profile, x, h), mean_grade(elements, x, h),
                               rtol=1e-12)
    np.testing.assert_allclose(height(profile, x), height(elements, x), atol=1e-9)


def test_grade_points_integrate_to_the_quadratic_elevation():
    # grade rising linearly from 0 to 10 per mille over 1 km: z = 0.01 x^2 / 2000
    r = _profile_route([{"position": 0.0, "grade": 0.0}, {"position": 1000.0, "grade": 0.01}])
    x = np.array([250.0, 500.0, 1000.0, 1500.0])
    np.testing.assert_allclose(height(r, x), [0.3125, 1.25, 5.0, 10.0], rtol=1e-9)
    # a vehicle 20 m long centred at 500 m: the mean of a linear grade is its middle value
    assert mean_grade(r, np.array([500.0]), np.array([10.0]))[0] == pytest.approx(0.005, abs=1e-9)


def test_vertical_curve_gives_the_grade_of_its_parabola():
    # +5 per mille up to the point at 2 km, -3 per mille after it, R = 10 km:
    # the curve is R |g2 - g1| = 80 m long, centred on the point, and its grade falls
    # linearly from g1 to g2 along it; its top lies 8 mm below the point (Lc dg / 8).
    g1, g2, R = 0.005, -0.003, 10_000.0
    r = _profile_route([{"position": 0.0, "elevation": 0.0},
                        {"position": 2000.0, "elevation": 10.0, "vertical_curve_radius": R},
                        {"position": 4000.0, "elevation": 4.0}])
    lc = R * abs(g2 - g1)
    a = 2000.0 - lc / 2
    x = np.array([a + 15.0, a + 40.0, a + 65.0])  # vehicles wholly on the curve
    half = np.full(x.size, 7.0)
    closed_form = g1 + (g2 - g1) * (x - a) / lc
    np.testing.assert_allclose(mean_grade(r, x, half), closed_form, rtol=0, atol=2e-7)
    assert height(r, 2000.0) == pytest.approx(10.0 - lc * (g1 - g2) / 8, abs=1e-9)
    # off the curve, the straight grades
    np.testing.assert_allclose(mean_grade(r, np.array([1000.0, 3000.0]), np.full(2, 7.0)),
                               [g1, g2], atol=1e-12)


def test_vertical_curve_accelerates_a_free_car_by_its_grade():
    # A car with no resistance standing on the curve, its centre at 1990 m:
    # a = -g sin(atan(grade)) / (1 + k), k the rotating-mass share, with the grade
    # averaged over the car (by hand below).
    from conftest import G, car_config

    from rrscore.run.drive import Drive
    from rrscore.run.scenario import scenario_from_table

    car = car_config(resistance={"formula": "none", "starting": False})
    route = {"elements": [{"length": "4 km"}],
             "profile": {"points": [
                 {"position": 0.0, "elevation": 0.0},
                 {"position": "2 km", "elevation": 10.0, "vertical_curve_radius": "10 km"},
                 {"position": "4 km", "elevation": 4.0}]}}
    table = {"train": {"vehicles": [{"config": car}]}, "route": route,
             "start": {"position": 1990.0 + 13.92 / 2}, "stop": {"max_time": 0.2},
             "output": {"sample_interval": 0.1, "vehicles": [0],
                        "vehicle_signals": ["speed_mps"]}}
    sc = scenario_from_table(table, Context("<test>", "scenario", CONFIGS))
    r = Drive(sc).run()
    grade = 0.005 + (-0.008) * (1990.0 - 1960.0) / 80.0  # -0.001 at the car's centre
    m, m_rot = 92_500.0, 4 * 96.0 / 0.4785**2
    accel = -m * G * grade / math.sqrt(1 + grade**2) / (m + m_rot)
    v = r.series["v0_speed_mps"]
    assert v[-1] == pytest.approx(accel * 0.2, rel=1e-3)


def test_spline_through_points_of_a_cubic_reproduces_it():
    def z(x):
        return 1e-9 * x**3 - 2e-6 * x**2 + 0.004 * x

    xs = [0.0, 1000.0, 2500.0, 4000.0, 6000.0]
    r = _profile_route([{"position": x, "elevation": z(x)} for x in xs],
                       interpolation="spline")
    q = np.array([300.0, 1700.0, 3333.0, 5900.0])
    np.testing.assert_allclose(height(r, q), z(q), atol=1e-9)
    # the mean grade over a vehicle is the mean slope of the cubic (finite difference)
    h = 7.0
    np.testing.assert_allclose(mean_grade(r, q, np.full(q.size, h)),
                               (z(q + h) - z(q - h)) / (2 * h), atol=1e-8)


def test_spiral_ramps_the_curve_resistance_linearly():
    # R = 700 m (700/R = 1 N/kN) with 100 m spirals inside a 500 m element
    r = _route([{"length": 100.0}, {"length": 500.0, "radius": 700.0, "transition": 100.0},
                {"length": 100.0}])
    x = np.array([125.0, 150.0, 300.0, 550.0, 650.0])
    w = mean_curve(r, x, np.full(x.size, 10.0))
    np.testing.assert_allclose(w, [0.25, 0.5, 1.0, 0.5, 0.0], rtol=1e-12, atol=1e-12)


def test_degree_of_curve_is_the_chord_definition():
    # 1 degree: R = 50 ft / sin(0.5 deg) = 5729.65 ft = 1746.4 m
    r = _route([{"length": 1000.0, "degree": 1.0}])
    assert r.radii[0] == pytest.approx(5729.65 * 0.3048, rel=1e-6)
    assert mean_curve(r, np.array([500.0]), np.array([10.0]))[0] == pytest.approx(
        700.0 / (5729.65 * 0.3048), rel=1e-6)


@pytest.mark.parametrize(("table", "key", "words"), [
    ({"elements": [{"length": 100.0, "radius": 500.0, "degree": 2.0}]},
     "route.elements[0].degree", "expected one of them"),
    ({"elements": [{"length": 100.0, "transition": 10.0}]},
     "route.elements[0].transition", "only on a curve"),
    ({"elements": [{"length": 100.0, "radius": 500.0, "transition": 60.0}]},
     "route.elements[0].transition", "at most half"),
    ({"elements": [{"length": 100.0, "grade": 0.01}],
      "profile": {"points": [{"position": 0.0, "elevation": 0.0},
                             {"position": 100.0, "elevation": 1.0}]}},
     "route.elements[0].grade", "from one place"),
    ({"elements": [{"length": 100.0}],
      "profile": {"points": [{"position": 50.0, "elevation": 0.0},
                             {"position": 10.0, "elevation": 1.0}]}},
     "route.profile.points[1].position", "increase"),
    ({"elements": [{"length": 100.0}],
      "profile": {"points": [{"position": 0.0, "elevation": 0.0},
                             {"position": 50.0, "grade": 0.01}]}},
     "route.profile.points[1]", "another kind"),
    ({"elements": [{"length": 1000.0}],
      "profile": {"points": [{"position": 0.0, "elevation": 0.0},
                             {"position": 100.0, "elevation": 2.0,
                              "vertical_curve_radius": 20_000.0},
                             {"position": 200.0, "elevation": 0.0}]}},
     "route.profile.points[1].vertical_curve_radius", "fit between"),
])
def test_inconsistent_profiles_and_curves_are_config_errors(table, key, words):
    from rrscore.model.errors import ConfigError

    with pytest.raises(ConfigError) as err:
        Route.from_config(validate(table, ROUTE_SCHEMA, Context("t")))
    assert err.value.key == key and words in err.value.message


def test_route_km_reads_the_routes_kilometre_posts():
    # Posts start at 10 km: a point 100 m in is at km 10.1; without the key, at km 0.1.
    cfg = validate({"start_chainage": "10 km", "elements": [{"length": 1000.0}]},
                   ROUTE_SCHEMA, Context("t"))
    posted = Route.from_config(cfg)
    assert posted.route_km(np.array([100.0, 0.0]))[0] == pytest.approx(10.1, abs=1e-12)
    assert posted.route_km(np.array([0.0]))[0] == pytest.approx(10.0, abs=1e-12)
    assert _route([{"length": 1000.0}]).route_km(100.0) == pytest.approx(0.1, abs=1e-12)


def test_route_km_falls_along_a_route_that_runs_against_its_kilometre_posts():
    # Posts at 120 km at position 0, falling: a point 2.5 km in is at km 117.5.
    cfg = validate({"start_chainage": "120 km", "chainage_direction": "decreasing",
                    "elements": [{"length": 5000.0}]}, ROUTE_SCHEMA, Context("t"))
    np.testing.assert_allclose(Route.from_config(cfg).route_km(np.array([0.0, 2500.0])),
                               [120.0, 117.5], atol=1e-12)


def test_grade_at_is_each_elements_grade_and_curvature_at_its_inverse_radius():
    r = _route([{"length": 500.0, "grade": "4 permille"},
                {"length": 500.0, "grade": "-6 permille", "radius": 800.0},
                {"length": 400.0, "radius": 400.0, "transition": 100.0}])
    x = np.array([10.0, 499.0, 501.0, 999.0, 1050.0, 1100.0, 1200.0, 1375.0])
    np.testing.assert_allclose(r.grade_at(x), [0.004, 0.004, -0.006, -0.006, 0, 0, 0, 0],
                               atol=1e-12)
    # The spiral ramps 1/R linearly from 0 over its 100 m: half of 1/400 at 50 m in.
    np.testing.assert_allclose(
        r.curvature_at(x), [0, 0, 1 / 800, 1 / 800, 0.5 / 400, 1 / 400, 1 / 400, 0.25 / 400],
        atol=1e-12)
    assert r.curvature_at(np.array([-5.0, 1500.0])).tolist() == [0.0, 0.0]


def test_grade_at_on_a_vertical_curve_is_its_parabolas_grade():
    # Elevation points 0, 1000 m (10 m up), 2000 m (level), a 10 km vertical curve at the
    # middle point: 100 m long, the grade falls linearly from 10 to 0 permille over it.
    r = _profile_route([{"position": 0.0, "elevation": 0.0},
                        {"position": 1000.0, "elevation": 10.0,
                         "vertical_curve_radius": 10000.0},
                        {"position": 2000.0, "elevation": 10.0}])
    x = np.array([500.0, 975.0, 1000.0, 1025.0, 1500.0])
    # Exact to the fine knot spacing (0.5 m): a grade change of 0.5 m / 10 km.
    np.testing.assert_allclose(r.grade_at(x), [0.01, 0.0075, 0.005, 0.0025, 0.0], atol=6e-5)
