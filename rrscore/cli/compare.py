"""``rrs plot RUN_DIR...``: several drives' outputs on shared axes, to see what a change did.

Reads each run directory's ``timeseries.csv`` and ``coupler_forces.csv`` (as ``rrs
drive`` writes them; their ``.parquet`` files after ``--format parquet``) and draws one
panel per signal group, every run in its own colour, against time or distance:

* ``speed``: speed and the speed limit, km/h;
* ``traction``: the train's traction force, and any recorded vehicle brake-force
  columns (``v<i>_..brake.._N``), kN;
* ``coupler``: the in-train force envelope over time, the largest tension and the
  largest compression along the train at each sample, kN;
* ``coupler_map``: a time-by-coupling map of in-train forces, one panel per run, all on
  one colour scale (one colour bar: the same colour is the same force in every run).

Legends stand beside the panels, never over the data.

The drive's own ``speed.png`` is drawn by :mod:`rrscore.run.outputs.plots` as before.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..model.errors import RrsError
from ..run.files import save_figure
from ..run.plotting import distinct_colours, pyplot
from ..run.tables import read_parquet

SIGNALS = ("speed", "traction", "coupler", "coupler_map")


def read_csv(path: Path) -> dict[str, np.ndarray]:
    """A CSV written by a drive, as ``{column: array}``."""
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    if not rows:
        raise RrsError(f"{path}: empty file, expected a header and rows")
    data = np.array(rows[1:], dtype=float).reshape(len(rows) - 1, len(rows[0]))
    return {name: data[:, k] for k, name in enumerate(rows[0])}


class RunData:
    """One run directory's time series and coupler forces."""

    def __init__(self, directory: str | Path, label: str) -> None:
        self.dir = Path(directory)
        self.label = label
        series = self._table("timeseries")
        if series is None:
            raise RrsError(f"{self.dir}: no timeseries.csv; expected the output directory of "
                           "`rrs drive` or `rrs cab`")
        self.series = series
        self.forces = self._table("coupler_forces")

    def _table(self, name: str) -> dict[str, np.ndarray] | None:
        """The run's table ``name``: its CSV, else its Parquet file; None without either."""
        if (self.dir / f"{name}.csv").is_file():
            return read_csv(self.dir / f"{name}.csv")
        if (self.dir / f"{name}.parquet").is_file():
            return read_parquet(self.dir / f"{name}.parquet")
        return None

    def axis(self, x: str, t: np.ndarray) -> np.ndarray:
        """Time (s), distance from the start (km) or route km (``"km"``: the train's front
        on the route's kilometre posts) at times ``t``."""
        s = self.series
        if x == "time":
            return t
        if x == "km":
            front = s.get("front_m", s["position_m"])
            start, sign = self.chainage()
            return (start + sign * np.interp(t, s["time_s"], front)) / 1000.0
        return (np.interp(t, s["time_s"], s["position_m"]) - s["position_m"][0]) / 1000.0

    def chainage(self) -> tuple[float, float]:
        """The route's kilometre post at its position 0 (m) and which way the posts run
        (1, or -1 where they decrease), from the run's ``scenario.resolved.toml`` (0 and 1
        where it has none)."""
        import tomllib

        resolved = self.dir / "scenario.resolved.toml"
        if not resolved.is_file():
            return 0.0, 1.0
        try:
            with open(resolved, "rb") as fh:
                route = tomllib.load(fh).get("scenario", {}).get("route", {})
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise RrsError(f"{resolved}: cannot be read ({exc}), expected the file "
                           "`rrs drive` wrote") from exc
        if not isinstance(route, dict):
            return 0.0, 1.0
        value = route.get("start_chainage", 0.0)
        start = float(value) if isinstance(value, int | float) else 0.0
        return start, -1.0 if route.get("chainage_direction") == "decreasing" else 1.0

    def coupler_matrix(self) -> np.ndarray:
        """In-train forces, shape ``(samples, couplings)``, N (tension +)."""
        if self.forces is None:
            raise RrsError(f"{self.dir}: no coupler_forces.csv (a single vehicle, or "
                           "output.coupler_forces = false)")
        cols = sorted((k for k in self.forces if k.startswith("c")),
                      key=lambda k: int(k[1:].split("_")[0]))
        return np.column_stack([self.forces[c] for c in cols])


def _labels(dirs: Sequence[str | Path]) -> list[str]:
    names = [Path(d).name or str(d) for d in dirs]
    return names if len(set(names)) == len(names) else [str(d) for d in dirs]


