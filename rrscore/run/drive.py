"""The headless test drive: a :class:`~rrscore.run.Run` of a scenario, with its outputs.

The drive calls the lifecycle hooks (:mod:`rrscore.hookspecs`):
``rrs_drive_start`` once, ``rrs_sample`` for every row of the time series and
``rrs_sample_rows`` for every block of rows (the rows one call of the compiled loop
recorded), ``rrs_event`` for every event, and ``rrs_drive_end`` once however the
drive ends. rrscore's own outputs are plugins on these hooks (:mod:`rrscore.outputs`):
``scenario.resolved.toml`` first, ``timeseries.csv`` and ``coupler_forces.csv``
block by block, ``events.csv`` event by event, then the plots and ``summary.json``
at the end, also when the drive is interrupted or something fails. The hooks are
called through :mod:`rrscore.lifecycle`: a plugin that raises is named, and the
others keep writing.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..model.errors import OutputError, RrsError, interruption_behind, writing_outputs
from ..model.events import Event
from .lifecycle import LifecycleHooks
from .recorder import Recorder
from .run import Run
from .scenario import Scenario, check_series_memory
from .tables import Frames, coupler_force_columns, frames, optional

Progress = Callable[[float, float, float], None]
"""Called as ``progress(fraction_done, t, lead_speed)`` as the drive goes on."""


@dataclass
class DriveResult:
    """What a drive returns: the summary, the sampled time series, the events, every
    coupling's force at the samples (``coupler_forces``: None for one vehicle or with
    ``output.coupler_forces = false``) and where files went. :meth:`to_pandas` gives the
    tables as DataFrames."""

    summary: dict[str, Any]
    series: dict[str, np.ndarray]
    out_dir: Path | None = None
    events: list[Event] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    #: Columns ``time_s``, ``c0_force_N``, ... as in ``coupler_forces.csv``.
    coupler_forces: dict[str, np.ndarray] | None = None

    def to_pandas(self) -> Frames:
        """The time series, the events and the coupler forces as pandas DataFrames
        (:class:`~rrscore.run.tables.Frames`: ``.timeseries``, ``.events``,
        ``.coupler_forces``), columns named as in the CSVs, with their units
        (``speed_mps``). Needs pandas (``pip install 'rrscore[analysis]'``)."""
        return frames(self.series, self.events, self.coupler_forces)


class Lifecycle:
    """The run lifecycle every drive goes through, a train's (:class:`Drive`) and a
    yard's (:class:`~rrscore.yard.yarddrive.YardDrive`): the output directory locked
    while it runs; ``rrs_drive_start`` first; an interruption (Ctrl-C, a signal) or an
    error (a plugin, an output writer, the engine) ends the drive where it is, with its
    outputs so far; the end-of-drive outputs (``rrs_drive_end``) under
    :func:`~rrscore.model.errors.writing_outputs`, so that a signal then waits for them;
    then the interruption or error is raised again.

    A subclass sets ``run_`` (the run: its ``t`` and ``stop_reason``) and implements
    :meth:`_advance` and :meth:`_end`. Plugins get the drive object on every hook: its
    ``scenario``, ``out_dir``, ``columns``, ``store`` and ``events``."""

    def __init__(self, scenario: Any, hooks: LifecycleHooks) -> None:
        self.scenario = scenario
        self._hooks = hooks
        self.run_: Any = None
        self.columns: list[str] = []
        self.out_dir: Path | None = None
        #: Per-drive state of plugins on the lifecycle hooks, by plugin name.
        self.store: dict[str, Any] = {}
        self.events: list[Any] = []
        self._lock = None

    def run(self, out: str | Path | None = None, progress: Progress | None = None,
            chunk: float | None = None, wall_limit: float | None = None) -> Any:
        """Run to a stop condition; write outputs to ``out`` if given. ``progress`` is
        called every ``chunk`` seconds of simulated time (a 200th of the run by default),
        and last with fraction 1.0 however the drive ends. With ``wall_limit``, the drive
        stops (``stop_reason`` "wall_limit") after that many seconds of wall-clock time.

        An interruption (Ctrl-C, or a signal raising
        :class:`~rrscore.errors.Interrupted`) or a failing plugin ends the drive with
        the outputs written so far and the summary, then re-raises; a failing solver
        ends it with ``stop_reason`` "solver failed" and the solver's message.
        ``out`` is refused (:class:`~rrscore.errors.OutputError`, before the drive
        starts) if it cannot be written or another running drive is writing there.
        """
        self.out_dir = Path(out) if out is not None else None
        self._prepare()
        self._lock = None
        if self.out_dir is not None:
            self._lock = prepare_output_dir(self.out_dir)
        try:
            return self._run(progress, chunk, wall_limit)
        finally:
            if self._lock is not None:
                release_output_dir(self.out_dir, self._lock)
                self._lock = None

    def _prepare(self) -> None:
        """Before the output directory is taken: what the drive needs to know of it."""

    def _advance(self, progress: Progress | None, chunk: float | None,
                 wall_limit: float | None, wall0: float) -> None:
        """Run the drive on to its end (a stop condition, or ``wall_limit`` seconds of
        wall-clock time from ``wall0``)."""
        raise NotImplementedError

    def _stopped(self, reason: str, exc: BaseException) -> None:
        """The drive was ended by ``exc``: its ``stop_reason`` is ``reason``."""
        self.run_.stop_reason = reason

    def _end(self, error: BaseException | None, progress: Progress | None,
             wall: float) -> Any:
        """The drive's end (``error``: what ended it, if anything): its result, after
        ``rrs_drive_end`` and the end-of-drive outputs."""
        raise NotImplementedError

    def _run(self, progress: Progress | None, chunk: float | None,
             wall_limit: float | None) -> Any:
        error: BaseException | None = None
        wall0 = time.perf_counter()
        try:
            self._hooks.call("rrs_drive_start", self.run_.t, drive=self)
            self._advance(progress, chunk, wall_limit, wall0)
        except KeyboardInterrupt as exc:
            self._stopped("interrupted", exc)
            error = exc
        except SystemError as exc:
            interruption = interruption_behind(exc)
            if interruption is None:
                raise
            self._stopped("interrupted", interruption)
            error = interruption
        except RrsError as exc:
            self._stopped("error", exc)
            error = exc
            exc.during_drive = True  # type: ignore[attr-defined]  # the CLI's exit status
        try:
            with writing_outputs():  # a signal now waits for them (a second cuts them off)
                result = self._end(error, progress, time.perf_counter() - wall0)
        except KeyboardInterrupt as exc:
            error = error or exc
        except RrsError as exc:
            exc.during_drive = True  # type: ignore[attr-defined]  # the CLI's exit status
            error = error or exc
        if error is not None:
            raise error
        return result


class Drive(Lifecycle):
    """A test drive: one :class:`Run` of a scenario and its outputs. Most users call
    :func:`rrscore.drive` instead. ``keep_coupler_forces=False`` leaves every coupling's
    force out of the result (:attr:`DriveResult.coupler_forces` None; files are written
    as the scenario says): callers that read only the summary, such as a sweep's cases,
    save forming and keeping them (about 7 % of a drive sampled every 10 ms)."""

    def __init__(self, scenario: Scenario, keep_coupler_forces: bool = True) -> None:
        super().__init__(scenario, LifecycleHooks(scenario.registry.manager))

        # the samples' states are kept only where a plugin outside rrscore reads them, and
        # rows are handed on one by one where one reads them one by one (rrs_sample)
        def outside(*hooks: str) -> bool:
            return any(not function.__module__.startswith("rrscore.")
                       for function in self._hooks.implementers(*hooks))

        self._rows_read = outside("rrs_sample", "rrs_sample_rows")
        self.run_ = Run(scenario, on_sample=self._on_sample, on_event=self._on_event,
                        on_rows=self._on_rows, states=self._rows_read,
                        each_row=outside("rrs_sample"))
        self.columns = self.run_.columns
        # every coupling's force at the samples, kept for the result where the scenario
        # asks for that table (as for coupler_forces.csv)
        couplings = self.run_.train.count - 1 \
            if keep_coupler_forces and scenario.config["output"]["coupler_forces"] else 0
        # (the rows below are kept, and the forces)
        check_series_memory(scenario, len(self.columns) + couplings)
        self.events: list[Event] = []
        # the states at the rows being handed on (an array, one row each, or the function
        # that forms them: see sample_states), and the row rrs_sample has
        self._states: np.ndarray | Callable[[], np.ndarray] | None = None
        self._row = 0
        self._rows = Recorder(self.columns)
        # (their times are the rows')
        self._forces = Recorder(coupler_force_columns(couplings)[1:]) if couplings else None

    # parts of the run, for tests and scripts
    @property
    def dyn(self):
        """The run's train system (:class:`~rrscore.engine.train.TrainSystem`)."""
        return self.run_.system

    def sample_coupler_forces(self) -> np.ndarray:
        """Every coupling's force at the rows being handed to ``rrs_sample_rows``, one row
        each."""
        return self.run_.sample_forces

    @property
    def train(self):
        """The run's :class:`~rrscore.train.Train`."""
        return self.run_.train

    @property
    def sample_state(self) -> np.ndarray | None:
        """The state vector at the row being handed to ``rrs_sample`` (formed on demand;
        None between the blocks of the compiled loop's rows)."""
        return None if self._states is None else self.sample_states()[self._row]

    def sample_states(self) -> np.ndarray:
        """The state vectors at the rows being handed to ``rrs_sample_rows``, one row
        each (formed at the first call)."""
        if callable(self._states):
            self._states = self._states()
        if self._states is None:
            raise RuntimeError("no rows are being handed on")
        return self._states

    def _on_sample(self, t: float, y: np.ndarray, row: list[float]) -> None:
        """A row sampled in Python: a block of one (see :meth:`_on_rows`)."""
        self._on_rows(np.array([t]), np.array([row], dtype=float), lambda: y[None, :])

    def _on_rows(self, t: np.ndarray, rows: np.ndarray,
                 states: Callable[[], np.ndarray]) -> None:
        """Rows of the time series (those one call of the compiled loop recorded, or one
        sampled in Python): ``rrs_sample`` row by row where a plugin implements it (up to
        a row a plugin failed on, where the run stops), then ``rrs_sample_rows`` with
        them (also the one a plugin failed on: the writers keep it)."""
        self._states = states
        done = len(t)
        error: RrsError | None = None
        try:
            if self._hooks.implemented("rrs_sample"):
                for r in range(len(t)):
                    row = rows[r].tolist()
                    self._rows.record(row)
                    self._row = r
                    try:
                        self._hooks.call("rrs_sample", row[0], drive=self, t=row[0], row=row)
                    except RrsError as exc:
                        error, done = exc, r + 1
                        break
            else:
                self._rows.record_many(rows)
            if self._forces is not None:
                self._forces.record_many(self.sample_coupler_forces()[:done])
            self._row = done - 1
            self._hooks.call("rrs_sample_rows", float(t[done - 1]), drive=self, t=t[:done],
                             rows=rows[:done])
        finally:  # the states are formed from the loop's buffers, which it reuses
            self._states = None
        if error is not None:
            raise error

    def _on_event(self, event: Event) -> None:
        self.events.append(event)
        self._hooks.call("rrs_event", event.t, drive=self, event=event)

    def _prepare(self) -> None:
        if self.out_dir is not None and self.scenario.config["output"]["format"] == "parquet":
            optional("pyarrow.parquet", "output.format = 'parquet'")  # before any file
        # the samples carry every coupling's force where they are kept, written or read
        # by a plugin outside rrscore (sample_coupler_forces)
        self.run_.keep_sample_forces(self._rows_read or self._forces is not None or (
            self.out_dir is not None and self.scenario.config["output"]["coupler_forces"]))

    def _advance(self, progress: Progress | None, chunk: float | None,
                 wall_limit: float | None, wall0: float) -> None:
        run = self.run_
        if progress is None and wall_limit is None:
            run.advance()
            return
        chunk = chunk or max(run.control_step, run.max_time / 200.0)
        if wall_limit is not None:  # look at the clock at least every simulated second
            chunk = min(chunk, max(run.control_step, 1.0))
        while run.advance(run.t + chunk) is None:  # pauses at control times only
            if progress is not None:
                progress(run.t / run.max_time, run.t, float(run.work.y[run.system.lay.sv]))
            if wall_limit is not None and time.perf_counter() - wall0 > wall_limit:
                run.stop_reason = "wall_limit"
                run.sample_final()
                break

    def _stopped(self, reason: str, exc: BaseException) -> None:
        super()._stopped(reason, exc)
        if isinstance(exc, RrsError):
            self.run_.error = str(exc)

    def run(self, out: str | Path | None = None, progress: Progress | None = None,
            chunk: float | None = None, wall_limit: float | None = None) -> DriveResult:
        """See :meth:`Lifecycle.run`: the :class:`DriveResult`."""
        return super().run(out, progress, chunk, wall_limit)

    def _end(self, error: BaseException | None, progress: Progress | None,
             wall: float) -> DriveResult:
        """The drive's end: the progress bar full, the final row of a drive that did not
        reach a stop condition, the result and the end-of-drive outputs."""
        run = self.run_
        if progress is not None:  # the bar ends full however the drive ended
            progress(1.0, run.t, float(run.work.y[run.system.lay.sv]))
        if error is not None:
            try:
                run.sample_final()  # the state where it ended, as the time series' last row
            except (RrsError, OSError):
                pass  # the writer that failed fails again: the summary still follows
        series = self._rows.series()
        forces = None if self._forces is None else \
            {"time_s": series["time_s"], **self._forces.series()}
        result = DriveResult(run.summary(wall), series, self.out_dir, list(self.events),
                             coupler_forces=forces)
        self._hooks.call("rrs_drive_end", run.t, drive=self, result=result)
        return result


