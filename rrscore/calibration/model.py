"""The calibrated kinematic model: per speed level its velocity, the accelerations to the
other levels and the stop distance and time, written and read as TOML; and the stop
predictor built on it.

Levels whose stop was not measured get a stop from the mean deceleration of the
measured ones (``v^2 / 2b`` and ``v / b``, marked ``stop_source = "model"``), and a
change of level that was not measured gets the mean of the measured changes in the
same direction. The predictor assumes the train runs steadily at its level until
the stop command.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import tomli_w

from ..jit import kernel
from ..model.config import load_toml
from ..model.errors import RrsError
from .estimation import Calibration, stop_decel
from .kinematics import stopping
from .sensors import Command, SensorLayout, write_whole


@dataclass(frozen=True)
class LevelModel:
    """One speed level: steady ``velocity`` (m/s) and the stop from it (m, s), each with the
    spread over the runs it came from (``*_std``, ``*_n``); ``stop_measured`` tells whether
    the stop was measured or follows from the mean stop deceleration."""

    level: int
    velocity: float
    velocity_std: float = 0.0
    velocity_n: int = 0
    stop_distance: float = math.nan
    stop_distance_std: float = 0.0
    stop_time: float = math.nan
    stop_time_std: float = 0.0
    stop_n: int = 0
    stop_measured: bool = False


@dataclass(frozen=True)
class ChangeModel:
    """A measured change from level ``start`` to ``end``: ``acceleration`` (m/s^2, < 0 when
    slowing) with its spread, and whether it ``finished`` before the next sensor."""

    start: int
    end: int
    acceleration: float
    std: float = 0.0
    n: int = 0
    finished: bool = True


@dataclass
class StopPlan:
    """Where to give the stop command so the front stops at ``target`` (m): at
    ``command_position``; from ``position`` that is ``distance`` m and ``delay`` s away (at
    the level's velocity), or ``sensor_delay`` s after ``sensor`` fires. ``too_late`` when
    the command point is behind ``position``; ``stop_if_now`` is where the train stops if
    the command is given at ``position`` now."""

    level: int
    target: float
    stop_distance: float
    stop_time: float
    command_position: float
    position: float | None = None
    distance: float | None = None
    delay: float | None = None
    too_late: bool = False
    stop_if_now: float | None = None
    sensor: str | None = None
    sensor_delay: float | None = None

    def describe(self) -> str:
        """A few lines for people."""
        lines = [f"level {self.level}: stop distance {self.stop_distance:.2f} m, stop time "
                 f"{self.stop_time:.2f} s",
                 f"give the stop command with the front at {self.command_position:.2f} m to "
                 f"stop at {self.target:.2f} m"]
        if self.sensor is not None:
            lines.append(f"  = {self.sensor_delay:.3f} s after sensor {self.sensor} fires")
        if self.position is not None:
            if self.too_late:
                lines.append(f"  too late from {self.position:.2f} m: "
                             f"{-self.distance:.2f} m past that point")
            else:
                lines.append(f"  = in {self.distance:.2f} m, {self.delay:.3f} s from now "
                             f"(front at {self.position:.2f} m)")
            lines.append(f"stop command now: the front stops at {self.stop_if_now:.2f} m")
        return "\n".join(lines)


#: Most time steps of one run's model trajectory (:meth:`KinematicModel.trajectory`).
MAX_TRAJECTORY_STEPS = 2_000_000


@kernel(counted=True)
def level_positions(at, aim, rate, start, t0, dt, steps):
    """Front positions at ``t0 + dt * i`` (i < ``steps``) of a train at rest at ``start``
    when the commands at times ``at`` set the velocity it aims at (``aim``, NaN: keep the
    speed) and the rate of getting there (``rate``, its sign taken from the direction):
    explicit steps of constant acceleration, each ended at the aimed velocity."""
    x = np.empty(steps)
    pos, v, k = start, 0.0, 0
    target_of, a_of = 0.0, math.nan
    holding = True
    for i in range(steps):
        t = t0 + dt * i
        while k < at.size and at[k] <= t + 1e-12:
            holding = math.isnan(aim[k])
            target_of, a_of = aim[k], rate[k]
            k += 1
        target = v if holding else target_of
        if v != target:
            a = abs(a_of) if target > v else -abs(a_of)
            nv = v + a * dt
            # (as Python's min and max treat a NaN rate: the new value stays NaN)
            if a > 0:
                nv = target if target < nv else nv
            else:
                nv = target if target > nv else nv
        else:
            nv = v
        x[i] = pos
        pos += 0.5 * (v + nv) * dt
        v = nv
    return x


@dataclass
class KinematicModel:
    """The calibrated kinematic model of one train (see the module doc)."""

    levels: dict[int, LevelModel] = field(default_factory=dict)
    changes: dict[tuple[int, int], ChangeModel] = field(default_factory=dict)
    stop_deceleration: float | None = None
    short_moves: list[dict[str, Any]] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)
    source: str = ""

    @classmethod
    def from_calibration(cls, cal: Calibration, source: str = "") -> KinematicModel:
        """The model of a log's estimates."""
        b = stop_decel(cal)
        levels = {}
        for lv, v in cal.velocity.items():
            if lv in cal.stop_distance and lv in cal.stop_time:
                d, t = cal.stop_distance[lv], cal.stop_time[lv]
                levels[lv] = LevelModel(lv, v.mean, v.std, v.n, d.mean, d.std, t.mean, t.std,
                                        d.n, True)
            else:
                d_, t_ = stopping(v.mean, b) if b else (math.nan, math.nan)
                levels[lv] = LevelModel(lv, v.mean, v.std, v.n, d_, 0.0, t_, 0.0, 0, False)
        changes = {k: ChangeModel(k[0], k[1], e.mean, e.std, e.n, cal.finished[k])
                   for k, e in cal.acceleration.items()}
        changes.update({(0, lv): ChangeModel(0, lv, e.mean, e.std, e.n, cal.finished[(0, lv)])
                        for lv, e in cal.start.items()})
        shorts = [{"level": m.level, "duration_s": m.duration, "distance_m": m.distance.mean,
                   "distance_std": m.distance.std, "n": m.distance.n, "model_m": m.model}
                  for m in cal.short_moves]
        return cls(levels, changes, b, shorts, [str(f) for f in cal.findings], source)

    # -- the model's answers ------------------------------------------------
    def level(self, level: int) -> LevelModel:
        """The model of ``level``; an :class:`RrsError` if it was not calibrated."""
        if level not in self.levels:
            raise RrsError(f"level {level} is not in the model (calibrated levels: "
                           f"{', '.join(map(str, sorted(self.levels))) or 'none'})")
        return self.levels[level]

    def velocity(self, level: int) -> float:
        """Steady velocity of ``level``, m/s (0 for level 0)."""
        return 0.0 if level == 0 else self.level(level).velocity

    def acceleration(self, start: int, end: int) -> float:
        """Acceleration (m/s^2) of a change from level ``start`` to ``end``: measured, or the
        mean of the measured changes the same way (NaN if there are none)."""
        if (start, end) in self.changes:
            return self.changes[(start, end)].acceleration
        up = end > start
        same = [c.acceleration for c in self.changes.values() if (c.end > c.start) == up
                and c.end != 0]
        if end == 0 and self.stop_deceleration:
            return -self.stop_deceleration
        return float(np.mean(same)) if same else math.nan

    def predict_stop(self, level: int, target: float, position: float | None = None,
                     layout: SensorLayout | None = None) -> StopPlan:
        """Where (and when, and after which sensor) to give the stop command at ``level``
        so the front stops at ``target``; from ``position``, also whether it is too late
        and where the train stops if the command is given now."""
        lm = self.level(level)
        if not math.isfinite(lm.stop_distance):
            raise RrsError(f"level {level} has no stop distance: the log measured no stop")
        point = target - lm.stop_distance
        plan = StopPlan(level, target, lm.stop_distance, lm.stop_time, point)
        if position is not None:
            plan.position = position
            plan.distance = point - position
            plan.delay = plan.distance / lm.velocity
            plan.too_late = plan.distance < 0
            plan.stop_if_now = position + lm.stop_distance
        if layout is not None:
            before = [(n, x) for n, x in zip(layout.names, layout.positions, strict=True)
                      if x <= point and (position is None or x >= position)]
            if before:
                plan.sensor = before[-1][0]
                plan.sensor_delay = (point - before[-1][1]) / lm.velocity
        return plan

    def trajectory(self, commands: list[Command], start: float, times: np.ndarray,
                   layout: SensorLayout | None = None, dt: float = 0.01) -> np.ndarray:
        """Front positions at ``times`` predicted by the model for a run with these level
        commands, starting at rest at ``start`` (m) at the first command."""
        t0 = commands[0].time
        t_end = float(np.max(times))
        # a longer run takes longer steps rather than unbounded memory and time
        dt = max(dt, (t_end - t0) / MAX_TRAJECTORY_STEPS)
        steps = int(max(t_end - t0, 0.0) / dt) + 2
        # per command: its time, the velocity it aims at (NaN: an uncalibrated level, hold
        # the speed) and the rate of the change from the level before it
        at = np.array([c.time for c in commands], dtype=float)
        aim = np.empty(len(commands))
        rate = np.empty(len(commands))
        prev = 0
        for k, c in enumerate(commands):
            aim[k] = self.velocity(c.level) if c.level in self.levels or c.level == 0 \
                else math.nan
            rate[k] = self.acceleration(prev, c.level)
            prev = c.level
        tt = t0 + dt * np.arange(steps)
        return np.interp(times, tt, level_positions(at, aim, rate, start, t0, dt, steps))

    # -- TOML ---------------------------------------------------------------
    def to_table(self) -> dict[str, Any]:
        """The model as a TOML-ready table."""
        def clean(d):
            return {k: v for k, v in d.items() if not (isinstance(v, float) and math.isnan(v))}
        model: dict[str, Any] = {"source": self.source}
        if self.stop_deceleration is not None:
            model["stop_deceleration_mps2"] = self.stop_deceleration
        return {
            "model": model,
            "level": [clean({"level": m.level, "velocity_mps": m.velocity,
                             "velocity_std": m.velocity_std, "velocity_n": m.velocity_n,
                             "stop_distance_m": m.stop_distance,
                             "stop_distance_std": m.stop_distance_std,
                             "stop_time_s": m.stop_time, "stop_time_std": m.stop_time_std,
                             "stop_n": m.stop_n,
                             "stop_source": "measured" if m.stop_measured else "model"})
                      for m in sorted(self.levels.values(), key=lambda m: m.level)],
            "change": [{"from": c.start, "to": c.end, "acceleration_mps2": c.acceleration,
                        "std": c.std, "n": c.n,
                        "case": "finished" if c.finished else "unfinished"}
                       for c in sorted(self.changes.values(), key=lambda c: (c.start, c.end))],
            "short_move": [clean(s) for s in self.short_moves],
            "findings": {"messages": list(self.findings)},
        }

    def write(self, path: str | Path) -> None:
        """Write the model as TOML."""
        write_whole(path, tomli_w.dumps(self.to_table()))

    @classmethod
    def read(cls, path: str | Path) -> KinematicModel:
        """Read a model written by :meth:`write`; an error names the file and the key."""
        data = load_toml(path, "kinematic model")
        try:
            levels = {}
            for i, t in enumerate(data.get("level", [])):
                where = f"level[{i}]"
                levels[int(t["level"])] = LevelModel(
                    int(t["level"]), float(t["velocity_mps"]), float(t.get("velocity_std", 0)),
                    int(t.get("velocity_n", 0)), float(t.get("stop_distance_m", math.nan)),
                    float(t.get("stop_distance_std", 0)), float(t.get("stop_time_s", math.nan)),
                    float(t.get("stop_time_std", 0)), int(t.get("stop_n", 0)),
                    t.get("stop_source", "measured") == "measured")
            changes = {}
            for i, t in enumerate(data.get("change", [])):
                where = f"change[{i}]"
                c = ChangeModel(int(t["from"]), int(t["to"]), float(t["acceleration_mps2"]),
                                float(t.get("std", 0)), int(t.get("n", 0)),
                                t.get("case", "finished") == "finished")
                changes[(c.start, c.end)] = c
        except KeyError as exc:
            raise RrsError(f"{path}: {where}: missing key {exc.args[0]!r}") from None
        except (TypeError, ValueError, OverflowError) as exc:  # (int of an infinity)
            raise RrsError(f"{path}: {where}: {exc}") from None
        if not levels:
            raise RrsError(f"{path}: found no [[level]] tables, expected a kinematic model "
                           "written by rrs calibrate")
        model = data.get("model", {})
        return cls(levels, changes, model.get("stop_deceleration_mps2"),
                   list(data.get("short_move", [])),
                   list(data.get("findings", {}).get("messages", [])), model.get("source", ""))
