"""The compiled step loop (rrscore.steploop) against the Python path, the reference."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import rrscore
from rrscore.run.run import Run

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = sorted((ROOT / "configs" / "scenarios").glob("*.toml")) + [
    ROOT / "examples" / "shunter" / "scenario.toml"]
#: Scenarios whose train the compiled loop serves in their first seconds: the test fails
#: if it silently stops serving them. (The others have cars that are not coupled, or
#: axles held by brakes that slide.)
SERVED = {"freight_50", "freight_50_timetable", "runout_100", "runin_100", "impact_1ms",
          "rigid_40km", "simple_loco_level", "calibration_coastdown", "brake_downgrade_100",
          "brake_emergency_80", "brake_release_recharge", "brake_service_80",
          "handbrake_hold_20"}
#: Rigid trains the loop takes as one body (rrscore.rigidbody): a small state of its own,
#: so not the Python path's arithmetic to the bit, but within the tolerances below (and
#: tests/test_rigidbody.py holds it closer).
ONE_BODY = {"rigid_40km"}
#: Each drive is cut to this much simulated time, so the suite stays short.
MAX_TIME = 90.0


def _load(path: Path, compiled: bool) -> rrscore.Scenario:
    sc = rrscore.load_scenario(path, plugin_dirs=[path.parent] if "examples" in path.parts
                               else ())
    max_time = min(sc.config["stop"]["max_time"], MAX_TIME)
    return sc.with_values({"solver.compiled": compiled, "stop.max_time": max_time})


def _name(path: Path) -> str:
    return path.stem if path.parent.name == "scenarios" else path.parent.name


@pytest.mark.parametrize("path", SCENARIOS, ids=_name)
def test_every_shipped_scenario_drives_the_same_compiled_and_on_the_python_path(path):
    fast = rrscore.Drive(_load(path, True)).run()
    ref = rrscore.Drive(_load(path, False)).run()
    # positions within 1 mm at every sample, over the same samples
    np.testing.assert_array_equal(fast.series["time_s"], ref.series["time_s"])
    for col in ("position_m", "front_m", "rear_m"):
        np.testing.assert_allclose(fast.series[col], ref.series[col], rtol=0, atol=1e-3)
    # coupler force extremes within 0.5 %
    for key in ("max_coupler_tension_N", "max_coupler_compression_N"):
        a, b = fast.summary[key], ref.summary[key]
        if a is None or b is None:
            assert a == b
        else:
            assert abs(a - b) <= 0.005 * max(abs(b), 1.0), (key, a, b)
    assert fast.summary["events"] == ref.summary["events"]
    assert fast.summary["stop_reason"] == ref.summary["stop_reason"]
    if _name(path) in SERVED - ONE_BODY:
        # the loop does the Python path's arithmetic and its steps reach the monitors
        # together (extremes, their times and places; points passed; samples): the
        # same to the last digit
        for col in ref.series:
            np.testing.assert_array_equal(fast.series[col], ref.series[col], err_msg=col)
        timing = {"wall_time_s", "real_time_factor", "compile_time_s"}
        assert {k: v for k, v in fast.summary.items() if k not in timing} == \
            {k: v for k, v in ref.summary.items() if k not in timing}


@pytest.mark.parametrize("name", sorted(SERVED))
def test_the_compiled_loop_serves_the_shipped_trains_it_is_meant_for(name):
    run = Run(_load(ROOT / "configs" / "scenarios" / f"{name}.toml", True))
    assert run.integrator.loop is not None
    run.advance(5.0)
    assert run.integrator.loop.steps_taken > 0


def test_a_forced_python_path_has_no_compiled_loop():
    freight = ROOT / "configs" / "scenarios" / "freight_50.toml"
    assert Run(_load(freight, False)).integrator.loop is None


@pytest.mark.parametrize("name", ["freight_50", "runout_100", "rigid_40km",
                                  "brake_release_recharge"])
def test_the_compiled_right_hand_side_is_the_components_one(name):
    run = Run(_load(ROOT / "configs" / "scenarios" / f"{name}.toml", True))
    air = name.startswith("brake_")
    run.advance(30.0 if air else 3.0)
    loop, dyn, y = run.integrator.loop, run.dyn, run.solver.y
    assert loop.applies()
    if air:  # recharging: the brake takes air from the main reservoir's state
        assert np.any(dyn.airbrake.mr_rate != 0.0)
    fast = loop.rhs(run.solver.t, y)
    np.testing.assert_array_equal(fast, dyn.rhs(run.solver.t, y))  # the same arithmetic
    # and the components' reference, to rounding (sums taken in another order)
    ref = dyn.rhs_components(run.solver.t, y)
    scale = np.maximum(np.abs(ref), 1e-9)
    assert np.max(np.abs(fast - ref) / scale) < 1e-9


def _table_drive(table: dict, compiled: bool) -> rrscore.DriveResult:
    from rrscore.model.config import Context
    from rrscore.run.scenario import scenario_from_table

    table = {**table, "solver": {"compiled": compiled}}
    sc = scenario_from_table(table, Context("<test>", "scenario", ROOT / "configs"))
    return rrscore.Drive(sc).run()


@pytest.mark.parametrize("case", ["braked to a stop", "wheels slipping", "coupler breaking"])
def test_events_with_actions_are_handed_to_the_python_path_and_the_drive_is_the_same(case):
    # Each drive meets events the loop does not act on itself (vehicles stopping and held,
    # axles starting to slip and re-adhering, a coupler breaking): the loop hands those
    # steps back, and the drive must be the Python path's to the last digit.
    table = {"train": "trains/freight_50.toml", "route": "routes/level_30km.toml",
             "start": {"position": "1 km", "speed": "15 km/h"},
             "stop": {"max_time": 200.0, "standstill": True},
             "output": {"sample_interval": 1.0}}
    if case == "braked to a stop":
        table["driver"] = [{"at_time": 1.0, "set": {"brake_level": 1.0}}]
    elif case == "wheels slipping":
        table["start"] = {"position": "1 km", "speed": "0 km/h", "slack": "bunched"}
        table["driver"] = [{"at_time": 0.0, "rail_condition": "leaves"},
                           {"at_time": 0.0, "set": {"traction_level": 1.0}}]
        table["stop"] = {"max_time": 60.0}
    else:
        table["train"] = {"coupling": {"model": "spring_damper",
                                       "params": {"slack": "11 mm"}, "break_force": "150 kN"},
                          "vehicles": [{"config": "vehicles/simple_loco.toml"},
                                       {"config": "vehicles/freight_car_4axle.toml",
                                        "count": 20, "payload_fraction": 1.0}]}
        table["start"] = {"position": "1 km", "speed": "0 km/h", "slack": "bunched"}
        table["driver"] = [{"at_time": 0.0, "set": {"traction_level": 1.0}}]
        table["stop"] = {"max_time": 60.0}
    fast, ref = _table_drive(table, True), _table_drive(table, False)
    for col in ("time_s", "position_m", "speed_mps", "front_m", "rear_m"):
        np.testing.assert_array_equal(fast.series[col], ref.series[col])
    assert fast.summary["events"] == ref.summary["events"]
    assert fast.summary["steps"] == ref.summary["steps"]
    kinds = {"braked to a stop": "standstill", "wheels slipping": "slip",
             "coupler breaking": "coupler break"}
    assert fast.summary["events"][kinds[case]] > 0  # the case meets the event it is about


def test_a_slip_that_holds_at_a_restart_is_acted_on_before_the_loop_steps():
    # the loop takes the restart's derivative and checks the slip margins itself; where
    # one is negative (full traction set at once on leaves) it steps not at all, and the
    # integrator fires the slip as the Python path does: the same drive to the last digit
    table = {"train": "trains/freight_50.toml", "route": "routes/level_30km.toml",
             "start": {"position": "1 km", "speed": "0 km/h", "slack": "bunched"},
             "driver": [{"at_time": 0.0, "rail_condition": "leaves"},
                        {"at_time": 2.0, "set": {"traction_level": 1.0}}],
             "stop": {"max_time": 20.0}, "output": {"sample_interval": 0.5}}
    from rrscore.model.config import Context
    from rrscore.run.scenario import scenario_from_table

    statuses = []
    sc = scenario_from_table({**table, "solver": {"compiled": True}},
                             Context("<test>", "scenario", ROOT / "configs"))
    drive = rrscore.Drive(sc)
    loop = drive.run_.integrator.loop
    run = loop.run

    def spy(*args, **kwargs):
        status, steps = run(*args, **kwargs)
        statuses.append((kwargs.get("fresh", False), status))
        return status, steps

    loop.run = spy
    fast, ref = drive.run(), _table_drive(table, False)
    assert (True, loop.CONDITION) in statuses
    # restarts the loop took on itself (the call then ends at the drive's end, or where
    # its buffer is full)
    assert any(fresh and status in (loop.DONE, loop.FULL) for fresh, status in statuses)
    for col in ("time_s", "position_m", "speed_mps", "front_m", "rear_m"):
        np.testing.assert_array_equal(fast.series[col], ref.series[col])
    for key in ("events", "steps", "rhs_evaluations"):
        assert fast.summary[key] == ref.summary[key], key
    assert fast.summary["events"]["slip"] > 0


def test_a_loop_that_fails_hands_the_drive_to_the_python_path(monkeypatch):
    # a plugin's kernel raising inside the loop: the Python path serves the rest of the
    # drive (and would name the plugin, were it still failing there)
    def fails(*args):
        raise ZeroDivisionError("a kernel failed")

    path = ROOT / "configs" / "scenarios" / "freight_50.toml"
    ref = rrscore.Drive(_load(path, False)).run()
    drive = rrscore.Drive(_load(path, True))
    monkeypatch.setattr(drive.run_.integrator.loop, "_advance", fails)
    fast = drive.run()
    assert drive.run_.integrator.loop.failed
    np.testing.assert_array_equal(fast.series["position_m"], ref.series["position_m"])
    assert fast.summary["steps"] == ref.summary["steps"]


def test_a_loop_that_does_not_compile_is_warned_of_and_the_drive_goes_on(monkeypatch):
    # numba refusing the loop itself (a bug of rrscore's, not a plugin's) would otherwise
    # only show as a drive far slower than it should be
    from numba.core.errors import TypingError

    def refused(*args):
        raise TypingError("Unsupported op-code encountered\nmore detail")

    path = ROOT / "configs" / "scenarios" / "freight_50.toml"
    drive = rrscore.Drive(_load(path, True).with_values({"stop.max_time": "30 s"}))
    monkeypatch.setattr(drive.run_.integrator.loop, "_advance", refused)
    with pytest.warns(RuntimeWarning, match=r"compiled step loop did not compile "
                      r"\(TypingError: .*Unsupported op-code encountered\); this run goes on"):
        result = drive.run()
    assert drive.run_.integrator.loop.failed
    assert result.summary["sim_time_s"] == 30.0


def test_the_steps_the_loop_hands_on_carry_the_right_hand_side_at_their_states():
    # every step's derivatives, at its start (its first stage) and at its end, are the
    # Python path's right-hand side there, the rolling wheels' zero rates included
    # (the loop's stages leave those entries of its buffers as they are: they must be
    # zeros, not whatever the buffers held)
    path = ROOT / "configs" / "scenarios" / "freight_50.toml"
    drive = rrscore.Drive(_load(path, True).with_values({"stop.max_time": 30.0}))
    run = drive.run_
    run.ahead = False  # one set of held inputs per call of the loop
    loop, dyn = run.integrator.loop, run.dyn
    original, checked = loop.run, []

    def run_and_check(*args, **kwargs):
        status, steps = original(*args, **kwargs)
        if steps is not None:
            for j in range(len(steps)):
                segment = steps.segment(j)
                for t, y, f in ((segment.t0, segment.y0, segment.f0),
                                (segment.t1, segment.y1, segment.f1)):
                    assert not f[dyn.somega].any() and not f[dyn.sphi].any()
                    if (y[dyn.sv] > 0).all():  # (friction held as the bodies hold it now)
                        np.testing.assert_allclose(f, dyn.rhs(t, y), rtol=1e-12,
                                                   atol=1e-300)
                        checked.append(t)
        return status, steps

    loop.run = run_and_check
    drive.run()
    assert len(checked) > 200  # the loop took the drive's steps, the train moving
    assert run.solver.t == 30.0


def test_inner_stages_form_the_entries_a_right_hand_side_reads_as_the_full_stage_does():
    # the loop's stages against the solver's full stage state: equal to the bit where
    # formed, and the unread entries (wheel angles and spins, energy account) left alone
    from rrscore.engine.tableau import _DP_B, _stage_state
    from rrscore.steploop import _A, _stage_live, _step_end

    run = Run(_load(ROOT / "configs" / "scenarios" / "freight_50.toml", True))
    loop, dyn = run.integrator.loop, run.dyn
    live = np.zeros(dyn.size, dtype=bool)
    for lo, hi in loop._live:
        live[lo:hi] = True
    np.testing.assert_array_equal(live, ~dyn.unread_rolling)
    assert dyn.unread_rolling[dyn.sphi].all() and dyn.unread_rolling[dyn.somega].all()
    assert not dyn.unread_rolling[dyn.sv].any() and not dyn.unread[dyn.somega].any()
    rng = np.random.default_rng(7)
    y, ks = rng.normal(size=dyn.size), rng.normal(size=(7, dyn.size))
    for i in range(1, 6):
        state = np.full(dyn.size, 123.0)
        assert _stage_live(y, 0.01, _A[i], ks, i, loop._live, state)
        full, finite = _stage_state(y, 0.01, _A[i], ks, i)
        assert finite
        np.testing.assert_array_equal(state[live], full[live])
        assert (state[~live] == 123.0).all()
    # the step's end (six stages) on the entries it forms
    formed = np.zeros(dyn.size, dtype=bool)
    for lo, hi in loop._formed:
        formed[lo:hi] = True
    end = np.full(dyn.size, 123.0)
    assert _step_end(y, 0.01, ks, loop._formed, end)
    np.testing.assert_array_equal(end[formed], _stage_state(y, 0.01, _DP_B, ks, 6)[0][formed])
    assert (end[~formed] == 123.0).all()
    # it reads no second stage (its weight is zero): whatever that holds, the same end
    ks[1] = np.nan
    again = np.full(dyn.size, 123.0)
    assert _step_end(y, 0.01, ks, loop._formed, again)
    np.testing.assert_array_equal(again, end)
    ks[5, np.flatnonzero(formed)[-1]] = np.inf  # a sixth stage not finite where read fails
    assert not _step_end(y, 0.01, ks, loop._formed, again)
    ks[1] = ks[5] = 1.0
    ks[2, np.flatnonzero(live)[-1]] = np.nan  # a stage not finite where it is read fails
    assert not _stage_live(y, 0.01, _A[3], ks, 3, loop._live, np.zeros(dyn.size))
    ks[2] = 1.0
    y[np.flatnonzero(live)[0]] = np.inf  # so does a state not finite where it is formed
    assert not _stage_live(y, 0.01, _A[3], ks, 3, loop._live, np.zeros(dyn.size))


def test_the_error_norm_over_the_controlled_entries_is_the_solvers_over_all():
    # entries with atol = inf add nothing to the norm: leaving them out changes no bit
    from rrscore.engine.tableau import _DP_E, _max_ratio, _weighted
    from rrscore.model.state import entry_ranges
    from rrscore.steploop import _error_ratio

    rng = np.random.default_rng(11)
    n = 500
    ks, y1, ref, mag0 = (rng.normal(size=(7, n)), rng.normal(size=n), rng.normal(size=n),
                         np.abs(rng.normal(size=n)))
    atol = np.where(rng.random(n) < 0.6, np.inf, 1e-6)
    rtol = np.full(n, 1e-6)
    controlled = entry_ranges(np.isfinite(atol))
    assert len(controlled) > 10  # many runs, not one block
    work = np.full(n, 5.0)  # (left over from another use: the estimate starts afresh)
    finite, norm = _error_ratio(0.01, ks, atol, rtol, mag0, y1, ref, controlled, work)
    assert finite
    assert norm == _max_ratio(_weighted(0.01, _DP_E, ks), atol, rtol, mag0, y1, ref)
    ks[3, controlled[-1, 0]] = np.inf  # a non-finite estimate where it counts fails
    assert not _error_ratio(0.01, ks, atol, rtol, mag0, y1, ref, controlled, work)[0]


@pytest.mark.parametrize("name", ["runin_100", "freight_50"])
def test_a_loop_that_fills_its_buffer_goes_on_as_the_python_path_does(monkeypatch, name):
    # the smallest buffer (two steps a call, as a very long train gets): a call that
    # ends full hands on the slack edges it just reached, not found again at the next
    import rrscore.steploop as steploop

    monkeypatch.setattr(steploop, "BUFFER_BYTES", 0)
    path = ROOT / "configs" / "scenarios" / f"{name}.toml"
    drive = rrscore.Drive(_load(path, True))
    assert drive.run_.integrator.loop._size == 2
    fast, ref = drive.run(), rrscore.Drive(_load(path, False)).run()
    assert fast.summary["steps"] == ref.summary["steps"]
    assert fast.summary["events"] == ref.summary["events"]
    for col in ("position_m", "front_m", "rear_m"):
        np.testing.assert_array_equal(fast.series[col], ref.series[col], err_msg=col)


def test_a_crossing_is_a_fall_through_zero_or_a_rise_through_it_among_the_slack_edges():
    # the loop's check after each step against numpy's, on values with zeros among them
    # (a value on zero has not crossed) and NaNs (no crossing either)
    from rrscore.steploop import _crossing

    rng = np.random.default_rng(3)
    for _ in range(300):
        n = int(rng.integers(0, 40))
        g0, g1 = (rng.choice([-1.0, 0.0, 1.0, np.nan], size=n, p=[0.3, 0.1, 0.55, 0.05])
                  for _ in range(2))
        lo, hi = sorted(int(v) for v in rng.integers(-2, n + 3, size=2))
        m = int(rng.integers(0, n + 1))
        edges = np.zeros(m, dtype=bool)
        edges[max(lo, 0):max(min(hi, m), 0)] = True
        falls = (g0[:m] > 0) & (g1[:m] < 0)
        rises = (g0[:m] < 0) & (g1[:m] > 0) & edges
        assert _crossing(g0, g1, m, lo, hi) == bool((falls | rises).any())


def test_the_states_handed_to_samples_stay_as_they_were_while_the_run_goes_on():
    # the solver's state is a view of the loop's buffer between its calls (no copy at
    # every call): what a run hands to its samples' hooks must be the hooks' own, so a
    # hook that keeps it keeps the state of its row (the lead's position in column 1).
    # The rows come from the loop's blocks of samples and, the last, from Run._sample
    # (which hands a copy: the solver's state is a view of the buffer there)
    from conftest import make_scenario

    kept = []
    sc = make_scenario([{"config": "vehicles/simple_loco.toml"},
                        {"config": "vehicles/freight_car_4axle.toml", "count": 30}],
                       start={"position": "2 km", "speed": "60 km/h"},
                       stop={"max_time": 60.0}, output={"sample_interval": 1.0})
    run = Run(sc, on_sample=lambda t, y, row: kept.append((row[1], y)))
    run.advance()
    assert run.integrator.loop.steps_taken > 30 and len(kept) == 61
    sx = run.dyn.sx.start
    assert [y[sx] for _, y in kept] == [x for x, _ in kept]
    assert len({x for x, _ in kept}) == len(kept)  # the train moved from row to row
