"""The speed-limit watch: every time the train ran faster than the limit, found after
every step the loop commits.

**What is an exceedance.** The limit that binds a train is the lowest speed limit over
its length, front to rear (a train keeps a limit until its rear has left it, as the
built-in driver does); the excess is the lead's speed less that limit. An exceedance is
a stretch of time over which the excess stays above 0. It is reported when its largest
excess is over :data:`SPEED_TOLERANCE` (0.1 km/h): smaller ones are the rounding of a
controller holding the limit exactly, not a driver running through it.

**Where it is found.** The excess is worked out at the end of every committed step
(steps never cross a control time, so at least every control step) from the state there;
where it changes sign between two such checks, the crossing is placed by linear
interpolation of the excess between them. That is exact where the limit is the same at
both checks and the speed changes linearly over the step (a constant deceleration), and
within one step otherwise (the front entering a lower limit). The largest excess is the
largest at the checks.

:func:`check_limit` is the one coding of it: the compiled loop calls it after every
step (:func:`rrscore.engine.multibody.commit`), and :func:`watch_series` runs it over
arrays of samples (for a test or a recorded series), compiled or, with
``NUMBA_DISABLE_JIT=1``, as Python.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np

from ..jit import kernel
from ..model.formulas import KMH_PER_MS

#: The largest excess (m/s) below which a stretch above the limit is not reported:
#: 0.1 km/h.
SPEED_TOLERANCE = 0.1 / KMH_PER_MS
#: The exceedances kept one by one; beyond these they are counted (``seen``), with the
#: largest excess of them all.
EXCEEDANCES = 1000

#: One exceedance: where it began (time, the front's position), the largest excess, when
#: and where (front), the speed and limit there and the limit's element (its index in the
#: route), and where it ended (time, front).
EXCEEDANCE = np.dtype([
    ("start_t", "f8"), ("start_x", "f8"), ("max_excess", "f8"), ("max_t", "f8"),
    ("max_x", "f8"), ("max_v", "f8"), ("limit", "f8"), ("element", "f8"), ("end_t", "f8"),
    ("end_x", "f8")])

#: The watch's own state: the last check (time, excess, front; the excess NaN before the
#: first, -inf where no limit bound), whether an exceedance is under way (1/0), the route
#: element the front was last in, how many exceedances there were and the largest
#: excess of them all (m/s).
LIMIT_STATE = np.dtype([
    ("last_t", "f8"), ("last_excess", "f8"), ("last_front", "f8"), ("active", "f8"),
    ("cursor", "f8"), ("seen", "f8"), ("largest", "f8")])

#: The speed-limit watch: the route's sections (rows: start, end, limit in m/s, inf where
#: none), the exceedances (:data:`EXCEEDANCE`, the one under way in ``table[count[0]]``
#: while ``state.active``), how many are kept, and its state (:data:`LIMIT_STATE`).
LimitWatch = namedtuple("LimitWatch", ["sections", "table", "count", "state"])


def limit_watch(starts: np.ndarray, lengths: np.ndarray, limits: np.ndarray) -> LimitWatch:
    """A fresh watch for a route of elements (``starts``, ``lengths``, m; ``limits``, m/s,
    0 where an element has none)."""
    starts = np.asarray(starts, dtype=float)
    sections = np.ascontiguousarray(np.vstack([
        starts, starts + np.asarray(lengths, dtype=float),
        np.where(np.asarray(limits) > 0, limits, np.inf).astype(float)]))
    state = np.zeros(1, dtype=LIMIT_STATE).view(np.recarray)
    state[0].last_t = state[0].last_excess = state[0].last_front = np.nan
    return LimitWatch(sections, np.zeros(EXCEEDANCES + 1, dtype=EXCEEDANCE).view(np.recarray),
                      np.zeros(1, dtype=np.int64), state)


@kernel
def binding_limit(sections, front, rear, cursor):  # pragma: no cover (compiled)
    """The lowest limit over ``rear .. front`` and its element (the one nearest the front
    where several tie; -1 and inf where none), walked to from element ``cursor``; returns
    ``(limit, element, front's element)``."""
    starts, ends, limits = sections[0], sections[1], sections[2]
    m = starts.size
    j = min(max(cursor, 0), m - 1)
    while j < m - 1 and front >= ends[j]:
        j += 1
    while j > 0 and front < starts[j]:
        j -= 1
    at = j
    limit, element = np.inf, -1
    while j >= 0:
        if limits[j] < limit:
            limit, element = limits[j], j
        if starts[j] <= rear:
            break
        j -= 1
    return limit, element, at


@kernel
def check_limit(watch, t, front, rear, speed):  # pragma: no cover (compiled)
    """One check at time ``t``: the train's front and rear, the lead's ``speed``. Opens
    an exceedance where the excess rises above 0, follows its largest excess, and closes
    it where the excess falls back (kept if its largest excess is over
    :data:`SPEED_TOLERANCE`)."""
    st = watch.state[0]
    limit, element, at = binding_limit(watch.sections, front, rear, int(st.cursor))
    st.cursor = at
    excess = abs(speed) - limit  # (-inf where no limit binds)
    last = st.last_excess
    # where the excess crossed 0 since the last check: linear between the two
    w = 1.0
    if last == last and last > -np.inf and excess != last:
        w = min(max(-last / (excess - last), 0.0), 1.0)
    t_cross = st.last_t + w * (t - st.last_t) if st.last_t == st.last_t else t
    x_cross = st.last_front + w * (front - st.last_front) if st.last_t == st.last_t else front
    row = watch.table[watch.count[0]]
    if st.active == 0.0 and excess > 0.0:
        st.active = 1.0
        row.start_t, row.start_x = t_cross, x_cross
        row.max_excess = -1.0
    if st.active != 0.0:
        if excess > 0.0 and excess > row.max_excess:
            row.max_excess, row.max_t, row.max_x = excess, t, front
            row.max_v, row.limit, row.element = abs(speed), limit, element
        if excess <= 0.0:
            row.end_t, row.end_x = t_cross, x_cross
            close_exceedance(watch)
    st.last_t, st.last_excess, st.last_front = t, excess, front


@kernel
def close_exceedance(watch):  # pragma: no cover (compiled)
    """The exceedance under way ends (its end set): kept, and counted, where its largest
    excess is over the tolerance; a row past :data:`EXCEEDANCES` is counted only."""
    st = watch.state[0]
    st.active = 0.0
    row = watch.table[watch.count[0]]
    if row.max_excess > SPEED_TOLERANCE:
        st.seen += 1.0
        st.largest = max(st.largest, row.max_excess)
        if watch.count[0] < watch.table.size - 1:
            watch.count[0] += 1


@kernel
def watch_series(watch, t, front, rear, speed):  # pragma: no cover (compiled)
    """:func:`check_limit` at each sample of the arrays ``t``, ``front``, ``rear`` and
    ``speed`` in turn (the watch carries on from where it was)."""
    for k in range(t.size):
        check_limit(watch, t[k], front[k], rear[k], speed[k])


def exceedances(watch: LimitWatch, t: float, front: float) -> list[dict[str, Any]]:
    """The exceedances so far as the summary lists them; one under way is listed with
    ``end`` "under way" (at ``t``, the front at ``front``)."""
    st = watch.state[0]
    count = int(watch.count[0])
    rows = [(row, "speed back within the limit") for row in watch.table[:count]]
    if st.active and watch.table[count].max_excess > SPEED_TOLERANCE:
        rows.append((watch.table[count], "under way"))
    out = []
    for row, how in rows:
        end_t, end_x = (float(row.end_t), float(row.end_x)) if how != "under way" \
            else (t, front)
        out.append({
            "start_time_s": float(row.start_t), "start_position_m": float(row.start_x),
            "element": int(row.element), "limit_mps": float(row.limit),
            "limit_kmh": float(row.limit) * KMH_PER_MS,
            "max_excess_mps": float(row.max_excess),
            "max_excess_kmh": float(row.max_excess) * KMH_PER_MS,
            "max_excess_time_s": float(row.max_t), "max_excess_position_m": float(row.max_x),
            "speed_at_max_mps": float(row.max_v), "end": how, "end_time_s": end_t,
            "end_position_m": end_x, "time_s": end_t - float(row.start_t),
            "distance_m": end_x - float(row.start_x)})
    return out


def exceedance_totals(watch: LimitWatch) -> tuple[int, float]:
    """How many exceedances there were (one under way over the tolerance counted) and the
    largest excess of them all, m/s."""
    st = watch.state[0]
    seen, largest = int(st.seen), float(st.largest)
    if st.active and watch.table[int(watch.count[0])].max_excess > SPEED_TOLERANCE:
        seen += 1
        largest = max(largest, float(watch.table[int(watch.count[0])].max_excess))
    return seen, largest


def exceedance_note(summary: dict[str, Any]) -> str:
    """What the one-line result of a drive adds where the speed limit was exceeded
    (``summary``: its ``summary.json``): empty where it was not."""
    total = summary.get("speed_limit_exceeded") or {}
    count = total.get("count", 0)
    if not count:
        return ""
    times = "once" if count == 1 else "twice" if count == 2 else f"{count} times"
    return (f"; speed limit exceeded {times}, up to {total['max_excess_kmh']:.1f} km/h over "
            "(see summary.json)")
