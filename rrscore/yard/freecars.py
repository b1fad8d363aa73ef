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
one acceleration, as for a rigid train (:func:`rrscore.physics.bodies.joint_forces`).

Each event touches only the groups it concerns: every group keeps its own motion
since its last change (position offset, speed and acceleration from a reference time),
and the predicted events sit in a heap, each tagged with the versions of the groups it
was predicted from, so that predictions a later event spoiled are skipped when they
come up. An event therefore costs about the same in a yard of 10,000 cars as in one of
ten.

Cars are indexed in order along the route (car ``i + 1`` ahead of car ``i``); pair
``j`` is cars ``j`` and ``j + 1``. Masses are effective masses, rotating wheelsets
included, and momentum is conserved in them. Forces (gravity along the grade, a winch)
and friction (rolling resistance, brakes, chocks) are per car and constant over a
call of :meth:`FreeCars.advance`; a caller following a varying profile updates them
between shorter calls, as seed 001 suggests.
"""

from __future__ import annotations

import heapq
import itertools
import math

import numpy as np

from ..model.events import Event
from ..physics import resistance
from ..physics.bodies import joint_forces
from ..physics.route import means_under

#: Two faces closer than this are touching, m.
GAP_TOL = 1e-9
#: Speeds closer than this are equal, m/s.
SPEED_TOL = 1e-12
#: Below this closing speed an impact does not bounce, m/s: cars pressed together by
#: gravity would otherwise bounce ever smaller, without end, in finite time (a Zeno
#: sequence: bounces at ``e^k u`` under an acceleration ``a`` towards the contact end
#: after ``2 e u / (a (1 - e))``). 1 mm/s is where a rebound stops mattering to a yard: on
#: a 1 ‰ pull (0.01 m/s^2) it moves the car ``u^2 / 2a`` = 0.05 mm and lasts 0.2 s, two
#: of the yard's force steps (``step``, 0.1 s by default), and the bounces it cuts off
#: would have lasted at most ``2 REST_SPEED e / (a (1 - e))`` more. The contact then
#: persists (see :meth:`FreeCars._motion`) until a force pulls the cars away.
REST_SPEED = 1e-3
#: How often one contact (a pair, or a car and a buffer stop) may bounce at one instant;
#: struck again, it stays closed (see :meth:`FreeCars._bounce`). A blow through a standing
#: cut, or a cut striking a stop, is passed along as a sequence of pair impacts at one
#: instant; an elastic or lively one ends after a few bounces at each contact (a cut of
#: three at restitution 0.5 to 1: at most four), a dull one never does (the Zeno sequence
#: at one instant). The same bound as Guendelman, Bridson and Fedkiw's (2003) few
#: rounds of restitution before shock propagation: it keeps every lively cascade of a few
#: cars exact and makes any cascade cost at most this many impacts per contact.
BOUNCES_PER_INSTANT = 4


def contact_time(gap: float, v_rear: float, v_front: float, a_rear: float,
                 a_front: float) -> float:
    """Time until a rear body closes a ``gap`` to a front body, both at constant
    acceleration: the least non-negative root of ``gap = b t + a t^2`` with
    ``b = v_rear - v_front`` and ``a = (a_rear - a_front) / 2``; ``inf`` if the gap
    never closes. A gap already closed (``gap <= 0``) gives 0 if the bodies are closing
    or about to; if they are parting but accelerating back, the time they meet again."""
    # (Python floats: a closing speed of 1e-320 m/s gives an infinite time, not numpy's
    # overflow warning)
    gap, b, a = float(gap), float(v_rear - v_front), 0.5 * float(a_rear - a_front)
    if gap <= 0.0:
        if b > 0.0 or (b == 0.0 and a > 0.0):
            return 0.0
        return -b / a if b < 0.0 and a > 0.0 else math.inf
    if a == 0.0:
        return gap / b if b > 0.0 else math.inf
    disc = b * b + 4.0 * a * gap
    if disc < 0.0:
        return math.inf
    # the roots of a t^2 + b t - gap = 0, without cancellation
    q = -0.5 * (b + math.copysign(math.sqrt(disc), b if b != 0.0 else 1.0))
    roots = [r for r in (q / a, -gap / q if q != 0.0 else math.inf) if r >= 0.0]
    return min(roots) if roots else math.inf


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


class _Group:
    """Cars ``i0 .. i1 - 1`` moving as one. A member's position is its reference
    position plus ``off`` plus the run since ``t0``: ``v0 (t - t0) + a (t - t0)^2 / 2``."""

    __slots__ = ("i0", "i1", "mass", "force", "friction", "t0", "off", "v0", "accel",
                 "share", "wall", "version", "prev", "next", "alive")

    def __init__(self, i0: int, i1: int, t0: float, v0: float) -> None:
        self.i0, self.i1, self.t0, self.v0 = i0, i1, t0, v0
        self.off = 0.0
        self.mass = self.force = self.friction = self.accel = self.share = 0.0
        self.wall = 0.0  # a buffer stop's push on the group (+ forward), N
        self.version = 0
        self.prev: _Group | None = None
        self.next: _Group | None = None
        self.alive = True

    def run(self, t: float) -> float:
        """Distance run since ``t0``."""
        tau = t - self.t0
        return self.v0 * tau + 0.5 * self.accel * tau * tau

    def speed(self, t: float) -> float:
        return self.v0 + self.accel * (t - self.t0)


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
        that does not couple (0 to 1); also what a car keeps of its speed, reversed, after
        hitting a buffer stop.
    :param buffer_stops: where the buffer stops at the two ends of the route stand, m
        (the faces the cars meet); no car passes them.
    :param buffer_stiffness: stiffness of a buffer stop's spring, N/m (one for both, or
        ``(rear, front)``): it sets the peak force of an impact, ``u sqrt(k M)`` for a
        group of mass ``M`` at speed ``u``.
    :param open_ends: for the rear and the front end of the route, whether it is open
        rather than a buffer stop: a car reaching it is not stopped; :meth:`advance`
        returns there instead, with :attr:`reached` naming the end, for the caller to
        decide what happens (a network: the car runs through a switch set against it).
    :param t: simulated time of the state given, s.

    :attr:`force` and :attr:`friction` may be changed between calls of :meth:`advance`
    (a brake released, a winch pulling); :attr:`x`, :attr:`v` and :attr:`joined` are
    the state at :attr:`t`.
    """

    def __init__(self, position, length, mass, velocity, force, friction,
                 coupled=None, slack=0.0, coupling_speed=0.0, restitution: float = 0.0,
                 buffer_stops: tuple[float, float] = (-math.inf, math.inf),
                 buffer_stiffness: float = 2e6,
                 open_ends: tuple[bool, bool] = (False, False), t: float = 0.0) -> None:
        x = np.array(position, dtype=float)
        n = x.size
        self.length = np.broadcast_to(np.asarray(length, dtype=float), (n,)).copy()
        self.mass = np.broadcast_to(np.asarray(mass, dtype=float), (n,)).copy()
        v = np.broadcast_to(np.asarray(velocity, dtype=float), (n,)).copy()
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
        half = 0.5 * self.length
        gaps = (x[1:] - half[1:]) - (x[:-1] + half[:-1])
        if (gaps < -GAP_TOL).any():
            j = int(np.flatnonzero(gaps < -GAP_TOL)[0])
            raise ValueError(f"cars {j} and {j + 1} overlap (or are out of order)")
        if (gaps > self.slack + GAP_TOL)[self.coupled].any():
            raise ValueError("a coupled pair stands further apart than its slack")
        self.buffer_stops = (float(buffer_stops[0]), float(buffer_stops[1]))
        # one stiffness for both stops, or (rear, front)
        self.buffer_stiffness = tuple(float(k) for k in np.broadcast_to(
            np.asarray(buffer_stiffness, dtype=float), (2,)))
        self.open_ends = (bool(open_ends[0]), bool(open_ends[1]))
        #: The open end ("rear" or "front") a car reached, ending the last
        #: :meth:`advance` early; None if it ran to its end time.
        self.reached: str | None = None
        if n and (x[0] - half[0] < self.buffer_stops[0] - GAP_TOL
                  or x[-1] + half[-1] > self.buffer_stops[1] + GAP_TOL):
            raise ValueError("a car stands beyond a buffer stop")
        self._ref = x  # positions, less each group's offset and run
        self._x = self._v = None  # x and v at t, once asked for
        self.t = float(t)
        # every car a group of its own to begin with, linked in order from the rear one
        self._head: _Group | None = None
        prev = None
        for i in range(n):
            g = _Group(i, i + 1, self.t, float(v[i]))
            g.prev = prev
            if prev is None:
                self._head = g
            else:
                prev.next = g
            prev = g
        self._heap: list = []
        self._seq = itertools.count()
        self.log: list[Event] = []
        #: Events acted on so far, by kind: contact, tension, stop, buffer stop; and
        #: "resting", impacts that did not bounce because their contact had bounced
        #: :data:`BOUNCES_PER_INSTANT` times at that instant already (see :meth:`_bounce`).
        self.counts = {"contact": 0, "tension": 0, "stop": 0, "buffer stop": 0, "resting": 0}
        #: Impulse the rear and the front buffer stop have given the cars in impacts so
        #: far, N s (+ forward): the momentum the impacts took out, reversed and all.
        self.stop_impulse = [0.0, 0.0]
        self._bounces: dict = {}  # how often each contact bounced at this instant

    # ------------------------------------------------------------------ the state
    def _chain(self) -> list[_Group]:
        out, g = [], self._head
        while g is not None:
            out.append(g)
            g = g.next
        return out

    @property
    def x(self) -> np.ndarray:
        """Each car's centre at :attr:`t`, m (read-only; kept until the next advance)."""
        if self._x is None:
            x = self._ref.copy()
            for g in self._chain():
                x[g.i0:g.i1] += g.off + g.run(self.t)
            x.flags.writeable = False
            self._x = x
        return self._x

    @property
    def v(self) -> np.ndarray:
        """Each car's speed at :attr:`t`, m/s (read-only; kept until the next advance)."""
        if self._v is None:
            v = np.empty(self._ref.size)
            for g in self._chain():
                v[g.i0:g.i1] = g.speed(self.t)
            v.flags.writeable = False
            self._v = v
        return self._v

    @property
    def joined(self) -> np.ndarray:
        """For each pair, whether its cars move as one group now."""
        out = np.ones(max(self._ref.size - 1, 0), dtype=bool)
        for g in self._chain()[1:]:
            out[g.i0 - 1] = False
        return out

    def gaps(self) -> np.ndarray:
        """Distance between the facing ends of each pair, m."""
        x, half = self.x, 0.5 * self.length
        return (x[1:] - half[1:]) - (x[:-1] + half[:-1])

    def momentum(self) -> float:
        """Total momentum (effective masses), kg m/s."""
        return float(self.mass @ self.v)

    def kinetic_energy(self) -> float:
        """Total kinetic energy (effective masses), J."""
        v = self.v
        return float(0.5 * self.mass @ (v * v))

    def at_rest(self, speed: float) -> bool:
        """Whether every car is slower than ``speed`` and none is sped up or slowed: each
        group held (by friction or a stop) or coasting, not at the top of a bounce."""
        return all(abs(g.speed(self.t)) < speed and g.accel == 0.0 for g in self._chain())

    def stop_forces(self) -> tuple[float, float]:
        """The force the rear and the front buffer stop press on the cars resting against
        them now, N (+ forward; 0 where none rests). A group pressed against a stop by
        more than its friction stands there: friction holds what it can and the stop the
        rest, ``|force| - friction`` (a car's weight component down a grade less its
        resistance), until the forces turn and the group leaves."""
        chain = self._chain()
        if not chain:
            return 0.0, 0.0
        head, tail = chain[0], chain[-1]
        return max(head.wall, 0.0), min(tail.wall, 0.0)

    # ------------------------------------------------------------------ one group
    def group_span(self, i: int) -> tuple[int, int]:
        """The cars ``(i0, i1)`` (``i0 .. i1 - 1``) moving as one with car ``i`` now."""
        g = self._head
        while g is not None and g.i1 <= i:
            g = g.next
        if g is None:
            raise IndexError(f"no car {i}")
        return g.i0, g.i1

    def _position(self, g: _Group, i: int) -> float:
        return self._ref[i] + g.off + g.run(self.t)

    def _gap(self, g: _Group) -> float:
        """Gap between ``g`` and the group ahead of it, now."""
        h = g.next
        front = self._position(g, g.i1 - 1) + 0.5 * self.length[g.i1 - 1]
        return self._position(h, h.i0) - 0.5 * self.length[h.i0] - front

    def _wall_gaps(self, g: _Group) -> tuple[float, float]:
        """Distance from ``g`` to the buffer stop behind it and to the one ahead of it
        (``inf`` where another group stands between)."""
        behind = ahead = math.inf
        if g.prev is None:
            behind = (self._position(g, g.i0) - 0.5 * self.length[g.i0]
                      - self.buffer_stops[0])
        if g.next is None:
            ahead = self.buffer_stops[1] - (self._position(g, g.i1 - 1)
                                            + 0.5 * self.length[g.i1 - 1])
        return behind, ahead

    def _stop_gaps(self, g: _Group) -> tuple[float, float]:
        """:meth:`_wall_gaps` to buffer stops only (``inf`` at an open end)."""
        behind, ahead = self._wall_gaps(g)
        return (math.inf if self.open_ends[0] else behind,
                math.inf if self.open_ends[1] else ahead)

    def _rebase(self, g: _Group) -> None:
        """Make now the group's reference time (its motion may change from here)."""
        g.off += g.run(self.t)
        g.v0 = g.speed(self.t)
        g.t0 = self.t

    @staticmethod
    def _law(mass: float, force: float, friction: float, v0: float,
             stop_gaps) -> tuple[float, float, float]:
        """How cars of ``mass``, ``force`` and ``friction`` (sums) moving as one at ``v0``
        now are driven: friction's share (its sign against the motion), the acceleration
        and a buffer stop's push (+ forward, N). ``stop_gaps()`` gives their distances to
        the stops behind and ahead (asked only when at rest and pressed towards one)."""
        if v0 == 0.0 and abs(force) > friction:
            behind, ahead = stop_gaps()
            if behind <= GAP_TOL and force < 0.0 or ahead <= GAP_TOL and force > 0.0:
                # pressed against a buffer stop: friction and the stop hold it
                share = math.copysign(1.0, force)
                return share, 0.0, -(force - share * friction)
        if v0 != 0.0:
            share = math.copysign(1.0, v0)
        elif abs(force) > friction:  # it starts off
            share = math.copysign(1.0, force)
        else:  # held: friction takes what the forces ask, shared in proportion
            return (force / friction if friction > 0.0 else 0.0), 0.0, 0.0
        return share, (force - share * friction) / mass, 0.0

    def _motion(self, g: _Group) -> None:
        """Sums and acceleration of a rebased group; a new version of it."""
        members = slice(g.i0, g.i1)
        g.mass = float(self.mass[members].sum())
        g.force = float(self.force[members].sum())
        g.friction = float(self.friction[members].sum())
        g.share, g.accel, g.wall = self._law(g.mass, g.force, g.friction, g.v0,
                                             lambda: self._stop_gaps(g))
        g.version += 1

    def _fold(self, g: _Group) -> None:
        """Fold a rebased group's offset into its members' reference positions."""
        self._ref[g.i0:g.i1] += g.off
        g.off = 0.0

    def _merge(self, g: _Group, speed: float) -> _Group:
        """Join ``g`` and the group ahead of it into one at ``speed``."""
        h = g.next
        for k in (g, h):
            self._rebase(k)
            self._fold(k)
        g.i1 = h.i1
        g.next = h.next
        if h.next is not None:
            h.next.prev = g
        h.alive = False
        g.v0 = speed
        self._motion(g)
        return g

    def _split_at(self, g: _Group, j: int) -> _Group:
        """Part ``g`` between cars ``j`` and ``j + 1``; returns the front part."""
        self._rebase(g)
        self._fold(g)
        h = _Group(j + 1, g.i1, self.t, g.v0)
        g.i1 = j + 1
        h.prev, h.next = g, g.next
        if g.next is not None:
            g.next.prev = h
        g.next = h
        self._motion(g)
        self._motion(h)
        return h

    def _joint_forces(self, i0: int, i1: int, share: float, accel: float,
                      wall: float) -> np.ndarray:
        """For each pair inside cars ``i0 .. i1 - 1`` moving as one (friction's ``share``,
        ``accel``, a stop's push ``wall``, as :meth:`_law` gives them), the force its rear
        part pushes its front part with (compression +): a rigid train's coupler forces."""
        members = slice(i0, i1)
        net = self.force[members] - self.friction[members] * share
        if wall > 0.0:  # the stop behind pushes the rear car forward
            net[0] += wall
        elif wall < 0.0:  # the stop ahead pushes the front car back
            net[-1] += wall
        out = np.empty(i1 - i0 - 1)
        joint_forces(net, self.mass[members], float(accel), out)
        return out

    def _misfits(self, i0: int, i1: int, push: np.ndarray,
                 at_slack: np.ndarray) -> tuple[np.ndarray, float]:
        """For joints of cars ``i0 .. i1 - 1`` pushing ``push`` (see :meth:`_joint_forces`),
        how much each cannot carry (an uncoupled contact would pull, a pair at full slack
        would push), and the rounding below which that is nothing: the group parts where
        the first exceeds the second."""
        members = slice(i0, i1)
        scale = 1e-9 * (abs(float(self.force[members].sum()))
                        + float(self.friction[members].sum())
                        + float(np.abs(self.force[members]).max()) + 1.0)
        return np.where(at_slack, push, -push), scale

    def _split(self, g: _Group) -> _Group | None:
        """Open the worst joint of ``g`` that would have to pull (an uncoupled contact) or
        push (a coupled pair at full slack); returns the new front part, or None."""
        if g.i1 - g.i0 < 2:
            return None
        push = self._joint_forces(g.i0, g.i1, g.share, g.accel, g.wall)
        pairs = slice(g.i0, g.i1 - 1)
        ref, half = self._ref, 0.5 * self.length
        gaps = (ref[g.i0 + 1:g.i1] - half[g.i0 + 1:g.i1]) - (ref[pairs] + half[pairs])
        at_slack = self.coupled[pairs] & (gaps > 0.5 * self.slack[pairs])
        wrong, scale = self._misfits(g.i0, g.i1, push, at_slack)
        k = int(np.argmax(wrong))
        return self._split_at(g, g.i0 + k) if wrong[k] > scale else None

    def _parts_at_once(self, g: _Group, speed: float) -> bool:
        """Whether ``g`` and the group ahead, joined at ``speed``, would part again at once
        where they meet (:meth:`_split`'s test, asked before joining them). Two groups at
        one speed only to within :data:`SPEED_TOL` can disagree with their joined self:
        one stood still (friction holding it) and the other rolls on at 1e-50 m/s, whose
        friction, joined, would turn on both: joining them would set the standing one
        rolling, the split would part them again, it would stop again and be joined
        again, without end (a Zeno sequence). Joined onto a buffer stop they touch, they
        are judged at rest against it, as the impact on it at once leaves them."""
        h = g.next
        j = g.i1 - 1
        half = 0.5 * self.length

        def folded(k: _Group, i: int) -> float:
            # car i's centre as _merge will leave it (rebased and folded), to the last bit
            return float(self._ref[i] + (k.off + k.run(self.t)))

        def stop_gaps() -> tuple[float, float]:
            behind = (math.inf if g.prev is not None or self.open_ends[0] else
                      folded(g, g.i0) - half[g.i0] - self.buffer_stops[0])
            ahead = (math.inf if h.next is not None or self.open_ends[1] else
                     self.buffer_stops[1] - (folded(h, h.i1 - 1) + half[h.i1 - 1]))
            return behind, ahead

        behind, ahead = stop_gaps()
        if (behind <= GAP_TOL and speed < 0.0 or ahead <= GAP_TOL and speed > 0.0) \
                and abs(speed) <= REST_SPEED:
            # joined, it would be struck on the stop it touches at once (_settle) and stay
            # against it: its joint carries what it would carry at rest there
            speed = 0.0
        members = slice(g.i0, h.i1)
        share, accel, wall = self._law(
            float(self.mass[members].sum()), float(self.force[members].sum()),
            float(self.friction[members].sum()), speed, lambda: (behind, ahead))
        push = self._joint_forces(g.i0, h.i1, share, accel, wall)
        at_slack = np.zeros(push.size, dtype=bool)
        gap = (folded(h, j + 1) - half[j + 1]) - (folded(g, j) + half[j])
        at_slack[j - g.i0] = self.coupled[j] and gap > 0.5 * self.slack[j]
        wrong, scale = self._misfits(g.i0, h.i1, push, at_slack)
        return bool(wrong[j - g.i0] > scale)

    # ------------------------------------------------------------------ impacts
    def _impact(self, g: _Group, contact: bool) -> None:
        """Act on the pair between ``g`` and the group ahead, touching and closing
        (``contact``) or at full slack and opening."""
        h = g.next
        j = g.i1 - 1
        self._rebase(g)
        self._rebase(h)
        m1, m2, v1, v2 = g.mass, h.mass, g.v0, h.v0
        closing = abs(v1 - v2)
        couples = contact and not self.coupled[j] and closing <= self.coupling_speed[j]
        if couples:
            self.coupled[j] = True
        kind = "coupled" if couples else ("impact" if contact else "tension impact")
        self.log.append(Event(self.t, kind, coupling=j, value=closing))
        self.counts["contact" if contact else "tension"] += 1
        e = 0.0 if couples else self._bounce(("pair", j), closing)
        common = (m1 * v1 + m2 * v2) / (m1 + m2)
        if e == 0.0:
            self._merge(g, common)
            return
        g.v0 = common - e * m2 * (v1 - v2) / (m1 + m2)
        h.v0 = common + e * m1 * (v1 - v2) / (m1 + m2)
        self._motion(g)
        self._motion(h)

    def _wall_impact(self, g: _Group) -> None:
        """``g`` meets a buffer stop: it keeps ``restitution`` of its speed, reversed."""
        self._rebase(g)
        closing = abs(g.v0)
        end = 0 if g.v0 < 0.0 else 1
        car = g.i0 if end == 0 else g.i1 - 1
        force = closing * math.sqrt(self.buffer_stiffness[end] * g.mass)
        e = self._bounce(("stop", end), closing)
        rests = " and stays against it" if e == 0.0 and self.restitution > 0.0 else ""
        self.log.append(Event(self.t, "buffer stop", vehicle=car, value=force,
                              detail=f"at {closing:.3f} m/s{rests}"))
        self.counts["buffer stop"] += 1
        self.stop_impulse[end] -= g.mass * (1.0 + e) * g.v0
        g.v0 = -e * g.v0
        self._motion(g)

    def _stop(self, g: _Group) -> None:
        """``g`` comes to a stop now: its speed exactly 0, friction (or a stop) takes over."""
        self._rebase(g)
        g.v0 = 0.0
        self._motion(g)
        self.counts["stop"] += 1

    def _bounce(self, contact: tuple[str, int], closing: float) -> float:
        """The restitution of an impact at ``contact`` (a pair or a buffer stop) closing at
        ``closing``: 0 (the contact stays closed) below :data:`REST_SPEED`, or if the
        contact bounced :data:`BOUNCES_PER_INSTANT` times at this instant already.

        The second rule ends the Zeno sequence within a single instant: a car bounced off
        a stop is struck at once by the cars touching it from behind and driven back onto
        the stop, and so on, the speeds shrinking by a factor each round (about 0.67 for
        three cars at restitution 0.134) and never reaching zero. Its limit is the cut at
        rest against the stop, which the inelastic impacts after the last bounces reach
        in one step: momentum is still shared exactly and energy only lost. An elastic
        chain (restitution 1) passes the blow along in finitely many impacts and keeps
        its bounces."""
        if closing <= REST_SPEED:
            return 0.0
        if self.restitution < 1.0:
            done = self._bounces.get(contact, 0)
            if done >= BOUNCES_PER_INSTANT:
                self.counts["resting"] += 1
                return 0.0
            self._bounces[contact] = done + 1
        return self.restitution

    def _settle(self, touched: set[_Group]) -> None:
        """Act on everything that happens at this instant around the ``touched`` groups:
        impacts (a struck chain passes the blow along at once), pairs that touch at one
        speed and would close (one pushes the other: they join), and groups whose joints
        could not carry their force (they split). Then predict their next events."""
        self._bounces.clear()
        n = self._ref.size
        # at most BOUNCES_PER_INSTANT bounces per contact, a merge or a split per car,
        # and room to spare; an elastic cascade (restitution 1, kept exact) may pass the
        # blow to and fro about n times (n^2 / 2 impacts for n equal cars striking a stop,
        # up to three times that for unequal ones, as measured)
        for _ in range(10 * n + 10 + (min(2 * n * n, 100_000) if self.restitution == 1.0 else 0)):
            touched = {g for g in touched if g.alive}
            pairs = {k for g in touched for k in (g.prev, g) if k is not None
                     and k.next is not None}
            acted = False
            # in the cars' order, never the set's: where objects sit in memory must not
            # decide which of two simultaneous events comes first
            for g in sorted((k for k in touched if k.prev is None or k.next is None),
                            key=lambda k: k.i0):
                behind, ahead = self._stop_gaps(g)
                v = g.speed(self.t)
                # any speed onto a stop it touches is an impact, however small: one below
                # SPEED_TOL would otherwise leave the group free to run through the stop
                if behind <= GAP_TOL and v < 0.0 or ahead <= GAP_TOL and v > 0.0:
                    self._wall_impact(g)
                    acted = True
                    break
            if acted:
                continue
            for g in sorted(pairs, key=lambda k: k.i0):
                if not (g.alive and g.next is not None):
                    continue
                h, j = g.next, g.i1 - 1
                gap = self._gap(g)
                rel = g.speed(self.t) - h.speed(self.t)
                touching = gap <= GAP_TOL
                taut = self.coupled[j] and gap >= self.slack[j] - GAP_TOL
                pressing = touching and g.accel > h.accel + 1e-12 * (1 + abs(g.accel))
                pulling = taut and h.accel > g.accel + 1e-12 * (1 + abs(h.accel))
                if touching and rel > SPEED_TOL or taut and rel < -SPEED_TOL:
                    self._impact(g, touching and rel > 0.0)
                elif abs(rel) <= SPEED_TOL and (pressing or pulling):
                    common = ((g.mass * g.speed(self.t) + h.mass * h.speed(self.t))
                              / (g.mass + h.mass))
                    # where, joined, they would not move as one, each goes on alone; but
                    # only if they are parting: closing or level, left alone they would run
                    # into each other, and no contact (or tension) is predicted between
                    # faces already at it
                    parting = (rel < 0.0 and not taut) if pressing else (
                        rel > 0.0 and not touching)
                    if parting and self._parts_at_once(g, common):
                        continue
                    self._merge(g, common)
                else:
                    continue
                touched |= {g, h} | {k for k in (g.prev, h.next) if k is not None}
                acted = True
                break
            if acted:
                continue
            for g in sorted(touched, key=lambda k: k.i0):
                front = self._split(g)
                if front is not None:
                    touched |= {front}
                    acted = True
                    break
            if acted:
                continue
            # groups whose stop falls within this instant (1e-160 m/s left by merges of
            # near-stopped cars) stop now, all at once: one at a time, merges hand each
            # such speed on, ever smaller, and the clock stands
            for g in sorted(touched, key=lambda k: k.i0):
                v = g.speed(self.t)
                if v != 0.0 and self.t + stop_time(v, g.force / g.mass,
                                                   g.friction / g.mass) == self.t:
                    self._stop(g)
                    acted = True
            if not acted:
                break
        else:
            raise RuntimeError(f"impacts at t = {self.t:.6f} s do not settle")
        for g in sorted(touched, key=lambda k: k.i0):  # (the heap's order of ties)
            if g.alive:
                self._predict(g)

    # ------------------------------------------------------------------ prediction
    def _push(self, dt: float, kind: str, g: _Group, h: _Group | None) -> None:
        if 0.0 < dt < math.inf:
            heapq.heappush(self._heap, (self.t + dt, next(self._seq), kind, g, g.version,
                                        h, h.version if h is not None else -1))

    def _predict(self, g: _Group) -> None:
        """Push the next stop of ``g`` and the next contact or tension with each
        neighbour."""
        v = g.speed(self.t)
        if v != 0.0:
            self._push(stop_time(v, g.force / g.mass, g.friction / g.mass), "stop", g, None)
        behind, ahead = self._wall_gaps(g)
        if math.isfinite(behind):
            self._push(contact_time(max(behind, 0.0), 0.0, v, 0.0, g.accel), "wall", g, None)
        if math.isfinite(ahead):
            self._push(contact_time(max(ahead, 0.0), v, 0.0, g.accel, 0.0), "wall", g, None)
        for rear in (g.prev, g):
            if rear is None or rear.next is None:
                continue
            front, j = rear.next, rear.i1 - 1
            gap = max(self._gap(rear), 0.0)
            vr, vf = rear.speed(self.t), front.speed(self.t)
            self._push(contact_time(gap, vr, vf, rear.accel, front.accel), "contact",
                       rear, front)
            if self.coupled[j]:
                self._push(contact_time(max(self.slack[j] - gap, 0.0), vf, vr, front.accel,
                                        rear.accel), "tension", rear, front)

    def _restart(self) -> None:
        """After the caller may have changed forces or friction: every group's motion
        afresh, every prediction afresh, and what happens at this instant."""
        self._heap.clear()
        chain = self._chain()
        for g in chain:
            self._rebase(g)
            self._motion(g)
        self._settle(set(chain))

    def _at_open_end(self) -> bool:
        """Whether a group stands on an open end and moves (or starts to move) out over
        it; then :attr:`reached` names the end."""
        for end, g in ((0, self._head), (1, self._chain()[-1])):
            if not self.open_ends[end]:
                continue
            gap = self._wall_gaps(g)[end]
            s = 1.0 if end else -1.0  # outward: forward at the front end, back at the rear
            v, a = s * g.speed(self.t), s * g.accel
            outward = v > SPEED_TOL or v >= -SPEED_TOL and a > 0.0
            if gap <= GAP_TOL and outward:
                self.reached = ("rear", "front")[end]
                return True
        return False

    def advance(self, t_end: float, max_events: int = 1_000_000) -> None:
        """Move every car on to simulated time ``t_end``, acting on each event on the way.
        Events are appended to :attr:`log` (couplings, impacts, tension impacts). A car
        reaching an open end stops the advance there (see :attr:`reached`)."""
        self.reached = None
        self._x = self._v = None
        if self._head is None:
            self.t = max(self.t, t_end)
            return
        self._restart()
        if self._at_open_end():
            return
        for _ in range(max_events):
            if not self._heap or self._heap[0][0] > t_end:
                self.t = max(self.t, t_end)
                return
            t, _, kind, g, gv, h, hv = heapq.heappop(self._heap)
            if not g.alive or g.version != gv or (
                    h is not None and (not h.alive or h.version != hv or g.next is not h)):
                continue  # a later event changed what this was predicted from
            self.t = t
            if kind == "stop":
                self._stop(g)
                self._settle({g})
                continue
            if kind == "wall":  # on the stop's face exactly
                behind, ahead = self._wall_gaps(g)
                rear = abs(behind) <= abs(ahead)
                g.off += -behind if rear else ahead
                if self.open_ends[0 if rear else 1]:
                    self.reached = "rear" if rear else "front"
                    return
                self._settle({g})
                continue
            # put the faces exactly on the surface the root says they reached
            target = 0.0 if kind == "contact" else self.slack[g.i1 - 1]
            h.off += target - self._gap(g)
            self._settle({g, h})
        raise RuntimeError(f"more than {max_events} events before t = {t_end} s")


