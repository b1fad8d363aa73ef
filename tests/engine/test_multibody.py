"""Equations of motion against answers known without the code: closed-form motion,
conservation of momentum, static friction, wheel slip at the adhesion limit, and the
inputs a control step holds on each body."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import CONFIGS, G, car_config, make_scenario

import rrscore
from rrscore import Drive, Param, Run, VehicleModel, load_registry
from rrscore.model.formulas import RAIL_CONDITIONS
from rrscore.physics.bodies import coulomb

#: The test car's half length: a start position is the train's front, position_m a centre.
HALF = 13.92 / 2
#: The test car (92.5 t loaded) with its four rolling wheelsets' J/r^2.
M_EFF = 92500.0 + 4 * 96.0 / 0.4785**2


def test_coulomb_net_holds_below_the_limit_and_passes_the_excess():
    force = np.array([3.0, -3.0, 7.0, -7.0, 3.0])
    resist = np.array([5.0, 5.0, 5.0, 5.0, 5.0])
    speed = np.array([0.0, 0.0, 0.0, 0.0, -1.0])
    assert coulomb(force, resist, speed).tolist() == [0.0, 0.0, 2.0, -2.0, 8.0]


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
    a = (m * G * 0.010 / math.sqrt(1 + grade**2) - A) / M_EFF
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
    gs = m * G * grade / math.sqrt(1 + grade**2)
    a_up, a_back = -(gs + A) / M_EFF, -(gs - A) / M_EFF
    t_stop = v0 / -a_up
    t = r.series["time_s"]
    v_expected = np.where(t < t_stop, v0 + a_up * t, a_back * (t - t_stop))
    x_stop = (10000.0 - HALF) + v0 * t_stop + 0.5 * a_up * t_stop**2
    x_expected = np.where(t < t_stop, (10000.0 - HALF) + v0 * t + 0.5 * a_up * t**2,
                          x_stop + 0.5 * a_back * (t - t_stop) ** 2)
    np.testing.assert_allclose(r.series["speed_mps"], v_expected, atol=1e-8)
    np.testing.assert_allclose(r.series["position_m"], x_expected, atol=1e-7)
    assert r.summary["events"]["standstill"] == 1


def test_a_rolling_wheelset_turns_by_the_distance_over_its_radius():
    # rolling without slip: each axle's angle grows by s / r, s the distance its car ran
    # (here down a grade from rest, so the speed varies)
    sc = make_scenario([{"config": car_config()}, {"config": car_config()}],
                       [{"length": "60 km", "grade": -0.01}],
                       start={"position": "10 km"}, stop={"max_time": 60.0})
    run = Run(sc)
    x0, phi0 = run.state("body.x"), run.state("wheel.phi")
    run.advance()
    ran = run.state("body.x") - x0
    assert ran.min() > 100.0  # the cars rolled off
    turned = run.state("wheel.phi") - phi0
    expected = ran[run.train.axle_vehicle] / run.train.axle_radius
    np.testing.assert_allclose(turned, expected, rtol=1e-12)


def test_rolling_wheelsets_spin_at_v_over_r_in_every_sample_between_steps():
    # a rolling axle's spin and angle are not integrated: read off its car in every
    # state, the samples between steps (interpolated) included
    seen = []
    sc = make_scenario([{"config": car_config()}, {"config": car_config()}],
                       [{"length": "60 km", "grade": -0.01}],
                       start={"position": "10 km"}, stop={"max_time": 30.0},
                       output={"sample_interval": 0.37})
    run = Run(sc, on_sample=lambda t, y, row: seen.append((t, y.copy())))
    run.advance()
    tr, system = run.train, run.system
    sx, sv, somega, sphi = system.sx, system.sv, system.somega, system.sphi
    steps = run.control_step  # the steps end at control times, at least
    assert sum(abs(t / steps - round(t / steps)) > 1e-6 for t, _ in seen) > 60
    y0 = seen[0][1]
    for _, y in seen[1:]:
        v, x = y[sv][tr.axle_vehicle], y[sx][tr.axle_vehicle]
        np.testing.assert_allclose(y[somega], v / tr.axle_radius, rtol=1e-14)
        np.testing.assert_allclose(y[sphi] - y0[sphi],
                                   (x - y0[sx][tr.axle_vehicle]) / tr.axle_radius,
                                   rtol=1e-12)


def test_two_coupled_cars_conserve_momentum():
    # No resistance, level track: only the coupler acts, so sum(M_eff v) is constant.
    # Closing at 2 m/s: impact through the slack, then oscillation. Checked in every
    # sample (the dense output between the steps, and the steps' ends at control times).
    cfg = car_config(resistance={"formula": "none", "starting": False})
    sc = make_scenario([{"config": cfg, "count": 2}],
                       coupling={"model": "spring_damper",
                                 "params": {"stiffness": "20 MN/m", "damping": "100 kN*s/m",
                                            "slack": "20 mm"}},
                       start={"speeds": [1.5, -0.5]}, stop={"max_time": 30.0},
                       output={"sample_interval": 0.01})
    momenta = []
    run = Run(sc, on_sample=lambda t, y, row: momenta.append(M_EFF * float(
        y[run.system.sv].sum())))
    p0 = M_EFF * (1.5 - 0.5)
    assert M_EFF * float(run.state("body.v").sum()) == pytest.approx(p0, rel=1e-15)
    run.advance()
    assert run.clock[0].steps > 100 and len(momenta) > 2900
    assert run.clock[0].kinks > 0  # the slack was crossed, and located
    assert np.ptp(run.state("body.v")) > 0.01  # the coupler acted: the speeds differ
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


def _torque_step(t, dt, veh):  # pragma: no cover (compiled)
    for i in range(veh.count):
        for j in range(1, veh.axles + 1):
            veh.q_a[i, j] = veh.torque[i]


class TorqueLoco(VehicleModel):
    """Applies a fixed torque to every axle: the slip test's probe."""

    type_name = "torque_loco"
    params = {"torque": Param("N*m", 0.0, "torque per axle")}
    step = staticmethod(_torque_step)


