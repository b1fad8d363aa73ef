"""The multi-body train as a system of the event loop: every vehicle a body on its couplers.

The state vector holds, block after block: every vehicle's position and velocity, the
vehicle plugins' states (per type, a row per state), the coupler models' states (per
group), every axle's spin and angle (integrated only while it slips: a rolling axle's
are read off its body), the energy account's six flows per vehicle and the work of each
coupling. The right-hand side (:func:`rhs`) adds up every force on every body from the
laws of :mod:`rrscore.physics` and the plugins' functions, and turns them into
accelerations; it also writes the energy flows, where a step's end reads them.

A rigid train (``rigid``) keeps this state, but its bodies move as one: the couplers
neither deflect nor act as springs, their events are not watched, and their forces are
the ones the common acceleration takes.

The system is a named tuple of named tuples of arrays (:class:`MultiBody`), built and
changed by :mod:`rrscore.engine.train` between calls of the loop; the functions here are
what the loop calls (:mod:`rrscore.engine.system`) and what the train's control step and
outputs call, from Python or from the loop.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..jit import kernel, struct, table
from ..physics import couplings as coupling_laws
from ..physics.bodies import (
    accelerations,
    body_forces,
    hold_directions,
    rigid_accelerations,
    standstill,
)
from ..physics.wheelsets import fill_rolling, slip_margin, slipping_axles
from . import system
from .airsystem import watch_step
from .limitwatch import check_limit
from .stepper import dense_state

#: Where the blocks of the state start, and the counts: vehicles, axles, couplings.
Layout = namedtuple("Layout", ["n", "na", "nc", "sx", "sv", "somega", "sphi", "senergy",
                               "swork"])

#: The vehicle plugins of a train, per type (a fixed number of slots, the unused ones
#: empty; their functions are in the function table, :mod:`rrscore.engine.adapters`):
#: the records' buffers and layouts; per slot, how many vehicles, where its
#: vehicles start in ``index`` (their places in the train) and ``sign`` (their
#: orientation), axles per vehicle, where its states start in the state vector and how
#: many it has, where the rows of ``x``, ``v``, the first state, ``q_a``, ``q_r`` and
#: ``adhesion`` start in its buffer (and ``axle_slip``, which the engine fills), and the
#: input index of each control the built-in driver sets (``driven``: one row per slot,
#: columns :data:`DRIVEN`, -1 where the type has none); ``axle_index``:
#: every vehicle's axles, slot after slot; per slot, its outputs (``q_a``, ``q_r``,
#: ``adhesion``: one block of its buffer) as last placed (NaN: to be placed) and
#: whether they changed since (1/0); and of a type with states, its whole record as
#: last seen (its states' rates may read any of it).
DRIVEN = ("traction_level", "brake_level", "dynamic_brake_level", "brake_valve",
          "independent_brake", "bail_off")
Plugins = namedtuple("Plugins", ["bufs", "lays", "count", "first",
                                 "index", "sign", "axles", "state0", "nstates", "row_x",
                                 "row_v", "row_state", "row_qa", "row_qr", "row_adh",
                                 "row_slip", "driven", "axle_first", "axle_index",
                                 "placed", "changed", "seen"])

#: The coupler models of a train, per group (a fixed number of slots; their force laws are
#: in the function table): their records, how many couplings each serves and where they
#: start in ``index``, where its states start in the state vector and how many it has per
#: coupling; ``whole`` is 1 where one group serves every coupling in order (no gathering).
Groups = namedtuple("Groups", ["bufs", "lays", "count", "first", "index", "z0", "nz",
                               "whole"])

#: Every coupling: nominal centre distance, slack range, break force (inf: never),
#: coupling speed, coupled (1/0), kinks ``(nc, k)`` and the coupler groups.
Couplings = namedtuple("Couplings", ["nominal", "lo", "hi", "break_force", "coupling_speed",
                                     "coupled", "kinks", "groups"])

#: The modes and lists that change at events and control steps: counts (``[loaded
#: axles, slipping axles, couplers watched for breaking, uncoupled couplings]``), the
#: loaded rolling axles (a drive or brake torque on them: they may start to slip) and the
#: slipping axles, where each event block starts in the event values
#: (:data:`STANDSTILL` ... :data:`END`), and flags: rigid, the route's extra lookups
#: (AREA curves, tunnels) needed, the loop takes the control steps.
Modes = namedtuple("Modes", ["counts", "loaded", "slipping", "blocks", "flags"])
LOADED, SLIPPING, WATCHED, UNCOUPLED = range(4)
STANDSTILL, SLIP, STOPS, READHESION, SLACK, BREAK, CONTACT, END = range(8)
RIGID, EXTRA = 0, 1

#: Scratch per call of the right-hand side: per vehicle the signed forces, resistances,
#: the route's means (4 rows), its gravity, air force and running resistance (3 rows); per
#: coupling the forces, deflections and their rates, and room to gather and scatter a
#: group's; the coupler states' rates where only the forces are wanted; one range of
#: entries (``(1, 2)``).
Scratch = namedtuple("Scratch", ["force", "resist", "route", "parts", "cf", "d", "d_dot",
                                 "gd", "gdd", "gf", "dz", "span"])

#: The monitors the loop keeps after every step: each coupling's largest tension and
#: compression with the time and position of each (the coupling's: the rear of the vehicle
#: ahead), the lead's largest speed; the route's named points (their positions, in order),
#: the time and speed the front passed each (NaN before), and the next one's index.
Monitor = namedtuple("Monitor", ["tension", "tension_t", "tension_x", "compression",
                                 "compression_t", "compression_x", "top", "points",
                                 "passed_t", "passed_v", "next_point"])

MultiBody = struct("MultiBody", (
    "live", "formed", "controlled", "atol", "rtol", "ev_kind", "lay", "bodies", "held",
    "axles", "laws", "couplings", "track", "ends", "plugins", "draw_index", "draw_rate",
    "modes", "scratch", "weights", "monitor", "totals", "control"), """The train as a system of the
    loop. Besides the loop's own fields: the layout, the bodies (:class:`rrscore.physics.
    bodies.Bodies`) and what is held on them, the axles and the adhesion laws, the
    couplings, the route, each vehicle's knot intervals, the plugins, the air a brake draws
    from main reservoirs (their state indices and rates), the modes, the scratch, the
    weights of each vehicle's speed in the train's mean, the monitors, totals (``[drive
    force]``) and the control step's data (:mod:`rrscore.engine.control`, which serves
    its control steps).""")


# ----------------------------------------------------------------- plugins' functions
# Plugins' functions are called through these, compiled with reference counting: through
# their function types they run many times as slowly from code compiled without.
@kernel
def call_force(fns, g, d, d_dot, buf, lay, z, dz, out):  # pragma: no cover (compiled)
    """Coupler group ``g``'s force law."""
    fns.forces[g](d, d_dot, buf, lay, z, dz, out)


@kernel
def call_rates(fns, b, t, buf, lay, s, ds):  # pragma: no cover (compiled)
    """Vehicle type ``b``'s states' rates."""
    fns.rates[b](t, buf, lay, s, ds)


# --------------------------------------------------------------------------- couplers
@kernel
def coupler_forces(sys, fns, y, dy, cf, rates):  # pragma: no cover (compiled)
    """Every coupling's force (tension +) into ``cf`` at the state ``y`` and, where
    ``rates``, its states' rates into ``dy`` (else into scratch): the groups' force laws,
    and an uncoupled coupling's contact. A rigid train's are zero (the body pass works
    them out) and its coupler states stand still."""
    lay, cp, s = sys.lay, sys.couplings, sys.scratch
    nc = lay.nc
    if nc == 0:
        return
    gr = cp.groups
    rigid = sys.modes.flags[RIGID] != 0
    x, v = y[lay.sx:lay.sx + lay.n], y[lay.sv:lay.sv + lay.n]
    coupling_laws.deflections(x, v, cp.nominal, s.d, s.d_dot)
    for g in range(gr.count.size):
        m = gr.count[g]
        if m == 0:
            continue
        z0, nz = gr.z0[g], gr.nz[g]
        z = table(y, z0, nz, m)
        out_dz = dy if rates else s.dz
        dz = table(out_dz, z0, nz, m)
        if rigid:
            for k in range(nz * m):
                out_dz[z0 + k] = 0.0
            continue
        if gr.whole[g] != 0:
            call_force(fns, g, s.d, s.d_dot, gr.bufs[g], gr.lays[g], z, dz, cf)
            continue
        idx = gr.index[gr.first[g]:gr.first[g] + m]
        gd, gdd, gf = s.gd[:m], s.gdd[:m], s.gf[:m]
        for k in range(m):
            gd[k] = s.d[idx[k]]
            gdd[k] = s.d_dot[idx[k]]
        call_force(fns, g, gd, gdd, gr.bufs[g], gr.lays[g], z, dz, gf)
        for k in range(m):
            cf[idx[k]] = gf[k]
    if rigid:
        for j in range(nc):
            cf[j] = 0.0
        return
    if sys.modes.counts[UNCOUPLED] > 0:
        for j in range(nc):
            cf[j] = coupling_laws.uncoupled_force(cf[j], s.d[j], cp.lo[j], cp.coupled[j])
        _hold_apart_states(sys, dy if rates else s.dz)


@kernel
def _hold_apart_states(sys, dy):  # pragma: no cover (compiled)
    """An uncoupled coupling whose faces are apart keeps its gear's memory: a gear not
    pushed on does not move (it is reset when the faces meet again)."""
    cp, gr, s = sys.couplings, sys.couplings.groups, sys.scratch
    for g in range(gr.count.size):
        m, z0, nz = gr.count[g], gr.z0[g], gr.nz[g]
        for k in range(m):
            j = gr.index[gr.first[g] + k]
            if cp.coupled[j] == 0.0 and s.d[j] > cp.lo[j]:
                for r in range(nz):
                    dy[z0 + r * m + k] = 0.0


# ------------------------------------------------------------------------ plugin states
@kernel
def plugin_rates(sys, fns, t, y, dy):  # pragma: no cover (compiled)
    """The vehicle plugins' states' rates, type by type, each type's record given its
    vehicles' speeds at this stage first."""
    plugin_rates_at(sys, fns, t, y, dy, np.nan)


@kernel
def plugin_rates_at(sys, fns, t, y, dy, common):  # pragma: no cover (compiled)
    """:func:`plugin_rates`, every vehicle at the speed ``common`` (train frame) unless it
    is NaN (each at its own, from ``y``)."""
    p, lay = sys.plugins, sys.lay
    for b in range(p.count.size):
        k = p.nstates[b]
        if k == 0:
            continue
        n, first, buf = p.count[b], p.first[b], p.bufs[b]
        row_v = p.row_v[b]
        for j in range(n):
            v = common if common == common else y[lay.sv + p.index[first + j]]
            buf[row_v + j] = v * p.sign[first + j]
        z0 = p.state0[b]
        call_rates(fns, b, t, buf, p.lays[b], table(y, z0, k, n), table(dy, z0, k, n))


# ------------------------------------------------------------------------------ rhs
@kernel
def rhs(sys, fns, t, y, dy, full):  # pragma: no cover (compiled)
    """The train's right-hand side (see the module): couplers, plugin states, the air
    brake's draw, then the body pass; the energy flows where ``full``."""
    if sys.lay.nc > 0:
        coupler_forces(sys, fns, y, dy, sys.scratch.cf, True)  # (a rigid train's: zeros)
    plugin_rates(sys, fns, t, y, dy)
    for k in range(sys.draw_index.size):  # the air a brake draws from main reservoirs
        dy[sys.draw_index[k]] -= sys.draw_rate[k]
    body_pass(sys, y, dy, full)


@kernel
def body_pass(sys, y, dy, full):  # pragma: no cover (compiled)
    """The bodies' part of :func:`rhs`, the coupler forces (``scratch.cf``) worked out
    already: each vehicle's forces, its slipping axles', its acceleration (a rigid train's
    one, and the coupler forces that carry it into ``scratch.cf``), its speed; the
    energy flows and the couplings' work where ``full``."""
    lay, held, s = sys.lay, sys.held, sys.scratch
    n = lay.n
    x, v = y[lay.sx:lay.sx + n], y[lay.sv:lay.sv + n]
    force, resist, cf = s.force, s.resist, s.cf
    flows = table(dy, lay.senergy, 6, n)
    body_forces(sys.bodies, held, cf, sys.track, sys.ends, x, v, sys.modes.flags[EXTRA] != 0,
                s.route, s.parts, force, resist, flows, full)
    nslip = sys.modes.counts[SLIPPING]
    if nslip > 0:
        slipping_axles(sys.axles, sys.laws, sys.modes.slipping, nslip, y, dy, lay.somega,
                       lay.sphi, v, force, resist, flows, full)
    accel = dy[lay.sv:lay.sv + n]
    if sys.modes.flags[RIGID] != 0:
        rigid_accelerations(held, v, force, resist, accel, cf)
    else:
        accelerations(held, v, force, resist, accel)
    dx = dy[lay.sx:lay.sx + n]
    for i in range(n):
        dx[i] = v[i]
    if full:
        work = dy[lay.swork:lay.swork + lay.nc]
        for j in range(lay.nc):
            work[j] = cf[j] * (v[j] - v[j + 1])


@kernel
def rigid_forces(sys, y, dy):  # pragma: no cover (compiled)
    """A rigid train's coupler forces at ``y`` (into ``scratch.cf``) and its accelerations
    (into ``dy``), from its body pass alone: its couplers do not deflect and its plugins'
    states do not enter its forces."""
    cf = sys.scratch.cf
    for j in range(sys.lay.nc):
        cf[j] = 0.0
    body_pass(sys, y, dy, False)


# --------------------------------------------------------------------------- events
@kernel
def events(sys, fns, t, y, f, g):  # pragma: no cover (compiled)
    """The event functions, block after block (:data:`STANDSTILL` ... :data:`CONTACT`,
    where ``modes.blocks`` says): vehicles stopping, loaded axles' slip margins, slipping
    wheels stopping and re-adhering, slack edges, couplers breaking, faces meeting."""
    lay, md = sys.lay, sys.modes
    n = lay.n
    blocks = md.blocks
    x, v, a = y[lay.sx:lay.sx + n], y[lay.sv:lay.sv + n], f[lay.sv:lay.sv + n]
    standstill(sys.held, v, g[:n])
    ax = sys.axles
    at = blocks[SLIP]
    for c in range(md.counts[LOADED]):
        k = md.loaded[c]
        i = ax.vehicle[k]
        g[at + c] = slip_margin(ax, sys.laws, k, v[i], a[i])
    at = blocks[STOPS]
    nslip = md.counts[SLIPPING]
    for c in range(nslip):
        k = md.slipping[c]
        omega = y[lay.somega + k]
        g[at + c] = omega * ax.spin[k] if ax.spin[k] != 0.0 else 1.0
        slip = omega * ax.radius[k] - v[ax.vehicle[k]]
        g[blocks[READHESION] + c] = abs(slip) - ax.creep_slip[k]
    cp = sys.couplings
    if blocks[BREAK] > blocks[SLACK]:
        coupling_laws.slack_edges(x, cp.nominal, cp.kinks, g[blocks[SLACK]:blocks[BREAK]])
    if blocks[CONTACT] > blocks[BREAK]:
        coupler_forces(sys, fns, y, sys.scratch.dz, sys.scratch.cf, False)
        coupling_laws.break_margins(sys.scratch.cf, cp.break_force, cp.coupled,
                                    g[blocks[BREAK]:blocks[CONTACT]])
    if blocks[END] > blocks[CONTACT]:
        coupling_laws.contact_gaps(x, cp.nominal, cp.lo, cp.coupled,
                                   g[blocks[CONTACT]:blocks[END]])
    return blocks[END]


@kernel
def event_layout(sys):  # pragma: no cover (compiled)
    """Where each event block starts, and the kind of every entry, from the modes."""
    lay, md = sys.lay, sys.modes
    b, kinds = md.blocks, sys.ev_kind
    rigid = md.flags[RIGID] != 0
    nc = 0 if rigid else lay.nc
    before = b[END]
    moved = b[SLIP] != lay.n  # (the blocks as they stood: the kinds need writing anew?)
    b[STANDSTILL] = 0
    b[SLIP] = lay.n
    for block, start in ((STOPS, b[SLIP] + md.counts[LOADED]),
                         (READHESION, b[SLIP] + md.counts[LOADED] + md.counts[SLIPPING]),
                         (SLACK, b[SLIP] + md.counts[LOADED] + 2 * md.counts[SLIPPING])):
        moved = moved or b[block] != start
        b[block] = start
    breaks = b[SLACK] + nc * sys.couplings.kinks.shape[1]
    contacts = breaks + (nc if md.counts[WATCHED] > 0 else 0)
    end = contacts + (nc if md.counts[UNCOUPLED] > 0 else 0)
    moved = moved or b[BREAK] != breaks or b[CONTACT] != contacts or before != end
    b[BREAK], b[CONTACT], b[END] = breaks, contacts, end
    if not moved:
        return
    kind = (system.FALLING, system.FALLING | system.CONDITION, system.FALLING,
            system.FALLING | system.CONDITION, system.KINK, system.FALLING, system.FALLING)
    for block in range(7):
        for i in range(b[block], b[block + 1]):
            kinds[i] = kind[block]


@kernel
def kink_bound(sys, fns, t, t_bound, h, y, f, g):  # pragma: no cover (compiled)
    """The end of a step about to meet a slack edge (:func:`rrscore.physics.couplings.
    kink_bound`)."""
    b = sys.modes.blocks
    if b[BREAK] <= b[SLACK]:
        return t_bound
    lay, cp = sys.lay, sys.couplings
    n = lay.n
    return coupling_laws.kink_bound(t, t_bound, h, y[lay.sx:lay.sx + n],
                                    y[lay.sv:lay.sv + n], f[lay.sv:lay.sv + n], cp.nominal,
                                    cp.kinks, g[b[SLACK]:b[BREAK]])


@kernel
def reference(sys, fns, y, ref):  # pragma: no cover (compiled)
    """The train's mean velocity: the reference the relative tolerance measures the
    velocities from (and the slipping spins, at their radii), so a train at speed is held
    to the same accuracy of its relative motions as a standing one."""
    lay = sys.lay
    mean = 0.0
    for i in range(lay.n):
        mean += sys.weights[i] * y[lay.sv + i]
    for i in range(lay.n):
        ref[lay.sv + i] = mean
    md, ax = sys.modes, sys.axles
    for c in range(md.counts[SLIPPING]):
        k = md.slipping[c]
        ref[lay.somega + k] = mean * ax.inv_radius[k]


# --------------------------------------------------------------------------- commit
@kernel
def commit(sys, fns, tab, seg, w):  # pragma: no cover (compiled)
    """After every committed step: friction's directions held from the new state (a
    standing vehicle that moves off now has one), slipping spins' directions, the coupler
    force monitors, the brake applications' watch, the speed-limit watch and the named
    points passed."""
    lay = sys.lay
    n = lay.n
    y1 = seg.y1
    v = y1[lay.sv:lay.sv + n]
    hold_directions(sys.held, v)
    md, ax = sys.modes, sys.axles
    for c in range(md.counts[SLIPPING]):
        k = md.slipping[c]
        omega = y1[lay.somega + k]
        ax.spin[k] = 1.0 if omega > 0.0 else (-1.0 if omega < 0.0 else 0.0)
    mon = sys.monitor
    mon.top[0] = max(mon.top[0], abs(v[0]))
    if lay.nc > 0:
        cf = sys.scratch.cf
        # (a rigid train's: its body pass's at the end; where couplers can break, the
        # events there worked them out for their margins: see system.commit)
        blocks = sys.modes.blocks
        if sys.modes.flags[RIGID] == 0 and blocks[CONTACT] == blocks[BREAK]:
            coupler_forces(sys, fns, y1, sys.scratch.dz, cf, False)
        beyond = 0  # (counted on vectors first: as a rule no extreme moves)
        for j in range(lay.nc):
            beyond += (cf[j] > mon.tension[j]) | (-cf[j] > mon.compression[j])
        half = sys.bodies.half
        for j in range(lay.nc if beyond > 0 else 0):
            if cf[j] > mon.tension[j]:
                mon.tension[j] = cf[j]
                mon.tension_t[j] = seg.t1
                mon.tension_x[j] = y1[lay.sx + j] - half[j]
            if -cf[j] > mon.compression[j]:
                mon.compression[j] = -cf[j]
                mon.compression_t[j] = seg.t1
                mon.compression_x[j] = y1[lay.sx + j] - half[j]
    watch_step(sys, seg.t0, seg.t1, seg.y0, y1, sys.scratch.cf)
    half = sys.bodies.half
    check_limit(sys.control.limits, seg.t1, y1[lay.sx] + half[0],
                y1[lay.sx + n - 1] - half[n - 1], v[0])
    _points(sys, tab, seg, w)


@kernel
def _points(sys, tab, seg, w):  # pragma: no cover (compiled)
    """The named points the train's front passed in ``seg``: when (to a nanosecond, by
    bisection on the dense output) and at what speed."""
    mon, lay = sys.monitor, sys.lay
    half0 = sys.bodies.half[0]
    sx, sv = lay.sx, lay.sv
    ranges = sys.scratch.span
    while mon.next_point[0] < mon.points.size:
        k = mon.next_point[0]
        p = mon.points[k]
        if not (seg.y0[sx] + half0 < p <= seg.y1[sx] + half0):
            if seg.y1[sx] + half0 >= p:  # (passed before the drive started, or a step back)
                mon.next_point[0] = k + 1
                continue
            return
        lo, hi = seg.t0, seg.t1
        ranges[0, 0], ranges[0, 1] = sx, sx + 1
        while hi - lo > 1e-9 * max(1.0, hi):
            mid = 0.5 * (lo + hi)
            dense_state(tab, mid, seg.t0, seg.h, seg.y0, seg.y1, seg.f0, seg.f1, seg.ks,
                        seg.whole, ranges, w.weights, w.stage)
            if w.stage[sx] + half0 < p:
                lo = mid
            else:
                hi = mid
        ranges[0, 0], ranges[0, 1] = sv, sv + 1
        dense_state(tab, hi, seg.t0, seg.h, seg.y0, seg.y1, seg.f0, seg.f1, seg.ks,
                    seg.whole, ranges, w.weights, w.stage)
        mon.passed_t[k] = hi
        mon.passed_v[k] = w.stage[sv]
        mon.next_point[0] = k + 1


# --------------------------------------------------------------------------- samples
#: The columns of a sample row before the couplings' forces: time, the lead's position,
#: speed and acceleration, the train's drive force, the front and the rear.
ROW = 7


@kernel
def sample(sys, fns, t, y, f, row):  # pragma: no cover (compiled)
    """A time-series row at ``(t, y)``: see :data:`ROW`, then each coupling's force."""
    lay = sys.lay
    n = lay.n
    half = sys.bodies.half
    row[0] = t
    row[1] = y[lay.sx]
    row[2] = y[lay.sv]
    row[3] = f[lay.sv]
    row[4] = sys.totals[0]
    row[5] = y[lay.sx] + half[0]
    row[6] = y[lay.sx + n - 1] - half[n - 1]
    if lay.nc > 0 and row.size > ROW:
        cf = sys.scratch.cf  # (the right-hand side's at y: see system.sample)
        for j in range(lay.nc):
            row[ROW + j] = cf[j]
    return ROW + lay.nc


@kernel
def fill(sys, y):  # pragma: no cover (compiled)
    """The rolling axles' spins and angles in ``y`` read off their bodies."""
    lay = sys.lay
    fill_rolling(sys.axles, y, lay.sx, lay.sv, lay.somega, lay.sphi)


for _generic, _impl in ((system.rhs, rhs), (system.events, events),
                        (system.kink_bound, kink_bound), (system.reference, reference),
                        (system.commit, commit), (system.sample, sample)):
    _generic.register(MultiBody, _impl)
