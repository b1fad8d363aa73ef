"""The report of a yard drive (``rrs drive`` on a yard file): each cut's speed and plan
position over time (a line per cut, in distinct colours), the cuts' paths in plan, the
events, the summary and the cut reports."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..model.errors import RrsError
from ..run.plotting import distinct_colours
from .common import (
    HEIGHT,
    WIDTH,
    Table,
    bokeh,
    events_table,
    heading,
    legend_outside,
    note,
    read_json,
    read_table,
    records_table,
    summary_table,
    thinned,
)


def cut_columns(positions: Table) -> dict[str, list]:
    """What the report embeds of ``positions.csv``: per cut (in order of first
    appearance), ``cut``, ``colour`` and its rows' ``time_s``, ``speed_mps``, ``x_m``,
    ``y_m`` (arrays) and ``track`` (its front's track per row)."""
    names = list(dict.fromkeys(positions["cut"]))
    cuts = np.array(positions["cut"], dtype=object)
    cols: dict[str, list] = {"cut": names, "colour": distinct_colours(len(names)),
                             "time_s": [], "speed_mps": [], "x_m": [], "y_m": []}
    for name in names:
        rows = np.flatnonzero(cuts == name)
        rows = rows[thinned(rows.size)]
        for k in ("time_s", "speed_mps", "x_m", "y_m"):
            cols[k].append(positions[k][rows])
    return cols


def yard_parts(out_dir: Path) -> tuple[list[Any], str]:
    """The report's parts for a yard drive's output directory, and its title."""
    bk = bokeh()
    models, plotting = bk.models, bk.plotting
    positions = read_table(out_dir / "positions.csv")
    events = read_table(out_dir / "events.csv")
    summary = read_json(out_dir / "summary.json")
    if positions is None and events is None and summary is None:
        raise RrsError(f"{out_dir}: nothing to report: positions.csv and events.csv have "
                       "no rows and there is no summary.json")
    title = str((summary or {}).get("scenario") or out_dir.name)
    parts: list[Any] = [heading(title, 1)]
    missing = [n for n, v in (("positions.csv", positions), ("events.csv", events),
                              ("summary.json", summary)) if v is None]
    if missing:
        parts.append(note("Not in this run's outputs, or without rows: " + ", ".join(missing)
                          + (". The drive did not end: the rows written so far are shown."
                             if summary is None else ".")))
    if positions is not None:
        cols = cut_columns(positions)
        source = models.ColumnDataSource(cols, name="cuts")
        tools = "pan,wheel_zoom,box_zoom,reset,save,tap"
        hover = [("cut", "@cut"), ("time", "$x{0.0} s")]
        speed = plotting.figure(height=HEIGHT, width=WIDTH, sizing_mode="stretch_width",
                                x_axis_label="time (s)", y_axis_label="speed (m/s)",
                                tools=tools)
        speed.multi_line("time_s", "speed_mps", source=source, color="colour", line_width=1.5,
                         hover_line_width=3)
        speed.add_tools(models.HoverTool(tooltips=hover + [("speed", "$y{0.00} m/s")]))
        along = plotting.figure(height=HEIGHT, width=WIDTH, sizing_mode="stretch_width",
                                x_range=speed.x_range, x_axis_label="time (s)",
                                y_axis_label="plan x of the cut's front (m)", tools=tools)
        along.multi_line("time_s", "x_m", source=source, color="colour", line_width=1.5,
                         hover_line_width=3)
        along.add_tools(models.HoverTool(tooltips=hover + [("x", "$y{0.0} m")]))
        plan = plotting.figure(height=HEIGHT + 100, width=WIDTH, sizing_mode="stretch_width",
                               x_axis_label="plan x (m)", y_axis_label="plan y (m)",
                               match_aspect=True, tools=tools)
        plan.multi_line("x_m", "y_m", source=source, color="colour", line_width=2,
                        hover_line_width=4)
        plan.add_tools(models.HoverTool(tooltips=[("cut", "@cut"), ("x", "$x{0.0} m"),
                                                  ("y", "$y{0.0} m")]))
        # the cuts' colours named once, beside the plot (one legend for the three plots)
        legend = models.Legend(items=[
            models.LegendItem(label=name, renderers=[speed.renderers[0]], index=i)
            for i, name in enumerate(cols["cut"])], click_policy="none",
            ncols=-(-len(cols["cut"]) // 11))
        speed.add_layout(legend, "right")
        legend_outside(along)
        parts += [heading("Cuts over time"), speed, along,
                  heading("Paths of the cuts' fronts in plan"), plan]
    if events is not None:
        table, text = events_table(events)
        parts += [heading("Events"), note(text), table]
    if summary is not None:
        parts += [heading("Summary"), summary_table(summary)]
        if summary.get("cut_reports"):
            parts += [heading("Cuts", 3), records_table(summary["cut_reports"], "cut_reports")]
    return parts, title
