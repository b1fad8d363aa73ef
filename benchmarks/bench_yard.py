"""Benchmark: free cars in a yard, stepped from event to event (rrscore.freecars).

1,000 and 10,000 loaded cars on one long track, standing apart by 0.5 to 30 m, at
random speeds of up to 1.5 m/s either way, on random gentle grades (up to 0.8 kN along
the track), 1 kN of friction each; they couple below 1.5 m/s and part faster with
restitution 0.3. Prints the cost per car per simulated second of each case (it should
stay nearly flat: each event touches only the groups it concerns) and, on the last line,
JSON with a ``real_time_factor`` per case (best of ``--repeat`` runs). Run from the
repository root:

    python benchmarks/bench_yard.py [--sim-time 30] [--sizes 1000,10000] [--repeat 3]

It is a measurement, not a test: the figures depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import platform
import time

import numpy as np

from rrscore.yard.freecars import FreeCars


def yard(n: int, seed: int = 1) -> FreeCars:
    """``n`` cars at random gaps, speeds and grade forces."""
    rng = np.random.default_rng(seed)
    length = 14.0
    x = np.cumsum(length + rng.uniform(0.5, 30.0, n))
    return FreeCars(x, length, 92500.0, rng.uniform(-1.5, 1.5, n),
                    rng.uniform(-800.0, 800.0, n), 1000.0, slack=0.02, coupling_speed=1.5,
                    restitution=0.3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sim-time", type=float, default=30.0)
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--repeat", type=int, default=3, help="runs per case; the best counts")
    args = parser.parse_args()
    cases = []
    for n in (int(v) for v in args.sizes.split(",")):
        wall = float("inf")
        for _ in range(args.repeat):
            cars = yard(n)
            t0 = time.perf_counter()
            cars.advance(args.sim_time)
            wall = min(wall, time.perf_counter() - t0)
        events = sum(cars.counts.values())
        case = {"cars": n, "sim_time_s": args.sim_time, "wall_time_s": round(wall, 3),
                "events": events, "couplings": sum(e.kind == "coupled" for e in cars.log),
                "us_per_car_per_sim_s": round(wall / n / args.sim_time * 1e6, 2),
                "us_per_event": round(wall / max(events, 1) * 1e6, 1),
                "real_time_factor": round(args.sim_time / wall, 1)}
        cases.append(case)
        print(f"{n} cars: {args.sim_time:.0f} s simulated in {wall:.2f} s wall, {events} "
              f"events ({case['us_per_event']:.0f} us each), "
              f"{case['us_per_car_per_sim_s']:.1f} us per car per simulated second")
    growth = cases[-1]["us_per_car_per_sim_s"] / cases[0]["us_per_car_per_sim_s"] - 1.0
    print(json.dumps({"benchmark": "yard_free_cars", "cases": cases,
                      "cost_growth_longest_over_shortest": round(growth, 3),
                      "real_time_factor": cases[-1]["real_time_factor"],
                      "python": platform.python_version(), "machine": platform.machine()}))


if __name__ == "__main__":
    main()
