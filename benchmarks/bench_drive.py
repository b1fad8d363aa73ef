"""Benchmark: SimpleLoco + 100 loaded freight cars for 600 simulated seconds.

Prints the real-time factor (simulated seconds per wall second) and the wall
time; the last line is JSON. Run from the repository root:

    python benchmarks/bench_drive.py [--solver rk45|rk4] [--sim-time 600]

It is a measurement, not a test: the figure depends on the machine.
"""

from __future__ import annotations

import argparse
import json
import platform
from pathlib import Path

import numpy as np

import rrscore
from rrscore.config import Context
from rrscore.scenario import scenario_from_table

CONFIGS = Path(__file__).resolve().parents[1] / "configs"


def scenario(train: str, sim_time: float, solver: str) -> rrscore.Scenario:
    """Full traction from standstill with slack bunched, over the hilly route."""
    table = {
        "name": f"benchmark {train}",
        "train": f"trains/{train}.toml",
        "route": "routes/hilly_20km.toml",
        "start": {"position": "300 m", "slack": "bunched"},
        "solver": {"method": solver},
        "driver": [{"at_time": 0.0, "set": {"traction_level": 1.0}}],
        "stop": {"max_time": sim_time},
        "output": {"sample_interval": 1.0},
    }
    return scenario_from_table(table, Context("<benchmark>", "scenario", CONFIGS))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--train", default="freight_100")
    parser.add_argument("--sim-time", type=float, default=600.0)
    parser.add_argument("--solver", default="rk45")
    parser.add_argument("--repeat", type=int, default=3, help="runs; the best is reported")
    args = parser.parse_args()

    runs = []
    for _ in range(args.repeat):
        result = rrscore.Drive(scenario(args.train, args.sim_time, args.solver)).run()
        runs.append(result.summary)
    best = min(runs, key=lambda s: s["wall_time_s"])
    figures = {
        "benchmark": "drive",
        "train": args.train,
        "vehicles": best["vehicles"],
        "solver": args.solver,
        "sim_time_s": round(best["sim_time_s"], 3),
        "wall_time_s": round(best["wall_time_s"], 3),
        "wall_time_median_s": round(float(np.median([s["wall_time_s"] for s in runs])), 3),
        "real_time_factor": round(best["real_time_factor"], 1),
        "steps": best["steps"],
        "rhs_evaluations": best["rhs_evaluations"],
        "events": best["events"],
        "distance_m": round(best["distance_m"], 1),
        "python": platform.python_version(),
        "machine": platform.machine(),
    }
    print(f"{figures['vehicles']} vehicles, {figures['sim_time_s']:.0f} s simulated in "
          f"{figures['wall_time_s']:.2f} s wall: {figures['real_time_factor']:.0f}x real time "
          f"({figures['steps']} steps, {figures['rhs_evaluations']} RHS evaluations)")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