#: Vehicle-seconds simulated per wall-clock second, roughly (the ``spring`` benchmark:
#: 100 vehicles at about 37 times real time), for the cost estimates of :func:`cost_warnings`.
VEHICLE_SECONDS_PER_SECOND = 3000.0


def cost_warnings(scenario: Scenario) -> list[str]:
    """Warnings, with estimated cost, for settings that make a drive impossibly long or its
    outputs impossibly large (``stop.max_time``, ``output.sample_interval``,
    ``solver.control_step`` and the train's length)."""
    cfg = scenario.config
    t_max = cfg["stop"]["max_time"]
    dt_out = cfg["output"]["sample_interval"]
    dt_ctl = cfg["solver"]["control_step"]
    n = sum(e["count"] for e in cfg["train"]["vehicles"])
    out = []
    rows = t_max / dt_out
    if rows > 1e6:
        width = 8 + len(cfg["output"]["vehicles"]) * len(cfg["output"]["vehicle_signals"]) \
            + len(cfg["output"]["couplings"]) * len(cfg["output"]["coupling_signals"])
        width += (n - 1) if cfg["output"]["coupler_forces"] else 0
        out.append(f"output.sample_interval = {dt_out:g} s over stop.max_time = {t_max:g} s: "
                   f"about {rows:.3g} rows, {rows * width * 12 / 1e9:.3g} GB of CSV")
    steps = t_max / dt_ctl
    if steps > 1e7:
        out.append(f"solver.control_step = {dt_ctl:g} s over stop.max_time = {t_max:g} s: "
                   f"{steps:.3g} control steps, each calling every vehicle plugin")
    hours = t_max * n / VEHICLE_SECONDS_PER_SECOND / 3600.0
    if hours > 6.0:
        out.append(f"{n} vehicles for stop.max_time = {t_max:g} s: about {hours:.3g} hours of "
                   "wall-clock time at a typical speed (see --wall-limit)")
    return out


