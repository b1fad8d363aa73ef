"""The report of a train's drive (``rrs drive``'s output directory): speed, speed limit
and the route's gradient and curvature against route km; traction and brake forces, the
brake-pipe and cylinder pressures and the coupler-force map against time; the events and
the summary. Each part only where the run wrote what it needs (an interrupted drive has
its CSVs but perhaps no summary)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import numpy as np

from ..model.errors import RrsError
from ..model.track import Route
from ..run.outputs.plots import speed_plot_data
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

#: The columns of ``timeseries.csv`` the plots of a drive need (every drive writes them).
SERIES_NEEDS = ("time_s", "position_m", "speed_mps", "traction_force_N")
#: Line colours (matplotlib's tab10, as speed.png uses).
BLUE, ORANGE, GREEN, RED, PURPLE = "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd"


def route_of(out_dir: Path) -> tuple[Route | None, str]:
    """The route of the run's ``scenario.resolved.toml`` and a note (empty when it was
    read), or None and why not: the report is drawn without the profile then."""
    path = out_dir / "scenario.resolved.toml"
    if not path.is_file():
        return None, "no scenario.resolved.toml: positions from the route's start, no profile"
    try:
        with open(path, "rb") as fh:
            table = tomllib.load(fh)["scenario"]["route"]
        return Route.from_config(table), ""
    except (OSError, tomllib.TOMLDecodeError, KeyError, TypeError, ValueError,
            RrsError) as exc:
        return None, f"{path.name}: its route cannot be read ({exc}): no profile"


def series_columns(series: Table, route: Route | None
                   ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray] | None]:
    """What the report embeds of ``timeseries.csv``, in the units it shows: ``time_s``,
    ``km`` (the front in route km), ``speed_kmh``, ``limit_kmh``, ``traction_kN``, each
    brake force ``<column>`` ending ``_N`` in kN as ``<column minus _N>_kN`` and each
    pressure ending ``_Pa`` in kPa as ``<column minus _Pa>_kPa``; and, with a route, its
    profile over the stretch run (``km``, ``grade_permille``, ``curvature_per_km``), as
    ``speed.png`` draws them (:func:`~rrscore.run.outputs.plots.speed_plot_data`)."""
    rows = thinned(series.rows)
    s = {k: v[rows] for k, v in series.columns.items() if isinstance(v, np.ndarray)}
    d = speed_plot_data(s, route)
    profile = None if "profile_km" not in d else {
        "km": d["profile_km"], "grade_permille": d["grade_permille"],
        "curvature_per_km": d["curvature_per_km"]}
    cols = {"time_s": s["time_s"], "km": d["km"], "speed_kmh": d["speed_kmh"],
            "limit_kmh": d["limit_kmh"] if d["limit_kmh"] is not None
            else np.full(rows.size, np.nan), "traction_kN": d["traction_kN"]}
    for name in brake_force_columns(series):
        cols[name[:-2] + "_kN"] = s[name] / 1e3
    for name in pressure_columns(series):
        cols[name[:-3] + "_kPa"] = s[name] / 1e3
    return cols, profile


def brake_force_columns(series: Table) -> list[str]:
    """The time series' brake-force columns (``...brake..._N``)."""
    return [c for c in series.header if "brake" in c and c.endswith("_N")
            and isinstance(series[c], np.ndarray)]


def pressure_columns(series: Table) -> list[str]:
    """The time series' brake-pipe and brake-cylinder pressures (``..._Pa``)."""
    return [c for c in series.header if c.endswith("_Pa") and isinstance(series[c], np.ndarray)]


def coupler_image(forces: Table) -> dict[str, Any]:
    """The coupler-force map: ``image`` (couplings x samples, kN, tension +), ``t0``,
    ``dt`` (the mean sample interval, s; the image's columns are drawn evenly spaced) and
    ``limit`` (the colour scale's bound, kN)."""
    cols = sorted((c for c in forces.header if c.startswith("c") and c.endswith("_force_N")),
                  key=lambda c: int(c[1:].split("_")[0]))
    rows = thinned(forces.rows)
    t = forces["time_s"][rows]
    image = np.vstack([forces[c][rows] / 1e3 for c in cols])
    dt = float((t[-1] - t[0]) / (t.size - 1)) if t.size > 1 else 1.0
    finite = np.abs(image[np.isfinite(image)])
    limit = float(finite.max()) if finite.size else 0.0
    return {"image": image, "t0": float(t[0]), "dt": dt or 1.0, "limit": max(limit, 1e-9),
            "couplings": len(cols)}


