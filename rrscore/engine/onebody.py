"""A rigid train as one body: another state map and right-hand side for the same loop.

A rigid train (``dynamics = "rigid"``) takes one speed, and each vehicle stays where it
stood relative to the lead. Its motion is then a function of two numbers, the lead's
position and the speed, and of the inputs held over the control step. The sums over
the vehicles of gravity and of curve resistance, each vehicle where it stands, depend
on the lead's position alone: they are worked out once (:func:`~rrscore.physics.route.
train_sums`), at every lead position where a vehicle end meets a knot of the route,
and read linearly between (the curve resistance's sum is linear there; the gravity
sum is linear but for the grade's cosine of the vehicles standing across a change of
grade, ``g / sqrt(1 + g^2)``: within 1e-9 of the train's weight on the shipped routes).

The loop integrates, of the train's state layout, only the lead's position and speed,
the plugins' states and a few integrals of the speed (:data:`INTEGRALS`): the distance
run, the integrals of the speed's square and cube and of the air drag's power per unit
of drag, and per group of vehicles sharing a starting speed, the starting resistance's
power per unit of force. Everything else is formed where it is read
(:func:`fill_vehicles`): each vehicle where it stands and at the one speed, its wheels
rolling, and its energy flows: the integrals times its own coefficients, the work of
its held inputs over the stretches they held (closed at each control step,
:func:`close_held`), and its work against gravity and curve resistance, the exact
integral along its path (:func:`~rrscore.physics.route.path_work`; gravity's is
conservative, the curve resistance's is closed where the motion turns).

The control step, the events, the monitors and the samples are the multi-body
system's, on the vehicles placed where the one body puts them (:mod:`rrscore.engine.
multibody`, whose ``rigid`` mode is the reference: the two agree to the solver's
tolerance). A train serves as one body while none of its axles slips and it has no air
brake (:meth:`OneBodyTrain.fits`); the run goes back to the multi-body layout where it
does not.
"""

from __future__ import annotations

import copy
from collections import namedtuple
from typing import Any

import numpy as np

from ..jit import kernel, struct
from ..model.state import entry_ranges
from ..physics.bodies import AIR, BRAKE, DRIVE, GRAVITY, RESISTANCE, coulomb_share
from ..physics.route import path_work, train_sums
from ..physics.wheelsets import fill_rolling
from . import multibody as mb
from . import system
from .control import train_control
from .loop import HAND_BACK
from .stepper import dense_state

#: The one body's integrals, where they start in the state (``lay.sz``): the distance
#: run, the integrals of the speed squared and cubed and of the air drag's power per
#: unit of ``rho Cd A / 2``, then per starting-resistance group the starting
#: resistance's power per unit of its force.
D, S2, S3, AIR_POWER = range(4)
INTEGRALS = 4
#: Entries of ``sums``: the held force, resistance with ``c0`` and effective mass summed
#: over the vehicles, the sums of ``c1``, ``c2`` and ``rho Cd A / 2``, and the wind.
FORCE, RESIST, MASS, C1, C2, DRAG, WIND = range(7)
#: Lead positions in the table (vehicle ends times knots) beyond which a rigid train keeps
#: the multi-body layout (the table would take more memory than it saves).
MAX_BREAKPOINTS = 2_000_000

#: Where the one body's entries are: vehicles, the lead's position and speed, the
#: integrals, starting groups, the energy flows and the coupler work (as the train's).
OneLayout = namedtuple("OneLayout", ["n", "sx", "sv", "sz", "groups", "senergy"])

#: The energy account while the train is one body: each vehicle's flows at the start
#: and those closed since (``acc``, rows as :data:`~rrscore.physics.bodies.ENERGY_FLOWS`),
#: its curve resistance's path integral closed at the turns of the motion (``curve``),
#: and ``mark``: the lead's position and the distance run where the held inputs were last
#: closed, the lead's position at the start (gravity's path begins there), where the
#: current stretch of motion began and its direction.
OneEnergy = namedtuple("OneEnergy", ["acc", "curve", "mark"])
X_HELD, D_HELD, X_START, X_TURN, DIRECTION = range(5)