class _TorquePlugin:
    @rrscore.hookimpl
    def rrs_vehicle_types(self):
        return [TorqueLoco]


#: The torque locomotive: 184 t on 8 axles of 0.625 m radius and 250 kg m^2.
SLIP_MASS, SLIP_AXLES, SLIP_RADIUS, SLIP_J = 184000.0, 8, 0.625, 250.0


def _slip_drive(torque_fraction: float):
    psi = 0.25
    limit = psi * SLIP_MASS * G / SLIP_AXLES * SLIP_RADIUS  # adhesion x axle load x radius
    cfg = {"vehicle": {"type": "torque_loco", "empty_mass": SLIP_MASS, "length": 20.0,
                       "num_axis": SLIP_AXLES, "wheel_diameter": 2 * SLIP_RADIUS,
                       "wheelset_inertia": SLIP_J,
                       "resistance": {"formula": "none", "starting": False},
                       "adhesion": {"formula": "constant", "psi": psi}},
           "params": {"torque": torque_fraction * limit}}
    registry = load_registry(extra=[_TorquePlugin()])
    sc = make_scenario([{"config": cfg}], registry=registry, stop={"max_time": 5.0},
                       output={"vehicles": [0], "vehicle_signals": ["max_slip_mps"]})
    d = Drive(sc)
    return d.run_, d.run()


def test_axle_torque_below_adhesion_limit_rolls():
    run, r = _slip_drive(0.95)
    assert r.summary["events"]["slip"] == 0
    np.testing.assert_allclose(run.state("wheel.omega") * SLIP_RADIUS,
                               run.state("body.v")[0], rtol=1e-12)
    # creep slip only: below the creep-law peak (0.1 m/s by default)
    assert r.series["v0_max_slip_mps"].max() < 0.1
    # every axle rolls: the body carries their J/r^2
    held = run.system.sys.held
    assert held.mass[0] == pytest.approx(SLIP_MASS + SLIP_AXLES * SLIP_J / SLIP_RADIUS**2,
                                         rel=1e-15)


