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
change by more than ``_DEADBAND``, so a train holding its speed does not make
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

from .config import Context, Param, TableList
from .errors import plugin_call
from .timetable import TIMETABLE_SCHEMA, Timetable, check_timetable, planning_profile
from .track import Route
from .train import Train

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
_DEADBAND = 0.01
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


# The built-in driver's run state as the compiled loop holds it (AutoDriver.loop_state):
# the integral term, the last command, stopped (1/0), the next decision's time, the
# target speed, coasting (1/0), and whether the loop decides (1/0: enabled, no timetable)
(D_INTEGRAL, D_COMMAND, D_STOPPED, D_NEXT, D_TARGET, D_COASTING, D_ON) = range(7)
DRIVER_STATE_SIZE = 7
# Its settings (AutoDriver.loop_params): decision interval, margin, planned deceleration,
# cruising speed, stop position (NaN: none), stop tolerance, the rear vehicle's half length
(P_INTERVAL, P_MARGIN, P_DECEL, P_CRUISE, P_STOP_AT, P_TOLERANCE, P_REAR_HALF) = range(7)
DRIVER_PARAMS_SIZE = 7


@njit(cache=True, _nrt=False)
def decide(t, front, rear, speed, s, p, sections):  # pragma: no cover (compiled)
    """:meth:`AutoDriver.update` without a timetable, for the compiled loop: the same
    decision in the same arithmetic, on the state ``s`` (written) with the settings
    ``p`` (the ``D_`` and ``P_`` entries) and the route's sections (rows: starts, ends,
    limits). Returns whether the command changed (``s[D_COMMAND]``: traction above
    zero, brake below)."""
    if s[D_ON] == 0.0 or t < s[D_NEXT] - 1e-9:
        return False
    dt = p[P_INTERVAL] if s[D_NEXT] > 0 else 0.0
    s[D_NEXT] = t + p[P_INTERVAL]
    stop_at = p[P_STOP_AT]
    if stop_at == stop_at and s[D_STOPPED] == 0.0:
        to_go = stop_at - front
        s[D_STOPPED] = 1.0 if to_go <= 0.0 or (to_go <= p[P_TOLERANCE]
                                              and speed < _CRAWL) else 0.0
    if s[D_STOPPED] != 0.0:
        s[D_TARGET] = 0.0
        return _send(-1.0, s)
    limit = _target_speed(front, rear, sections[0], sections[1], sections[2], p[P_MARGIN],
                          p[P_DECEL], p[P_CRUISE], stop_at)
    s[D_TARGET] = limit  # min(limit, inf): no timetable
    s[D_COASTING] = 0.0
    error = s[D_TARGET] - speed
    u = _KP * error + s[D_INTEGRAL]
    if -1.0 < u < 1.0:  # integrate only when not saturated (no wind-up)
        s[D_INTEGRAL] += _KI * error * dt
        u = _KP * error + s[D_INTEGRAL]
    # np.clip's value (NaN passes through)
    return _send(-1.0 if u < -1.0 else (1.0 if u > 1.0 else u), s)


@njit(cache=True, _nrt=False)
def _send(u, s):  # pragma: no cover (compiled)
    """:meth:`AutoDriver._send`'s decision: whether ``u`` goes out (into ``s``)."""
    c = s[D_COMMAND]
    if abs(u - c) < _DEADBAND and not ((u == -1.0 or u == 1.0) and u != c):
        return False
    s[D_COMMAND] = u
    return True


@njit(cache=True, _nrt=False)
def levels(u):  # pragma: no cover (compiled)
    """The traction and brake levels of command ``u``, as Python's ``max(u, 0.0)`` and
    ``max(-u, 0.0)`` give them (a negative zero included)."""
    return (0.0 if 0.0 > u else u), (0.0 if 0.0 > -u else -u)


def check_autodriver(cfg: Mapping[str, Any], train: Train, route: Route, ctx: Context) -> None:
    """Raise a ConfigError if the built-in driver cannot drive this train on this route."""
    if cfg["mode"] == "off":
        if cfg["timetable"]:
            raise ctx.child("timetable").error(
                "found a timetable with mode 'off', expected mode 'hold_limit' (the built-in "
                "driver keeps the timetable)")
        return
    models = [b.model for b in train.batches]
    if not any(TRACTION in m.controls for m in models):
        raise ctx.child("mode").error(
            f"found {cfg['mode']!r}, but no vehicle of the train has a {TRACTION!r} control "
            "for the built-in driver to set")
    if cfg["stop_at"] is not None and cfg["stop_at"] not in route.points:
        raise ctx.child("stop_at").error(
            f"found {cfg['stop_at']!r}, expected a point of the route: "
            + (", ".join(route.points) or "(the route has none)"))
    check_timetable(cfg["timetable"], route, ctx.child("timetable"))
    if cfg["stop_at"] is not None and cfg["timetable"]:
        last = cfg["timetable"][-1]["point"]
        if route.points[last] > route.points[cfg["stop_at"]]:
            raise ctx.child("timetable").child(len(cfg["timetable"]) - 1).child("point").error(
                f"found {last!r} at {route.points[last]:g} m, beyond the stop point "
                f"{cfg['stop_at']!r} ({route.points[cfg['stop_at']]:g} m), where the train "
                "stops: expected a point up to it")


