"""Equations of motion against answers known without the code: closed-form motion,
conservation of momentum, static friction, wheel slip at the adhesion limit."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import CONFIGS, G, car_config, make_scenario

import rrscore
from rrscore import Drive, Param, Run, VehicleModel, load_registry
from rrscore.physics.bodies import coulomb_net

#: The test car's half length: a start position is the train's front, position_m a centre.
HALF = 13.92 / 2


def test_coulomb_net_holds_below_the_limit_and_passes_the_excess():
    force = np.array([3.0, -3.0, 7.0, -7.0, 3.0])
    resist = np.array([5.0, 5.0, 5.0, 5.0, 5.0])
    speed = np.array([0.0, 0.0, 0.0, 0.0, -1.0])
    assert coulomb_net(force, resist, speed).tolist() == [0.0, 0.0, 2.0, -2.0, 8.0]


@pytest.mark.parametrize("method", ["rk45", "rk4"])
def test_free_car_on_a_constant_grade_follows_the_closed_form(method):
    # 92.5 t car, constant resistance A = 2 kN, 10 per mille down: a is constant.
    A, grade, t_end = 2000.0, -0.010, 200.0
    sc = make_scenario(
        [{"config": car_config(resistance={"formula": "davis", "A": A, "B": 0.0, "C": 0.0,
                                           "starting": False})}],
        [{"length": "60 km", "grade": grade}],
        start={"position": "10 km"}, stop={"max_time": t_end},
        solver={"method": method, "step": 0.05},
    )
    r = Drive(sc).run()
    m = 92500.0
    m_eff = m + 4 * 96.0 / 0.4785**2
    a = (m * G * 0.010 / math.sqrt(1 + grade**2) - A) / m_eff
    t = r.series["time_s"]
    np.testing.assert_allclose(r.series["speed_mps"], a * t, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(r.series["position_m"], (10000.0 - HALF) + 0.5 * a * t**2,
                               rtol=1e-12)


def test_car_pushed_uphill_stops_then_rolls_back_with_the_closed_form():
    # Uphill at 5 m/s: decelerates by (mg sin + A)/M, stops exactly, rolls back at (mg sin - A)/M.
    A, grade, v0 = 3000.0, 0.012, 5.0
    sc = make_scenario(
        [{"config": car_config(resistance={"formula": "davis", "A": A, "B": 0.0, "C": 0.0,
                                           "starting": False})}],
        [{"length": "60 km", "grade": grade}],
        start={"position": "10 km", "speed": v0}, stop={"max_time": 120.0},
        output={"sample_interval": 0.5},
    )
    r = Drive(sc).run()
    m = 92500.0
    m_eff = m + 4 * 96.0 / 0.4785**2
    gs = m * G * grade / math.sqrt(1 + grade**2)
    a_up, a_back = -(gs + A) / m_eff, -(gs - A) / m_eff
    t_stop = v0 / -a_up
    t = r.series["time_s"]
    v_expected = np.where(t < t_stop, v0 + a_up * t, a_back * (t - t_stop))
    x_stop = (10000.0 - HALF) + v0 * t_stop + 0.5 * a_up * t_stop**2
    x_expected = np.where(t < t_stop, (10000.0 - HALF) + v0 * t + 0.5 * a_up * t**2,
                          x_stop + 0.5 * a_back * (t - t_stop) ** 2)
    np.testing.assert_allclose(r.series["speed_mps"], v_expected, atol=1e-8)
    np.testing.assert_allclose(r.series["position_m"], x_expected, atol=1e-7)
    assert r.summary["events"]["standstill"] == 1


@pytest.mark.parametrize("compiled", [True, False])
def test_a_rolling_wheelset_turns_by_the_distance_over_its_radius(compiled):
    # rolling without slip: each axle's angle grows by s / r, s the distance its car ran
    # (here down a grade from rest, so the speed varies)
    sc = make_scenario([{"config": car_config()}, {"config": car_config()}],
                       [{"length": "60 km", "grade": -0.01}],
                       start={"position": "10 km"}, stop={"max_time": 60.0},
                       solver={"compiled": compiled})
    run = Run(sc)
    x0, phi0 = run.state("body.x"), run.state("wheel.phi")
    run.advance()
    ran = run.state("body.x") - x0
    assert ran.min() > 100.0  # the cars rolled off
    turned = run.state("wheel.phi") - phi0
    expected = ran[run.dyn.train.axle_vehicle] / run.dyn.train.axle_radius
    np.testing.assert_allclose(turned, expected, rtol=1e-12)


@pytest.mark.parametrize("compiled", [True, False])
def test_rolling_wheelsets_spin_at_v_over_r_in_every_sample_between_steps(compiled):
    # a rolling axle's spin and angle are not integrated: read off its car in every
    # state, the samples between steps (interpolated) included
    seen = []
    sc = make_scenario([{"config": car_config()}, {"config": car_config()}],
                       [{"length": "60 km", "grade": -0.01}],
                       start={"position": "10 km"}, stop={"max_time": 30.0},
                       solver={"compiled": compiled}, output={"sample_interval": 0.37})
    run = Run(sc, on_sample=lambda t, y, row: seen.append((t, y.copy())))
    run.advance()
    tr, dyn = run.dyn.train, run.dyn
    steps = run.control_step  # the steps end at control times, at least
    assert sum(abs(t / steps - round(t / steps)) > 1e-6 for t, _ in seen) > 60
    y0 = seen[0][1]
    for _, y in seen[1:]:
        v, x = y[dyn.sv][tr.axle_vehicle], y[dyn.sx][tr.axle_vehicle]
        np.testing.assert_allclose(y[dyn.somega], v / tr.axle_radius, rtol=1e-14)
        np.testing.assert_allclose(y[dyn.sphi] - y0[dyn.sphi],
                                   (x - y0[dyn.sx][tr.axle_vehicle]) / tr.axle_radius,
                                   rtol=1e-12)


def test_two_coupled_cars_conserve_momentum():
    # No resistance, level track: only the coupler acts, so sum(M_eff v) is constant.
    cfg = car_config(resistance={"formula": "none", "starting": False})
    sc = make_scenario([{"config": cfg, "count": 2}],
                       coupling={"model": "spring_damper",
                                 "params": {"stiffness": "20 MN/m", "damping": "100 kN*s/m",
                                            "slack": "20 mm"}},
                       stop={"max_time": 30.0})
    run = Run(sc)
    dyn = run.dyn
    y = run.y
    y[dyn.sv] = [1.5, -0.5]  # closing at 2 m/s: impact through the slack, then oscillation
    y[dyn.somega] = y[dyn.sv][run.train.axle_vehicle] / run.train.axle_radius
    m_eff = 92500.0 + 4 * 96.0 / 0.4785**2  # each car and its four rolling wheelsets
    p0 = m_eff * (1.5 - 0.5)
    momenta = []
    run.integrator.on_segment = lambda seg: momenta.append(m_eff * float(seg.y1[dyn.sv].sum()))
    run.integrator.on_steps = None  # the compiled loop's steps too, one by one
    run.integrator.restart(0.0, y)
    run.integrator.advance(30.0)
    assert len(momenta) > 100
    assert run.integrator.event_counts["slack edge"] > 0  # the slack was crossed, and located
    assert max(abs(p - p0) for p in momenta) <= 1e-9 * abs(p0)


def test_braked_car_on_20_permille_grade_stays_still_for_an_hour():
    sc = make_scenario([{"config": car_config()}], [{"length": "20 km", "grade": "20 permille"}],
                       start={"position": "10 km"}, stop={"max_time": 3600.0},
                       driver=[{"at_time": 0.0, "set": {"hand_brake": 1.0}}],
                       solver={"control_step": 1.0},  # nothing to control for an hour
                       output={"sample_interval": 60.0})
    r = Drive(sc).run()
    assert r.summary["sim_time_s"] == pytest.approx(3600.0)
    assert np.max(np.abs(r.series["position_m"] - (10000.0 - HALF))) < 1e-3


def test_unbraked_car_on_20_permille_grade_rolls_away():
    # The counterpart: without the brake, grade (20 N/kN) beats starting resistance.
    sc = make_scenario([{"config": car_config()}], [{"length": "20 km", "grade": "20 permille"}],
                       start={"position": "10 km"}, stop={"max_time": 60.0})
    r = Drive(sc).run()
    assert r.series["position_m"][-1] < (10000.0 - HALF) - 10.0


def test_rotating_mass_factor_of_the_hump_yard_rule_follows_from_wheelset_inertia():
    # J/r^2 = 420 kg per axle gives k = 1/(1 + 0.42 n/m) with m in tonnes.
    r_wheel = 0.4785
    cfg = car_config(wheelset_inertia=420.0 * r_wheel**2,
                     resistance={"formula": "none", "starting": False})
    sc = make_scenario([{"config": cfg}], [{"length": "20 km", "grade": "-15 permille"}],
                       start={"position": "1 km"}, stop={"max_time": 20.0})
    r = Drive(sc).run()
    k = 1.0 / (1.0 + 0.42 * 4 / 92.5)
    a_expected = G * 0.015 / math.sqrt(1 + 0.015**2) * k
    assert r.series["accel_mps2"][-1] == pytest.approx(a_expected, rel=1e-12)


class TorqueLoco(VehicleModel):
    """Applies a fixed torque to every axle: the slip test's probe."""

    type_name = "torque_loco"
    params = {"torque": Param("N*m", 0.0, "torque per axle")}

    def step(self, t, dt):
        self.Q_a[:, 1:] = self.p.torque


