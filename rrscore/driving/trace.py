"""Driving to a recorded trace: a CSV of time and speed, or of time and control levels.

``[scenario.trace]`` names the file (relative to the scenario file), its ``kind`` and its
columns with their units:

* ``kind = "speed"``: the trace driver (:func:`follow`, compiled like the built-in
  driver and called by the event loop in its place) sets ``traction_level`` and
  ``brake_level`` on every vehicle that declares them, to follow the recorded speed:
  the force for the recorded acceleration (feed-forward) and for the speed error
  (proportional-integral feedback), as a level of the train's full tractive force
  (``force_per_level``), within the controls' range
  (traction above zero, brake below). Where the train cannot follow (the command at full
  traction or full brake and the speed more than ``tolerance`` off the trace) it is a
  shortfall, reported with its interval, position, largest speed error and the force and
  power missing (:meth:`TraceDriver.report`).
* ``kind = "commands"``: each recorded control level is set at its time on every vehicle
  that declares the control (as a driver program's ``set``), at each row where a level
  changes, each change a ``driver`` event (:class:`CommandReplay`).

Times are the drive's simulated times; before the first row the first row holds, after
the last the last.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit

from ..engine.adapters import DECIDE, DRIVER_PARAMS
from ..model.config import Context, FreeTable, Param, resolve_path
from ..model.errors import ConfigError
from ..model.events import Event
from ..model.train import Train
from ..model.units import UnitError, convert, dimension_name
from ..model.vehicle import control_of
from ..physics.tables import interp_one
from .autodriver import TRACTION, CommandDriver, send_command
from .program import Action

TRACE_SCHEMA = {
    "file": Param(kind=str, default=None, doc="the trace: a CSV file with a header row, "
                  "relative to the scenario file; none: no trace"),
    "kind": Param(kind=str, default="speed", choices=("speed", "commands"),
                  doc="speed: the trace driver follows the recorded speed; commands: the "
                      "recorded control levels are set at their times"),
    "time_column": Param(kind=str, default="time_s", doc="the column of times"),
    "time_unit": Param(kind=str, default="s", doc="the unit of the times (s, min, h)"),
    "speed_column": Param(kind=str, default="speed_mps", doc="the column of speeds "
                          "(kind = 'speed')"),
    "speed_unit": Param(kind=str, default="m/s", doc="the unit of the speeds (m/s, km/h, "
                        "mph)"),
    "controls": FreeTable("kind = 'commands': control name = column, e.g. "
                          "{traction_level = 'throttle', brake_level = 'brake'}; levels in "
                          "the control's own range"),
    "tolerance": Param("m/s", 0.5, "a speed error beyond this with the controls at their "
                       "limit is a shortfall", min=0.0, exclusive_min=True),
    "update_interval": Param("s", 1.0, "time between the trace driver's decisions", min=0.0,
                             exclusive_min=True),
    "force_per_level": Param("N", None, "the train's tractive force at full traction level "
                             "(the driver sets the level as the force it wants over this, and "
                             "the brake level likewise); none: the sum of the F_max or "
                             "max_force parameters of the vehicles with a traction_level",
                             min=0.0, exclusive_min=True),
    "time_constant": Param("s", 4.0, "the driver closes a speed error over about this time, "
                           "and takes the recorded acceleration over this time ahead",
                           min=0.0, exclusive_min=True),
    "integral_time": Param("s", 20.0, "integral time of the force it learns (resistance, "
                           "grades)", min=0.0, exclusive_min=True),
}
"""The ``[scenario.trace]`` table."""


#: Rows of the trace driver's table (:attr:`TraceDriver.table`): the trace (times,
#: speeds, padded with its last row), what it logged at each decision (a column per
#: update interval from the trace's start, the last column for all after: the decision's
#: time, the front's position, the lead's speed, the command it wanted before limiting,
#: the recorded speed then), and its settings (first entries of the last row: the
#: effective mass, the force per level, the time constant, the integral time, the crawl
#: speed).
T_TIME, T_SPEED, L_TIME, L_FRONT, L_SPEED, L_WANTED, L_RECORDED, SETTINGS = range(8)
ROWS = 8
#: Below this speed with the trace at standstill the train is held with the full brake, m/s.
_CRAWL = 0.3


@dataclass(frozen=True)
class Trace:
    """A checked trace: its file, kind, times (s) and, per kind, speeds (m/s) or control
    levels by control name (one array each, the times' length)."""

    file: str
    kind: str
    times: np.ndarray
    speeds: np.ndarray | None
    levels: tuple[tuple[str, np.ndarray], ...] = ()
    #: (kind speed) The train's tractive force at full level, N.
    force_per_level: float = math.nan


def _unit_factor(unit: str, si: str, ctx: Context) -> float:
    """The factor from ``unit`` to ``si``, or a ConfigError at ``ctx``."""
    try:
        if convert(0.0, unit, si) != 0.0:
            raise UnitError(f"{unit!r} has an offset")
        return convert(1.0, unit, si)
    except UnitError as exc:
        raise ctx.error(f"found {unit!r}, expected a unit of {dimension_name(si)} "
                        f"({exc})") from None


def _read_rows(path: Path, columns: dict[str, Context], ctx: Context,
               key: str) -> dict[str, np.ndarray]:
    """The named columns of the CSV file ``path`` as floats, by column name (``columns``:
    each name with the context of the config key that names it); a value that cannot be
    used is a ConfigError naming the CSV file and line, a column it lacks one naming the
    config key (and the file's header line), and a file that cannot be read one naming
    ``key``."""
    name = str(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ctx.child(key).error(f"found {name!r}, expected an existing CSV file "
                                   "(paths are relative to the scenario file)") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(name, None, f"not UTF-8 text (byte 0x{exc.object[exc.start]:02x} "
                          f"at offset {exc.start}), expected a CSV file") from None
    except OSError as exc:
        raise ctx.child(key).error(f"found {name!r}, which cannot be read "
                                   f"({exc.strerror})") from None
    lines = [(n, line) for n, line in enumerate(text.splitlines(), 1)
             if line.strip() and not line.lstrip().startswith("#")]
    if not lines:
        raise ConfigError(name, None, "found no header row, expected a CSV file with a "
                          "header row and at least two rows of values")
    header_line, header = lines[0]
    names = [c.strip() for c in next(csv.reader([header]))]
    where = {}
    for want, named in columns.items():
        if want not in names:
            raise named.error(f"found {want!r}, but the header of {name} (line "
                              f"{header_line}) has the columns "
                              f"{', '.join(map(repr, names))}; expected one of them")
        where[want] = names.index(want)
    values: dict[str, list[float]] = {c: [] for c in columns}
    for n, row in zip((n for n, _ in lines[1:]), csv.reader(line for _, line in lines[1:]),
                      strict=True):
        for col, i in where.items():
            cell = row[i].strip() if i < len(row) else ""
            try:
                value = float(cell)
            except ValueError:
                value = math.nan
            if not math.isfinite(value):
                raise ConfigError(name, f"line {n}", f"{_column(col, columns[col])}: "
                                  f"found {cell!r}, expected a finite number")
            values[col].append(value)
    if len(values[next(iter(values))]) < 2:
        raise ConfigError(name, None, f"found {len(lines) - 1} rows of values, expected at "
                          "least two")
    return {c: np.array(v) for c, v in values.items()}


def _column(column: str, named: Context) -> str:
    """A CSV column in an error, with the config key that names it (the mistake may be
    the key's)."""
    where = ": ".join(p for p in (named.file, named.path) if p)
    return f"column {column!r} (read as {where})"


def _rows_after_header(path: Path) -> list[int]:
    """The line numbers of the value rows of ``path`` (for errors found after reading)."""
    text = path.read_text(encoding="utf-8-sig")
    lines = [n for n, line in enumerate(text.splitlines(), 1)
             if line.strip() and not line.lstrip().startswith("#")]
    return lines[1:]


def load_trace(cfg: dict[str, Any], train: Train, ctx: Context) -> Trace | None:
    """Check a ``[scenario.trace]`` table (``ctx`` its context; its ``file`` is made
    absolute in place, so that the resolved scenario runs from anywhere) and read the
    trace; None without a file. Errors in the table name the key; errors in the CSV name
    the file and the line."""
    if cfg["file"] is None:
        return None
    path = resolve_path(ctx.base_dir, cfg["file"], ctx.child("file"))
    cfg["file"] = str(path)
    to_s = _unit_factor(cfg["time_unit"], "s", ctx.child("time_unit"))
    models = [b.cls for b in train.batches]
    if cfg["kind"] == "speed":
        if cfg["controls"]:
            raise ctx.child("controls").error("found controls with kind 'speed', expected "
                                              "kind 'commands' to replay control levels")
        if not any(TRACTION in m.controls for m in models):
            raise ctx.child("kind").error(
                f"found 'speed', but no vehicle of the train has a {TRACTION!r} control for "
                "the trace driver to set; expected kind 'commands'")
        to_mps = _unit_factor(cfg["speed_unit"], "m/s", ctx.child("speed_unit"))
        force = cfg["force_per_level"]
        if force is None:
            force = _full_force(train, ctx.child("force_per_level"))
        columns = {cfg["time_column"]: ctx.child("time_column"),
                   cfg["speed_column"]: ctx.child("speed_column")}
    else:
        if not cfg["controls"]:
            raise ctx.child("controls").error("found none, expected control name = column "
                                              "for kind 'commands'")
        for control, column in cfg["controls"].items():
            if not isinstance(column, str):
                raise ctx.child("controls").child(control).error(
                    f"found {column!r}, expected a column name (a string)")
            if not any(control in m.controls for m in models):
                offered = sorted({c for m in models for c in m.controls})
                raise ctx.child("controls").child(control).error(
                    f"found {control!r}, which no vehicle of the train has; expected one of "
                    + ", ".join(offered))
        columns = {cfg["time_column"]: ctx.child("time_column"),
                   **{col: ctx.child("controls").child(c)
                      for c, col in cfg["controls"].items()}}
    data = _read_rows(path, columns, ctx, "file")
    times = data[cfg["time_column"]] * to_s
    rows = _rows_after_header(path)
    step = np.diff(times)
    if (step <= 0).any():
        k = int(np.flatnonzero(step <= 0)[0]) + 1
        raise ConfigError(str(path), f"line {rows[k]}",
                          f"{_column(cfg['time_column'], columns[cfg['time_column']])}: "
                          f"found {data[cfg['time_column']][k]:g} after "
                          f"{data[cfg['time_column']][k - 1]:g}, expected times that increase")
    if cfg["kind"] == "speed":
        speeds = data[cfg["speed_column"]] * to_mps
        if (speeds < 0).any():
            k = int(np.flatnonzero(speeds < 0)[0])
            raise ConfigError(str(path), f"line {rows[k]}",
                              f"{_column(cfg['speed_column'], columns[cfg['speed_column']])}: "
                              f"found {data[cfg['speed_column']][k]:g}, expected a speed >= 0")
        return Trace(str(path), "speed", times, speeds, force_per_level=force)
    levels = []
    for control, column in cfg["controls"].items():
        values = data[column]
        for m in models:
            if control not in m.controls:
                continue
            c = control_of(m, control)
            bad = np.flatnonzero((values < c.low) | (values > c.high))
            if bad.size:
                k = int(bad[0])
                raise ConfigError(str(path), f"line {rows[k]}",
                                  f"{_column(column, columns[column])}: found "
                                  f"{values[k]:g}, expected a {control} from {c.low:g} to "
                                  f"{c.high:g} (the range {m.type_name} declares)")
        levels.append((control, values))
    return Trace(str(path), "commands", times, None, tuple(levels))


def _full_force(train: Train, ctx: Context) -> float:
    """The train's tractive force at full level from its vehicles' ``F_max`` or
    ``max_force`` parameters (those with a ``traction_level``), N; a ConfigError at ``ctx``
    where a vehicle type with the control declares neither."""
    total = 0.0
    for b in train.batches:
        if TRACTION not in b.cls.controls:
            continue
        name = next((p for p in ("F_max", "max_force") if p in b.record.fields
                     and (b.record.row(p) > 0).all()), None)
        if name is None:
            raise ctx.error(f"found none, and {b.cls.type_name} declares no F_max or "
                            "max_force parameter above zero; expected the train's tractive "
                            "force at full traction level (a force)")
        total += float(b.record.row(name).sum())
    return total


def command_actions(trace: Trace, train: Train) -> list[Action]:
    """A commands trace as driver actions, in time order: at each row's time, the levels
    that changed (all at the first row, from the drive's start), set on every vehicle
    that declares each control (one action per set of vehicles)."""
    holders = {control: tuple(i for i in range(train.count)
                              if control in train.batches[train.batch_of[i]].cls.controls)
               for control, _ in trace.levels}
    actions = []
    for k, t in enumerate(trace.times):
        changed: dict[tuple[int, ...], list[tuple[str, float]]] = {}
        for control, values in trace.levels:
            if k == 0 or values[k] != values[k - 1]:
                changed.setdefault(holders[control], []).append((control, float(values[k])))
        for vehicles, controls in changed.items():
            # (the first row holds from the drive's start, whenever the trace begins)
            actions.append(Action(float(t) if k else 0.0, None, vehicles, None, None,
                                  tuple(controls)))
    return actions


class CommandReplay:
    """A command trace replayed in a run: its changes (:func:`command_actions`) set at
    their times, through the train system's inputs as a driver program's ``set``, each a
    ``driver`` event. A cursor walks the changes in time order, so that a long trace
    costs a control step nothing until its next change (a driver program looks at each
    of its actions at every step)."""

    def __init__(self, trace: Trace, train: Train, system: Any) -> None:
        self.system = system
        #: The changes, in time order (driver actions: time, vehicles, controls).
        self.changes = command_actions(trace, train)
        self.times = np.array([a.time for a in self.changes])
        #: (batch index, rows) for each set of vehicles a change addresses.
        self.targets: dict[tuple[int, ...], list[tuple[int, np.ndarray]]] = {}
        for a in self.changes:
            if a.vehicles not in self.targets:
                vehicles = np.array(a.vehicles)
                self.targets[a.vehicles] = [
                    (int(b), train.row_of[vehicles[train.batch_of[vehicles] == b]])
                    for b in np.unique(train.batch_of[vehicles])]
        #: The next change to apply (an array: a run's snapshot copies it).
        self.cursor = np.zeros(1, dtype=np.int64)

    @property
    def next_time(self) -> float:
        """When the next change is due (inf after the last), s."""
        k = int(self.cursor[0])
        return float(self.times[k]) if k < self.times.size else math.inf

    def apply_due(self, t: float) -> bool:
        """Set every change due by ``t``; whether there was one."""
        k = int(self.cursor[0])
        start = k
        while k < self.times.size and self.times[k] <= t + 1e-9:
            a = self.changes[k]
            for b, rows in self.targets[a.vehicles]:
                for name, value in a.controls:
                    self.system.set_input(b, rows, name, value, t)
            self.system.log.append(Event(t, "driver", vehicle=a.vehicles[0]
                                         if len(a.vehicles) == 1 else -1,
                                         detail="trace: " + a.describe()))
            k += 1
        self.cursor[0] = k
        return k > start


@njit(DECIDE, cache=True)
def follow(t, front, rear, speed, on_time, state, params,
           table):  # pragma: no cover (compiled)
    """The trace driver's decision at ``t`` (the train's front and the lead's speed; the
    other arguments of the built-in driver's signature unused), on its state, interval
    (``params``) and ``table`` (:data:`ROWS` rows: the trace, its log, its settings).

    The force it wants is the effective mass times the recorded acceleration over the
    coming time constant (feed-forward) plus the speed error over the time constant
    (feedback), plus an integral of the error (the resistance and grade forces it learns);
    the level is that force over the force per level, traction above zero, brake below.
    Returns 1 where its command changed, else 0."""
    s, p = state[0], params[0]
    if s.on == 0.0 or t < s.next - 1e-9:
        return 0
    interval = p.interval
    dt = interval if s.next > 0 else 0.0
    s.next = t + interval
    times, speeds = table[T_TIME], table[T_SPEED]
    mass, per_level = table[SETTINGS, 0], table[SETTINGS, 1]
    tau, integral_time = table[SETTINGS, 2], table[SETTINGS, 3]
    recorded = interp_one(t, times, speeds)
    ahead = interp_one(t + tau, times, speeds)
    s.target = recorded
    error = recorded - speed
    # (the recorded acceleration over the time constant ahead: a lead jerked by its
    # couplers' slack records a speed too rough to differentiate over one interval)
    wanted = mass * ((ahead - recorded) / tau + error / tau)
    u = (wanted + s.integral) / per_level
    if -1.0 < u < 1.0:  # integrate only when not saturated (no wind-up)
        s.integral += mass * error / integral_time * dt
        u = (wanted + s.integral) / per_level
    if ahead <= 0.0 and recorded <= 0.0 and speed < table[SETTINGS, 4]:
        u = -1.0  # the trace stands still: hold the train with the full brake
        s.integral = 0.0
    # (a slot per decision over the trace's span; beyond it, the last slot)
    k = min(max(int((t - times[0]) / interval + 1e-6), 0), times.size - 1)
    table[L_TIME, k] = t
    table[L_FRONT, k] = front
    table[L_SPEED, k] = speed
    table[L_WANTED, k] = u
    table[L_RECORDED, k] = recorded
    return send_command(-1.0 if u < -1.0 else (1.0 if u > 1.0 else u), state)


class TraceDriver(CommandDriver):
    """The trace driver of one run (kind ``speed``): its settings, its run state and its
    table (trace, log, settings), which the event loop's decisions and Python share. It
    stands where the built-in driver stands (:class:`~rrscore.driving.program.
    DriverProgram` takes either)."""

    #: It keeps no timetable (the loop takes its decisions itself).
    timetable = None

    def __init__(self, cfg: Mapping[str, Any], trace: Trace, train: Train) -> None:
        super().__init__(train)  # (its state: integral, command, next, target used)
        self.trace = trace
        self.tolerance = cfg["tolerance"]
        n = trace.times.size
        # room for a logged decision per interval over the trace's span, for the trace and
        # for the five settings (the trace padded with its last row: it holds)
        span = trace.times[-1] - trace.times[0]
        width = max(n, 5, int(span / cfg["update_interval"]) + 2)
        table = np.full((ROWS, width), np.nan)
        table[T_TIME, :n], table[T_SPEED, :n] = trace.times, trace.speeds
        if n < width:
            table[T_TIME, n:] = trace.times[-1] + np.arange(1, width - n + 1)
            table[T_SPEED, n:] = trace.speeds[-1]
        #: Rows :data:`T_TIME` ... :data:`SETTINGS` (see there).
        self.table = np.ascontiguousarray(table)
        self.params = np.zeros(1, dtype=DRIVER_PARAMS).view(np.recarray)
        self.params[0].interval = cfg["update_interval"]
        #: The mass the missing force is worked from: the train's, with its wheelsets'
        #: rotating inertia as mass at the rail, kg.
        self.mass = float(train.total_mass + train.axle_mass_equiv.sum())
        self.table[SETTINGS, :5] = (self.mass, trace.force_per_level, cfg["time_constant"],
                               cfg["integral_time"], _CRAWL)

    def update(self, t: float, front: float, rear: float, speed: float) -> bool:
        """Decide at time ``t`` (:func:`follow`); return whether the command changed."""
        return bool(follow(t, front, rear, speed, math.inf, self.state, self.params,
                           self.table))

    def log(self) -> dict[str, np.ndarray]:
        """The decisions logged, in time order (after the trace's end, only the last):
        ``time``, ``front``, ``speed``, ``wanted``, ``recorded``."""
        tb = self.table
        kept = np.isfinite(tb[L_TIME])
        return {"time": tb[L_TIME, kept], "front": tb[L_FRONT, kept],
                "speed": tb[L_SPEED, kept], "wanted": tb[L_WANTED, kept],
                "recorded": tb[L_RECORDED, kept]}

    def report(self) -> dict[str, Any]:
        """The summary's figures: ``trace_shortfalls``, each interval where the train could
        not follow (``behind``: at full traction and slower than the trace by more than
        the tolerance; ``ahead``: at full brake and faster), with its start and end time
        and front position, the largest speed error (recorded less actual, m/s) and when
        and where it was, and the largest missing force and power; and
        ``trace_speed_error``, the largest speed error of the whole drive.

        The missing force of an interval is the effective mass (the train's and its
        wheelsets' rotating inertia) times the recorded speed gain less the train's, over
        the interval (from its first logged decision to the next decision after it): the
        mean force the train lacked to accelerate (or brake) as recorded, resistance
        changes with the speed error neglected. The missing power is that force times the
        mean recorded speed over the interval."""
        lg = self.log()
        t, v, rec, wanted = lg["time"], lg["speed"], lg["recorded"], lg["wanted"]
        if t.size == 0:
            return {"trace_shortfalls": [], "trace_speed_error": None}
        error = rec - v
        worst = int(np.argmax(np.abs(error)))
        largest = {"largest_mps": float(error[worst]), "time_s": float(t[worst]),
                   "position_m": float(lg["front"][worst])}
        side = np.where((wanted >= 1.0) & (error > self.tolerance), 1,
                        np.where((wanted <= -1.0) & (error < -self.tolerance), -1, 0))
        shortfalls = []
        k = 0
        while k < t.size:
            if side[k] == 0:
                k += 1
                continue
            end = k
            while end + 1 < t.size and side[end + 1] == side[k]:
                end += 1
            close = min(end + 1, t.size - 1)
            i = k + int(np.argmax(np.abs(error[k:end + 1])))
            span = t[close] - t[k]
            force = power = None
            if span > 0:
                grid = np.linspace(t[k], t[close], 64)
                mean_rec = float(np.interp(grid, self.trace.times, self.trace.speeds).mean())
                force = self.mass * ((rec[close] - rec[k]) - (v[close] - v[k])) / span
                force, power = abs(force), abs(force) * mean_rec
            shortfalls.append({
                "kind": "behind" if side[k] > 0 else "ahead",
                "start_s": float(t[k]), "end_s": float(t[close]),
                "start_position_m": float(lg["front"][k]),
                "end_position_m": float(lg["front"][close]),
                "max_speed_error_mps": float(error[i]), "max_speed_error_time_s": float(t[i]),
                "max_speed_error_position_m": float(lg["front"][i]),
                "missing_force_N": force, "missing_power_W": power})
            k = end + 1
        return {"trace_shortfalls": shortfalls, "trace_speed_error": largest}


def _finite(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def shortfall_note(summary: Mapping[str, Any]) -> str:
    """The one-line result's part for a trace drive ('' for other drives): how many
    shortfalls and the largest speed error."""
    if "trace_shortfalls" not in summary:
        return ""
    n = len(summary["trace_shortfalls"])
    worst = summary.get("trace_speed_error") or {}
    error = abs(worst.get("largest_mps", 0.0)) * 3.6
    if not n:
        return f"; followed the trace (largest speed error {error:.1f} km/h)"
    return (f"; could not follow the trace in {n} interval{'s' if n > 1 else ''} (largest "
            f"speed error {error:.1f} km/h at {worst.get('time_s', 0.0):.0f} s: see "
            "summary.json trace_shortfalls)")