def mean_grade_and_curve(route, x: np.ndarray, half: np.ndarray) -> tuple[np.ndarray,
                                                                       np.ndarray]:
    """The grade and the curve resistance (700/R, N/kN) averaged over each car (centre
    ``x``, half its length ``half``) on a :class:`~rrscore.model.track.Route`, in one pass
    of :func:`rrscore.physics.route.means_under` (as the continuous core takes them)."""
    x, half = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(half, dtype=float))
    flat, h = np.ascontiguousarray(x.ravel()), np.ascontiguousarray(half.ravel())
    out = np.empty((4, flat.size))
    ends = np.zeros((2, flat.size), dtype=np.int64)
    means_under(route.track, flat, h, 0.5 / h, ends, False, out)
    return out[0].reshape(x.shape), out[1].reshape(x.shape)


def profile_forces(route, x: np.ndarray, half: np.ndarray, v: np.ndarray,
                   weight: np.ndarray, c: tuple, start: tuple) -> tuple[np.ndarray, np.ndarray]:
    """Forces on cars with centres ``x`` (half-lengths ``half``) at speeds ``v`` on a
    route's profile, as the continuous core's bodies take them: gravity along the grade
    averaged over each car, and as friction its running resistance ``c`` (c0, c1, c2),
    starting resistance ``start`` (force, fading speed) and curve resistance."""
    grade, curve = mean_grade_and_curve(route, x, half)
    speed = np.abs(v)
    friction = (resistance.quadratic_force(speed, *c) + resistance.starting_force(speed, *start)
                + curve * weight * 1e-3)
    return resistance.gravity_force(weight, grade), friction


