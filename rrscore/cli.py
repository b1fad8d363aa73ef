"""The ``rrs`` command: ``drive``, ``sweep``, ``validate``, ``plugins``, ..., and the
calibration commands ``sensors``, ``calibrate``, ``predict-stop`` and ``fit``."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence

from .config import describe_schema
from .errors import RrsError
from .pluginmanager import load_registry
from .scenario import load_scenario, validate_file
from .simulation import Drive


class ProgressBar:
    """A one-line progress bar on a terminal; silent when stderr is not a terminal."""

    def __init__(self, stream=None, width: int = 30) -> None:
        self.stream = stream or sys.stderr
        self.width = width
        self.enabled = self.stream.isatty()
        self._last = 0.0

    def __call__(self, fraction: float, t: float, speed: float) -> None:
        now = time.monotonic()
        if not self.enabled or (now - self._last < 0.1 and fraction < 1.0):
            return
        self._last = now
        filled = int(self.width * min(max(fraction, 0.0), 1.0))
        bar = "#" * filled + "-" * (self.width - filled)
        self.stream.write(f"\r[{bar}] {100 * fraction:5.1f}%  t = {t:8.1f} s  "
                          f"v = {speed * 3.6:6.1f} km/h")
        self.stream.flush()

    def close(self) -> None:
        """End the bar's line."""
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()


def _drive(args: argparse.Namespace) -> int:
    scenario = load_scenario(args.scenario, plugin_dirs=args.plugins)
    bar = ProgressBar()
    try:
        result = Drive(scenario).run(args.out, progress=bar)
    finally:
        bar.close()
    s = result.summary
    print(f"{s['scenario']}: {s['stop_reason']} after {s['sim_time_s']:.1f} s simulated, "
          f"{s['distance_m']:.0f} m, max {s['max_speed_mps'] * 3.6:.1f} km/h, "
          f"{s['wall_time_s']:.2f} s wall ({s['real_time_factor']:.0f}x real time)")
    files = sorted(p.name for p in result.out_dir.iterdir() if p.is_file())
    print(f"outputs in {args.out}/: {', '.join(files)}")
    return 0


def _sweep(args: argparse.Namespace) -> int:
    from .sweep import Sweep, parse_values

    params: dict[str, list] = {}
    for text in args.param:
        key, eq, values = text.partition("=")
        key = key.strip()
        if not eq or not key:
            raise RrsError(f"--param: found {text!r}, expected KEY=V1,V2,... "
                           "(e.g. start.speed=0,20 km/h,40 km/h)")
        if key in params:
            raise RrsError(f"--param: {key} given twice, expected each key once")
        params[key] = parse_values(values)
        if not params[key]:
            raise RrsError(f"--param {key}: found no values, expected KEY=V1,V2,...")
    if args.workers is not None and args.workers < 1:
        raise RrsError(f"--workers: found {args.workers}, expected 1 or more")
    if args.workers is not None and args.scheduler:
        raise RrsError("--workers and --scheduler: give one (with --scheduler the "
                       "cluster's workers run the cases)")
    columns = None
    if args.columns is not None:
        columns = [c.strip() for c in args.columns.split(",") if c.strip()]
        if not columns:
            raise RrsError("--columns: found no names, expected summary keys such as "
                           "sim_time_s,max_speed_mps,energy.drive_J")
    scenario = load_scenario(args.scenario, plugin_dirs=args.plugins)
    sweep = Sweep(scenario, params, "zip" if args.zip else "grid", columns)
    n = len(sweep.cases())
    print(f"{scenario.config['name']}: {n} cases ({'zip' if args.zip else 'grid'} of "
          + ", ".join(f"{k} x{len(v)}" for k, v in params.items()) + ")", flush=True)
    result = sweep.run(args.out, args.workers or 1, args.scheduler or None, args.save_runs)
    failed = result.failed
    print(f"{len(result.rows)} of {n} cases done on {result.runner} in "
          f"{result.wall_time_s:.1f} s wall; {len(failed)} failed")
    for row in failed[:5]:
        print(f"  case {row['case']}: {row['error']}")
    if len(failed) > 5:
        print(f"  ... and {len(failed) - 5} more (column error of sweep.csv)")
    print(f"table in {args.out}/sweep.csv and sweep.json"
          + (f", each case's outputs in {args.out}/runs/" if args.save_runs else ""))
    if result.interrupted:
        raise KeyboardInterrupt
    return 0


def _validate(args: argparse.Namespace) -> int:
    for path in args.files:
        print(f"{path}: ok, {validate_file(path, plugin_dirs=args.plugins)}")
    return 0