class _TorquePlugin:
    @rrscore.hookimpl
    def rrs_vehicle_types(self):
        return [TorqueLoco]


def _slip_drive(torque_fraction: float):
    psi, mass, axles, radius = 0.25, 184000.0, 8, 0.625
    limit = psi * mass * G / axles * radius  # adhesion x axle load x radius
    cfg = {"vehicle": {"type": "torque_loco", "empty_mass": mass, "length": 20.0,
                       "num_axis": axles, "wheel_diameter": 2 * radius,
                       "wheelset_inertia": 250.0,
                       "resistance": {"formula": "none", "starting": False},
                       "adhesion": {"formula": "constant", "psi": psi}},
           "params": {"torque": torque_fraction * limit}}
    registry = load_registry(extra=[_TorquePlugin()])
    sc = make_scenario([{"config": cfg}], registry=registry, stop={"max_time": 5.0},
                       output={"vehicles": [0], "vehicle_signals": ["max_slip_mps"]})
    d = Drive(sc)
    return d, d.run()


def test_axle_torque_below_adhesion_limit_rolls():
    d, r = _slip_drive(0.95)
    assert r.summary["events"]["slip"] == 0
    dyn, y = d.dyn, d.solver.y
    np.testing.assert_allclose(y[dyn.somega] * 0.625, y[dyn.sv][0], rtol=1e-12)
    # creep slip only: below the creep-law peak (0.1 m/s by default)
    assert r.series["v0_max_slip_mps"].max() < 0.1


