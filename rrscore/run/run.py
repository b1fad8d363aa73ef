"""A run: one execution of a scenario, owning every piece of state that changes.

The :class:`~rrscore.run.scenario.Scenario` is the description and never changes. The
:class:`Run` built from it owns the train's records, the state vector, every discrete
mode (rolling or slipping axles, coupled or uncoupled couplings, the direction friction
acts in, which driver actions are done), the event loop's state and the monitors.
:meth:`Run.snapshot` copies all of it and :meth:`Run.restore` puts it back, so a run
can be branched ("what if the driver brakes here?") and repeated exactly.

The event loop (:func:`rrscore.engine.loop.advance`) integrates the train and returns
here only for what Python does: a control step it does not take itself (the driver
program's actions, the stop conditions), an event's action, a sample row that needs the
plugins' signals, a failure. Each control step: check the stop conditions, apply the
driver program, run every vehicle plugin's control step, place what they set, and
restart where it changed.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..driving.autodriver import AutoDriver, decide
from ..driving.program import DriverProgram
from ..driving.trace import CommandReplay, TraceDriver, follow
from ..engine import loop
from ..engine import multibody as mb
from ..engine.limitwatch import check_limit, exceedance_totals, exceedances
from ..engine.stability import fastest_mode
from ..engine.train import TrainSystem, copy_arrays
from ..jit import compile_seconds
from ..model.errors import (
    PLUGIN_FAILURES,
    ConfigError,
    RrsError,
    interruption_behind,
    take_interruption,
)
from ..model.events import Event
from ..model.formulas import KMH_PER_MS
from ..physics.energy import balance, balance_warning
from .figures import vehicle_figures
from .provenance import provenance
from .scenario import Scenario
from .signals import from_state_alone, signal_values

Sampler = Callable[[float, np.ndarray, list[float]], None]
RowsSampler = Callable[[np.ndarray, np.ndarray, Callable[[], np.ndarray]], None]
Listener = Callable[[Event], None]

#: Rows of samples the loop keeps between two returns to Python, at least.
SAMPLE_ROWS = 256
#: The states of those samples stay within this.
SAMPLE_BYTES = 64 * 2**20


@dataclass(frozen=True)
class Snapshot:
    """A copy of a run's state at one instant (see :meth:`Run.snapshot`)."""

    t: float
    parts: dict[str, Any]


#: Everything a run changes as it goes; :meth:`Run.snapshot` copies these.
_STATE = ("train", "system", "clock", "work", "driver", "replay", "n_control", "moved",
          "stop_reason", "error", "_emitted", "_last_event")


