"""A rigid train as one body in the compiled loop (rrscore.rigidbody): its table of the
route's sums against the components' right-hand side, each vehicle's work along its path
against numerical quadrature, and a whole drive against the Python path."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import car_config, make_scenario
from numba import njit
from scipy.integrate import quad

import rrscore
from rrscore.rigidbody import RigidBody, held_sums, path_work, rigid_rates
from rrscore.run.run import Run
from rrscore.steploop import StepLoop

ROOT = Path(__file__).resolve().parents[1]
RIGID = ROOT / "configs" / "scenarios" / "rigid_40km.toml"


@njit
def _rates(t, z, dz, tab, consts, groups, ints, zlay, zindex, frozen, direction, kern,
           vs_sign, inputs, v_row):
    rigid_rates(t, z, dz, tab, consts, groups, ints, frozen, direction, kern, zlay, zindex,
                vs_sign, inputs, v_row)


def test_the_one_body_takes_the_acceleration_the_components_give_anywhere_on_the_route():
    # The lead put at positions where the train stands across each change of grade: the
    # one body's acceleration (the route's sums read off its table) is the one the
    # components give, each vehicle's grade and resistance taken where it stands, to
    # 1e-9 of the train's weight over its mass (the table is read linearly, and the
    # gravity of a vehicle standing across a change of grade is not quite linear).
    run = Run(rrscore.load_scenario(RIGID))
    run.advance(60.0)
    loop, dyn = run.integrator.loop, run.dyn
    body = loop.one_body_at(run.solver.y)
    assert isinstance(body, RigidBody)
    b = dyn.bodies
    held_sums(b.held, body.consts)
    y0 = run.solver.y.copy()
    weight, mass = float(np.sum(run.train.weight)), float(np.sum(b.held[4]))
    for lead in np.linspace(9_500.0, 31_500.0, 89):
        y = y0.copy()
        y[dyn.sx] += lead - y0[dyn.sx][0]
        z = np.zeros(int(body.ints[1]))
        z[0], z[1] = y[dyn.sx][0], y[dyn.sv][0]
        first = int(body.ints[3])
        z[first:] = y[body.zmap]
        dz = np.zeros_like(z)
        _rates(run.t, z, dz, body.table, body.consts, body.groups, body.ints, body.zlay,
               body.zindex, b.frozen, b.direction, loop._kernels, loop._vs_sign, loop._inputs,
               np.zeros(dyn.n))
        ref = dyn.rhs_components(run.t, y)
        assert abs(dz[1] - ref[dyn.sv][0]) <= 1e-9 * weight / mass, lead
        np.testing.assert_allclose(dz[first:], ref[body.zmap], rtol=1e-12, atol=1e-15)


def _route():
    # elevation: level to 100 m, 10 per mille up to 250 m, 20 down beyond; curve
    # resistance: 2 N/kN from 120 to 180 m (cumulative tables, as the route keeps them)
    knots = np.array([-1e7, 0.0, 100.0, 120.0, 180.0, 250.0, 1e7])
    elev = np.interp(knots, [-1e7, 100.0, 250.0, 1e7], [0.0, 0.0, 1.5, 1.5 - 0.02 * (1e7 - 250)])
    rate = np.array([0.0, 0.0, 0.0, 2.0, 0.0, 0.0])  # per segment
    curve = np.concatenate([[0.0], np.cumsum(rate * np.diff(knots))])
    tables = np.zeros((4, knots.size))
    tables[0], tables[1] = elev, curve
    tables[2, :-1] = np.diff(elev) / np.diff(knots)
    tables[3, :-1] = np.diff(curve) / np.diff(knots)
    return knots, tables


@pytest.mark.parametrize("x0, x1", [(80.0, 130.0), (130.0, 80.0), (95.0, 300.0),
                                    (101.0, 102.0), (500.0, 90.0)])
def test_a_vehicle_s_work_along_its_path_is_the_integral_of_the_mean_grade_under_it(x0, x1):
    # The exact integrals of g / sqrt(1 + g^2) (signed) and of the curve resistance (over
    # the distance) along the path of a 14 m vehicle, its ends meeting knots on the way,
    # against adaptive quadrature with the knots as break points: within 1e-10.
    knots, tables = _route()
    half = 7.0

    def mean(x, row):
        return (np.interp(x + half, knots, tables[row])
                - np.interp(x - half, knots, tables[row])) / (2 * half)

    lo, hi = min(x0, x1), max(x0, x1)
    points = sorted({k + s for k in knots[1:-1] for s in (-half, half) if lo < k + s < hi})

    def grade_term(x):
        g = mean(x, 0)
        return g / np.sqrt(1 + g * g)

    g_ref = quad(grade_term, lo, hi, points=points or None, epsabs=1e-13, limit=200)[0]
    c_ref = quad(lambda x: mean(x, 1), lo, hi, points=points or None, epsabs=1e-13,
                 limit=200)[0]
    g_int, c_int = path_work(x0, x1, half, knots, tables)
    assert g_int == pytest.approx(np.sign(x1 - x0) * g_ref, rel=1e-10, abs=1e-12)
    assert c_int == pytest.approx(c_ref, rel=1e-10, abs=1e-12)


@pytest.fixture(scope="module")
def drives():
    sc = rrscore.load_scenario(RIGID)
    one = rrscore.Drive(sc)
    assert isinstance(one.run_.integrator.loop.one_body_at(one.run_.solver.y), RigidBody)
    ref = rrscore.Drive(sc.with_values({"solver.compiled": False}))
    return one.run(), ref.run()


def test_the_one_body_drives_as_the_python_path_to_well_within_the_solver_s_tolerance(drives):
    # rigid_40km to its stop at B (2,353 s): the same samples, positions within 0.1 mm,
    # speeds within 1e-5 m/s, coupler force extremes within 1e-6, the points passed
    # within 1 ms, the same events and stop.
    one, ref = drives
    np.testing.assert_array_equal(one.series["time_s"], ref.series["time_s"])
    for col in ("position_m", "front_m", "rear_m"):
        np.testing.assert_allclose(one.series[col], ref.series[col], rtol=0, atol=1e-4)
    np.testing.assert_allclose(one.series["speed_mps"], ref.series["speed_mps"], rtol=0,
                               atol=1e-5)
    for key in ("max_coupler_tension_N", "max_coupler_compression_N"):
        assert one.summary[key] == pytest.approx(ref.summary[key], rel=1e-6)
    assert one.summary["events"] == ref.summary["events"]
    assert one.summary["stop_reason"] == ref.summary["stop_reason"] == "standstill"
    for p, q in zip(one.summary["points"], ref.summary["points"], strict=True):
        assert p["point"] == q["point"]
        assert p["time_s"] == pytest.approx(q["time_s"], abs=1e-3)


def test_the_one_body_s_energy_account_is_the_python_path_s_and_gravity_exact(drives):
    # Each vehicle's drive, brake, resistance and air work: the Python path's within 1e-6
    # (the same integrals, taken once for the train). Gravity: the route ends as high as
    # it starts and every vehicle has run over the whole climb and descent, so each one's
    # work is zero: the one body's exact integral along the path holds that to 1e-9 of the
    # vehicle's weight times the 25 m climb, where the Python path's quadrature over the
    # changes of grade is off by up to a few kJ (under 2e-4 of that scale).
    one, ref = drives
    ea, eb = one.summary["energy_per_vehicle"], ref.summary["energy_per_vehicle"]
    for flow in ("drive_J", "brake_J", "resistance_J", "air_J"):
        np.testing.assert_allclose(ea[flow], eb[flow], rtol=1e-6, atol=1.0, err_msg=flow)
    weight = np.array(Run(rrscore.load_scenario(RIGID)).train.weight)
    scale = weight * 25.0
    assert np.all(np.abs(ea["gravity_J"]) <= 1e-9 * scale)
    assert np.all(np.abs(np.array(eb["gravity_J"]) - ea["gravity_J"]) <= 2e-4 * scale)


def test_the_loop_keeps_the_multibody_layout_when_told_or_for_a_multibody_train():
    sc = rrscore.load_scenario(RIGID)
    run = Run(sc.with_values({"dynamics": "multibody"}))
    assert run.integrator.loop.one_body_at(run.solver.y) is None
    StepLoop.one_body = False
    try:
        run = Run(sc)
        assert run.integrator.loop.one_body_at(run.solver.y) is None
    finally:
        StepLoop.one_body = True


def test_the_one_body_covers_air_wind_curves_grades_starting_and_a_reversed_vehicle():
    # SimpleLoco and five cars, one with an explicit air drag area, one reversed, into a
    # headwind over a climb, a curved descent and level track, from rest at half traction
    # (the starting resistance taken off as it speeds up): the one body against the
    # Python path, positions within 1 mm at every sample (0.12 mm after 8 km: the
    # solver's tolerance, the two integrating different states), each vehicle's drive,
    # brake and air work within 1e-6.
    air = car_config(resistance={"formula": "davis", "A": 900.0, "B": 0.0, "C": 0.0,
                                 "starting": True, "air_cd_a": "10 m^2"})
    plain = car_config()
    sc = make_scenario(
        [{"config": "vehicles/simple_loco.toml"}, {"config": air},
         {"config": plain, "count": 3}, {"config": plain, "orientation": "reversed"}],
        elements=[{"length": "1 km"}, {"length": "800 m", "grade": "8 permille"},
                  {"length": "1.2 km", "grade": "-5 permille", "radius": "600 m"},
                  {"length": "20 km"}],
        dynamics="rigid", environment={"wind": "-15 km/h"},
        start={"position": "300 m"}, stop={"max_time": 400.0},
        solver={"control_step": "1 s", "max_step": "5 s"},
        driver=[{"at_time": 0.0, "set": {"traction_level": 0.5}}],
        output={"sample_interval": 2.0})
    drive = rrscore.Drive(sc)
    body = drive.run_.integrator.loop.one_body_at(drive.run_.solver.y)
    assert isinstance(body, RigidBody)
    assert body.ints[4] == 1 and body.ints[2] >= 1  # air drag, starting-resistance groups
    one = drive.run()
    ref = rrscore.Drive(sc.with_values({"solver.compiled": False})).run()
    assert one.series["front_m"][-1] - one.series["front_m"][0] > 3000.0  # over it all
    for col in ("position_m", "front_m", "rear_m"):
        np.testing.assert_allclose(one.series[col], ref.series[col], rtol=0, atol=1e-3)
    ea, eb = one.summary["energy_per_vehicle"], ref.summary["energy_per_vehicle"]
    assert np.any(np.abs(ea["air_J"]) > 1e4)  # the air drag and the wind did work
    for flow in ("drive_J", "brake_J", "air_J"):
        np.testing.assert_allclose(ea[flow], eb[flow], rtol=1e-6, atol=1.0, err_msg=flow)
    # gravity work: every vehicle stood on the first level kilometre and ends beyond the
    # descent, so each one's is minus its weight times the integral of g / sqrt(1 + g^2)
    # of the mean grade under it: constant on each grade where it stands wholly on it,
    # linear over its length 2h where it stands across a change (an antiderivative in
    # closed form: sqrt(1 + g^2) over the grade's slope). The one body within 1e-9, the
    # Python path's quadrature over the grade changes within 1.5 %.
    train = drive.run_.train
    weight, half = np.array(train.weight), np.array(train.half_length)

    def f(g):
        return g / np.sqrt(1 + g * g)

    grades, lengths = [0.0, 0.008, -0.005, 0.0], [None, 800.0, 1200.0, None]
    rise = np.zeros_like(half)
    for k in (1, 2):
        rise += f(grades[k]) * (lengths[k] - 2 * half)
    for ga, gb in zip(grades[:-1], grades[1:], strict=True):
        rise += 2 * half * (np.sqrt(1 + gb * gb) - np.sqrt(1 + ga * ga)) / (gb - ga)
    np.testing.assert_allclose(ea["gravity_J"], -weight * rise, rtol=1e-9)
    np.testing.assert_allclose(eb["gravity_J"], -weight * rise, rtol=1.5e-2)
    # curve work likewise: the four equal cars (one reversed) ran over the whole curve, so
    # the one body gives them the same resistance work to rounding, where the Python
    # path's quadrature over the curve's ends spreads them by hundreds of J
    np.testing.assert_allclose(ea["resistance_J"], eb["resistance_J"], rtol=1e-6, atol=1e3)
    cars = np.array(ea["resistance_J"][2:])
    assert np.ptp(cars) <= 1e-9 * np.max(np.abs(cars))
    assert np.ptp(eb["resistance_J"][2:]) > 100.0