def test_axle_torque_above_adhesion_limit_slips():
    run, r = _slip_drive(1.05)
    assert r.summary["events"]["slip"] == 8
    slip = run.state("wheel.omega") * SLIP_RADIUS - run.state("body.v")[0]
    assert np.all(slip > 1.0)  # wheels spin up: gross slip, far past the creep peak
    # slipping wheelsets turn on their own: the body no longer carries their inertia,
    # nor their torque (it gets the rail force instead)
    held = run.system.sys.held
    assert held.mass[0] == SLIP_MASS
    assert held.force[0] == 0.0


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
    a = F / M_EFF
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
    assert run.system.traction_force().sum() == pytest.approx(4 * 0.5 * 450e3, rel=1e-12)
    assert run.system.sys.totals[0] == pytest.approx(4 * 0.5 * 450e3, rel=1e-12)


LOCO_MASS_EFF = 184e3 + 8 * 250.0 / 0.625**2  # SimpleLoco: 8 axles of 250 kg m^2, r 0.625 m


@pytest.mark.parametrize("dynamics", ["multibody", "rigid"])
def test_a_control_step_holds_each_vehicles_force_resistance_and_effective_mass(dynamics):
    # SimpleLoco at half traction, two cars, and a second SimpleLoco facing the rear at
    # half traction too: at rest, the front one pulls forwards with 0.5 x 450 kN through
    # its rolling axles and the reversed one backwards with as much (train frame); the
    # first car's hand brake holds 60 kN against the motion (a magnitude). Each body's
    # mass is its own and its rolling wheelsets' J/r^2. On wet rails, the front one sands:
    # its axles' rail factor is the rail condition's times its sanding factor (1.25). At
    # t = 2 s the hand brake moves to the second car: only its vehicles' inputs change,
    # and the held sums follow.
    sc = make_scenario(
        [{"config": "vehicles/simple_loco.toml"}, {"config": car_config(), "count": 2},
         {"config": "vehicles/simple_loco.toml", "orientation": "reversed"}],
        dynamics=dynamics, start={"position": "5 km"},
        driver=[{"at_time": 0.0, "rail_condition": "wet"},
                {"at_time": 0.0, "vehicle": 0, "press": "sand"},
                {"at_time": 0.0, "vehicle": 0, "set": {"traction_level": 0.5}},
                {"at_time": 0.0, "vehicle": 3, "set": {"traction_level": 0.5}},
                {"at_time": 0.0, "vehicle": 1, "set": {"hand_brake": 1.0}},
                {"at_time": 2.0, "vehicle": 1, "set": {"hand_brake": 0.0}},
                {"at_time": 2.0, "vehicle": 2, "set": {"hand_brake": 1.0}}],
        stop={"max_time": 5.0})
    run = Run(sc)
    held, inputs = run.system.sys.held, run.system.inputs
    run.advance(0.05)  # the first control step's inputs, placed at rest
    np.testing.assert_allclose(held.force, [225e3, 0.0, 0.0, -225e3], rtol=1e-12, atol=0)
    np.testing.assert_allclose(held.resist, [0.0, 60e3, 0.0, 0.0], rtol=1e-12, atol=0)
    np.testing.assert_allclose(held.mass, [LOCO_MASS_EFF, M_EFF, M_EFF, LOCO_MASS_EFF],
                               rtol=1e-15)
    np.testing.assert_allclose(held.inv_mass, 1.0 / held.mass, rtol=1e-15)
    assert np.all(inputs.body_force == 0.0)  # (both drive through their axles)
    tr = run.train
    np.testing.assert_allclose(inputs.brake_own, np.where(tr.axle_vehicle == 1,
                                                          60e3 / 4 * 0.4785, 0.0), rtol=1e-12)
    assert np.all(held.friction == 1.0)  # the cars' starting resistance, the brake
    wet = RAIL_CONDITIONS["wet"]
    assert wet < 1.0
    np.testing.assert_allclose(run.system.sys.axles.rail_factor,
                               np.where(tr.axle_vehicle == 0, wet * 1.25, wet), rtol=1e-15)
    run.advance(2.05)  # the control step at 2 s placed the change
    np.testing.assert_allclose(held.resist, [0.0, 0.0, 60e3, 0.0], rtol=1e-12, atol=0)
    np.testing.assert_allclose(held.mass, [LOCO_MASS_EFF, M_EFF, M_EFF, LOCO_MASS_EFF],
                               rtol=1e-15)
    assert abs(held.force[0]) > 200e3 and held.force[3] == pytest.approx(-held.force[0],
                                                                          rel=1e-3)