def compare_figure(run_dirs: Sequence[str | Path], signals: Sequence[str] = SIGNALS[:3],
                   x: str = "time"):
    """The comparison figure (a matplotlib ``Figure``) of ``run_dirs`` for ``signals``,
    against ``x`` = ``"time"``, ``"distance"`` (from the start) or ``"km"`` (route km)."""
    plt = pyplot()
    unknown = [s for s in signals if s not in SIGNALS]
    if unknown or not signals:
        raise RrsError(f"--signals: found {', '.join(unknown) or 'nothing'}, expected some of "
                       + ", ".join(SIGNALS))
    if x not in ("time", "distance", "km"):
        raise RrsError(f"--x: found {x!r}, expected 'time', 'distance' or 'km'")
    runs = [RunData(d, label) for d, label in zip(run_dirs, _labels(run_dirs), strict=True)]
    maps = "coupler_map" in signals
    panels = [s for s in signals if s != "coupler_map"]
    n = len(panels) + (len(runs) if maps else 0)
    # Constrained layout leaves room for the legends beside the panels and the maps'
    # shared colour bar.
    fig, axes = plt.subplots(n, 1, figsize=(10, 2.8 * n + 0.6), dpi=100, squeeze=False,
                             sharex=not maps, layout="constrained")
    axes = list(axes[:, 0])
    colours = distinct_colours(len(runs))
    xlabel = {"time": "time (s)", "distance": "distance (km)",
              "km": "route km (train front)"}[x]
    for ax, panel in zip(axes, panels, strict=False):
        for run, colour in zip(runs, colours, strict=True):
            _draw(ax, panel, run, x, colour)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
        ax.set_xlabel(xlabel)
    if maps:
        map_axes = axes[len(panels):]
        lim = coupler_map_limit(runs)
        for ax, run in zip(map_axes, runs, strict=True):
            f = run.coupler_matrix() / 1e3
            xs = run.axis(x, run.forces["time_s"])
            image = ax.pcolormesh(xs, np.arange(f.shape[1]), f.T, cmap="RdBu_r", vmin=-lim,
                                  vmax=lim, shading="nearest")
            ax.set_ylabel("coupling")
            ax.yaxis.get_major_locator().set_params(integer=True)
            ax.set_xlabel(xlabel)
            ax.set_title(f"{run.label}: in-train forces", fontsize=9)
        # One colour bar for every map: one scale for the runs compared.
        fig.colorbar(image, ax=map_axes, label="force (kN), tension +")
    if x == "km" and all(run.chainage()[1] < 0 for run in runs):
        for ax in axes:  # kilometre posts falling as the trains run: still left to right
            if not ax.xaxis_inverted():  # (shared axes turn together)
                ax.invert_xaxis()
    return fig


def coupler_map_limit(runs: Sequence[RunData]) -> float:
    """The colour scale's bound (kN) shared by every run's coupler map: the largest force,
    tension or compression, of any run (the scale runs from minus it to it)."""
    return max([float(np.abs(r.coupler_matrix()).max()) / 1e3 for r in runs] + [1e-9])


def _draw(ax, panel: str, run: RunData, x: str, colour: str) -> None:
    s = run.series
    xs = run.axis(x, s["time_s"])
    if panel == "speed":
        ax.plot(xs, s["speed_mps"] * 3.6, color=colour, label=f"{run.label}: speed")
        limit = np.where(np.isfinite(s["speed_limit_mps"]), s["speed_limit_mps"], np.nan)
        ax.plot(xs, limit * 3.6, color=colour, ls="--", lw=0.8, label=f"{run.label}: limit")
        ax.set_ylabel("speed (km/h)")
    elif panel == "traction":
        ax.plot(xs, s["traction_force_N"] / 1e3, color=colour, label=f"{run.label}: traction")
        for col in (c for c in s if "brake" in c and c.endswith("_N")):
            ax.plot(xs, s[col] / 1e3, color=colour, ls=":", label=f"{run.label}: {col}")
        ax.set_ylabel("force (kN)")
    else:  # coupler envelope along the train, over time
        f = run.coupler_matrix() / 1e3
        xf = run.axis(x, run.forces["time_s"])
        ax.plot(xf, f.max(axis=1), color=colour, label=f"{run.label}: max tension")
        ax.plot(xf, f.min(axis=1), color=colour, ls="--", label=f"{run.label}: max compression")
        ax.axhline(0.0, color="black", lw=0.6)
        ax.set_ylabel("in-train force (kN)")


def plot_runs(run_dirs: Sequence[str | Path], out: str | Path,
              signals: Sequence[str] = SIGNALS[:3], x: str = "time") -> Path:
    """Draw :func:`compare_figure` into the image file ``out`` and return its path."""
    plt = pyplot()
    fig = compare_figure(run_dirs, signals, x)
    out = Path(out)
    save_figure(fig, out)
    plt.close(fig)
    return out