def test_axle_torque_above_adhesion_limit_slips():
    d, r = _slip_drive(1.05)
    assert r.summary["events"]["slip"] == 8
    dyn, y = d.dyn, d.solver.y
    slip = y[dyn.somega] * 0.625 - y[dyn.sv][0]
    assert np.all(slip > 1.0)  # wheels spin up: gross slip, far past the creep peak


def test_brake_above_adhesion_slides_the_wheels_and_they_stop_on_sliding_friction():
    # SimpleLoco braking with 1000 kN on rails with psi = 0.2 (360 kN available): every
    # axle slides, locks, and the locomotive stops on sliding friction, about 0.7 psi g
    # (the creep law's kinetic ratio), then the wheels re-adhere at standstill.
    psi, v0 = 0.2, 60 / 3.6
    cfg = {"vehicle": {"type": "simple_loco", "empty_mass": "184 t", "length": "32.8 m",
                       "num_axis": 8, "wheel_diameter": "1.25 m",
                       "wheelset_inertia": "250 kg*m^2",
                       "resistance": {"formula": "none", "starting": False},
                       "adhesion": {"formula": "constant", "psi": psi}},
           "params": {"brake_force": "1000 kN", "brake_rate": "1000 1/s"}}  # at once
    sc = make_scenario([{"config": cfg}], start={"position": "1 km", "speed": v0},
                       driver=[{"at_time": 0.0, "press": "brake"}],
                       stop={"max_time": 60.0, "standstill": True, "standstill_speed": 0.0})
    r = Drive(sc).run()
    kinds = [e.kind for e in r.events]
    assert kinds.count("slide") == 8 and kinds.count("slip") == 0
    assert kinds.count("wheel locked") == 8
    assert kinds.count("re-adhesion") == 8
    assert r.summary["stop_reason"] == "standstill"
    # Independent: the body alone (locked wheelsets add no rotating mass) slowed by the
    # creep law's sliding branch, k + (1 - k) 2x/(1 + x^2) at slip x = v/s0 (k = 0.7,
    # s0 = 0.1 m/s), saturated at 1 inside the peak.
    from scipy.integrate import solve_ivp

    def ratio(v):
        x = v / 0.1
        return 1.0 if x <= 1 else 0.7 + 0.3 * 2 * x / (1 + x * x)

    stop = lambda t, y: y[1]  # noqa: E731
    stop.terminal = True
    ref = solve_ivp(lambda t, y: [y[1], -psi * G * ratio(y[1])], (0, 60), [0.0, v0],
                    events=stop, rtol=1e-10, atol=1e-10)
    # within 0.5 %: the first tenth of a second, while the wheels spin down to a lock,
    # the contact still gives its peak
    assert r.summary["distance_m"] == pytest.approx(ref.y[0][-1], rel=5e-3)


