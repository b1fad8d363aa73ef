"""A run: one execution of a scenario, owning every piece of state that changes.

The :class:`~rrscore.scenario.Scenario` is the description and never changes.
The :class:`Run` built from it owns the train's vehicle-model objects, the
state vector, every discrete mode (rolling or slipping axles, coupled or
uncoupled couplings, the direction friction acts in, which driver actions are
done), the solver and the monitors. :meth:`Run.snapshot` copies all of it and
:meth:`Run.restore` puts it back, so a run can be branched ("what if the
driver brakes here?") and repeated exactly.

Each control step: check the stop conditions, apply the driver program, call
every vehicle model's ``step`` once (one call per vehicle type), gather their
``Q_a``/``Q_r``, sample the outputs due at this instant, then let the
integrator advance to the next control time, locating events on the way.
Samples between control times come from the solver's dense output.
"""

from __future__ import annotations

import copy
import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .autodriver import D_ON, AutoDriver
from .brakereport import BrakeApplications
from .compiled import compile_seconds
from .controlsteps import W_MOVED, W_SAMPLE_K
from .driver import DriverProgram
from .dynamics import TrainDynamics
from .errors import (
    ConfigError,
    PluginError,
    RrsError,
    plugin_call,
    plugin_failure,
    take_interruption,
)
from .events import Event
from .integrator import Integrator, Segment
from .plugincheck import step_problems
from .recorder import CouplingMonitor
from .reductions import all_finite, extremes, max_abs
from .scenario import Scenario

if TYPE_CHECKING:
    from .steploop import LoopSamples, Steps

#: Everything a run changes as it goes; :meth:`Run.snapshot` copies these.
_STATE = ("train", "dyn", "solver", "integrator", "driver", "monitor", "n_control",
          "next_control", "k_sample", "max_speed", "moved", "stop_reason", "error",
          "_emitted", "passages", "brakes")

#: Control steps the compiled loop takes in one advance at most (between samples and
#: actions it takes all of them; without samples, a pause for Python now and then).
MAX_AHEAD = 100_000

Sampler = Callable[[float, np.ndarray, list[float]], None]
RowsSampler = Callable[[np.ndarray, np.ndarray, Callable[[], np.ndarray]], None]
Listener = Callable[[Event], None]


@dataclass(frozen=True)
class Snapshot:
    """A copy of a run's state at one instant (see :meth:`Run.snapshot`)."""

    t: float
    parts: dict[str, Any]


