"""Driving a yard scenario to its outputs (``rrs drive`` on a file with a ``[yard]``
table).

Outputs, in the output directory:

* ``events.csv``: every event as it happens (couplings, impacts, buffer-stop impacts,
  run-throughs, side collisions, switches thrown or refused, retarder exit speeds,
  moves, fouling at the end), in whole lines as the core's CSVs are;
* ``positions.csv``: each cut every ``sample_interval``: the track and offset of its
  front and of its rear (a cut may span several tracks), the plan coordinates of its
  front and its speed;
* ``summary.json``: how the drive ended and, per cut, the report of
  :meth:`~rrscore.yard.yardrun.YardRun.report`;
* ``plan.png``: the network in plan with every car where the drive ended;
* ``yard.resolved.toml``: the scenario with every default filled in.

A yard drive goes through the run lifecycle of a train's drive
(:class:`~rrscore.run.drive.Lifecycle`): the output directory is locked while it runs;
the lifecycle hooks are called (``rrs_drive_start``; ``rrs_sample`` and
``rrs_sample_rows`` for every row of the cuts' positions, :attr:`YardDrive.columns`;
``rrs_event`` with every :class:`~rrscore.yard.yardevent.YardEvent`; ``rrs_drive_end``
however it ends), by every plugin but the train's own output writers; an interrupted or
failed drive (a plugin, an output writer, the engine) keeps what was written and still
writes the summary and the plan, each whole or absent, and a signal while they are
written waits for them; a drive whose time stands still ends with ``stop_reason`` "no
progress".
"""

from __future__ import annotations

import json
import math
import os
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import tomli_w

from ..model.errors import RrsError
from ..run.drive import Lifecycle, Progress
from ..run.files import save_figure, write_atomically
from ..run.lifecycle import LifecycleHooks, write_failure
from ..run.plotting import distinct_colours, pyplot
from ..run.plugins import DEFAULT_PLUGINS, load_registry
from ..run.recorder import LineFile
from .yard import YardScenario
from .yardevent import YardEvent
from .yardrun import YardRun

EVENT_COLUMNS = ["time_s", "kind", "cut", "vehicle", "other_cut", "other_vehicle", "track",
                 "offset_m", "speed_mps", "value", "detail"]
POSITION_COLUMNS = ["time_s", "cut", "front_track", "front_offset_m", "rear_track",
                    "rear_offset_m", "x_m", "y_m", "speed_mps"]


class YardDriveError(RrsError):
    """A yard drive that could not go on (cars overlapping after a switch was forced)."""

    during_drive = True


@dataclass
class YardResult:
    """What a yard drive produced: its summary and where its outputs are."""

    summary: dict[str, Any]
    out_dir: Path | None
    run: YardRun


def _cell(value: Any) -> Any:
    if isinstance(value, float | np.floating):
        return "" if math.isnan(value) else f"{float(value):.6g}"
    if isinstance(value, int | np.integer):
        return "" if value < 0 else int(value)
    return value


def _event_row(e: YardEvent) -> list[Any]:
    return [f"{float(e.t):.4f}", e.kind, e.cut, _cell(e.vehicle), e.other_cut,
            _cell(e.other_vehicle), e.track, _cell(e.offset), _cell(e.speed), _cell(e.value),
            e.detail]


