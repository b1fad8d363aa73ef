"""A rigid train as one body in the compiled step loop.

A rigid train (``dynamics = "rigid"``, :mod:`rrscore.bodies`) takes one speed, and each
vehicle stays where it stood relative to the lead. Its motion is then a function of two
numbers, the lead's position and the speed, and of the inputs held over the control
step. The sums over the vehicles of gravity and of curve resistance, each vehicle where
it stands, depend on the lead's position alone: :class:`RigidBody` works them out once,
at every lead position where a vehicle end meets a knot of the route. Between two such
positions the curve resistance's sum is linear in the lead's position and the gravity
sum is linear but for the grade's cosine (``g / sqrt(1 + g^2)`` of the vehicles standing
across a change of grade: within 1e-9 of the train's weight on the shipped routes), so
the table is read linearly.

The loop (:mod:`rrscore.rigidloop`) integrates a small state with the solver's own
steps and error control (:func:`rigid_rates`): the lead's position and speed, the
integrals the energy account needs (the distance run, the integrals of the speed's
square and cube, of the air drag's power per unit of drag coefficient and of the
starting resistance's power per group of vehicles sharing a starting speed), counted
from the start of a call of the loop, and the vehicle plugins' states. The whole state
the multi-body layout holds is formed from it only where it is read
(:func:`body_state`): each vehicle where it stands relative to the lead, its wheels
rolling, and its energy flows: the train's integrals times its own coefficients, the
work of its held inputs over the stretches they held (the loop logs each change, and
:func:`replay_to` closes each stretch), and its work against gravity and curve
resistance, which depend on where it stands, the exact integral along its path
(:func:`path_work`: piecewise linear grade and curve resistance between knots). The
Python path, which integrates every vehicle's state, stays the reference: the two agree
to the solver's tolerance.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from .compiled import _interval, coulomb_share, plugin_state_rates
from .state import entry_ranges
from .wheelsets import fill_rolling

if TYPE_CHECKING:
    from .dynamics import TrainDynamics

#: Entries of the small state before the starting-resistance groups: the lead's position
#: and speed, the distance run, the integrals of speed squared and cubed, and of the air
#: drag's power per unit of drag coefficient.
Z_X, Z_V, Z_D, Z_S2, Z_S3, Z_AIR = range(6)
Z_FIXED = 6
# Entries of the float constants: the sums of c1 and c2 and of the drag coefficients,
# the wind, then the held sums the step works out (force, resistance with c0, mass)
C_C1, C_C2, C_DRAG, C_WIND, C_FORCE, C_RESIST, C_MASS = range(7)
CONST_SIZE = 7
# Entries of the int constants: the table's cursor, the small state's size, the
# starting-resistance groups, where the plugins' states start in it, whether air drag
# applies
I_CURSOR, I_SIZE, I_GROUPS, I_STATES, I_AIR = range(5)
#: Lead positions in the table (vehicle ends times knots) beyond which the loop keeps the
#: multi-body layout for a rigid train (its table would take more memory than it saves).
MAX_BREAKPOINTS = 2_000_000


@njit(cache=True, _nrt=False)
def _cumulative_from(xq, knots, tables, guess):  # pragma: no cover (compiled)
    """The route's cumulative elevation and curve resistance at ``xq``, as
    :func:`rrscore.compiled._end_piece` reads them (linear between knots, constant beyond
    the ends), the knot interval walked to from ``guess``; and the interval (from 0)."""
    last = knots.size - 1
    j = _interval(xq, knots, guess)
    if 0 <= j < last:
        return (tables[2, j] * (xq - knots[j]) + tables[0, j],
                tables[3, j] * (xq - knots[j]) + tables[1, j], j)
    end = 0 if j < 0 else last
    return tables[0, end], tables[1, end], max(j, 0)


@njit(cache=True, _nrt=False)
def _cumulative(xq, knots, tables):  # pragma: no cover (compiled)
    """:func:`_cumulative_from` with the interval found by bisection."""
    e, c, _ = _cumulative_from(xq, knots, tables,
                               np.searchsorted(knots, xq, side="right") - 1)
    return e, c


@njit(cache=True, error_model="numpy", _nrt=False)
def _sums_at(lead, rel, half, weight, weight_kn, knots, tables, g_sum,
             c_sum):  # pragma: no cover (compiled)
    """Gravity force and curve resistance summed over the vehicles into ``g_sum`` and
    ``c_sum``, with the lead at each of ``lead`` (ascending; ``rel``: each vehicle's
    position less the lead's), as the body pass takes each vehicle's: the mean grade and
    curve resistance under it (``tables``: the route's cumulative elevation and curve
    resistance and their slopes, as :func:`rrscore.compiled.body_rates` reads them). Each
    vehicle's ends walk the knots as the lead moves on."""
    for k in range(lead.size):
        g_sum[k] = 0.0
        c_sum[k] = 0.0
    for i in range(rel.size):
        h = half[i]
        jf = jr = 0
        for k in range(lead.size):
            x = lead[k] + rel[i]
            ef, cf, jf = _cumulative_from(x + h, knots, tables, jf)
            er, cr, jr = _cumulative_from(x - h, knots, tables, jr)
            grade = (ef - er) / (2.0 * h)
            g_sum[k] += -weight[i] * grade / np.sqrt(1.0 + grade * grade)
            c_sum[k] += (cf - cr) / (2.0 * h) * weight_kn[i]


def rigid_table(rel: np.ndarray, half: np.ndarray, weight: np.ndarray,
                weight_kn: np.ndarray, knots: np.ndarray,
                tables: np.ndarray) -> np.ndarray | None:
    """The train's gravity and curve-resistance sums as functions of the lead's position:
    rows lead position, gravity sum, its slope, curve-resistance sum, its slope (zero past
    the last), at every lead position where a vehicle end meets a knot (``tables``: the
    route's, as the body pass reads them). None where there would be more than
    :data:`MAX_BREAKPOINTS`."""
    if knots.size * rel.size * 2 > MAX_BREAKPOINTS:
        return None
    ends = np.concatenate([rel + half, rel - half])
    lead = np.unique((knots[:, None] - ends[None, :]).ravel())
    tab = np.zeros((5, lead.size))
    tab[0] = lead
    _sums_at(lead, np.ascontiguousarray(rel, dtype=float), np.asarray(half, dtype=float),
             np.asarray(weight, dtype=float), np.asarray(weight_kn, dtype=float), knots,
             tables, tab[1], tab[3])
    g_sum, c_sum = tab[1], tab[3]
    dx = np.diff(lead)
    tab[2, :-1] = np.diff(g_sum) / dx
    tab[4, :-1] = np.diff(c_sum) / dx
    return np.ascontiguousarray(tab)


class RigidBody:
    """What the loop needs to integrate a rigid train as one body: the table of the route's
    sums (:func:`rigid_table`), the sums of the speed terms, the starting-resistance
    groups, the small state's layout and tolerances, the entries of the whole state a
    step leaves as they are. :meth:`build` returns None where the train does not fit (the
    loop then keeps the multi-body layout)."""

    def __init__(self, table: np.ndarray, consts: np.ndarray, groups: np.ndarray,
                 ints: np.ndarray, zmap: np.ndarray, zlay: np.ndarray, vgroup: np.ndarray,
                 tol: np.ndarray, kept: np.ndarray, rel: np.ndarray) -> None:
        self.table, self.consts, self.groups, self.ints = table, consts, groups, ints
        #: Where the plugins' states are in the whole state, entry by entry of the small
        #: one's; the loop's layout of their batches with each block's start in the small
        #: state; zeros, one per vehicle with states (each one's speed is the body's).
        self.zmap, self.zlay = zmap, zlay
        self.zindex = np.zeros(int(zlay[:, 1].sum()), dtype=np.int64)
        self.vgroup, self.tol, self.kept = vgroup, tol, kept
        #: Each vehicle's position less the lead's, as the table was made for.
        self.rel = rel

    def fits(self, y: np.ndarray, sx: slice) -> bool:
        """Whether the vehicles stand where the table was made for (to a micrometre)."""
        return bool(_fits(y, sx.start, self.rel))

    @classmethod
    def build(cls, dyn: TrainDynamics, y: np.ndarray, atol: np.ndarray, rtol: np.ndarray,
              vs_lay: np.ndarray) -> RigidBody | None:
        """The one body of ``dyn``'s rigid train with its vehicles where they stand in the
        state ``y`` (tolerances ``atol``, ``rtol`` per entry; ``vs_lay``: the loop's layout
        of the plugins' states, see :func:`~rrscore.compiled.plugin_state_rates`), or
        None where it does not fit: not rigid, an air brake (its states run on their own
        integration), positions or speeds under tolerances that differ from vehicle to
        vehicle, a table too large."""
        if not dyn.rigid or dyn.airbrake is not None:
            return None
        tr, b = dyn.train, dyn.bodies
        x = y[dyn.sx]
        for sl in (dyn.sx, dyn.sv):
            if np.ptp(atol[sl]) != 0.0 or np.ptp(rtol[sl]) != 0.0:
                return None
        rel = x - x[0]
        bodies = dyn.compiled  # the route's tables as the body pass reads them
        table = rigid_table(rel, tr.half_length, tr.weight, b._weight_kn, bodies._knots,
                            bodies._tables)
        if table is None:
            return None
        start_speed = np.asarray(tr.start_speed, dtype=float)
        start_force = np.asarray(tr.start0, dtype=float)
        starting = (start_force != 0.0) & (start_speed > 0.0)
        speeds = np.unique(start_speed[starting]) if b._any_starting else np.zeros(0)
        vgroup = np.full(dyn.n, -1, dtype=np.int64)
        groups = np.zeros((2, speeds.size))
        for k, s0 in enumerate(speeds):
            members = starting & (start_speed == s0)
            vgroup[members] = k
            groups[0, k], groups[1, k] = s0, start_force[members].sum()
        first = Z_FIXED + speeds.size
        sizes = vs_lay[:, 1] * vs_lay[:, 3]
        zmap = np.concatenate([np.arange(r[2], r[2] + k, dtype=np.int64)
                               for r, k in zip(vs_lay, sizes, strict=True)]
                              or [np.zeros(0, dtype=np.int64)])
        zlay = np.array(vs_lay, dtype=np.int64).reshape(-1, 4)
        zlay[:, 2] = first + np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        size = first + zmap.size
        tol = np.full((2, size), np.inf)
        tol[1] = 0.0
        tol[:, Z_X] = atol[dyn.sx.start], rtol[dyn.sx.start]
        tol[:, Z_V] = atol[dyn.sv.start], rtol[dyn.sv.start]
        tol[0, first:], tol[1, first:] = atol[zmap], rtol[zmap]
        # what a step leaves as it is: all but the bodies, the energy flows, the plugins'
        # states and the wheels (read off the bodies)
        written = np.zeros(y.size, dtype=bool)
        written[dyn.sx] = written[dyn.sv] = True
        written[dyn.sphi] = written[dyn.somega] = True
        for sl in dyn.energy.slices.values():
            written[sl] = True
        written[zmap] = True
        kept = entry_ranges(~written)
        consts = np.zeros(CONST_SIZE)
        consts[C_C1], consts[C_C2] = float(np.sum(tr.c1)), float(np.sum(tr.c2))
        consts[C_DRAG] = float(np.sum(b._half_rho_cd_a))
        consts[C_WIND] = float(b.wind)
        ints = np.array([0, size, speeds.size, first, int(b._use_air)], dtype=np.int64)
        return cls(table, consts, groups, ints, zmap, zlay, vgroup, tol, kept, rel)


@njit(cache=True, _nrt=False)
def _fits(y, sx, rel):  # pragma: no cover (compiled)
    """:meth:`RigidBody.fits` (a drive's loop asks at every call: numpy's temporaries
    took ten times as long)."""
    x = y[sx:sx + rel.size]
    ok = True
    for i in range(rel.size):
        ok = ok and abs((x[i] - x[0]) - rel[i]) <= 1e-6
    return ok


@njit(cache=True, _nrt=False)
def equal_speeds(y, sv, n):  # pragma: no cover (compiled)
    """Whether the ``n`` speeds from ``y[sv]`` are all the same."""
    v = y[sv:sv + n]
    same = True
    for i in range(n):
        same = same and v[i] == v[0]
    return same


@njit(cache=True, _nrt=False)
def _table_at(x, tab, ints):  # pragma: no cover (compiled)
    """The gravity and curve-resistance sums with the lead at ``x``: linear between the
    table's positions, constant beyond its ends (the interval walked to from the last)."""
    last = tab.shape[1] - 1
    if x <= tab[0, 0]:
        return tab[1, 0], tab[3, 0]
    if x >= tab[0, last]:
        return tab[1, last], tab[3, last]
    j = min(max(ints[I_CURSOR], 0), last - 1)
    while tab[0, j] > x:
        j -= 1
    while tab[0, j + 1] <= x:
        j += 1
    ints[I_CURSOR] = j
    d = x - tab[0, j]
    return tab[1, j] + tab[2, j] * d, tab[3, j] + tab[4, j] * d


@njit(cache=True, _nrt=False)
def rigid_rates(t, z, dz, tab, consts, groups, ints, frozen, direction, kern, zlay, zindex,
                vs_sign, inputs, v_row):  # pragma: no cover (compiled)
    """Derivative of the small state (see the module): the body pass of a rigid train
    (:func:`rrscore.compiled.body_rates`) on the sums, the Coulomb rule applied to them;
    the held sums in ``consts`` (set for the step). The plugins' states by
    :func:`~rrscore.compiled.plugin_state_rates` on the small state: ``zlay``, the
    loop's layout of their batches with each block's start in it, and ``zindex``, zeros
    (every vehicle's speed is the one at ``Z_V``)."""
    x, v = z[Z_X], z[Z_V]
    s = abs(v)
    g_sum, c_sum = _table_at(x, tab, ints)
    force = consts[C_FORCE] + g_sum
    air = 0.0
    if ints[I_AIR]:
        u = v - consts[C_WIND]
        air = -u * abs(u)
        force += consts[C_DRAG] * air
    resist = consts[C_RESIST] + s * (consts[C_C1] + consts[C_C2] * s) + c_sum
    for k in range(ints[I_GROUPS]):
        s0 = groups[0, k]
        if s < s0:
            share0 = 1.0 - s / s0
            resist += groups[1, k] * share0
            dz[Z_FIXED + k] = share0 * s
        else:
            dz[Z_FIXED + k] = 0.0
    share = coulomb_share(direction[0] if frozen[0] else v, force, resist)
    dz[Z_X] = v
    dz[Z_V] = (force - resist * share) / consts[C_MASS]
    dz[Z_D] = s
    dz[Z_S2] = s * s
    dz[Z_S3] = s * s * s
    dz[Z_AIR] = air * v
    if zlay.shape[0]:
        plugin_state_rates(t, z, dz, kern, Z_V, zlay, zindex, vs_sign, inputs, v_row)


@njit(cache=True, _nrt=False)
def held_sums(held, consts):  # pragma: no cover (compiled)
    """The held inputs summed over the vehicles into ``consts``: force, resistance with
    ``c0``, effective mass."""
    f = r = m = 0.0
    for i in range(held.shape[1]):
        f += held[0, i]
        r += held[1, i]
        m += held[4, i]
    consts[C_FORCE], consts[C_RESIST], consts[C_MASS] = f, r, m


@njit(cache=True, _nrt=False)
def _grade_curve(x, half, knots, tables):  # pragma: no cover (compiled)
    """Mean grade and curve resistance under a vehicle at ``x`` of half length ``half``."""
    ef, cf = _cumulative(x + half, knots, tables)
    er, cr = _cumulative(x - half, knots, tables)
    return (ef - er) / (2.0 * half), (cf - cr) / (2.0 * half)


@njit(cache=True, error_model="numpy", _nrt=False)
def _piece(dx, g0, g1, c0, c1):  # pragma: no cover (compiled)
    """Over a stretch ``dx`` where grade and curve resistance run linearly from ``g0`` to
    ``g1`` and ``c0`` to ``c1``: the integral of ``g / sqrt(1 + g^2)`` (exact: its
    antiderivative is ``sqrt(1 + g^2)`` over the grade's slope, written without the
    cancellation) and of the curve resistance."""
    return (dx * (g0 + g1) / (np.sqrt(1.0 + g0 * g0) + np.sqrt(1.0 + g1 * g1)),
            dx * 0.5 * (c0 + c1))


@njit(cache=True, error_model="numpy", _nrt=False)
def path_work(x0, x1, half, knots, tables):  # pragma: no cover (compiled)
    """Along a vehicle's path from ``x0`` to ``x1`` (half length ``half``): the integral
    of ``g / sqrt(1 + g^2)`` over position (signed: the gravity force's work is minus the
    weight times it) and of the curve resistance over the distance (unsigned), split
    where either end of the vehicle meets a knot, so that each piece is exact."""
    lo, hi = min(x0, x1), max(x0, x1)
    sign = 1.0 if x1 >= x0 else -1.0
    g_int = c_int = 0.0
    p = lo
    gp, cp = _grade_curve(p, half, knots, tables)
    for _ in range(2 * knots.size + 2):
        if not p < hi:
            break
        jf = np.searchsorted(knots, p + half, side="right")
        jr = np.searchsorted(knots, p - half, side="right")
        q = hi
        if jf < knots.size:
            q = min(q, knots[jf] - half)
        if jr < knots.size:
            q = min(q, knots[jr] + half)
        if not q > p:  # (rounding at a knot: the rest in one piece)
            q = hi
        gq, cq = _grade_curve(q, half, knots, tables)
        dg, dc = _piece(q - p, gp, gq, cp, cq)
        g_int += dg
        c_int += dc
        p, gp, cp = q, gq, cq
    return sign * g_int, c_int


# Columns of the one body's log (rrscore.rigidloop): the row of the small state from which
# it holds; the vehicle whose held inputs changed there (-1: the motion turned there, the
# lead's position being the row's) and its held force, resistance with ``c0`` and
# resistance alone from then on.
L_ROW, L_VEHICLE, L_FORCE, L_RESIST_C0, L_RESIST = range(5)
LOG_COLUMNS = 5
# Rows of the replay's array (:func:`replay_to`), a value per vehicle each: its drive,
# brake and held-resistance work up to its last change of held inputs; the displacement
# and distance run there; its held force, resistance with ``c0`` and resistance alone
# since; its gravity integral and curve integral up to the motion's last turn.
(R_DRIVE, R_BRAKE, R_RESIST, R_X, R_D, R_FORCE, R_RESIST_C0, R_RESIST_HELD, R_GRAVITY,
 R_CURVE) = range(10)
REPLAY_ROWS = 10
# Entries of the replay's scalars: the log's entries applied, the lead's position at the
# motion's last turn (or the call's start), the row replayed to.
S_APPLIED, S_TURN, S_ROW = range(3)


@njit(cache=True, _nrt=False)
def replay_from_start(rp, rs, held0, x0):  # pragma: no cover (compiled)
    """The replay's arrays (:data:`REPLAY_ROWS` rows of a value per vehicle; scalars
    :data:`S_APPLIED`, :data:`S_TURN`, :data:`S_ROW`) as at a call's start: nothing
    accumulated nor applied, the held inputs ``held0`` (rows force, resistance with
    ``c0``, resistance alone: the bodies' held rows 0 to 2), the lead at ``x0``."""
    for r in range(rp.shape[0]):
        for i in range(rp.shape[1]):
            rp[r, i] = held0[r - R_FORCE, i] if R_FORCE <= r <= R_RESIST_HELD else 0.0
    rs[S_APPLIED] = 0.0
    rs[S_TURN] = x0
    rs[S_ROW] = -1.0


@njit(cache=True, error_model="numpy", _nrt=False)
def replay_to(j, Z, log, nlog, rp, rs, rel, half, knots, tables,
              x0):  # pragma: no cover (compiled)
    """The one body's log (:data:`LOG_COLUMNS`) applied in order up to the entries of row
    ``j`` of the small state ``Z`` (rows from a call's start at lead position ``x0``):
    each change of a vehicle's held inputs closes the work its last ones did over the
    displacement and distance run since; each turn of the motion closes every vehicle's
    gravity and curve integral along its path since the last (:func:`path_work`, which
    takes a path one way). ``rp``, ``rs``: the replay's arrays (:func:`replay_from_start`),
    updated. Rows replay forward only: one before the last replayed needs a new start."""
    p = int(rs[S_APPLIED])
    while p < nlog and log[p, L_ROW] <= j:
        z = Z[int(log[p, L_ROW])]
        i = int(log[p, L_VEHICLE])
        if i >= 0:
            dx = (z[Z_X] - x0) - rp[R_X, i]
            dd = z[Z_D] - rp[R_D, i]
            rp[R_DRIVE, i] += rp[R_FORCE, i] * dx
            rp[R_BRAKE, i] += rp[R_RESIST_HELD, i] * dd
            rp[R_RESIST, i] += (rp[R_RESIST_C0, i] - rp[R_RESIST_HELD, i]) * dd
            rp[R_X, i] = z[Z_X] - x0
            rp[R_D, i] = z[Z_D]
            rp[R_FORCE, i] = log[p, L_FORCE]
            rp[R_RESIST_C0, i] = log[p, L_RESIST_C0]
            rp[R_RESIST_HELD, i] = log[p, L_RESIST]
        else:
            a, b = rs[S_TURN], z[Z_X]
            for k in range(rel.size):
                g, c = path_work(a + rel[k], b + rel[k], half[k], knots, tables)
                rp[R_GRAVITY, k] += g
                rp[R_CURVE, k] += c
            rs[S_TURN] = b
        p += 1
    rs[S_APPLIED] = p
    rs[S_ROW] = j


@njit(cache=True, _nrt=False)
def place_vehicles(z, y, rel, sx, sv, zmap, first):  # pragma: no cover (compiled)
    """The vehicles' positions and speeds (each at ``rel`` from the lead, at the one
    speed) and the plugins' states (from entry ``first`` on) of the small state ``z``
    into the whole state ``y``."""
    xl, v = z[Z_X], z[Z_V]
    x, vs = y[sx:sx + rel.size], y[sv:sv + rel.size]
    for i in range(rel.size):
        x[i] = xl + rel[i]
        vs[i] = v
    for q in range(zmap.size):
        y[zmap[q]] = z[first + q]


@njit(cache=True, error_model="numpy", _nrt=False)
def body_state(z, y0, y, rp, rs, rel, idx, knots, tables, static, ints, vgroup, zmap, kept,
               axle_vehicle, inv_radius, axles):  # pragma: no cover (compiled)
    """The whole state the multi-body layout holds, into ``y``, from the small state ``z``
    (its integrals counted from a call's start at the whole state ``y0``) with the log
    replayed up to its row (:func:`replay_to`): each vehicle where it stands relative to
    the lead (``rel``) at the one speed, its wheels rolling (:func:`rrscore.wheelsets.
    fill_rolling`), its energy flows (the work of its held inputs as replayed, the train's
    integrals times its own coefficients, its gravity and curve work the exact integral
    along its path), the plugins' states; the entries in the ranges ``kept`` (the
    couplers' states and work: nothing deflects) as at the start."""
    sx, sv, sphi, somega, energy = idx[0], idx[1], idx[2], idx[3], idx[4]
    n = rel.size
    xl = z[Z_X]
    place_vehicles(z, y, rel, sx, sv, zmap, ints[I_STATES])
    fill_rolling(y0, y, axles, axle_vehicle, inv_radius, sx, sv, sphi, somega)
    half, weight, weight_kn, c1, c2, start_force, drag = (static[0], static[1], static[2],
                                                          static[3], static[4], static[5],
                                                          static[7])
    dx, dist = xl - y0[sx], z[Z_D]
    e0 = y0[energy:energy + 6 * n]
    e1 = y[energy:energy + 6 * n]
    use_air = ints[I_AIR] != 0
    turn = rs[S_TURN]
    for i in range(n):
        g_int, c_int = path_work(turn + rel[i], xl + rel[i], half[i], knots, tables)
        k = vgroup[i]
        start = start_force[i] * z[Z_FIXED + k] if k >= 0 else 0.0
        dd = dist - rp[R_D, i]
        e1[i] = e0[i] + rp[R_DRIVE, i] + rp[R_FORCE, i] * (dx - rp[R_X, i])
        e1[n + i] = e0[n + i] + rp[R_BRAKE, i] + rp[R_RESIST_HELD, i] * dd
        e1[2 * n + i] = e0[2 * n + i] + (rp[R_RESIST, i]
                                         + (rp[R_RESIST_C0, i] - rp[R_RESIST_HELD, i]) * dd
                                         + c1[i] * z[Z_S2] + c2[i] * z[Z_S3]
                                         + weight_kn[i] * (rp[R_CURVE, i] + c_int) + start)
        e1[3 * n + i] = e0[3 * n + i] - weight[i] * (rp[R_GRAVITY, i] + g_int)
        e1[4 * n + i] = e0[4 * n + i] + (drag[i] * z[Z_AIR] if use_air else 0.0)
        e1[5 * n + i] = e0[5 * n + i]  # slip: every axle rolls
    for r in range(kept.shape[0]):
        lo, hi = kept[r, 0], kept[r, 1]
        a0, a1 = y0[lo:hi], y[lo:hi]
        for j in range(hi - lo):
            a1[j] = a0[j]