OneBody = struct("OneBody", (
    "live", "formed", "controlled", "atol", "rtol", "ev_kind", "train", "lay", "rel",
    "group", "table", "cursor", "sums", "groups", "energy", "dy", "span"),
    """A rigid train as one body (see the module): the loop's fields, the multi-body system
    it stands for (``train``), the layout, each vehicle's place behind the lead (``rel``)
    and its starting group (-1: none), the route's sums by lead position (``table``: rows
    lead position, gravity sum and its slope, curve resistance sum and its slope) and where
    it was read last (``cursor``), the held sums and constants (``sums``), the starting
    groups (speeds, force sums), the energy account, a derivative's room for the
    vehicles' body pass (``dy``) and one range of entries (``span``, ``(1, 2)``).""")


# ----------------------------------------------------------------------- the state
@kernel
def place_vehicles(sys, y):  # pragma: no cover (compiled)
    """Every vehicle where the one body puts it: its centre at the lead's plus its place
    behind, at the lead's speed."""
    lay = sys.lay
    x0, v0 = y[lay.sx], y[lay.sv]
    for i in range(1, lay.n):
        y[lay.sx + i] = x0 + sys.rel[i]
        y[lay.sv + i] = v0


@kernel
def table_at(sys, x):  # pragma: no cover (compiled)
    """The gravity and curve-resistance sums with the lead at ``x``: linear between the
    table's positions, constant beyond its ends (the interval walked to from the last)."""
    tab = sys.table
    last = tab.shape[1] - 1
    if x <= tab[0, 0]:
        return tab[1, 0], tab[3, 0]
    if x >= tab[0, last]:
        return tab[1, last], tab[3, last]
    j = min(max(sys.cursor[0], 0), last - 1)
    while tab[0, j] > x:
        j -= 1
    while tab[0, j + 1] <= x:
        j += 1
    sys.cursor[0] = j
    d = x - tab[0, j]
    return tab[1, j] + tab[2, j] * d, tab[3, j] + tab[4, j] * d


@kernel
def rhs(sys, fns, t, y, dy, full):  # pragma: no cover (compiled)
    """The one body's derivative: the Coulomb rule on the train's sums (as a rigid
    multi-body train's body pass), the integrals, the plugins' states."""
    lay, k = sys.lay, sys.sums
    v = y[lay.sv]
    s = abs(v)
    g_sum, c_sum = table_at(sys, y[lay.sx])
    force = k[FORCE] + g_sum
    air = 0.0
    if k[DRAG] != 0.0:
        u = v - k[WIND]
        air = -u * abs(u)
        force += k[DRAG] * air
    resist = k[RESIST] + s * (k[C1] + k[C2] * s) + c_sum
    z = lay.sz
    for g in range(lay.groups):
        s0 = sys.groups[0, g]
        if s < s0:
            share0 = 1.0 - s / s0
            resist += sys.groups[1, g] * share0
            dy[z + INTEGRALS + g] = share0 * s
        else:
            dy[z + INTEGRALS + g] = 0.0
    held = sys.train.held
    share = coulomb_share(held.direction[0] if held.frozen[0] else v, force, resist)
    dy[lay.sx] = v
    dy[lay.sv] = (force - resist * share) / k[MASS]
    dy[z + D] = s
    dy[z + S2] = s * s
    dy[z + S3] = s * s * s
    dy[z + AIR_POWER] = air * v
    mb.plugin_rates_at(sys.train, fns, t, y, dy, v)


@kernel
def held_sums(sys):  # pragma: no cover (compiled)
    """The held inputs summed over the vehicles into ``sums``."""
    held = sys.train.held
    f = r = m = 0.0
    for i in range(held.force.size):
        f += held.force[i]
        r += held.base[i]
        m += held.mass[i]
    sys.sums[FORCE], sys.sums[RESIST], sys.sums[MASS] = f, r, m


@kernel
def close_held(sys, y):  # pragma: no cover (compiled)
    """Each vehicle's drive and brake work closed from the last close to the state ``y``:
    its held force times the lead's displacement, its held resistance times the
    distance run."""
    lay, mark, acc = sys.lay, sys.energy.mark, sys.energy.acc
    dx = y[lay.sx] - mark[X_HELD]
    dd = y[lay.sz + D] - mark[D_HELD]
    held = sys.train.held
    if dx != 0.0 or dd != 0.0:
        for i in range(lay.n):
            acc[DRIVE, i] += held.force[i] * dx
            acc[BRAKE, i] += held.resist[i] * dd
    mark[X_HELD] = y[lay.sx]
    mark[D_HELD] = y[lay.sz + D]


