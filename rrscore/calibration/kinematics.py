"""The constant-acceleration kinematic model of seed 002, in closed form.

A train at a steady speed level moves at a constant velocity. A change of level
at a sensor makes it accelerate (or decelerate) at a constant rate from the old
level's velocity ``v1`` to the new one's ``v2``; the average velocity during the
change is ``va = (v1 + v2) / 2``. Over the distance ``d`` to the next sensor,
reached after ``t``, either

1. the change finished before that sensor: ``d = d1 + d2``, ``t = t1 + t2`` with
   ``d1 = va t1`` (changing) and ``d2 = v2 t2`` (steady at ``v2``), so
   ``t1 = (d - v2 t) / (va - v2)`` and ``a = (v2 - v1) / t1``; or
2. it had not finished: the mean velocity ``vs = d / t`` is that of a uniform
   change from ``v1``, which at the sensor has reached ``vr = 2 vs - v1``, and
   ``a = (vr - v1) / t``.

Which case holds shows in the measurement: the change has finished when the
mean velocity over the segment lies beyond ``va`` on the side of ``v2``
(for speeding up, ``d / t > va``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Transition:
    """A change of velocity between two sensors, solved: ``acceleration`` (m/s^2, negative
    when slowing), the changing part ``d1`` (m) in ``t1`` (s), the steady part ``d2`` in
    ``t2`` (both 0 if unfinished), whether it ``finished`` before the second sensor, and
    the velocity ``end_speed`` (m/s) there."""

    acceleration: float
    d1: float
    t1: float
    d2: float
    t2: float
    finished: bool
    end_speed: float


def steady_velocity(d: float, t: float) -> float:
    """Velocity (m/s) of a train that ran ``d`` metres between two sensors in ``t`` s."""
    if t <= 0:
        raise ValueError(f"time between sensors must be > 0, found {t:g} s")
    return d / t


def transition(d: float, t: float, v1: float, v2: float) -> Transition:
    """Solve a change of level from velocity ``v1`` to ``v2`` (m/s) given at one sensor,
    with the next sensor ``d`` m further reached after ``t`` s (seed 002's two cases)."""
    if d <= 0 or t <= 0:
        raise ValueError(f"expected d > 0 and t > 0, found d = {d:g} m, t = {t:g} s")
    if v1 == v2:
        raise ValueError(f"no change of velocity to measure (v1 = v2 = {v1:g} m/s)")
    va = 0.5 * (v1 + v2)
    if (d / t - va) * (v2 - v1) > 0:  # finished: the segment's mean is beyond va
        t1 = (d - v2 * t) / (va - v2)
        d1 = va * t1
        return Transition((v2 - v1) / t1, d1, t1, d - d1, t - t1, True, v2)
    vs = d / t
    vr = 2.0 * vs - v1
    return Transition((vr - v1) / t, d, t, 0.0, 0.0, False, vr)


def stop_deceleration(v: float, distance: float) -> float:
    """Constant deceleration (m/s^2, > 0) that stops a train from ``v`` in ``distance``."""
    return v * v / (2.0 * distance)


def stopping(v: float, deceleration: float) -> tuple[float, float]:
    """(distance m, time s) to stop from ``v`` at a constant ``deceleration`` (> 0)."""
    return v * v / (2.0 * deceleration), v / deceleration


def short_move(acceleration: float, duration: float, deceleration: float,
               top_speed: float) -> float:
    """Distance (m) of a move from rest: accelerate for ``duration`` s (at most to
    ``top_speed``, then steady), then stop at ``deceleration``."""
    t_up = min(duration, top_speed / acceleration)
    v = acceleration * t_up
    return 0.5 * v * t_up + v * (duration - t_up) + v * v / (2.0 * deceleration)
