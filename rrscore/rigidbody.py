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

The loop (:func:`rrscore.steploop._rigid_step`) integrates a small state with the
solver's own steps and error control (:func:`rigid_rates`): the lead's position and
speed, the integrals the energy account needs (the distance run, the integrals of the
speed's square and cube, of the air drag's power per unit of drag coefficient and of
the starting resistance's power per group of vehicles sharing a starting speed) and the
vehicle plugins' states. After each step :func:`rigid_fill` writes the whole state the
multi-body layout holds, so that the events, the control steps, the samples and every
output read it as before. Each vehicle's energy flows are the train's integrals times
its own coefficients, and its work against gravity and curve resistance, which depend
on where it stands, the exact integral along its path (:func:`path_work`: piecewise
linear grade and curve resistance between knots). The Python path, which integrates
every vehicle's state, stays the reference: the two agree to the solver's tolerance.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from .compiled import ROUTE_ROWS, _interval, coulomb_share, plugin_state_rates
from .state import entry_ranges

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
INT_SIZE = 5
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
        #: Room for the small state's stages (rows 0 to 6), its start, a stage's state,
        #: its end (rows 7 to 9).
        self.work = np.zeros((10, int(ints[I_SIZE])))

    def args(self) -> tuple[np.ndarray, ...]:
        """The arrays the loop takes, in order."""
        return (self.table, self.consts, self.groups, self.ints, self.zmap, self.zlay,
                self.zindex, self.vgroup, self.tol, self.kept, self.work)

    @staticmethod
    def none_args() -> tuple[np.ndarray | None, ...]:
        """What the loop takes for a train it does not take as one body: None for the table
        (numba then compiles the loop without the one body's code), empty arrays of the
        same types for the rest."""
        return (None, np.zeros(CONST_SIZE), np.zeros((2, 0)),
                np.zeros(INT_SIZE, dtype=np.int64), np.zeros(0, dtype=np.int64),
                np.zeros((0, 4), dtype=np.int64), np.zeros(0, dtype=np.int64),
                np.zeros(0, dtype=np.int64), np.zeros((2, 0)),
                np.zeros((0, 2), dtype=np.int64), np.zeros((10, 0)))

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


@njit(cache=True, error_model="numpy", _nrt=False)
def rigid_fill(y, y1, z1, idx, knots, tables, static, held, ints, vgroup, zmap, kept,
               work):  # pragma: no cover (compiled)
    """The whole state at a step's end ``y1`` from its start ``y`` and the small state's
    end ``z1`` (its integrals counted from the step's start): the vehicles' positions and
    speeds, each one's energy flows, the plugins' states; the entries in the ranges
    ``kept`` (the couplers' states: nothing deflects) as they were. The wheels are read off
    the bodies after (:func:`rrscore.wheelsets.fill_rolling`). ``work``: room for three
    rows of a value per vehicle.

    Each vehicle's gravity and curve-resistance work is the integral along its path
    (:func:`path_work`), in one piece where neither end met a knot: the knot intervals
    its ends stood in at the last body pass (``static``'s cached rows, see
    :func:`rrscore.compiled.body_rates`) hold both ends of the path."""
    sx, sv, energy = idx[0], idx[1], idx[4]
    n = static.shape[1]
    dx, v1 = z1[Z_X] - y[sx], z1[Z_V]
    d_dist, d_s2, d_s3, d_air = z1[Z_D], z1[Z_S2], z1[Z_S3], z1[Z_AIR]
    c = static[ROUTE_ROWS:]
    half, weight, weight_kn, c1, c2, start_force = (static[0], static[1], static[2],
                                                    static[3], static[4], static[5])
    drag = static[7]
    x0s, x1s, v1s = y[sx:sx + n], y1[sx:sx + n], y1[sv:sv + n]
    g_int, c_int, met = work[0, :n], work[1, :n], work[2, :n]
    f_from, f_to, f_start, f_slope, f_value, f_cslope, f_curve = (c[0], c[1], c[2], c[3],
                                                                  c[4], c[5], c[6])
    r_from, r_to, r_start, r_slope, r_value, r_cslope, r_curve = (c[7], c[8], c[9], c[10],
                                                                  c[11], c[12], c[13])
    # in one piece, from the cached intervals, without branches (so the compiler
    # vectorises it); ``met``: the path left them
    for i in range(n):
        a = x0s[i]
        b = a + dx
        x1s[i] = b
        v1s[i] = v1
        h = half[i]
        lo, hi = min(a, b), max(a, b)
        inside = ((f_from[i] <= lo + h) & (hi + h < f_to[i]) & (r_from[i] <= lo - h)
                  & (hi - h < r_to[i]))
        met[i] = 0.0 if inside else 1.0
        ga = ((f_slope[i] * (a + h - f_start[i]) + f_value[i])
              - (r_slope[i] * (a - h - r_start[i]) + r_value[i])) / (2.0 * h)
        gb = ((f_slope[i] * (b + h - f_start[i]) + f_value[i])
              - (r_slope[i] * (b - h - r_start[i]) + r_value[i])) / (2.0 * h)
        ca = ((f_cslope[i] * (a + h - f_start[i]) + f_curve[i])
              - (r_cslope[i] * (a - h - r_start[i]) + r_curve[i])) / (2.0 * h)
        cb = ((f_cslope[i] * (b + h - f_start[i]) + f_curve[i])
              - (r_cslope[i] * (b - h - r_start[i]) + r_curve[i])) / (2.0 * h)
        g_int[i], c_int[i] = _piece(b - a, ga, gb, ca, cb)
        c_int[i] = abs(c_int[i])
    for i in range(n):  # the paths that met a knot (or left the cached intervals)
        if met[i] != 0.0:
            g_int[i], c_int[i] = path_work(x0s[i], x1s[i], half[i], knots, tables)
    e0 = y[energy:energy + 6 * n]
    e1 = y1[energy:energy + 6 * n]
    use_air = ints[I_AIR] != 0
    for i in range(n):
        k = vgroup[i]
        start = start_force[i] * z1[Z_FIXED + k] if k >= 0 else 0.0
        e1[i] = e0[i] + held[0, i] * dx  # drive
        e1[n + i] = e0[n + i] + held[2, i] * d_dist  # brake
        e1[2 * n + i] = e0[2 * n + i] + ((held[1, i] - held[2, i]) * d_dist + c1[i] * d_s2
                                         + c2[i] * d_s3 + weight_kn[i] * c_int[i] + start)
        e1[3 * n + i] = e0[3 * n + i] - weight[i] * g_int[i]  # gravity
        e1[4 * n + i] = e0[4 * n + i] + (drag[i] * d_air if use_air else 0.0)
        e1[5 * n + i] = e0[5 * n + i]  # slip: every axle rolls
    first = ints[I_STATES]
    for q in range(zmap.size):
        y1[zmap[q]] = z1[first + q]
    for r in range(kept.shape[0]):
        lo_, hi_ = kept[r, 0], kept[r, 1]
        a0, a1 = y[lo_:hi_], y1[lo_:hi_]
        for j in range(hi_ - lo_):
            a1[j] = a0[j]
