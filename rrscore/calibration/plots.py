"""Plots of a calibration: measured against the calibrated model."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..run.files import save_figure
from ..run.plotting import distinct_colours, pyplot
from .estimation import Calibration
from .model import KinematicModel
from .sensors import SensorLayout, naming

#: Runs whose hits and model trajectories a figure shows: more are a blur that takes
#: minutes to draw (the velocity panel shows every run's value).
MAX_PLOTTED_RUNS = 100


def plotted_runs(cal: Calibration) -> list[str]:
    """The runs :func:`plot_calibration` draws and names in its legend, in order: those
    with sensor hits among the first :data:`MAX_PLOTTED_RUNS`."""
    return [run for run, hits in list(cal.hits.items())[:MAX_PLOTTED_RUNS] if hits]


def plot_calibration(cal: Calibration, model: KinematicModel, layout: SensorLayout,
                     path: str | Path) -> Path:
    """Write a figure: position against time of every run (sensor hits) with the model's
    trajectory, the model's position error at each hit, and the velocity of each level
    (per run and the mean with its spread). The legend names every run drawn, in its own
    colour, beside the axes."""
    plt = pyplot()
    fig, (ax_x, ax_r, ax_v) = plt.subplots(3, 1, figsize=(10, 10),
                                           gridspec_kw={"height_ratios": [3, 1.5, 2]})
    runs = list(cal.hits.items())
    drawn = plotted_runs(cal)
    colour = dict(zip(drawn, distinct_colours(len(drawn)), strict=True))
    for run, hits in runs[:MAX_PLOTTED_RUNS]:
        commands = cal.commands.get(run, [])
        if not hits:
            continue
        t = np.array([h.time for h in hits])
        x = np.array([layout.position(h.sensor) for h in hits])
        ax_x.plot(t, x, ".", ms=4, color=colour[run], label=run)
        start = commands[0].position if commands else None
        if commands and start is None and commands[0].sensor is not None:
            start = layout.position(commands[0].sensor)
        if start is None:
            continue
        grid = np.linspace(commands[0].time, t.max(), 400)
        ax_x.plot(grid, model.trajectory(commands, start, grid), "-", lw=0.8,
                  color=colour[run])
        ax_r.plot(t, x - model.trajectory(commands, start, t), ".", ms=4, color=colour[run])
    ax_x.set_xlabel("time, s")
    ax_x.set_ylabel("front position, m")
    shown = (f" (the first {MAX_PLOTTED_RUNS} of {len(runs)} runs)"
             if len(runs) > MAX_PLOTTED_RUNS else "")
    ax_x.set_title(f"sensor hits (dots) and the calibrated model (lines){shown}")
    if drawn:  # beside the axes, never over the data; columns of 25 runs
        ax_x.legend(title="run", fontsize="x-small", markerscale=2.5, loc="upper left",
                    bbox_to_anchor=(1.01, 1.0), frameon=False, ncol=1 + (len(drawn) - 1) // 25)
    ax_r.axhline(0.0, color="0.5", lw=0.8)
    ax_r.set_xlabel("time, s")
    ax_r.set_ylabel("sensor - model, m")
    for level, est in cal.velocity.items():
        ax_v.plot([level] * est.n, [v for _, v in est.values], ".", color="0.6", ms=4)
        ax_v.errorbar([level], [est.mean], yerr=[est.std], fmt="o", color="C0", capsize=4)
    ax_v.set_xlabel("speed level")
    ax_v.set_ylabel("steady velocity, m/s")
    ax_v.set_title("velocity per level: each run (grey) and mean +- std")
    fig.tight_layout()
    with naming(path):
        save_figure(fig, path, dpi=100)
    plt.close(fig)
    return Path(path)
