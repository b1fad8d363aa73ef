"""The integrator's guard against drives that stop making progress in simulated time."""

from __future__ import annotations

import math

import pytest
from conftest import make_scenario

from rrscore import Drive

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
    from rrscore.integrator import EVENT_RTOL, Integrator

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
    import numpy as np

    from rrscore.integrator import Integrator
    from rrscore.solvers import dp_dense
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
