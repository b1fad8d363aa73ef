"""Control steps the compiled loop takes itself with the plugins' step kernels
(rrscore.controlsteps), against every control step in Python (``Run.ahead = False``),
the reference: the same drive to the bit, and the loop taking most control steps."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest
from conftest import VehiclePlugin, car_config, make_scenario
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

import rrscore
from rrscore import PluginError, VehicleModel, load_registry
from rrscore.model.config import Context
from rrscore.controlsteps import kernel_problems
from rrscore.run.run import Run
from rrscore.run.scenario import scenario_from_table

ROOT = Path(__file__).resolve().parents[1]
TIMING = {"wall_time_s", "real_time_factor", "compile_time_s"}


def _scenario(**table) -> rrscore.Scenario:
    base = {"train": "trains/freight_50.toml", "route": "routes/hilly_20km.toml",
            "start": {"position": "300 m", "slack": "bunched"},
            "driver": [{"at_time": 0.0, "set": {"traction_level": 1.0}}],
            "stop": {"max_time": 60.0}, "output": {"sample_interval": 1.0}}
    return scenario_from_table({**base, **table}, Context("<test>", "scenario",
                                                          ROOT / "configs"))


def _drive(sc: rrscore.Scenario, ahead: bool, pieces: tuple[float, ...] = ()):
    """The drive, paused and resumed at ``pieces`` on the way, with the loop taking the
    control steps (``ahead``) or every one in Python: its result and its run."""
    drive = rrscore.Drive(sc)
    drive.run_.ahead = ahead
    for t in pieces:
        drive.run_.advance(t)
    return drive.run(), drive.run_


def _both(sc: rrscore.Scenario):
    """The drive with the loop taking control steps, and with every one in Python: their
    time series, summaries, and the control steps the loop took in the first."""
    (fast, run), (ref, _) = _drive(sc, True), _drive(sc, False)
    return fast, ref, run.integrator.loop.control_steps_taken


def _assert_same(fast: rrscore.DriveResult, ref: rrscore.DriveResult) -> None:
    assert list(fast.series) == list(ref.series)
    for col in ref.series:
        np.testing.assert_array_equal(fast.series[col], ref.series[col], err_msg=col)
    assert {k: v for k, v in fast.summary.items() if k not in TIMING} == \
        {k: v for k, v in ref.summary.items() if k not in TIMING}


CASES = {
    # full traction from standstill over the hills: the slack running out and in
    "pull": {},
    # the driver acting at speeds (87 and 141 s), times and a position (160 s); the
    # locomotive's brake key pressed and let go (its level then falls in the kernel); the
    # cars' hand brakes; the dynamic brake; the governor switching the compressor; a
    # stop position (at 272 s)
    "actions": {"start": {"position": "300 m", "speed": "20 km/h"}, "driver": [
        {"at_speed_below": "17 km/h", "set": {"traction_level": 1.0}},
        {"at_speed_above": "25 km/h", "set": {"traction_level": 0.4}},
        {"at_position": "1200 m", "set": {"traction_level": 0.0, "dynamic_brake_level": 0.7}},
        {"at_time": 95.0, "press": "brake"},
        {"at_time": 97.0, "release": "brake"},
        {"at_time": 110.0, "all_vehicles": True, "set": {"hand_brake": 0.3}},
        {"at_time": 125.0, "all_vehicles": True, "set": {"hand_brake": 0.0}},
        {"at_time": 200.0, "set": {"dynamic_brake_level": 0.0, "traction_level": 0.8}}],
        "stop": {"max_time": 400.0, "at_position": "2000 m"},
        "output": {"sample_interval": 2.5, "vehicles": [0],
                   "vehicle_signals": ["speed_mps", "traction_force_N",
                                       "dynamic_brake_force_N", "compressor_on",
                                       "main_reservoir"],
                   "couplings": [0, 49], "coupling_signals": ["force_N"]}},
    # samples between control times (0.37 s apart, control steps of 0.05 s), with a
    # signal of the locomotive's that changes at every control step (the dynamic brake's
    # power): that of the control step before each sample
    "unaligned samples": {"start": {"position": "300 m", "speed": "40 km/h"},
                          "driver": [{"at_time": 0.0, "set": {"dynamic_brake_level": 0.5}}],
                          "stop": {"max_time": 40.0},
                          "output": {"sample_interval": 0.37, "vehicles": [0],
                                     "vehicle_signals": ["dynamic_brake_power_W"]}},
    # the built-in driver holding the limits (60 km/h, then 80 after the curve, down
    # the hill on the brake), off for half a minute while the program drives
    "built-in driver": {"start": {"position": "5.5 km", "speed": "40 km/h"},
                        "autodriver": {"mode": "hold_limit", "margin": "3 km/h"},
                        "driver": [{"at_time": 60.0, "autodriver": False,
                                    "set": {"traction_level": 0.5, "brake_level": 0.0}},
                                   {"at_time": 90.0, "autodriver": True}],
                        "stop": {"max_time": 150.0},
                        "output": {"sample_interval": 1.0, "vehicles": [0],
                                   "vehicle_signals": ["traction_level", "speed_mps"]}},
    # the built-in driver braking to a stop at B, then holding the train: deciding
    # every 0.37 s (between control times), sampled every 2 s
    "built-in driver stopping": {"start": {"position": "17.6 km", "speed": "50 km/h"},
                                 "autodriver": {"mode": "hold_limit", "stop_at": "B",
                                                "update_interval": "0.37 s"},
                                 "driver": [], "stop": {"max_time": 240.0},
                                 "output": {"sample_interval": 2.0}},
    # the built-in driver to a timetable: coasting where it is ahead of time
    "timetable": {"start": {"point": "A"},
                  "autodriver": {"mode": "hold_limit", "stop_at": "B",
                                 "timetable": [{"point": "summit", "arrive": "9 min"}]},
                  "driver": [], "stop": {"max_time": 150.0}},
    # coasting to a stop with the locomotive's brake: the standstill stop
    "standstill": {"start": {"position": "2 km", "speed": "30 km/h"},
                   "route": "routes/level_30km.toml",
                   "driver": [{"at_time": 4.0, "set": {"brake_level": 0.6}}],
                   "stop": {"max_time": 300.0, "standstill": True},
                   "output": {"sample_interval": 7.0}},
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_drive_whose_loop_takes_the_control_steps_is_the_python_paths_to_the_bit(case):
    fast, ref, taken = _both(_scenario(**CASES[case]))
    _assert_same(fast, ref)
    # most control steps fall between samples and actions: the loop takes them
    n_control = round(fast.summary["sim_time_s"] / 0.05)
    assert taken > 0.6 * n_control, (taken, n_control)


@pytest.mark.parametrize("case", ["pull", "built-in driver stopping", "standstill"])
def test_the_loop_records_the_samples_at_its_control_times_as_the_run_takes_them(case):
    # every sample time a control time, rows of the state, acceleration and drive force
    # alone: the loop records them and goes on; the rows are the Python path's to the bit
    (fast, run), (ref, _) = _drive(_scenario(**CASES[case]), True), \
        _drive(_scenario(**CASES[case]), False)
    _assert_same(fast, ref)
    assert run.samples_in_loop
    rows = len(fast.series["time_s"])
    assert run.integrator.loop.samples_recorded > 0.8 * rows, (
        run.integrator.loop.samples_recorded, rows)


@pytest.mark.parametrize("interval", [0.37, 0.01])
def test_the_loop_records_the_samples_between_its_control_times_as_the_run_takes_them(
        interval):
    # samples inside the steps (0.37 s apart; and 0.01 s, several to a step), taken on
    # the steps' interpolants with the inputs of the control step before: the rows are
    # the Python path's to the bit, and the loop goes on past them
    sc = _scenario(stop={"max_time": 30.0}, output={"sample_interval": interval})
    (fast, run), (ref, _) = _drive(sc, True), _drive(sc, False)
    _assert_same(fast, ref)
    assert run.samples_in_loop
    rows = len(fast.series["time_s"])
    assert run.integrator.loop.samples_recorded > 0.9 * rows, (
        run.integrator.loop.samples_recorded, rows)
    assert run.integrator.loop.control_steps_taken > 0.6 * round(30.0 / 0.05)


def test_a_loop_whose_sample_rows_fill_hands_them_on_at_a_control_time(monkeypatch):
    # two steps a call and room for a control step's samples: the rows fill at control
    # times (where the locomotive's force changes: a restart), none lost or taken twice
    import rrscore.steploop as steploop

    monkeypatch.setattr(steploop, "BUFFER_BYTES", 0)
    sc = _scenario(stop={"max_time": 10.0}, output={"sample_interval": 0.01})
    (fast, run), (ref, _) = _drive(sc, True), _drive(sc, False)
    _assert_same(fast, ref)
    assert len(fast.series["time_s"]) == 1001
    assert run.integrator.loop.samples_recorded > 900


@pytest.mark.parametrize("case", ["unaligned samples", "actions"])
def test_samples_of_vehicle_or_coupling_signals_stay_the_runs(case):
    # their rows need the loads: the run builds them from the loop's steps
    _, run = _drive(_scenario(**CASES[case]), True)
    assert not run.samples_in_loop
    assert run.integrator.loop.samples_recorded == 0


def test_samples_whose_states_would_overfill_the_loops_room_stay_the_runs(monkeypatch):
    # samples 0.001 s apart (50 to a control step) with SAMPLE_BYTES a byte short of the
    # states the loop's rows would hold: the run takes them from the loop's steps, the
    # same rows to the bit
    import rrscore.steploop as steploop

    sc = _scenario(stop={"max_time": 2.0}, output={"sample_interval": 0.001})
    run = Run(sc, on_sample=lambda t, y, row: None)
    n = run.dyn.size
    least, _ = run.integrator.loop._sample_rows(0.001, 0.05)
    assert run.samples_in_loop
    monkeypatch.setattr(steploop, "SAMPLE_BYTES", least * 8 * n - 1)
    (fast, run), (ref, _) = _drive(sc, True), _drive(sc, False)
    assert not run.samples_in_loop
    assert run.integrator.loop.samples_recorded == 0
    _assert_same(fast, ref)


@pytest.mark.parametrize("interval", [2.0, 0.37])
def test_a_drive_paused_and_resumed_is_the_one_run_straight_through(interval):
    # paused with the loop going ahead (and recording samples at control times, or
    # between them), against straight through with every control step in Python
    sc = _scenario(output={"sample_interval": interval})
    fast, run = _drive(sc, True, pieces=(3.3, 10.0, 10.02, 41.7))
    ref, _ = _drive(sc, False)
    _assert_same(fast, ref)
    assert run.integrator.loop.control_steps_taken > 0


def test_a_loop_whose_buffer_fills_at_control_and_sample_times_takes_them_all(monkeypatch):
    # two steps a call: the buffer fills at control times, and at sample times (where the
    # loop takes the control step and the run the sample): none is lost or taken twice
    import rrscore.steploop as steploop

    monkeypatch.setattr(steploop, "BUFFER_BYTES", 0)
    sc = _scenario(stop={"max_time": 30.0}, output={"sample_interval": 0.25})
    fast, ref, taken = _both(sc)
    _assert_same(fast, ref)
    assert taken > 0.6 * round(30.0 / 0.05)


@njit
def _rising_force(t, fields, q_a):  # pragma: no cover (compiled)
    """RisingLoco's torques: 12 kN per second of time at the rail (row 0 of ``fields``:
    the wheel radius), shared by the axles."""
    k = q_a.shape[1] - 1
    for i in range(q_a.shape[0]):
        for j in range(1, k + 1):
            q_a[i, j] = 12e3 * t * fields[0, i] / k


class RisingLoco(VehicleModel):
    """A locomotive whose tractive effort grows with time (a test probe): at some control
    step inside the loop it drives its axles beyond adhesion."""

    type_name = "rising_loco"
    step_fields = ("wheel_radius",)

    def step(self, t, dt):
        self.Q_a[:, 1:] = (12e3 * t * self.wheel_radius / self.num_axis)[:, None]

    @staticmethod
    def step_kernel(t, dt, x, v, fields, q_a, q_r):  # pragma: no cover (compiled)
        _rising_force(t, fields, q_a)
        return 0


class DecliningLoco(RisingLoco):
    type_name = "declining_loco"

    @staticmethod
    def step_kernel(t, dt, x, v, fields, q_a, q_r):  # pragma: no cover (compiled)
        return 1


class FailingLoco(RisingLoco):
    """Its force turns NaN after 2 s, in step and kernel alike."""

    type_name = "failing_loco"

    def step(self, t, dt):
        self.Q_a[:, 1:] = 1e4 if t < 2.0 else np.nan

    @staticmethod
    def step_kernel(t, dt, x, v, fields, q_a, q_r):  # pragma: no cover (compiled)
        for i in range(q_a.shape[0]):
            for j in range(1, q_a.shape[1]):
                q_a[i, j] = 1e4 if t < 2.0 else np.nan
        return 0


class RaisingLoco(RisingLoco):
    """Its kernel raises after 2 s; its step too where ``steps_raise``."""

    type_name = "raising_loco"
    steps_raise = True

    def step(self, t, dt):
        if t > 2.0 and self.steps_raise:
            raise ValueError("the loco's step failed")
        super().step(t, dt)

    @staticmethod
    def step_kernel(t, dt, x, v, fields, q_a, q_r):  # pragma: no cover (compiled)
        if t > 2.0:
            raise ValueError("the loco's kernel failed")
        _rising_force(t, fields, q_a)
        return 0


class KernelOnlyRaisingLoco(RaisingLoco):
    type_name = "kernel_only_raising_loco"
    steps_raise = False


def _probe(cls: type, **sections) -> rrscore.Scenario:
    loco = {"vehicle": {"type": cls.type_name, "empty_mass": "90 t", "length": "20 m",
                        "num_axis": 4, "wheel_diameter": "1.05 m"}}
    return make_scenario([{"config": loco}, {"config": car_config(), "count": 10}],
                         registry=load_registry(extra=[VehiclePlugin(cls)]),
                         coupling={"model": "spring_damper"}, **sections)


def test_a_restart_in_the_loop_that_drives_an_axle_beyond_adhesion_is_settled_as_in_python():
    sc = _probe(RisingLoco, driver=[{"at_time": 0.0, "rail_condition": "wet"}],
                stop={"max_time": 30.0}, output={"sample_interval": 5.0})
    pending = []
    drive = rrscore.Drive(sc)
    loop = drive.run_.integrator.loop
    take = loop.take_restart

    def spy():
        f = take()
        pending.append(f is not None)
        return f

    loop.take_restart = spy
    fast = drive.run()
    ref_drive = rrscore.Drive(sc)
    ref_drive.run_.ahead = False
    ref = ref_drive.run()
    _assert_same(fast, ref)
    assert fast.summary["events"]["slip"] > 0
    assert any(pending)  # the slip held at a restart the loop took itself


def test_a_kernel_that_declines_leaves_every_control_step_to_step():
    sc = _probe(DecliningLoco, stop={"max_time": 10.0})
    fast, ref, taken = _both(sc)
    _assert_same(fast, ref)
    assert taken == 0


def test_a_kernel_whose_force_is_not_finite_hands_back_and_step_names_the_plugin():
    sc = _probe(FailingLoco, stop={"max_time": 10.0}, output={"sample_interval": 5.0})
    messages = []
    for ahead in (True, False):
        run = Run(sc)
        run.ahead = ahead
        with pytest.raises(PluginError) as err:
            run.advance()
        messages.append(str(err.value))
        assert "failing_loco" in messages[-1] and "t = 2.000 s" in messages[-1]
    assert messages[0] == messages[1]


def test_a_kernel_that_raises_hands_the_drive_to_step_which_names_the_plugin():
    sc = _probe(RaisingLoco, stop={"max_time": 10.0}, output={"sample_interval": 5.0})
    run = Run(sc)
    with pytest.raises(PluginError, match=r"raising_loco.*step.*the loco's step failed"
                       r".*t = 2\.050 s"):
        run.advance()
    assert run.integrator.loop.kernel_failed
    # where step itself works, the drive goes on without the loop, and is the one with
    # every control step in Python: the control step the kernel failed in is taken again
    sc = _probe(KernelOnlyRaisingLoco, stop={"max_time": 10.0},
                output={"sample_interval": 5.0})
    fast, ref, taken = _both(sc)
    _assert_same(fast, ref)
    assert 0 < taken < 40


@functools.cache
def _models():
    """A SimpleLoco and its freight cars as a short drive leaves them."""
    run = Run(_scenario(stop={"max_time": 2.0}))
    run.advance()
    loco, cars = (b.model for b in run.train.batches)
    return run, loco, cars


@settings(deadline=None, max_examples=60)
@given(traction=st.floats(0, 1), brake=st.floats(0, 1), dynamic=st.floats(0, 1),
       releasing=st.booleans(), pressure=st.floats(0.5e6, 1.1e6), on=st.booleans(),
       speed=st.floats(-40, 40))
def test_simple_locos_kernel_computes_what_its_step_does_to_the_bit(
        traction, brake, dynamic, releasing, pressure, on, speed):
    run, loco, _ = _models()
    loco.traction_level[:] = traction
    loco.brake_level[:] = brake
    loco.dynamic_brake_level[:] = dynamic
    loco.releasing[:] = releasing
    loco.compressor_on[:] = float(on)
    loco.state.main_reservoir = np.full(loco.count, pressure)
    loco.v = np.full(loco.count, speed)
    assert kernel_problems(loco, 10.0, 0.05) == []


@settings(deadline=None, max_examples=40)
@given(hand=st.floats(-0.5, 1.5), chocks=st.sampled_from([0.0, 1.0]),
       braked=st.booleans())
def test_the_freight_cars_kernel_computes_what_its_step_does_to_the_bit(hand, chocks, braked):
    run, _, cars = _models()
    cars.hand_brake[:] = hand
    cars.chocks[:] = chocks
    cars.Q_r[:] = 1.0 if braked else 0.0
    assert kernel_problems(cars, 10.0, 0.05) == []


def test_a_kernel_that_differs_from_step_is_found():
    run, loco, _ = _models()
    loco.traction_level[:] = 0.5

    class Off(type(loco)):
        @staticmethod
        def step_kernel(t, dt, x, v, f, q_a, q_r):  # pragma: no cover (compiled)
            q_a[:, 1:] = 1.0
            return 0

    loco.__class__ = Off
    try:
        problems = kernel_problems(loco, 10.0, 0.05)
    finally:
        loco.__class__ = Off.__mro__[1]
    assert problems and "Q_a" in problems[0]



# ---------------------------------------------------------- the built-in driver
def _python_decisions(monkeypatch) -> list[float]:
    """The times of the built-in driver's decisions taken in Python from now on."""
    from rrscore.driving.autodriver import AutoDriver

    calls: list[float] = []
    update = AutoDriver.update
    monkeypatch.setattr(AutoDriver, "update",
                        lambda self, t, *a: calls.append(t) or update(self, t, *a))
    return calls