@kernel
def close_curve(sys, x):  # pragma: no cover (compiled)
    """The stretch of motion since the last turn closed at the lead position ``x``: each
    vehicle's curve resistance integrated along it."""
    lay, mark = sys.lay, sys.energy.mark
    half = sys.train.bodies.half
    track = sys.train.track
    for i in range(lay.n):
        _, c = path_work(track, mark[X_TURN] + sys.rel[i], x + sys.rel[i], half[i])
        sys.energy.curve[i] += c
    mark[X_TURN] = x


@kernel
def fill_vehicles(sys, y):  # pragma: no cover (compiled)
    """The whole state at ``y`` (the one body's entries formed): every vehicle placed, its
    wheels rolling, its energy flows (see the module)."""
    place_vehicles(sys, y)
    lay, mark, acc = sys.lay, sys.energy.mark, sys.energy.acc
    tr = sys.train
    fill_rolling(tr.axles, y, tr.lay.sx, tr.lay.sv, tr.lay.somega, tr.lay.sphi)
    b, held = tr.bodies, tr.held
    z = lay.sz
    dx = y[lay.sx] - mark[X_HELD]
    dd = y[z + D] - mark[D_HELD]
    n = lay.n
    e = lay.senergy
    for i in range(n):
        g, c = path_work(tr.track, mark[X_START] + sys.rel[i], y[lay.sx] + sys.rel[i],
                         b.half[i])
        _, c_open = path_work(tr.track, mark[X_TURN] + sys.rel[i], y[lay.sx] + sys.rel[i],
                              b.half[i])
        running = (b.c0[i] * y[z + D] + b.c1[i] * y[z + S2] + b.c2[i] * y[z + S3]
                   + (sys.energy.curve[i] + c_open) * b.weight_kn[i])
        grp = sys.group[i]
        if grp >= 0:
            running += b.start0[i] * y[z + INTEGRALS + grp]
        y[e + DRIVE * n + i] = acc[DRIVE, i] + held.force[i] * dx
        y[e + BRAKE * n + i] = acc[BRAKE, i] + held.resist[i] * dd
        y[e + RESISTANCE * n + i] = acc[RESISTANCE, i] + running
        y[e + GRAVITY * n + i] = acc[GRAVITY, i] - b.weight[i] * g
        y[e + AIR * n + i] = acc[AIR, i] + b.half_rho_cd_a[i] * y[z + AIR_POWER]


# ----------------------------------------------------------- the loop's contract
@kernel
def events(sys, fns, t, y, f, g):  # pragma: no cover (compiled)
    """The multi-body train's events with every vehicle where the one body puts it, at
    its acceleration."""
    lay = sys.lay
    place_vehicles(sys, y)
    a = f[lay.sv]
    for i in range(1, lay.n):
        f[lay.sv + i] = a
    m = mb.events(sys.train, fns, t, y, f, g)
    kinds = sys.train.ev_kind
    for i in range(m):
        sys.ev_kind[i] = kinds[i]
    return m


@kernel
def kink_bound(sys, fns, t, t_bound, h, y, f, g):  # pragma: no cover (compiled)
    """No kinks: a rigid train's couplers do not deflect."""
    return t_bound


@kernel
def reference(sys, fns, y, ref):  # pragma: no cover (compiled)
    """The train's speed, which the relative tolerance measures the speed from (as the
    multi-body train's mean)."""
    ref[sys.lay.sv] = y[sys.lay.sv]


