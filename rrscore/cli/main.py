"""The ``rrs`` command: ``drive``, ``sweep``, ``validate``, ``plugins``, ..., and the
calibration commands ``sensors``, ``calibrate``, ``predict-stop`` and ``fit``."""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import signal
import sys
import time
import tomllib
import traceback
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from ..api import check_file, drive, load_drive, load_scenario
from ..driving.trace import shortfall_note
from ..engine.limitwatch import exceedance_note
from ..jit import compile_notice
from ..model.config import ALLOW_PLUGIN_DIRS, describe_schema
from ..model.errors import (
    ConfigError,
    Interrupted,
    RrsError,
    clear_interruptions,
    each_error,
    interruption_behind,
    is_noted,
    note_interruption,
    on_signal,
    one_error,
    take_interruption,
)
from ..run.drive import Drive, cost_warnings
from ..run.plugins import load_registry
from ..yard.yard import YardScenario
from . import report
from .formats import format_opt, format_value
from .importcmd import add_import_command


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


class CompileNotice:
    """The line ``rrs`` writes when numba starts compiling in a command that drives (the
    first drive on an install pauses for the better part of a minute): on a terminal only,
    as the progress bar."""

    TEXT = ("rrs: numba is compiling the step loop and kernels, once per install (and after "
            "a plugin's kernel changes): the better part of a minute; later drives load them "
            "from its cache")

    def __init__(self, stream=None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty()

    def __call__(self) -> None:
        if self.enabled:  # (from the start of the line: a progress bar may stand there)
            self.stream.write(f"\r{self.TEXT}\n")
            self.stream.flush()


def _drive(args: argparse.Namespace) -> int:
    # rrscore.api decides which engine runs the file: the command line's changes first
    scenario = load_drive(args.scenario, plugin_dirs=args.plugins,
                          adjust=lambda loaded: _overrides(loaded, args),
                          allow_plugin_dirs=args.allow_plugin_dirs)
    if isinstance(scenario, YardScenario):  # a yard file, or dynamics = "events"
        if args.solver is not None:  # (a yard file's was refused by _overrides)
            raise ConfigError("--solver", None, "found a solver for a scenario with dynamics "
                              "'events', expected none: the free-car engine has no solver")
        return _run_yard(scenario, args)
    for warning in (*scenario.warnings, *cost_warnings(scenario)):
        print(f"rrs: warning: {warning}", file=sys.stderr)
    bar = ProgressBar()
    try:
        result = Drive(scenario).run(args.out, progress=bar, wall_limit=args.wall_limit)
    finally:
        bar.close()
    s = result.summary
    print(f"{s['scenario']}: {s['stop_reason']} after {s['sim_time_s']:.1f} s simulated, "
          f"{s['distance_m']:.0f} m, max {s['max_speed_mps'] * 3.6:.1f} km/h, "
          f"{s['wall_time_s']:.2f} s wall ({s['real_time_factor']:.0f}x real time)"
          + exceedance_note(s) + shortfall_note(s)
          + "".join(f"; warning: {w}" for w in s["warnings"]))
    if s["compile_time_s"] >= 0.5:
        print(f"compiled the step loop and kernels with numba in {s['compile_time_s']:.1f} s "
              "(once per install, and after a plugin's kernel changes: later drives load "
              "them from numba's cache)")
    files = sorted(p.name for p in result.out_dir.iterdir()
                   if p.is_file() and not p.name.startswith("."))
    print(f"outputs in {args.out}/: {', '.join(files)}")
    return _ended(s)


def _ended(summary: dict) -> int:
    """The exit status of a drive that ended without raising: 1, with the error, where it
    failed all the same (the solver failed, the drive made no progress)."""
    if "error" in summary:
        print(f"rrs: error: drive ended ({summary['stop_reason']}): {summary['error']}",
              file=sys.stderr)
        return 1
    return 0


def _run_yard(scenario: YardScenario, args: argparse.Namespace) -> int:
    """Drive a yard scenario to ``args.out`` and print what happened."""
    bar = ProgressBar()
    try:
        result = drive(scenario, args.out, progress=bar, wall_limit=args.wall_limit)
    finally:
        bar.close()
    s = result.summary
    cuts = s["cut_reports"]
    placed = sum(1 for c in cuts if c["on_destination"])
    aimed = sum(1 for c in cuts if c["destination"])
    print(f"{s['scenario']}: {s['stop_reason']} after {s['sim_time_s']:.1f} s simulated, "
          f"{s['cars']} cars in {s['cuts']} cuts"
          + (f", {placed} of {aimed} cuts on their destination" if aimed else "")
          + ", events: " + (", ".join(f"{n} {k}" for k, n in s["events"].items()) or "none")
          + f"; {s['wall_time_s']:.2f} s wall ({s['real_time_factor']:.0f}x real time)")
    files = sorted(p.name for p in result.out_dir.iterdir()
                   if p.is_file() and not p.name.startswith("."))
    print(f"outputs in {args.out}/: {', '.join(files)}")
    return _ended(s)


def _overrides(scenario, args: argparse.Namespace):
    """The scenario (or yard scenario) with the command line's --max-time, --solver and
    --set applied."""
    if args.solver is not None and isinstance(scenario, YardScenario):
        raise ConfigError("--solver", None, "found a solver for a yard scenario, expected "
                          "none: the free-car engine has no solver")
    values: dict[str, object] = {}
    if args.max_time is not None:
        values["stop.max_time"] = _value(args.max_time)
    if args.solver is not None:
        values["solver.method"] = args.solver
    if args.format is not None:
        values.update(format_value(scenario, args.format))
    for item in args.set:
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError("--set", None, f"found {item!r}, expected KEY=VALUE")
        values[key.strip()] = _value(text.strip())
    if not values:
        return scenario
    try:
        return scenario.with_values(values)
    except KeyError as exc:
        raise ConfigError("--set", None, f"{exc.args[0]}; give a key path of the resolved "
                          "scenario (see scenario.resolved.toml or yard.resolved.toml), e.g. "
                          "stop.max_time or train.vehicles[1].count") from None


def _value(text: str) -> object:
    """A command-line value: a TOML value (20, 0.5, true, "80 km/h", [1, 2]), else the text
    itself as a string ("10 min")."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def _sweep(args: argparse.Namespace) -> int:
    from ..run.sweep import MAX_WORKERS, Sweep, parse_values

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
    if args.workers is not None and not 1 <= args.workers <= MAX_WORKERS:
        raise RrsError(f"--workers: found {args.workers}, expected 1 to {MAX_WORKERS}")
    if args.workers is not None and args.scheduler:
        raise RrsError("--workers and --scheduler: give one (with --scheduler the "
                       "cluster's workers run the cases)")
    columns = None
    if args.columns is not None:
        columns = [c.strip() for c in args.columns.split(",") if c.strip()]
        if not columns:
            raise RrsError("--columns: found no names, expected summary keys such as "
                           "sim_time_s,max_speed_mps,energy.drive_J")
    scenario = load_scenario(args.scenario, plugin_dirs=args.plugins,
                             allow_plugin_dirs=args.allow_plugin_dirs)
    if args.format is not None:
        scenario = scenario.with_values(format_value(scenario, args.format))
    try:
        sweep = Sweep(scenario, params, "zip" if args.zip else "grid", columns)
    except ConfigError as exc:  # a key or value of --param (the scenario's own: as it is)
        if exc.key == "dynamics":
            raise
        raise ConfigError("--param", None, str(exc)) from None
    except RrsError as exc:  # a summary figure of --columns that does not exist
        raise RrsError(f"--columns: {exc}") from None
    n = len(sweep.cases())
    print(f"{scenario.config['name']}: {n} cases ({'zip' if args.zip else 'grid'} of "
          + ", ".join(f"{k} x{len(v)}" for k, v in params.items()) + ")", flush=True)
    # the rows stream to sweep.csv, none kept here: memory stays bounded for any size
    result = sweep.run(args.out, args.workers or 1, args.scheduler or None, args.save_runs,
                       keep_rows=False)
    print(f"{result.done} of {n} cases done on {result.runner} in "
          f"{result.wall_time_s:.1f} s wall; {result.failures} failed")
    for row in result.first_failures[:5]:
        print(f"  case {row['case']}: {row['error']}")
    if result.failures > 5:
        print(f"  ... and {result.failures - 5} more (column error of sweep.csv)")
    print(f"table in {args.out}/sweep.csv and sweep.json"
          + (", sweep.parquet" if scenario.config["output"]["format"] == "parquet" else "")
          + (f", each case's outputs in {args.out}/runs/" if args.save_runs else ""))
    if result.interrupted:  # (SIGTERM exits as SIGTERM, 143; Ctrl-C as SIGINT, 130)
        raise result.interruption or KeyboardInterrupt()
    return 0


def _validate(args: argparse.Namespace) -> int:
    # every file is checked, a bad one no less than a good one: the errors of all of them,
    # each naming its file, in one run
    errors: list[ConfigError] = []
    for path in args.files:
        try:
            check = check_file(path, args.plugins, allow_plugin_dirs=args.allow_plugin_dirs)
        except ConfigError as exc:
            errors += each_error(exc)
            continue
        print(f"{path}: {check.line()}")
    if errors:
        raise one_error(errors)
    return 0


def _schema(args: argparse.Namespace) -> int:
    from .schema import run

    return run(args.kind, args.out, args.plugins)


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
                    for key, c in (getattr(cls, "controls", {}) or {}).items():
                        doc = c if isinstance(c, str) else (
                            f"{c.doc} (range {c.low:g} to {c.high:g}, initially {c.initial:g})")
                        print(f"      control {key}: {doc}")
                    for key, doc in (getattr(cls, "signals", {}) or {}).items():
                        print(f"      signal {key}: {doc}")
                    for key, spec in (getattr(cls, "states", {}) or {}).items():
                        print(f"      state {key} [{spec.unit}]: {spec.doc}")
                    from .plugincheck import how_it_runs

                    for line in how_it_runs(cls):  # step, rates, on_input; force
                        print(f"      {line}")
    if args.verbose:
        # The keys every vehicle config has whatever its type (body, resistance, adhesion,
        # air brake): the framework's own, listed once after the plugins' params.
        from ..model.vehicle import VEHICLE_SCHEMA

        print("vehicle configs  (built in: rrscore.model.vehicle)")
        for line in describe_schema(VEHICLE_SCHEMA):
            print(f"      {line}")
    return 0


def _check(reg) -> int:
    from .plugincheck import check_registry

    failed = 0
    for check in check_registry(reg):
        kind, name = check.kind, check.name
        plugin = reg.origin[(kind.replace(" ", "_") + "s", name)]
        if check.ok:
            print(f"ok    {kind} {name}  ({plugin})")
        if check.skipped:
            print(f"skip  {kind} {name}  ({plugin}): {check.skipped}")
        for problem in check.problems:
            failed += 1
            print(f"FAIL  {kind} {name}  ({plugin}): {problem}")
        for line in check.runs:  # how its functions run: information, not a failure
            print(f"      {line}")
    return 1 if failed else 0


def _cab(args: argparse.Namespace) -> int:
    from .cab import cab

    scenario = load_scenario(args.scenario, plugin_dirs=args.plugins,
                             allow_plugin_dirs=args.allow_plugin_dirs)
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


#: Runs per drive ``rrs sensors`` makes at most: far more than an experiment repeats (ten
#: million ran on as if hung).
MAX_REPEATS = 10_000


def _sensors(args: argparse.Namespace) -> int:
    from ..calibration.sensors import RecordedDrive, load_layout, log_summary, synthetic_log

    if args.seed < 0:
        raise RrsError(f"--seed: found {args.seed}, expected a whole number >= 0")
    if not 1 <= args.repeats <= MAX_REPEATS:
        raise RrsError(f"--repeats: found {args.repeats}, expected 1 to {MAX_REPEATS}")
    layout = load_layout(args.route or args.runs[0], args.sensors)
    drives = [RecordedDrive.from_dir(d, args.control) for d in args.runs]
    log = synthetic_log(drives, layout, args.repeats, args.noise, args.miss, args.seed)
    log.write(args.out)
    print(f"{args.out}: {log_summary(log)} ({len(layout)} sensors from {layout.source})")
    return 0


def _calibrate(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..calibration.estimation import calibrate
    from ..calibration.model import KinematicModel
    from ..calibration.plots import plot_calibration
    from ..calibration.sensors import load_layout, read_log

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
    from ..model.track import MAX_LENGTH
    from ..model.units import parse_quantity

    if layout is not None and text in layout:
        return layout.position(text)
    try:
        value = float(text)
    except ValueError:
        try:
            value = float(parse_quantity(text, "m"))
        except ValueError:
            value = math.nan
    if not abs(value) <= MAX_LENGTH:  # (NaN too) a position past any route's end
        raise RrsError(f"{what}: found {text!r}, expected a position in metres (5300 or "
                       f"'5.3 km', at most {MAX_LENGTH:g} m either way)"
                       + (" or a point of the route" if layout is not None else ""))
    return value


def _predict_stop(args: argparse.Namespace) -> int:
    from ..calibration.model import KinematicModel
    from ..calibration.sensors import load_layout

    model = KinematicModel.read(args.model)
    layout = load_layout(args.route) if args.route else None
    target = _length(args.target, "--target", layout)
    position = None if args.position is None else _length(args.position, "--position", layout)
    print(model.predict_stop(args.level, target, position, layout).describe())
    return 0


def _fit(args: argparse.Namespace) -> int:
    from ..calibration.fit import fit, load_record, write_fit

    scenario = load_scenario(args.scenario, plugin_dirs=args.plugins,
                             allow_plugin_dirs=args.allow_plugin_dirs)
    record = load_record(args.data)
    names = [k.strip() for k in args.params.split(",") if k.strip()]
    initial = None
    if args.initial:
        try:
            initial = [float(v) for v in args.initial.split(",")]
        except ValueError:
            raise RrsError(f"--initial: found {args.initial!r}, expected numbers (SI) "
                           "separated by commas") from None
        if not all(math.isfinite(v) for v in initial):
            raise RrsError(f"--initial: found {args.initial!r}, expected finite numbers")
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


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line, as every other error of ``rrs`` is
    (argparse prints its usage first): the command, what was wrong and where the help is.
    A value that begins with ``-`` (``--initial -1e30``) reads as an option: the line says
    to write it after ``=``."""

    def error(self, message: str) -> NoReturn:
        option = re.fullmatch(r"argument (--[\w-]+)(?:/\S+)?: expected one argument", message)
        hint = (f"; a value that begins with '-' goes after '=' ({option.group(1)}=-1)"
                if option else "")
        self.exit(2, f"rrs: error: {self.prog}: {message}{hint} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``rrs``."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        release = version("rrscore")
    except PackageNotFoundError:  # run from a source tree that is not installed
        release = "unknown"
    raw = argparse.RawDescriptionHelpFormatter
    parser = OneLineParser(
        prog="rrs", description="rrscore: rail-vehicle physics", formatter_class=raw,
        epilog="example:\n  rrs drive configs/scenarios/freight_50.toml --out out/freight_50"
               "\n\n" + EXIT_CODES)
    parser.add_argument("--version", action="version", version=f"rrs (rrscore) {release}")
    parser.add_argument("--debug", action="store_true",
                        help="show the traceback of an error as well")
    sub = parser.add_subparsers(dest="command", required=True)

    def command(name: str, helptext: str, example: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=helptext, description=helptext, formatter_class=raw,
                           epilog=f"example:\n  {example}\n\n{EXIT_CODES}")
        p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                       help="show the traceback of an error as well")
        return p

    def plugin_opt(p: argparse.ArgumentParser, scenarios: bool = True) -> None:
        p.add_argument("--plugins", action="append", default=[], metavar="DIR",
                       help="also load plugins from DIR (repeatable)")
        if scenarios:  # a shared config's plugin_dirs run its author's code
            p.add_argument(ALLOW_PLUGIN_DIRS, action="store_true",
                           help="import the plugins of a scenario's or yard's plugin_dirs "
                                "even from folders outside its own folder (and, for "
                                "validate, at all)")

    p = command("drive", "run a test drive headless",
                "rrs drive configs/scenarios/freight_50.toml --out out/f50 --max-time '10 min' "
                "--set train.vehicles[1].count=60")
    p.add_argument("scenario", help="scenario TOML file")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--max-time", metavar="TIME",
                   help="override stop.max_time, e.g. 600 or '10 min'")
    p.add_argument("--solver", metavar="NAME",
                   help="override solver.method (rk45, rk23, rk4, or a plugin's)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override any key of the resolved scenario, with units as in a file: "
                        "--set stop.max_time='5 min' --set train.vehicles[1].count=60 "
                        "(repeatable)")
    p.add_argument("--wall-limit", type=float, metavar="SECONDS",
                   help="stop the drive after this much wall-clock time (stop_reason "
                        "wall_limit); outputs are kept")
    report.add_flag(p)
    format_opt(p)
    plugin_opt(p)
    p.set_defaults(func=report.with_report(_drive), drives=True)

    p = command("sweep", "run a scenario over a grid or list of parameter values, in "
                "parallel, into one table of summary figures (sweep.csv, sweep.json); keys "
                "are paths of the [scenario] table as in scenario.resolved.toml, values TOML "
                "literals or quantities with units; the table is the same for any --workers "
                "or --scheduler",
                "rrs sweep configs/scenarios/simple_loco_level.toml "
                "--param 'start.speed=0,20 km/h,40 km/h' --param stop.max_time=30,60 "
                "--workers 2 --out out/sweep")
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
    report.add_flag(p)
    format_opt(p)
    plugin_opt(p)
    p.set_defaults(func=report.with_report(_sweep), drives=True)

    p = command("validate", "check config files (scenario, yard, network, train, route, vehicle)",
                "rrs validate configs/scenarios/freight_50.toml configs/vehicles/*.toml")
    p.add_argument("files", nargs="+")
    plugin_opt(p)
    p.set_defaults(func=_validate)

    p = command("schema", "JSON Schema of a config kind, for editors (see docs/schemas.md)",
                "rrs schema scenario --out schemas/scenario.json")
    p.add_argument("kind", choices=("vehicle", "train", "route", "scenario", "network", "yard"))
    p.add_argument("--out", help="file to write (default: print it)")
    plugin_opt(p, scenarios=False)
    p.set_defaults(func=_schema)

    p = command("plugins", "list loaded plugins and what they provide", "rrs plugins -v")
    p.add_argument("-v", "--verbose", action="store_true", help="also list parameters and keys")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--check", action="store_true",
                   help="exercise every vehicle type and coupler model and report API misuse")
    plugin_opt(p, scenarios=False)
    p.set_defaults(func=_plugins)

    p = command("cab", "drive a scenario yourself from the terminal, in real time",
                "rrs cab configs/scenarios/simple_loco_level.toml --out out/cab --speedup 5")
    p.add_argument("scenario", help="scenario TOML file")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--speedup", type=float, default=1.0,
                   help="simulated seconds per wall-clock second (default 1)")
    plugin_opt(p)
    p.set_defaults(func=_cab)

    p = command("plot", "compare runs: their outputs on shared axes",
                "rrs plot out/a out/b --signals speed,coupler --x distance --out compare.png")
    p.add_argument("runs", nargs="+", metavar="RUN_DIR", help="output directories of drives")
    p.add_argument("--signals", default="speed,traction,coupler",
                   help="comma-separated: speed, traction, coupler, coupler_map")
    p.add_argument("--x", default="time", choices=("time", "distance", "km"),
                   help="x axis: time, distance from the start, or route km (the train's "
                        "front on the route's kilometre posts)")
    p.add_argument("--out", default="compare.png", help="image file to write")
    p.set_defaults(func=_plot)
    report.add_command(command)

    p = command("new", "write a new plugin package (vehicle or coupler) to start from",
                "rrs new vehicle my_loco")
    p.add_argument("kind", choices=("vehicle", "coupler"))
    p.add_argument("name", help="type name, e.g. my_loco (lower case, digits, _)")
    p.add_argument("--dir", help="where to write it (default: ./rrs-NAME)")
    p.set_defaults(func=_new)

    add_import_command(sub, command)

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
    p.set_defaults(func=_fit, drives=True)
    return parser