class AutoDriver:
    """The built-in driver of one run (its integral term and commands are run state)."""

    def __init__(self, cfg: Mapping[str, Any], train: Train, route: Route) -> None:
        self.train = train
        self.route = route
        self.cruise = math.inf if cfg["speed"] is None else cfg["speed"]
        self.margin = cfg["margin"]
        self.decel = cfg["braking_deceleration"]
        self.stop_at = None if cfg["stop_at"] is None else route.points[cfg["stop_at"]]
        self.stop_tolerance = cfg["stop_tolerance"]
        self.interval = cfg["update_interval"]
        self.enabled = True
        self.integral = 0.0
        self.command = 0.0  # last command: traction (> 0) or brake (< 0) level
        self.stopped = False
        self.next_time = 0.0
        self.target = math.nan
        self.timetable = None if not cfg["timetable"] else Timetable(
            cfg["timetable"], route,
            planning_profile(route, train.total_length, self.margin, self.decel,
                             self.cruise, self.stop_at))
        self.min_speed = cfg["min_speed"]
        self.coasting = False
        lim = route.speed_limits
        self._limits = np.where(lim > 0, lim, np.inf).astype(float)
        self._starts = np.ascontiguousarray(route.starts, dtype=float)
        self._ends = self._starts + route.lengths
        # Vehicles with each control: (batch index, rows) pairs, fixed for the run.
        self._users = {name: [(b, np.flatnonzero(np.ones(batch.model.count, bool)))
                              for b, batch in enumerate(train.batches)
                              if name in batch.model.controls]
                       for name in (TRACTION, BRAKE)}

    def target_speed(self, front: float, rear: float) -> float:
        """Target speed with the train's front at ``front`` and rear at ``rear``, m/s."""
        return float(_target_speed(front, rear, self._starts, self._ends, self._limits,
                                   self.margin, self.decel, self.cruise,
                                   math.nan if self.stop_at is None else self.stop_at))

    def update(self, t: float, front: float, rear: float, speed: float) -> bool:
        """Decide at time ``t``; return whether any command changed."""
        if not self.enabled or t < self.next_time - 1e-9:
            return False
        dt = self.interval if self.next_time > 0 else 0.0
        self.next_time = t + self.interval
        if self.stop_at is not None and not self.stopped:
            to_go = self.stop_at - front
            self.stopped = to_go <= 0.0 or (to_go <= self.stop_tolerance and speed < _CRAWL)
        on_time = math.inf if self.timetable is None else max(
            self.timetable.speed(t, front, self.stopped), self.min_speed)
        if self.stopped:
            self.target = 0.0
            return self._send(-1.0, t)
        limit = self.target_speed(front, rear)
        self.target = min(limit, on_time)
        self.coasting = on_time < limit and on_time <= speed <= limit
        if self.coasting:  # ahead of time: roll, neither pulling nor braking
            self.integral = 0.0
            return self._send(0.0, t)
        if speed > limit:  # brake down to the limit, not to the timetable's speed
            self.target = limit
        error = self.target - speed
        u = _KP * error + self.integral
        if -1.0 < u < 1.0:  # integrate only when not saturated (no wind-up)
            self.integral += _KI * error * dt
            u = _KP * error + self.integral
        return self._send(float(np.clip(u, -1.0, 1.0)), t)

    def loop_state(self) -> np.ndarray:
        """The run state as :func:`decide` takes it (the ``D_`` entries); ``D_ON`` 0 where
        the loop may not decide (disabled, or a timetable, which is Python's)."""
        on = self.enabled and self.timetable is None
        return np.array([self.integral, self.command, float(self.stopped), self.next_time,
                         self.target, float(self.coasting), float(on)])

    def take_loop_state(self, s: np.ndarray) -> None:
        """The run state the compiled loop's decisions left in ``s``."""
        self.integral, self.command = float(s[D_INTEGRAL]), float(s[D_COMMAND])
        self.stopped, self.next_time = bool(s[D_STOPPED]), float(s[D_NEXT])
        self.target, self.coasting = float(s[D_TARGET]), bool(s[D_COASTING])

    def loop_params(self) -> tuple[np.ndarray, np.ndarray]:
        """The settings :func:`decide` takes (the ``P_`` entries) and the route's sections
        (rows: starts, ends, limits)."""
        stop = math.nan if self.stop_at is None else self.stop_at
        params = np.array([self.interval, self.margin, self.decel, self.cruise, stop,
                           self.stop_tolerance, self.train.half_length[-1]])
        return params, np.ascontiguousarray(np.vstack([self._starts, self._ends,
                                                       self._limits]))

    def _send(self, u: float, t: float) -> bool:
        if abs(u - self.command) < _DEADBAND and not (u in (-1.0, 1.0) and u != self.command):
            return False
        self.command = u
        for name, level in ((TRACTION, max(u, 0.0)), (BRAKE, max(-u, 0.0))):
            for b, rows in self._users[name]:
                batch = self.train.batches[b]
                with plugin_call(batch.describe("set_control"), t):
                    batch.model.set_control(name, rows, level)
        return True
