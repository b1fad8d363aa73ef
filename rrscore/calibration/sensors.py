"""Sensors along a route and their logs: when the train's front passed each sensor, which
speed-level commands were given, and where the train came to rest.

A sensor log is one CSV file with the columns ``run, kind, sensor, time_s, level,
position_m``; each row is one of

* ``hit``: the front of the train passed ``sensor`` at ``time_s``;
* ``command``: speed level ``level`` was commanded at ``time_s``, at ``sensor``
  if it was given as that sensor fired (leave ``sensor`` empty otherwise), or at
  ``position_m`` (a start from standstill at a known place);
* ``stop``: the train came to rest at ``time_s`` with its front at ``position_m``
  (measured by hand on a real line).

Runs are the repeats of an experiment; a run id is any text. Positions are metres
along the route, times seconds from any origin of each run.

Synthetic logs come from simulated drives (:func:`synthetic_log`): the front's
crossing of each sensor is interpolated on the time series (cubic Hermite, on
position and speed), and timing noise and missed hits are added with a seeded
random generator.
"""

from __future__ import annotations

import contextlib
import csv
import fnmatch
import io
import math
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import numpy as np
from scipy.interpolate import CubicHermiteSpline

from ..model.config import Context, Include, include, load_toml
from ..model.errors import RrsError
from ..model.track import MAX_LENGTH, ROUTE_SCHEMA
from ..run.files import write_atomically

COLUMNS = ("run", "kind", "sensor", "time_s", "level", "position_m")
KINDS = ("hit", "command", "stop")
#: Largest time a log may hold, s: about 3000 years, so a clock counting Unix seconds fits,
#: but a corrupted time (1e300) is the log's error at its line, not a silent absurdity.
MAX_LOG_TIME = 1e11
#: Highest speed level a log may command: far beyond any controller's notches.
MAX_LEVEL = 1_000_000


class LogError(RrsError):
    """A sensor log or sensor layout that cannot be used; names the file and the line."""


@contextlib.contextmanager
def open_csv(path: str | Path) -> Iterator[IO[str]]:
    """``path`` opened for a CSV reader: text that is not UTF-8, or a field longer than
    the csv module takes, is a :class:`LogError` naming the file, not an internal error."""
    try:
        with Path(path).open(newline="", encoding="utf-8") as fh:
            yield fh
    except UnicodeDecodeError as exc:
        raise LogError(f"{path}: not UTF-8 text ({exc.reason}: byte "
                       f"{exc.object[exc.start]:#04x}), expected a CSV file") from None
    except csv.Error as exc:
        raise LogError(f"{path}: not a CSV file rrs reads: {exc}") from None


@dataclass(frozen=True)
class SensorLayout:
    """Named sensors at positions along a route (m), in the order of increasing position."""

    names: tuple[str, ...]
    positions: tuple[float, ...]
    source: str = ""

    def __post_init__(self) -> None:
        order = np.argsort(self.positions, kind="stable")
        object.__setattr__(self, "names", tuple(self.names[i] for i in order))
        object.__setattr__(self, "positions", tuple(float(self.positions[i]) for i in order))
        # looked up once per hit: a dict, not a search of the names
        object.__setattr__(self, "indices", {n: k for k, n in enumerate(self.names)})

    def position(self, name: str) -> float:
        """Position of sensor ``name``; KeyError if there is none."""
        return self.positions[self.index(name)]

    def index(self, name: str) -> int:
        """Index of sensor ``name`` along the route; KeyError if there is none."""
        return self.indices[name]  # type: ignore[attr-defined]

    def __contains__(self, name: object) -> bool:
        return name in self.indices  # type: ignore[attr-defined]

    def __len__(self) -> int:
        return len(self.names)