def drive_parts(out_dir: Path) -> tuple[list[Any], str]:
    """The report's parts for a drive's output directory, and its title."""
    bk = bokeh()
    models, plotting = bk.models, bk.plotting
    series = read_table(out_dir / "timeseries.csv")
    forces = read_table(out_dir / "coupler_forces.csv")
    events = read_table(out_dir / "events.csv")
    summary = read_json(out_dir / "summary.json")
    if series is None and summary is None and events is None:
        raise RrsError(f"{out_dir}: nothing to report: timeseries.csv has no rows and "
                       "there is no summary.json or event")
    title = str((summary or {}).get("scenario") or out_dir.name)
    parts: list[Any] = [heading(title, 1)]
    missing = [n for n, v in (("timeseries.csv", series), ("coupler_forces.csv", forces),
                              ("events.csv", events), ("summary.json", summary)) if v is None]
    if missing:
        parts.append(note("Not in this run's outputs, or without rows: " + ", ".join(missing)
                          + (". The drive did not end: the rows written so far are shown."
                             if summary is None else ".")))
    time_range = None
    lacking = [c for c in SERIES_NEEDS if series is not None and c not in series]
    if lacking:
        parts.append(note(f"timeseries.csv has no {', '.join(lacking)} column: it is not "
                          "shown (was it written by rrs drive?)"))
        series = None
    if series is not None:
        route, why = route_of(out_dir)
        cols, profile_cols = series_columns(series, route)
        source = models.ColumnDataSource(cols, name="timeseries")
        xlabel = "route km (train front)" if route is not None else "position (km)"
        parts.append(heading("Speed and route profile"))
        if why:
            parts.append(note(why))
        speed = plotting.figure(height=HEIGHT, width=WIDTH, sizing_mode="stretch_width",
                                x_axis_label=xlabel, y_axis_label="speed (km/h)",
                                tools="pan,xwheel_zoom,box_zoom,reset,save")
        # (kilometre posts that fall as the train runs: it still runs left to right)
        speed.x_range.flipped = route is not None and route.chainage_sign < 0
        speed.line("km", "speed_kmh", source=source, color=BLUE, legend_label="speed")
        if np.isfinite(cols["limit_kmh"]).any():
            speed.line("km", "limit_kmh", source=source, color=RED, line_dash="dashed",
                       legend_label="speed limit")
        speed.add_tools(models.HoverTool(tooltips=[
            ("km", "@km{0.000}"), ("time", "@time_s{0.0} s"), ("speed", "@speed_kmh{0.0} km/h"),
            ("limit", "@limit_kmh{0.0} km/h")], mode="vline"))
        legend_outside(speed)
        parts.append(speed)
        if profile_cols is not None:
            profile = models.ColumnDataSource(profile_cols, name="profile")
            prof = plotting.figure(height=HEIGHT * 2 // 3, width=WIDTH,
                                   sizing_mode="stretch_width", x_range=speed.x_range,
                                   x_axis_label=xlabel, y_axis_label="gradient (‰)",
                                   tools="pan,xwheel_zoom,box_zoom,reset,save")
            prof.line("km", "grade_permille", source=profile, color=GREEN,
                      legend_label="gradient (‰)")
            prof.line("km", "curvature_per_km", source=profile, color=PURPLE,
                      legend_label="curvature 1000/R (1/km)")
            prof.add_tools(models.HoverTool(tooltips=[
                ("km", "@km{0.000}"), ("gradient", "@grade_permille{0.00} ‰"),
                ("curvature", "@curvature_per_km{0.00} 1/km")], mode="vline"))
            legend_outside(prof)
            parts.append(prof)
        parts.append(heading("Forces and brake pressures"))
        force = plotting.figure(height=HEIGHT, width=WIDTH, sizing_mode="stretch_width",
                                x_axis_label="time (s)", y_axis_label="force (kN)",
                                tools="pan,xwheel_zoom,box_zoom,reset,save")
        time_range = force.x_range
        names = ["traction_kN"] + [c[:-2] + "_kN" for c in brake_force_columns(series)]
        palette = [ORANGE] + [c for c in _colours(len(names)) if c != ORANGE][:len(names) - 1]
        for name, colour in zip(names, palette, strict=True):
            force.line("time_s", name, source=source, color=colour,
                       legend_label=name.removesuffix("_kN").replace("_", " "))
        force.add_tools(models.HoverTool(tooltips=[("time", "@time_s{0.0} s")]
                                         + [(n, f"@{n}{{0.0}} kN") for n in names],
                                         mode="vline"))
        legend_outside(force)
        parts.append(force)
        pressures = [c[:-3] + "_kPa" for c in pressure_columns(series)]
        if pressures:
            pres = plotting.figure(height=HEIGHT, width=WIDTH, sizing_mode="stretch_width",
                                   x_range=time_range, x_axis_label="time (s)",
                                   y_axis_label="pressure (kPa, gauge)",
                                   tools="pan,xwheel_zoom,box_zoom,reset,save")
            # a colour per vehicle: its pipe solid, its cylinder dashed
            owners = list(dict.fromkeys(_owner(n) for n in pressures))
            colour_of = dict(zip(owners, _colours(len(owners)), strict=True))
            for name in pressures:
                colour = colour_of[_owner(name)]
                pres.line("time_s", name, source=source, color=colour,
                          line_dash="solid" if "pipe" in name else "dashed",
                          legend_label=name.removesuffix("_kPa").replace("_", " "))
            pres.add_tools(models.HoverTool(tooltips=[("time", "@time_s{0.0} s")]
                                            + [(n, f"@{n}{{0.0}} kPa") for n in pressures],
                                            mode="vline"))
            legend_outside(pres)
            parts.append(pres)
        else:
            parts.append(note("No brake-pipe or cylinder pressure in the time series (the "
                              "train has no air brake, or the scenario records none)."))
    if forces is not None:
        parts += coupler_parts(forces, time_range)
    if events is not None:
        table, text = events_table(events)
        parts += [heading("Events"), note(text), table]
    if summary is not None:
        parts += [heading("Summary"), summary_table(summary)]
        if summary.get("couplings"):
            parts += [heading("Per coupling", 3), records_table(summary["couplings"],
                                                               "couplings")]
    return parts, title