EXIT_CODES = """exit status:
  0    done (the drive reached a stop condition)
  1    a drive failed: a plugin, coupler model, solver or output writer failed, or the
       drive made no progress; summary.json says why (stop_reason, error)
  2    an error before any drive: a config (file, key path, what was found and what
       was expected), a plugin that cannot be loaded, the command line, or an output
       directory that cannot be written or is in use
  130  interrupted by Ctrl-C (SIGINT); 143 by SIGTERM; 129 by SIGHUP: results so far,
       and a whole summary.json, are kept"""


def _on_signal(signum: int, frame) -> None:
    # the first ends the drive; one while its outputs are written waits for them (see
    # on_signal)
    exc = Interrupted(signum)
    if on_signal(exc):
        raise note_interruption(exc)  # noted: the run raises it again if lost


_SIGNALS = tuple(getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP")
                 if hasattr(signal, n))


def quiet_noted_interruptions(hook: Callable[[Any], None]) -> Callable[[Any], None]:
    """``hook`` (a ``sys.unraisablehook``) that says nothing of a noted interruption: a
    signal met inside a C callback (llvmlite's, while numba compiles) cannot leave it and
    Python reports it as "Exception ignored" with a traceback, though the drive raises it
    again and ends as interrupted, in one line."""
    def quiet(report: Any) -> None:
        if not is_noted(report.exc_value):
            hook(report)
    return quiet


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``rrs``: every failure is one line on stderr and an exit status (see
    :data:`EXIT_CODES`); ``--debug`` shows the traceback as well."""
    args = build_parser().parse_args(argv)
    debug = getattr(args, "debug", False)
    previous = {sig: signal.getsignal(sig) for sig in _SIGNALS}
    unraisable = sys.unraisablehook
    sys.unraisablehook = quiet_noted_interruptions(unraisable)
    try:
        for sig in _SIGNALS:
            signal.signal(sig, _on_signal)
    except ValueError:  # not the main thread (called from a test's thread): no handlers
        previous = {}
    try:
        drives = getattr(args, "drives", False)
        with compile_notice(CompileNotice()) if drives else contextlib.nullcontext():
            return args.func(args)
    except RrsError as exc:
        _report(exc, debug)
        return 1 if getattr(exc, "during_drive", False) else 2
    except KeyboardInterrupt as exc:
        return _interrupted(exc)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError, PermissionError) as exc:
        # a file named on the command line that cannot be read or written (those of a
        # drive are the drive's own errors): the file and why, not an internal error
        if debug:
            traceback.print_exception(exc)
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"rrs: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into a reader that stopped (| head): not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:  # a bug in rrscore or a plugin outside a drive: still one line
        # a signal met in compiled code: behind the error, or noted and lost on the way
        # (numba's dispatcher, interrupted while it compiled, then missed the overload it
        # had not finished: a KeyError with the argument types)
        interruption = interruption_behind(exc) or take_interruption()
        if interruption is not None:
            return _interrupted(interruption)
        hint = "" if debug else " (run again with --debug to see the traceback)"
        _report(exc, debug, f"internal error: {type(exc).__name__}: ", hint)
        return 1
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        sys.unraisablehook = unraisable
        clear_interruptions()


def _interrupted(exc: KeyboardInterrupt) -> int:
    signum = exc.signum if isinstance(exc, Interrupted) else signal.SIGINT
    name = signal.Signals(signum).name
    print(f"rrs: interrupted; results so far were kept ({name})", file=sys.stderr)
    return 128 + int(signum)


def _report(exc: BaseException, debug: bool, prefix: str = "", suffix: str = "") -> None:
    if debug:
        traceback.print_exception(exc)
    # one line per error (several for a file with several mistakes), whatever each holds
    for error in each_error(exc) if isinstance(exc, ConfigError) else [exc]:
        text = " ".join(str(error).split())
        print(f"rrs: error: {prefix}{text}{suffix}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
