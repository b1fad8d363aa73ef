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

An interrupted or failed drive keeps what was written and still writes the summary and
the plan. The output directory is locked while the drive runs and the summary is
written atomically, as for a drive of the core (:mod:`rrscore.run.drive`).
"""

from __future__ import annotations

import json
import math
import os
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import tomli_w

from ..model.errors import RrsError
from ..run.drive import prepare_output_dir, release_output_dir
from ..run.files import save_figure, write_atomically
from ..run.recorder import LineFile
from .yard import YardScenario
from .yardrun import YardEvent, YardRun

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


def plot_plan(run: YardRun, path: str | Path, title: str = "") -> None:
    """Draw the network in plan (tracks, switches in their positions, buffer stops,
    named points) and every car where it stands, coloured by cut."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

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
    colours = plt.get_cmap("tab20")
    for k, name in enumerate(run.scenario.cut_names):
        for n_, c in enumerate(np.flatnonzero(cut == k)):
            ax.plot([p[c, 0], q[c, 0]], [p[c, 1], q[c, 1]], color=colours(k % 20), lw=5.0,
                    solid_capstyle="butt", zorder=4, label=name if n_ == 0 else None)
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


def drive_yard(scenario: YardScenario, out: str | Path | None,
               progress: Callable[[float, float, float], None] | None = None,
               wall_limit: float | None = None) -> YardResult:
    """Run a yard scenario and write its outputs into ``out`` (see the module docstring);
    with ``out`` None, only the result (summary and run) is kept."""
    out_dir = Path(out) if out is not None else None
    lock = prepare_output_dir(out_dir) if out_dir is not None else None
    try:
        if out_dir is not None:
            (out_dir / "yard.resolved.toml").write_text(tomli_w.dumps(scenario.resolved()),
                                                        encoding="utf-8")
        return _drive(scenario, out_dir, progress, wall_limit)
    finally:
        if lock is not None:
            release_output_dir(out_dir, lock)


def _drive(scenario: YardScenario, out_dir: Path | None,
           progress: Callable[[float, float, float], None] | None,
           wall_limit: float | None) -> YardResult:
    cfg = scenario.config
    run = YardRun(scenario)
    max_time = cfg["stop"]["max_time"]
    sample = cfg["output"]["sample_interval"]
    wall0 = time.perf_counter()
    written = 0
    error: BaseException | None = None
    # without an output directory the rows go nowhere, by the same writer
    events = LineFile(out_dir / "events.csv" if out_dir else os.devnull, EVENT_COLUMNS)
    positions = LineFile(out_dir / "positions.csv" if out_dir else os.devnull,
                         POSITION_COLUMNS)

    def write_events() -> None:
        nonlocal written
        for e in run.events[written:]:
            events.write(_event_row(e))
        written = len(run.events)

    def sample_positions() -> None:
        _, _, tspeed, _ = run._state()
        ft, fo, rt, ro = run.vehicle_ends()
        tracks = run.net.tracks
        last = np.append(run.first_car[1:], run.n) - 1
        for k, name in enumerate(scenario.cut_names):
            c, r = int(run.first_car[k]), int(last[k])  # the cut's front and rear car
            xy = run.net.xy(ft[c:c + 1], fo[c:c + 1])[0]
            positions.write([f"{run.t:.3f}", name, tracks[ft[c]].name, f"{fo[c]:.3f}",
                             tracks[rt[r]].name, f"{ro[r]:.3f}", f"{xy[0]:.3f}",
                             f"{xy[1]:.3f}", f"{abs(tspeed[c]):.4f}"])

    try:
        write_events()
        sample_positions()
        while run.stop_reason is None:
            run.advance(min(run.t + sample, max_time))
            write_events()
            sample_positions()
            if progress is not None:
                progress(run.t / max_time, run.t, run.max_speed)
            if wall_limit is not None and time.perf_counter() - wall0 > wall_limit:
                run.stop_reason = "wall_limit"
    except KeyboardInterrupt:
        run.stop_reason = "interrupted"
        raise
    except RuntimeError as exc:  # the engine cannot go on: say so, keep the outputs
        run.stop_reason = "error"
        error = exc
    finally:
        wall = time.perf_counter() - wall0
        for c, fouled in sorted(run.fouling().items()):
            cut, vehicle = run._who(c)
            run.events.append(YardEvent(run.t, "fouling", cut, vehicle,
                                        detail="stands fouling " + ", ".join(fouled)))
        write_events()
        events.close()
        positions.close()
        summary = _summary(run, wall, error)
        if out_dir is not None:
            write_atomically(out_dir / "summary.json", json.dumps(_plain(summary), indent=1))
            if cfg["output"]["plot"]:
                plot_plan(run, out_dir / "plan.png")
    if error is not None:
        where = f"; outputs so far are in {out_dir}" if out_dir is not None else ""
        raise YardDriveError(f"{scenario.file}: yard drive stopped at t = {run.t:.2f} s: "
                             f"{error}{where}")
    return YardResult(summary, out_dir, run)


def _summary(run: YardRun, wall: float, error: BaseException | None) -> dict[str, Any]:
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
        summary["error"] = str(error)
    return summary
