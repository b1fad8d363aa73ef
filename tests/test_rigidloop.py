"""The one body's step loop (rrscore.rigidloop): the whole states it forms where they are
read, against the Python path, which integrates every vehicle, and against closed forms."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import car_config, make_scenario

import rrscore
from rrscore.run.plugins import load_registry
from rrscore.rigidloop import BodySteps
from rrscore.run.run import Run

ROOT = Path(__file__).resolve().parents[1]
RIGID = ROOT / "configs" / "scenarios" / "rigid_40km.toml"


class _States:
    """A plugin that keeps the whole state at every row of the time series."""

    __name__ = "states"

    def __init__(self) -> None:
        self.blocks: list[np.ndarray] = []

    @rrscore.hookimpl
    def rrs_sample_rows(self, drive) -> None:
        self.blocks.append(drive.sample_states().copy())


def _states_drive(changes: dict) -> tuple[rrscore.Drive, np.ndarray]:
    """rigid_40km with ``changes``, driven with a hook that reads every sample's state."""
    states = _States()
    registry = load_registry(extra=[states], use_entry_points=False)
    d = rrscore.Drive(rrscore.load_scenario(RIGID, registry).with_values(changes))
    d.run()
    return d, np.concatenate(states.blocks)


def test_the_states_formed_at_the_samples_are_the_python_path_s():
    # rigid_40km over its first 900 s (away, up to the limit, onto the climb): every
    # sample's whole state, formed from the one body's small state and its log of the
    # locomotives' held inputs, against the Python path's integrated one: positions
    # within 0.1 mm, speeds 1e-5 m/s, wheel angles as the positions, each vehicle's
    # energy flows within 1e-6 (gravity: the Python path's quadrature over the changes
    # of grade, within 2e-4 of the vehicle's weight times the 25 m climb), the main
    # reservoirs within 1 Pa.
    one, a = _states_drive({"stop.max_time": "900 s"})
    ref, b = _states_drive({"stop.max_time": "900 s", "solver.compiled": False})
    assert one.run_.integrator.loop._body_run is not None  # the one body's loop drove
    dyn = one.run_.dyn
    assert a.shape == b.shape and a.shape[0] > 800
    np.testing.assert_allclose(a[:, dyn.sx], b[:, dyn.sx], rtol=0, atol=1e-4)
    np.testing.assert_allclose(a[:, dyn.sv], b[:, dyn.sv], rtol=0, atol=1e-5)
    np.testing.assert_allclose(a[:, dyn.sphi], b[:, dyn.sphi], rtol=0, atol=1e-3)
    weight = np.asarray(one.run_.train.weight)
    for flow, sl in dyn.energy.slices.items():
        if flow == "gravity":
            np.testing.assert_allclose(a[:, sl], b[:, sl], rtol=0, atol=2e-4 * 25.0 * weight.max())
        else:
            np.testing.assert_allclose(a[:, sl], b[:, sl], rtol=1e-6, atol=1.0, err_msg=flow)
    reservoir = dyn.layout["simple_loco.main_reservoir"]
    np.testing.assert_allclose(a[:, reservoir], b[:, reservoir], rtol=0, atol=1.0)


def test_a_rigid_train_turned_back_by_a_grade_pays_curve_resistance_both_ways():
    # Three cars without running resistance, coasting at 5 m/s up a 10 per mille grade in a
    # 500 m curve (700/R = 1.4 N/kN), stop and roll back: the compiled loop takes every
    # step, across the turn. Each car's curve work is its weight in kN times 1.4 N/kN times
    # the distance run up and back (closed form: uniform deceleration up, acceleration
    # down, each from the grade and the curve on the train's effective mass), within 1e-7;
    # its gravity work minus its weight times the grade's sine times its net rise, 1e-9.
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
    run = d.run_
    assert run.integrator.loop.steps_taken == run.solver.nsteps  # all of them the loop's
    speeds = result.series["speed_mps"]
    assert speeds.max() > 4.9 and speeds.min() < -2.0  # up, and back down
    tr, b = run.train, run.dyn.bodies
    weight, weight_kn = np.asarray(tr.weight), np.asarray(b._weight_kn)
    sine = grade / np.sqrt(1 + grade * grade)
    mass = float(np.sum(b.held[4]))
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


def test_rows_sampled_inside_the_one_body_s_steps_with_loads_are_the_python_path_s():
    # Per-vehicle and per-coupling signals make the run sample in Python, from the steps
    # the loop hands on (BodySteps: states formed inside a step on the small state's
    # continuous extension), every 0.7 s across control steps of 1 s: the same rows as
    # the Python path, positions within 0.1 mm, speeds and forces to the solver's
    # tolerance; the points passed within 1 ms.
    sc = rrscore.load_scenario(RIGID).with_values({
        "stop.max_time": "700 s", "output.sample_interval": "0.7 s",
        "output.vehicles": [0, 50, 103], "output.vehicle_signals": ["speed_mps"],
        "output.couplings": [3, 60], "output.coupling_signals": ["force_N"]})
    taken: list[object] = []
    one = rrscore.Drive(sc)
    integrator = one.run_.integrator
    steps = integrator.on_steps

    def spy(s):
        taken.append(type(s))
        steps(s)

    integrator.on_steps = spy
    fast = one.run()
    ref = rrscore.Drive(sc.with_values({"solver.compiled": False})).run()
    assert BodySteps in taken
    np.testing.assert_array_equal(fast.series["time_s"], ref.series["time_s"])
    for col, atol in (("position_m", 1e-4), ("rear_m", 1e-4), ("speed_mps", 1e-5),
                      ("v50_speed_mps", 1e-5), ("accel_mps2", 1e-6)):
        np.testing.assert_allclose(fast.series[col], ref.series[col], rtol=0, atol=atol,
                                   err_msg=col)
    for col in ("c3_force_N", "c60_force_N"):
        np.testing.assert_allclose(fast.series[col], ref.series[col], rtol=1e-6, atol=1.0)
    for p, q in zip(fast.summary["points"], ref.summary["points"], strict=True):
        assert p["time_s"] == pytest.approx(q["time_s"], abs=1e-3)
    assert fast.summary["points"]  # (the climb's foot, at 10 km, is passed)



def test_the_one_body_paused_and_resumed_moves_as_it_does_straight_through():
    # paused at control times (as a progress bar or a cab pauses a drive): the same
    # positions, speeds and plugins' states to the bit; the energy account, which the
    # one body forms from each call of its loop's start, the same to rounding (1e-14)
    sc = rrscore.load_scenario(RIGID).with_values({"stop.max_time": "900 s"})
    straight = Run(sc)
    straight.advance()
    paused = Run(sc)
    for t in (1.0, 2.5, 140.0, 611.0, 612.0):
        assert paused.advance(t) is None
    paused.advance()
    dyn = straight.dyn
    a, b = straight.y, paused.y
    for block in ("body.x", "body.v", "simple_loco.main_reservoir"):
        np.testing.assert_array_equal(a[dyn.layout[block]], b[dyn.layout[block]])
    for sl in dyn.energy.slices.values():
        np.testing.assert_allclose(a[sl], b[sl], rtol=1e-14, atol=1e-6)
