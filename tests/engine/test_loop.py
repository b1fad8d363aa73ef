"""The event loop on trains: slack edges foreseen and stepped onto, drives that would hang
ended with a name, plugins that fail named, and runs paused, branched and resumed that
are the run straight through."""

from __future__ import annotations

import math
from unittest import mock

import numpy as np
import pytest
from conftest import VehiclePlugin, car_config, make_scenario
from hypothesis import given, settings
from hypothesis import strategies as st

import rrscore
from rrscore import Drive, Param, PluginError, Run, VehicleModel
from rrscore.engine.loop import any_crossed, crossed
from rrscore.engine.system import CONDITION, EITHER, FALLING, KINK
from rrscore.physics import couplings
from rrscore.physics.couplings import KINK_AIM, edge_ahead, kink_bound
from rrscore.run.plugins import load_registry


def _climb_then_brake(method: str):
    """SimpleLoco + 60 loaded cars on an 8 permille climb, traction 0.775 from 0 s, brake
    pressed at 2 s: the loco stops and its cars push it back."""
    return make_scenario(
        [{"config": "vehicles/simple_loco.toml"},
         {"config": "vehicles/freight_car_4axle.toml", "count": 60, "payload_fraction": 1.0}],
        [{"length": "10 km", "grade": "8 permille"}],
        solver={"method": method},
        driver=[{"at_time": "0 s", "set": {"traction_level": 0.775}},
                {"at_time": "2 s", "press": "brake"}],
        stop={"max_time": "12 s"})


@pytest.mark.parametrize("method", ["rk45", "rk4"])
def test_a_braked_locomotive_pushed_back_by_its_train_drives_on(method):
    # The loco stops and its cars push it back: at the instant it moves off, its brakes
    # turn against the push and the axles slip; then its locked wheels hold it as
    # friction at the rail, up to the adhesion peak. (Decided with the static hold, slide
    # and re-adhesion alternated at one instant for ever.)
    result = Drive(_climb_then_brake(method)).run()
    s = result.summary
    assert s["stop_reason"] == "max_time" and s["sim_time_s"] == pytest.approx(12.0)
    kinds = [e.kind for e in result.events]
    assert kinds.count("slip") >= 8 and kinds.count("wheel locked") >= 8
    assert all(math.isfinite(v) for v in result.series["speed_mps"])


def test_a_drive_stuck_at_one_instant_ends_naming_the_event_and_vehicle(monkeypatch):
    # The same drive with a slip that claims to act but changes nothing (as a decision
    # blind to a standing vehicle's push once did): the same event at the same instant
    # for ever. The loop's guard ends the drive, naming what repeats, instead of hanging.
    from rrscore.engine.train import TrainSystem

    monkeypatch.setattr(TrainSystem, "_start_slip", lambda self, t, y, f, idx: True)
    result = Drive(_climb_then_brake("rk45")).run()
    s = result.summary
    assert s["stop_reason"] == "no progress"
    assert "event 'slip'" in s["error"] and "vehicle 0 axle" in s["error"]
    assert f"t = {s['sim_time_s']:.6f} s" in s["error"]
    assert all(math.isfinite(v) for v in result.series["speed_mps"])


def _two_bodies(d0, rate, accel):
    """Two bodies 20 m apart (nominal) with 20 mm of slack, deflection ``d0`` opening at
    ``rate`` and ``accel``: the positions, speeds, accelerations, nominal distance, the
    edges and the side of each the deflection is on."""
    x = np.array([20.0 + d0, 0.0])
    v = np.array([rate, 0.0])
    a = np.array([accel, 0.0])
    nominal = np.array([20.0])
    kinks = np.array([[-0.01, 0.01]])
    side = d0 - kinks[0]
    return x, v, a, nominal, kinks, side


@pytest.mark.parametrize("d0, rate, accel", [(0.0, -2.0, 0.0), (0.004, 0.5, 3.0),
                                              (-0.002, 0.3, -1.0)])
