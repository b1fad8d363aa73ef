"""A rigid train (``dynamics = "rigid"``): the train as one body, against closed-form
motion, the coupler forces that one acceleration takes, a hold by the brakes of some
cars, the multi-body train on a slow drive with stiff couplers, and an air-braked train's
stops and starts as one body."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import CONFIGS, REPO, G, car_config, make_scenario

from rrscore import Drive, Run, load_scenario
from rrscore.engine.onebody import OneBodyTrain
from rrscore.model.errors import ConfigError

#: A test car: 92.5 t, four axles of 96 kg m^2 on a 0.4785 m wheel radius.
MASS = 92500.0
MASS_EFF = MASS + 4 * 96.0 / 0.4785**2


def _car(A: float = 0.0) -> dict:
    return {"config": car_config(resistance={"formula": "davis", "A": A, "B": 0.0, "C": 0.0,
                                             "starting": False})}


@pytest.mark.parametrize("layout", ["one body", "vehicles"])
def test_rigid_train_accelerates_as_one_body_and_its_couplers_carry_the_difference(
        layout, monkeypatch):
    # Five equal cars on 10 per mille down, only the lead resisted (A = 5 kN): the train
    # takes a = (5 m g sin - A) / (5 m_eff), and coupling j pushes back on the cars in front
    # of it with A (4 - j) / 5 (compression, so negative). The same on the vehicles'
    # layout (where the one body does not serve: an AREA curve, a slipping axle), with
    # break margins among the event functions, which the couplers' break force gives.
    if layout == "vehicles":
        monkeypatch.setattr(OneBodyTrain, "fits", lambda self, y: False)
    A, grade, v0, n = 5000.0, -0.010, 2.0, 5
    sc = make_scenario([_car(A)] + [_car()] * (n - 1), [{"length": "60 km", "grade": grade}],
                       coupling={"model": "spring_damper", "break_force": "2 MN"},
                       dynamics="rigid", start={"position": "10 km", "speed": v0},
                       stop={"max_time": 300.0},
                       output={"couplings": list(range(n - 1)), "coupling_signals": ["force_N"],
                               "vehicles": [0, n - 1], "vehicle_signals": ["speed_mps"]})
    d = Drive(sc)
    r = d.run()
    sin = -grade / math.sqrt(1 + grade**2)
    a = (n * MASS * G * sin - A) / (n * MASS_EFF)
    t = r.series["time_s"]
    np.testing.assert_allclose(r.series["speed_mps"], v0 + a * t, rtol=1e-10)
    np.testing.assert_array_equal(r.series["v0_speed_mps"], r.series[f"v{n - 1}_speed_mps"])
    for j in range(n - 1):
        np.testing.assert_allclose(r.series[f"c{j}_force_N"], -A * (n - 1 - j) / n, rtol=1e-9)
    # the couplers do no work between bodies that move together: energy still balances
    energy = r.summary["energy"]
    assert abs(energy["balance_error_J"]) < 1e-7 * energy["kinetic_change_J"]
    assert r.summary["max_coupler_compression_N"] == pytest.approx(A * (n - 1) / n, rel=1e-9)
    assert (d.run_.system.one is not None and d.run_.system.one.active) == (layout == "one body")


@pytest.mark.parametrize("cars", [2, 4])
def test_hand_brake_on_the_lead_car_holds_the_whole_rigid_train_or_lets_it_roll_back(cars):
    # 20 per mille up, the lead car's hand brake (60 kN) on. Two cars weigh 36.3 kN along
    # the grade: held, the coupling carrying the second car's share in tension. Four weigh
    # 72.6 kN: the train rolls back at (4 m g sin - 60 kN) / (4 m_eff).
    grade, brake = 0.020, 60e3
    sc = make_scenario([_car()] * cars, [{"length": "20 km", "grade": grade}],
                       dynamics="rigid", start={"position": "10 km"},
                       driver=[{"at_time": 0.0, "vehicle": 0, "set": {"hand_brake": 1.0}}],
                       stop={"max_time": 600.0},
                       output={"couplings": [0], "coupling_signals": ["force_N"]})
    r = Drive(sc).run()
    sin = grade / math.sqrt(1 + grade**2)
    weight_along = MASS * G * sin
    x, t = r.series["position_m"], r.series["time_s"]
    if cars * weight_along <= brake:
        assert np.all(x == x[0]) and np.all(r.series["speed_mps"] == 0.0)
        np.testing.assert_allclose(r.series["c0_force_N"], weight_along, rtol=1e-9)
    else:
        a = -(cars * weight_along - brake) / (cars * MASS_EFF)
        np.testing.assert_allclose(r.series["speed_mps"], a * t, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(x - x[0], 0.5 * a * t**2, rtol=1e-9, atol=1e-9)


def test_rigid_and_multibody_trains_agree_on_a_slow_drive_with_stiff_couplers():
    # SimpleLoco + 10 cars, couplers of 200 MN/m without slack, half traction for 400 s on
    # level track: the front's distance run agrees within 0.5 % at every sample.
    vehicles = [{"config": "vehicles/simple_loco.toml"},
                {"config": "vehicles/freight_car_4axle.toml", "count": 10}]
    coupling = {"model": "spring_damper",
                "params": {"stiffness": "200 MN/m", "damping": "2 MN*s/m", "slack": "0 m"}}
    runs = {}
    for mode in ("multibody", "rigid"):
        sc = make_scenario(vehicles, [{"length": "30 km"}], coupling=coupling, dynamics=mode,
                           start={"position": "1 km"}, stop={"max_time": 400.0},
                           driver=[{"at_time": 0.0, "set": {"traction_level": 0.5}}],
                           output={"sample_interval": 10.0})
        runs[mode] = Drive(sc).run().series
    front = {m: s["front_m"] - s["front_m"][0] for m, s in runs.items()}
    assert front["rigid"][-1] > 3000.0  # it went somewhere
    late = runs["rigid"]["time_s"] >= 20.0
    np.testing.assert_allclose(front["rigid"][late], front["multibody"][late], rtol=5e-3)


def test_a_rigid_train_takes_steps_of_about_a_second_where_the_multibody_train_cannot():
    vehicles = [{"config": "vehicles/simple_loco.toml"},
                {"config": "vehicles/freight_car_4axle.toml", "count": 20}]
    steps = {}
    for mode in ("multibody", "rigid"):
        sc = make_scenario(vehicles, [{"length": "30 km"}], dynamics=mode,
                           start={"position": "1 km", "speed": "40 km/h"},
                           solver={"control_step": "1 s", "max_step": "5 s"},
                           stop={"max_time": 600.0},
                           driver=[{"at_time": 0.0, "set": {"traction_level": 0.3}}])
        run = Run(sc)
        run.advance()
        steps[mode] = int(run.clock[0].steps)
    assert steps["rigid"] <= 1.2 * 600  # one step per control step, give or take
    assert steps["multibody"] > 5 * steps["rigid"]


def test_a_rigid_train_refuses_uncoupling_and_vehicles_standing_apart():
    with pytest.raises(ConfigError, match=r"driver\[0\]\.uncouple.*found 0.*rigid"):
        make_scenario([_car()] * 3, dynamics="rigid",
                      driver=[{"at_time": 5.0, "uncouple": 0}])
    with pytest.raises(ConfigError, match=r"dynamics.*found 'rigid'.*coupling 1"):
        make_scenario([_car(), _car(), {**_car(), "coupled": False}], dynamics="rigid")
    with pytest.raises(ConfigError, match=r"dynamics.*found 'elastic'.*'multibody', 'rigid'"):
        make_scenario([_car()], dynamics="elastic")


def test_a_rigid_air_braked_train_stops_and_starts_again_as_one_body():
    # The built-in driver brings 50 air-braked cars to a stop from 80 km/h, then pulls up
    # to the stopping point and stops again. Rigid, every vehicle has one speed (the same
    # number: they stop together as the lead does, and start together) and the gaps
    # between them stay what they were at the start (to a nanometre), through both stops;
    # standing, the train stands exactly (no creep into the locomotive) and the drive
    # ends at its time limit.
    sc = load_scenario(REPO / "tests/data/trainhandling/stop_80.toml").with_values(
        {"dynamics": "rigid", "train": str(CONFIGS / "trains/freight_50_air.toml"),
         "stop.max_time": 320.0, "stop.standstill": False})
    run = Run(sc)
    lay = run.system.lay
    gaps = np.diff(run.work.y[lay.sx:lay.sx + lay.n])
    fronts, speeds = [], []
    for t in np.arange(1.0, 320.0, 1.0):
        run.advance(t)
        x, v = run.work.y[lay.sx:lay.sx + lay.n], run.work.y[lay.sv:lay.sv + lay.n]
        assert np.all(v == v[0]), f"speeds apart at t = {t}: {np.ptp(v)} m/s"
        np.testing.assert_allclose(np.diff(x), gaps, rtol=0.0, atol=1e-9)
        fronts.append(x[0])
        speeds.append(v[0])
    assert run.advance() == "max_time"
    fronts, speeds = np.array(fronts), np.array(speeds)
    standing = np.flatnonzero(speeds == 0.0)
    first, last = standing[0], standing[-1]
    moved_again = np.flatnonzero((speeds > 0.0) & (np.arange(speeds.size) > first))
    assert moved_again.size > 0 and speeds[moved_again].max() > 0.5  # it pulled up
    # standing is standing: the front does not move while the speed is zero
    for a, b in ((first, moved_again[0] - 1), (moved_again[-1] + 1, last)):
        assert np.all(fronts[a:b + 1] == fronts[a])
    assert fronts[-1] - fronts[first] > 10.0
    assert speeds[-1] == 0.0
