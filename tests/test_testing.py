"""The plugin authors' pytest fixtures (rrscore.testing, loaded through pytest11), checked
against closed-form motion of SimpleLoco without running resistance."""

from __future__ import annotations

import numpy as np
import pytest

import rrscore
from rrscore.jit import UNCOMPILED
from rrscore.testing import TestDrive, assert_compiled, assert_curve_close, parse_action

# SimpleLoco on a 184 t, 8-axle body (adhesion ~600 kN > 450 kN: no slip), no resistance
M = 184e3 + 8 * 250.0 / 0.625**2  # body + rolling wheelsets J/r^2, kg
F_MAX, F_NOM, V_NOM = 450e3, 350e3, 80 / 3.6
NO_RESISTANCE = {"empty_mass": "184 t", "num_axis": 8, "wheel_diameter": "1.25 m",
                 "wheelset_inertia": "250 kg*m^2",
                 "resistance": {"formula": "none", "starting": False}}


@pytest.fixture
def loco(rrs_train):
    return rrs_train("simple_loco", vehicle_table=NO_RESISTANCE, brake_force="300 kN")


def test_fixture_is_loaded_through_pytest11(pytestconfig):
    assert pytestconfig.pluginmanager.has_plugin("rrscore")


def test_half_traction_speed_follows_the_closed_form_solution(loco, rrs_curve):
    # The force is set every 50 ms control step from the speed then and held over the step,
    # so the speed obeys the recurrence v' = v + dt l (F_max - k v) / m exactly, with
    # k = (F_max - F_nom)/V_nom; its continuous limit is F_max/k (1 - e^(-l k t/m)).
    r = loco.drive([(0, "set traction_level=0.5")], max_time="15 s")
    k, dt, level = (F_MAX - F_NOM) / V_NOM, 0.05, 0.5
    v = np.zeros(301)
    for n in range(300):
        v[n + 1] = v[n] + dt * level * (F_MAX - k * v[n]) / M
    t = np.arange(301) * dt
    assert v[-1] < V_NOM  # the whole drive stays on the straight part of the characteristic
    rrs_curve(r.time, r.series["speed_mps"], t[::2], v[::2], rtol=1e-6, atol=1e-6)  # samples
    continuous = F_MAX / k * (1 - np.exp(-level * k * t / M))
    rrs_curve(t, v, t, continuous, rtol=2e-3)  # the hold lags the continuous curve by dt/2
    # rows at control times show the force set from that row's speed (the final row at 15 s,
    # where the drive stops before its control step, still shows the previous one)
    vs = v[2:300:2]
    r.assert_matches("traction_force_N", vs, level * (F_MAX - k * vs), rtol=1e-9,
                     against="speed_mps")
    assert r.at_speed("traction_force_N", 10.0) == pytest.approx(level * (F_MAX - k * 10.0),
                                                                 rel=1e-5)


def test_full_brake_stops_in_v_squared_over_2a(loco):
    # brake at t = 10 s: constant deceleration brake_force / m until standstill
    r = loco.drive([(0, "set traction_level=0.5"), (10, "set traction_level=0 brake_level=1")],
                   max_time="60 s")
    v0 = r.speed_at(10.0)
    assert r.distance_to_stop(after=10.0) == pytest.approx(v0**2 / (2 * 300e3 / M), abs=0.01)
    assert r.speed_at(59.0) == 0.0


def test_key_program_presses_and_releases(loco):
    # traction_up held for 1 s at 0.5/s: level 0.5, held from then on
    r = loco.drive([(0, "press traction_up"), (1, "release traction_up")], max_time="3 s")
    assert r.value_at("traction_level", 2.0) == pytest.approx(0.5)
    assert [e.detail for e in r.events if e.kind == "driver"] == [
        "vehicle 0: press traction_up", "vehicle 0: release traction_up"]


def test_coupler_extremes_of_a_train_with_cars(rrs_train):
    train = rrs_train("simple_loco", vehicle_table=NO_RESISTANCE, cars=3,
                      coupling={"model": "linear", "params": {"stiffness": "20 MN/m"}})
    r = train.drive([(0, "set traction_level=1")], max_time="5 s")
    tension, compression = r.coupler_extremes()
    assert tension > 0.0
    assert isinstance(r, TestDrive) and r.summary["vehicles"] == 4


def test_curve_assertion_names_the_worst_point():
    x = np.linspace(0, 10, 11)
    assert_curve_close(x, 2 * x, [1.5, 7.0], [3.0, 14.0 + 1e-9], rtol=1e-9)
    with pytest.raises(AssertionError, match=r"1 of 2 reference points off; worst at x = 7: "
                                             r"found 14, expected 14.5"):
        assert_curve_close(x, 2 * x, [1.5, 7.0], [3.0, 14.5], atol=0.1)
    with pytest.raises(ValueError, match="outside the recorded"):
        assert_curve_close(x, x, [11.0], [11.0])


@pytest.mark.parametrize(("text", "table"), [
    ("press sand", {"press": "sand"}),
    ("release brake", {"release": "brake"}),
    ("set traction_level=1 brake_level=0.5", {"set": {"traction_level": 1.0,
                                                       "brake_level": 0.5}}),
])
def test_key_program_actions_parse(text, table):
    assert parse_action(text) == table


def test_bad_key_program_action_is_a_clear_error():
    with pytest.raises(ValueError, match="expected 'press KEY'"):
        parse_action("push the button")


def _by_name_step(t, dt, veh):
    for i in range(veh.count):
        getattr(veh, "q_a" if t >= 0.0 else "q_r")[i, 0] = veh.push[i]  # numba cannot


class ByName(rrscore.VehicleModel):
    type_name = "by_name"
    controls = {"push": "body force"}
    step = staticmethod(_by_name_step)


@pytest.mark.skipif(UNCOMPILED, reason="NUMBA_DISABLE_JIT: nothing is compiled")
def test_compiled_assertion_passes_a_compiled_plugin_and_says_why_another_is_not(
        rrs_compiled):
    from rrscore import load_registry

    reg = load_registry()
    assert rrs_compiled is assert_compiled
    rrs_compiled(reg.vehicle_types["simple_loco"])
    rrs_compiled(reg.coupler_models["sa3"])
    with pytest.raises(AssertionError, match=r"ByName: step: runs in Python \(numba's object "
                                             r"mode\), as numba cannot compile the plugin's "
                                             r"functions: TypingError"):
        rrs_compiled(ByName)
    with pytest.raises(AssertionError, match="is not a vehicle type or coupler model class"):
        rrs_compiled(TestDrive)