@kernel
def commit(sys, fns, tab, seg, w):  # pragma: no cover (compiled)
    """After every step: the multi-body train's (friction's directions, the coupler force
    monitors from its body pass, the named points passed) on the vehicles placed; where
    the motion turned, the stretch since the last turn closed at the turning point (found
    on the dense output)."""
    lay, mark = sys.lay, sys.energy.mark
    y1 = seg.y1  # (its vehicles placed by the events there: see system.commit)
    mb.rigid_forces(sys.train, y1, sys.dy)  # (the coupler forces, for the monitors)
    mb.commit(sys.train, fns, tab, seg, w)
    v1 = y1[lay.sv]
    d = mark[DIRECTION]
    if d == 0.0:
        if v1 != 0.0:
            mark[DIRECTION] = 1.0 if v1 > 0.0 else -1.0
        return
    if v1 * d >= 0.0:
        return
    # the motion turned within the step: where its speed crossed zero
    lo, hi = seg.t0, seg.t1
    span = sys.span
    span[0, 0], span[0, 1] = lay.sv, lay.sv + 1
    for _ in range(60):
        if hi - lo <= 1e-12 * max(1.0, hi):
            break
        mid = 0.5 * (lo + hi)
        dense_state(tab, mid, seg.t0, seg.h, seg.y0, seg.y1, seg.f0, seg.f1, seg.ks,
                    seg.whole, span, w.weights, w.stage)
        if w.stage[lay.sv] * d > 0.0:
            lo = mid
        else:
            hi = mid
    span[0, 0], span[0, 1] = lay.sx, lay.sx + 1
    dense_state(tab, lo, seg.t0, seg.h, seg.y0, seg.y1, seg.f0, seg.f1, seg.ks, seg.whole,
                span, w.weights, w.stage)
    close_curve(sys, w.stage[lay.sx])
    mark[DIRECTION] = -d


@kernel
def control(sys, fns, st, t, y):  # pragma: no cover (compiled)
    """The multi-body train's control step on the vehicles placed, the held inputs'
    work closed before it, their sums taken after."""
    place_vehicles(sys, y)
    close_held(sys, y)
    code = train_control(sys.train, fns, st, t, y)
    if code != HAND_BACK:
        held_sums(sys)
    return code


@kernel
def sample(sys, fns, t, y, f, row):  # pragma: no cover (compiled)
    """The multi-body train's row, on the vehicles placed (its coupler forces, where the row
    has room for them, from its body pass there)."""
    place_vehicles(sys, y)
    if row.size > mb.ROW:
        mb.rigid_forces(sys.train, y, sys.dy)
    return mb.sample(sys.train, fns, t, y, f, row)


for _generic, _impl in ((system.rhs, rhs), (system.events, events),
                        (system.kink_bound, kink_bound), (system.reference, reference),
                        (system.commit, commit), (system.control, control),
                        (system.sample, sample)):
    _generic.register(OneBody, _impl)