def coupler_parts(forces: Table, time_range: Any) -> list[Any]:
    """The coupler-force map (time across, couplings up), one colour scale about zero."""
    bk = bokeh()
    models, plotting = bk.models, bk.plotting
    m = coupler_image(forces)
    n, dt = m["couplings"], m["dt"]
    options = {"x_range": time_range} if time_range is not None else {}
    fig = plotting.figure(height=max(HEIGHT, min(12 * n, 700)), width=WIDTH,
                          sizing_mode="stretch_width", x_axis_label="time (s)",
                          y_axis_label="coupling (0 = behind the lead vehicle)",
                          tools="pan,xwheel_zoom,box_zoom,reset,save", **options)
    mapper = models.LinearColorMapper(palette=diverging_palette(), low=-m["limit"],
                                      high=m["limit"])
    source = models.ColumnDataSource({"image": [m["image"]]}, name="coupler_forces")
    image = fig.image("image", source=source, x=m["t0"] - dt / 2, y=-0.5,
                      dw=dt * m["image"].shape[1], dh=n, color_mapper=mapper)
    fig.add_tools(models.HoverTool(renderers=[image], tooltips=[
        ("time", "$x{0.0} s"), ("coupling", "$y{0}"), ("force", "@image{0.0} kN")]))
    fig.add_layout(models.ColorBar(color_mapper=mapper, title="force (kN), tension +"),
                   "right")
    return [heading("Coupler forces over time and along the train"), fig]


def _owner(column: str) -> str:
    """The vehicle a recorded signal belongs to (``v3`` of ``v3_brake_pipe_kPa``)."""
    head = column.split("_", 1)[0]
    return head if head[:1] == "v" and head[1:].isdigit() else ""


def diverging_palette() -> list[str]:
    """256 colours from blue (compression) through white to red (tension): matplotlib's
    RdBu_r, as ``rrs plot``'s coupler maps use."""
    import matplotlib

    cmap = matplotlib.colormaps["RdBu_r"]
    return [matplotlib.colors.to_hex(c) for c in cmap(np.linspace(0.0, 1.0, 256))]


def _colours(n: int) -> list[str]:
    from ..run.plotting import distinct_colours

    return distinct_colours(n)