@pytest.mark.parametrize(("method", "step"), [("rk4", 0.05), ("rk4", 1.0), ("rk45", 0.01)])
def test_braked_car_stops_where_the_closed_form_says_and_stays_stopped(method, step):
    # A frictionless car at 5 m/s with its hand brake on: constant deceleration F/M_eff
    # (rolling wheelsets included), so it stops after v^2/(2a) and stays there. With the
    # resistance's sign taken per stage, rk4 used to miss the stop and creep, or (1 s
    # steps) move backwards while its recorded speed stayed positive.
    F, v0 = 60e3, 5.0
    sc = make_scenario([{"config": car_config(resistance={"formula": "none",
                                                           "starting": False})}],
                       start={"position": "1 km", "speed": v0},
                       driver=[{"at_time": 0.0, "set": {"hand_brake": 1.0}}],
                       solver={"method": method, "step": step, "control_step": step},
                       stop={"max_time": 60.0}, output={"sample_interval": 0.5})
    r = Drive(sc).run()
    m_eff = 92500.0 + 4 * 96.0 / 0.4785**2
    a = F / m_eff
    t = r.series["time_s"]
    v = r.series["speed_mps"]
    assert (v >= 0.0).all()
    np.testing.assert_allclose(v, np.maximum(v0 - a * t, 0.0), rtol=1e-9, atol=1e-9)
    assert r.series["position_m"][-1] - (1000.0 - HALF) == pytest.approx(v0**2 / (2 * a), rel=1e-9)
    assert r.summary["final_speed_mps"] == 0.0


def test_zero_wheelset_inertia_is_a_config_error_naming_the_key():
    with pytest.raises(rrscore.ConfigError) as info:
        make_scenario([{"config": car_config(wheelset_inertia="0 kg*m^2")}])
    assert "wheelset_inertia" in str(info.value)
    assert "> 0" in str(info.value)


