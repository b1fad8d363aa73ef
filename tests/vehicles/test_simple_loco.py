"""SimpleLoco against the seed-003 traction characteristic and an independent integration."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import CONFIGS
from scipy.integrate import solve_ivp

from rrscore import Drive, Run
from rrscore.vehicles.simple_loco import SimpleLoco

G = 9.80665


def _loco(scenario_builder, **sections):
    return scenario_builder([{"config": "vehicles/simple_loco.toml"}], **sections)


def _record(scenario_builder):
    """The record of the shipped SimpleLoco (``veh.F_max[0]``, ...), as its functions get it."""
    return _loco(scenario_builder).build_train().batches[0].record.view


def _press(veh, key, value):
    """A key pressed (1) or let go (0) on the locomotive, as the driver program does it:
    the key's row set, then the plugin's ``on_input``."""
    getattr(veh, key)[0] = value
    SimpleLoco.on_input(veh, 0, key, value)


@pytest.mark.parametrize(
    ("speed_kmh", "force_kn"),
    [
        (0.0, 0.5 * 450.0),  # F_max
        (40.0, 0.5 * (450.0 + (350.0 - 450.0) * 40.0 / 80.0)),  # on the line
        (80.0, 0.5 * 350.0),  # F_nom at V_nom
        (120.0, 0.5 * 350.0 * 80.0 / 120.0),  # constant power
    ],
)
def test_traction_force_at_half_level_follows_seed_formula(scenario_builder, speed_kmh, force_kn):
    veh = _record(scenario_builder)
    veh.traction_level[:] = 0.5
    veh.v[:] = speed_kmh / 3.6
    SimpleLoco.step(0.0, 0.05, veh)
    radius, axles = 1.25 / 2, 8
    np.testing.assert_allclose(veh.q_a[0, 1:], force_kn * 1e3 * radius / axles, rtol=1e-12)
    assert veh.traction_force_N[0] == pytest.approx(force_kn * 1e3, rel=1e-12)
    assert veh.q_a[0, 0] == 0.0


def test_traction_keys_ramp_the_level_at_the_configured_rate(scenario_builder):
    veh = _record(scenario_builder)
    _press(veh, "traction_up", 1.0)
    for _ in range(10):
        SimpleLoco.step(0.0, 0.1, veh)
    assert veh.traction_level[0] == pytest.approx(0.5)  # 0.5 per second for 1 s
    _press(veh, "traction_up", 0.0)
    _press(veh, "traction_down", 1.0)
    for _ in range(20):
        SimpleLoco.step(0.0, 0.1, veh)
    assert veh.traction_level[0] == 0.0  # clipped at zero


def test_full_traction_on_level_track_matches_independent_integration(scenario_builder):
    sc = _loco(scenario_builder, start={"position": "1 km"}, stop={"max_time": 300.0},
               driver=[{"at_time": 0.0, "set": {"traction_level": 1.0}}])
    r = Drive(sc).run()

    # Independent model: the seed formula, the Russian-rules locomotive resistance
    # under power, and the wheelsets' inertia in the effective mass.
    m, axles, radius, inertia = 184e3, 8, 0.625, 250.0
    m_eff = m + axles * inertia / radius**2

    def traction(v):
        kmh = abs(v) * 3.6
        return (450e3 + (350e3 - 450e3) * kmh / 80.0) if kmh < 80.0 else 350e3 * 80.0 / kmh

    def resistance(v):
        kmh = abs(v) * 3.6
        return (1.9 + 0.01 * kmh + 0.0003 * kmh**2) * m * G / 1000.0

    ref = solve_ivp(lambda t, y: [(traction(y[0]) - resistance(y[0])) / m_eff], (0, 300),
                    [0.0], t_eval=[60.0, 300.0], rtol=1e-10, atol=1e-10)
    t = r.series["time_s"]
    for when, expected in zip((60.0, 300.0), ref.y[0], strict=True):
        got = r.series["speed_mps"][np.argmin(abs(t - when))]
        assert got == pytest.approx(expected, rel=5e-3)  # the bound asked for
        # What holding F(v) over each 50 ms control step costs: F falls with v, so the
        # held value runs slightly ahead; near top speed F - R is small and this shows.
        assert got == pytest.approx(expected, rel=5e-4)


def test_loco_brake_key_stops_the_locomotive(rrs_train):
    loco = rrs_train(CONFIGS / "vehicles" / "simple_loco.toml")
    r = loco.drive([(0, "press brake")], max_time="300 s",
                   start={"position": "1 km", "speed": "60 km/h"},
                   stop={"standstill": True, "standstill_speed": 0.0})
    assert r.summary["stop_reason"] == "standstill"
    assert r.summary["final_speed_mps"] == 0.0
    # Without resistance: the brake level rises at 1/s, so the deceleration is A t for
    # 1 s (A = 350 kN / m_eff), then A: x = v0 - A/6 in that second, then v1^2/(2A) with
    # v1 = v0 - A/2. The running resistance (loco_power, about 2 % of the brake force at
    # 60 km/h and less below) shortens the stop a little.
    v0, a = 60 / 3.6, 350e3 / (184e3 + 8 * 250.0 / 0.625**2)
    no_resistance = v0 - a / 6 + (v0 - a / 2) ** 2 / (2 * a)
    assert 0.97 * no_resistance < r.distance_to_stop() < no_resistance


def test_a_set_brake_level_holds_until_changed(scenario_builder):
    # It used to decay at brake_rate as if the brake key had been let go.
    sc = _loco(scenario_builder, driver=[{"at_time": 0.0, "set": {"brake_level": 0.5}},
                                         {"at_time": 0.0, "set": {"traction_level": 0.3}}],
               stop={"max_time": 10.0})
    run = Run(sc)
    run.advance()
    veh = run.train.batches[0].record.view
    assert veh.brake_level[0] == 0.5 and veh.traction_level[0] == 0.3


def test_the_brake_key_raises_the_level_and_letting_go_releases_it(scenario_builder):
    sc = _loco(scenario_builder, driver=[{"at_time": 0.0, "press": "brake"},
                                         {"at_time": 0.5, "release": "brake"}],
               stop={"max_time": 0.75})
    run = Run(sc)
    run.advance(0.5)
    assert run.train.batches[0].record.view.brake_level[0] == pytest.approx(
        0.5, abs=1e-12)  # 1/s for 0.5 s
    run.advance()
    assert run.train.batches[0].record.view.brake_level[0] == pytest.approx(
        0.25, abs=1e-12)  # falling at 1/s


def test_main_reservoir_fills_through_the_choke_as_the_closed_form(rrs_train, rrs_curve):
    # The shipped example of a plugin-declared state. From empty, the compressor runs
    # (below cut-in) and the reservoir fills through the choke while it leaks:
    # dp/dt = (p_max - p)/tau - p/tau_leak, so p = p_inf (1 - exp(-t/T)) with
    # 1/T = 1/tau + 1/tau_leak and p_inf = p_max T / tau. The cut-out is set out of reach.
    p_max, tau, tau_leak = 1.0e6, 60.0, 3600.0
    loco = rrs_train("simple_loco", vehicle_table={"empty_mass": "184 t", "num_axis": 8},
                     reservoir_initial=0.0, cut_out="2 MPa")
    r = loco.drive(max_time="240 s", signals=["main_reservoir", "compressor_on"],
                   output={"sample_interval": 10.0})
    t = r.time[1:]
    big_t = 1.0 / (1.0 / tau + 1.0 / tau_leak)
    rrs_curve(r.time, r.signal("main_reservoir"), t,
              p_max * big_t / tau * (1.0 - np.exp(-t / big_t)), rtol=1e-6)
    assert (r.signal("compressor_on") == 1.0).all()


def test_main_reservoir_state_at_the_end_of_a_run_is_the_closed_form(rrs_train):
    # the state the run integrates, read at its last instant (as above: compressor on
    # from empty, p = p_inf (1 - exp(-t/T)))
    p_max, tau, tau_leak = 1.0e6, 60.0, 3600.0
    loco = rrs_train("simple_loco", vehicle_table={"empty_mass": "184 t", "num_axis": 8},
                     reservoir_initial=0.0, cut_out="2 MPa")
    run = Run(loco.scenario(max_time="240 s", signals=["main_reservoir"]))
    run.advance()
    big_t = 1.0 / (1.0 / tau + 1.0 / tau_leak)
    assert run.t == 240.0
    assert run.state_of("simple_loco.main_reservoir")[0] == pytest.approx(
        p_max * big_t / tau * (1.0 - np.exp(-240.0 / big_t)), rel=1e-6)


def test_governor_keeps_the_main_reservoir_between_cut_in_and_cut_out(scenario_builder):
    sc = _loco(scenario_builder, stop={"max_time": 7200.0},
               solver={"control_step": 1.0},
               output={"sample_interval": 5.0, "vehicles": [0],
                       "vehicle_signals": ["main_reservoir", "compressor_on"]})
    r = Drive(sc).run()
    p = r.series["v0_main_reservoir"]
    on = r.series["v0_compressor_on"]
    # the governor looks once per control step (1 s): it may overshoot by one second's
    # charge, (p_max - p)/tau * 1 s <= 0.25 MPa/60 = 4.2 kPa, or leak, p/tau_leak * 1 s
    assert p.min() >= 0.75e6 - 300.0 and p.max() <= 0.9e6 + 4.2e3
    assert on.min() == 0.0 and on.max() == 1.0  # it switched both ways


def test_several_locomotives_of_one_type_sand_together(scenario_builder):
    # SimpleLoco's sanding broadcast its per-vehicle factor across axles of every
    # locomotive at once, which failed for more than one locomotive in a train
    sc = scenario_builder([{"config": "vehicles/simple_loco.toml", "count": 3}],
                          driver=[{"at_time": 0.0, "all_vehicles": True, "press": "sand"},
                                  {"at_time": 0.0, "all_vehicles": True,
                                   "set": {"traction_level": 1.0}}],
                          stop={"max_time": 2.0})
    r = Drive(sc).run()
    assert r.summary["stop_reason"] == "max_time" and r.series["speed_mps"][-1] > 0.0


# --- dynamic brake ----------------------------------------------------------------------------
# Defaults: 250 kN cap, 4 MW, fading below 10 km/h; the corner speed is 4 MW / 250 kN = 16 m/s.


@pytest.mark.parametrize(
    ("speed_kmh", "force_kn"),
    [
        (5.0, 0.5 * 250.0 * 5.0 / 10.0),  # fading: half the cap at half the fade speed
        (30.0, 0.5 * 250.0),  # the cap
        (100.0, 0.5 * 4000.0 / (100.0 / 3.6)),  # the power limit, 4 MW / v
        (-100.0, 0.5 * 4000.0 / (100.0 / 3.6)),  # backwards: the same, against the motion
    ],
)
def test_dynamic_brake_force_follows_its_characteristic_and_opposes_motion(
        scenario_builder, speed_kmh, force_kn):
    veh = _record(scenario_builder)
    veh.dynamic_brake_level[:] = 0.5
    veh.traction_level[:] = 1.0  # cut while the dynamic brake is set
    veh.v[:] = speed_kmh / 3.6
    SimpleLoco.step(0.0, 0.05, veh)
    radius, axles = 1.25 / 2, 8
    sign = np.sign(speed_kmh)
    np.testing.assert_allclose(veh.q_a[0, 1:], -sign * force_kn * 1e3 * radius / axles,
                               rtol=1e-12)
    assert veh.traction_force_N[0] == 0.0
    assert veh.dynamic_brake_force_N[0] == pytest.approx(force_kn * 1e3, rel=1e-12)
    assert veh.dynamic_brake_power_W[0] == pytest.approx(
        force_kn * 1e3 * abs(speed_kmh) / 3.6, rel=1e-12)


def test_dynamic_brake_keys_ramp_the_level_and_traction_returns_when_it_is_off(
        scenario_builder):
    veh = _record(scenario_builder)
    veh.traction_level[:] = 1.0
    veh.v[:] = 20.0
    _press(veh, "dynamic_brake_up", 1.0)
    for _ in range(10):
        SimpleLoco.step(0.0, 0.1, veh)
    assert veh.dynamic_brake_level[0] == pytest.approx(0.5)  # 0.5 per second for 1 s
    assert veh.q_a[0, 1] < 0.0
    _press(veh, "dynamic_brake_up", 0.0)
    _press(veh, "dynamic_brake_down", 1.0)
    for _ in range(20):
        SimpleLoco.step(0.0, 0.1, veh)
    assert veh.dynamic_brake_level[0] == 0.0
    assert veh.q_a[0, 1] > 0.0  # full traction again


def _heavy_loco(rrs_train, grade: str = "0 permille"):
    # 1000 t on 8 axles (1.05 m wheels, 100 kg m^2 each), no running resistance
    return rrs_train("simple_loco", grade=grade,
                     vehicle_table={"empty_mass": "1000 t", "num_axis": 8,
                                    "resistance": {"formula": "none", "starting": False}})


HEAVY_EFFECTIVE_MASS = 1000e3 + 8 * 100.0 / 0.525**2


def test_power_limited_dynamic_brake_slows_a_train_as_the_closed_form(rrs_train):
    # Above the corner speed the brake takes a constant power: m v dv/dt = -P, so
    # v^2 = v0^2 - 2 P t / m, the rotating masses in m. From 30 m/s, 60 s at 4 MW leave
    # v^2 = 900 - 480 m^2/s^2 (20.5 m/s, still above 16 m/s), all of it at 4 MW.
    r = _heavy_loco(rrs_train).drive([(0, "set dynamic_brake_level=1")], max_time="60 s",
                                     start={"position": "1 km", "speed": "30 m/s"},
                                     output={"sample_interval": "5 s"})
    t = r.time
    expected = np.sqrt(900.0 - 2 * 4e6 * t / HEAVY_EFFECTIVE_MASS)
    # the level is set at t = 0 and the force held over each 50 ms control step
    np.testing.assert_allclose(r.signal("speed_mps"), expected, rtol=2e-4)
    np.testing.assert_allclose(r.signal("dynamic_brake_power_W")[1:], 4e6, rtol=1e-9)
    # its work comes out of the drive (negative): P t, as the kinetic energy lost
    energy = r.summary["energy"]
    assert energy["drive_J"] == pytest.approx(-4e6 * 60.0, rel=2e-3)
    assert abs(energy["balance_error_J"]) < 1e-6 * abs(energy["drive_J"])


def test_dynamic_brake_holds_a_train_down_a_grade_where_its_fading_force_balances_gravity(
        rrs_train):
    # Power-limited braking cannot hold a speed (the slower, the harder it brakes), but the
    # fade below 10 km/h can: on -20 per mille gravity pulls F = m g sin(atan 0.02), and
    # 250 kN * v / v_fade = F at v = v_fade F / 250 kN = 2.18 m/s. From 17 m/s the cap
    # (54 kN net) takes about 250 s to get there; then dF/dv = 250 kN / v_fade, a time
    # constant of m / (90 kN s/m) = 11 s: 500 s in all settle it.
    pull = 1000e3 * G * 0.020 / np.sqrt(1 + 0.020**2)
    v_eq = (10 / 3.6) * pull / 250e3
    r = _heavy_loco(rrs_train, "-20 permille").drive(
        [(0, "set dynamic_brake_level=1")], max_time="500 s",
        start={"position": "1 km", "speed": "17 m/s"}, output={"sample_interval": "10 s"})
    assert r.signal("speed_mps")[-1] == pytest.approx(v_eq, rel=1e-4)
    assert r.signal("dynamic_brake_force_N")[-1] == pytest.approx(pull, rel=1e-4)
