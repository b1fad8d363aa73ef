"""The right-hand side of the common case, compiled.

While every axle rolls (no slip) and no vehicle needs the route's extra
lookups (AREA curve resistance, tunnel factors), the bodies, the wheelsets and
the energy account reduce to one pass over the vehicles: the track under each
vehicle, gravity, running, curve and starting resistance, air, the coupler
forces, the Coulomb rule, the accelerations, the rolling axles' spin and every
energy flow. :func:`body_rates` does that pass compiled with numba (cached on
disk: a second run pays no compile time), in place of about a hundred small
array operations of the component methods. The components stay the
reference: they serve every other case (slipping axles, the extra lookups)
and every output signal, and a test holds both to the same derivatives.

Coupler models and the states of vehicle plugins are not in this pass: their
own ``force``/``rates`` are called as before (the shipped SA-3 gear compiles
its own). So nothing here depends on a plugin, and a plugin written in numpy
runs unchanged. A vehicle plugin may write its states' derivatives as a plain
function (``VehicleModel.state_rates``); :func:`compile_kernel` compiles it
with numba, or keeps it as written where numba cannot, and says why.
"""

from __future__ import annotations

import contextlib
import time
import warnings
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
from numba import njit, types
from numba.core import event as numba_event

if TYPE_CHECKING:
    from .dynamics import TrainDynamics


