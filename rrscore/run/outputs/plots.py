"""``speed.png`` and ``force_envelope.png``, drawn when a drive ends (matplotlib, no display
needed)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...model.hookspecs import hookimpl
from ..files import save_figure


@hookimpl
def rrs_drive_end(drive, result) -> None:
    """Draw the plots if the scenario asks for them and there is something to draw."""
    if drive.out_dir is None or not drive.scenario.config["output"]["plots"]:
        return
    name = drive.scenario.config["name"]
    if len(result.series["time_s"]) > 1:
        speed_plot(result.series, drive.out_dir / "speed.png", name)
        if drive.train.count > 1:
            force_envelope_plot(result.summary["couplings"], drive.out_dir / "force_envelope.png",
                                f"{name}: in-train force envelope")


def speed_plot(series: dict[str, np.ndarray], path: str | Path, title: str = "") -> None:
    """Speed (km/h) and traction force (kN) against distance (km), written to ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x0 = series["position_m"][0] if len(series["position_m"]) else 0.0
    dist = (series["position_m"] - x0) / 1000.0
    fig, ax = plt.subplots(figsize=(9, 4.5), dpi=110)
    ax.plot(dist, series["speed_mps"] * 3.6, color="tab:blue", label="speed")
    limit = series.get("speed_limit_mps")
    if limit is not None and np.isfinite(limit).any():  # no legend entry without limits
        lim = np.where(np.isfinite(limit), limit, np.nan)
        ax.plot(dist, lim * 3.6, color="tab:red", ls="--", lw=1, label="speed limit")
    ax.set_xlabel("distance (km)")
    ax.set_ylabel("speed (km/h)", color="tab:blue")
    ax.grid(alpha=0.3)
    ax2 = ax.twinx()
    ax2.plot(dist, series["traction_force_N"] / 1000.0, color="tab:orange", label="traction")
    ax2.set_ylabel("traction force (kN)", color="tab:orange")
    lines = ax.get_lines() + ax2.get_lines()
    # Above the axes, in one row: never over the curves.
    ax.legend(lines, [ln.get_label() for ln in lines], loc="lower center",
              bbox_to_anchor=(0.5, 1.0), ncol=len(lines), fontsize=8, frameon=False)
    ax.set_title(title, pad=22)
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)


def force_envelope_plot(couplings: list[dict], path: str | Path, title: str = "") -> None:
    """Largest tension and compression of every coupling along the train, written to ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    j = [c["coupling"] for c in couplings]
    fig, ax = plt.subplots(figsize=(9, 4.5), dpi=110)
    ax.plot(j, [c["max_tension_N"] / 1e3 for c in couplings], color="tab:red",
            marker=".", label="max tension")
    ax.plot(j, [-c["max_compression_N"] / 1e3 for c in couplings], color="tab:blue",
            marker=".", label="max compression")
    ax.axhline(0.0, color="black", lw=0.8)
    ax.set_xlabel("coupling (0 = behind the lead vehicle)")
    ax.set_ylabel("coupler force (kN), tension +")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(title or "in-train force envelope")
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)