def load_layout(path: str | Path, pattern: str = "*") -> SensorLayout:
    """The sensors of a route: its named points whose names match ``pattern`` (fnmatch).

    ``path`` is a route file, a scenario file (its route) or a drive's output
    directory (the route in its ``scenario.resolved.toml``).
    """
    p = Path(path)
    if p.is_dir():
        p = p / "scenario.resolved.toml"
    data = load_toml(p, "route")
    ctx = Context(str(p), "", p.resolve().parent)
    spec = Include(ROUTE_SCHEMA, what="route", file_key="route")
    if "route" in data:
        route = include(str(p.resolve()), spec, ctx)
    elif isinstance(data.get("scenario"), dict) and "route" in data["scenario"]:
        route = include(data["scenario"]["route"], spec, ctx.child("scenario").child("route"))
    else:
        raise LogError(f"{path}: found neither [route] nor [scenario] with a route, expected "
                       "a route file, a scenario file or a drive's output directory")
    points = [(pt["name"], pt["position"]) for pt in route["points"]
              if fnmatch.fnmatchcase(pt["name"], pattern)]
    if len(points) < 2:
        raise LogError(f"{path}: found {len(points)} route points matching {pattern!r}, "
                       "expected at least two sensors")
    return SensorLayout(tuple(n for n, _ in points), tuple(x for _, x in points), str(path))


@dataclass(frozen=True)
class Hit:
    """The front of the train passed ``sensor`` at ``time`` (s) in run ``run``."""

    run: str
    sensor: str
    time: float


@dataclass(frozen=True)
class Command:
    """Speed level ``level`` commanded at ``time``, at ``sensor`` or at ``position`` (m)."""

    run: str
    time: float
    level: int
    sensor: str | None = None
    position: float | None = None


@dataclass(frozen=True)
class Stop:
    """The train came to rest at ``time`` with its front at ``position`` (m)."""

    run: str
    time: float
    position: float


@dataclass
class SensorLog:
    """The rows of a sensor log, by kind; ``source`` names the file it came from."""

    hits: list[Hit] = field(default_factory=list)
    commands: list[Command] = field(default_factory=list)
    stops: list[Stop] = field(default_factory=list)
    source: str = "<log>"

    @property
    def runs(self) -> list[str]:
        """Run ids in the order they first appear."""
        seen = dict.fromkeys(r.run for r in (*self.hits, *self.commands, *self.stops))
        return list(seen)

    def of_run(self, run: str) -> tuple[list[Hit], list[Command], list[Stop]]:
        """The hits, commands and stops of one run, each in time order."""
        return self.by_run().get(run, ([], [], []))

    def by_run(self) -> dict[str, tuple[list[Hit], list[Command], list[Stop]]]:
        """Every run's hits, commands and stops, each in time order, in one pass over the
        rows (a run at a time would go over them once per run)."""
        out: dict[str, tuple[list[Hit], list[Command], list[Stop]]] = {
            run: ([], [], []) for run in self.runs}
        for which, rows in enumerate((self.hits, self.commands, self.stops)):
            for r in rows:
                out[r.run][which].append(r)  # type: ignore[attr-defined]
        for lists in out.values():
            for rows in lists:
                rows.sort(key=lambda r: r.time)
        return out

    def write(self, path: str | Path) -> None:
        """Write the log as CSV (:data:`COLUMNS`)."""
        rows = [(h.run, "hit", h.sensor, h.time, "", "") for h in self.hits]
        rows += [(c.run, "command", c.sensor or "", c.time, c.level,
                  "" if c.position is None else c.position) for c in self.commands]
        rows += [(s.run, "stop", "", s.time, "", s.position) for s in self.stops]
        runs = {r: i for i, r in enumerate(self.runs)}
        rows.sort(key=lambda r: (runs[r[0]], r[3]))
        text = io.StringIO(newline="")
        out = csv.writer(text)
        out.writerow(COLUMNS)
        for row in rows:
            out.writerow([f"{v:.6f}" if isinstance(v, float) else v for v in row])
        write_whole(path, text.getvalue())


@contextlib.contextmanager
def naming(path: str | Path) -> Iterator[None]:
    """An OSError while ``path`` is written (through a temporary file beside it) names
    ``path``, the file the user asked for, not the temporary one."""
    try:
        yield
    except OSError as exc:
        raise type(exc)(exc.errno, exc.strerror, str(path)) from None