def test_the_loop_takes_the_built_in_drivers_decisions_and_drives_as_python_does(
        monkeypatch):
    # every decision after the first (Python's: it checks the plugins) is the loop's,
    # SimpleLoco's levels set by its control kernel; the drive is Python's to the bit
    calls = _python_decisions(monkeypatch)
    sc = _scenario(**CASES["built-in driver stopping"])
    fast, run = _drive(sc, True)
    # the first control step's, and a few where the loop hands a control time back
    assert len(calls) <= 10, calls
    auto = run.driver.autodriver
    assert auto.stopped and auto.command == -1.0  # the loop's state taken back
    calls.clear()
    ref, _ = _drive(sc, False)
    assert len(calls) > 100  # every 0.37 s, at the next control time, in Python
    _assert_same(fast, ref)


def test_a_vehicle_type_whose_set_control_the_loop_cannot_take_keeps_the_decisions_python(
        monkeypatch):
    # SimpleLoco without its control kernel: its set_control is its own (it clears the
    # brake's release), which the loop cannot know; the driver decides in Python, the
    # loop takes the control steps between, and the drive is the same
    calls = _python_decisions(monkeypatch)
    monkeypatch.setattr(load_registry().vehicle_types["simple_loco"], "control_kernel", None)
    fast, run = _drive(_scenario(**CASES["built-in driver"]), True)
    assert not run.integrator.loop.control.decides
    assert len(calls) > 110  # every second it is on (off from 60 to 90 s)
    assert run.integrator.loop.control_steps_taken > 0.6 * round(150.0 / 0.05)
    ref, _ = _drive(_scenario(**CASES["built-in driver"]), False)
    _assert_same(fast, ref)