def test_a_step_about_to_meet_a_slack_edge_ends_just_past_where_it_is_foreseen(d0, rate,
                                                                               accel):
    x, v, a, nominal, kinks, side = _two_bodies(d0, rate, accel)
    # the first root of d + rate t + accel t^2 / 2 = edge, for the edge ahead of the motion
    roots = []
    for edge in kinks[0]:
        c = np.roots([0.5 * accel, rate, d0 - edge]) if accel else [-(d0 - edge) / rate]
        roots += [r.real for r in np.atleast_1d(c) if abs(r.imag) < 1e-15 and r.real > 0]
    tau = min(roots)
    t, h = 100.0, 2.0 * tau
    got = kink_bound(t, t + 10.0, h, x, v, a, nominal, kinks, side)
    assert got - t == pytest.approx(tau * (1.0 + KINK_AIM), rel=1e-9)
    # the same step, but the edge beyond it, or the bound nearer: the bound as it was
    assert kink_bound(t, t + 10.0, 0.5 * tau, x, v, a, nominal, kinks, side) == t + 10.0
    assert kink_bound(t, t + 0.9 * tau, h, x, v, a, nominal, kinks, side) == t + 0.9 * tau


def test_an_edge_touched_and_left_in_a_step_or_at_its_very_start_leaves_the_bound():
    # deflection 5 mm rising at 0.5 m/s, braked at 30 m/s^2: its peak, 9.17 mm, stays
    # short of the edge at 10 mm; braked at 12 m/s^2 it passes the edge and is back
    # below it after 0.08 s: a double crossing, which no bound ends on
    for accel, h in ((-30.0, 0.03), (-12.0, 0.08)):
        x, v, a, nominal, kinks, side = _two_bodies(0.005, 0.5, accel)
        assert kink_bound(0.0, 1.0, h, x, v, a, nominal, kinks, side) == 1.0
    # an edge a millionth of the step ahead: met as any event, not by a step cut short
    x, v, a, nominal, kinks, side = _two_bodies(0.01 - 1e-9, 1.0, 0.0)
    assert kink_bound(0.0, 1.0, 0.1, x, v, a, nominal, kinks, side) == 1.0
    # no slack (the edges at infinity): nothing to meet
    inf = np.full((1, 2), np.inf)
    assert kink_bound(0.0, 1.0, 0.1, x, v, a, nominal, inf, x[0] - x[1] - 20.0 - inf[0]) == 1.0


@settings(max_examples=300, deadline=None)
@given(d0=st.floats(-0.012, 0.012), rate=st.floats(-3.0, 3.0), accel=st.floats(-40.0, 40.0),
       h=st.floats(1e-4, 0.5))
def test_the_vector_check_before_the_edges_never_hides_an_edge_a_step_would_meet(
        d0, rate, accel, h):
    # kink_bound first asks edge_ahead (one loop on vectors) whether any edge could be
    # met: wherever kink_bound's own search (uncompiled, asking every time) cuts the
    # step, edge_ahead must say yes
    x, v, a, nominal, kinks, side = _two_bodies(d0, rate, accel)
    with mock.patch.object(couplings, "edge_ahead", lambda *args: True):
        search = getattr(kink_bound, "py_func", kink_bound)  # (no py_func without numba)
        cut = search(0.0, 1.0, h, x, v, a, nominal, kinks, side) != 1.0
    assert not cut or edge_ahead(min(h, 1.0), x, v, a, nominal, kinks, side)


VALUES = st.one_of(st.sampled_from([0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan]),
                   st.floats(-1.0, 1.0))


@settings(max_examples=300, deadline=None)
@given(entries=st.lists(st.tuples(st.sampled_from([KINK, FALLING, EITHER, FALLING | CONDITION,
                                                   EITHER | CONDITION]), VALUES, VALUES),
                        max_size=40),
       actions_only=st.booleans())
def test_the_step_asks_whether_any_event_crossed_as_crossed_would_of_each(entries,
                                                                          actions_only):
    # any_crossed counts without branches (a loop on vectors): it must say what asking
    # crossed of every entry says, for every kind, sign, zero, infinity and NaN
    kinds = np.array([e[0] for e in entries], dtype=np.int64)
    g0 = np.array([e[1] for e in entries], dtype=float)
    g1 = np.array([e[2] for e in entries], dtype=float)
    expected = any(crossed(k, a, b) and (not actions_only or (k & 3) != KINK)
                   for k, a, b in entries)
    assert any_crossed(kinds, g0, g1, len(entries), actions_only) == expected