class Run:
    """One run of a scenario. :class:`rrscore.Drive` wraps it with outputs; use a Run
    directly to step a drive from Python, branch it or repeat part of it.

    :param on_sample: called with ``(t, y, row)`` for each row of the time series: the
        state vector and the values in the order of :attr:`columns`.
    :param on_event: called with each :class:`~rrscore.model.events.Event` soon after it
        happens.
    :param on_rows: if given (with ``on_sample``), called instead of ``on_sample`` with
        the rows sampled since the last call, all together, as ``(t, rows, states)``:
        their times, the rows (one each) and a function that forms their states (one row
        each).
    :param states: whether the rows' states are kept (for ``on_rows``' function and
        ``on_sample``): a hook that reads them needs them; the rows themselves do not.
    :param each_row: hand every row on at its control step, as the drive goes (else the
        loop hands them on in blocks): a hook that fails on a row then stops the drive
        there.
    """

    def __init__(self, scenario: Scenario, on_sample: Sampler | None = None,
                 on_event: Listener | None = None, on_rows: RowsSampler | None = None,
                 states: bool = True, each_row: bool = False) -> None:
        self._compile0 = compile_seconds()
        cfg = scenario.config
        if cfg["dynamics"] == "events":
            raise ConfigError(scenario.file, "scenario.dynamics",
                              "found 'events', expected 'multibody' or 'rigid' for a Run (it "
                              "steps the continuous core); an event-driven scenario runs with "
                              "rrs drive or rrscore.drive, or step "
                              "YardRun(yard_from_scenario(scenario)) yourself")
        self.scenario = scenario
        self.on_sample, self.on_event, self.on_rows = on_sample, on_event, on_rows
        self.train = tr = scenario.build_train()
        sol, env, start = cfg["solver"], cfg["environment"], cfg["start"]
        self.system = system = TrainSystem(tr, scenario.route, env["wind"], env["air_density"],
                                           sol["position_tol"], sol["atol"],
                                           rigid=cfg["dynamics"] == "rigid")
        system.set_tolerances(sol["rtol"])
        self.tableau = scenario.registry.solvers[sol["method"]]
        self.tab = self.tableau.coefficients()
        if not self.tableau.adaptive:
            check_fixed_step(self.tableau, sol["step"], system, scenario.file)
        speed = start["speed"] if start["speeds"] is None else np.array(start["speeds"])
        gaps = None if start["gaps"] is None else np.array(start["gaps"])
        # scenario positions are the train's front; the state holds vehicle centres
        y0 = system.initial_state(scenario.start_position - tr.half_length[0], speed,
                                  start["slack"], gaps)
        system.air.initial(start["brakes"])
        x = y0[system.sx]  # the speed-limit watch's first check, at the start
        check_limit(system.limits, 0.0, float(x[0] + tr.half_length[0]),
                    float(x[-1] - tr.half_length[-1]), float(y0[system.lay.sv]))
        steps = [sol["control_step"]] + [b.cls.control_step for b in tr.batches
                                         if b.cls.control_step]
        self.control_step = min(steps)
        self.sample_interval = cfg["output"]["sample_interval"]
        self.max_time = cfg["stop"]["max_time"]
        self.columns = self._columns()
        out = cfg["output"]
        # the recorded vehicles' and couplings' signals are Python's: from the samples'
        # states, or where they need more, at every sample's control step
        self._signals_rows = bool(out["vehicles"] or out["couplings"])
        # ... and where each row is wanted as it happens (at its control step: a hook that
        # fails on one stops the drive there)
        self._python_rows = (self._signals_rows and not from_state_alone(self)) or each_row
        sampling = on_sample is not None or on_rows is not None
        #: The event loop's clock and counts (:data:`~rrscore.engine.loop.LOOP_STATE`).
        self.clock = st = loop.loop_state()
        st[0].h = sol["step"]
        st[0].max_step = sol["max_step"] if self.tab.adaptive else np.inf
        st[0].control_dt = self.control_step
        st[0].sample_dt = self.sample_interval if sampling else 0.0
        st[0].python_rows = int(self._python_rows)
        n = system.size
        columns = mb.ROW + system.lay.nc
        per_step = math.ceil(self.control_step / self.sample_interval) + 3 if sampling else 1
        # (no more than SAMPLE_BYTES holds: past that the loop hands the samples over
        # within a control step)
        per_step = min(per_step, max(SAMPLE_ROWS, SAMPLE_BYTES // (8 * columns)))
        rows = max(SAMPLE_ROWS, per_step + 2) if sampling else 1
        keep = (states or self._signals_rows) and sampling
        state_rows = min(rows, max(per_step + 2, SAMPLE_BYTES // (8 * n))) if keep else 0
        rows = state_rows or rows
        self.work = loop.work_for(n, self.tab.stages, system.sys.ev_kind.size, rows, columns,
                                  state_rows)
        self.work.y[:] = y0
        auto = cfg["autodriver"]
        trace = scenario.trace
        if trace is not None and trace.kind == "speed":  # the trace driver in its place
            leader = TraceDriver(cfg["trace"], trace, tr)
            self.driver = DriverProgram(scenario.actions, tr, system, leader)
            system.drive_with(follow, leader.state, leader.params, leader.table)
        else:
            self.driver = DriverProgram(scenario.actions, tr, system,
                                        None if auto["mode"] == "off"
                                        else AutoDriver(auto, tr, scenario.route))
        #: A command trace's levels, set at their times (``[scenario.trace]``, kind
        #: commands), or None.
        self.replay = (CommandReplay(trace, tr, system)
                       if trace is not None and trace.kind == "commands" else None)
        autodriver = self.driver.autodriver
        if isinstance(autodriver, AutoDriver) and autodriver.timetable is None:
            system.drive_with(decide, autodriver.state, autodriver.params, autodriver.sections)
        stop = cfg["stop"]
        watch = system.watch[0]
        watch.x0 = float(y0[system.sx][0])
        watch.max_distance = stop["max_distance"]
        watch.standstill_speed = stop["standstill_speed"]
        watch.standstill = float(stop["standstill"])
        self.x0 = float(y0[system.sx][0])
        self.kinetic0 = system.kinetic(y0)
        self.n_control = 0  # control times are n * control_step: no drift from summing
        self.moved = False
        self.stop_reason: str | None = None
        self.error: str | None = None
        self._emitted = 0
        self._last_event = ""

    # ------------------------------------------------------------------ state
    @property
    def t(self) -> float:
        """Simulated time, s."""
        return float(self.clock[0].t)

    @property
    def y(self) -> np.ndarray:
        """The state vector (a copy, every entry formed); see ``run.system.layout``."""
        return self.system.full_state(self.work.y)

    @property
    def dyn(self) -> TrainSystem:
        """The run's train system (its layout, arrays and modes)."""
        return self.system

    def state_of(self, name: str) -> np.ndarray:
        """One block of the state vector by name (``"body.v"``, ``"wheel.omega"``,
        ``"simple_loco.main_reservoir"``, or the air brake's ``"brake.pipe"``,
        ``"brake.cylinder"``, ...), a copy."""
        air = self.system.air
        if name in air.layout:
            return air.state_at(self.t)[air.layout[name]].copy()
        return self.y[self.system.layout[name]].copy()

    state = state_of

    def snapshot(self) -> Snapshot:
        """A copy of everything this run has changed so far, to :meth:`restore` later."""
        memo = self._shared()
        return Snapshot(self.t, {k: copy_arrays(getattr(self, k), memo) for k in _STATE})

    def restore(self, snapshot: Snapshot) -> None:
        """Go back to a :meth:`snapshot` of this run (it can be restored again later).
        Samples and events after it are produced again as the run goes on."""
        memo = self._shared()
        for k, v in snapshot.parts.items():
            setattr(self, k, copy_arrays(v, memo))

    def _shared(self) -> dict[int, Any]:
        # what a copy shares with the original: the run (its callbacks are bound to it),
        # the scenario and what hangs off it; all immutable or external
        sc = self.scenario
        return {id(self): self, id(sc): sc, id(sc.route): sc.route,
                id(sc.registry): sc.registry}

    # -------------------------------------------------------------------- loop
    def advance(self, t_end: float | None = None) -> str | None:
        """Run until a stop condition holds (returns its name, also kept in
        :attr:`stop_reason`) or, if given, until simulated time ``t_end`` rounded up to a
        control time (returns None; a run paused and resumed is the same as one that ran
        straight through).

        A step that fails ends the run with ``stop_reason`` "solver failed" and the reason in
        :attr:`error`; plugin errors propagate as :class:`~rrscore.model.errors.PluginError`
        with the run's state as it was.
        """
        if self.stop_reason is not None:
            return self.stop_reason
        if t_end is not None:
            t_end = math.ceil(t_end / self.control_step - 1e-9) * self.control_step
        st = self.clock[0]
        while True:
            t = float(st.t)
            at_control = abs(st.control_next * self.control_step - t) <= 1e-9 * max(1.0, t)
            if at_control or t >= self.max_time - 1e-9:
                reason = self._stop_condition(t)
                if reason is not None:
                    self.stop_reason = reason
                    self._final_row()
                    return reason
            if t_end is not None and t >= t_end - 1e-12:
                return None
            if at_control and st.control_next > st.control_last:
                self._control_step(t)
                continue
            bound = self.max_time if t_end is None else min(t_end, self.max_time)
            st.t_end = bound
            self._plan(bound)
            if self.system.choose(self.work.y):  # a rigid train becomes one body, or stops
                st.known = 0
            try:
                code = loop.advance(self.system.loop_system, self.system.fns, self.tab,
                                    self.clock, self.work)
            except BaseException as exc:
                self._deliver_rows()  # (the rows taken before it: whole, and kept)
                interruption = interruption_behind(exc)
                if interruption is not None and interruption is not exc:
                    raise interruption from exc  # a signal met in compiled code
                if isinstance(exc, RrsError) or not isinstance(exc, PLUGIN_FAILURES):
                    raise
                raise self.system.failure(exc, float(st.t), self.work.y) from exc
            self._deliver_rows()
            interruption = take_interruption()
            if interruption is not None:
                raise interruption
            self.n_control = int(st.control_next)
            failed = int(self.system.watch[0].failed)
            if failed:
                self.system.watch[0].failed = 0.0
                self.system.plugin_problem(failed - 1, float(st.t))
            if code == loop.CONTROL:  # handed back: this control step is Python's
                st.control_last = min(st.control_last, st.control_next - 1)
            elif code == loop.EVENT or code == loop.CONDITION:
                self._act(code)
            elif code == loop.FAILED:
                air = self.system.air.run.state[0]
                if air.status in (loop.FAILED, loop.STALLED):
                    return self._fail("solver failed", f"the air brake's steps failed at "
                                      f"t = {air.t:.6f} s (step size {air.h:.1e} s)")
                return self._fail("solver failed", f"step size underflow at t = {st.t:.6g} s "
                                  "(the state is no longer finite, or the steps collapse)")
            elif code == loop.STALLED:
                how = (f"{int(st.passes)} passes at one instant" if st.passes >=
                       loop.MAX_PASSES_AT_ONE_INSTANT else
                       f"{int(st.window_steps)} steps covered {st.t - st.window_t:.3g} s")
                what = self._last_event or "no event"
                return self._fail("no progress", f"no progress in simulated time at t = "
                                  f"{st.t:.6f} s: {how}, {what}")
            self._emit()

    def _fail(self, reason: str, message: str) -> str:
        self.stop_reason, self.error = reason, message
        self._emit()
        self._final_row()
        return reason

    def _act(self, code: int) -> None:
        """The loop stopped at an event (or a condition at a restart): act on it."""
        st, w, system = self.clock[0], self.work, self.system
        entries = w.hits[:st.hit_count].copy()
        self._last_event = (f"event {system.describe_event(int(entries[0]))}"
                            + (f" located {int(st.passes) + 1} times" if st.passes else ""))
        acted = system.act(float(st.t), w.y, w.f, entries)
        if acted:
            st.known = 0
            st.landed = 0 if code == loop.CONDITION else st.landed
        elif code == loop.EVENT:
            st.declined_t, st.declined_entry = st.t, entries[0]

    def _plan(self, bound: float) -> None:
        """Which control steps the loop may take itself before it is to return to Python:
        those before the next timed action, the next decision of a driver that keeps a
        timetable and ``bound`` (none while a ramp is under way, nor the first); and the
        positions and speeds at which it hands a control time back."""
        st, drv = self.clock[0], self.driver
        watch = self.system.watch[0]
        dt = self.control_step
        limit = bound
        if drv.ramps or self.n_control == 0:
            limit = -math.inf
        auto = drv.autodriver
        if auto is not None and auto.timetable is not None and auto.enabled:
            limit = min(limit, auto.next_time)
        if self.replay is not None:
            limit = min(limit, self.replay.next_time)
        front, above, below = self.scenario.route.length, math.inf, -math.inf
        if self.scenario.stop_position is not None:
            front = min(front, self.scenario.stop_position)
        for a, done in zip(drv.actions, drv.done, strict=True):
            if done:
                continue
            if a.time is not None:
                limit = min(limit, a.time)
            if a.position is not None:
                front = min(front, a.position)
            if a.speed_above is not None:
                above = min(above, a.speed_above)
            if a.speed_below is not None:
                below = max(below, a.speed_below)
        watch.front_limit, watch.above, watch.below = front, above, below
        # the control times before the limit (with the run's margin: within 1e-9 s is at it)
        last = math.ceil((limit - 1e-9) / dt) - 1 if math.isfinite(limit) else -1
        st.control_last = max(last, -1) if limit > -math.inf else -1

    def _control_step(self, t: float) -> None:
        """The control step at ``t``, in Python: the built-in driver and the driver
        program, every plugin's control step, their inputs placed; a restart where they
        changed."""
        st, y, system = self.clock[0], self.work.y, self.system
        system.form(y)
        tr = self.train
        front = float(y[system.lay.sx] + tr.half_length[0])
        rear = float(y[system.lay.sx + tr.count - 1] - tr.half_length[-1])
        lead = float(y[system.lay.sv])
        acted = self.driver.drive(t, front, rear, lead)
        if self.replay is not None:  # (before the program: its actions have the last word)
            acted = self.replay.apply_due(t) or acted
        acted = self.driver.apply_due(t, front, lead) or acted
        system.step_plugins(t, self.control_step, y)
        system.air_before(t, y)
        system.air.take_applications()  # (the watch's table: room for the next ones)
        changed = system.place(y)
        changed = system.air_after(t, self.control_step, y) or changed
        if changed or acted or self.n_control == 0:
            st.known = 0
        self.n_control += 1
        st.control_next = self.n_control
        self._emit()

    def _stop_condition(self, t: float) -> str | None:
        sc, system, tr = self.scenario, self.system, self.train
        stop = sc.config["stop"]
        y = self.work.y
        x0 = float(y[system.lay.sx])
        front = x0 + tr.half_length[0]
        top = system.top_speed(y)
        watch = system.watch[0]
        if top > stop["standstill_speed"]:
            watch.moved = 1.0
        self.moved = watch.moved != 0.0
        if t >= self.max_time - 1e-9:
            return "max_time"
        if stop["max_distance"] > 0 and abs(x0 - self.x0) >= stop["max_distance"]:
            return "max_distance"
        if sc.stop_position is not None and front >= sc.stop_position:
            return "at_position"
        if front >= sc.route.length:
            return "end_of_route"
        if stop["standstill"] and self.moved and top <= stop["standstill_speed"] \
                and not self._pulling_up():
            return "standstill"
        return None

    def _pulling_up(self) -> bool:
        """Whether the built-in driver, driving to a stop point, has stopped short of it (it
        moves on to the point: the train's standing is not the end of the drive)."""
        auto = self.driver.autodriver
        return (isinstance(auto, AutoDriver) and auto.enabled and auto.stop_at is not None
                and not auto.stopped)

    # ---------------------------------------------------------------- outputs
    def _columns(self) -> list[str]:
        out = self.scenario.config["output"]
        cols = ["time_s", "position_m", "speed_mps", "accel_mps2", "traction_force_N",
                "speed_limit_mps", "front_m", "rear_m"]
        cols += [f"v{i}_{s}" for i in out["vehicles"] for s in out["vehicle_signals"]]
        cols += [f"c{j}_{s}" for j in out["couplings"] for s in out["coupling_signals"]]
        return cols

    def _rows_of(self, raw: np.ndarray, states: np.ndarray | None,
                 rates: np.ndarray | None = None) -> np.ndarray:
        """The time series' rows from the loop's (:data:`~rrscore.engine.multibody.ROW`
        values each): the speed limit at the front put in, and the recorded vehicles' and
        couplings' signals (from the states there and the plugins' records as they are)."""
        n = raw.shape[0]
        rows = np.empty((n, len(self.columns)))
        rows[:, :5] = raw[:, :5]
        rows[:, 5] = self.scenario.route.speed_limits_at(raw[:, 5])
        rows[:, 6:8] = raw[:, 5:7]
        if self._signals_rows:
            for r in range(n):
                f = None if rates is None else rates[r]
                self.system.form(states[r], f)
                rows[r, 8:] = signal_values(self, float(raw[r, 0]), states[r], f)
        return rows

    def _deliver_rows(self) -> None:
        """Hand the rows the loop recorded to ``on_rows`` (or ``on_sample`` one by one)."""
        st, w = self.clock[0], self.work
        count = int(st.samples)
        st.samples = 0
        if not count or (self.on_sample is None and self.on_rows is None):
            return
        raw = w.rows[:count].copy()
        states = w.states[:count].copy() if w.states.shape[0] else None
        rows = self._rows_of(raw, states, w.rates[:count] if w.states.shape[0] else None)
        forces = raw[:, mb.ROW:]
        self._deliver(rows, states, forces)

    def _deliver(self, rows: np.ndarray, states: np.ndarray | None,
                 forces: np.ndarray) -> None:
        self.sample_forces = forces
        full = None if states is None else (lambda: self._filled(states))
        if self.on_rows is not None:
            self.on_rows(rows[:, 0], rows, full or self._no_states)
            return
        formed = full() if full is not None else None
        for r in range(len(rows)):
            self.on_sample(float(rows[r, 0]), None if formed is None else formed[r],
                           rows[r].tolist())

    @staticmethod
    def _no_states() -> np.ndarray:
        raise RuntimeError("this run keeps no states of its samples (Run(states=True))")

    def _filled(self, states: np.ndarray) -> np.ndarray:
        out = np.array(states)
        for r in range(out.shape[0]):
            self.system.form(out[r])
        return out

    def keep_sample_forces(self, keep: bool) -> None:
        """Whether the rows the loop samples carry every coupling's force (handed on as
        :attr:`sample_forces`; a rigid train works them out for the purpose): by default
        they do. Set before the run starts."""
        rows = self.work.rows
        width = mb.ROW + (self.system.lay.nc if keep else 0)
        if rows.shape[1] != width:
            self.work = self.work._replace(rows=np.zeros((rows.shape[0], width)))

    def _final_row(self) -> None:
        """The state the run stands at as a last row of the time series, where it is not a
        sample time already recorded."""
        if self.on_sample is None and self.on_rows is None:
            return
        st = self.clock[0]
        t = float(st.t)
        ts = st.sample_next * self.sample_interval
        if abs(ts - t) <= 1e-9 or t > ts - self.sample_interval + 1e-9:
            system = self.system
            y = system.full_state(self.work.y)
            f = np.empty(self.system.size)
            system.derivative(t, y, f)
            raw = np.empty((1, mb.ROW + system.lay.nc))
            system.sample_row(t, y, f, raw[0])
            st.sample_next = math.floor(t / self.sample_interval) + 1
            states = y[None, :].copy()
            self._deliver(self._rows_of(raw, states), states, raw[:, mb.ROW:])

    def sample_final(self) -> None:
        """Record the state the run stands at as a last row, unless it is recorded already
        (for a drive cut short by an error or an interruption)."""
        self._final_row()

    def stop(self, reason: str) -> None:
        """End the run where it stands (a driver quitting the cab), with ``reason`` as its
        stop reason; the state there becomes the time series' last row."""
        if self.stop_reason is None:
            self.stop_reason = reason
            self._final_row()

    def _emit(self) -> None:
        log = self.system.log
        if self.on_event is not None:
            for event in log[self._emitted:]:
                self.on_event(event)
        self._emitted = len(log)

    def _energy(self, y: np.ndarray) -> dict[str, Any]:
        """The energy account: train totals, the balance, and each vehicle's figures."""
        system = self.system
        totals = {f: float(y[sl].sum()) for f, sl in system.energy_slices.items()}
        totals["coupler"] = float(y[system.coupler_work].sum())
        kinetic = system.kinetic(y)
        change = float(kinetic.sum() - self.kinetic0.sum())
        train = {f"{k}_J": v for k, v in totals.items()}
        train |= {"kinetic_change_J": change, "potential_change_J": -totals["gravity"],
                  "balance_error_J": balance(totals, change)}
        per_vehicle = {f"{f}_J": y[sl].tolist() for f, sl in system.energy_slices.items()}
        per_vehicle["kinetic_change_J"] = (kinetic - self.kinetic0).tolist()
        return {"energy": train, "energy_per_vehicle": per_vehicle,
                "energy_per_coupling_J": y[system.coupler_work].tolist()}

    def summary(self, wall: float) -> dict[str, Any]:
        """The figures of the run so far, for ``summary.json`` (``wall``: seconds taken)."""
        st, system, tr = self.clock[0], self.system, self.train
        y = self.y
        mon = system.sys.monitor
        jt = int(mon.tension.argmax()) if mon.tension.size else -1
        jc = int(mon.compression.argmax()) if mon.compression.size else -1
        kinds = [e.kind for e in system.log]
        work = y[system.coupler_work]
        couplings = [{"coupling": j, "max_tension_N": float(mon.tension[j]),
                      "max_tension_time_s": float(mon.tension_t[j]),
                      "max_tension_position_m": _num(mon.tension_x[j]),
                      "max_compression_N": float(mon.compression[j]),
                      "max_compression_time_s": float(mon.compression_t[j]),
                      "max_compression_position_m": _num(mon.compression_x[j]),
                      "energy_absorbed_J": float(work[j])} for j in range(mon.tension.size)]
        points = [{"point": name, "position_m": float(mon.points[k]),
                   "time_s": float(mon.passed_t[k]), "speed_mps": float(mon.passed_v[k])}
                  for k, name in enumerate(system.point_names) if np.isfinite(mon.passed_t[k])]
        t = float(st.t)
        out = {
            "scenario": self.scenario.config["name"],
            "sim_time_s": t,
            "distance_m": float(y[system.lay.sx] - self.x0),
            "max_speed_mps": max(float(mon.top[0]), abs(float(self.work.y[system.lay.sv]))),
            "final_speed_mps": float(y[system.lay.sv]),
            "max_coupler_tension_N": float(mon.tension[jt]) if jt >= 0 else 0.0,
            "max_coupler_tension_coupling": jt,
            "max_coupler_tension_time_s": float(mon.tension_t[jt]) if jt >= 0 else 0.0,
            "max_coupler_compression_N": float(mon.compression[jc]) if jc >= 0 else 0.0,
            "max_coupler_compression_coupling": jc,
            "max_coupler_compression_time_s": float(mon.compression_t[jc]) if jc >= 0 else 0.0,
            "wall_time_s": wall,
            "real_time_factor": t / wall if wall > 0 else math.inf,
            "compile_time_s": compile_seconds() - self._compile0,
            "steps": int(st.steps),
            "rejected_steps": int(st.rejected),
            "rhs_evaluations": int(st.rhs_count),
            "events": self._event_counts(),
            "solver": self.scenario.config["solver"]["method"],
            "vehicles": tr.count,
            "train_mass_kg": tr.total_mass,
            "slip_events": kinds.count("slip"),
            "slide_events": kinds.count("slide"),
            "coupler_breaks": kinds.count("coupler break"),
            "couplings_made": kinds.count("coupled"),
            "draft_gear_energy_J": float(work.sum()),
            "stop_reason": self.stop_reason or "running",
            "couplings": couplings,
            "points": points,
            **self._energy(y),
        }
        air = system.air
        front = float(y[system.lay.sx] + tr.half_length[0])
        out["brake_applications"] = air.report(t, front, float(y[system.lay.sv]))
        out["braking_energy_J"] = braking_energy(air.run.works, out["energy"]["brake_J"])
        if air.on:
            out["lowest_aux_reservoir"] = air.lowest_aux()
        out["speed_limit_exceedances"] = exceedances(system.limits, t, front)
        seen, largest = exceedance_totals(system.limits)
        out["speed_limit_exceeded"] = {"count": seen, "max_excess_mps": largest,
                                       "max_excess_kmh": largest * KMH_PER_MS}
        auto = self.driver.autodriver
        if isinstance(auto, TraceDriver):
            out.update(auto.report())
        if auto is not None and auto.timetable is not None:
            passages = {p["point"]: p for p in points}
            out["timetable"] = auto.timetable.report(passages)
        figures, failed = vehicle_figures(system, y, t)
        if figures:
            out["vehicle_figures"] = figures
        out["provenance"] = provenance(self.scenario)
        warning = balance_warning(out["energy"])
        out["warnings"] = [*self.scenario.warnings, *([warning] if warning else []), *failed]
        if self.error is not None:
            out["error"] = self.error
        return out

    def _event_counts(self) -> dict[str, int]:
        kinds = [e.kind for e in self.system.log]
        return {"standstill": self.system.standstills, "wheel stops": kinds.count("wheel locked"),
                "slip": kinds.count("slip") + kinds.count("slide"),
                "re-adhesion": kinds.count("re-adhesion"),
                "slack edge": int(self.clock[0].kinks),
                "coupler break": kinds.count("coupler break"),
                "contact": kinds.count("coupled") + kinds.count("impact")}


def braking_energy(works: np.ndarray, friction: float) -> dict[str, Any]:
    """The energy the brakes took, J, from the air brake's account (``works``: the air
    brake's cylinders, the dynamic brakes, the cylinders the independent brake held) and
    the energy account's friction brakes (``friction``: every shoe and ``q_r``); by kind,
    the four parts summing to all the braking."""
    air, dynamic, independent = float(works[0]), float(works[1]), float(works[2])
    return {"air_brake": air, "dynamic_brake": dynamic, "other_friction": friction - air,
            "by_kind": {"train_air_brake": air - independent,
                        "independent_brake": independent, "dynamic_brake": dynamic,
                        "other_friction": friction - air}}


def _num(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


def check_fixed_step(tableau: Any, step: float, system: TrainSystem, file: str | None) -> None:
    """A :class:`~rrscore.model.errors.ConfigError` naming ``solver.step`` where a step of
    ``tableau`` (a fixed-step method) that long is unstable for the train's couplings
    (:mod:`rrscore.engine.stability`): its answer would be wrong, silently."""
    rate, where = fastest_mode(system)
    radius = tableau.stability_radius()
    if step * rate > radius:
        raise ConfigError(file, "scenario.solver.step", (
            f"found {step:g} s, but {tableau.name} is unstable on this train beyond "
            f"{radius / rate:.3g} s (its fastest mode, about {rate:.4g} 1/s: {where}); "
            "expected a step of at most that, or an adaptive method (rk45)"))


def copy_run(run: Run) -> Run:
    """A deep copy of ``run`` (for tests: two runs from one state)."""
    return copy.deepcopy(run)