# ---------------------------------------------------------------- held inputs
def _numpy_held(body_force, body_resist, mass, equiv, rows, vehicle, c0, start0, rigid):
    """The held rows as the numpy operations had them: np.bincount over the loaded axles,
    then the rows of Bodies.held."""
    n = body_force.size
    force = body_force + np.bincount(vehicle, rows[2] / rows[4], n)
    resist = body_resist + np.bincount(vehicle, rows[3] / rows[4], n)
    m = mass + equiv
    held = np.stack([force, resist + c0, resist, 1.0 / m, m])
    friction = held[1] + start0 > 0.0
    if rigid:
        friction[:] = friction.any()
    return held, friction


@pytest.mark.parametrize("rigid", [False, True])
def test_held_inputs_of_a_control_step_are_numpys_to_the_bit(rigid):
    from rrscore.dynamics import HELD_WORK_ROWS, _held_inputs, held_inputs_into

    rng = np.random.default_rng(7)
    n, k = 30, 50
    body_force, c0 = rng.normal(size=n) * 1e4, rng.uniform(0, 2e3, n)
    body_resist = np.where(rng.uniform(size=n) < 0.5, 0.0, rng.uniform(0, 5e3, n))
    c0[:10] = 0.0
    start0 = np.where(rng.uniform(size=n) < 0.5, 0.0, 1e3)
    mass, equiv = rng.uniform(2e4, 1e5, n), rng.uniform(0, 1e3, n)
    vehicle = np.sort(rng.integers(0, n, k))  # several axles on a vehicle, some none
    rows = rng.normal(size=(8, k)) * 1e3
    rows[4] = rng.uniform(0.4, 0.6, k)  # radii
    got = _held_inputs(body_force, body_resist, mass, equiv, rows, vehicle, c0, start0, rigid)
    want = _numpy_held(body_force, body_resist, mass, equiv, rows, vehicle, c0, start0, rigid)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    # the compiled loop's control steps write them in place, with room holding stale values
    held, friction = np.full((5, n), 5.0), np.zeros(n, dtype=bool)
    held_inputs_into(held, friction, np.full((HELD_WORK_ROWS, n), 5.0), body_force,
                     body_resist, mass, equiv, rows, vehicle, c0, start0, rigid)
    np.testing.assert_array_equal(held, want[0])
    np.testing.assert_array_equal(friction, want[1])


def test_the_trains_drive_force_is_its_locomotives_force_at_the_level_set():
    # four locomotives of F_max = 450 kN (configs/vehicles/loco_3250kw.toml) at half
    # traction from a standstill, 100 cars pulling nothing: 4 x 0.5 x 450 kN in the
    # first control step (the time series' column, and the compiled loop's samples)
    sc = rrscore.load_scenario(CONFIGS / "scenarios" / "rigid_40km.toml").with_values(
        {"autodriver.mode": "off", "stop.max_time": 5.0,
         "driver": [{"at_time": 0.0, "all_vehicles": True,
                     "set": {"traction_level": 0.5}}]})
    run = Run(sc)
    run.advance(1.0)  # to the second control step: the inputs of the first, at rest
    assert run.dyn.traction_total() == pytest.approx(4 * 0.5 * 450e3, rel=1e-12)