class CarsOnRoute:
    """A train's vehicles rolling free on a route's profile, stepped by :class:`FreeCars`.

    Seed 001 holds forces constant between events; on a profile they change as the cars
    move, so the run is cut into intervals of ``step`` seconds, and at the start of each
    every car's forces are taken where it stands and at the speed it has: gravity along
    the grade averaged over its length (as the continuous core takes it), and its
    running, starting and curve resistance as friction (no air drag or tunnels). Masses
    are the vehicles' effective masses (wheelsets' rotating inertia included);
    couplings, their slack and coupling speed come from the train, and vehicles listed
    ``coupled = false`` stand apart.

    :param train: the vehicles, lead first (as in a train file).
    :param route: the profile they roll on.
    :param front: where the lead vehicle's front is, m along the route.
    :param speed: one speed for all, or one per vehicle (lead first), m/s.
    :param gaps: extra distance per coupling beyond the couplers touching, m.
    """

    def __init__(self, train, route, front: float, speed=0.0, gaps=None,
                 restitution: float = 0.0, step: float = 0.25) -> None:
        self.train, self.route, self.step = train, route, float(step)
        n = train.count
        cp = train.couplings
        lo, hi = cp.free_range()
        gap = np.zeros(n - 1) if gaps is None else np.asarray(gaps, dtype=float)
        # lead first along the route; the engine wants the rear car first
        ends = front - np.concatenate([[0.0], np.cumsum(train.length[:-1] + gap)])
        centre = (ends - train.half_length)[::-1]
        equiv = np.bincount(train.axle_vehicle, train.axle_mass_equiv, n)
        speeds = np.broadcast_to(np.asarray(speed, dtype=float), (n,))[::-1]
        self.cars = FreeCars(centre, train.length[::-1], (train.mass + equiv)[::-1], speeds,
                             0.0, 0.0, coupled=cp.coupled[::-1], slack=(hi - lo)[::-1],
                             coupling_speed=cp.coupling_speed[::-1], restitution=restitution)
        self._weight = train.weight[::-1]
        self._half = train.half_length[::-1]
        self._c = (train.c0[::-1], train.c1[::-1], train.c2[::-1])
        self._start = (train.start0[::-1], train.start_speed[::-1])
        #: The time and speed at which the lead vehicle's front first passed each named
        #: point of the route.
        self.passages: dict[str, dict[str, float]] = {}

    @property
    def t(self) -> float:
        """Simulated time, s."""
        return self.cars.t

    def front(self) -> float:
        """Where the lead vehicle's front is, m."""
        return float(self.cars.x[-1] + self._half[-1])

    def _forces(self) -> None:
        """Each car's forces where it stands."""
        cars = self.cars
        cars.force[:], cars.friction[:] = profile_forces(self.route, cars.x, self._half,
                                                         cars.v, self._weight, self._c,
                                                         self._start)

    def advance(self, t_end: float) -> None:
        """Roll on to ``t_end``, forces renewed every :attr:`step` seconds."""
        while self.cars.t < t_end - 1e-12:
            self._forces()
            f0, t0, v0 = self.front(), self.cars.t, float(self.cars.v[-1])
            self.cars.advance(min(self.cars.t + self.step, t_end))
            f1, v1 = self.front(), float(self.cars.v[-1])
            for name, p in self.route.points.items():
                if name not in self.passages and f0 < p <= f1:
                    w = (p - f0) / (f1 - f0)  # within an interval of a fraction of a second
                    self.passages[name] = {"time_s": t0 + w * (self.cars.t - t0),
                                           "speed_mps": v0 + w * (v1 - v0)}
