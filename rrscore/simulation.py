"""The headless test drive: a :class:`~rrscore.run.Run` of a scenario, with its outputs.

The drive calls the lifecycle hooks (:mod:`rrscore.hookspecs`):
``rrs_drive_start`` once, ``rrs_sample`` for every row of the time series,
``rrs_event`` for every event, and ``rrs_drive_end`` once however the drive
ends. rrscore's own outputs are plugins on these hooks (:mod:`rrscore.outputs`):
``scenario.resolved.toml`` first, ``timeseries.csv`` and ``coupler_forces.csv``
row by row, ``events.csv`` event by event, then the plots and ``summary.json``
at the end, also when the drive is interrupted or something fails.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .errors import RrsError
from .events import Event
from .recorder import Recorder
from .run import Run
from .scenario import Scenario, load_scenario

Progress = Callable[[float, float, float], None]
"""Called as ``progress(fraction_done, t, lead_speed)`` as the drive goes on."""


@dataclass
class DriveResult:
    """What a drive returns: the summary, the sampled time series, the events and where
    files went."""

    summary: dict[str, Any]
    series: dict[str, np.ndarray]
    out_dir: Path | None = None
    events: list[Event] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


class Drive:
    """A test drive: one :class:`Run` of a scenario and its outputs. Most users call
    :func:`drive` instead."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.run_ = Run(scenario, on_sample=self._on_sample, on_event=self._on_event)
        self.columns = self.run_.columns
        self.out_dir: Path | None = None
        #: Per-drive state of plugins on the lifecycle hooks, by plugin name.
        self.store: dict[str, Any] = {}
        self.events: list[Event] = []
        #: The state vector at the sample being handed to ``rrs_sample``.
        self.sample_state: np.ndarray | None = None
        self._rows = Recorder(self.columns)
        self._hook = scenario.registry.hook

    # parts of the run, for tests and scripts
    @property
    def dyn(self):
        """The run's :class:`~rrscore.dynamics.TrainDynamics`."""
        return self.run_.dyn

    @property
    def solver(self):
        """The run's solver."""
        return self.run_.solver

    @property
    def train(self):
        """The run's :class:`~rrscore.train.Train`."""
        return self.run_.train

    def _on_sample(self, t: float, y: np.ndarray, row: list[float]) -> None:
        self._rows.record(row)
        self.sample_state = y
        self._hook.rrs_sample(drive=self, t=t, row=row)

    def _on_event(self, event: Event) -> None:
        self.events.append(event)
        self._hook.rrs_event(drive=self, event=event)

    def run(self, out: str | Path | None = None, progress: Progress | None = None,
            chunk: float | None = None) -> DriveResult:
        """Run to a stop condition; write outputs to ``out`` if given. ``progress`` is
        called every ``chunk`` seconds of simulated time (a 200th of the run by default).

        An interruption (Ctrl-C) or a failing plugin ends the drive with the
        outputs written so far and the summary, then re-raises; a failing solver
        ends it with ``stop_reason`` "solver failed" and the solver's message.
        """
        self.out_dir = Path(out) if out is not None else None
        if self.out_dir is not None:
            if self.out_dir.exists() and not self.out_dir.is_dir():
                raise RrsError(f"output directory {self.out_dir}: exists and is not a directory")
            self.out_dir.mkdir(parents=True, exist_ok=True)
        run = self.run_
        error: BaseException | None = None
        wall0 = time.perf_counter()
        self._hook.rrs_drive_start(drive=self)
        try:
            if progress is None:
                run.advance()
            else:
                chunk = chunk or max(run.control_step, run.max_time / 200.0)
                while run.advance(run.t + chunk) is None:  # pauses at control times only
                    progress(run.t / run.max_time, run.t, float(run.solver.y[run.dyn.sv][0]))
                progress(1.0, run.t, float(run.solver.y[run.dyn.sv][0]))
        except KeyboardInterrupt as exc:
            run.stop_reason, error = "interrupted", exc
        except RrsError as exc:
            run.stop_reason, error = "error", exc
            run.error = str(exc)
        if error is not None:
            run.sample_final()  # the state where it ended, as the time series' last row
        wall = time.perf_counter() - wall0
        result = DriveResult(run.summary(wall), self._rows.series(), self.out_dir,
                             list(self.events))
        self._hook.rrs_drive_end(drive=self, result=result)
        if error is not None:
            raise error
        return result


def drive(scenario: Scenario | str | Path, out: str | Path | None = None,
          progress: Progress | None = None) -> DriveResult:
    """Run a scenario (a :class:`Scenario` or the path of a scenario file).

    With ``out``, writes ``timeseries.csv``, ``summary.json``, ``speed.png`` and
    ``scenario.resolved.toml`` there. Returns the summary and the sampled series.
    """
    if not isinstance(scenario, Scenario):
        scenario = load_scenario(scenario)
    return Drive(scenario).run(out, progress)