def _plugins(args: argparse.Namespace) -> int:
    reg = load_registry(args.plugins)
    if args.check:
        return _check(reg)
    if args.json:
        print(json.dumps([{"name": p.name, "source": p.source, "provides": p.provides}
                          for p in reg.plugins], indent=2))
        return 0
    for info in reg.plugins:
        print(f"{info.name}  ({info.source})")
        for kind, names in info.provides.items():
            if kind == "hooks":
                print(f"  hooks: {', '.join(names)}")
                continue
            for name in names:
                cls = reg.get(kind, name)
                desc = getattr(cls, "description", "") or (cls.__doc__ or "").split("\n")[0]
                print(f"  {kind[:-1].replace('_', ' ')} {name}: {desc}")
                if args.verbose:
                    for line in describe_schema(getattr(cls, "params", {}) or {}, "params"):
                        print(f"      {line}")
                    bound = getattr(cls, "key_bindings", {}) or {}
                    for key, doc in (getattr(cls, "keys", {}) or {}).items():
                        char = f" ({bound[key]})" if key in bound else ""
                        print(f"      key {key}{char}: {doc}")
                    for key, doc in (getattr(cls, "controls", {}) or {}).items():
                        print(f"      control {key}: {doc}")
                    for key, spec in (getattr(cls, "states", {}) or {}).items():
                        print(f"      state {key} [{spec.unit}]: {spec.doc}")
    return 0


def _check(reg) -> int:
    from .plugincheck import check_registry

    failed = 0
    for (kind, name), problems in check_registry(reg).items():
        plugin = reg.origin[(kind.replace(" ", "_") + "s", name)]
        if not problems:
            print(f"ok    {kind} {name}  ({plugin})")
        for problem in problems:
            skipped = problem.startswith("not exercised")
            failed += not skipped
            print(f"{'skip' if skipped else 'FAIL'}  {kind} {name}  ({plugin}): {problem}")
    return 1 if failed else 0


def _cab(args: argparse.Namespace) -> int:
    from .cab import cab

    scenario = load_scenario(args.scenario, plugin_dirs=args.plugins)
    s = cab(scenario, args.out, args.speedup).summary
    print(f"{s['scenario']}: {s['stop_reason']} after {s['sim_time_s']:.1f} s, "
          f"{s['distance_m']:.0f} m; outputs in {args.out}/")
    return 0


def _plot(args: argparse.Namespace) -> int:
    from .compare import plot_runs

    signals = [s.strip() for s in args.signals.split(",") if s.strip()]
    print(plot_runs(args.runs, args.out, signals, args.x))
    return 0


def _new(args: argparse.Namespace) -> int:
    from .template import names, render

    dest = args.dir or names(args.name)["dist"]
    for path in render(args.kind, args.name, dest):
        print(path)
    print(f"next: pip install -e \"{dest}[test]\" && (cd {dest} && pytest) && rrs plugins")
    return 0


def _sensors(args: argparse.Namespace) -> int:
    from .calibration.sensors import RecordedDrive, load_layout, log_summary, synthetic_log

    layout = load_layout(args.route or args.runs[0], args.sensors)
    drives = [RecordedDrive.from_dir(d, args.control) for d in args.runs]
    log = synthetic_log(drives, layout, args.repeats, args.noise, args.miss, args.seed)
    log.write(args.out)
    print(f"{args.out}: {log_summary(log)} ({len(layout)} sensors from {layout.source})")
    return 0


