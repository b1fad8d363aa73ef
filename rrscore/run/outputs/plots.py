"""``speed.png`` and ``force_envelope.png``, drawn when a drive ends (matplotlib, no display
needed).

The data each plot shows come from a function of their own (:func:`speed_plot_data`,
:func:`force_envelope_data`), so what is drawn can be tested without reading pixels.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...model.hookspecs import hookimpl
from ...model.track import Route
from ..files import save_figure
from ..plotting import pyplot

#: Positions at which the route's gradient and curvature profile is sampled under the
#: speed plot (plus every element boundary in the range, so steps stay sharp).
PROFILE_SAMPLES = 2000


@hookimpl
def rrs_drive_end(drive, result) -> None:
    """Draw the plots if the scenario asks for them and there is something to draw."""
    if drive.out_dir is None or not drive.scenario.config["output"]["plots"]:
        return
    name = drive.scenario.config["name"]
    if len(result.series["time_s"]) > 1:
        speed_plot(result.series, drive.out_dir / "speed.png", name, drive.scenario.route)
        if drive.train.count > 1:
            force_envelope_plot(result.summary["couplings"], drive.out_dir / "force_envelope.png",
                                f"{name}: in-train force envelope")


def speed_plot_data(series: dict[str, np.ndarray], route: Route | None = None) -> dict:
    """What :func:`speed_plot` draws: ``km`` (the train front's position in route km, the
    route's own kilometre posts; without a route, km from the route's position 0),
    ``speed_kmh``, ``limit_kmh`` (None without limits), ``traction_kN``, and, with a route,
    its profile over the distance run: ``profile_km``, ``grade_permille`` and
    ``curvature_per_km`` (1000/R, signless)."""
    # The train's front, where the speed limit applies (older series: the lead's centre).
    x = np.asarray(series.get("front_m", series["position_m"]), dtype=float)
    data: dict = {
        "km": route.route_km(x) if route is not None else x / 1000.0,
        "speed_kmh": np.asarray(series["speed_mps"]) * 3.6,
        "limit_kmh": None,
        "traction_kN": np.asarray(series["traction_force_N"]) / 1000.0,
    }
    limit = series.get("speed_limit_mps")
    if limit is not None and np.isfinite(limit).any():  # no legend entry without limits
        data["limit_kmh"] = np.where(np.isfinite(limit), limit, np.nan) * 3.6
    if route is not None and x.size:
        lo, hi = float(x.min()), float(x.max())
        bounds = np.concatenate([route.starts, [route.length]])
        inside = bounds[(bounds > lo) & (bounds < hi)]
        # Either side of each boundary, so a change of grade draws as a step.
        q = np.unique(np.concatenate([np.linspace(lo, hi, PROFILE_SAMPLES),
                                      inside - 1e-6, inside]))
        data["profile_km"] = route.route_km(q)
        data["grade_permille"] = route.grade_at(q) * 1000.0
        data["curvature_per_km"] = route.curvature_at(q) * 1000.0
    return data


def speed_plot(series: dict[str, np.ndarray], path: str | Path, title: str = "",
               route: Route | None = None) -> None:
    """Speed (km/h) and traction force (kN) against route km, and under them (with a
    route) the gradient and curvature profile, written to ``path``."""
    plt = pyplot()
    d = speed_plot_data(series, route)
    has_profile = "profile_km" in d
    if has_profile:
        fig, (ax, axp) = plt.subplots(2, 1, figsize=(9, 6.5), dpi=110, sharex=True,
                                      gridspec_kw={"height_ratios": [3, 1.4]})
    else:
        fig, ax = plt.subplots(figsize=(9, 4.5), dpi=110)
    ax.plot(d["km"], d["speed_kmh"], color="tab:blue", label="speed")
    if d["limit_kmh"] is not None:
        ax.plot(d["km"], d["limit_kmh"], color="tab:red", ls="--", lw=1, label="speed limit")
    ax.set_ylabel("speed (km/h)", color="tab:blue")
    ax.grid(alpha=0.3)
    ax2 = ax.twinx()
    ax2.plot(d["km"], d["traction_kN"], color="tab:orange", label="traction")
    ax2.set_ylabel("traction force (kN)", color="tab:orange")
    _legend_above(ax, ax.get_lines() + ax2.get_lines())
    ax.set_title(title, pad=22)
    bottom = ax
    if has_profile:
        axp.plot(d["profile_km"], d["grade_permille"], color="tab:green", label="gradient")
        axp.axhline(0.0, color="black", lw=0.6)
        axp.set_ylabel("gradient (‰)", color="tab:green")
        axp.grid(alpha=0.3)
        axc = axp.twinx()
        axc.plot(d["profile_km"], d["curvature_per_km"], color="tab:purple", lw=1,
                 label="curvature")
        axc.set_ylabel("curvature 1000/R (1/km)", color="tab:purple")
        axc.set_ylim(bottom=0.0)
        _legend_above(axp, axp.get_lines()[:1] + axc.get_lines())
        bottom = axp
    bottom.set_xlabel("route km (train front)" if route is not None else "position (km)")
    if route is not None and route.chainage_sign < 0:
        bottom.invert_xaxis()  # the kilometre posts fall as the train runs: it still runs
        # left to right
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)


def _legend_above(ax, lines) -> None:
    """One row above the axes: never over the curves, every line named."""
    ax.legend(lines, [ln.get_label() for ln in lines], loc="lower center",
              bbox_to_anchor=(0.5, 1.0), ncol=len(lines), fontsize=8, frameon=False)


def force_envelope_data(couplings: list[dict]) -> dict[str, np.ndarray]:
    """What :func:`force_envelope_plot` draws: ``coupling``, ``tension_kN`` and
    ``compression_kN`` (drawn negative), and the simulated time of each peak,
    ``tension_time_s`` and ``compression_time_s`` (NaN where the summary has none)."""
    def col(key: str, scale: float = 1.0) -> np.ndarray:
        return np.array([c.get(key, np.nan) for c in couplings], dtype=float) * scale

    return {"coupling": col("coupling"), "tension_kN": col("max_tension_N", 1e-3),
            "compression_kN": col("max_compression_N", -1e-3),
            "tension_time_s": col("max_tension_time_s"),
            "compression_time_s": col("max_compression_time_s")}


def force_envelope_plot(couplings: list[dict], path: str | Path, title: str = "") -> None:
    """Largest tension and compression of every coupling along the train, and under it the
    time each of those peaks happened, written to ``path``."""
    plt = pyplot()
    d = force_envelope_data(couplings)
    fig, (ax, axt) = plt.subplots(2, 1, figsize=(9, 6.5), dpi=110, sharex=True,
                                  gridspec_kw={"height_ratios": [3, 1.6]})
    ax.plot(d["coupling"], d["tension_kN"], color="tab:red", marker=".", label="max tension")
    ax.plot(d["coupling"], d["compression_kN"], color="tab:blue", marker=".",
            label="max compression")
    ax.axhline(0.0, color="black", lw=0.8)
    ax.set_ylabel("coupler force (kN), tension +")
    ax.grid(alpha=0.3)
    _legend_above(ax, ax.get_lines()[:2])
    ax.set_title(title or "in-train force envelope", pad=22)
    axt.plot(d["coupling"], d["tension_time_s"], color="tab:red", marker="^", ls="none",
             label="time of max tension")
    axt.plot(d["coupling"], d["compression_time_s"], color="tab:blue", marker="v", ls="none",
             label="time of max compression")
    axt.set_ylabel("time of peak (s)")
    axt.set_xlabel("coupling (0 = behind the lead vehicle)")
    axt.grid(alpha=0.3)
    _legend_above(axt, axt.get_lines())
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)
