"""The powertrains' outputs beyond the summary's ``vehicle_figures``: fuel and energy per
route section, and a plot of fuel and charge (``powertrain.png``).

Both are made, when a drive ends, from the time series' cumulative powertrain columns
(:data:`CUMULATIVE`: ``v0_fuel_used_kg``, ``v1_state_of_charge``, ...), so a scenario
gets them by recording those signals (``output.vehicle_signals``). Per section
(``powertrain_sections`` in the summary): each route element the train's front ran in,
with the change of each such column while it was there. Each interval between two
samples is counted in the element holding the front at its midpoint, so a boundary is
placed to within one ``output.sample_interval`` (exact where a sample falls on it).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from rrscore import hookimpl
from rrscore.run.files import save_figure
from rrscore.run.plotting import distinct_colours, pyplot

#: The powertrains' cumulative signals (states of the plugins), and how they are drawn.
CUMULATIVE = {"fuel_used_kg": ("fuel used (kg)", 1.0),
              "state_of_charge": ("state of charge (%)", 100.0),
              "rail_energy_J": ("traction energy at the rail (kWh)", 1 / 3.6e6),
              "regenerated_J": ("regenerated at the rail (kWh)", 1 / 3.6e6)}
_COLUMN = re.compile(r"v\d+_(" + "|".join(CUMULATIVE) + r")$")


def powertrain_columns(series: dict[str, np.ndarray]) -> list[str]:
    """The series' columns that are powertrain accumulations (``v3_fuel_used_kg``), in the
    series' order; those of vehicles without the signal (all NaN) left out."""
    return [c for c in series if _COLUMN.match(c) and np.isfinite(series[c]).any()]


def section_figures(series: dict[str, np.ndarray], starts: np.ndarray,
                    lengths: np.ndarray) -> list[dict[str, Any]]:
    """Per route element (``starts``, ``lengths``, m) the front ran in: ``element``,
    ``start_m``, ``end_m``, ``time_s`` (time the front spent there) and the change of
    each powertrain column over that time (see the module's docstring)."""
    columns = powertrain_columns(series)
    t = np.asarray(series["time_s"], dtype=float)
    if not columns or t.size < 2:
        return []
    front = np.asarray(series.get("front_m", series["position_m"]), dtype=float)
    middle = 0.5 * (front[1:] + front[:-1])
    element = np.clip(np.searchsorted(starts, middle, side="right") - 1, 0, starts.size - 1)
    out = []
    for k in np.unique(element):
        inside = element == k
        row: dict[str, Any] = {"element": int(k), "start_m": float(starts[k]),
                               "end_m": float(starts[k] + lengths[k]),
                               "time_s": float(np.diff(t)[inside].sum())}
        for c in columns:
            row[c] = float(np.diff(np.asarray(series[c], dtype=float))[inside].sum())
        out.append(row)
    return out


def powertrain_plot(series: dict[str, np.ndarray], path: str | Path, km: np.ndarray,
                    title: str = "") -> None:
    """Each powertrain column against route ``km`` (the front's), a panel per kind."""
    columns = powertrain_columns(series)
    kinds = [k for k in CUMULATIVE if any(c.endswith("_" + k) for c in columns)]
    plt = pyplot()
    fig, axes = plt.subplots(len(kinds), 1, figsize=(9, 2.6 * len(kinds) + 0.8), dpi=110,
                             sharex=True, squeeze=False)
    for ax, kind in zip(axes[:, 0], kinds, strict=True):
        label, scale = CUMULATIVE[kind]
        mine = [c for c in columns if c.endswith("_" + kind)]
        for c, colour in zip(mine, distinct_colours(len(mine)), strict=True):
            ax.plot(km, np.asarray(series[c]) * scale, color=colour,
                    label=f"vehicle {c[1:c.index('_')]}")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, frameon=False)
    axes[0, 0].set_title(title)
    axes[-1, 0].set_xlabel("route km (train front)")
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)


@hookimpl
def rrs_drive_end(drive, result) -> None:
    """``powertrain_sections`` in the summary and ``powertrain.png``, where the drive
    recorded powertrain signals (a yard drive has no route elements: nothing)."""
    route = getattr(drive.scenario, "route", None)
    series = getattr(result, "series", None)  # (a yard's result has none)
    if route is None or not isinstance(series, dict) or "time_s" not in series \
            or not powertrain_columns(series):
        return
    sections = section_figures(series, route.starts, route.lengths)
    if sections:
        result.summary["powertrain_sections"] = sections
    config = drive.scenario.config
    if drive.out_dir is not None and config["output"]["plots"] and len(series["time_s"]) > 1:
        front = np.asarray(series.get("front_m", series["position_m"]), dtype=float)
        powertrain_plot(series, drive.out_dir / "powertrain.png", route.route_km(front),
                        config["name"])
