"""Running to a timetable: the lowest cruising speed that reaches the next point on time.

The built-in driver (:mod:`rrscore.autodriver`) plans with a speed profile fixed
for the run: at each position of the train's front, the highest speed it means
to run there (the speed limits over the train's length less the margin, the
braking curves ahead of lower limits and of the stop point, the cruising speed).
Running at a cruising speed ``v`` wherever the profile allows more, the time to
a point ``P`` is

    T(v) = integral from x to P of ds / min(v, V(s)),

which falls as ``v`` rises. The driver asks for the ``v`` with ``T(v)`` equal to
the time left, every time it decides, so a train that fell behind (on a climb,
while accelerating) asks for more and one ahead of time for less. Where the
train runs faster than that speed it coasts: time in hand is spent rolling, not
on traction that brakes would waste again.

The profile is sampled every ``_DS`` metres; ``T`` is solved exactly on the
samples (sorted, so each update costs one sort of the cells to the next point).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..model.config import REQUIRED, Context, Param
from ..model.track import Route

TIMETABLE_SCHEMA = {
    "point": Param(kind=str, default=REQUIRED, doc="named point of the route"),
    "arrive": Param("s", REQUIRED, "simulated time by which the train's front reaches it",
                    min=0.0),
}
"""One ``[[scenario.autodriver.timetable]]`` entry."""

#: Spacing of the planning profile, m.
_DS = 10.0
#: Share of the time left that the plan keeps in hand: the plan takes speeds as reached
#: at once, and a train still accelerating runs behind it.
_RESERVE = 0.02
#: Slowest planned speed, m/s: keeps the time of the last metres before a stop finite.
_CRAWL = 0.2


def check_timetable(entries: Sequence[Mapping[str, Any]], route: Route, ctx: Context) -> None:
    """Raise a ConfigError unless the entries name route points in order, with times
    that rise."""
    for i, (a, b) in enumerate(zip([None, *entries], entries, strict=False)):
        where = ctx.child(i)
        route.position_of(b["point"], where.child("point"))
        if a is None:
            continue
        if route.points[b["point"]] <= route.points[a["point"]]:
            raise where.child("point").error(
                f"found {b['point']!r} at {route.points[b['point']]:g} m, expected a point "
                f"beyond the one before it ({a['point']!r} at {route.points[a['point']]:g} m)")
        if b["arrive"] <= a["arrive"]:
            raise where.child("arrive").error(
                f"found {b['arrive']:g} s, expected a time after the one before it "
                f"({a['arrive']:g} s)")


def planning_profile(route: Route, train_length: float, margin: float, decel: float,
                     cruise: float, stop_at: float | None) -> tuple[np.ndarray, np.ndarray]:
    """The driver's planned speed along the route, cell by cell.

    The route is cut into cells of at most ``_DS``; the planned speed of a cell is the
    one at its middle: the lowest limit over the train's length less ``margin``, at
    most ``cruise``, under the braking curves at ``decel`` to every lower limit ahead
    and to a standstill at ``stop_at``. Returns the cell edges (m, one more than
    cells) and the planned speed of each cell (m/s).
    """
    start = float(route.starts[0])
    end = float(route.starts[-1] + route.lengths[-1])
    n = max(int(math.ceil((end - start) / _DS)), 1)
    edges = np.linspace(start, end, n + 1)
    s = 0.5 * (edges[:-1] + edges[1:])
    limits = np.where(route.speed_limits > 0, route.speed_limits, np.inf)
    here = np.full(s.shape, min(cruise, 1e3))  # a finite ceiling: 1 km/s is no limit
    for a, length, lim in zip(route.starts, route.lengths, limits, strict=True):
        if math.isinf(lim):
            continue
        # The element limits the front from where it starts until the rear has left it.
        lo, hi = np.searchsorted(s, [a, a + length + train_length], side="right")
        here[lo:hi] = np.minimum(here[lo:hi], max(lim - margin, 0.0))
    if stop_at is not None:
        here = np.minimum(here, np.sqrt(2.0 * decel * np.maximum(stop_at - s, 0.0)))
    # Braking curves: V(s)^2 <= here(s')^2 + 2 b (s' - s) for every s' ahead, a reverse
    # running minimum of here^2 + 2 b s'.
    w = np.minimum.accumulate((here**2 + 2.0 * decel * s)[::-1])[::-1]
    return edges, np.sqrt(np.maximum(w - 2.0 * decel * s, 0.0))


def time_to_go(edges: np.ndarray, V: np.ndarray, front: float, point: float, v: float) -> float:
    """Time for the front to run from ``front`` to ``point`` at cruising speed ``v``
    wherever the profile allows it, s."""
    ds, Vm = _cells(edges, V, front, point)
    return float(np.sum(ds / np.minimum(v, Vm)))


def cruising_speed(edges: np.ndarray, V: np.ndarray, front: float, point: float,
                   time_left: float) -> float:
    """The lowest cruising speed that brings the front from ``front`` to ``point`` in
    ``time_left``; ``inf`` if even the profile's speeds are too slow."""
    ds, Vm = _cells(edges, V, front, point)
    if ds.size == 0:
        return 0.0
    order = np.argsort(Vm)
    ds, Vm = ds[order], Vm[order]
    # With the cells slower than v run at their own speed and the rest at v:
    # T = sum_{k<j} ds_k / V_k + (sum_{k>=j} ds_k) / v, for V_{j-1} <= v <= V_j.
    slow = np.concatenate([[0.0], np.cumsum(ds / Vm)])
    rest = np.concatenate([np.cumsum(ds[::-1])[::-1], [0.0]])
    with np.errstate(divide="ignore", invalid="ignore"):
        v = rest / (time_left - slow)
    lower = np.concatenate([[0.0], Vm])
    upper = np.concatenate([Vm, [np.inf]])
    ok = (time_left > slow) & (v >= lower) & (v <= upper) & (rest > 0)
    return float(v[ok][0]) if ok.any() else math.inf


