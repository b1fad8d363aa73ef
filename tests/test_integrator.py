"""The integrator (rrscore/integrator.py): its guard against drives that stop making
progress in simulated time, the Illinois method that locates events, and the slack edges
foreseen at a step's end."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import car_config, make_scenario

from rrscore import Drive, Run
from rrscore.integrator import EVENT_RTOL, KINK_AIM, KINK_END, Integrator, kink_bound

#: Far more right-hand-side evaluations than the 12 s drive below needs either way; a
#: drive that reaches this has hung (a budget, not a wall-clock limit).
RHS_BUDGET = 300_000


def _climb_then_brake(method: str):
    """SimpleLoco + 60 loaded cars on an 8 permille climb, traction 0.775 from 0 s, brake
    pressed at 2 s: the loco stops and one wheelset flipped between slide and re-adhesion
    at a single instant, for ever."""
    return make_scenario(
        [{"config": "vehicles/simple_loco.toml"},
         {"config": "vehicles/freight_car_4axle.toml", "count": 60, "payload_fraction": 1.0}],
        [{"length": "10 km", "grade": "8 permille"}],
        solver={"method": method},
        driver=[{"at_time": "0 s", "set": {"traction_level": 0.775}},
                {"at_time": "2 s", "press": "brake"}],
        stop={"max_time": "12 s"})


def _budgeted(drive: Drive) -> Drive:
    rhs = drive.dyn.rhs
    calls = 0

    def counted(t, y):
        nonlocal calls
        calls += 1
        if calls > RHS_BUDGET:
            raise AssertionError("drive hung: right-hand-side budget exhausted")
        return rhs(t, y)

    drive.solver.fun = counted
    return drive


@pytest.mark.parametrize("method", ["rk45", "rk4"])
def test_a_braked_locomotive_pushed_back_by_its_train_drives_on(method):
    # The loco stops and its cars push it back: at the instant it moves off, its brakes
    # turn against the push and the axles slip (this used to be decided with the static
    # hold, and slide and re-adhesion alternated at one instant for ever); then its
    # locked wheels hold it as friction at the rail, up to the adhesion peak.
    result = _budgeted(Drive(_climb_then_brake(method))).run()
    s = result.summary
    assert s["stop_reason"] == "max_time" and s["sim_time_s"] == pytest.approx(12.0)
    kinds = [e.kind for e in result.events]
    assert kinds.count("slip") >= 8 and kinds.count("wheel locked") >= 8
    assert all(math.isfinite(v) for v in result.series["speed_mps"])


@pytest.mark.parametrize("method", ["rk45", "rk4"])
def test_a_drive_stuck_at_one_instant_ends_naming_the_event_and_vehicle(method):
    # The same drive with the slip decision blind to a standing vehicle's push (as it
    # was): the guard ends it, naming what repeats, instead of hanging.
    drive = _budgeted(Drive(_climb_then_brake(method)))
    drive.dyn.wheelsets.loads_at = None
    result = drive.run()
    s = result.summary
    assert s["stop_reason"] == "no progress"
    assert "event 'slip'" in s["error"] and "vehicle 0 axle" in s["error"]
    assert f"t = {s['sim_time_s']:.6f} s" in s["error"]
    assert all(math.isfinite(v) for v in result.series["speed_mps"])


# ------------------------------------------------------------------- the Illinois method
def test_the_illinois_method_brackets_a_known_root_to_the_event_tolerance():

    calls = []

    def g(t):  # root at the cube root of 2, a simple zero
        calls.append(t)
        return 2.0 - t ** 3

    lo, hi = Integrator._illinois(g, 1.0, 2.0, g(1.0), g(2.0))
    root = 2.0 ** (1.0 / 3.0)
    assert lo <= root <= hi
    assert hi - lo <= EVENT_RTOL * 1.0
    assert len(calls) < 20  # superlinear: bisection alone would take 24
    assert g(lo) > 0.0 >= g(hi)  # not crossed at lo; crossed, or on it, at hi


def test_the_loops_illinois_is_the_integrators_on_a_slack_edge_to_the_bit():
    # the compiled loop locates a slack edge on the step's continuous extension with the
    # same steps as the integrator does on the same function
    from rrscore.engine.tableau import dp_dense
    from rrscore.steploop import _illinois

    rng = np.random.default_rng(3)
    y0, ks = rng.normal(size=6), rng.normal(size=(7, 6))
    t0, h, i, sx, kink = 10.0, 0.02, 1, 0, 0.0
    nominal = np.zeros(5)

    def g(t):
        y = dp_dense(t, t0, h, y0, ks)
        return y[sx + i] - y[sx + i + 1] - nominal[i] - kink

    a, b = t0, t0 + h
    ga, gb = g(a), g(b)
    if np.sign(ga) == np.sign(gb):  # make it cross: shift the edge to the midpoint value
        kink = g(t0 + 0.5 * h)
        ga, gb = g(a), g(b)
    assert np.sign(ga) != np.sign(gb)
    want = Integrator._illinois(g, a, b, ga, gb)
    got = _illinois(t0, h, y0, ks, i, kink, sx, nominal, a, b, ga, gb)
    assert got == want


# ------------------------------------------------------------- kinks met at a step's end
def _two_bodies(d0: float, rate: float, accel: float):
    """State and derivative of two bodies whose deflection is ``d0 + rate t + accel t²/2``
    (nominal spacing 10 m); ``kinks``: the slack edges at -10 and +10 mm."""
    y = np.array([10.0 + d0, 0.0, 1.0 + rate, 1.0])  # x0, x1, v0, v1
    f = np.array([y[2], y[3], accel, 0.0])
    nominal = np.array([10.0])
    kinks = np.array([[-0.01, 0.01]])
    d = (y[0] - y[1]) - nominal[0]
    side = d - kinks[0]
    return y, f, nominal, kinks, side


@pytest.mark.parametrize("d0, rate, accel", [(0.0, -2.0, 0.0), (0.004, 0.5, 3.0),
                                              (-0.002, 0.3, -1.0)])
def test_a_step_about_to_meet_a_slack_edge_ends_just_past_where_it_is_foreseen(d0, rate,
                                                                               accel):
    y, f, nominal, kinks, side = _two_bodies(d0, rate, accel)
    d = side[0] + kinks[0, 0]  # the deflection as the state gives it
    # the first root of d + rate t + accel t²/2 = edge, for the edge ahead of the motion
    roots = []
    for edge in kinks[0]:
        c = np.roots([0.5 * accel, rate, d - edge]) if accel else [-(d - edge) / rate]
        roots += [r.real for r in np.atleast_1d(c) if abs(r.imag) < 1e-15 and r.real > 0]
    tau = min(roots)
    t, h = 100.0, 2.0 * tau
    got = kink_bound(t, t + 10.0, h, 5.0, y, f, side, 0, 2, 0, 2, nominal, kinks)
    assert got - t == pytest.approx(tau * (1.0 + KINK_AIM), rel=1e-9)
    # the same step, but the edge beyond it, or the bound nearer: the bound as it was
    assert kink_bound(t, t + 10.0, 0.5 * tau, 5.0, y, f, side, 0, 2, 0, 2, nominal,
                      kinks) == t + 10.0
    assert kink_bound(t, t + 0.9 * tau, h, 5.0, y, f, side, 0, 2, 0, 2, nominal,
                      kinks) == t + 0.9 * tau


def test_an_edge_touched_and_left_in_a_step_or_at_its_very_start_leaves_the_bound():
    # deflection 5 mm rising at 0.5 m/s, braked at 30 m/s²: its peak, 9.17 mm, stays
    # short of the edge at 10 mm (6.5 mm after 0.03 s); braked at 12 m/s² it passes
    # the edge and is back at 6.6 mm after 0.08 s: a double crossing, which no bound
    # ends on
    for accel, h in ((-30.0, 0.03), (-12.0, 0.08)):
        y, f, nominal, kinks, side = _two_bodies(0.005, 0.5, accel)
        assert kink_bound(0.0, 1.0, h, 5.0, y, f, side, 0, 2, 0, 2, nominal,
                          kinks) == 1.0
    # an edge a millionth of the step ahead: met as any event, not by a step cut short
    y, f, nominal, kinks, side = _two_bodies(0.01 - 1e-9, 1.0, 0.0)
    assert kink_bound(0.0, 1.0, 0.1, 5.0, y, f, side, 0, 2, 0, 2, nominal, kinks) == 1.0
    # an edge just reached from below (the state a hair short of it), its value put
    # beyond its surface as the integrator leaves it: not met again
    y, f, nominal, kinks, side = _two_bodies(0.01, 1.0, 0.0)
    y[0] -= 1e-12
    side[1] = 1e-300
    assert kink_bound(0.0, 1.0, 0.1, 5.0, y, f, side, 0, 2, 0, 2, nominal, kinks) == 1.0
    # no slack (the edges at infinity): nothing to meet
    inf = np.full((1, 2), np.inf)
    assert kink_bound(0.0, 1.0, 0.1, 5.0, y, f, y[0] - y[1] - 10.0 - inf[0], 0, 2, 0, 2,
                      nominal, inf) == 1.0


@pytest.mark.parametrize("compiled", [True, False])
def test_two_cars_parting_through_the_slack_meet_its_edge_at_the_end_of_a_step(compiled):
    # Two coasting cars without resistance part on level track at 2 m/s from the
    # middle of 20 mm of slack: the edge is met at t = (10 mm - d0) / 2 m/s exactly. The
    # step that meets it ends KINK_AIM past it and stands (no step taken again).
    cfg = car_config(resistance={"formula": "none", "starting": False})
    sc = make_scenario([{"config": cfg, "count": 2}],
                       coupling={"model": "spring_damper",
                                 "params": {"stiffness": "20 MN/m", "damping": "100 kN*s/m",
                                            "slack": "20 mm"}},
                       solver={"compiled": compiled}, stop={"max_time": 1.0})
    run = Run(sc)
    dyn = run.dyn
    y = run.y
    y[dyn.sv] = [1.5, -0.5]
    y[dyn.somega] = y[dyn.sv][run.train.axle_vehicle] / run.train.axle_radius
    d0 = y[dyn.sx][0] - y[dyn.sx][1] - dyn.couplings.nominal[0]
    t_edge = (0.01 - d0) / 2.0
    ends, met = [], []

    def on_segment(seg):  # (a segment's interpolant holds only while it is handed on)
        ends.append(seg.t1)
        if seg.t0 < t_edge <= seg.t1:
            x = seg(t_edge)[dyn.sx]
            met.append((seg.t0, seg.t1, x[0] - x[1] - dyn.couplings.nominal[0]))

    run.integrator.on_segment = on_segment
    run.integrator.on_steps = None  # the compiled loop's steps too, one by one
    run.integrator.restart(0.0, y)
    run.integrator.advance(0.1)
    assert run.integrator.event_counts["slack edge"] >= 1
    t0, t1, d = met[0]
    assert t1 - t0 == pytest.approx((t_edge - t0) * (1.0 + KINK_AIM), rel=1e-9)
    assert t1 - t_edge <= KINK_END * (t1 - t0)
    # the step stands whole: its interpolant puts the edge where it is, and no step
    # ended on the edge
    assert d == pytest.approx(0.01, abs=1e-9)
    assert not np.any(np.asarray(ends) == t_edge)