class Run:
    """One run of a scenario. :class:`rrscore.Drive` wraps it with outputs; use a Run
    directly to step a drive from Python, branch it or repeat part of it.

    :param on_sample: called with ``(t, y, row)`` for each row of the time series:
        the state vector and the values in the order of :attr:`columns`.
    :param on_event: called with each :class:`~rrscore.events.Event` soon after it
        happens.
    :param on_rows: if given (with ``on_sample``), called instead of ``on_sample`` with
        the rows the compiled loop recorded in one call, all together, as ``(t, rows,
        states)``: their times, the rows (one each) and a function that forms their
        states (one row each; valid until the run goes on). A row at a time costs a
        few microseconds in Python, as much as a second of a long drive in the loop.
    """

    def __init__(self, scenario: Scenario, on_sample: Sampler | None = None,
                 on_event: Listener | None = None,
                 on_rows: RowsSampler | None = None) -> None:
        self._compile0 = compile_seconds()  # numba's compile time so far, in this process
        cfg = scenario.config
        if cfg["dynamics"] == "events":
            raise ConfigError(scenario.file, "scenario.dynamics",
                              "found 'events', expected 'multibody' or 'rigid' for a Run (it "
                              "steps the continuous core); an event-driven scenario runs with "
                              "rrs drive or rrscore.drive, or step "
                              "YardRun(yard_from_scenario(scenario)) yourself")
        self.scenario = scenario
        self.on_sample = on_sample
        self.on_event = on_event
        self.on_rows = on_rows
        self.train = tr = scenario.build_train()
        sol, env = cfg["solver"], cfg["environment"]
        self.dyn = dyn = TrainDynamics(tr, scenario.route, env["wind"], env["air_density"],
                                       sol["position_tol"], sol["atol"],
                                       rigid=cfg["dynamics"] == "rigid")
        start = cfg["start"]
        if dyn.airbrake is not None:
            dyn.airbrake.start = start["brakes"]
        speed = start["speed"] if start["speeds"] is None else np.array(start["speeds"])
        gaps = None if start["gaps"] is None else np.array(start["gaps"])
        # Scenario positions are the train's front; the state holds vehicle centres.
        y0 = dyn.initial_state(scenario.start_position - tr.half_length[0], speed,
                               start["slack"], gaps)
        solver_cls = scenario.registry.solvers[sol["method"]]
        options: dict[str, Any] = {"step": sol["step"], "rtol": sol["rtol"] * dyn.rtol_mask(),
                                   "atol": dyn.atol(), "max_step": sol["max_step"]}
        accepts = inspect.signature(solver_cls).parameters
        if "reference" in accepts:  # error measured relative to the train's mean motion
            options["reference"] = dyn.reference
        if getattr(solver_cls, "uses_jacobian", False):  # methods that form the Jacobian
            options["jac_sparsity"] = dyn.jac_sparsity()
        with plugin_call(f"solver {sol['method']!r}"):
            self.solver = solver_cls(dyn.rhs, 0.0, y0, **options)
        self.integrator = Integrator(self.solver, dyn, on_segment=self._segment,
                                     compiled=sol["compiled"], on_steps=self._steps,
                                     on_samples=self._loop_samples)
        auto = cfg["autodriver"]
        self.driver = DriverProgram(scenario.actions, tr, dyn,
                                    None if auto["mode"] == "off"
                                    else AutoDriver(auto, tr, scenario.route))
        steps = [sol["control_step"]] + [
            b.model.control_step for b in tr.batches if b.model.control_step
        ]
        self.control_step = min(steps)
        self.sample_interval = cfg["output"]["sample_interval"]
        self.max_time = cfg["stop"]["max_time"]
        self.x0 = float(y0[dyn.sx][0])
        self.monitor = CouplingMonitor(tr.count - 1)
        #: The air brake's applications, for the summary (None without an air brake).
        self.brakes = (BrakeApplications(dyn, cfg["stop"]["standstill_speed"])
                       if dyn.airbrake is not None else None)
        self.max_speed = abs(float(y0[dyn.sv][0]))
        self.moved = False
        self.passages: dict[str, dict[str, Any]] = {}  # named points the front has passed
        self.kinetic0 = dyn.energy.kinetic(y0)
        self.n_control = 0  # control times are n * control_step: no drift from summing
        self.next_control = 0.0
        self.k_sample = 0  # sample times are k * sample_interval
        self.stop_reason: str | None = None
        self.error: str | None = None
        self._emitted = 0
        #: Whether the compiled loop may take control steps itself where every vehicle
        #: type gives a ``step_kernel`` (:mod:`rrscore.controlsteps`); False: every
        #: control step and every sample in Python, the reference (the results are the
        #: same to the bit).
        self.ahead = True
        self._touched = True  # models changed in Python since the loop last gathered them
        self._handed_at = -1  # the control step the loop last handed back
        self._ahead_from = 0.0  # where the loop last went ahead from
        self.columns = self._columns()
        self._signals = dyn.signals()
        out = cfg["output"]
        # a row needs the loads (per-vehicle or per-coupling signals, the air brake's),
        # else only the state, the lead's acceleration and the drive force
        self._row_loads = bool(out["vehicles"] or out["couplings"]) or dyn.airbrake is not None
        loop = self.integrator.loop
        #: Whether the compiled loop records the samples in the steps and at the control
        #: times it takes (it then goes on past them): where a row needs no loads, and a
        #: control step's samples fit in its buffer
        #: (:meth:`StepLoop.can_sample <rrscore.steploop.StepLoop.can_sample>`).
        self.samples_in_loop = (on_sample is not None and not self._row_loads
                                and (loop is None or loop.can_sample(self.sample_interval,
                                                                     self.control_step)))
        if loop is not None:
            loop.sample_clock = self._sample_clock

    # ------------------------------------------------------------------ state
    @property
    def t(self) -> float:
        """Simulated time, s."""
        return self.solver.t

    @property
    def y(self) -> np.ndarray:
        """The state vector (a copy); see ``run.dyn.layout`` for its blocks."""
        return self.solver.y.copy()

    def state(self, name: str) -> np.ndarray:
        """One block of the state vector by name (``"body.v"``, ``"wheel.omega"``,
        ``"simple_loco.main_reservoir"``, or the air brake's ``"brake.pipe"``,
        ``"brake.cylinder"``, ...), a copy."""
        ab = self.dyn.airbrake
        if ab is not None and name in ab.layout:
            return ab.state_at(self.t)[ab.layout[name]].copy()
        return self.solver.y[self.dyn.layout[name]].copy()

    def snapshot(self) -> Snapshot:
        """A copy of everything this run has changed so far, to :meth:`restore` later."""
        return Snapshot(self.t, copy.deepcopy({k: getattr(self, k) for k in _STATE},
                                              self._shared()))

    def restore(self, snapshot: Snapshot) -> None:
        """Go back to a :meth:`snapshot` of this run (it can be restored again later).
        Samples and events after it are produced again as the run goes on."""
        for k, v in copy.deepcopy(snapshot.parts, self._shared()).items():
            setattr(self, k, v)
        self._signals = self.dyn.signals()
        self._touched, self._handed_at = True, -1

    def _shared(self) -> dict[int, Any]:
        # What a copy shares with the original: the run itself (its callbacks are bound
        # to it), the scenario and what hangs off it; all of them immutable or external.
        sc = self.scenario
        return {id(self): self, id(sc): sc, id(sc.route): sc.route,
                id(sc.registry): sc.registry}

    # -------------------------------------------------------------------- loop
    def advance(self, t_end: float | None = None) -> str | None:
        """Run until a stop condition holds (returns its name, also kept in
        :attr:`stop_reason`) or, if given, until simulated time ``t_end`` rounded up to a
        control time (returns None).

        A solver that fails ends the run with ``stop_reason`` "solver failed" and the
        solver's message in :attr:`error`; plugin errors propagate as
        :class:`~rrscore.errors.PluginError` with the run's state kept as it was.
        """
        if self.stop_reason is not None:
            return self.stop_reason
        self._touched = True  # the models may have been changed from outside since
        if t_end is not None:
            # pause only at a control time, where integration stops anyway, so a run
            # paused and resumed is the same to the bit as one that ran straight through
            # (a rigid train taken as one body: its motion; the energy account, which it
            # forms from each call of its loop, to rounding)
            t_end = math.ceil(t_end / self.control_step - 1e-9) * self.control_step
        s, dyn, tr = self.solver, self.dyn, self.train
        while True:
            t, y = s.t, s.y
            reason = self._stop_condition(t, y)
            if reason is not None:
                self.stop_reason = reason
                self._sample(t, y, final=True)
                return reason
            if t_end is not None and t >= t_end - 1e-12:
                return None
            ahead = None
            if t >= self.next_control - 1e-9 and self._handed_at != self.n_control:
                ahead = self._go_ahead(t_end)  # this control step the loop's too
            if ahead is None and t >= self.next_control - 1e-9:
                acted = self.driver.drive(t, y)
                acted = self.driver.apply_due(t, float(y[dyn.sx][0] + tr.half_length[0]),
                                              float(y[dyn.sv][0])) or acted
                changed = self._step_models(t, y)
                if dyn.airbrake is not None and dyn.airbrake.message is not None:
                    self.stop_reason, self.error = "solver failed", dyn.airbrake.message
                    self._sample(t, y, final=True)
                    return self.stop_reason
                if changed or acted or self.n_control == 0:
                    self.integrator.restart(t, y)  # inputs jumped: a new start
                self._emit()
                self._sample(s.t, s.y)
                self.n_control += 1
                self.next_control = self.n_control * self.control_step
            bound = min(self.next_control, self.max_time)
            if t_end is not None:
                bound = min(bound, t_end)
            if ahead is None:
                ahead = self._go_ahead(t_end)
            try:
                message = self.integrator.advance(bound if ahead is None else ahead)
            except BaseException:
                if ahead is not None:  # the models get what the kernels wrote, as far
                    self._end_ahead(completed=False)  # as they got
                raise
            if ahead is not None:
                self._end_ahead(completed=message is None)
            interruption = take_interruption()
            if interruption is not None:  # a signal whose exception got lost on its way
                raise interruption
            self._emit()
            if message is not None:
                stalled = self.integrator.stalled is not None
                self.stop_reason = "no progress" if stalled else "solver failed"
                self.error = message
                self._sample(s.t, s.y, final=True)
                return self.stop_reason

    def _sample_clock(self) -> tuple[int, float, float] | None:
        """For the compiled loop, where it records the samples (:attr:`samples_in_loop`,
        and while it may take control steps: :attr:`ahead`): the next sample's index, the
        interval, the control step; else None."""
        if not (self.samples_in_loop and self.ahead):
            return None
        return self.k_sample, self.sample_interval, self.control_step

    def _go_ahead(self, t_end: float | None) -> float | None:
        """Let the compiled loop take the control steps itself (:mod:`rrscore.controlsteps`)
        from the next one (this one, at a control time) up to the next timed action,
        decision of the built-in driver it cannot take or end, and the next sample time
        unless it records the samples itself (:attr:`samples_in_loop`), where it can: the
        end of the coming advance then, else None. Its stop conditions and the driver's
        actions due at a position or speed it checks itself, at every control time, and
        hands that control time back where one may be due."""
        loop = self.integrator.loop
        if not self.ahead or loop is None or loop.control is None or self.n_control == 0:
            return None  # (the first control step is Python's: it checks the plugins)
        dc, first = self.control_step, self.n_control
        # a sample reads the signals of the control step before it (or at its time); the
        # loop records those at its control times itself where it can
        sample = (math.inf if self.on_sample is None or self.samples_in_loop
                  else self.k_sample * self.sample_interval)
        if first * dc > sample + 1e-12:
            return None  # the next sample comes before the next control time
        if first * dc > sample - 1e-9 and (first + 1) * dc > sample + 1e-12 \
                and self.solver.t >= first * dc - 1e-9:
            return None  # a call for this control step alone (a sample follows it at
            # once): Python's costs no more
        drv, tr, sc = self.driver, self.train, self.scenario
        if drv.ramps or not loop.applies():
            return None
        if any(b.model.any_key_down() for b in tr.batches):
            return None  # the kernels stand for step() only where no key is held
        # the control times the loop may take: before these, with the run's margins
        limit = self.max_time - 1e-9
        if t_end is not None:
            limit = min(limit, t_end - 1e-12)
        front, above, below = sc.route.length, math.inf, -math.inf
        if sc.stop_position is not None:
            front = min(front, sc.stop_position)
        auto = drv.autodriver
        # the built-in driver's decisions: handed to the loop where it can take them,
        # else the loop stops before the next one, which is Python's
        loop_decides = loop.control.drive(auto)
        if auto is not None and auto.enabled and not loop_decides:
            limit = min(limit, auto.next_time - 1e-9)
        for a, done in zip(drv.actions, drv.done, strict=True):
            if done:
                continue
            if a.time is not None:
                limit = min(limit, a.time - 1e-9)
            if a.position is not None:
                front = min(front, a.position)
            if a.speed_above is not None:
                above = min(above, a.speed_above)
            if a.speed_below is not None:
                below = max(below, a.speed_below)
        # the control times before the limit, and up to the next sample: one at its time
        # (where the run samples after the control step, not from the steps before it:
        # within 1e-9 s, and not more than 1e-12 s after the sample) is the last the
        # loop takes, else the last before it
        last = first + min(math.ceil((min(limit, sample) - first * dc) / dc), MAX_AHEAD)
        while last >= first and not (last * dc < limit and last * dc <= sample + 1e-12):
            last -= 1  # as the run computes the times
        if last < first:
            return None
        at_sample = last * dc > sample - 1e-9
        stop = sc.config["stop"]
        # (the samples' entries the loop sets at each call: StepLoop.sample_clock)
        loop.control.watch[:W_SAMPLE_K] = (front, self.x0, stop["max_distance"],
                                           stop["standstill_speed"], float(stop["standstill"]),
                                           float(self.moved), above, below, tr.half_length[0],
                                           dc)
        if not loop.go_ahead(first, last, gather=self._touched):
            return None
        self._touched = False
        self._ahead_from = self.solver.t
        end = last * dc if at_sample else min((last + 1) * dc, self.max_time)
        return end if t_end is None else min(end, t_end)

    def _end_ahead(self, completed: bool) -> None:
        """After an advance the loop went ahead in: the control steps it took counted, the
        models given what their kernels wrote, the train's having moved taken over; where
        the advance ended on a control step of the loop's (a sample is due there), what
        the run does after its own: the restart, the sample."""
        loop, s = self.integrator.loop, self.solver
        taken, restart = loop.end_ahead()
        auto = self.driver.autodriver
        if auto is not None and loop.control.driver_state[D_ON]:  # its decisions there
            auto.take_loop_state(loop.control.driver_state)
        self.n_control += taken
        self.next_control = self.n_control * self.control_step
        self.moved = self.moved or bool(loop.control.watch[W_MOVED])
        if loop.handed or not (taken or s.t > self._ahead_from):
            # the run takes that control step itself (handed back, or, should the loop
            # ever go nowhere, so that the drive goes on)
            self._handed_at = self.n_control
        if completed and taken and abs((self.n_control - 1) * self.control_step - s.t) <= 1e-9:
            if restart:
                self.integrator.restart(s.t, s.y)
            self._emit()
            self._sample(s.t, s.y)

    def _step_models(self, t: float, y: np.ndarray) -> bool:
        dyn = self.dyn
        self._touched = True  # the models changed in Python: the loop gathers them again
        x, v, omega = y[dyn.sx], y[dyn.sv], y[dyn.somega]
        dyn.vehicle_states.publish(y)
        for b, veh, axles, sign, _ in dyn.placed:
            m = b.model
            m.x = x[veh].copy()
            m.v = v[veh] * sign
            m.omega = omega[axles].reshape(b.axles.shape) * sign[:, None]
            try:  # as plugin_call, without building the message on every control step
                m.step(t, self.control_step)
            except Exception as exc:
                if isinstance(exc, RrsError):
                    raise
                raise plugin_failure(b.describe("step"), exc, t) from exc
            problems = step_problems(m, first=self.n_control == 0)
            if problems:
                raise PluginError(f"{b.describe('step')}: " + "; ".join(problems)
                                  + f", at t = {t:.3f} s")
            if not (all_finite(m.Q_a) and all_finite(m.Q_r)):
                raise PluginError(f"{b.describe('step')} set a non-finite Q_a or Q_r, "
                                  f"at t = {t:.3f} s")
        drawn = False
        if dyn.airbrake is not None:
            dyn.airbrake.step(t, y)
            self.brakes.control(t, y)
            # the brake's air runs on its own integration, a control step ahead of the train
            drawn = dyn.airbrake.advance(t, (self.n_control + 1) * self.control_step, y)
        return dyn.set_inputs() or drawn

    def _stop_condition(self, t: float, y: np.ndarray) -> str | None:
        sc, dyn, tr = self.scenario, self.dyn, self.train
        stop = sc.config["stop"]
        x = y[dyn.sx]
        front = x[0] + tr.half_length[0]
        top_speed = max_abs(y[dyn.sv])
        self.moved = self.moved or top_speed > stop["standstill_speed"]
        if t >= self.max_time - 1e-9:
            return "max_time"
        if stop["max_distance"] > 0 and abs(x[0] - self.x0) >= stop["max_distance"]:
            return "max_distance"
        if sc.stop_position is not None and front >= sc.stop_position:
            return "at_position"
        if front >= sc.route.length:
            return "end_of_route"
        if stop["standstill"] and self.moved and top_speed <= stop["standstill_speed"]:
            return "standstill"
        return None

    # ---------------------------------------------------------------- outputs
    def _segment(self, seg: Segment) -> None:
        """A committed stretch of the solution: monitors, then the samples inside it."""
        dyn = self.dyn
        forces = None
        if self.train.count > 1:
            x = seg.y1[dyn.sx]
            forces = (seg.coupler_forces if seg.coupler_forces is not None
                      else dyn.coupler_forces(seg.y1))
            self.monitor.update(seg.t1, x[:-1] - self.train.half_length[:-1], forces)
        if self.brakes is not None:
            self.brakes.segment(seg, forces)
        self.max_speed = max(self.max_speed, abs(float(seg.y1[dyn.sv][0])))
        self._passages(seg)
        if self.on_sample is None:
            return
        while True:
            ts = self.k_sample * self.sample_interval
            if ts >= seg.t1 - 1e-12:
                return
            y = seg(ts)
            self._deliver(ts, y, self.row(ts, y))

    def _steps(self, steps: Steps) -> None:
        """Steps of the compiled loop, all at once: what :meth:`_segment` does for each
        of them, in a few array operations; a step becomes a segment only where a sample
        or a named point falls in it."""
        tr = self.train
        if tr.count > 1:
            self.monitor.update_many(steps.t[1:], steps.coupling_x(tr.half_length),
                                     steps.coupler_forces)
        if self.brakes is not None:
            self.brakes.steps(steps)
        self.max_speed = max(self.max_speed, max_abs(steps.lead_v[1:]))
        points = self.scenario.route.points
        if len(self.passages) < len(points):
            fronts = steps.lead_x + tr.half_length[0]
            lo, hi = extremes(fronts)
            for name, p in points.items():
                if name in self.passages or not lo < p <= hi:
                    continue
                hit = np.flatnonzero((fronts[:-1] < p) & (p <= fronts[1:]))
                if hit.size:
                    self._passage(name, p, steps.segment(int(hit[0])))
        if self.on_sample is None:
            return
        # sample times due in step j: those before its end (less 1e-12), not before
        ends = steps.t[1:] - 1e-12
        loop = self.integrator.loop
        if loop is not None and loop.ahead and self.k_sample * self.sample_interval < ends[-1]:
            # a sample falls after the last control step the loop took (never before): the
            # models' signals as it left them
            loop.control.scatter()
        seg, at = None, -1
        while True:
            ts = self.k_sample * self.sample_interval
            if ts >= ends[-1]:
                return
            j = int(np.searchsorted(ends, ts, side="right"))
            if j != at:
                seg, at = steps.segment(j), j
            y = np.array(seg(ts))  # (a step's ends are rows of the loop's buffer)
            self._deliver(ts, y, self.row(ts, y))

    def _loop_samples(self, samples: LoopSamples) -> None:
        """The samples the compiled loop recorded in its steps and at its control times:
        the rows :meth:`row` gives there, built from the states and what the loop took
        with them."""
        tr = self.train
        fronts = samples.lead_x + tr.half_length[0]
        rows = np.column_stack((samples.t, samples.lead_x, samples.lead_v, samples.accel,
                                samples.traction, self.scenario.route.speed_limits_at(fronts),
                                fronts, samples.rear_x - tr.half_length[-1]))
        if self.on_rows is not None:  # counted first, as _deliver counts
            self.k_sample += len(samples)
            self.on_rows(samples.t, rows, samples.states)
            return
        y = samples.states()
        for r, row in enumerate(rows.tolist()):
            self._deliver(row[0], y[r], row)

    def _front(self, y: np.ndarray) -> float:
        return float(y[self.dyn.sx][0] + self.train.half_length[0])

    def _passages(self, seg: Segment) -> None:
        """Record the time and speed at which the train's front first passes each named
        point inside ``seg``."""
        f0, f1 = self._front(seg.y0), self._front(seg.y1)
        for name, p in self.scenario.route.points.items():
            if name not in self.passages and f0 < p <= f1:
                self._passage(name, p, seg)

    def _passage(self, name: str, p: float, seg: Segment) -> None:
        """The front passing point ``name`` at ``p`` inside ``seg``, located on the dense
        output to a nanosecond (the lead's position and speed: :meth:`Segment.lead
        <rrscore.integrator.Segment.lead>`)."""
        sx, sv, half = self.dyn.sx.start, self.dyn.sv.start, self.train.half_length[0]
        lo, hi = seg.t0, seg.t1
        while hi - lo > 1e-9 * max(1.0, hi):  # bisection: the front moves forward here
            mid = 0.5 * (lo + hi)
            if seg.lead(mid, sx, sv)[0] + half < p:
                lo = mid
            else:
                hi = mid
        self.passages[name] = {"point": name, "position_m": p, "time_s": hi,
                               "speed_mps": seg.lead(hi, sx, sv)[1]}

    def _sample(self, t: float, y: np.ndarray, final: bool = False) -> None:
        """Samples due at ``t`` itself (after a control update); at the end, the final
        state as a last row if it is not a sample time. (The hooks get a copy of ``y``:
        the solver's state may be a view of the compiled loop's buffer, which its next
        call overwrites.)"""
        if self.on_sample is None:
            return
        ts = self.k_sample * self.sample_interval
        if abs(ts - t) <= 1e-9:
            self._deliver(ts, y.copy(), self.row(ts, y))
        elif final and t > ts - self.sample_interval + 1e-9:
            row = self.row(t, y)
            self.k_sample = math.floor(t / self.sample_interval)
            self._deliver(t, y.copy(), row)

    def _deliver(self, t: float, y: np.ndarray, row: list[float]) -> None:
        """Hand the next row to ``on_sample``, counted first: if a hook raises on it, the
        drive's final row (:meth:`sample_final`) is not this one again."""
        self.k_sample += 1
        self.on_sample(t, y, row)

    def stop(self, reason: str) -> None:
        """End the run where it stands (a driver quitting the cab), with ``reason`` as its
        stop reason; the state there becomes the time series' last row."""
        if self.stop_reason is None:
            self.stop_reason = reason
            self.sample_final()

    def sample_final(self) -> None:
        """Record the state the run stands at as a last row, unless it is recorded already
        (for a drive cut short by an error or an interruption)."""
        self._sample(self.solver.t, self.solver.y, final=True)

    def _emit(self) -> None:
        log = self.dyn.log
        if self.on_event is not None:
            for event in log[self._emitted:]:
                self.on_event(event)
        self._emitted = len(log)

    def _columns(self) -> list[str]:
        out = self.scenario.config["output"]
        cols = ["time_s", "position_m", "speed_mps", "accel_mps2", "traction_force_N",
                "speed_limit_mps", "front_m", "rear_m"]
        cols += [f"v{i}_{s}" for i in out["vehicles"] for s in out["vehicle_signals"]]
        cols += [f"c{j}_{s}" for j in out["couplings"] for s in out["coupling_signals"]]
        return cols

    def row(self, t: float, y: np.ndarray) -> list[float]:
        """The time-series row at ``(t, y)``, in the order of :attr:`columns`."""
        dyn, tr = self.dyn, self.train
        out = self.scenario.config["output"]
        if dyn.airbrake is not None:
            dyn.airbrake.sample_time = t
        if self._row_loads:
            loads = dyn.loads(t, y)
            accel = loads.accel[0]
        else:  # only the acceleration: from the right-hand side (compiled where it applies)
            accel = self.solver.fun(t, y)[dyn.sv.start]
        x, v = y[dyn.sx], y[dyn.sv]
        row = [t, x[0], v[0], accel, dyn.traction_total(),
               self.scenario.route.speed_limit(x[0] + tr.half_length[0]),
               x[0] + tr.half_length[0], x[-1] - tr.half_length[-1]]
        if out["vehicles"]:
            # one column of values per signal over the recorded vehicles, gathered per
            # signal and per batch (not per vehicle), laid out vehicle by vehicle
            chosen = np.asarray(out["vehicles"], dtype=int)
            table = np.full((chosen.size, len(out["vehicle_signals"])), math.nan)
            for k, s in enumerate(out["vehicle_signals"]):
                if s in self._signals:
                    table[:, k] = self._signals[s][2](y, loads)[chosen]
                    continue
                for b, batch in enumerate(tr.batches):
                    mine = tr.batch_of[chosen] == b
                    if s in batch.model.out and mine.any():
                        table[mine, k] = batch.model.out[s][tr.row_of[chosen[mine]]]
            row.extend(table.ravel().tolist())
        if out["couplings"]:
            chosen = np.asarray(out["couplings"], dtype=int)
            table = np.empty((chosen.size, len(out["coupling_signals"])))
            for k, s in enumerate(out["coupling_signals"]):
                values = (y[self.dyn.energy.coupler] if s == "energy_J" else
                          self._signals[f"coupling:{s}"][2](y, loads))
                table[:, k] = values[chosen]
            row.extend(table.ravel().tolist())
        return row

    def _energy(self, y: np.ndarray) -> dict[str, Any]:
        """The energy account: train totals, the balance, and each vehicle's figures."""
        e = self.dyn.energy
        tot = e.totals(y)
        kinetic = e.kinetic(y)
        change = tot["kinetic"] - float(self.kinetic0.sum())
        sources = (tot["drive"] - tot["brake"] - tot["resistance"] + tot["gravity"]
                   + tot["air"] - tot["slip"] - tot["coupler"])
        train = {f"{k}_J": v for k, v in tot.items() if k != "kinetic"}
        train |= {"kinetic_change_J": change, "potential_change_J": -tot["gravity"],
                  "balance_error_J": sources - change}
        per_vehicle = {f"{f}_J": y[sl].tolist() for f, sl in e.slices.items()}
        per_vehicle["kinetic_change_J"] = (kinetic - self.kinetic0).tolist()
        return {"energy": train, "energy_per_vehicle": per_vehicle,
                "energy_per_coupling_J": y[e.coupler].tolist()}

    def summary(self, wall: float) -> dict[str, Any]:
        """The figures of the run so far, for ``summary.json`` (``wall``: seconds taken)."""
        s, dyn, tr = self.solver, self.dyn, self.train
        y = s.y
        mon = self.monitor
        jt = int(mon.tension.argmax()) if mon.tension.size else -1
        jc = int(mon.compression.argmax()) if mon.compression.size else -1
        kinds = [e.kind for e in dyn.log]
        out = {
            "scenario": self.scenario.config["name"],
            "sim_time_s": s.t,
            "distance_m": float(y[dyn.sx][0] - self.x0),
            "max_speed_mps": self.max_speed,
            "final_speed_mps": float(y[dyn.sv][0]),
            "max_coupler_tension_N": float(mon.tension[jt]) if jt >= 0 else 0.0,
            "max_coupler_tension_coupling": jt,
            "max_coupler_tension_time_s": float(mon.tension_time[jt]) if jt >= 0 else 0.0,
            "max_coupler_compression_N": float(mon.compression[jc]) if jc >= 0 else 0.0,
            "max_coupler_compression_coupling": jc,
            "max_coupler_compression_time_s":
                float(mon.compression_time[jc]) if jc >= 0 else 0.0,
            "wall_time_s": wall,
            "real_time_factor": s.t / wall if wall > 0 else math.inf,
            # numba compiling for this run (at its build and its first steps: a first run
            # on an install); 0 when everything came from the cache
            "compile_time_s": compile_seconds() - self._compile0,
            "steps": s.nsteps,
            "rejected_steps": s.nrejected,
            "rhs_evaluations": s.nfev,
            "events": dict(self.integrator.event_counts),
            "solver": self.scenario.config["solver"]["method"],
            "vehicles": tr.count,
            "train_mass_kg": tr.total_mass,
            "slip_events": kinds.count("slip"),
            "slide_events": kinds.count("slide"),
            "coupler_breaks": kinds.count("coupler break"),
            "couplings_made": kinds.count("coupled"),
            "draft_gear_energy_J": float(y[self.dyn.energy.coupler].sum()),
            "stop_reason": self.stop_reason or "running",
            "couplings": mon.summary(y[self.dyn.energy.coupler]),
            "points": [self.passages[n] for n in self.scenario.route.points
                       if n in self.passages],
            **self._energy(y),
        }
        if self.brakes is not None:
            out["brake_applications"] = self.brakes.report(s.t, y)
            out["braking_energy_J"] = {
                "air_brake": self.brakes.air_work, "dynamic_brake": self.brakes.dynamic_work,
                "other_friction": out["energy"]["brake_J"] - self.brakes.air_work}
        auto = self.driver.autodriver
        if auto is not None and auto.timetable is not None:
            out["timetable"] = auto.timetable.report(self.passages)
        if self.error is not None:
            out["error"] = self.error
        return out
