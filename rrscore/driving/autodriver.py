"""The built-in driver: holds the speed limits, brakes ahead of lower ones, stops at a point.

It drives any vehicle plugin through its controls by name. Each ``update_interval``
it works out a target speed where the train is:

* the lowest speed limit over the train's length (front to rear: a train
  speeds up only when its rear has left a lower limit), less ``margin``;
* ahead of each lower limit, the braking curve down to it, ``d`` being the distance
  from the front to where the limit starts: ``sqrt(v_lim**2 + 2 b d)`` at the planned
  deceleration ``b`` (``braking_deceleration``), or, where it works the train's brakes
  and no deceleration is given, the train's own stopping curve (the rules' method at
  ``planned_brake_share`` of the brakes' full force);
* ahead of ``stop_at``, the braking curve to standstill at that point;
* ``speed``, if given, as a cruising speed below the limits;
* with a ``timetable``, the lowest cruising speed that reaches the next point
  on time (see :mod:`rrscore.timetable`); faster than that it coasts;

and sets traction (below the target) or brakes (above it) with a
proportional-integral law on the speed error. With ``brakes = "level"`` the command
goes to ``traction_level`` and ``brake_level`` on every vehicle that declares them;
with ``brakes = "train"`` braking goes to the dynamic brake and the air brake as a driver
works them (:mod:`rrscore.driving.trainhandling`). Commands change only when they
change by more than ``DEADBAND``, so a train holding its speed does not make
the solver restart at every update. Within ``stop_tolerance`` of the stop
point at a crawl, or past it, it brakes fully and holds the train.

With ``brakes = "level"`` the planned deceleration must be one the train can make on the
steepest down grade it brakes on (the driver does not know that brake's power): with
only a locomotive brake that is a few hundredths of m/s².
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from numba import njit

from ..engine.adapters import (
    DECIDE,
    DECISION_SLACK,
    DRIVER_PARAMS,
    DRIVER_STATE,
    decision_due,
)
from ..model.config import Context, Param, TableList
from ..model.track import Route
from ..model.train import Train
from ..physics.tables import interp_one
from .timetable import TIMETABLE_SCHEMA, Timetable, check_timetable, planning_profile
from .trainhandling import (
    RELEASE_BAND,
    brake_knowledge,
    handle,
    stopping_curve,
    work_brakes,
    works_train_brakes,
)

AUTODRIVER_SCHEMA = {
    "mode": Param(kind=str, default="off", choices=("off", "hold_limit"),
                  doc="off: the driver program alone drives; hold_limit: the built-in driver "
                      "drives to the speed limits (and stops at stop_at)"),
    "speed": Param("m/s", None, "cruising speed, below the limits; none: the limits",
                   min=0.0, exclusive_min=True),
    "margin": Param("m/s", 1.0, "target this far below each limit", min=0.0),
    "brakes": Param(kind=str, default="auto", choices=("auto", "level", "train"),
                    doc="level: it brakes with the vehicles' brake_level control (a "
                        "locomotive's own brake); train: with the dynamic brake first, then "
                        "the air brake in graduated service applications "
                        "(rrscore.driving.trainhandling); auto: train where the train has a "
                        "driver's brake valve and air-braked cars, else level"),
    "braking_deceleration": Param("m/s^2", None, "deceleration of the braking curves ahead "
                                  "of lower limits and the stop point: one the train's brakes "
                                  "can make; none: 0.05 with brakes = level, and with brakes "
                                  "= train the curve its air brake gives at "
                                  "planned_brake_share (the rules' method)", min=0.0,
                                  exclusive_min=True),
    "planned_brake_share": Param(kind=float, default=0.7, doc="with brakes = train: the "
                                 "share of the full service brake force its braking curves "
                                 "plan on (the rest is its reserve)", min=0.0, max=1.0,
                                 exclusive_min=True),
    "min_reduction": Param("Pa", 0.05e6, "with brakes = train: the first service "
                           "application's brake pipe reduction, at least", min=0.0,
                           exclusive_min=True),
    "bail_off": Param(kind=bool, default=True, doc="with brakes = train: bail off the "
                      "locomotives' brakes while the train's air brake is applied (where "
                      "their model has a bail_off control)"),
    "brake_settle_time": Param("s", 10.0, "with brakes = train: the time it gives the air "
                               "brake to answer a change before the next", min=0.0),
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
#: The controls it sets when it works the train's brakes (with TRACTION).
DYNAMIC, VALVE, INDEPENDENT, BAIL = ("dynamic_brake_level", "brake_valve",
                                     "independent_brake", "bail_off")
#: Proportional gain, level per m/s of speed error; integral gain, level per m (m/s * s).
_KP, _KI = 1.0, 0.05
#: Smallest command change that is passed on (level).
DEADBAND = 0.01
#: Below this speed at the stop point the train is stopped, m/s.
_CRAWL = 0.3
#: The rows of the driver's table: the route's sections (start, end, limit), then the
#: stopping curve (the distance in which the brakes stop the train from each speed).
CURVE_DISTANCE, CURVE_SPEED = 3, 4


@njit(cache=True, _nrt=False)
def braking_speed(to, d, decel, table, n0, n):  # pragma: no cover (compiled)
    """The speed from which the train brakes down to ``to`` over ``d`` metres: at the
    constant deceleration ``decel`` where the driver has no stopping curve (``n`` 0), else
    on its curve (``table``'s rows :data:`CURVE_DISTANCE` and :data:`CURVE_SPEED`, columns
    ``n0`` on, ``n`` of them: the distance in which the brakes stop the train from each
    speed)."""
    if n == 0:
        return np.sqrt(to * to + 2.0 * decel * d)
    distances = table[CURVE_DISTANCE, n0:n0 + n]
    speeds = table[CURVE_SPEED, n0:n0 + n]
    return interp_one(interp_one(to, speeds, distances) + d, distances, speeds)


@njit(cache=True, _nrt=False)
def _target_speed(front, rear, table, params):  # pragma: no cover (compiled)
    """:meth:`AutoDriver.target_speed` in one pass over the route's sections (numpy took
    a dozen small calls at every decision): the lowest limit under the train less the
    margin, the braking curves down to each limit ahead, the cruising speed and, where
    the stop position is not NaN, the braking curve down to the stop."""
    p = params[0]
    n, m = p.n_sections, p.n_curve
    here = np.inf  # the lowest limit under the train
    ahead = np.inf  # the lowest braking curve down to a limit ahead
    for i in range(n):
        start, end, limit = table[0, i], table[1, i], table[2, i]
        if start < front and end > rear:
            here = min(here, limit)
        elif start >= front:
            to = max(limit - p.margin, 0.0)
            ahead = min(ahead, braking_speed(to, start - front, p.decel, table, n, m))
    target = min(here - p.margin, ahead, p.cruise)
    if p.stop_at == p.stop_at:
        target = min(target, braking_speed(0.0, max(p.stop_at - front, 0.0), p.decel, table,
                                           n, m))
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


@njit(cache=True)
def command(u, t, speed, state, params):  # pragma: no cover (compiled)
    """Send the command ``u``: with the train's brakes through the handles
    (:func:`~rrscore.driving.trainhandling.work_brakes`), else as one level (traction above
    zero, ``brake_level`` below). Returns 1 where anything changed."""
    if params[0].train_brakes != 0.0:
        return 1 if work_brakes(u, t, speed, state, params) else 0
    return send_command(u, state)


@njit(DECIDE, cache=True)
def decide(t, front, rear, speed, on_time, state, params,
           table):  # pragma: no cover (compiled)
    """The built-in driver's decision at ``t`` (the train's front and rear, the lead's
    speed; ``on_time`` the cruising speed a timetable asks for, inf without one), on its
    state and settings (one record each) and its ``table`` (rows: the route's sections'
    starts, ends and limits; the stopping curve). Returns 1 where what it sets changed
    (the command: traction above zero, brake below; with the train's brakes, also the
    dynamic brake, the brake valve and the independent brake), else 0 (no decision due, or
    nothing changed). Between its decisions on the speed it may look at the brake valve
    (:func:`~rrscore.driving.trainhandling.handle`)."""
    s, p = state[0], params[0]
    if not decision_due(state, t):
        return 0
    if p.train_brakes != 0.0 and t < s.speed_next - DECISION_SLACK:  # a look at the valve
        s.next = s.speed_next
        return 1 if handle(t, state, params) else 0
    dt = p.interval if s.speed_next > 0 else 0.0
    s.next = s.speed_next = t + p.interval
    if p.stop_at == p.stop_at and s.stopped == 0.0:
        to_go = p.stop_at - front
        s.stopped = 1.0 if to_go <= 0.0 or (to_go <= p.tolerance and speed < _CRAWL) else 0.0
    if s.stopped != 0.0:
        s.target = 0.0
        return command(-1.0, t, speed, state, params)
    # with the air brake released, it looks as far ahead as the train runs before the
    # brakes take hold
    lag = speed * p.preparation if s.reduction == 0.0 else 0.0
    limit = _target_speed(front + lag, rear, table, params)
    s.target = min(limit, on_time)
    s.coasting = 1.0 if on_time < limit and on_time <= speed <= limit else 0.0
    if s.coasting != 0.0:  # ahead of time: roll, neither pulling nor braking
        s.integral = 0.0
        return command(0.0, t, speed, state, params)
    if speed > limit:  # brake down to the limit, not to the timetable's speed
        s.target = limit
    error = s.target - speed
    if p.train_brakes != 0.0 and error < 0.0 < s.integral:
        s.integral = 0.0  # above the target: the traction it had learnt goes at once
    u = _KP * error + s.integral
    if -1.0 < u < 1.0:  # integrate only when not saturated (no wind-up)
        s.integral += _KI * error * dt
        u = _KP * error + s.integral
    return command(-1.0 if u < -1.0 else (1.0 if u > 1.0 else u), t, speed, state, params)


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
    if cfg["brakes"] == "train" and not works_train_brakes("auto", train):
        raise ctx.child("brakes").error(
            "found 'train', but the train has no driver's brake valve with air-braked "
            "vehicles behind it ([vehicle.brake] driver_valve = true, and distributors): "
            "expected 'level' or 'auto'")
    if works_train_brakes(cfg["brakes"], train) and cfg["braking_deceleration"] is None:
        try:
            stopping_curve(train, cfg["planned_brake_share"], 10.0)
        except ValueError as exc:  # (a shoe type the rules' method does not cover)
            raise ctx.child("planned_brake_share").error(
                f"the driver cannot plan its stops on this train's air brake ({exc}); "
                "expected a braking_deceleration to plan on") from None
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
        self.state[0].release_band = RELEASE_BAND
        #: The vehicle types (batch indices) with each control it sets, fixed for the run.
        self.users = {name: [b for b, batch in enumerate(train.batches)
                             if name in batch.cls.controls]
                      for name in (TRACTION, BRAKE, DYNAMIC, VALVE, INDEPENDENT, BAIL)}
        #: Whether it works the train's brakes (else the vehicles' brake_level).
        self.train_brakes = False

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

    def levels(self) -> tuple[tuple[str, float], ...]:
        """The controls it sets and their levels: traction above zero and brake_level
        below; with the train's brakes, traction and the levels of the handles."""
        s = self.state[0]
        if self.train_brakes:
            return ((TRACTION, max(self.command, 0.0)), (DYNAMIC, float(s.dynamic)),
                    (VALVE, float(s.valve)), (INDEPENDENT, float(s.independent)),
                    (BAIL, float(s.bail)))
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
        lim = route.speed_limits
        limits = np.where(lim > 0, lim, np.inf).astype(float)
        starts = np.ascontiguousarray(route.starts, dtype=float)
        sections = np.vstack([starts, starts + route.lengths, limits])
        decel = cfg["braking_deceleration"]
        params = {"interval": cfg["update_interval"], "margin": cfg["margin"],
                  "cruise": cruise, "stop_at": math.nan if stop_at is None else stop_at,
                  "tolerance": cfg["stop_tolerance"]}
        curve = np.zeros((2, 0))
        if works_train_brakes(cfg["brakes"], train):
            params |= brake_knowledge(cfg, train)
            if decel is None:
                top = max([x for x in (*limits, cruise) if math.isfinite(x)] + [40.0])
                curve = stopping_curve(train, cfg["planned_brake_share"], 1.25 * top)
                # (for the timetable's plan: the mean deceleration of a stop from the top)
                decel = curve[0, -1] ** 2 / (2.0 * curve[1, -1])
        decel = 0.05 if decel is None else decel
        self.params = np.zeros(1, dtype=DRIVER_PARAMS).view(np.recarray)
        for name, value in (params | {"decel": decel, "n_sections": sections.shape[1],
                                      "n_curve": curve.shape[1]}).items():
            self.params[0][name] = value
        self.train_brakes = bool(self.params[0].train_brakes)
        self.timetable = None if not cfg["timetable"] else Timetable(
            cfg["timetable"], route,
            planning_profile(route, train.total_length, cfg["margin"], decel, cruise, stop_at))
        self.min_speed = cfg["min_speed"]
        #: Its table: the route's sections (rows start, end, limit) and the stopping curve
        #: (rows :data:`CURVE_DISTANCE`, :data:`CURVE_SPEED`), side by side.
        width = sections.shape[1] + curve.shape[1]
        self.sections = np.full((5, width), np.nan)
        self.sections[:3, :sections.shape[1]] = sections
        self.sections[CURVE_SPEED, sections.shape[1]:] = curve[0]
        self.sections[CURVE_DISTANCE, sections.shape[1]:] = curve[1]
        self.state[0].valve = math.nan

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
        return float(_target_speed(front, rear, self.sections, self.params))

    def on_time(self, t: float, front: float) -> float:
        """The cruising speed the timetable asks for at ``t`` (inf without one)."""
        if self.timetable is None:
            return math.inf
        return max(self.timetable.speed(t, front, self.stopped), self.min_speed)

    def update(self, t: float, front: float, rear: float, speed: float) -> bool:
        """Decide at time ``t`` (:func:`decide`); return whether the command changed."""
        due = bool(decision_due(self.state, t))
        on_time = self.on_time(t, front) if due else math.inf
        return bool(decide(t, front, rear, speed, on_time, self.state, self.params,
                           self.sections))
