"""A rigid train as one body (rrscore.engine.onebody): against the same train integrated
vehicle by vehicle (the multi-body system's rigid mode) and against closed forms."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import car_config, make_scenario
from scipy.integrate import quad

import rrscore
from rrscore.engine.train import TrainSystem
from rrscore.model.track import track_of
from rrscore.physics.route import path_work

ROOT = Path(__file__).resolve().parents[2]
RIGID = ROOT / "configs" / "scenarios" / "rigid_40km.toml"


def _multibody_rigid(monkeypatch) -> None:
    """Rigid trains stay in the multi-body layout (their reference)."""
    monkeypatch.setattr(TrainSystem, "choose", lambda self, y: False)


@pytest.fixture(scope="module")
def drives():
    sc = rrscore.load_scenario(RIGID)
    one = rrscore.Drive(sc)
    result = one.run()
    assert one.run_.system.one.active
    with pytest.MonkeyPatch.context() as mp:
        _multibody_rigid(mp)
        ref = rrscore.Drive(sc)
        reference = ref.run()
        assert not ref.run_.system.one.active
    return result, reference


def test_the_one_body_drives_as_the_vehicles_do_to_well_within_the_solver_s_tolerance(drives):
    # rigid_40km to its stop at B (2,353 s): the same samples, positions within 0.1 mm,
    # speeds within 1e-5 m/s, coupler force extremes within 1e-6, the points passed within
    # 1 ms, the same events and stop.
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


def test_the_one_body_s_energy_account_is_the_vehicles_and_gravity_exact(drives):
    # Each vehicle's drive, brake, resistance and air work within 1e-6 of the vehicles'
    # own integrals (the same integrals, taken once for the train). Gravity: the route
    # ends as high as it starts and every vehicle has run over the whole climb and
    # descent, so each one's work is zero: the exact integral along the path holds that
    # to 1e-9 of the vehicle's weight times the 25 m climb.
    one, ref = drives
    ea, eb = one.summary["energy_per_vehicle"], ref.summary["energy_per_vehicle"]
    for flow in ("drive_J", "brake_J", "resistance_J", "air_J"):
        np.testing.assert_allclose(ea[flow], eb[flow], rtol=1e-6, atol=1.0, err_msg=flow)
    weight = np.array(rrscore.Run(rrscore.load_scenario(RIGID)).train.weight)
    scale = weight * 25.0
    assert np.all(np.abs(ea["gravity_J"]) <= 1e-9 * scale)
    assert np.all(np.abs(np.array(eb["gravity_J"]) - ea["gravity_J"]) <= 2e-4 * scale)
    assert abs(one.summary["energy"]["balance_error_J"]) < 1e-6 * one.summary["energy"]["drive_J"]


def _route():
    # elevation: level to 100 m, 10 per mille up to 250 m, 20 down beyond; curve
    # resistance: 2 N/kN from 120 to 180 m
    knots = np.array([0.0, 100.0, 120.0, 180.0, 250.0, 1e6])
    elev = np.interp(knots, [0.0, 100.0, 250.0, 1e6], [0.0, 0.0, 1.5, 1.5 - 0.02 * (1e6 - 250)])
    rate = np.array([0.0, 0.0, 2.0, 0.0, 0.0])
    curve = np.concatenate([[0.0], np.cumsum(rate * np.diff(knots))])
    return track_of(knots, np.stack([elev, curve, curve, np.zeros(knots.size)]))


@pytest.mark.parametrize("x0, x1", [(80.0, 130.0), (130.0, 80.0), (95.0, 300.0),
                                    (101.0, 102.0), (500.0, 90.0)])
def test_a_vehicle_s_work_along_its_path_is_the_integral_of_the_mean_grade_under_it(x0, x1):
    # The exact integrals of g / sqrt(1 + g^2) (signed) and of the curve resistance (over
    # the distance) along the path of a 14 m vehicle, its ends meeting knots on the way,
    # against adaptive quadrature with the knots as break points: within 1e-10.
    track = _route()
    half = 7.0

    def mean(x, row):
        return (np.interp(x + half, track.knots, track.cum[row])
                - np.interp(x - half, track.knots, track.cum[row])) / (2 * half)

    lo, hi = min(x0, x1), max(x0, x1)
    points = sorted({k + s for k in track.knots for s in (-half, half) if lo < k + s < hi})

    def grade_term(x):
        g = mean(x, 0)
        return g / np.sqrt(1 + g * g)

    g_ref = quad(grade_term, lo, hi, points=points or None, epsabs=1e-13, limit=200)[0]
    c_ref = quad(lambda x: mean(x, 1), lo, hi, points=points or None, epsabs=1e-13,
                 limit=200)[0]
    g_int, c_int = path_work(track, x0, x1, half)
    assert g_int == pytest.approx(np.sign(x1 - x0) * g_ref, rel=1e-10, abs=1e-12)
    assert c_int == pytest.approx(c_ref, rel=1e-10, abs=1e-12)


def test_a_rigid_train_turned_back_by_a_grade_pays_curve_resistance_both_ways():
    # Three cars without running resistance, coasting at 5 m/s up a 10 per mille grade in a
    # 500 m curve (700/R = 1.4 N/kN), stop and roll back, as one body throughout. Each
    # car's curve work is its weight in kN times 1.4 N/kN times the distance run up and
    # back (closed form: uniform deceleration up, acceleration down, each from the grade
    # and the curve on the train's effective mass), within 1e-7; its gravity work minus
    # its weight times the grade's sine times its net rise, 1e-9.
    car = car_config(resistance={"formula": "davis", "A": 0.0, "B": 0.0, "C": 0.0,
                                 "starting": False})
    grade, c = 0.010, 700.0 / 500.0
    sc = make_scenario([{"config": car, "count": 3}],
                       elements=[{"length": "300 m"},
                                 {"length": "3 km", "grade": "10 permille", "radius": "500 m"}],
                       dynamics="rigid", start={"position": "1 km", "speed": "5 m/s"},
                       stop={"max_time": 70.0},
                       solver={"control_step": "1 s", "max_step": "5 s"},
                       output={"sample_interval": 1.0})
    d = rrscore.Drive(sc)
    result = d.run()
    system = d.run_.system
    assert system.one.active
    speeds = result.series["speed_mps"]
    assert speeds.max() > 4.9 and speeds.min() < -2.0  # up, and back down
    tr, held = d.run_.train, system.sys.held
    weight, weight_kn = np.asarray(tr.weight), np.asarray(system.sys.bodies.weight_kn)
    sine = grade / np.sqrt(1 + grade * grade)
    mass = float(np.sum(held.mass))
    resist = float(np.sum(weight_kn)) * c
    up = (float(np.sum(weight)) * sine + resist) / mass
    down = (float(np.sum(weight)) * sine - resist) / mass
    t_stop = 5.0 / up
    distance = 5.0 ** 2 / (2 * up) + down * (70.0 - t_stop) ** 2 / 2
    energy = result.summary["energy_per_vehicle"]
    np.testing.assert_allclose(energy["resistance_J"], weight_kn * c * distance, rtol=1e-7)
    rise = result.series["position_m"][-1] - result.series["position_m"][0]
    assert rise == pytest.approx(5.0 * t_stop - up * t_stop ** 2 / 2
                                 - down * (70.0 - t_stop) ** 2 / 2, abs=1e-4)
    np.testing.assert_allclose(energy["gravity_J"], -weight * sine * rise, rtol=1e-9)


def test_a_slipping_axle_takes_a_rigid_train_back_to_its_vehicles_and_then_again_to_one_body():
    sc = make_scenario([{"config": "vehicles/simple_loco.toml"},
                        {"config": car_config(), "count": 2}],
                       dynamics="rigid", start={"position": "1 km"},
                       driver=[{"at_time": 0.0, "set": {"traction_level": 1.0}},
                               {"at_time": 0.0, "rail_condition": "wet"},
                               {"at_time": 3.0, "set": {"traction_level": 0.1}}],
                       stop={"max_time": 8.0})
    run = rrscore.Run(sc)
    seen = set()
    while run.t < 8.0 - 1e-9:
        run.advance(run.t + 0.05)
        seen.add(run.system.one.active)
    kinds = [e.kind for e in run.system.log]
    assert "slip" in kinds and "re-adhesion" in kinds
    assert seen == {True, False} and run.system.one.active