# ------------------------------------------------------------------------ building
class OneBodyTrain:
    """A rigid train's one body: built once (the route's sums by the lead's position),
    started where the run goes over to it (:meth:`start`) and left where it goes back to
    the multi-body layout (:meth:`stop`).

    :param system: the train's :class:`~rrscore.engine.train.TrainSystem` (rigid).
    :param y: its state at the start (the vehicles where they stand).
    """

    def __init__(self, system: Any, y: np.ndarray) -> None:
        tr, lay = system.train, system.lay
        n = lay.n
        x = y[lay.sx:lay.sx + n]
        rel = x - x[0]
        b = system.sys.bodies
        knots = system.route.track.knots
        self.usable = knots.size * n * 2 <= MAX_BREAKPOINTS
        ends = np.concatenate([rel + b.half, rel - b.half])
        lead = np.unique((knots[:, None] - ends[None, :]).ravel())
        table = np.zeros((5, lead.size))
        table[0] = lead
        train_sums(system.route.track, lead, np.ascontiguousarray(rel), b.half, b.weight,
                   b.weight_kn, table[1], table[3])
        if lead.size > 1:
            dx = np.diff(lead)
            table[2, :-1] = np.diff(table[1]) / dx
            table[4, :-1] = np.diff(table[3]) / dx
        start_speed = np.asarray(tr.start_speed, dtype=float)
        starting = (np.asarray(tr.start0) != 0.0) & (start_speed > 0.0)
        speeds = np.unique(start_speed[starting])
        group = np.full(n, -1, dtype=np.int64)
        groups = np.zeros((2, speeds.size))
        for k, s0 in enumerate(speeds):
            members = starting & (start_speed == s0)
            group[members] = k
            groups[0, k], groups[1, k] = s0, float(np.sum(np.asarray(tr.start0)[members]))
        sums = np.zeros(7)
        sums[C1], sums[C2] = float(np.sum(b.c1)), float(np.sum(b.c2))
        sums[DRAG], sums[WIND] = float(np.sum(b.half_rho_cd_a)), float(b.wind[0])
        sz = system.layout["rigid.integrals"].start
        one_lay = OneLayout(n, lay.sx, lay.sv, sz, speeds.size, lay.senergy)
        live = np.zeros(system.size, dtype=bool)
        live[lay.sx] = live[lay.sv] = True
        live[sz:sz + INTEGRALS + speeds.size] = True
        live[system.plugin_states] = True
        controlled = live & np.isfinite(system.atol)
        self.system = system
        self.sys = OneBody(
            entry_ranges(live), entry_ranges(live), entry_ranges(controlled), system.atol,
            system.rtol, np.zeros(system.sys.ev_kind.size, dtype=np.int64), system.sys,
            one_lay, np.ascontiguousarray(rel), group, np.ascontiguousarray(table),
            np.zeros(1, dtype=np.int64), sums, groups,
            OneEnergy(np.zeros((6, n)), np.zeros(n), np.zeros(5)), np.zeros(system.size),
            np.zeros((1, 2), dtype=np.int64))
        self.rel = rel
        #: Whether the run integrates the train as one body now.
        self.active = False
        self._formed: tuple | None = None  # the last state formed and its energy flows

    def fits(self, y: np.ndarray) -> bool:
        """Whether the train can be one body at the state ``y``: every vehicle where the
        table was made for (to a micrometre) and at one speed, no axle slipping, no air
        brake, no AREA curves or tunnels (their sums are not in the table)."""
        system = self.system
        lay = system.lay
        if not self.usable or system.air.on or system.sys.modes.flags[mb.EXTRA]:
            return False
        if system.sys.modes.counts[mb.SLIPPING]:
            return False
        x, v = y[lay.sx:lay.sx + lay.n], y[lay.sv:lay.sv + lay.n]
        return bool(np.all(np.abs((x - x[0]) - self.rel) <= 1e-6) and np.all(v == v[0]))

    def start(self, y: np.ndarray) -> None:
        """Go over to the one body at the state ``y`` (the whole state, formed): its
        integrals from zero, each vehicle's flows carried in ``acc``."""
        s, lay = self.sys, self.sys.lay
        n = lay.n
        y[lay.sz:lay.sz + INTEGRALS + lay.groups] = 0.0
        e = s.energy
        e.acc[:] = y[lay.senergy:lay.senergy + 6 * n].reshape(6, n)
        e.curve[:] = 0.0
        x0, v0 = float(y[lay.sx]), float(y[lay.sv])
        e.mark[:] = (x0, 0.0, x0, x0, np.sign(v0))
        held_sums(s)
        self.active = True

    def stop(self, y: np.ndarray) -> None:
        """Go back to the multi-body layout at ``y``: the whole state formed."""
        fill_vehicles(self.sys, y)
        self.active = False

    def fill(self, y: np.ndarray) -> None:
        """The whole state at ``y`` (in place). The energy flows integrate each vehicle's
        path from the start: at the state formed last, they are taken from it."""
        lay = self.sys.lay
        key = (y[lay.sx], y[lay.sv], *y[lay.sz:lay.sz + INTEGRALS + lay.groups],
               *self.sys.energy.mark, float(self.sys.energy.acc.sum()))
        if self._formed is not None and self._formed[0] == key:
            place_vehicles(self.sys, y)
            tr = self.system
            fill_rolling(tr.sys.axles, y, tr.lay.sx, tr.lay.sv, tr.lay.somega, tr.lay.sphi)
            e = lay.senergy
            y[e:e + 5 * lay.n] = self._formed[1]
            return
        fill_vehicles(self.sys, y)
        self._formed = (key, y[lay.senergy:lay.senergy + 5 * lay.n].copy())

    def copy(self, system: Any, memo: dict) -> OneBodyTrain:
        """A copy for ``system`` (a copy of this one's train system, made with ``memo``)."""
        new = object.__new__(OneBodyTrain)
        new.__dict__.update(self.__dict__)
        new.system = system
        new.sys = copy.deepcopy(self.sys, memo)
        new._formed = None
        return new

    def held_changed(self, y: np.ndarray, before: bool) -> None:
        """Python changes the held inputs at ``y``: ``before``, the work of the old ones is
        closed; after, their sums are taken again."""
        if before:
            close_held(self.sys, y)
        else:
            held_sums(self.sys)
