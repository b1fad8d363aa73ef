"""The built-in driver: holds the speed limits, brakes ahead of lower ones, stops at a point.

It drives any vehicle plugin through two controls by name: ``traction_level``
and ``brake_level`` (0 to 1), on every vehicle that declares them. Each
``update_interval`` it works out a target speed where the train is:

* the lowest speed limit over the train's length (front to rear: a train
  speeds up only when its rear has left a lower limit), less ``margin``;
* ahead of each lower limit, the braking curve ``sqrt(v_lim**2 + 2 b d)`` at
  the planned deceleration ``b`` (``braking_deceleration``), ``d`` being the
  distance from the front to where the limit starts;
* ahead of ``stop_at``, the braking curve to standstill at that point;
* ``speed``, if given, as a cruising speed below the limits;
* with a ``timetable``, the lowest cruising speed that reaches the next point
  on time (see :mod:`rrscore.timetable`); faster than that it coasts;

and sets traction (below the target) or brakes (above it) with a
proportional-integral law on the speed error. Commands change only when they
change by more than ``DEADBAND``, so a train holding its speed does not make
the solver restart at every update. Within ``stop_tolerance`` of the stop
point at a crawl, or past it, it brakes fully and holds the train.

The planned deceleration must be one the train can make on the steepest
down grade it brakes on (the driver does not know the brakes' power): with
only a locomotive brake that is a few hundredths of m/s².
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from numba import njit

from ..engine.adapters import DECIDE, DRIVER_PARAMS, DRIVER_STATE
from ..model.config import Context, Param, TableList
from ..model.track import Route
from ..model.train import Train
from .timetable import TIMETABLE_SCHEMA, Timetable, check_timetable, planning_profile

AUTODRIVER_SCHEMA = {
    "mode": Param(kind=str, default="off", choices=("off", "hold_limit"),
                  doc="off: the driver program alone drives; hold_limit: the built-in driver "
                      "drives to the speed limits (and stops at stop_at)"),
    "speed": Param("m/s", None, "cruising speed, below the limits; none: the limits",
                   min=0.0, exclusive_min=True),
    "margin": Param("m/s", 1.0, "target this far below each limit", min=0.0),
    "braking_deceleration": Param("m/s^2", 0.05, "deceleration of the braking curves ahead "
                                  "of lower limits and the stop point: one the train's brakes "
                                  "can make", min=0.0, exclusive_min=True),
    "stop_at": Param(kind=str, default=None, doc="named point of the route where the front "
                     "of the train stops"),
    "stop_tolerance": Param("m", 10.0, "the train stops within this distance of stop_at",
                            min=0.0, exclusive_min=True),
    "update_interval": Param("s", 1.0, "time between the driver's decisions", min=0.0,
                             exclusive_min=True),
    "min_speed": Param("m/s", 5.0, "slowest cruising speed a timetable may ask for (a train "
                       "early on time waits at the point, not on the line)", min=0.0,
                       exclusive_min=True),
    "timetable": TableList(TIMETABLE_SCHEMA, "points to reach by given times, in route "
                           "order; the driver coasts where time allows"),
}
"""The ``[scenario.autodriver]`` table."""

TRACTION, BRAKE = "traction_level", "brake_level"
#: Proportional gain, level per m/s of speed error; integral gain, level per m (m/s * s).
_KP, _KI = 1.0, 0.05
#: Smallest command change that is passed on (level).
DEADBAND = 0.01
#: Below this speed at the stop point the train is stopped, m/s.
_CRAWL = 0.3


@njit(cache=True, _nrt=False)
def _target_speed(front, rear, starts, ends, limits, margin, decel, cruise,
                  stop_at):  # pragma: no cover (compiled)
    """:meth:`AutoDriver.target_speed` in one pass over the route's sections (numpy took
    a dozen small calls at every decision): the lowest limit under the train less the
    margin, the braking curves down to each limit ahead, the cruising speed and, where
    ``stop_at`` is not NaN, the braking curve down to the stop."""
    here = np.inf  # the lowest limit under the train
    ahead = np.inf  # the lowest braking curve down to a limit ahead
    for i in range(starts.size):
        if starts[i] < front and ends[i] > rear:
            here = min(here, limits[i])
        elif starts[i] >= front:
            to = max(limits[i] - margin, 0.0)
            ahead = min(ahead, np.sqrt(to * to + 2.0 * decel * (starts[i] - front)))
    target = min(here - margin, ahead, cruise)
    if stop_at == stop_at:
        target = min(target, np.sqrt(2.0 * decel * max(stop_at - front, 0.0)))
    return max(target, 0.0)


@njit(cache=True)
def send_command(u, state):  # pragma: no cover (compiled)
    """Whether the command ``u`` goes out (into the state): it changes by more than the
    dead band, or to a bound."""
    s = state[0]
    c = s.command
    if abs(u - c) < DEADBAND and not ((u == -1.0 or u == 1.0) and u != c):
        return 0
    s.command = u
    return 1


@njit(DECIDE, cache=True)
def decide(t, front, rear, speed, on_time, state, params,
           sections):  # pragma: no cover (compiled)
    """The built-in driver's decision at ``t`` (the train's front and rear, the lead's
    speed; ``on_time`` the cruising speed a timetable asks for, inf without one), on its
    state and settings (one record each) and the route's sections (rows: starts, ends,
    limits). Returns 1 where its command changed (traction above zero, brake below), else
    0 (no decision due, or the same command)."""
    s, p = state[0], params[0]
    if s.on == 0.0 or t < s.next - 1e-9:
        return 0
    dt = p.interval if s.next > 0 else 0.0
    s.next = t + p.interval
    if p.stop_at == p.stop_at and s.stopped == 0.0:
        to_go = p.stop_at - front
        s.stopped = 1.0 if to_go <= 0.0 or (to_go <= p.tolerance and speed < _CRAWL) else 0.0
    if s.stopped != 0.0:
        s.target = 0.0
        return send_command(-1.0, state)
    limit = _target_speed(front, rear, sections[0], sections[1], sections[2], p.margin,
                          p.decel, p.cruise, p.stop_at)
    s.target = min(limit, on_time)
    s.coasting = 1.0 if on_time < limit and on_time <= speed <= limit else 0.0
    if s.coasting != 0.0:  # ahead of time: roll, neither pulling nor braking
        s.integral = 0.0
        return send_command(0.0, state)
    if speed > limit:  # brake down to the limit, not to the timetable's speed
        s.target = limit
    error = s.target - speed
    u = _KP * error + s.integral
    if -1.0 < u < 1.0:  # integrate only when not saturated (no wind-up)
        s.integral += _KI * error * dt
        u = _KP * error + s.integral
    return send_command(-1.0 if u < -1.0 else (1.0 if u > 1.0 else u), state)


def check_autodriver(cfg: Mapping[str, Any], train: Train, route: Route, ctx: Context) -> None:
    """Raise a ConfigError if the built-in driver cannot drive this train on this route."""
    if cfg["mode"] == "off":
        if cfg["timetable"]:
            raise ctx.child("timetable").error(
                "found a timetable with mode 'off', expected mode 'hold_limit' (the built-in "
                "driver keeps the timetable)")
        return
    models = [b.cls for b in train.batches]
    if not any(TRACTION in m.controls for m in models):
        raise ctx.child("mode").error(
            f"found {cfg['mode']!r}, but no vehicle of the train has a {TRACTION!r} control "
            "for the built-in driver to set")
    if cfg["stop_at"] is not None:
        route.position_of(cfg["stop_at"], ctx.child("stop_at"))
    check_timetable(cfg["timetable"], route, ctx.child("timetable"))
    if cfg["stop_at"] is not None and cfg["timetable"]:
        last = cfg["timetable"][-1]["point"]
        if route.points[last] > route.points[cfg["stop_at"]]:
            raise ctx.child("timetable").child(len(cfg["timetable"]) - 1).child("point").error(
                f"found {last!r} at {route.points[last]:g} m, beyond the stop point "
                f"{cfg['stop_at']!r} ({route.points[cfg['stop_at']]:g} m), where the train "
                "stops: expected a point up to it")


class CommandDriver:
    """What a driver whose decisions the event loop takes (the built-in one, a trace's)
    has: its run state (:data:`DRIVER_STATE`, a record the loop's decisions and Python
    share; it starts switched on, with no command), the vehicle types that take each of
    its controls, and its command as levels."""

    def __init__(self, train: Train) -> None:
        self.state = np.zeros(1, dtype=DRIVER_STATE).view(np.recarray)
        self.state[0].on = 1.0
        self.state[0].target = math.nan
        #: The vehicle types (batch indices) with each control it sets, fixed for the run.
        self.users = {name: [b for b, batch in enumerate(train.batches)
                             if name in batch.cls.controls] for name in (TRACTION, BRAKE)}

    @property
    def enabled(self) -> bool:
        """Whether it drives (a driver's action switches it off and on)."""
        return self.state[0].on != 0.0

    @enabled.setter
    def enabled(self, on: bool) -> None:
        self.state[0].on = 1.0 if on else 0.0

    @property
    def command(self) -> float:
        """The last command: traction level above zero, brake level below."""
        return float(self.state[0].command)

    @property
    def next_time(self) -> float:
        """When it decides next, s."""
        return float(self.state[0].next)

    def levels(self) -> tuple[tuple[str, float], tuple[str, float]]:
        """The levels of the present command: traction above zero, brake below."""
        return (TRACTION, max(self.command, 0.0)), (BRAKE, max(-self.command, 0.0))


class AutoDriver(CommandDriver):
    """The built-in driver of one run: its settings, and its run state (a record the
    event loop's decisions and Python's share)."""

    def __init__(self, cfg: Mapping[str, Any], train: Train, route: Route) -> None:
        super().__init__(train)
        self.train = train
        self.route = route
        cruise = math.inf if cfg["speed"] is None else cfg["speed"]
        stop_at = None if cfg["stop_at"] is None else route.points[cfg["stop_at"]]
        self.stop_at = stop_at
        self.params = np.zeros(1, dtype=DRIVER_PARAMS).view(np.recarray)
        self.params[0] = (cfg["update_interval"], cfg["margin"], cfg["braking_deceleration"],
                          cruise, math.nan if stop_at is None else stop_at,
                          cfg["stop_tolerance"])
        self.timetable = None if not cfg["timetable"] else Timetable(
            cfg["timetable"], route,
            planning_profile(route, train.total_length, cfg["margin"],
                             cfg["braking_deceleration"], cruise, stop_at))
        self.min_speed = cfg["min_speed"]
        lim = route.speed_limits
        limits = np.where(lim > 0, lim, np.inf).astype(float)
        starts = np.ascontiguousarray(route.starts, dtype=float)
        #: The route's sections: rows start, end, limit.
        self.sections = np.ascontiguousarray(np.vstack([starts, starts + route.lengths,
                                                        limits]))

    @property
    def target(self) -> float:
        """The target speed of the last decision, m/s."""
        return float(self.state[0].target)

    @property
    def stopped(self) -> bool:
        """Whether it has stopped the train at the stop point."""
        return self.state[0].stopped != 0.0

    @property
    def coasting(self) -> bool:
        """Whether the last decision was to coast (ahead of the timetable)."""
        return self.state[0].coasting != 0.0

    @property
    def interval(self) -> float:
        """The time between its decisions, s."""
        return float(self.params[0].interval)

    def target_speed(self, front: float, rear: float) -> float:
        """Target speed with the train's front at ``front`` and rear at ``rear``, m/s."""
        p = self.params[0]
        return float(_target_speed(front, rear, self.sections[0], self.sections[1],
                                   self.sections[2], p.margin, p.decel, p.cruise, p.stop_at))

    def on_time(self, t: float, front: float) -> float:
        """The cruising speed the timetable asks for at ``t`` (inf without one)."""
        if self.timetable is None:
            return math.inf
        return max(self.timetable.speed(t, front, self.stopped), self.min_speed)

    def update(self, t: float, front: float, rear: float, speed: float) -> bool:
        """Decide at time ``t`` (:func:`decide`); return whether the command changed."""
        due = self.enabled and t >= self.next_time - 1e-9
        on_time = self.on_time(t, front) if due else math.inf
        return bool(decide(t, front, rear, speed, on_time, self.state, self.params,
                           self.sections))