def test_two_cars_parting_through_the_slack_meet_its_edge_where_the_closed_form_puts_it():
    # Two coasting cars without resistance part on level track at 2 m/s from the middle
    # of 20 mm of slack: the deflection runs linearly, and the spring takes hold at the
    # edge, 10 mm, at t = (10 mm - d0) / 2 m/s exactly. The loop counts the edge, and
    # the samples (the dense output of its steps) follow the closed form up to it.
    cfg = car_config(resistance={"formula": "davis", "A": 0.0, "B": 0.0, "C": 0.0,
                                 "starting": False})
    sc = make_scenario([{"config": cfg, "count": 2}],
                       coupling={"model": "spring_damper",
                                 "params": {"stiffness": "20 MN/m", "damping": "100 kN*s/m",
                                            "slack": "20 mm"}},
                       start={"speeds": ["1.5 m/s", "-0.5 m/s"]},
                       stop={"max_time": 0.1},
                       output={"sample_interval": 1e-4, "couplings": [0],
                               "coupling_signals": ["deflection_m", "force_N"]})
    result = Drive(sc).run()
    assert result.summary["events"]["slack edge"] >= 1
    t = np.asarray(result.series["time_s"])
    d = np.asarray(result.series["c0_deflection_m"])
    force = np.asarray(result.series["c0_force_N"])
    t_edge = (0.01 - d[0]) / 2.0
    before = t < t_edge - 1e-9
    np.testing.assert_allclose(d[before], d[0] + 2.0 * t[before], rtol=0, atol=1e-9)
    assert np.all(force[before] == 0.0)
    assert np.all(force[t > t_edge + 1e-9] != 0.0)


class _Raising(VehicleModel):
    """A locomotive whose compiled step raises once a second has passed."""

    type_name = "raising_loco"
    params = {"force": Param("N", 100e3, "drive force")}

    @staticmethod
    def step(t, dt, veh):  # pragma: no cover (compiled)
        if t > 1.0:
            raise ValueError("the gearbox seized")
        for i in range(veh.count):
            veh.q_a[i, 0] = veh.force[i]


def test_a_plugin_whose_compiled_step_raises_is_named_with_its_vehicles_and_the_time():
    registry = load_registry(extra=[VehiclePlugin(_Raising)], use_entry_points=False)
    loco = {"vehicle": {"type": "raising_loco", "empty_mass": "80 t", "length": "20 m",
                        "num_axis": 4}}
    sc = make_scenario([{"config": loco}, {"config": car_config(), "count": 3}],
                       registry=registry, stop={"max_time": 5.0})
    with pytest.raises(PluginError) as raised:
        Drive(sc).run()
    message = str(raised.value)
    assert "'raising_loco'" in message and "step()" in message and "vehicle 0" in message
    assert "the gearbox seized" in message and "t = 1.0" in message


@pytest.mark.parametrize("name, max_time, pauses", [
    ("freight_50", 20.0, (1.7, 2.0, 9.3)),
    ("brake_emergency_80", 20.0, (1.7, 2.0, 9.3)),
    ("rigid_40km", 300.0, (37.0, 120.0, 121.0, 250.0)),  # (the one body)
])
def test_a_run_paused_branched_and_resumed_is_the_run_straight_through(name, max_time, pauses):
    sc = rrscore.load_scenario(f"configs/scenarios/{name}.toml").with_values(
        {"stop.max_time": max_time})
    straight = Run(sc)
    straight.advance()
    paused = Run(sc)
    for t in pauses:
        paused.advance(t)
        saved = paused.snapshot()
        paused.advance(t + 3.0)
        paused.restore(saved)
    paused.advance()
    np.testing.assert_array_equal(paused.y, straight.y)
    assert paused.summary(1.0)["max_coupler_tension_N"] == \
        straight.summary(1.0)["max_coupler_tension_N"]