def _cells(edges: np.ndarray, V: np.ndarray, front: float, point: float):
    """Lengths and planned speeds of the profile's cells (or their parts) between two
    positions."""
    ds = np.diff(np.clip(edges, front, point))
    keep = ds > 0
    return ds[keep], np.maximum(V[keep], _CRAWL)


class Timetable:
    """The points a run's driver has to reach by given times, and when it did (run state)."""

    def __init__(self, entries: Sequence[Mapping[str, Any]], route: Route,
                 profile: tuple[np.ndarray, np.ndarray]) -> None:
        self.names = [e["point"] for e in entries]
        self.positions = np.array([route.points[n] for n in self.names], dtype=float)
        self.due = np.array([e["arrive"] for e in entries], dtype=float)
        self.edges, self.V = profile
        #: Time at which the driver found the front at or past each point (nan: not yet).
        self.arrived = np.full(len(self.names), np.nan)

    def speed(self, t: float, front: float, at_stop: bool = False) -> float:
        """Cruising speed for the next point not yet reached at ``t``; ``inf`` when
        there is none or it cannot be reached in time. ``at_stop``: the train has
        stopped at its stop point, which counts as reaching the points still ahead
        (none lies beyond the stop point: see :func:`rrscore.autodriver.check_autodriver`)."""
        reached = (front >= self.positions) | (at_stop & (self.positions >= front))
        self.arrived[reached & np.isnan(self.arrived)] = t
        ahead = np.flatnonzero(np.isnan(self.arrived))
        if ahead.size == 0:
            return math.inf
        k = ahead[0]
        time_left = (self.due[k] - t) * (1.0 - _RESERVE)
        if time_left <= 0.0:
            return math.inf
        return cruising_speed(self.edges, self.V, front, self.positions[k], time_left)

    def report(self, passages: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Due and actual time at each point: the exact time the front passed it where
        it did, else when the driver found the train stopped there."""
        out = []
        for name, due, seen in zip(self.names, self.due, self.arrived, strict=True):
            t = passages[name]["time_s"] if name in passages else (
                None if math.isnan(seen) else float(seen))
            out.append({"point": name, "due_s": float(due), "arrived_s": t,
                        "early_s": None if t is None else float(due) - t})
        return out
