"""Benchmark: long trains with every car moving, 1,000 and 10,000 vehicles.

Each train is one SimpleLoco per hundred vehicles at the head and loaded four-axle cars
behind, spring-damper couplers with slack, running at 30 km/h on level track at full
traction, for ``--sim-time`` simulated seconds. Every vehicle's speed is recorded
each second (10,000 columns for the long train), so the cost of recording counts too.

Each case runs in a fresh process, so its peak memory (``ru_maxrss``) is its own, after
a short drive of a short train that loads the compiled code (not timed); ``--repeat``
times (3 by default), the median run reported. The
figure to compare is the cost per vehicle per simulated second: it should stay nearly
flat from 1,000 to 10,000 vehicles (the issue asks within 1.5x). ``--blas-threads``
sets the BLAS thread count of the cases (default: left as the machine has it), to see
whether numpy's threads change anything. Run from the repository root:

    python benchmarks/bench_long.py [--sim-time 10] [--sizes 1000,10000] [--blas-threads N]
                                    [--repeat 3]

Prints one line per case and, on the last line, JSON with a ``real_time_factor`` per
case. It is a measurement, not a test: the figures depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

CONFIGS = Path(__file__).resolve().parents[1] / "configs"


def scenario(vehicles: int, sim_time: float):
    """The long train at 30 km/h, full traction, every vehicle's speed recorded."""
    from rrscore.model.config import Context
    from rrscore.run.scenario import scenario_from_table

    locos = max(1, vehicles // 100)
    cars = vehicles - locos
    entries = [{"config": "vehicles/simple_loco.toml", "count": locos}]
    entries += [{"config": "vehicles/freight_car_4axle.toml", "count": min(5000, cars - k),
                 "payload_fraction": 1.0} for k in range(0, cars, 5000)]
    table = {
        "name": f"{vehicles} vehicles, all moving",
        "train": {"coupling": {"model": "spring_damper", "params": {
            "stiffness": "20 MN/m", "damping": "200 kN*s/m", "slack": "11 mm"}},
            "vehicles": entries},
        "route": {"name": "level 250 km", "elements": [{"length": "250 km"}]},
        "start": {"position": "200 km", "speed": "30 km/h"},
        "driver": [{"at_time": 0.0, "all_vehicles": True, "set": {"traction_level": 1.0}}],
        "stop": {"max_time": sim_time},
        "output": {"sample_interval": 1.0, "vehicles": list(range(vehicles)),
                   "vehicle_signals": ["speed_mps"]},
    }
    return scenario_from_table(table, Context("<benchmark>", "scenario", CONFIGS))


def one_case(vehicles: int, sim_time: float) -> dict:
    """Run one case in this process; its figures."""
    import rrscore
    from rrscore.run.recorder import Recorder

    # numba's compiled code loaded from its cache first, by a short drive of a short
    # train: a process's first drive pays that (tens of milliseconds), which would
    # otherwise count in the shorter train's cost per vehicle
    rrscore.Run(scenario(20, 0.5), on_sample=lambda t, y, row: None).advance()
    sc = scenario(vehicles, sim_time)
    recorder: list[Recorder] = []  # the recorder a drive keeps its rows in, in memory
    run = rrscore.Run(sc, on_sample=lambda t, y, row: recorder[0].record(row))
    recorder.append(Recorder(run.columns))
    rec = recorder[0]
    t0 = time.perf_counter()
    run.advance()
    wall = time.perf_counter() - t0
    s = run.summary(wall)
    return {
        "vehicles": vehicles,
        "sim_time_s": s["sim_time_s"],
        "wall_time_s": round(wall, 3),
        "real_time_factor": round(s["sim_time_s"] / wall, 2),
        "us_per_vehicle_per_sim_s": round(wall / vehicles / s["sim_time_s"] * 1e6, 1),
        "steps": s["steps"],
        "rhs_evaluations": s["rhs_evaluations"],
        "events": {k: v for k, v in s["events"].items() if v},
        "samples": len(rec),
        "columns": len(run.columns),
        "peak_memory_MB": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sim-time", type=float, default=10.0)
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--blas-threads", type=int, default=None)
    parser.add_argument("--repeat", type=int, default=3,
                        help="runs of each case, each in a fresh process; the median is kept")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # a case, in a child
    args = parser.parse_args()
    if args.one is not None:
        print(json.dumps(one_case(args.one, args.sim_time)))
        return
    env = dict(os.environ)
    if args.blas_threads is not None:
        for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            env[name] = str(args.blas_threads)
    results = []
    for n in (int(v) for v in args.sizes.split(",")):
        runs = []
        for _ in range(max(1, args.repeat)):
            proc = subprocess.run([sys.executable, __file__, "--one", str(n), "--sim-time",
                                   str(args.sim_time)], env=env, capture_output=True,
                                  text=True, check=True)
            runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        # the median run (a short train's 0.3 s drive moves by 15 % from run to run)
        r = sorted(runs, key=lambda c: c["wall_time_s"])[len(runs) // 2]
        r["us_per_vehicle_per_sim_s_runs"] = [c["us_per_vehicle_per_sim_s"] for c in runs]
        results.append(r)
        print(f"{n} vehicles: {r['sim_time_s']:.0f} s simulated in {r['wall_time_s']:.1f} s "
              f"wall ({r['real_time_factor']:.2f}x real time), "
              f"{r['us_per_vehicle_per_sim_s']:.0f} us per vehicle per simulated second, "
              f"{r['steps']} steps, peak memory {r['peak_memory_MB']:.0f} MB")
    ratio = (results[-1]["us_per_vehicle_per_sim_s"] / results[0]["us_per_vehicle_per_sim_s"]
             if len(results) > 1 else 1.0)
    print(json.dumps({"benchmark": "long_trains", "cases": results,
                      "cost_ratio_longest_to_shortest": round(ratio, 3),
                      "blas_threads": args.blas_threads,
                      "real_time_factor": results[-1]["real_time_factor"],
                      "python": platform.python_version(), "machine": platform.machine()}))


if __name__ == "__main__":
    main()