def _calibrate(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .calibration.estimation import calibrate
    from .calibration.model import KinematicModel
    from .calibration.plots import plot_calibration
    from .calibration.sensors import load_layout, read_log

    layout = load_layout(args.route, args.sensors)
    log = read_log(args.log, layout)
    cal = calibrate(log, layout)
    if not cal.velocity:
        raise RrsError(f"{args.log}: no steady velocity of any level could be measured "
                       "(each level needs two neighbouring sensor hits after its change)")
    model = KinematicModel.from_calibration(cal, str(args.log))
    model.write(args.out)
    plot = Path(args.plot or Path(args.out).with_suffix(".png"))
    plot_calibration(cal, model, layout, plot)
    for lv, m in sorted(model.levels.items()):
        stop = (f"stop {m.stop_distance:8.2f} m {m.stop_time:6.2f} s"
                f" ({'measured' if m.stop_measured else 'model'})")
        print(f"level {lv:3d}: {m.velocity:8.4f} +- {m.velocity_std:.4f} m/s "
              f"(n {m.velocity_n}), {stop}")
    for c in sorted(model.changes.values(), key=lambda c: (c.start, c.end)):
        print(f"change {c.start:3d} -> {c.end:3d}: {c.acceleration:+.4f} +- {c.std:.4f} m/s^2 "
              f"(n {c.n}, {'finished' if c.finished else 'unfinished'} at the next sensor)")
    for f in cal.findings:
        print(f"flagged: {f}")
    print(f"model in {args.out}, plot in {plot}")
    return 0


def _length(text: str, what: str, layout=None) -> float:
    from .units import parse_quantity

    if layout is not None and text in layout:
        return layout.position(text)
    try:
        return float(text)
    except ValueError:
        pass
    try:
        return float(parse_quantity(text, "m"))
    except ValueError:
        raise RrsError(f"{what}: found {text!r}, expected a position in metres (5300 or "
                       "'5.3 km')" + (" or a point of the route" if layout is not None else "")
                       ) from None


def _predict_stop(args: argparse.Namespace) -> int:
    from .calibration.model import KinematicModel
    from .calibration.sensors import load_layout

    model = KinematicModel.read(args.model)
    layout = load_layout(args.route) if args.route else None
    target = _length(args.target, "--target", layout)
    position = None if args.position is None else _length(args.position, "--position", layout)
    print(model.predict_stop(args.level, target, position, layout).describe())
    return 0


def _fit(args: argparse.Namespace) -> int:
    from .calibration.fit import fit, load_record, write_fit

    scenario = load_scenario(args.scenario, plugin_dirs=args.plugins)
    record = load_record(args.data)
    names = [k.strip() for k in args.params.split(",") if k.strip()]
    initial = None
    if args.initial:
        try:
            initial = [float(v) for v in args.initial.split(",")]
        except ValueError:
            raise RrsError(f"--initial: found {args.initial!r}, expected numbers (SI) "
                           "separated by commas") from None
        if len(initial) != len(names):
            raise RrsError(f"--initial: found {len(initial)} values, expected one per "
                           f"parameter ({len(names)})")
    result = fit(scenario, record, names, initial)
    files = write_fit(result, record, args.out)
    unit = "m/s" if record.kind == "series" else "s"
    for p in result.summary()["parameters"]:
        print(f"{p['key']}: {p['fitted']:.6g} +- {p['std_error']:.3g} "
              f"(from {p['initial']:.6g})")
    print(f"residuals: rms {result.rms:.4g} {unit} over {result.residuals.size} points; "
          f"{result.nfev} simulated drives; {result.message}")
    print(f"outputs in {args.out}/: {', '.join(f.name for f in files)}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``rrs``."""
    parser = argparse.ArgumentParser(prog="rrs", description="rrscore: rail-vehicle physics")
    sub = parser.add_subparsers(dest="command", required=True)

    def plugin_opt(p: argparse.ArgumentParser) -> None:
        p.add_argument("--plugins", action="append", default=[], metavar="DIR",
                       help="also load plugins from DIR (repeatable)")

    p = sub.add_parser("drive", help="run a test drive headless")
    p.add_argument("scenario", help="scenario TOML file")
    p.add_argument("--out", required=True, help="output directory")
    plugin_opt(p)
    p.set_defaults(func=_drive)

    p = sub.add_parser(
        "sweep", help="run a scenario over a grid or list of parameter values, in parallel",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run a scenario once per combination of parameter values (on local "
        "processes or a Dask cluster) and write one table of summary figures, "
        "sweep.csv and sweep.json, with the parameters as columns.",
        epilog="example:\n  rrs sweep configs/scenarios/simple_loco_level.toml \\\n"
        "      --param 'start.speed=0,20 km/h,40 km/h' --param stop.max_time=30,60 \\\n"
        "      --workers 2 --out out/sweep\n\n"
        "keys are paths of the [scenario] table as in scenario.resolved.toml\n"
        "(stop.max_time, train.vehicles[1].count); values are TOML literals or\n"
        "quantities with units. The table is the same for any --workers or --scheduler.")
    p.add_argument("scenario", help="scenario TOML file")
    p.add_argument("--param", action="append", default=[], required=True,
                   metavar="KEY=V1,V2,...", help="a key path and its values (repeatable)")
    p.add_argument("--zip", action="store_true", help="run the i-th values of every "
                   "--param together (default: every combination)")
    p.add_argument("--workers", type=int, help="local processes (default 1)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="run on this Dask scheduler "
                   "(tcp://host:8786); needs the dask extra")
    p.add_argument("--columns", metavar="A,B,...", help="summary figures to tabulate, "
                   "nested ones with dots (default: sim_time_s, distance_m, max_speed_mps, "
                   "final_speed_mps, max_coupler_tension_N, max_coupler_compression_N, "
                   "stop_reason)")
    p.add_argument("--save-runs", action="store_true",
                   help="also write each case's outputs to OUT/runs/case_NNNN")
    p.add_argument("--out", required=True, help="output directory")
    plugin_opt(p)
    p.set_defaults(func=_sweep)

    p = sub.add_parser("validate", help="check config files (scenario, train, route, vehicle)")
    p.add_argument("files", nargs="+")
    plugin_opt(p)
    p.set_defaults(func=_validate)

    p = sub.add_parser("plugins", help="list loaded plugins and what they provide")
    p.add_argument("-v", "--verbose", action="store_true", help="also list parameters and keys")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--check", action="store_true",
                   help="exercise every vehicle type and coupler model and report API misuse")
    plugin_opt(p)
    p.set_defaults(func=_plugins)

    p = sub.add_parser("cab", help="drive a scenario yourself from the terminal, in real time")
    p.add_argument("scenario", help="scenario TOML file")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--speedup", type=float, default=1.0,
                   help="simulated seconds per wall-clock second (default 1)")
    plugin_opt(p)
    p.set_defaults(func=_cab)

    p = sub.add_parser("plot", help="compare runs: their outputs on shared axes")
    p.add_argument("runs", nargs="+", metavar="RUN_DIR", help="output directories of drives")
    p.add_argument("--signals", default="speed,traction,coupler",
                   help="comma-separated: speed, traction, coupler, coupler_map")
    p.add_argument("--x", default="time", choices=("time", "distance"), help="x axis")
    p.add_argument("--out", default="compare.png", help="image file to write")
    p.set_defaults(func=_plot)

    p = sub.add_parser("new", help="write a new plugin package (vehicle or coupler) to start from")
    p.add_argument("kind", choices=("vehicle", "coupler"))
    p.add_argument("name", help="type name, e.g. my_loco (lower case, digits, _)")
    p.add_argument("--dir", help="where to write it (default: ./rrs-NAME)")
    p.set_defaults(func=_new)

    p = sub.add_parser("sensors", help="sensor log (CSV) of simulated drives: sensor hits, "
                       "level commands, stops")
    p.add_argument("runs", nargs="+", metavar="RUN_DIR", help="output directories of drives")
    p.add_argument("--out", required=True, help="sensor log CSV to write")
    p.add_argument("--route", help="route, scenario or run directory whose named points are "
                   "the sensors (default: the first run's route)")
    p.add_argument("--sensors", default="*", help="only points matching this pattern (S*)")
    p.add_argument("--repeats", type=int, default=1, help="runs per drive, each with its own "
                   "noise (default 1)")
    p.add_argument("--noise", type=float, default=0.0, help="timing noise, s (std)")
    p.add_argument("--miss", type=float, default=0.0, help="probability of a missed hit")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--control", default="level", help="the control the commands set")
    p.set_defaults(func=_sensors)

    p = sub.add_parser("calibrate", help="kinematic model (TOML) from a sensor log")
    p.add_argument("log", help="sensor log CSV")
    p.add_argument("--route", required=True, help="route, scenario or run directory with "
                   "the sensors as named points")
    p.add_argument("--sensors", default="*", help="only points matching this pattern (S*)")
    p.add_argument("--out", required=True, help="model TOML to write")
    p.add_argument("--plot", help="figure to write (default: the model's name with .png)")
    p.set_defaults(func=_calibrate)

    p = sub.add_parser("predict-stop", help="where to give the stop command to stop at a "
                       "target")
    p.add_argument("model", help="kinematic model TOML (rrs calibrate)")
    p.add_argument("--level", type=int, required=True, help="current speed level")
    p.add_argument("--target", required=True, help="where the front should stop: metres, "
                   "'5.3 km', or a point of --route")
    p.add_argument("--position", help="where the front is now")
    p.add_argument("--route", help="route with the sensors: name the sensor to act on")
    p.set_defaults(func=_predict_stop)

    p = sub.add_parser("fit", help="fit scenario parameters to a recorded drive")
    p.add_argument("scenario", help="scenario TOML file")
    p.add_argument("--data", required=True, help="drive output directory, time series CSV "
                   "(time_s, speed_mps) or sensor log")
    p.add_argument("--params", required=True, help="comma-separated key paths, e.g. "
                   "train.vehicles[0].config.params.F_max")
    p.add_argument("--initial", help="starting values (SI), comma-separated (default: the "
                   "scenario's)")
    p.add_argument("--out", required=True, help="output directory")
    plugin_opt(p)
    p.set_defaults(func=_fit)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``rrs``; errors in configs and plugins print one message, no traceback."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except RrsError as exc:
        print(f"rrs: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("rrs: interrupted; results so far were kept", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into a reader that stopped (| head): not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