@settings(deadline=None, max_examples=60)
@given(control=st.integers(0, 4), value=st.floats(0, 5), releasing=st.booleans())
def test_simple_locos_control_kernel_sets_what_its_set_control_does(control, value,
                                                                      releasing):
    from rrscore.controlsteps import control_kernel_problems

    _, loco, _ = _models()
    loco.releasing[:] = releasing
    name = list(loco.controls)[control]
    lo, hi = loco.control_ranges[name]
    loco.set_control(name, np.arange(loco.count), min(max(value, lo), hi))
    assert control_kernel_problems(loco) == []


def test_a_control_kernel_that_differs_from_set_control_is_found():
    from rrscore.controlsteps import control_kernel_problems

    _, loco, _ = _models()
    loco.releasing[:] = True

    class Forgets(type(loco)):
        @staticmethod
        def control_kernel(control, value, f):  # pragma: no cover (compiled)
            if control != 1:
                return 1
            f[1, :] = value  # the brake level, but releasing left as it was
            return 0

    loco.__class__ = Forgets
    try:
        problems = control_kernel_problems(loco)
    finally:
        loco.__class__ = Forgets.__mro__[1]
    assert problems and "releasing" in problems[0] and "'brake_level'" in problems[0]


@settings(deadline=None, max_examples=200)
@given(speed=st.floats(0, 40), front=st.floats(0, 20000), integral=st.floats(-1, 1),
       command=st.sampled_from([-1.0, -0.3, 0.0, 0.004, 0.5, 1.0]),
       stopped=st.booleans(), t=st.floats(0, 2000), first=st.booleans())
