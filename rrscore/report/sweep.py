"""The report of a sweep (``rrs sweep``'s output directory): every summary figure against
each swept parameter (a panel each, hover naming the case), and the table of cases."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..model.errors import RrsError
from ..run.sweepplot import axis_label
from .common import (
    MAX_TABLE_ROWS,
    Table,
    bokeh,
    data_table,
    header_of,
    heading,
    note,
    read_json,
    read_table,
    thinned,
)

#: Columns of ``sweep.csv`` that are neither parameters nor figures to draw.
NOT_FIGURES = ("case", "stop_reason", "error")


def sweep_axes(table: Table, meta: dict | None) -> tuple[list[str], list[str]]:
    """The swept parameters (keys with a ``KEY_si`` column) and the figures drawn (the
    other number columns), from ``sweep.json`` where there is one, else the header."""
    header = table.header
    if meta and isinstance(meta.get("params"), dict):
        params = [p for p in meta["params"] if f"{p}_si" in table]
    else:
        params = [c for c in header if f"{c}_si" in table]
    skip = set(NOT_FIGURES) | set(params) | {f"{p}_si" for p in params}
    figures = [c for c in header if c not in skip and isinstance(table[c], np.ndarray)]
    return params, figures


def sweep_columns(table: Table, params: list[str], figures: list[str]) -> dict[str, Any]:
    """What the report embeds of ``sweep.csv``: ``case``, each parameter's SI value
    (``KEY_si``; a text where the value is one, such as a solver's name) and as written
    (``KEY``), and each figure; the cases that failed (an ``error``) are left out."""
    ok = np.array([not e for e in table["error"]], dtype=bool) if "error" in table \
        and not isinstance(table["error"], np.ndarray) else np.ones(table.rows, dtype=bool)
    rows = np.flatnonzero(ok)[thinned(int(ok.sum()))]
    cols: dict[str, Any] = {"case": table["case"][rows] if "case" in table
                            else rows.astype(float)}
    for p in params:
        si = table[f"{p}_si"]
        cols[f"{p}_si"] = si[rows] if isinstance(si, np.ndarray) else [si[i] for i in rows]
        cols[p] = [table.text[p][i] for i in rows]
    for f in figures:
        cols[f] = table[f][rows]
    return cols


def sweep_parts(out_dir: Path) -> tuple[list[Any], str]:
    """The report's parts for a sweep's output directory, and its title."""
    bk = bokeh()
    models, plotting, layouts = bk.models, bk.plotting, bk.layouts
    meta = read_json(out_dir / "sweep.json")
    path = out_dir / "sweep.csv"
    table = read_table(path, keep_text=header_of(path))  # every value as written
    if table is None:
        raise RrsError(f"{out_dir}: nothing to report: sweep.csv is absent or has no case")
    title = f"sweep of {meta.get('scenario', out_dir.name)}" if meta else f"sweep {out_dir.name}"
    params, figures = sweep_axes(table, meta)
    cols = sweep_columns(table, params, figures)
    n = len(cols["case"])
    parts: list[Any] = [heading(title, 1),
                        note(f"{table.rows} cases in sweep.csv, {n} ran without error"
                             + ("" if meta else "; no sweep.json (the sweep did not end)"))]
    if n and params and figures:
        source = models.ColumnDataSource(cols, name="sweep")
        grid = []
        for f in figures:
            row = []
            for p in params:
                x = cols[f"{p}_si"]
                # a text parameter (a solver, a driver mode): its values as categories
                span = {} if isinstance(x, np.ndarray) else {"x_range": list(dict.fromkeys(x))}
                fig = plotting.figure(height=220, width=320, x_axis_label=axis_label(
                                          p, (meta or {}).get("units", {}).get(p)),
                                      y_axis_label=f, tools="pan,wheel_zoom,box_zoom,reset,save",
                                      **span)
                fig.scatter(f"{p}_si", f, source=source, size=8, color="#1f77b4",
                            fill_alpha=0.5)
                fig.add_tools(models.HoverTool(tooltips=[("case", "@case{0}")]
                                               + [(q, f"@{{{q}}}") for q in params]
                                               + [(f, f"@{{{f}}}{{0.[000]}}")]))
                row.append(fig)
            grid.append(row)
        parts += [heading("Summary figures against the swept parameters"),
                  layouts.gridplot(grid, toolbar_location="right")]
    else:
        parts.append(note("Nothing to draw: no case ran."))
    shown = min(table.rows, MAX_TABLE_ROWS)
    raw = {k: table.text[k][:shown] for k in table.header}
    parts += [heading("Cases"), note(f"{shown} of {table.rows} rows of sweep.csv"),
              data_table(raw, "cases", height=min(40 + 25 * shown, 420))]
    return parts, title
