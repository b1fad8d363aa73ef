"""From a sensor log to estimates of the kinematic model, each with its spread over the
repeated runs (seed 002's experiments).

* **Steady velocity** of a level: per run, the distance over the time between the
  sensors it passed after the change to that level had finished; averaged over runs.
* **Acceleration** between two levels: a change commanded as a sensor fired, solved
  on the segment to the next sensor (:func:`~rrscore.calibration.kinematics.transition`)
  with the steady velocities of both levels.
* **Start**: the same from standstill at a known position to the first sensor.
* **Stop distance and time**: from a level-0 command at a sensor (or a known
  position) to where and when the train came to rest.
* **Short moves**: from standstill, a level for a short time, then stop: the
  distance run, by level and duration.

A change of level counts as finished ``|v2 - v1| / |a|`` after its command; the
velocities and accelerations are found together by a few rounds of this.

Bad data is reported, not used: a sensor that fired twice or out of order (a
spurious hit) is dropped, a segment between two sensors that are not neighbours
(a missed hit) is not used, and a value far from the others of its estimate
(more than 8 scaled median absolute deviations) is left out. Every such case is
a :class:`Finding`.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from ..jit import kernel
from .kinematics import Transition, short_move, stop_deceleration, transition
from .sensors import Command, SensorLayout, SensorLog

#: a value further than this many scaled MADs from the median of its estimate is an outlier
OUTLIER_MADS = 8.0
#: the changed level counts as steady this much later than the constant-rate model says
SETTLE_MARGIN = 0.05


@dataclass(frozen=True)
class Finding:
    """A problem in the data: which run, and what was found and done about it."""

    run: str
    message: str

    def __str__(self) -> str:
        return f"run {self.run}: {self.message}"


@dataclass(frozen=True)
class Estimate:
    """A quantity measured over repeated runs: ``mean``, sample ``std`` (0 for one run),
    ``n`` runs used, the values used and the ``excluded`` ones as (run, value)."""

    mean: float
    std: float
    n: int
    values: tuple[tuple[str, float], ...] = ()
    excluded: tuple[tuple[str, float], ...] = ()

    @property
    def sem(self) -> float:
        """Standard error of the mean."""
        return self.std / np.sqrt(self.n) if self.n > 0 else float("nan")


def estimate(samples: list[tuple[str, float]], what: str,
             findings: list[Finding] | None = None) -> Estimate:
    """Mean and spread of ``samples`` (run, value), leaving out outliers (reported in
    ``findings`` naming ``what``)."""
    values = np.array([v for _, v in samples], dtype=float)
    keep = np.ones(len(values), dtype=bool)
    if len(values) >= 3:
        med = float(np.median(values))
        mad = 1.4826 * float(np.median(np.abs(values - med)))
        limit = OUTLIER_MADS * max(mad, 1e-9 * abs(med), 1e-12)
        keep = np.abs(values - med) <= limit
    used = tuple(s for s, k in zip(samples, keep, strict=True) if k)
    dropped = tuple(s for s, k in zip(samples, keep, strict=True) if not k)
    if findings is not None:
        for run, value in dropped:
            findings.append(Finding(run, f"{what}: {value:.6g} is an outlier among "
                                         f"{len(values)} runs (median {med:.6g}); left out"))
    kept = values[keep]
    std = float(np.std(kept, ddof=1)) if len(kept) > 1 else 0.0
    return Estimate(float(kept.mean()), std, len(kept), used, dropped)


@dataclass(frozen=True)
class Segment:
    """The train's front between two neighbouring sensors: from ``a`` at ``t0`` to ``b``
    at ``t1``; ``d`` metres."""

    a: str
    b: str
    t0: float
    t1: float
    d: float

    @property
    def velocity(self) -> float:
        """Mean velocity over the segment, m/s."""
        return self.d / (self.t1 - self.t0)


@dataclass
class ShortMove:
    """Distance run from rest at ``level`` for ``duration`` s then stopped (measured),
    with what the calibrated model predicts (``model``, m)."""

    level: int
    duration: float
    distance: Estimate
    model: float = float("nan")


@dataclass
class Calibration:
    """Everything a log told about the kinematic model (see the module doc)."""

    velocity: dict[int, Estimate] = field(default_factory=dict)
    acceleration: dict[tuple[int, int], Estimate] = field(default_factory=dict)
    finished: dict[tuple[int, int], bool] = field(default_factory=dict)
    start: dict[int, Estimate] = field(default_factory=dict)
    stop_distance: dict[int, Estimate] = field(default_factory=dict)
    stop_time: dict[int, Estimate] = field(default_factory=dict)
    short_moves: list[ShortMove] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    #: per run: the usable segments and the commands, for plots
    segments: dict[str, list[Segment]] = field(default_factory=dict)
    hits: dict[str, list] = field(default_factory=dict)
    commands: dict[str, list[Command]] = field(default_factory=dict)


@kernel(counted=True)
def longest_in_order(idx, n_sensors, prev):
    """The longest subsequence of hits whose sensor indices ``idx`` strictly increase:
    fills ``prev`` (each hit's predecessor on its longest chain, -1 for none) and returns
    the chain's last hit (-1 for no hits). Of equally long chains, each step takes the
    earliest hit, and the chain ends at the earliest hit it can.

    The hits of one sensor are reached in time order and a later one has every
    predecessor an earlier one had, so per sensor it is enough to keep the longest chain
    ending there and its earliest hit: O(hits x sensors), where comparing every pair of
    hits took O(hits^2) (a run of 10^5 hits ran as if hung)."""
    longest = np.zeros(n_sensors, dtype=np.int64)  # per sensor: the longest chain ending there
    first = np.full(n_sensors, -1, dtype=np.int64)  # and its earliest hit
    for i in range(idx.size):
        length, j = 0, -1
        for s in range(idx[i]):
            if longest[s] > length or (longest[s] == length and length > 0 and first[s] < j):
                length, j = longest[s], first[s]
        prev[i] = j
        if length + 1 > longest[idx[i]]:
            longest[idx[i]], first[idx[i]] = length + 1, i
    length, end = 0, -1
    for s in range(n_sensors):
        if longest[s] > length or (longest[s] == length and length > 0 and first[s] < end):
            length, end = longest[s], first[s]
    return end


def run_segments(run: str, hits, layout: SensorLayout,
                 findings: list[Finding]) -> tuple[list, list[Segment]]:
    """The good hits of one run (in time order) and the segments between neighbouring
    sensors among them; drops spurious hits (a sensor firing twice, or behind the train)
    and skips gaps (missed hits), reporting each."""
    # the hits that are real are the longest run of sensors in route order (a spurious
    # hit, a sensor firing twice or out of turn, breaks the order); ties keep early hits
    idx = np.array([layout.index(h.sensor) for h in hits], dtype=np.int64)
    prev = np.full(len(hits), -1, dtype=np.int64)
    i = longest_in_order(idx, len(layout), prev)
    keep: set[int] = set()
    while i >= 0:
        keep.add(int(i))
        i = prev[i]
    good = [h for k, h in enumerate(hits) if k in keep]
    fired = {h.sensor for h in good}
    for k, h in enumerate(hits):
        if k not in keep:
            what = ("fired again" if h.sensor in fired
                    else "fired out of order with the other sensors")
            findings.append(Finding(run, f"sensor {h.sensor} {what} at {h.time:.3f} s; "
                                         "that hit is dropped"))
    segments = []
    for h0, h1 in zip(good, good[1:], strict=False):
        i0, i1 = layout.index(h0.sensor), layout.index(h1.sensor)
        if i1 != i0 + 1:
            missed = ", ".join(layout.names[i0 + 1:i1])
            findings.append(Finding(run, f"missed hit at {missed} (between {h0.sensor} at "
                                         f"{h0.time:.3f} s and {h1.sensor} at {h1.time:.3f} s); "
                                         "that stretch is not used"))
            continue
        if h1.time <= h0.time:
            findings.append(Finding(run, f"{h1.sensor} fired no later than {h0.sensor}; "
                                         "that segment is not used"))
            continue
        segments.append(Segment(h0.sensor, h1.sensor, h0.time, h1.time,
                                layout.positions[i1] - layout.positions[i0]))
    return good, segments


@dataclass
class _Stretch:
    """A level held from one command to the next (or the end of the run)."""

    run: str
    level: int
    prev: int
    command: Command
    end: float
    segments: list[Segment]
    position: float | None  # where the command was given, m (sensor or position)


def _stretches(run: str, commands: list[Command], segments: list[Segment],
               layout: SensorLayout) -> list[_Stretch]:
    out = []
    prev = 0
    # segments run in time order (both ends increase), so those inside a stretch are
    # one slice: found by bisection, not by going over all of them for every command
    starts = [s.t0 for s in segments]
    ends = [s.t1 for s in segments]
    for k, c in enumerate(commands):
        end = commands[k + 1].time if k + 1 < len(commands) else np.inf
        inside = segments[bisect_left(starts, c.time - 1e-9):bisect_right(ends, end + 1e-9)]
        pos = layout.position(c.sensor) if c.sensor else c.position
        out.append(_Stretch(run, c.level, prev, c, end, inside, pos))
        prev = c.level
    return out


def calibrate(log: SensorLog, layout: SensorLayout, rounds: int = 8) -> Calibration:
    """Estimate the kinematic model from a sensor log (see the module doc)."""
    cal = Calibration()
    stretches: list[_Stretch] = []
    rows = log.by_run()
    for run, (hits, commands, _) in rows.items():
        good, segs = run_segments(run, hits, layout, cal.findings)
        cal.segments[run] = segs
        cal.hits[run] = good
        fired = {h.sensor for h in good}
        for c in commands:
            if c.sensor is not None and c.sensor not in fired:
                cal.findings.append(Finding(run, f"level {c.level} was commanded at sensor "
                                                 f"{c.sensor}, which has no hit in this run "
                                                 "(missed)"))
        cal.commands[run] = commands
        stretches += _stretches(run, commands, segs, layout)

    accel: dict[tuple[int, int], float] = {}
    last: tuple = ()
    rnd = 0
    while rnd < rounds:
        # a few rounds settle which segments are steady: each round's accelerations tell
        # the next how long the changes took; the last round reports what it left out
        done = rnd == rounds - 1
        findings = cal.findings if done else None
        # steady velocities: segments after the change to the level has finished
        per_level: dict[int, list[tuple[str, float]]] = defaultdict(list)
        for s in stretches:
            if s.level == 0 or not s.segments:
                continue
            settle = _settle_time(s, cal.velocity, accel)
            if settle is None:
                steady = s.segments[-1:]  # until the change is known: its last segment
            else:
                steady = [g for g in s.segments if g.t0 >= s.command.time + settle]
            if steady:
                d = sum(g.d for g in steady)
                t = sum(g.t1 - g.t0 for g in steady)
                per_level[s.level].append((s.run, d / t))
        cal.velocity = {lv: estimate(v, f"velocity of level {lv}", findings)
                        for lv, v in sorted(per_level.items())}
        _changes(cal, stretches, accel, findings, layout)
        accel = {k: e.mean for k, e in cal.acceleration.items()}
        accel.update({(0, lv): e.mean for lv, e in cal.start.items()})
        now = (tuple(cal.velocity.items()), tuple(accel.items()))
        if now == last and not done:
            rounds = rnd + 2  # converged: one more round, to report
        last = now
        rnd += 1
    _stops(cal, rows, stretches, accel)
    return cal


def _settle_time(s: _Stretch, velocity: dict[int, Estimate],
                 accel: dict[tuple[int, int], float]) -> float | None:
    """How long after its command a stretch's level change takes (None if unknown yet)."""
    a = accel.get((s.prev, s.level))
    v1 = 0.0 if s.prev == 0 else (velocity[s.prev].mean if s.prev in velocity else None)
    v2 = velocity[s.level].mean if s.level in velocity else None
    if a is None or v1 is None or v2 is None or a == 0:
        return None
    return (1.0 + SETTLE_MARGIN) * abs(v2 - v1) / abs(a)


def _changes(cal: Calibration, stretches: list[_Stretch], accel: dict,
             findings: list[Finding] | None, layout: SensorLayout) -> None:
    """Accelerations between levels (command at a sensor) and starts (from rest)."""
    samples: dict[tuple[int, int], list[tuple[str, Transition]]] = defaultdict(list)
    starts: dict[int, list[tuple[str, Transition]]] = defaultdict(list)
    vel = {lv: e.mean for lv, e in cal.velocity.items()}
    by_run: dict[str, list[_Stretch]] = defaultdict(list)
    for s in stretches:
        by_run[s.run].append(s)
    for run, rs in by_run.items():
        for k, s in enumerate(rs):
            if s.level == 0 or s.level not in vel:
                continue
            if s.prev == 0:
                # a start from rest at a known position: to the first sensor hit after it
                first = next((h for h in cal.hits[run]
                              if s.command.time < h.time <= s.end), None)
                if first is None or s.position is None:
                    continue
                d = layout.position(first.sensor) - s.position
                t = first.time - s.command.time
                if d > 0 and t > 0:
                    starts[s.level].append((run, transition(d, t, 0.0, vel[s.level])))
                continue
            if s.prev not in vel or s.command.sensor is None:
                continue
            before = rs[k - 1]
            settle = _settle_time(before, cal.velocity, accel)
            if settle is not None and s.command.time < before.command.time + settle:
                if findings is not None:
                    findings.append(Finding(run, f"level {s.level} commanded at "
                                                 f"{s.command.sensor} before level {s.prev} "
                                                 "had settled; not used for the acceleration"))
                continue
            first = next((g for g in s.segments if g.a == s.command.sensor), None)
            if first is None:
                if findings is not None:
                    findings.append(Finding(run, f"no segment from {s.command.sensor} after the "
                                                 f"change to level {s.level}; not used"))
                continue
            samples[(s.prev, s.level)].append(
                (run, transition(first.d, first.t1 - first.t0, vel[s.prev], vel[s.level])))
    cal.acceleration, cal.finished, cal.start = {}, {}, {}
    for key, trs in sorted(samples.items()):
        cal.acceleration[key] = estimate([(r, tr.acceleration) for r, tr in trs],
                                         f"acceleration {key[0]} -> {key[1]}", findings)
        cal.finished[key] = sum(tr.finished for _, tr in trs) * 2 >= len(trs)
    for lv, trs in sorted(starts.items()):
        cal.start[lv] = estimate([(r, tr.acceleration) for r, tr in trs],
                                 f"start to level {lv}", findings)
        cal.finished[(0, lv)] = sum(tr.finished for _, tr in trs) * 2 >= len(trs)


def _stops(cal: Calibration, rows: dict[str, tuple[list, list, list]],
           stretches: list[_Stretch], accel: dict[tuple[int, int], float]) -> None:
    """Stop distances and times by level, and short moves."""
    dist: dict[int, list[tuple[str, float]]] = defaultdict(list)
    time: dict[int, list[tuple[str, float]]] = defaultdict(list)
    short: dict[tuple[int, float], list[tuple[str, float]]] = defaultdict(list)
    by_run: dict[str, list[_Stretch]] = defaultdict(list)
    for s in stretches:
        by_run[s.run].append(s)
    for run, rs in by_run.items():
        stops = rows[run][2]
        for k, s in enumerate(rs):
            if s.level != 0 or k == 0:
                continue
            stop = next((p for p in stops if p.time >= s.command.time), None)
            if stop is None:
                continue
            before = rs[k - 1]
            if s.position is not None and before.prev == 0 and s.command.sensor is None:
                # a short move: started from rest, stopped by time, not at a sensor
                start = before.position
                if start is not None:
                    dur = round(s.command.time - before.command.time, 1)
                    short[(before.level, dur)].append((run, stop.position - start))
                continue
            if s.position is None:
                continue
            settle = _settle_time(before, cal.velocity, accel)
            if settle is not None and s.command.time < before.command.time + settle:
                cal.findings.append(Finding(run, f"stop commanded before level {before.level} "
                                                 "had settled; not used for stop distance"))
                continue
            dist[before.level].append((run, stop.position - s.position))
            time[before.level].append((run, stop.time - s.command.time))
    cal.stop_distance = {lv: estimate(v, f"stop distance from level {lv}", cal.findings)
                         for lv, v in sorted(dist.items())}
    cal.stop_time = {lv: estimate(v, f"stop time from level {lv}", cal.findings)
                     for lv, v in sorted(time.items())}
    b = stop_decel(cal)
    for (lv, dur), values in sorted(short.items()):
        est = estimate(values, f"short move at level {lv} for {dur:g} s", cal.findings)
        model = float("nan")
        if lv in cal.start and lv in cal.velocity and b is not None:
            model = short_move(cal.start[lv].mean, dur, b, cal.velocity[lv].mean)
        cal.short_moves.append(ShortMove(lv, dur, est, model))


def stop_decel(cal: Calibration) -> float | None:
    """The mean constant deceleration of the measured stops (m/s^2), or None."""
    rates = [stop_deceleration(cal.velocity[lv].mean, e.mean)
             for lv, e in cal.stop_distance.items() if lv in cal.velocity and e.mean > 0]
    return float(np.mean(rates)) if rates else None