LOCK_NAME = ".rrs-drive.lock"


def prepare_output_dir(out: Path):
    """Create ``out``, check it is writable and lock it for this drive; returns the open
    lock file. :class:`OutputError` if it cannot be used or another drive holds it."""
    try:
        if out.exists() and not out.is_dir():
            raise OutputError(f"output directory {out}: exists and is not a directory")
        out.mkdir(parents=True, exist_ok=True)
        fh = open(out / LOCK_NAME, "a+", encoding="utf-8")  # noqa: SIM115
    except OSError as exc:
        raise OutputError(f"output directory {out}: cannot write there: "
                          f"{exc.strerror or exc}") from None
    try:
        import fcntl
    except ImportError:  # no advisory locks (Windows): no protection against a second drive
        return fh
    try:
        # an advisory lock dies with its process: a lock file left by a killed drive
        # is simply taken over
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        fh.seek(0)
        holder = fh.read().strip()
        fh.close()
        raise OutputError(f"output directory {out}: in use by another running drive or sweep"
                          + (f" (pid {holder})" if holder else "")
                          + "; choose another --out or wait for it to end") from None
    try:
        fh.seek(0)
        fh.truncate()
        fh.write(f"{os.getpid()}\n")
        fh.flush()
    except OSError as exc:  # (a full disk)
        release_output_dir(out, fh)
        raise OutputError(f"output directory {out}: cannot write there: "
                          f"{exc.strerror or exc}") from None
    return fh


def release_output_dir(out: Path, fh) -> None:
    """Unlock ``out`` and remove its lock file."""
    try:
        (out / LOCK_NAME).unlink(missing_ok=True)
    except OSError:
        pass
    try:
        fh.close()
    except OSError:  # (its pid not written: closed all the same)
        pass