@pytest.mark.parametrize("rigid", [False, True])
def test_held_inputs_taken_anew_for_some_vehicles_are_all_of_them_taken_anew(rigid):
    # a control step that placed new inputs on a few vehicles (held_inputs_of) leaves the
    # held rows and friction that taking every vehicle anew (held_inputs_into) gives, to
    # the bit: the others' rows as they were, the friction over all
    from rrscore.dynamics import HELD_WORK_ROWS, held_inputs_into, held_inputs_of

    rng = np.random.default_rng(3)
    n, k = 30, 50
    c0 = np.where(rng.uniform(size=n) < 0.3, 0.0, rng.uniform(0, 2e3, n))
    start0 = np.where(rng.uniform(size=n) < 0.5, 0.0, 1e3)
    mass, equiv = rng.uniform(2e4, 1e5, n), rng.uniform(0, 1e3, n)
    vehicle = np.sort(rng.integers(0, n, k))
    rows = rng.normal(size=(8, k)) * 1e3
    rows[4] = rng.uniform(0.4, 0.6, k)
    body_force, body_resist = rng.normal(size=n) * 1e4, np.zeros(n)
    before, friction = np.empty((5, n)), np.zeros(n, dtype=bool)
    held_inputs_into(before, friction, np.empty((HELD_WORK_ROWS, n)), body_force,
                     body_resist, mass, equiv, rows, vehicle, c0, start0, rigid)
    changed = np.zeros(n)
    changed[[2, 7, 8, 20]] = 1.0
    body_force[changed == 1.0] *= -0.5  # new inputs on those vehicles and their axles
    body_resist[changed == 1.0] = 4e3
    rows[2:4, np.isin(vehicle, [2, 7, 8, 20])] *= 0.25
    want, want_friction = np.empty((5, n)), np.zeros(n, dtype=bool)
    held_inputs_into(want, want_friction, np.empty((HELD_WORK_ROWS, n)), body_force,
                     body_resist, mass, equiv, rows, vehicle, c0, start0, rigid)
    old = before.copy()
    held_inputs_of(before, friction, np.full((HELD_WORK_ROWS, n), 9.0), changed, body_force,
                   body_resist, c0, start0, rows, vehicle, rigid)
    moved = changed == 1.0
    assert np.all(old[0, moved] != want[0, moved])  # the case changes those rows
    np.testing.assert_array_equal(before, want)
    np.testing.assert_array_equal(friction, want_friction)


def test_the_loaded_axles_rows_updated_in_place_are_the_rows_taken_anew():
    # where the same axles stay loaded, loaded_rows_update gives loaded_rows_into's rows
    from rrscore.physics.wheelsets import _loaded_rows, loaded_rows_update

    rng = np.random.default_rng(5)
    na = 40
    rolling = rng.uniform(size=na) < 0.9
    torque = np.where(rng.uniform(size=na) < 0.4, rng.normal(size=na) * 1e4, 0.0)
    brake = np.where(torque == 0.0, np.where(rng.uniform(size=na) < 0.3, 2e3, 0.0), 0.0)
    args = (np.repeat(np.arange(10), 4), rng.uniform(0.4, 0.6, na), rng.uniform(0, 500, na))
    normal = rng.uniform(5e4, 1e5, na)
    rows = _loaded_rows(rolling, torque, brake, args[0], args[1], args[2],
                        np.ones(na), normal)
    loaded = (torque != 0.0) | (brake != 0.0)
    torque[torque != 0.0] *= 1.5
    brake[brake != 0.0] += 1e3
    rail = rng.uniform(0.5, 1.0, na)
    assert np.array_equal(loaded, (torque != 0.0) | (brake != 0.0))
    loaded_rows_update(rows, torque, brake, rail)
    np.testing.assert_array_equal(rows, _loaded_rows(rolling, torque, brake, args[0], args[1],
                                                     args[2], rail, normal))