def test_the_compiled_decision_is_the_built_in_drivers_to_the_bit(speed, front, integral,
                                                                    command, stopped, t,
                                                                    first):
    from rrscore.driving.autodriver import D_COMMAND, decide

    run = Run(_scenario(autodriver={"mode": "hold_limit", "stop_at": "B"}, driver=[]))
    auto = run.driver.autodriver
    auto.integral, auto.command, auto.stopped = integral, command, stopped
    auto.next_time = 0.0 if first else t - 0.5
    rear = front - run.train.total_length
    state = auto.loop_state()
    params, sections = auto.loop_params()
    changed = decide(t, front, rear, speed, state, params, sections)
    assert changed == auto.update(t, front, rear, speed)
    np.testing.assert_array_equal(state[:-1], auto.loop_state()[:-1])
    assert state[D_COMMAND] == auto.command


def _raising_control(control, value, f):  # pragma: no cover (compiled)
    if control == 0 and value > 0.5:
        raise ValueError("the loco's control kernel failed")
    return 1  # otherwise declined: set_control sets it


def test_a_control_kernel_that_raises_hands_the_decisions_to_python_and_the_drive_goes_on(
        monkeypatch):
    # the decision's writes undone; from then on the run's control steps are Python's
    # (set_control, which works, sets the levels) and the drive is Python's to the bit
    monkeypatch.setattr(load_registry().vehicle_types["simple_loco"], "control_kernel",
                        staticmethod(_raising_control))
    sc = _scenario(**CASES["built-in driver"])
    fast, run = _drive(sc, True)
    assert run.integrator.loop.kernel_failed
    ref, _ = _drive(sc, False)
    _assert_same(fast, ref)
