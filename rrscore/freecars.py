"""Cars rolling free on one route, stepped from event to event (the engine of seed 001).

A yard holds many cars that move freely and meet now and then. Between two such
meetings every force on a car is held constant, so each car (or group of cars moving
together) runs at a constant acceleration and the time to the next event has a closed
form:

* **contact**: the gap between neighbours closes, the least non-negative root of
  ``gap - (v_rear - v_front) t - (a_rear - a_front) t^2 / 2 = 0``
  (:func:`contact_time`);
* **tension**: the slack of a coupled pair runs out while they move apart (the same
  root, for ``slack - gap``);
* **stop**: a group's speed reaches zero under friction (:func:`stop_time`), where
  friction, which opposes motion, would flip; the group then stands still if friction
  holds it, or runs back.

The engine advances every car to the earliest event, acts on it and repeats. Cars
that meet below the coupling speed couple and move on as one group with their common
momentum; faster, they part again with the configured ``restitution`` (0: they stay
together, perfectly inelastic; 1: elastic). A group splits again where a joint would
have to pull (an uncoupled contact) or push (a coupled pair at full slack, moving
apart): the joint forces of a group follow from its members' forces and the group's
one acceleration, as for a rigid train (:func:`rrscore.bodies.rigid_coupler_forces`).

Cars are indexed in order along the route (car ``i + 1`` ahead of car ``i``); pair
``j`` is cars ``j`` and ``j + 1``. Masses are effective masses, rotating wheelsets
included, and momentum is conserved in them. Forces (gravity along the grade, a winch)
and friction (rolling resistance, brakes, chocks) are per car and constant over a
call of :meth:`FreeCars.advance`; a caller following a varying profile updates them
between shorter calls, as seed 001 suggests.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .events import Event

#: Two faces closer than this are touching, m.
GAP_TOL = 1e-9
#: Speeds closer than this are equal, m/s.
SPEED_TOL = 1e-12
#: Below this closing speed an impact does not bounce, m/s: cars pressed together by
#: gravity would otherwise bounce ever smaller, without end, in finite time.
REST_SPEED = 1e-3


def contact_time(gap: float, v_rear: float, v_front: float, a_rear: float,
                 a_front: float) -> float:
    """Time until a rear body closes a ``gap`` to a front body, both at constant
    acceleration: the least non-negative root of ``gap = b t + a t^2`` with
    ``b = v_rear - v_front`` and ``a = (a_rear - a_front) / 2``; ``inf`` if the gap
    never closes. A gap already closed (``gap <= 0``) gives 0 if the bodies are closing
    or about to."""
    b = v_rear - v_front
    a = 0.5 * (a_rear - a_front)
    if gap <= 0.0:
        return 0.0 if b > 0.0 or (b == 0.0 and a > 0.0) else math.inf
    if a == 0.0:
        return gap / b if b > 0.0 else math.inf
    disc = b * b + 4.0 * a * gap
    if disc < 0.0:
        return math.inf
    # the roots of a t^2 + b t - gap = 0, without cancellation
    q = -0.5 * (b + math.copysign(math.sqrt(disc), b if b != 0.0 else 1.0))
    roots = [r for r in (q / a, -gap / q if q != 0.0 else math.inf) if r >= 0.0]
    return min(roots) if roots else math.inf


def contact_times(gap: np.ndarray, v_rear: np.ndarray, v_front: np.ndarray,
                  a_rear: np.ndarray, a_front: np.ndarray) -> np.ndarray:
    """:func:`contact_time` for arrays of pairs at once (the engine's form)."""
    gap = np.asarray(gap, dtype=float)
    b = np.asarray(v_rear, dtype=float) - v_front
    a = 0.5 * (np.asarray(a_rear, dtype=float) - a_front)
    with np.errstate(divide="ignore", invalid="ignore"):
        disc = b * b + 4.0 * a * gap
        q = -0.5 * (b + np.copysign(np.sqrt(np.maximum(disc, 0.0)), np.where(b != 0, b, 1.0)))
        r1 = np.where(a != 0.0, q / a, np.inf)
        r2 = np.where(q != 0.0, -gap / q, np.inf)
        r1 = np.where(r1 >= 0.0, r1, np.inf)
        r2 = np.where(r2 >= 0.0, r2, np.inf)
        quadratic = np.where(disc < 0.0, np.inf, np.minimum(r1, r2))
        linear = np.where(b > 0.0, gap / np.where(b > 0.0, b, 1.0), np.inf)
        open_ = np.where(a == 0.0, linear, quadratic)
    closed = np.where((b > 0.0) | ((b == 0.0) & (a > 0.0)), 0.0, np.inf)
    return np.where(gap <= 0.0, closed, open_)


def stop_time(v: float, a_other: float, a_friction: float) -> float:
    """Time until a body at speed ``v`` stops, under an acceleration ``a_other`` from
    every force but friction and a friction deceleration of size ``a_friction``
    against the motion; 0 if it stands, ``inf`` if it never stops (the other forces
    win, or nothing slows it)."""
    if v == 0.0:
        return 0.0
    a = a_other - math.copysign(abs(a_friction), v)
    if a == 0.0 or a * v > 0.0:
        return math.inf
    return -v / a


@dataclass
class _Groups:
    """The groups at one instant: first car, mass, forces, speed and acceleration."""

    start: np.ndarray
    stop: np.ndarray  # one past the last car
    mass: np.ndarray
    force: np.ndarray
    friction: np.ndarray
    v: np.ndarray
    accel: np.ndarray
    share: np.ndarray  # the friction each member takes: sign of motion, or F/R when held


class FreeCars:
    """Cars on one route, advanced from event to event.

    :param position: each car's centre along the route, m, in increasing order.
    :param length: each car's length over buffers, m.
    :param mass: each car's effective mass (rotating wheelsets included), kg.
    :param velocity: each car's speed along the route, m/s.
    :param force: each car's signed force along the route other than friction, N
        (gravity along the grade, a winch).
    :param friction: each car's Coulomb friction, N (rolling resistance, brakes,
        chocks): it opposes motion, and holds a standing car up to its size.
    :param coupled: for each pair, whether it is coupled (its gap can then open only
        up to ``slack``).
    :param slack: for each pair, how far the faces of a coupled pair may part, m.
    :param coupling_speed: for each pair, the closing speed up to which it couples on
        contact, m/s (0: it never does).
    :param restitution: the share of the closing speed cars part with after an impact
        that does not couple (0 to 1).
    """

    def __init__(self, position, length, mass, velocity, force, friction,
                 coupled=None, slack=0.0, coupling_speed=0.0, restitution: float = 0.0
                 ) -> None:
        self.x = np.array(position, dtype=float)
        n = self.x.size
        self.length = np.broadcast_to(np.asarray(length, dtype=float), (n,)).copy()
        self.mass = np.broadcast_to(np.asarray(mass, dtype=float), (n,)).copy()
        self.v = np.broadcast_to(np.asarray(velocity, dtype=float), (n,)).copy()
        self.force = np.broadcast_to(np.asarray(force, dtype=float), (n,)).copy()
        self.friction = np.abs(np.broadcast_to(np.asarray(friction, dtype=float), (n,)))
        pairs = max(n - 1, 0)
        self.coupled = (np.zeros(pairs, dtype=bool) if coupled is None
                        else np.broadcast_to(np.asarray(coupled, dtype=bool), (pairs,)).copy())
        self.slack = np.broadcast_to(np.asarray(slack, dtype=float), (pairs,)).copy()
        self.coupling_speed = np.broadcast_to(np.asarray(coupling_speed, dtype=float),
                                              (pairs,)).copy()
        if not 0.0 <= restitution <= 1.0:
            raise ValueError(f"restitution {restitution!r} is not between 0 and 1")
        self.restitution = float(restitution)
        if n and not (self.mass > 0).all():
            raise ValueError("every car needs a positive mass")
        if (self.gaps() < -GAP_TOL).any():
            j = int(np.flatnonzero(self.gaps() < -GAP_TOL)[0])
            raise ValueError(f"cars {j} and {j + 1} overlap (or are out of order)")
        if (self.gaps() > self.slack + GAP_TOL)[self.coupled].any():
            raise ValueError("a coupled pair stands further apart than its slack")
        self.t = 0.0
        #: Where each group starts: ``joined[j]`` joins car ``j + 1`` to car ``j``.
        self.joined = np.zeros(pairs, dtype=bool)
        self.log: list[Event] = []
        #: Events acted on so far, by kind: contact, tension, stop.
        self.counts = {"contact": 0, "tension": 0, "stop": 0}

    # ------------------------------------------------------------------ geometry
    def gaps(self) -> np.ndarray:
        """Distance between the facing ends of each pair, m."""
        half = 0.5 * self.length
        return (self.x[1:] - half[1:]) - (self.x[:-1] + half[:-1])

    def momentum(self) -> float:
        """Total momentum (effective masses), kg m/s."""
        return float(self.mass @ self.v)

    def kinetic_energy(self) -> float:
        """Total kinetic energy (effective masses), J."""
        return float(0.5 * self.mass @ (self.v * self.v))

    # ------------------------------------------------------------------ groups
    def _groups(self) -> _Groups:
        start = np.concatenate([[0], np.flatnonzero(~self.joined) + 1])
        stop = np.concatenate([start[1:], [self.x.size]])
        mass = np.add.reduceat(self.mass, start)
        force = np.add.reduceat(self.force, start)
        friction = np.add.reduceat(self.friction, start)
        v = self.v[start]
        moving = np.sign(v)
        # a standing group starts off where its forces beat friction, else it is held
        starting = (v == 0.0) & (np.abs(force) > friction)
        direction = np.where(starting, np.sign(force), moving)
        held = (v == 0.0) & ~starting
        share = np.where(held, np.divide(force, friction, out=np.zeros_like(force),
                                         where=friction > 0), direction)
        accel = np.where(held, 0.0, (force - direction * friction) / mass)
        return _Groups(start, stop, mass, force, friction, v, accel, share)

    def _joint_forces(self, g: _Groups) -> np.ndarray:
        """For each joined pair, the force the rear part pushes the front part with
        (compression +); NaN for pairs that are not joined."""
        group_of = np.repeat(np.arange(g.start.size), g.stop - g.start)
        net = self.force - self.friction * g.share[group_of] - self.mass * g.accel[group_of]
        cum = np.cumsum(net)
        before = np.concatenate([[0.0], cum])[g.start][group_of]  # cumsum before the group
        push = (cum - before)[:-1]
        return np.where(self.joined, push, np.nan)

    def _split(self) -> bool:
        """Open the joints that would have to pull (an uncoupled contact) or push (a
        coupled pair at full slack), the worst first, until none would. Returns whether
        any opened."""
        opened = False
        for _ in range(self.x.size):
            if not self.joined.any():
                return opened
            g = self._groups()
            push = self._joint_forces(g)
            scale = 1e-9 * (np.abs(self.force).max() + self.friction.max() + 1.0)
            at_slack = self.coupled & (self.gaps() > 0.5 * self.slack)
            wrong = np.where(at_slack, push, -push)  # > 0: the joint cannot carry it
            wrong = np.where(self.joined, wrong, -np.inf)
            j = int(np.argmax(wrong))
            if wrong[j] <= scale:
                return opened
            self.joined[j] = False
            opened = True
        return opened

    # ------------------------------------------------------------------ impacts
    def _settle(self) -> None:
        """Act on every pair that touches and closes, or is at full slack and opens, at
        this instant (a struck chain passes the blow along at once); join the pairs that
        touch at one speed and would close (one pushes the other), and split the groups
        whose joints could not carry their force."""
        for _ in range(10 * self.x.size + 10):
            gaps = self.gaps()
            rel = self.v[:-1] - self.v[1:]  # closing speed of each pair
            touching = ~self.joined & (gaps <= GAP_TOL)
            taut = ~self.joined & self.coupled & (gaps >= self.slack - GAP_TOL)
            hit = np.flatnonzero(touching & (rel > SPEED_TOL) | taut & (rel < -SPEED_TOL))
            if hit.size:
                self._impact(int(hit[0]), bool(touching[hit[0]] and rel[hit[0]] > 0))
                continue
            g = self._groups()
            a = g.accel[np.repeat(np.arange(g.start.size), g.stop - g.start)]
            closing = a[:-1] - a[1:]
            tol = 1e-12 * (1.0 + np.abs(a).max())
            still = np.abs(rel) <= SPEED_TOL
            press = np.flatnonzero(still & (touching & (closing > tol)
                                             | taut & (closing < -tol)))
            if press.size:
                self.joined[press[0]] = True  # at one speed: no impact, one group
                self._common_speed(press[0])
                continue
            if not self._split():
                return
        raise RuntimeError(f"impacts at t = {self.t:.6f} s do not settle")

    def _common_speed(self, j: int) -> None:
        """Give the group that pair ``j`` is now in its common (momentum) speed."""
        g = self._groups()
        k = int(np.searchsorted(g.start, j, side="right") - 1)
        members = slice(g.start[k], g.stop[k])
        self.v[members] = float(self.mass[members] @ self.v[members]) / g.mass[k]

    def _impact(self, j: int, contact: bool) -> None:
        g = self._groups()
        k = int(np.searchsorted(g.start, j, side="right") - 1)  # the rear group
        m1, m2, v1, v2 = g.mass[k], g.mass[k + 1], g.v[k], g.v[k + 1]
        closing = abs(v1 - v2)
        couples = contact and not self.coupled[j] and closing <= self.coupling_speed[j]
        if couples:
            self.coupled[j] = True
        kind = "coupled" if couples else ("impact" if contact else "tension impact")
        self.log.append(Event(self.t, kind, coupling=j, value=closing))
        self.counts["contact" if contact else "tension"] += 1
        e = 0.0 if couples or closing <= REST_SPEED else self.restitution
        common = (m1 * v1 + m2 * v2) / (m1 + m2)
        if e == 0.0:
            new1 = new2 = common
            self.joined[j] = True  # one group from now on, until it splits
        else:
            new1 = common - e * m2 * (v1 - v2) / (m1 + m2)
            new2 = common + e * m1 * (v1 - v2) / (m1 + m2)
        self.v[g.start[k]:g.stop[k]] = new1
        self.v[g.start[k + 1]:g.stop[k + 1]] = new2

    # ------------------------------------------------------------------ stepping
    def _next_event(self, g: _Groups) -> tuple[float, str, int]:
        """The earliest event from now: (time, kind, pair or group), over whole arrays."""
        best = (math.inf, "", -1)
        # stops: moving groups whose acceleration opposes their speed
        with np.errstate(divide="ignore", invalid="ignore"):
            t_stop = np.where((g.v != 0.0) & (g.accel * g.v < 0.0), -g.v / g.accel, np.inf)
        if t_stop.size and (k := int(np.argmin(t_stop))) >= 0 and t_stop[k] < best[0]:
            best = (float(t_stop[k]), "stop", k)
        if g.start.size < 2:
            return best
        j = g.stop[:-1] - 1  # the pair between group k and group k + 1
        va, vb, aa, ab = g.v[:-1], g.v[1:], g.accel[:-1], g.accel[1:]
        gaps = self.gaps()[j]
        for kind, t in (
                ("contact", contact_times(np.maximum(gaps, 0.0), va, vb, aa, ab)),
                ("tension", np.where(self.coupled[j], contact_times(
                    np.maximum(self.slack[j] - gaps, 0.0), vb, va, ab, aa), np.inf))):
            t = np.where(t > 0.0, t, np.inf)  # an instant's contacts are settled already
            k = int(np.argmin(t))
            if t[k] < best[0]:
                best = (float(t[k]), kind, int(j[k]))
        return best

    def advance(self, t_end: float, max_events: int = 1_000_000) -> None:
        """Move every car on to simulated time ``t_end``, acting on each event on the way.
        Events are appended to :attr:`log` (couplings, impacts, tension impacts)."""
        for _ in range(max_events):
            self._settle()
            if self.t >= t_end:
                return
            g = self._groups()
            dt, kind, where = self._next_event(g)
            dt = min(dt, t_end - self.t)
            group_of = np.repeat(np.arange(g.start.size), g.stop - g.start)
            v, a = g.v[group_of], g.accel[group_of]
            self.x += v * dt + 0.5 * a * dt * dt
            self.v = v + a * dt
            self.t = t_end if self.t + dt >= t_end else self.t + dt
            if kind == "stop" and self.t < t_end:
                self.v[g.start[where]:g.stop[where]] = 0.0  # exactly: friction takes over
                self.counts["stop"] += 1
            elif kind in ("contact", "tension") and self.t < t_end:
                # put the faces exactly on the surface the root says they reached
                target = 0.0 if kind == "contact" else self.slack[where]
                self.x[where + 1:] += target - self.gaps()[where]
        raise RuntimeError(f"more than {max_events} events before t = {t_end} s")