class _CompileClock(numba_event.Listener):
    """Adds up the time numba spends compiling: its "numba:compile" event fires only when
    a function is compiled, not when it is loaded from the on-disk cache. Compiles nest
    (a function compiles what it calls): the outermost is timed."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._depth = 0
        self._t0 = 0.0
        #: Called once each when numba next starts compiling (:func:`compile_notice`).
        self.waiting: list[Callable[[], None]] = []

    def on_start(self, event: numba_event.Event) -> None:
        if self._depth == 0:
            self._t0 = time.perf_counter()
            callbacks, self.waiting = self.waiting, []
            for notify in callbacks:
                with contextlib.suppress(Exception):  # a notice never stops a compile
                    notify()
        self._depth += 1

    def on_end(self, event: numba_event.Event) -> None:
        self._depth -= 1
        if self._depth == 0:
            self.seconds += time.perf_counter() - self._t0


_CLOCK = _CompileClock()
numba_event.register("numba:compile", _CLOCK)


@contextlib.contextmanager
def compile_notice(notify: Callable[[], None]) -> Iterator[None]:
    """Within the block, call ``notify()`` once, when numba starts compiling (code it
    loads from its on-disk cache does not count): for telling a user why the first drive
    on an install pauses for the better part of a minute."""
    _CLOCK.waiting.append(notify)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):  # (called already)
            _CLOCK.waiting.remove(notify)


def compile_seconds() -> float:
    """Seconds numba has spent compiling in this process so far: rrscore's step loop and
    right-hand sides, and plugins' kernels. Functions loaded from the on-disk cache (every
    run after the first on an install, unless the code changed) add nothing."""
    return _CLOCK.seconds


@njit(cache=True)
def dot(a, b):  # pragma: no cover (compiled)
    """``a @ b`` for two vectors as a plain loop: numpy's product calls BLAS, whose
    threads cost more than they save on the vectors of a long train."""
    total = 0.0
    for i in range(a.size):
        total += a[i] * b[i]
    return total


@njit(cache=True)
def _interval(xq, knots, j):  # pragma: no cover (compiled)
    """The knot interval of ``xq`` (``knots[j] <= xq < knots[j + 1]``, as
    ``searchsorted(knots, xq, "right") - 1``), walked to from a guess ``j``: the
    vehicles of a train stand one behind the other, so the next one is near. -1 before
    the first knot, ``knots.size - 1`` at or past the last."""
    last = knots.size - 1
    if xq < knots[0]:
        return -1
    if xq >= knots[last]:
        return last
    j = min(max(j, 0), last - 1)
    while knots[j] > xq:
        j -= 1
    while knots[j + 1] <= xq:
        j += 1
    return j


def slopes(knots: np.ndarray, table: np.ndarray) -> np.ndarray:
    """Per knot interval, the slope of ``table`` (0 past the last knot), taken once rather
    than at every lookup (:func:`_end_piece`)."""
    out = np.zeros(knots.size)
    out[:-1] = (table[1:] - table[:-1]) / (knots[1:] - knots[:-1])
    return out


#: The first row of a body pass's ``static`` table that caches the route under each
#: vehicle: seven rows for its front, seven for its rear (:func:`_end_piece`).
ROUTE_ROWS = 9
ROUTE_SIZE = 14
# where a vehicle's front and rear start among those rows (numpy scalars: numba compiles
# a function once per literal argument, once for these)
FRONT, REAR = np.int64(0), np.int64(7)


def route_cache(n: int) -> np.ndarray:
    """The rows of ``static`` caching the route under each of ``n`` vehicles, none known
    yet (empty ranges: the first pass finds each)."""
    cache = np.zeros((ROUTE_SIZE, n))
    cache[0], cache[1], cache[7], cache[8] = np.inf, -np.inf, np.inf, -np.inf
    return cache


@njit(cache=True)
def _end_piece(xq, knots, tables, cache, i, rows):  # pragma: no cover (compiled)
    """The knot interval of a vehicle end at ``xq`` (:func:`_interval`) into column ``i``
    of ``cache``, rows ``rows`` to ``rows + 6``: the range it covers (from, to), then
    what the tables are there as ``slope * (xq - start) + value`` (its start, the
    elevation's slope and value, the curve resistance's slope and value): linear
    between knots, constant beyond the ends, as ``np.interp``."""
    last = knots.size - 1
    j = _interval(xq, knots, np.searchsorted(knots, xq, side="right") - 1)
    inside = 0 <= j < last
    end = 0 if j < 0 else last  # the table's end value where it is constant
    cache[rows, i] = knots[j] if j >= 0 else -np.inf
    cache[rows + 1, i] = knots[j + 1] if j < last else np.inf
    cache[rows + 2, i] = knots[j] if inside else 0.0
    cache[rows + 3, i] = tables[2, j] if inside else 0.0
    cache[rows + 4, i] = tables[0, j] if inside else tables[0, end]
    cache[rows + 5, i] = tables[3, j] if inside else 0.0
    cache[rows + 6, i] = tables[1, j] if inside else tables[1, end]


@njit(cache=True, _nrt=False)
def coulomb_share(d, force, resist):  # pragma: no cover (compiled)
    """How much of a rigid train's summed resistance ``resist`` opposes its summed force
    ``force`` (the Coulomb rule on the sums, see :func:`rrscore.bodies.rigid_net`):
    all of it against the motion ``d`` (a direction or a speed), and standing, what
    holds the force, up to all of it."""
    if d > 0.0:
        return 1.0
    if d < 0.0:
        return -1.0
    if resist > 0.0:
        return min(max(force / resist, -1.0), 1.0)
    return 0.0


#: Rows of the ``work`` array :func:`body_rates` takes.
BODY_WORK_ROWS = 5

#: What a body pass writes (:func:`body_rates`' ``rates``): every derivative; those that
#: can be nonzero (a step loop's stage: its buffers hold the zeros of the rolling wheels'
#: rates, of the slip flows and of the air's where no vehicle has drag); those of the
#: motion alone, no energy flow (a stage whose flows nothing reads: Dormand-Prince's
#: second, whose weight is zero in the step's end, its error and its dense output).
#: (numpy scalars: numba compiles a function once per literal argument.)
ALL_RATES, NONZERO_RATES, MOTION_RATES = np.int64(2), np.int64(1), np.int64(0)


@njit(cache=True, error_model="numpy", _nrt=False)
def _route_under(xs, knots, tables, static, grade, curve,
                 b0):  # pragma: no cover (compiled)
    """The mean grade and curve resistance under the vehicles ``b0`` on (centres ``xs``,
    as many as it holds) into ``grade`` and ``curve``: the knot intervals of its ends
    (those it stood in before, as a rule: range checks, no walk; cached in ``static``
    from row :data:`ROUTE_ROWS`), then the route under it in a loop without branches
    (see :func:`body_rates`). Where every end of them lies on one piece of the route (a
    knot interval), that piece serves them all, the same arithmetic on the same values
    (kept in the first one's front cache), without reading each one's cache: the rule on
    a long train, whose pieces are far longer than a block of vehicles, and whose cached
    rows would be most of what its right-hand side reads."""
    k = xs.size
    c = static[ROUTE_ROWS:ROUTE_ROWS + ROUTE_SIZE]
    half = static[0, b0:b0 + k]
    lo, hi = np.inf, -np.inf  # the ends' extent (NaN left out: it follows anyway)
    for i in range(k):
        rear, front = xs[i] - half[i], xs[i] + half[i]
        if rear < lo:
            lo = rear
        if front > hi:
            hi = front
    if not c[0, b0] <= hi < c[1, b0]:
        _end_piece(hi, knots, tables, c, b0, FRONT)
    if c[0, b0] <= lo:  # (and so every end, up to ``hi``, on the piece of ``hi``)
        start, slope, value, curve_slope, curve_value = (c[2, b0], c[3, b0], c[4, b0],
                                                         c[5, b0], c[6, b0])
        for i in range(k):
            x, h = xs[i], half[i]
            front, rear = x + h, x - h
            grade[i] = ((slope * (front - start) + value)
                        - (slope * (rear - start) + value)) / (2.0 * h)
            curve[i] = ((curve_slope * (front - start) + curve_value)
                        - (curve_slope * (rear - start) + curve_value)) / (2.0 * h)
        return
    f_from, f_to, r_from, r_to = c[0, b0:b0 + k], c[1, b0:b0 + k], c[7, b0:b0 + k], \
        c[8, b0:b0 + k]
    for i in range(k):
        x = xs[i]
        front, rear = x + half[i], x - half[i]
        if not f_from[i] <= front < f_to[i]:  # (NaN: found again, and NaN follows)
            _end_piece(front, knots, tables, c, b0 + i, FRONT)
        if not r_from[i] <= rear < r_to[i]:
            _end_piece(rear, knots, tables, c, b0 + i, REAR)
    f_start, f_slope, f_value, f_curve_slope, f_curve = (
        c[2, b0:b0 + k], c[3, b0:b0 + k], c[4, b0:b0 + k], c[5, b0:b0 + k], c[6, b0:b0 + k])
    r_start, r_slope, r_value, r_curve_slope, r_curve = (
        c[9, b0:b0 + k], c[10, b0:b0 + k], c[11, b0:b0 + k], c[12, b0:b0 + k],
        c[13, b0:b0 + k])
    for i in range(k):
        x, h = xs[i], half[i]
        front, rear = x + h, x - h
        grade[i] = ((f_slope[i] * (front - f_start[i]) + f_value[i])
                    - (r_slope[i] * (rear - r_start[i]) + r_value[i])) / (2.0 * h)
        curve[i] = ((f_curve_slope[i] * (front - f_start[i]) + f_curve[i])
                    - (r_curve_slope[i] * (rear - r_start[i]) + r_curve[i])) / (2.0 * h)


#: Vehicles the body pass takes at a time (a multi-body train's: its intermediates for
#: so many stay in the fastest cache, where a long train's whole rows would not; a
#: rigid train's are taken at once, their sums needing all).
BODY_BLOCK = 256


@njit(cache=True, error_model="numpy", _nrt=False)
def _body_block(b0, k, y, cf, dy, idx, knots, tables, static, held, frozen, direction,
                rigid, rates, work):  # pragma: no cover (compiled)
    """:func:`body_rates` for the ``k`` vehicles from ``b0``: the route under them, their
    forces and resistances (into ``work``'s rows 2 and 3, from column 0), their energy
    flows (as ``rates`` says) and speeds' rates, and unless ``rigid`` their
    accelerations."""
    sx, sv, energy, any_starting, use_air = idx[0], idx[1], idx[4], idx[6], idx[7]
    n = static.shape[1]
    grade, curve, force, resist, speed = (work[0, :k], work[1, :k], work[2, :k],
                                          work[3, :k], work[4, :k])
    _route_under(y[sx + b0:sx + b0 + k], knots, tables, static, grade, curve, b0)
    # the couplers' pull on each vehicle: 0 - cf[i] + cf[i - 1], where they are
    nc = max(n - 1, 0)
    for i in range(k):
        force[i] = 0.0
    hi = min(b0 + k, nc)
    behind = force[:max(hi - b0, 0)]
    pull = cf[b0:b0 + behind.size]
    for i in range(behind.size):
        behind[i] -= pull[i]
    first = 1 if b0 == 0 else 0
    ahead = force[first:k]
    push = cf[b0 + first - 1:b0 + first - 1 + ahead.size]
    for i in range(ahead.size):
        ahead[i] += push[i]
    v = y[sv + b0:sv + b0 + k]
    weight, weight_kn, c1, c2 = (static[1, b0:b0 + k], static[2, b0:b0 + k],
                                 static[3, b0:b0 + k], static[4, b0:b0 + k])
    force_held, resist_c0, resist_held = (held[0, b0:b0 + k], held[1, b0:b0 + k],
                                          held[2, b0:b0 + k])
    e0 = energy + b0
    e_drive, e_brake, e_resist = (dy[e0:e0 + k], dy[e0 + n:e0 + n + k],
                                  dy[e0 + 2 * n:e0 + 2 * n + k])
    e_gravity, e_air, e_slip = (dy[e0 + 3 * n:e0 + 3 * n + k],
                                dy[e0 + 4 * n:e0 + 4 * n + k],
                                dy[e0 + 5 * n:e0 + 5 * n + k])
    flows = rates != MOTION_RATES
    gravity = grade  # (each vehicle's grade is read once, then its gravity force kept)
    for i in range(k):
        g = grade[i]
        gravity[i] = -weight[i] * g / np.sqrt(1.0 + g * g)
        force[i] += force_held[i] + gravity[i]
        s = abs(v[i])
        speed[i] = s
        r = resist_c0[i] + s * (c1[i] + c2[i] * s)
        resist[i] = r + curve[i] * weight_kn[i]
    # the flows in loops of their own, so that a stage whose flows nothing reads skips
    # their writes (a long train's stages are paced by the memory they write)
    if flows:
        for i in range(k):
            e_gravity[i] = gravity[i] * v[i]
            e_drive[i] = force_held[i] * v[i]
            e_brake[i] = resist_held[i] * speed[i]
    if rates == ALL_RATES:
        for i in range(k):
            e_slip[i] = 0.0
    if any_starting:
        start_force, start_speed = static[5, b0:b0 + k], static[6, b0:b0 + k]
        for i in range(k):
            if speed[i] < start_speed[i]:  # else nothing: skip the division
                resist[i] += start_force[i] * (1.0 - speed[i] / start_speed[i])
    if use_air:
        drag, wind = static[7, b0:b0 + k], static[8, b0:b0 + k]
        for i in range(k):
            u = v[i] - wind[i]
            air = -drag[i] * u * abs(u)
            force[i] += air
            if flows:
                e_air[i] = air * v[i]
    elif rates == ALL_RATES:
        for i in range(k):
            e_air[i] = 0.0
    xdot, vdot = dy[sx + b0:sx + b0 + k], dy[sv + b0:sv + b0 + k]
    for i in range(k):
        xdot[i] = v[i]
    if flows:
        for i in range(k):
            e_resist[i] = (resist[i] - resist_held[i]) * speed[i]
    if not rigid:
        inv_mass = held[3, b0:b0 + k]
        hold, way = frozen[b0:b0 + k], direction[b0:b0 + k]
        for i in range(k):
            # Coulomb: against the held direction, or holding a standing vehicle
            d = way[i] if hold[i] else v[i]
            fi, ri = force[i], resist[i]
            net = fi - ri if d > 0.0 else (fi + ri if d < 0.0 else
                                           fi - min(max(fi, -ri), ri))
            vdot[i] = net * inv_mass[i]


@njit(cache=True, error_model="numpy", _nrt=False)
def _rigid_carry(force, resist, held, frozen, direction, v, cf):  # pragma: no cover
    """A rigid train's acceleration from each vehicle's force and resistance (the Coulomb
    rule on their sums, as :func:`rrscore.bodies.rigid_net`: ``force`` becomes each
    vehicle's net force), and the coupler forces into ``cf``: what the vehicles ahead of
    each coupling need beyond their own net force (as
    :func:`rrscore.bodies.rigid_coupler_forces`). ``v``: the lead's speed."""
    n = force.size
    total_force = total_resist = total_mass = 0.0
    for i in range(n):
        total_force += force[i]
        total_resist += resist[i]
        total_mass += held[4, i]
    share = coulomb_share(direction[0] if frozen[0] else v, total_force, total_resist)
    total_net = 0.0
    for i in range(n):
        force[i] -= resist[i] * share  # now each vehicle's net force
        total_net += force[i]
    a = total_net / total_mass
    carried = 0.0
    for i in range(n - 1):
        carried += force[i] - held[4, i] * a
        cf[i] = carried
    return a


@njit(cache=True, error_model="numpy", _nrt=False)
def body_rates(y, cf, dy, idx, knots, tables, static, held, frozen, direction, na,
               rigid, work, rates=ALL_RATES):  # pragma: no cover (compiled)
    """Derivatives of the bodies and the energy account, in place, and of the ``na``
    wheelsets (all rolling: zero, see :func:`rrscore.wheelsets.fill_rolling`); of these
    only those ``rates`` says (:data:`ALL_RATES` by default).

    ``y``, ``dy``: the whole state and its derivative. ``idx``: the first indices of
    the blocks ``body.x``, ``body.v``, ``wheel.phi``, ``wheel.omega``, the six energy
    flows per vehicle (drive, brake, resistance, gravity, air, slip) and the coupler
    work, then whether any vehicle has starting resistance and air drag. ``cf``:
    coupler forces, tension +. ``knots``, ``tables``: the route's cumulative elevation
    and curve resistance, then their slopes (:func:`slopes`). ``static`` rows per
    vehicle: half length, weight, weight in kN, ``c1``, ``c2``, starting force and
    speed, ``rho Cd A / 2``, wind, then the knot intervals each one's ends stand in,
    cached and found again here where they left them (:func:`_end_piece`, from row
    :data:`ROUTE_ROWS`). ``held`` rows
    (see :meth:`rrscore.bodies.Bodies.set_held`): force, resistance with ``c0``,
    resistance alone, inverse effective mass, effective mass. ``rigid``: the train moves as one body
    (see :mod:`rrscore.bodies`; ``cf`` is then zero). ``work``: room for
    :data:`BODY_WORK_ROWS` rows of a value per vehicle, the pass's intermediates. Sums are
    taken in the order the components take them, so the result is theirs to rounding.

    It allocates nothing, so it is compiled without numba's reference counting
    (``_nrt=False``): a call then takes no atomic increment and decrement of each of its
    array arguments. A step calls it six times (its stages after the first).
    """
    # Three passes, over blocks of vehicles (BODY_BLOCK): the knot intervals of each
    # vehicle's ends (those it stood in before, as a rule: range checks, no walk), the
    # route under it in a loop without branches, then the forces in plain loops the
    # compiler vectorises. The arithmetic of each entry is as one pass would do it, in
    # the same order. (error_model numpy: no division here can be by zero, and the
    # checks would keep the loops scalar.) Every loop runs over views from 0: an index
    # such as ``sx + i`` might be negative to numba, whose wraparound check then keeps
    # the loop scalar (five times slower).
    sv, sphi, somega, coupler_energy = idx[1], idx[2], idx[3], idx[5]
    n = static.shape[1]
    block = n if rigid else BODY_BLOCK
    b0 = 0
    while b0 < n:
        k = min(block, n - b0)
        _body_block(b0, k, y, cf, dy, idx, knots, tables, static, held, frozen, direction,
                    rigid, rates, work)
        b0 += k
    m = max(n - 1, 0)
    v = y[sv:sv + n]
    if rigid:
        # as rrscore.bodies.rigid_net and rigid_coupler_forces: the couplers carry what
        # the one acceleration takes (their work is nothing while the speeds are equal);
        # the Coulomb rule applies to the sums (the forces and resistances of every
        # vehicle in work's rows 2 and 3: one block)
        a = _rigid_carry(work[2, :n], work[3, :n], held, frozen, direction, y[sv], cf)
        vdot = dy[sv:sv + n]
        for i in range(n):
            vdot[i] = a
    if rates != MOTION_RATES:
        e_coupler, v_ahead, v_behind = (dy[coupler_energy:coupler_energy + m], v[:m],
                                        v[1:1 + m])
        for i in range(m):
            e_coupler[i] = cf[i] * (v_ahead[i] - v_behind[i])
    # every axle rolls here: its spin and angle are read off the body after each step
    # (rrscore.wheelsets.fill_rolling), not integrated
    dy[sphi:sphi + na] = 0.0
    dy[somega:somega + na] = 0.0


@njit(cache=True, error_model="numpy", _nrt=False)
def rigid_pass_forces(x_lead, v, rel, idx, knots, tables, static, held, frozen,
                      direction, cf, work):  # pragma: no cover (compiled)
    """The coupler forces of a rigid train (into ``cf``) with its lead at ``x_lead``,
    every vehicle at ``rel`` from it and at speed ``v``: :func:`body_rates`' rigid pass
    with no coupler deflecting, the same arithmetic in the same order (so the same forces
    to the bit), without the rates it writes. The one body's loop takes them at every
    step's end (:mod:`rrscore.rigidloop`). ``work``: :data:`BODY_WORK_ROWS` rows."""
    any_starting, use_air = idx[6], idx[7]
    n = rel.size
    grade, curve, force, resist, xs = (work[0, :n], work[1, :n], work[2, :n], work[3, :n],
                                       work[4, :n])
    for i in range(n):
        xs[i] = x_lead + rel[i]
    _route_under(xs, knots, tables, static, grade, curve, 0)
    weight, weight_kn, c1, c2 = static[1], static[2], static[3], static[4]
    force_held, resist_c0 = held[0], held[1]
    s = abs(v)
    for i in range(n):
        g = grade[i]
        gravity = -weight[i] * g / np.sqrt(1.0 + g * g)
        force[i] = 0.0 + (force_held[i] + gravity)
        r = resist_c0[i] + s * (c1[i] + c2[i] * s)
        resist[i] = r + curve[i] * weight_kn[i]
    if any_starting:
        start_force, start_speed = static[5], static[6]
        for i in range(n):
            if s < start_speed[i]:
                resist[i] += start_force[i] * (1.0 - s / start_speed[i])
    if use_air:
        drag, wind = static[7], static[8]
        for i in range(n):
            u = v - wind[i]
            force[i] += -drag[i] * u * abs(u)
    _rigid_carry(force, resist, held, frozen, direction, v, cf)


class CompiledBodies:
    """Binds :func:`body_rates` to one train's dynamics; :meth:`applies` says when."""

    def __init__(self, dyn: TrainDynamics) -> None:
        self.dyn = dyn
        b, tr, route = dyn.bodies, dyn.train, dyn.route
        #: Static part of the condition: no extra lookups of the route.
        self.possible = not b._extra_lookup
        e = dyn.energy
        starts = [e.slices[f].start for f in ("drive", "brake", "resistance", "gravity",
                                              "air", "slip")]
        if starts != [starts[0] + k * dyn.n for k in range(6)]:
            self.possible = False  # the flows are laid out one after the other
        self._idx = np.array([dyn.sx.start, dyn.sv.start, dyn.sphi.start, dyn.somega.start,
                              starts[0], e.coupler.start, b._any_starting, b._use_air],
                             dtype=np.int64)
        both = route._both
        self._knots = np.ascontiguousarray(route._knots, dtype=float)
        self._tables = np.ascontiguousarray(np.stack([
            both.real, both.imag, slopes(self._knots, both.real),
            slopes(self._knots, both.imag)]))
        self._static = np.ascontiguousarray(np.stack([
            tr.half_length, tr.weight, b._weight_kn, tr.c1, tr.c2, tr.start0, tr.start_speed,
            b._half_rho_cd_a, np.full(dyn.n, float(b.wind)), *route_cache(dyn.n)]),
            dtype=float)
        self._work = np.empty((BODY_WORK_ROWS, dyn.n))  # body_rates' intermediates
        #: Each axle's vehicle and inverse radius, and every axle (all roll where the
        #: compiled pass applies): what :func:`rrscore.wheelsets.fill_rolling` reads.
        self._axles = (np.ascontiguousarray(tr.axle_vehicle, dtype=np.int64),
                       np.ascontiguousarray(dyn.wheelsets._inv_radius, dtype=float),
                       np.arange(dyn.na, dtype=np.int64))

    def applies(self) -> bool:
        """Whether the compiled pass stands for the components now: the static condition,
        and every axle rolling (a mode that changes only at events)."""
        return self.possible and not self.dyn.wheelsets.slipping.size

    def rates(self, y: np.ndarray, cf: np.ndarray, dy: np.ndarray) -> None:
        """Write the bodies', wheelsets' and energy account's derivatives into ``dy``."""
        b = self.dyn.bodies
        body_rates(y, cf, dy, self._idx, self._knots, self._tables, self._static, b.held,
                   b.frozen, b.direction, self.dyn.na, b.rigid, self._work)


@njit(cache=True, _nrt=True)  # (explicit: called from code compiled without)
def _state_kernel(kern, b, t, v, s, inputs, ds):  # pragma: no cover (compiled)
    """Batch ``b``'s compiled ``state_rates``. Kept with numba's reference counting:
    through their function types the kernels run ten times as slowly without; and
    only this, so that the views the caller takes are not counted (113 → 84 ns a call
    of :func:`plugin_state_rates` for four main reservoirs)."""
    kern.states[b](t, v, s, inputs, ds)


@njit(cache=True, _nrt=False)
def plugin_state_rates(t, y, dy, kern, sv, vs_lay, vs_index, vs_sign, inputs,
                       v_row):  # pragma: no cover (compiled)
    """The vehicle plugins' compiled ``state_rates``, batch by batch, into ``dy``: batch
    ``b``'s vehicles from ``vs_lay[b, 0]`` in ``vs_index`` and ``vs_sign`` (each one's
    speed ``y[sv + vs_index[...]]`` times its orientation), ``vs_lay[b, 1]`` of them, their
    ``vs_lay[b, 3]`` states each from ``y[vs_lay[b, 2]]`` (one row per state); ``kern``:
    the step loop's kernels (:mod:`rrscore.steploop`), ``v_row``: room for a batch's
    speeds. ``y`` and ``dy`` C-contiguous: their slices are then too, as the kernels'
    signature (:data:`STATE_RATES`) wants them."""
    for b in range(vs_lay.shape[0]):
        first, count, row0, k = vs_lay[b, 0], vs_lay[b, 1], vs_lay[b, 2], vs_lay[b, 3]
        v = v_row[:count]
        for j in range(count):
            v[j] = y[sv + vs_index[first + j]] * vs_sign[first + j]
        _state_kernel(kern, b, t, v, y[row0:row0 + k * count].reshape((k, count)),
                      inputs[b], dy[row0:row0 + k * count].reshape((k, count)))


#: The signature of ``VehicleModel.state_rates``: ``(t, v, s, inputs, ds)``, every array
#: C-contiguous (an exact match is dispatched several microseconds faster than a cast).
STATE_RATES = types.void(types.float64, types.float64[::1], types.float64[:, ::1],
                         types.float64[:, ::1], types.float64[:, ::1])


class Kernel:
    """How a plugin's function runs: :attr:`call` is the numba-compiled function, or,
    where numba could not compile it, the function as written, with :attr:`reason`
    saying why. Shared, never copied: a run's snapshot keeps it as is."""

    __slots__ = ("call", "reason")

    def __init__(self, call: Callable[..., Any], reason: str | None) -> None:
        self.call, self.reason = call, reason

    @property
    def compiled(self) -> bool:
        """Whether :attr:`call` is the compiled function."""
        return self.reason is None

    def __deepcopy__(self, memo: dict) -> Kernel:
        return self


_KERNELS: dict[tuple[Any, Any], Kernel] = {}


def compile_kernel(function: Callable[..., Any], signature: Any = STATE_RATES) -> Kernel:
    """``function`` compiled by numba for ``signature`` (once per process; on disk across
    them where numba can cache it), or, where numba cannot compile it, the function as
    written with the reason. Errors follow numpy's rules in both (a division by zero
    gives inf, not an exception), so the two paths compute the same."""
    key = (function, signature)
    if key not in _KERNELS:
        reason = None
        for cache in (True, False):  # a function without a source file cannot be cached
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    _KERNELS[key] = Kernel(njit(signature, cache=cache,
                                                error_model="numpy")(function), None)
                return _KERNELS[key]
            except Exception as exc:  # numba's typing errors, and whatever else it raises
                lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
                reason = f"{type(exc).__name__}: {lines[0] if lines else ''}"
        _KERNELS[key] = Kernel(function, reason)
    return _KERNELS[key]