def test_the_drive_force_from_the_loaded_axles_is_every_axle_s_sum_to_the_bit():
    # the compiled loops' samples sum only the loaded axles (traction_loaded): where every
    # axle rolls, the others have no torque and the total is traction_sum's, bit for bit
    # (some axles braked without torque, some driven backwards, one vehicle's body force)
    from rrscore.dynamics import traction_loaded, traction_sum
    from rrscore.physics.wheelsets import _loaded_rows

    rng = np.random.default_rng(7)
    n, k = 12, 4
    vehicle = np.repeat(np.arange(n), k)
    torque = np.where(rng.random(n * k) < 0.3, rng.normal(0.0, 4e4, n * k), 0.0)
    brake = np.where(rng.random(n * k) < 0.3, rng.random(n * k) * 1e4, 0.0)
    radius = rng.uniform(0.45, 0.55, n * k)
    body_force = np.where(np.arange(n) == 5, -3e3, 0.0)
    rows = _loaded_rows(np.ones(n * k, dtype=np.bool_), torque, brake, vehicle, radius,
                        np.zeros(n * k), np.ones(n * k), np.ones(n * k))
    assert 0 < rows.shape[1] < n * k
    per = np.empty(n)
    want = traction_sum(body_force, torque, vehicle, radius, per)
    assert traction_loaded(body_force, rows, per) == want
    assert want != 0.0


def test_inputs_a_model_set_are_placed_in_the_train_frame_as_numpy_places_them():
    from rrscore.dynamics import _place

    rng = np.random.default_rng(3)
    n, k, na, nv = 4, 3, 40, 12  # a batch of 4 vehicles of 3 axles, in a longer train
    veh = np.array([2, 5, 6, 9])
    axles = rng.permutation(na)[: n * k]
    sign = np.array([1.0, -1.0, 1.0, -1.0])
    q_a, q_r = rng.normal(size=(n, k + 1)) * 1e4, rng.normal(size=(n, k + 1)) * 1e3
    q_r[0, 0] = -0.0
    factor = rng.uniform(0.5, 1.5, (n, k))
    condition = rng.uniform(0.2, 1.0, na)
    arrays = [rng.normal(size=nv), rng.normal(size=nv), rng.normal(size=na),
              rng.normal(size=na), rng.normal(size=na)]
    want = [a.copy() for a in arrays]
    want[0][veh] = q_a[:, 0] * sign
    want[1][veh] = np.abs(q_r[:, 0])
    want[2][axles] = (q_a[:, 1:] * sign[:, None]).ravel()
    want[3][axles] = np.abs(q_r[:, 1:]).ravel()
    want[4][axles] = condition[axles] * factor.ravel()
    last = np.full(q_a.size + q_r.size + factor.size, np.nan)
    assert _place(q_a, q_r, factor, last, sign, veh, axles, *arrays, condition)
    for got, expected in zip(arrays, want, strict=True):
        np.testing.assert_array_equal(got, expected)
    assert np.signbit(arrays[1][veh[0]]) == np.signbit(np.abs(-0.0))
    before = [a.copy() for a in arrays]
    arrays[0][:] = 0.0  # unchanged inputs are not placed again
    assert not _place(q_a, q_r, factor, last, sign, veh, axles, *arrays, condition)
    np.testing.assert_array_equal(arrays[0], 0.0)
    np.testing.assert_array_equal(arrays[2], before[2])


def test_inputs_a_model_set_again_are_unchanged_and_any_new_value_is_a_change():
    from rrscore.dynamics import _take_changed

    q_a, q_r, factor = np.zeros((3, 5)), np.ones((3, 5)), np.full((3, 4), 1.0)
    last = np.concatenate([q_a.ravel(), q_r.ravel(), factor.ravel()])
    assert not _take_changed(q_a, q_r, factor, last)
    for a, index in ((q_a, (2, 4)), (q_r, (0, 0)), (factor, (1, 3))):
        a[index] = 7.0
        assert _take_changed(q_a, q_r, factor, last)  # and last takes the new values
        np.testing.assert_array_equal(
            last, np.concatenate([q_a.ravel(), q_r.ravel(), factor.ravel()]))
        assert not _take_changed(q_a, q_r, factor, last)
    q_a[0, 0] = np.nan  # never equal to itself: always a change, as np.array_equal says
    assert _take_changed(q_a, q_r, factor, last) and _take_changed(q_a, q_r, factor, last)
    assert _take_changed(q_a[:, ::2], q_r[:, :3], factor[:, :1], last)  # any layout