def write_whole(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all; an error names ``path``."""
    with naming(path):
        write_atomically(path, text)


def _number(text: str, what: str, where: str, limit: float = math.inf) -> float:
    try:
        value = float(text)
    except ValueError:
        raise LogError(f"{where}: {what}: found {_shown(text)}, expected a number") from None
    if not math.isfinite(value):
        raise LogError(f"{where}: {what}: found {_shown(text)}, expected a finite number")
    if abs(value) > limit:
        raise LogError(f"{where}: {what}: found {_shown(text)}, expected a number from "
                       f"{-limit:g} to {limit:g}")
    return value


def _shown(text: str, width: int = 40) -> str:
    """A cell as an error shows it: quoted, and cut short if long (a line stays readable)."""
    return repr(text) if len(text) <= width else repr(text[:width]) + f"... ({len(text)} chars)"


def read_log(path: str | Path, layout: SensorLayout | None = None) -> SensorLog:
    """Read a sensor log CSV; with ``layout``, every sensor it names must be in it.

    A :class:`LogError` names the file, the line and what was wrong.
    """
    p = Path(path)
    if not p.is_file():
        raise LogError(f"{path}: sensor log not found")
    log = SensorLog(source=str(path))
    with open_csv(p) as fh:
        # a plain reader and cells by column index: a dict per row was a third of the
        # time of a large log
        reader = csv.reader(fh)
        header = next(reader, None)
        if header is None:
            raise LogError(f"{path}: empty file, expected a header line "
                           f"{','.join(COLUMNS)} and rows")
        missing = [c for c in ("run", "kind", "time_s") if c not in header]
        if missing:
            raise LogError(f"{path}: line 1: found columns {header}, expected "
                           f"{', '.join(COLUMNS)} (missing {', '.join(missing)})")
        width = len(header)
        # a column the header lacks reads as an empty cell (the one past the row's end)
        col = {c: header.index(c) if c in header else width for c in COLUMNS}
        i_run, i_kind, i_sensor = col["run"], col["kind"], col["sensor"]
        i_time, i_level, i_pos = col["time_s"], col["level"], col["position_m"]
        for row in reader:
            if not row:
                continue  # a blank line
            where = f"{path}: line {reader.line_num}"
            if len(row) > width:
                raise LogError(f"{where}: found {len(row)} cells, expected at most {width} "
                               "(the header's)")
            row += [""] * (width + 1 - len(row))
            run, kind = row[i_run].strip(), row[i_kind].strip()
            sensor = row[i_sensor].strip() or None
            if not run:
                raise LogError(f"{where}: run: empty, expected a run id")
            if kind not in KINDS:
                raise LogError(f"{where}: kind: found {_shown(kind)}, expected one of "
                               + ", ".join(KINDS))
            t = _number(row[i_time], "time_s", where, MAX_LOG_TIME)
            if sensor is not None and layout is not None and sensor not in layout:
                names = ", ".join(layout.names[:12]) + (", ..." if len(layout) > 12 else "")
                raise LogError(f"{where}: sensor: found {_shown(sensor)}, expected a sensor of "
                               f"{layout.source or 'the layout'}: {names}")
            pos_text = row[i_pos].strip()
            position = (_number(pos_text, "position_m", where, MAX_LENGTH) if pos_text
                        else None)
            if kind == "hit":
                if sensor is None:
                    raise LogError(f"{where}: sensor: empty, expected the sensor that fired")
                log.hits.append(Hit(run, sensor, t))
            elif kind == "command":
                level = _number(row[i_level].strip(), "level", where)
                if not 0 <= level <= MAX_LEVEL or level != int(level):
                    raise LogError(f"{where}: level: found {_shown(row[i_level])}, "
                                   f"expected a whole number from 0 to {MAX_LEVEL}")
                log.commands.append(Command(run, t, int(level), sensor, position))
            else:
                if position is None:
                    raise LogError(f"{where}: position_m: empty, expected where the train "
                                   "came to rest")
                log.stops.append(Stop(run, t, position))
    return log


@dataclass
class RecordedDrive:
    """What a synthetic log needs of a simulated drive: the front's position and speed over
    time, and the level commands (time, level) with where they were given."""

    time: np.ndarray
    front: np.ndarray
    speed: np.ndarray
    commands: list[tuple[float, int]]
    name: str = "run"

    @classmethod
    def from_dir(cls, run_dir: str | Path, control: str = "level") -> RecordedDrive:
        """Read ``timeseries.csv`` and the driver events of ``events.csv`` of a drive."""
        d = Path(run_dir)
        ts = d / "timeseries.csv"
        if not ts.is_file():
            raise LogError(f"{run_dir}: no timeseries.csv, expected a drive's output directory")
        series = _read_columns(ts, ("time_s", "front_m", "speed_mps"))
        commands = []
        pattern = re.compile(rf"(?:^|[ :,]){re.escape(control)}=([-+0-9.eE]+)")
        events = d / "events.csv"
        if events.is_file():
            with open_csv(events) as fh:
                reader = csv.DictReader(fh)
                for row in reader:
                    if row.get("event") != "driver":
                        continue
                    m = pattern.search(row.get("detail") or "")
                    if m:
                        where = f"{events}: line {reader.line_num}"
                        level = _number(m.group(1), control, where, MAX_LEVEL)
                        commands.append((_number(row.get("time_s") or "", "time_s", where,
                                                 MAX_LOG_TIME), int(round(level))))
        return cls(series["time_s"], series["front_m"], series["speed_mps"], commands, d.name)


def _read_columns(path: Path, names: Sequence[str]) -> dict[str, np.ndarray]:
    with open_csv(path) as fh:
        reader = csv.reader(fh)
        header = next(reader, [])
        missing = [n for n in names if n not in header]
        if missing:
            raise LogError(f"{path}: line 1: missing columns {', '.join(missing)}")
        idx = [header.index(n) for n in names]
        try:
            rows = [[float(r[i]) for i in idx] for r in reader if r]
        except (ValueError, IndexError):
            raise LogError(f"{path}: line {reader.line_num}: expected numbers in columns "
                           f"{', '.join(names)}") from None
    data = np.array(rows, dtype=float).reshape(-1, len(names))
    if len(data) < 2:
        raise LogError(f"{path}: found {len(data)} rows, expected a time series of at least "
                       "two")
    bad = ~np.isfinite(data).all(axis=1) | (np.abs(data) > MAX_LOG_TIME).any(axis=1)
    bad[1:] |= np.diff(data[:, 0]) < 0  # time must not run backwards
    if bad.any():
        # (rows are read without blank lines, so this is the row's number, not its line's)
        k = int(np.argmax(bad))
        raise LogError(f"{path}: row {k + 1}: found {', '.join(f'{v:g}' for v in data[k])} "
                       f"in {', '.join(names)}, expected finite numbers up to "
                       f"{MAX_LOG_TIME:g} with time not running backwards")
    return {n: data[:, i] for i, n in enumerate(names)}


def crossings(drive: RecordedDrive, layout: SensorLayout) -> list[tuple[str, float]]:
    """Times at which the front first passed each sensor (moving forward), in time order.

    The position between samples is the cubic Hermite curve through the sampled
    positions with the sampled speeds as slopes, so the crossing is accurate to
    the fourth order in the sample interval.
    """
    t, x, v = drive.time, drive.front, drive.speed
    keep = np.concatenate([[True], np.diff(t) > 0])  # a repeated final row
    t, x, v = t[keep], x[keep], v[keep]
    curve = CubicHermiteSpline(t, x, v)
    out = []
    for name, pos in zip(layout.names, layout.positions, strict=True):
        after = np.nonzero((x[:-1] < pos) & (x[1:] >= pos))[0]
        if after.size == 0:
            continue
        k = int(after[0])
        roots = [r for r in curve.solve(pos, extrapolate=False) if t[k] - 1e-9 <= r <= t[k + 1]]
        out.append((name, float(roots[0]) if roots else float(np.interp(pos, x[k:k + 2],
                                                                          t[k:k + 2]))))
    out.sort(key=lambda nt: nt[1])
    return out


def _rest(drive: RecordedDrive, after: float, speed: float = 0.01) -> tuple[float, float] | None:
    """(time, front position) when the train came to rest after ``after``: at the first
    sample below ``speed``, extended to zero speed on the line through the last two
    samples (braking at a steady force), which also covers a drive that ended as the
    train fell below its standstill speed."""
    idx = np.nonzero((drive.time > after) & (np.abs(drive.speed) <= speed))[0]
    if idx.size == 0:
        return None
    k = int(idx[0])
    t, x, v = float(drive.time[k]), float(drive.front[k]), float(drive.speed[k])
    if k > 0 and v > 0 and drive.speed[k - 1] > v:
        decel = (drive.speed[k - 1] - v) / (t - drive.time[k - 1])
        return t + v / decel, x + v * v / (2.0 * decel)
    if k > 0 and v == 0 and drive.speed[k - 1] > 0 and k > 1 and \
            drive.speed[k - 2] > drive.speed[k - 1]:
        t0, t1 = drive.time[k - 2], drive.time[k - 1]
        v0, v1 = drive.speed[k - 2], drive.speed[k - 1]
        return float(min(t1 + v1 * (t1 - t0) / (v0 - v1), t)), x
    return t, x


def synthetic_log(drives: Iterable[RecordedDrive], layout: SensorLayout, repeats: int = 1,
                  noise: float = 0.0, miss: float = 0.0, seed: int | None = 0,
                  command_window: float = 2.0) -> SensorLog:
    """A sensor log of simulated drives, each repeated ``repeats`` times with independent
    timing noise (normal, standard deviation ``noise`` s, on every time) and hits missed
    with probability ``miss``.

    A command is logged "at a sensor" when the front passed that sensor less than
    ``command_window`` metres before the command took effect (a driver action at a
    point acts at the next control step); otherwise at the front's position.
    Commands and stops are never missed.
    """
    rng = np.random.default_rng(seed)
    log = SensorLog(source="synthetic")
    for d_index, drive in enumerate(drives):
        hits = crossings(drive, layout)
        sensor_pos = dict(zip(layout.names, layout.positions, strict=True))
        commands = []
        for t, level in drive.commands:
            front = float(np.interp(t, drive.time, drive.front))
            near = [(n, th) for n, th in hits
                    if 0 <= front - sensor_pos[n] < command_window and th <= t + 1e-9]
            if near:
                commands.append((near[-1][1], level, near[-1][0], None))
            else:
                commands.append((t, level, None, front))
        stops = []
        for t, level in drive.commands:
            if level == 0:
                rest = _rest(drive, t)
                if rest is not None:
                    stops.append(rest)
        for r in range(repeats):
            run = f"{drive.name}#{r + 1}" if repeats > 1 else drive.name
            if d_index and run in log.runs:
                run = f"{run}@{d_index}"
            def jitter(t):
                return float(t + (rng.normal(0.0, noise) if noise > 0 else 0.0))
            for name, t in hits:
                if miss > 0 and rng.random() < miss:
                    continue
                log.hits.append(Hit(run, name, jitter(t)))
            # a command given as a sensor fires carries that sensor's (noisy) time
            stamped = {h.sensor: h.time for h in log.hits if h.run == run}
            for t, level, sensor, position in commands:
                time = stamped.get(sensor, jitter(t)) if sensor else jitter(t)
                log.commands.append(Command(run, time, level, sensor, position))
            for t, position in stops:
                log.stops.append(Stop(run, jitter(t), position))
    return log


def log_summary(log: SensorLog) -> str:
    """One line: how many runs, hits, commands and stops a log holds."""
    return (f"{len(log.runs)} runs, {len(log.hits)} sensor hits, {len(log.commands)} "
            f"commands, {len(log.stops)} stops")
