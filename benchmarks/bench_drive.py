"""Benchmarks: long trains driven headless, timed.

Cases (``--case``, default both):

* ``spring``: SimpleLoco + 100 loaded cars, spring-damper couplers, full traction
  from a standstill with the slack bunched, 600 simulated seconds on the hilly route.
* ``sa3``: SimpleLoco + 100 cars (85 % loaded) with SA-3 friction draft gears, one
  simulated hour on the 120 km main line.
* ``fine``: the spring case sampled every 0.01 s instead of every second (samples
  come from the solver's dense output, so they should cost little).
* ``brake``: SimpleLoco + 100 loaded, air-braked cars at 80 km/h on level track, an
  emergency application at 2 s, to standstill (the in-train forces of a stop).
* ``descent``: the shipped ``descent_air_50`` scenario: SimpleLoco + 50 loaded,
  air-braked cars held at 60 km/h down 12 km of 8 per mille by the built-in driver on
  the dynamic brake and graduated air brake applications (15 km, about 940 simulated
  seconds).
* ``demo``: the README's demo drive, the shipped ``freight_50`` scenario: SimpleLoco
  + 50 loaded cars over the hilly route, driven by the built-in driver to the speed
  limits and a stop at B (1,334.6 simulated seconds).
* ``rigid``: the shipped ``rigid_40km`` scenario: four 3.25 MW locomotives and 100
  cars of 130 t as one rigid body over the 40 km test line, held at the limit by the
  built-in driver and stopped at B. The same drive is run as a multi-body train for
  the crossing times at the named points (they must agree within 0.5 %), and in
  ALTRIOS (``benchmarks/altrios_drive.py``) when ``altrios`` is importable.
* ``template``: the spring case with its locomotive replaced by the plugin ``rrs new
  vehicle`` writes, set to SimpleLoco's body, force at standstill (450 kN) and power
  (350 kN at 80 km/h); the JSON gives its ``real_time_factor`` and ``ratio_to_builtin``,
  its factor over the spring case's (SimpleLoco) measured in the same run.

Prints the real-time factor (simulated seconds per wall second) and the wall
time of each case; the last line is JSON. Run from the repository root:

    python benchmarks/bench_drive.py [--case spring|sa3|fine|brake|descent|demo|rigid|template]
                                     [--solver rk45|rk4]

It is a measurement, not a test: the figures depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import platform
from pathlib import Path

import numpy as np

import rrscore
from rrscore.model.config import Context
from rrscore.run.scenario import scenario_from_table

CONFIGS = Path(__file__).resolve().parents[1] / "configs"


CASES = {
    "spring": {"train": "freight_100", "route": "hilly_20km", "sim_time": 600.0,
               "payload": 1.0, "repeat": 3, "sample": 1.0},
    "sa3": {"train": "freight_100_sa3", "route": "line_120km", "sim_time": 3600.0,
            "payload": 0.85, "repeat": 1, "sample": 1.0},
    "fine": {"train": "freight_100", "route": "hilly_20km", "sim_time": 600.0,
             "payload": 1.0, "repeat": 1, "sample": 0.01},
    "brake": {"train": "freight_100_air", "route": "level_30km", "sim_time": 300.0,
              "payload": 1.0, "repeat": 1, "sample": 1.0,
              "start": {"position": "2 km", "speed": "80 km/h"},
              "driver": [{"at_time": 2.0, "set": {"brake_valve": 5}}], "standstill": True},
    "descent": {"scenario": "descent_air_50", "repeat": 3},
    "demo": {"scenario": "freight_50", "repeat": 1},
    "rigid": {"scenario": "rigid_40km", "repeat": 5, "multibody": True},
    "template": {"template": True, "sim_time": 600.0, "repeat": 3},
}


def scenario(train: str, sim_time: float, solver: str, route: str = "hilly_20km",
             payload: float = 1.0, sample: float = 1.0, start: dict | None = None,
             driver: list | None = None, standstill: bool = False) -> rrscore.Scenario:
    """Full traction from standstill with slack bunched, unless ``start`` and ``driver``
    say otherwise; ``standstill`` ends the drive when the train stops."""
    table = {
        "name": f"benchmark {train}",
        "train": f"trains/{train}.toml",
        "route": f"routes/{route}.toml",
        "start": start or {"position": "300 m", "slack": "bunched"},
        "solver": {"method": solver},
        "driver": driver or [{"at_time": 0.0, "set": {"traction_level": 1.0}}],
        "stop": {"max_time": sim_time, "standstill": standstill},
        "output": {"sample_interval": sample},
    }
    sc = scenario_from_table(table, Context("<benchmark>", "scenario", CONFIGS))
    if payload != 1.0:  # the train file's cars are fully loaded; lighten them in place
        table["train"] = sc.resolved()["scenario"]["train"]
        for entry in table["train"]["vehicles"][1:]:
            entry["payload_fraction"] = payload
        sc = scenario_from_table(table, Context("<benchmark>", "scenario", CONFIGS))
    return sc


def train_cases() -> list[str]:
    """The cases built here from a train file (the others run a shipped scenario)."""
    return sorted(k for k, v in CASES.items() if "train" in v)


def case_scenario(case: str, sim_time: float | None = None,
                  solver: str = "rk45") -> rrscore.Scenario:
    """A train case's scenario with ``solver``, over ``sim_time`` (default: the case's
    own simulated time)."""
    if case not in train_cases():
        raise SystemExit(f"case {case!r} is a whole scenario: pick one of {train_cases()}")
    spec = {k: v for k, v in CASES[case].items() if k != "repeat"}
    sim = spec.pop("sim_time")
    return scenario(spec.pop("train"), sim_time or sim, solver, **spec)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--case", choices=sorted(CASES), action="append")
    parser.add_argument("--solver", default="rk45")
    parser.add_argument("--sim-time", type=float,
                        help="override the case's simulated time (not rigid's, whose whole "
                             "drive is compared)")
    parser.add_argument("--repeat", type=int, help="runs per case; the best is reported")
    args = parser.parse_args()
    results = [run_case(name, args) for name in (args.case or list(CASES))]
    print(json.dumps(results if len(results) > 1 else results[0]))


def timing(best: dict, runs: list[dict], solver: str) -> dict:
    """The figures every case reports, from the summaries of its runs (``best`` the
    fastest of them)."""
    return {
        "vehicles": best["vehicles"],
        "solver": solver,
        "sim_time_s": round(best["sim_time_s"], 3),
        "wall_time_s": round(best["wall_time_s"], 4),
        "wall_time_median_s": round(float(np.median([s["wall_time_s"] for s in runs])), 4),
        "real_time_factor": round(best["real_time_factor"], 1),
        "steps": best["steps"],
        "rhs_evaluations": best["rhs_evaluations"],
    }


def shipped_scenario(case: dict, solver: str, sim_time: float | None) -> rrscore.Scenario:
    """A case's shipped scenario as it is, but for the solver and (if given) the simulated
    time asked."""
    sc = rrscore.load_scenario(CONFIGS / "scenarios" / f"{case['scenario']}.toml")
    changes: dict = {"solver.method": solver} if solver != "rk45" else {}
    if sim_time:
        changes["stop.max_time"] = sim_time
    return sc.with_values(changes) if changes else sc


def template_scenario(sim_time: float, solver: str) -> rrscore.Scenario:
    """The spring case with the plugin ``rrs new vehicle`` writes as its locomotive (see
    the module), generated into a temporary directory and loaded from there."""
    import importlib
    import sys
    import tempfile

    from rrscore.cli.template import render
    from rrscore.run.plugins import load_registry

    where = Path(tempfile.mkdtemp(prefix="rrs-bench-"))
    render("vehicle", "bench_loco", where / "rrs-bench-loco")
    sys.path.insert(0, str(where / "rrs-bench-loco"))
    plugin = importlib.import_module("rrs_bench_loco.plugin")
    registry = load_registry(extra=[plugin])
    loco = {"vehicle": {"type": "bench_loco", "name": "template loco", "empty_mass": "184 t",
                        "length": "32.8 m", "num_axis": 8, "wheel_diameter": "1.25 m",
                        "wheelset_inertia": "250 kg*m^2",
                        "resistance": {"formula": "loco_power", "starting": False},
                        "adhesion": {"formula": "curtius_kniffler"}},
            "params": {"max_force": "450 kN", "power": 350e3 * 80 / 3.6,
                       "brake_force": "350 kN"}}
    table = {
        "name": "benchmark: the template's locomotive + 100 loaded cars",
        "train": {"coupling": {"model": "spring_damper",
                               "params": {"stiffness": "20 MN/m", "damping": "200 kN*s/m",
                                          "slack": "11 mm"}},
                  "vehicles": [{"config": loco},
                               {"config": "vehicles/freight_car_4axle.toml", "count": 100,
                                "payload_fraction": 1.0}]},
        "route": "routes/hilly_20km.toml",
        "start": {"position": "300 m", "slack": "bunched"},
        "solver": {"method": solver},
        "driver": [{"at_time": 0.0, "set": {"traction_level": 1.0}}],
        "stop": {"max_time": sim_time},
        "output": {"sample_interval": 1.0},
    }
    return scenario_from_table(table, Context("<benchmark>", "scenario", CONFIGS), registry)


def run_template_case(name: str, args: argparse.Namespace) -> dict:
    """The template's locomotive against SimpleLoco on the same drive, in turns (best of
    the repeats each): the template's figures and its ratio to SimpleLoco's."""
    case = CASES[name]
    sim = args.sim_time or case["sim_time"]
    template = template_scenario(sim, args.solver)
    builtin = case_scenario("spring", sim, args.solver)
    runs: dict[str, list[dict]] = {"template": [], "builtin": []}
    for _ in range(args.repeat or case["repeat"]):
        runs["template"].append(rrscore.Drive(template).run().summary)
        runs["builtin"].append(rrscore.Drive(builtin).run().summary)
    best = min(runs["template"], key=lambda s: s["wall_time_s"])
    ref = min(runs["builtin"], key=lambda s: s["wall_time_s"])
    adapters = rrscore.Run(template).system.adapters[0]
    figures = {
        "benchmark": name,
        **timing(best, runs["template"], args.solver),
        "compiled": all(a.compiled for a in (adapters.step, adapters.rates, adapters.input)),
        "builtin_real_time_factor": round(ref["real_time_factor"], 1),
        "builtin_steps": ref["steps"],
        "ratio_to_builtin": round(best["real_time_factor"] / ref["real_time_factor"], 3),
        "distance_m": round(best["distance_m"], 4),
        "python": platform.python_version(),
        "machine": platform.machine(),
    }
    print(f"{name}: the template's locomotive + 100 cars, {figures['sim_time_s']:.0f} s "
          f"simulated in {figures['wall_time_s']:.2f} s wall: "
          f"{figures['real_time_factor']:.0f}x real time ({figures['steps']} steps); "
          f"SimpleLoco {figures['builtin_real_time_factor']:.0f}x ({ref['steps']} steps): "
          f"ratio {figures['ratio_to_builtin']:.2f}")
    return figures


def run_case(name: str, args: argparse.Namespace) -> dict:
    """Run one case (best of its repeats); print a line and return its figures."""
    case = CASES[name]
    if case.get("multibody"):
        return run_rigid_case(name, args)
    if case.get("template"):
        return run_template_case(name, args)
    sc = (shipped_scenario(case, args.solver, args.sim_time) if "scenario" in case
          else case_scenario(name, args.sim_time, args.solver))
    runs = [rrscore.Drive(sc).run().summary for _ in range(args.repeat or case["repeat"])]
    best = min(runs, key=lambda s: s["wall_time_s"])
    resolved = sc.resolved()["scenario"]
    figures = {
        "benchmark": name,
        "train": case.get("train", resolved["train"]["name"]),
        "route": case.get("route", resolved["route"]["name"]),
        "sample_interval_s": sc.config["output"]["sample_interval"],
        "rrscore": str(Path(rrscore.__file__).parent),
        **timing(best, runs, args.solver),
        "events": best["events"],
        "distance_m": round(best["distance_m"], 4),
        "max_coupler_tension_N": round(best["max_coupler_tension_N"], 1),
        "max_coupler_compression_N": round(best["max_coupler_compression_N"], 1),
        "python": platform.python_version(),
        "machine": platform.machine(),
    }
    print(f"{name}: {figures['vehicles']} vehicles, {figures['sim_time_s']:.0f} s simulated "
          f"in {figures['wall_time_s']:.2f} s wall: {figures['real_time_factor']:.0f}x real time "
          f"({figures['steps']} steps, {figures['rhs_evaluations']} RHS evaluations, "
          f"{figures['distance_m'] / 1000:.1f} km)")
    return figures


def run_rigid_case(name: str, args: argparse.Namespace) -> dict:
    """The rigid-train drive: timed (best of its repeats), then run once as a multi-body
    train to compare crossing times, and in ALTRIOS if it is importable."""
    case = CASES[name]
    # the whole drive: its crossing times are compared (--sim-time does not apply)
    sc = shipped_scenario(case, args.solver, None)
    runs = [rrscore.Drive(sc).run().summary for _ in range(args.repeat or case["repeat"])]
    best = min(runs, key=lambda s: s["wall_time_s"])
    # the same drive, every car a body on its couplers (their modes need short steps)
    multi = rrscore.Drive(sc.with_values({"dynamics": "multibody", "solver.control_step":
                                          "0.05 s", "solver.max_step": "0.5 s"})).run().summary
    crossing = {p["point"]: p["time_s"] for p in best["points"]}
    crossing_multi = {p["point"]: p["time_s"] for p in multi["points"]}
    differences = {k: (crossing[k] - crossing_multi[k]) / crossing_multi[k]
                   for k in crossing if k in crossing_multi}
    figures = {
        "benchmark": name,
        "scenario": case["scenario"],
        **timing(best, runs, args.solver),
        "mean_step_s": round(best["sim_time_s"] / best["steps"], 3),
        "distance_m": round(best["distance_m"], 1),
        "crossing_times_s": {k: round(v, 2) for k, v in crossing.items()},
        "multibody_crossing_times_s": {k: round(v, 2) for k, v in crossing_multi.items()},
        "max_crossing_difference": round(max(map(abs, differences.values())), 6),
        "multibody_wall_time_s": round(multi["wall_time_s"], 3),
        "multibody_steps": multi["steps"],
        "altrios": None,
        "python": platform.python_version(),
        "machine": platform.machine(),
    }
    try:
        from altrios_drive import run_altrios_drive  # next to this script
        alt = run_altrios_drive()
    except ImportError:
        alt = None
    if alt is not None:
        figures["altrios"] = {k: alt[k] for k in ("altrios_version", "wall_time_s",
                                                  "sim_time_s", "crossing_times_s", "steps")}
        figures["wall_time_over_altrios"] = round(best["wall_time_s"] / alt["wall_time_s"], 1)
    print(f"{name}: {figures['vehicles']} vehicles as one body, {figures['sim_time_s']:.0f} s "
          f"simulated in {figures['wall_time_s']:.3f} s wall: "
          f"{figures['real_time_factor']:.0f}x real time ({figures['steps']} steps of "
          f"{figures['mean_step_s']:.2f} s on average); as a multi-body train "
          f"{figures['multibody_wall_time_s']:.1f} s, crossing times within "
          f"{100 * figures['max_crossing_difference']:.3f} %"
          + (f"; ALTRIOS {alt['altrios_version']} {alt['wall_time_s'] * 1000:.1f} ms "
             f"(rrscore takes {figures['wall_time_over_altrios']:.0f}x as long)" if alt else
             "; ALTRIOS not importable"))
    return figures


if __name__ == "__main__":
    main()