def _plain(value: Any) -> Any:
    """JSON-ready: numpy numbers as Python numbers (6 decimals, for the summary)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating | float):
        return round(float(value), 6) if math.isfinite(value) else None
    return value


#: The colour of a cut a locomotive moves (the hump engine): no other cut has it.
LOCOMOTIVE_COLOUR = "#000000"


def plan_legend(scenario: Any) -> list[tuple[str, str]]:
    """The legend of ``plan.png``, one (label, colour) per cut in order: every cut, each
    its own colour; a cut a locomotive moves is black and labelled so."""
    engines = {m["cut"] for m in scenario.config["moves"] if m["kind"] == "locomotive"}
    others = iter(distinct_colours(sum(name not in engines for name in scenario.cut_names)))
    return [(f"{name} (locomotive)", LOCOMOTIVE_COLOUR) if name in engines
            else (name, next(others)) for name in scenario.cut_names]


def plot_plan(run: YardRun, path: str | Path, title: str = "") -> None:
    """Draw the network in plan (tracks, switches in their positions, buffer stops,
    named points) and every car where it stands, coloured by cut."""
    plt = pyplot()

    net = run.net
    fig, ax = plt.subplots(figsize=(14, 5.5))
    for tr in net.tracks:
        ax.plot(tr.xy[:, 0], tr.xy[:, 1], color="0.6", lw=1.0, zorder=1)
        mid = tr.coords(0.5 * tr.length)
        ax.annotate(tr.name, mid, textcoords="offset points", xytext=(0, -9), fontsize=6,
                    color="0.35", ha="center")
    for k, s in enumerate(net.switches):
        t, e = s.points
        toe = net.tracks[t].xy[-1 if e else 0]
        leg_t, leg_e = s.legs[run.positions[k]]
        leg = net.tracks[leg_t]
        span = min(s.panel, leg.length)
        ahead = leg.coords(span if leg_e == 0 else leg.length - span)
        ax.plot([toe[0], ahead[0]], [toe[1], ahead[1]], color="tab:red", lw=2.0, zorder=2)
        ax.annotate(s.name, toe, textcoords="offset points", xytext=(-4, 6), fontsize=7,
                    color="tab:red")
    for (t, e) in net.stops:
        p = net.tracks[t].xy[-1 if e else 0]
        ax.plot(p[0], p[1], marker="s", color="k", ms=4, zorder=3)
    for r in net.retarders:
        tr = net.tracks[r["track"]]
        q = tr.coords(np.linspace(r["from"], r["to"], 8))
        ax.plot(q[:, 0], q[:, 1], color="tab:orange", lw=5.0, alpha=0.4, zorder=2)
    for name, (t, o) in net.points.items():
        p = net.tracks[t].coords(o)
        ax.plot(p[0], p[1], marker="|", color="tab:blue", ms=9, zorder=3)
        ax.annotate(name, p, textcoords="offset points", xytext=(1, 5), fontsize=6,
                    color="tab:blue", rotation=60)
    p, q, _ = run.car_ends()
    cut = run.scenario.cars.cut
    for k, (label, colour) in enumerate(plan_legend(run.scenario)):
        for n_, c in enumerate(np.flatnonzero(cut == k)):
            ax.plot([p[c, 0], q[c, 0]], [p[c, 1], q[c, 1]], color=colour, lw=5.0,
                    solid_capstyle="butt", zorder=4, label=label if n_ == 0 else None)
    ax.legend(fontsize=6, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False,
              ncol=1 + len(run.scenario.cut_names) // 30)
    lo = np.min([tr.xy.min(axis=0) for tr in net.tracks], axis=0)
    hi = np.max([tr.xy.max(axis=0) for tr in net.tracks], axis=0)
    span = hi - lo
    stretched = span[0] > 4.0 * max(span[1], 1.0)
    pad = max(span[1] * 0.15, 5.0)
    ax.set_ylim(lo[1] - pad, hi[1] + pad)
    if not stretched:
        ax.set_aspect("equal", adjustable="datalim")
    ax.set_xlabel("x, m")
    ax.set_ylabel("y, m" + (" (stretched)" if stretched else ""))
    ax.set_title((title or run.scenario.config["name"]) + f", t = {run.t:.1f} s")
    fig.tight_layout()
    save_figure(fig, path, dpi=130)
    plt.close(fig)


#: The train's own output writers (timeseries.csv, speed.png, ...), which a yard drive's
#: lifecycle hooks leave out: a yard writes its own outputs.
TRAIN_OUTPUTS = frozenset(m.removeprefix("rrscore.") for m in DEFAULT_PLUGINS
                          if m.startswith("rrscore.run.outputs."))


class YardDrive(Lifecycle):
    """A yard drive: one :class:`YardRun` of a yard scenario and its outputs (see the
    module). Plugins on the lifecycle hooks get it as ``drive``: ``scenario`` (the
    :class:`YardScenario`), ``out_dir``, ``columns`` (of the rows ``rrs_sample`` gets:
    the time, then each cut's front in plan and its speed), ``store``, ``events`` and
    ``run_`` (the :class:`YardRun`)."""

    def __init__(self, scenario: YardScenario) -> None:
        registry = scenario.registry
        if registry is None:  # (a scenario built by hand)
            registry = load_registry(list(scenario.plugin_dirs))
        super().__init__(scenario, LifecycleHooks(registry.manager, TRAIN_OUTPUTS))
        self.run_ = YardRun(scenario)
        self.columns = ["time_s"] + [f"{name}.{column}" for name in scenario.cut_names
                                     for column in ("x_m", "y_m", "speed_mps")]
        self.events: list[YardEvent] = []
        #: The sampled rows' state: none in a yard (the cuts' positions are in the rows).
        self.sample_state = None
        self._message: str | None = None  # why the drive ended early, for the summary
        self._written = 0  # events handed on so far
        self._files: dict[str, LineFile] = {}

    def run(self, out: str | Path | None = None, progress: Progress | None = None,
            chunk: float | None = None, wall_limit: float | None = None) -> YardResult:
        """See :meth:`Lifecycle.run`: the :class:`YardResult`; the positions are sampled
        every ``output.sample_interval`` (``chunk`` is not used)."""
        return super().run(out, progress, chunk, wall_limit)

    def _open(self, name: str, columns: list[str]) -> None:
        """Open one of the yard's CSV files (to nowhere without an output directory)."""
        path = self.out_dir / name if self.out_dir is not None else os.devnull
        with self._writing(name):
            self._files[name] = LineFile(path, columns)

    @contextmanager
    def _writing(self, name: str) -> Iterator[None]:
        """The block that writes output ``name``: an ``OSError`` in it (a full disk) is
        the output writer's failure, naming the file and the simulated time."""
        try:
            yield
        except OSError as exc:
            raise write_failure(exc, self.run_.t, name) from exc

    def _advance(self, progress: Progress | None, chunk: float | None,
                 wall_limit: float | None, wall0: float) -> None:
        run, cfg = self.run_, self.scenario.config
        if self.out_dir is not None:
            with self._writing("yard.resolved.toml"):
                write_atomically(self.out_dir / "yard.resolved.toml",
                                 tomli_w.dumps(self.scenario.resolved()))
        self._open("events.csv", EVENT_COLUMNS)
        self._open("positions.csv", POSITION_COLUMNS)
        max_time = cfg["stop"]["max_time"]
        sample = cfg["output"]["sample_interval"]
        self._hand_on()
        try:
            while run.stop_reason is None:
                t0 = run.t
                run.advance(min(run.t + sample, max_time))
                if run.stop_reason is None and run.t <= t0:
                    # (limits before the run keep the interval above the clock's resolution)
                    run.stop_reason = "no progress"
                    self._message = (f"no progress in simulated time at t = {run.t:.6f} s: "
                                     f"a sample interval of {sample:g} s does not advance it")
                self._hand_on()
                if progress is not None:
                    progress(run.t / max_time, run.t, run.max_speed)
                if wall_limit is not None and time.perf_counter() - wall0 > wall_limit:
                    run.stop_reason = "wall_limit"
        except RuntimeError as exc:  # the engine cannot go on: say so, keep the outputs
            where = f"; outputs so far are in {self.out_dir}" if self.out_dir else ""
            raise YardDriveError(f"{self.scenario.file}: yard drive stopped at t = "
                                 f"{run.t:.2f} s: {exc}{where}") from exc

    def _stopped(self, reason: str, exc: BaseException) -> None:
        super()._stopped(reason, exc)
        if isinstance(exc, RrsError):
            self._message = str(exc)

    def _hand_on(self) -> None:
        """The events since the last call and the cuts' positions now: to the files and
        to the plugins."""
        run = self.run_
        self._hand_on_events()
        _, _, tspeed, _ = run._state()
        ft, fo, rt, ro = run.vehicle_ends()
        tracks = run.net.tracks
        last = np.append(run.first_car[1:], run.n) - 1
        row = [run.t]
        for k, name in enumerate(self.scenario.cut_names):
            c, r = int(run.first_car[k]), int(last[k])  # the cut's front and rear car
            xy = run.net.xy(ft[c:c + 1], fo[c:c + 1])[0]
            with self._writing("positions.csv"):
                self._files["positions.csv"].write(
                    [f"{run.t:.3f}", name, tracks[ft[c]].name, f"{fo[c]:.3f}",
                     tracks[rt[r]].name, f"{ro[r]:.3f}", f"{xy[0]:.3f}", f"{xy[1]:.3f}",
                     f"{abs(tspeed[c]):.4f}"])
            row += [float(xy[0]), float(xy[1]), abs(float(tspeed[c]))]
        if self._hooks.implemented("rrs_sample"):
            self._hooks.call("rrs_sample", run.t, drive=self, t=run.t, row=row)
        if self._hooks.implemented("rrs_sample_rows"):
            self._hooks.call("rrs_sample_rows", run.t, drive=self, t=np.array([run.t]),
                             rows=np.array([row]))

    def _end(self, error: BaseException | None, progress: Progress | None,
             wall: float) -> YardResult:
        """The end: the fouling cars logged, the files closed, ``rrs_drive_end``, the
        summary and the plan; each output is tried, the first failure raised after."""
        run = self.run_
        if progress is not None and not isinstance(error, KeyboardInterrupt):
            progress(1.0, run.t, run.max_speed)  # (an interrupted drive's bar stays)
        for c, fouled in sorted(run.fouling().items()):
            cut, vehicle = run._who(c)
            run.events.append(YardEvent(run.t, "fouling", cut, vehicle,
                                        detail="stands fouling " + ", ".join(fouled)))
        failures: list[RrsError] = []

        def attempt(step: Callable[[], None]) -> None:
            try:
                step()
            except RrsError as exc:
                failures.append(exc)

        if "events.csv" in self._files:
            attempt(self._hand_on_events)
        for name, file in self._files.items():
            attempt(lambda name=name, file=file: self._close(name, file))
        summary = _summary(run, wall, self._message)
        result = YardResult(summary, self.out_dir, run)
        attempt(lambda: self._hooks.call("rrs_drive_end", run.t, drive=self, result=result))
        if self.out_dir is not None:
            out = self.out_dir

            def write_summary() -> None:
                with self._writing("summary.json"):
                    write_atomically(out / "summary.json",
                                     json.dumps(_plain(result.summary), indent=1))

            def write_plan() -> None:
                with self._writing("plan.png"):
                    plot_plan(run, out / "plan.png")

            attempt(write_summary)
            if self.scenario.config["output"]["plot"]:
                attempt(write_plan)
        if failures:
            raise failures[0]
        return result

    def _hand_on_events(self) -> None:
        """The events still to hand on, the fouling ones among them."""
        run = self.run_
        for e in run.events[self._written:]:
            self._written += 1
            self.events.append(e)
            with self._writing("events.csv"):
                self._files["events.csv"].write(_event_row(e))
            self._hooks.call("rrs_event", e.t, drive=self, event=e)

    def _close(self, name: str, file: LineFile) -> None:
        with self._writing(name):
            file.close()


def drive_yard(scenario: YardScenario, out: str | Path | None,
               progress: Callable[[float, float, float], None] | None = None,
               wall_limit: float | None = None) -> YardResult:
    """Run a yard scenario and write its outputs into ``out`` (see the module docstring);
    with ``out`` None, only the result (summary and run) is kept."""
    return YardDrive(scenario).run(out, progress, wall_limit=wall_limit)


def _summary(run: YardRun, wall: float, error: str | None) -> dict[str, Any]:
    counts = Counter(e.kind for e in run.events)
    summary = {
        "scenario": run.scenario.config["name"],
        "kind": "yard",
        "stop_reason": run.stop_reason or "max_time",
        "sim_time_s": run.t,
        "wall_time_s": wall,
        "real_time_factor": run.t / wall if wall > 0 else None,
        "cars": run.n,
        "cuts": len(run.scenario.cut_names),
        "events": dict(sorted(counts.items())),
        "switches": {s.name: ("normal", "reverse")[run.positions[k]]
                     for k, s in enumerate(run.net.switches)},
        "switches_run_through": run.forced,
        "max_speed_mps": run.max_speed,
        "cut_reports": run.report(),
    }
    if error is not None:
        summary["error"] = error
    return summary
