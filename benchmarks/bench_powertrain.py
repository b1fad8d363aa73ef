"""Benchmark: the powertrain locomotives against SimpleLoco, on the same drive.

Cases, each the shipped ``simple_loco_level`` scenario (a light engine on level track
for 300 simulated seconds, control step 0.05 s, a sample a second) with its locomotive
swapped, so that only the plugin differs:

* ``simple_loco``: the scenario as shipped (SimpleLoco, traction key held to full);
* ``diesel_electric``: the shipped 3.2 MW diesel-electric, throttle at notch 8 from 0 s;
* ``battery_electric``: the shipped 2 MW battery-electric, full throttle from 0 s;

and the two shipped powertrain scenarios as they are (``diesel_freight_level``,
``battery_freight_level``: 31 and 11 vehicles), with ``simple_loco_freight``: the diesel's
scenario with the shipped 3.25 MW SimpleLoco (``loco_3250kw``) in its place, its
throttle settings as traction levels. Each is run once to compile, then
timed best of ``--repeat``. Prints a line per case; the last line is JSON. Run from the
repository root:

    python benchmarks/bench_powertrain.py [--repeat 5]

It is a measurement, not a test: the figures depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import tomllib
from pathlib import Path

import rrscore
from rrscore.model.config import Context
from rrscore.run.scenario import scenario_from_table

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
LEVEL = CONFIGS / "scenarios" / "simple_loco_level.toml"
SWAPS = {
    "diesel_electric": ("diesel_electric_3200kw.toml", {"throttle": 1.0}),
    "battery_electric": ("battery_electric_2mw.toml", {"throttle": 1.0}),
}
SHIPPED = ("diesel_freight_level", "battery_freight_level")


def light_engine(case: str) -> rrscore.Scenario:
    """``simple_loco_level`` as shipped, or with its locomotive swapped for ``case``."""
    if case == "simple_loco":
        return rrscore.load_scenario(LEVEL)
    table = tomllib.loads(LEVEL.read_text())["scenario"]
    vehicle, controls = SWAPS[case]
    table["train"] = {"vehicles": [{"config": str(CONFIGS / "vehicles" / vehicle)}]}
    table["driver"] = [{"at_time": 0.0, "set": controls}]
    table["output"]["vehicle_signals"] = ["traction_force_N"]
    return scenario_from_table(table, Context(str(LEVEL), "scenario", LEVEL.parent))


def simple_loco_freight() -> rrscore.Scenario:
    """``diesel_freight_level`` with the 3.25 MW SimpleLoco for the diesel-electric."""
    path = CONFIGS / "scenarios" / "diesel_freight_level.toml"
    table = tomllib.loads(path.read_text())["scenario"]
    train = tomllib.loads((CONFIGS / "trains" / "diesel_freight_30.toml").read_text())["train"]
    train["vehicles"][0]["config"] = "../vehicles/loco_3250kw.toml"
    train["vehicles"][1]["config"] = "../vehicles/freight_car_4axle.toml"
    table["train"] = train
    for action in table["driver"]:
        action["set"] = {("traction_level" if k == "throttle" else k): v
                         for k, v in action["set"].items()}
    table["output"]["vehicle_signals"] = ["speed_mps", "dynamic_brake_force_N"]
    return scenario_from_table(table, Context(str(path), "scenario", path.parent))


def timed(make, repeat: int) -> dict:
    """Best wall time of ``repeat`` drives of the scenario ``make()`` builds (after one
    that compiles), with the drive's figures."""
    rrscore.Drive(make()).run()
    best = None
    for _ in range(repeat):
        summary = rrscore.Drive(make()).run().summary
        if best is None or summary["wall_time_s"] < best["wall_time_s"]:
            best = summary
    return {"vehicles": best["vehicles"], "sim_time_s": best["sim_time_s"],
            "wall_time_s": best["wall_time_s"], "real_time_factor": best["real_time_factor"],
            "steps": best["steps"], "distance_m": best["distance_m"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per case")
    args = parser.parse_args()
    results = {}
    for case in ("simple_loco", *SWAPS):
        results[case] = timed(lambda c=case: light_engine(c), args.repeat)
    for name in SHIPPED:
        path = CONFIGS / "scenarios" / f"{name}.toml"
        results[name] = timed(lambda p=path: rrscore.load_scenario(p), args.repeat)
    results["simple_loco_freight"] = timed(simple_loco_freight, args.repeat)
    for case, r in results.items():
        print(f"{case:24s} {r['vehicles']:3d} vehicles  {r['sim_time_s']:7.1f} s simulated  "
              f"{r['wall_time_s']:.3f} s wall  {r['real_time_factor']:8.0f}x real time  "
              f"{r['steps']} steps")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
