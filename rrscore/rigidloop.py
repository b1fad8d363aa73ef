"""The compiled step loop of a rigid train taken as one body.

A rigid train that fits the one body (:mod:`rrscore.rigidbody`) is stepped here in
place of :func:`rrscore.steploop._advance`, with the same solver, the same control
steps (:func:`rrscore.controlsteps.control_step`), the same events and samples, but
keeping only what a point-mass simulator keeps per step: the one body's small state
(the lead's position and speed, the train's integrals, the plugins' states), the
step's stages, and the coupler forces at its end for the monitors. The whole state
(every vehicle's position, speed, wheels and energy flows) is formed only where it is
read: at the end of a call (the solver's state), at the samples whose states a hook
asks for, and in a step the run looks into (:class:`BodySteps`). Each vehicle's energy
flows are the train's integrals times its own coefficients, its held inputs' work as
the log of their changes gives it (:func:`rrscore.rigidbody.replay_to`), and its
gravity and curve work the exact integral along its path. (A run paused and resumed at
control times therefore moves as one that ran straight through, to the bit; its energy
account, formed from each call's start, is the same to rounding.)

At a step's end the loop takes the coupler forces of the rigid body pass
(:func:`rrscore.compiled.rigid_pass_forces`, the Python path's arithmetic), and the
event functions (vehicles held by friction stopping, axles driven beyond adhesion) with
every vehicle at the one body's speed and acceleration. Before a control step it places
the vehicles' positions and speeds and the plugins' states in one scratch state, which
the control step reads as on the multi-body layout.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from .compiled import rigid_pass_forces
from .controlsteps import (
    CHECKED,
    CONTROL_WORK_ROWS,
    HANDED_BACK,
    RESTARTED,
    RIGID,
    W_DT,
    W_SAMPLE_DT,
    W_SAMPLE_K,
    control_step,
    copy_writable,
)
from .copies import copy_into
from .dynamics import traction_loaded
from .rigidbody import (
    I_SIZE,
    I_STATES,
    L_FORCE,
    L_RESIST,
    L_RESIST_C0,
    L_ROW,
    L_VEHICLE,
    LOG_COLUMNS,
    REPLAY_ROWS,
    S_ROW,
    Z_V,
    Z_X,
    RigidBody,
    body_state,
    held_sums,
    place_vehicles,
    replay_from_start,
    replay_to,
    rigid_rates,
)
from .solvers import _DP_C, _DP_E, _DP_P, MIN_STEP
from .steploop import (
    _A,
    CONDITION,
    CROSSING,
    DONE,
    FULL,
    HANDED,
    PYTHON,
    W_V,
    LoopSamples,
    _crossing,
    _events,
    _step_factor,
    rhs_work,
)

if TYPE_CHECKING:
    from .steploop import StepLoop

#: Steps one call takes at most (each keeps the small state, its stages and the coupler
#: forces: a few hundred bytes for a hundred vehicles).
BODY_STEPS = 512
#: The buffers of a call stay within this: a long train hands its steps on more often.
BODY_BYTES = 64 * 2**20
#: Columns of the samples a call records: as :func:`rrscore.steploop._advance`'s (time,
#: step or row, the lead's acceleration, the drive force, kind), then the lead's position
#: and speed.
SAMPLE_COLUMNS = 7


@njit(cache=True, _nrt=False)
def _body_step(t, z0, f0, h_next, t_bound, max_step, zks, z1, zs, tab, consts, groups,
               ints, frozen, direction, kern, zlay, zindex, vs_sign, inputs, v_row, tol,
               rel, counts):  # pragma: no cover (compiled)
    """One accepted Dormand–Prince step of the one body from ``(t, z0)`` (derivative
    ``f0``), not past ``t_bound``: its stages into ``zks`` (the last one the derivative at
    its end), its end into ``z1``; ``zs``: room for a stage's state. The step-size control
    is the solver's; the error of the lead's position is weighed as the multi-body layout
    weighs the vehicles' (each one's own position: the least, at the start or the end,
    sets the bound), the speed's by its departure from the train's mean (none), a
    plugin's state by its size. Returns ``(ok, t1, h_next, h)`` as
    :func:`rrscore.steploop._step`; ``counts[0]``, ``counts[1]``: right-hand sides and
    rejected trials, added to."""
    nz = ints[I_SIZE]
    for q in range(nz):
        zks[0, q] = f0[q]
    h = min(h_next, max_step)
    rejected = False
    # (the step-size control as _step's, written out again: as functions of their own
    # called from _step, they made the spring case 10 % slower, bench_ab.py)
    while True:
        last = t + h >= t_bound
        if last:
            h = t_bound - t
        bad = 0
        for i in range(1, 7):
            out = zs if i < 6 else z1
            for q in range(nz):
                acc = 0.0
                for j in range(i):
                    acc += _A[i, j] * zks[j, q]  # (row 6: the step's end)
                v = z0[q] + h * acc
                out[q] = v
                bad |= np.int64((v - v) != 0.0)
            rigid_rates(t + _DP_C[i] * h, out, zks[i], tab, consts, groups, ints, frozen,
                        direction, kern, zlay, zindex, vs_sign, inputs, v_row)
        counts[0] += 6
        for q in range(nz):
            x = zks[6, q]
            bad |= np.int64((x - x) != 0.0)
        if bad:
            return False, t, h_next, h
        dx = z1[Z_X] - z0[Z_X]
        least = np.inf
        for i in range(rel.size):
            x = z0[Z_X] + rel[i]
            least = min(least, max(abs(x), abs(x + dx)))
        norm = 0.0
        for q in range(nz):
            if not tol[0, q] < np.inf:
                continue
            e = 0.0
            for j in range(7):
                e += _DP_E[j] * zks[j, q]
            e = abs(e * h)
            if e > 0.0:
                mag = least if q == Z_X else (0.0 if q == Z_V else max(abs(z0[q]),
                                                                        abs(z1[q])))
                ratio = e / (tol[0, q] + tol[1, q] * mag)
                if not ratio <= norm:
                    norm = ratio
        if norm <= 1.0:
            if not last:
                h_next = min(h * _step_factor(norm, rejected), max_step)
            return True, (t_bound if last else t + h), h_next, h
        counts[1] += 1
        rejected = True
        h *= max(0.2, 0.9 * norm ** (-1.0 / 5.0))
        if h < MIN_STEP * max(1.0, abs(t)):
            return False, t, h_next, h


@njit(cache=True, _nrt=False)
def _dense(t, t0, h, z0, zks, out):  # pragma: no cover (compiled)
    """The one body's small state at ``t`` in its step of size ``h`` from ``(t0, z0)``
    (stages ``zks``): the method's continuous extension (the weights as
    :func:`rrscore.solvers.dp_dense_weights` forms them, without allocating)."""
    s = (t - t0) / h
    p1, p2, p3, p4 = s, s * s, s ** 3, s ** 4
    for q in range(out.size):
        acc = 0.0
        for k in range(7):
            w = 0.0 + _DP_P[k, 0] * p1 + _DP_P[k, 1] * p2 + _DP_P[k, 2] * p3 + _DP_P[k, 3] * p4
            acc += w * zks[k, q]
        out[q] = z0[q] + h * acc


@njit(cache=True, _nrt=False)
def _body_events(v, a, dy, yc, cf, g, lay, frozen, direction, slip, slip_laws, laws_coef,
                 laws_speeds, laws_values, kinks, ctable, break_force,
                 coupler_watch):  # pragma: no cover (compiled)
    """The event functions (:func:`rrscore.steploop._events`) with every vehicle at the one
    body's speed ``v`` and acceleration ``a`` (written into the speeds of ``yc`` and
    ``dy``: a rigid train's events read nothing else of them). Returns how many entries
    it wrote into ``g``."""
    vs, acc = yc[lay[1]:lay[1] + lay[6]], dy[lay[1]:lay[1] + lay[6]]
    for i in range(acc.size):
        vs[i] = v
        acc[i] = a
    return _events(yc, dy, cf, g, lay, frozen, direction, slip, slip_laws, laws_coef,
                   laws_speeds, laws_values, kinks, ctable, break_force, coupler_watch)


@njit(cache=True, _nrt=False)
def _body_restart(t, z, zf, check, yc, dyc, cf, g, tab, consts, groups, ints, frozen,
                  direction, kern, zlay, zindex, vs_sign, inputs, v_row, lay, slip, slip_laws,
                  laws_coef, laws_speeds, laws_values, kinks, ctable, break_force,
                  coupler_watch):  # pragma: no cover (compiled)
    """A (re)start at the small state ``z`` (placed in ``yc``) with the inputs held now:
    its derivative into ``zf``, the event functions into ``g``. Returns whether an axle's
    slip margin holds below zero there, where ``check`` (a restart: the integrator acts
    on it before any step, as :meth:`rrscore.integrator.Integrator.restart` does)."""
    rigid_rates(t, z, zf, tab, consts, groups, ints, frozen, direction, kern, zlay, zindex,
                vs_sign, inputs, v_row)
    _body_events(z[Z_V], zf[Z_V], dyc, yc, cf, g, lay, frozen, direction, slip, slip_laws,
                 laws_coef, laws_speeds, laws_values, kinks, ctable, break_force,
                 coupler_watch)
    held = 0
    if check and lay[7]:
        for j in range(lay[6], lay[6] + lay[8]):
            held |= np.int64(g[j] < 0.0)
    return held != 0


@njit(cache=True)
def _body_advance(t, t_end, h_next, max_step, max_steps, kern, lay, vs_sign, in0, in1, in2,
                  in3, b_idx, knots, tables, static, axle_vehicle, inv_radius, axles, held,
                  frozen, direction, has_friction, slip, slip_laws, laws_coef,
                  laws_speeds, laws_values, kinks, ctable, break_force, coupler_watch,
                  tab, consts, groups, ints, zmap, zlay, zindex, tol, rel, T, Z, ZK, H, CF,
                  yc, dyc, log, counts, cstate, cbuf, save, clay, cint, driver, sections,
                  body_force, body_resist, axle_torque, brake_own, axle_brake, rail_factor,
                  rail_condition, rolling, vconst, loaded_vehicle, watch,
                  samples):  # pragma: no cover (compiled)
    """Steps of the one body from ``(T[0], Z[0])`` towards ``t_end``, with the control
    steps, events and samples of :func:`rrscore.steploop._advance` (whose docstring gives
    the statuses, ``cstate`` and ``watch``). Step ``j`` goes from row ``j`` to row
    ``j + 1`` of ``T, Z`` (the small state, its integrals counted from the call's start),
    its stages in ``ZK[j]`` and its size in ``H[j]``, the coupler forces at its end in
    ``CF[j]`` (:func:`rrscore.compiled.rigid_pass_forces`). ``yc``, ``dyc``: a whole
    state and its derivative, scratch: the speeds and accelerations the event functions
    read, the positions, speeds and plugins' states a control step reads. ``log``: rows
    of :data:`rrscore.rigidbody.LOG_COLUMNS`, each change of a vehicle's held inputs at a
    control step and each turn of the motion (``counts[4]`` of them), from which the
    whole state is formed (:func:`rrscore.rigidbody.replay_to`). ``samples``: rows of
    :data:`SAMPLE_COLUMNS`. Returns ``(status, steps, next step size)``; ``counts``:
    right-hand sides of the small state, rejected trials, steps, (none), log entries."""
    inputs = (in0, in1, in2, in3)
    n, nc, na = lay[6], lay[2], lay[8]
    nz = ints[I_SIZE]
    first = ints[I_STATES]
    work = rhs_work(n, nc, 0)
    v_row = work[W_V]
    zs = np.empty(nz)  # a stage's state
    zf = np.empty(nz)  # the derivative at the current row: the next step's first stage
    zt = np.empty(nz)  # a sample's state inside a step
    cf = np.empty(max(nc, 0))
    g0 = np.empty(n + na)
    g1 = np.empty(n + na)
    c_work = np.empty((CONTROL_WORK_ROWS, max(n, 1)))
    held_before = np.empty((3, n))
    t_per = np.empty(body_force.size)
    dc = watch[W_DT]
    sampling = watch[W_SAMPLE_DT] > 0.0
    traction = 0.0
    traction_due = sampling
    checked = False
    status = DONE
    steps = 0
    turning = 0.0  # the direction of the motion in this call so far
    cap = log.shape[0]
    # the call's start: the held sums, the derivative and the events there
    held_sums(held, consts)
    place_vehicles(Z[0], yc, rel, lay[0], lay[1], zmap, first)
    counts[0] += 1
    if _body_restart(t, Z[0], zf, lay[12] != 0, yc, dyc, cf, g0, tab, consts, groups, ints,
                     frozen, direction, kern, zlay, zindex, vs_sign, inputs, v_row, lay, slip,
                     slip_laws, laws_coef, laws_speeds, laws_values, kinks, ctable,
                     break_force, coupler_watch):
        return CONDITION, steps, h_next
    while True:
        t_target = min(t_end, cstate[1] * dc) if cstate[1] <= cstate[2] else t_end
        while t < t_target:
            if steps == max_steps or counts[4] + n + 2 > cap:
                status = FULL
                break
            z0, z1, zks = Z[steps], Z[steps + 1], ZK[steps]
            ok, t1, h_new, h_used = _body_step(
                t, z0, zf, h_next, t_target, max_step, zks, z1, zs, tab, consts, groups,
                ints, frozen, direction, kern, zlay, zindex, vs_sign, inputs, v_row, tol, rel,
                counts)
            if not ok:
                status = PYTHON
                break
            rigid_pass_forces(z1[Z_X], z1[Z_V], rel, b_idx, knots, tables, static, held,
                              frozen, direction, cf, work)
            ng = _body_events(z1[Z_V], zks[6, Z_V], dyc, yc, cf, g1, lay, frozen, direction,
                              slip, slip_laws, laws_coef, laws_speeds, laws_values, kinks,
                              ctable, break_force, coupler_watch)
            if _crossing(g0, g1, ng, 0, 0):
                # an event with an action: the Python path takes this step (from the last
                # row, whose scratch the caller does not read)
                status = CROSSING
                break
            dx = z1[Z_X] - z0[Z_X]
            if dx != 0.0:
                way = 1.0 if dx > 0.0 else -1.0
                if turning != 0.0 and way != turning:  # a turn: its row, for the paths
                    k = counts[4]
                    log[k, L_ROW] = steps
                    log[k, L_VEHICLE] = -1.0
                    counts[4] = k + 1
                turning = way
            counts[2] += 1
            h_next = h_new
            H[steps] = h_used
            copy_into(CF[steps], cf)
            steps += 1
            T[steps] = t1
            for q in range(nz):  # the step's last stage is the derivative at its end
                zf[q] = zks[6, q]
            v1 = z1[Z_V]
            d = 1.0 if v1 > 0.0 else (-1.0 if v1 < 0.0 else 0.0)
            for i in range(n):  # as Bodies.commit: friction directions held
                direction[i] = d
                frozen[i] = has_friction[i] and d != 0.0
            cstate[3] = 0
            # samples inside the step (before its end less 1e-12 s): the state on the
            # step's interpolant, the one body's acceleration there
            while sampling and watch[W_SAMPLE_K] * watch[W_SAMPLE_DT] < t1 - 1e-12:
                ts = watch[W_SAMPLE_K] * watch[W_SAMPLE_DT]
                j = steps - 1
                if ts <= T[j]:
                    copy_into(zt, Z[j])
                else:
                    _dense(ts, T[j], H[j], Z[j], ZK[j], zt)
                rigid_rates(ts, zt, zs, tab, consts, groups, ints, frozen, direction, kern,
                            zlay, zindex, vs_sign, inputs, v_row)
                a = zs[Z_V]
                if traction_due:
                    traction = traction_loaded(body_force, slip, t_per)
                    traction_due = False
                _record(samples, cstate, watch, j, 1.0, a, traction, zt)
            t = t1
            g0, g1 = g1, g0
        if status != DONE or cstate[1] > cstate[2] or cstate[1] * dc != t:
            break  # at t_end, with no control step of the loop's here
        if steps == max_steps or counts[4] + n + 1 > cap or (
                sampling and cstate[5] + int(dc / watch[W_SAMPLE_DT]) + 3 > samples.shape[0]):
            status = FULL
            break
        # a control step at row ``steps``, reading its positions, speeds and states in ``yc``
        place_vehicles(Z[steps], yc, rel, lay[0], lay[1], zmap, first)
        for r in range(3):
            copy_into(held_before[r], held[r])
        try:
            code = control_step(t, yc, lay[0], lay[1], kern, cbuf, save, clay, cint, driver,
                                sections, inputs, body_force, body_resist, axle_torque,
                                brake_own, axle_brake, rail_factor, rail_condition, rolling,
                                vconst, loaded_vehicle, slip, held, has_friction,
                                RIGID | (CHECKED if checked else 0), watch, c_work)
        except Exception:  # a kernel raised: its writes undone, the rest Python's
            copy_writable(cbuf, save, clay)
            copy_into(driver[0], driver[1])
            cstate[4] = 1
            code = HANDED_BACK
        if code == HANDED_BACK:
            cstate[2] = -1
            status = HANDED
            break
        cstate[0] += 1
        cstate[1] += 1
        checked = True
        if code == RESTARTED:
            # the vehicles whose held inputs changed: logged from this row on
            for i in range(n):
                if not (held[0, i] == held_before[0, i] and held[1, i] == held_before[1, i]
                        and held[2, i] == held_before[2, i]):
                    k = counts[4]
                    log[k, L_ROW] = steps
                    log[k, L_VEHICLE] = i
                    log[k, L_FORCE] = held[0, i]
                    log[k, L_RESIST_C0] = held[1, i]
                    log[k, L_RESIST] = held[2, i]
                    counts[4] = k + 1
            held_sums(held, consts)
            if sampling:
                traction_due = True
        if t >= t_end:  # a sample is due here: the run takes it, then the restart
            if code == RESTARTED:
                cstate[3] = 2
            break
        if code == RESTARTED:  # as Integrator.restart: friction held with the new sums
            cstate[3] = 1
            for i in range(n):
                frozen[i] = has_friction[i] and direction[i] != 0.0
            counts[0] += 1
            if _body_restart(t, Z[steps], zf, True, yc, dyc, cf, g0, tab, consts, groups,
                             ints, frozen, direction, kern, zlay, zindex, vs_sign, inputs,
                             v_row, lay, slip, slip_laws, laws_coef, laws_speeds, laws_values,
                             kinks, ctable, break_force, coupler_watch):
                status = CONDITION
                break
        if sampling and abs(watch[W_SAMPLE_K] * watch[W_SAMPLE_DT] - t) <= 1e-9:
            if traction_due:
                traction = traction_loaded(body_force, slip, t_per)
                traction_due = False
            _record(samples, cstate, watch, steps, 0.0, zf[Z_V], traction, Z[steps])
    return status, steps, h_next


@njit(cache=True)
def _record(samples, cstate, watch, where, kind, accel, traction,
            z):  # pragma: no cover (compiled)
    """The run's next sample (``watch[W_SAMPLE_K]``) into row ``cstate[5]`` of
    ``samples`` (:data:`SAMPLE_COLUMNS`); both counts moved on."""
    r = cstate[5]
    samples[r, 0] = watch[W_SAMPLE_K] * watch[W_SAMPLE_DT]
    samples[r, 1] = where
    samples[r, 2] = accel
    samples[r, 3] = traction
    samples[r, 4] = kind
    samples[r, 5] = z[Z_X]
    samples[r, 6] = z[Z_V]
    cstate[5] += 1
    watch[W_SAMPLE_K] += 1.0


@njit(cache=True)
def _form_rows(rows, T, Z, ZK, H, log, nlog, held0, rp, rs, y0, rel, idx, knots, tables,
               static, ints, vgroup, zmap, kept, axle_vehicle, inv_radius,
               axles, out):  # pragma: no cover (compiled)
    """The whole states at ``rows`` (rows ``j, t, kind``, in time order: row ``j`` of
    ``Z`` where ``kind`` is 0, else the state at ``t`` on step ``j``'s interpolant) into
    the rows of ``out``, the log replayed forward as they go (``rp``, ``rs``: the
    replay's arrays as they stand; from the call's start again, with the held inputs
    ``held0`` there, for a row before them)."""
    x0 = y0[idx[0]]
    zt = np.empty(Z.shape[1])
    for r in range(rows.shape[0]):
        j = int(rows[r, 0])
        if j < rs[S_ROW]:
            replay_from_start(rp, rs, held0, x0)
        replay_to(j, Z, log, nlog, rp, rs, rel, static[0], knots, tables, x0)
        if rows[r, 2] == 0.0 or rows[r, 1] <= T[j]:
            copy_into(zt, Z[j])
        else:
            _dense(rows[r, 1], T[j], H[j], Z[j], ZK[j], zt)
        body_state(zt, y0, out[r], rp, rs, rel, idx, knots, tables, static, ints, vgroup,
                   zmap, kept, axle_vehicle, inv_radius, axles)


class BodyRun:
    """The one body's buffers (:func:`_body_advance`) and what its calls hand on, for a
    :class:`~rrscore.steploop.StepLoop` whose rigid train fits the one body ``body``
    (:meth:`StepLoop.one_body_at <rrscore.steploop.StepLoop.one_body_at>`). Made again
    where the body is."""

    def __init__(self, loop: StepLoop, body: RigidBody) -> None:
        self.loop, self.body = loop, body
        dyn = loop.dyn
        n, nv, nc = dyn.size, dyn.n, max(dyn.n - 1, 0)
        nz = int(body.ints[I_SIZE])
        per_step = 8 * (3 + 8 * nz + 2 * nc)
        self.size = size = max(2, min(BODY_STEPS, BODY_BYTES // per_step))
        self.T = np.empty(size + 1)
        self.Z = np.zeros((size + 1, nz))
        self.ZK = np.zeros((size, 7, nz))
        self.H = np.zeros(size)
        self.CF = np.zeros((size, nc))
        #: Room for the couplings' positions at the steps' ends (:meth:`BodySteps.coupling_x`).
        self.coupling_rows = np.zeros((size, nc))
        self.yc, self.dyc = np.zeros(n), np.zeros(n)
        # room for a call's changes of held inputs: a control step's worth at least
        self.log = np.zeros((max(16 * nv, 4096), LOG_COLUMNS))
        self.counts = np.zeros(5, dtype=np.int64)
        # the call's start (the whole state, the held inputs) and the replay's arrays
        self.y0 = np.zeros(n)
        self.held0 = np.zeros((3, nv))
        self.rp = np.zeros((REPLAY_ROWS, nv))
        self.rs = np.zeros(3)
        self.nlog = 0

    def run(self, t_end: float, fresh: bool) -> tuple[int, BodySteps | None]:
        """Steps from the solver's state towards ``t_end``, committed to the solver: as
        :meth:`StepLoop.run <rrscore.steploop.StepLoop.run>`, the one body's."""
        loop, body = self.loop, self.body
        s, dyn = loop.solver, loop.dyn
        b, w = dyn.bodies, dyn.wheelsets
        T, Z = self.T, self.Z
        T[0] = s.t
        self.y0[:] = s.y
        z = Z[0]
        z[:] = 0.0
        z[Z_X], z[Z_V] = s.y[dyn.sx.start], s.y[dyn.sv.start]
        z[int(body.ints[I_STATES]):] = s.y[body.zmap]
        self.held0[:] = b.held[:3]
        replay_from_start(self.rp, self.rs, self.held0, float(z[Z_X]))
        slip, laws = w.loaded_rows, w.loaded_law
        counts = self.counts
        direction, frozen, samples = loop.begin_call(fresh, False, counts, self.size,
                                                     SAMPLE_COLUMNS)
        try:
            status, steps, h = _body_advance(
                s.t, t_end, s.h, s.max_step, self.size, loop._kernels, loop._lay, loop._vs_sign,
                *loop._inputs, *loop._bodies, b.held, frozen, direction, b.has_friction,
                slip, laws, loop._laws_coef, loop._laws_speeds, loop._laws_values,
                loop._kinks, loop._ctable, loop._break_force, loop._watch,
                body.table, body.consts, body.groups, body.ints, body.zmap, body.zlay,
                body.zindex, body.tol, body.rel, T, Z, self.ZK, self.H, self.CF,
                self.yc, self.dyc, self.log, counts, loop._cstate, *loop._control_args,
                loop._no_sections if loop.control is None else loop.control.sections,
                dyn.body_force, dyn.body_resist, w.axle_torque, dyn._axle_brake_own,
                w.axle_brake, w.rail_factor, w.rail_condition, w.rolling, loop._vconst,
                w.loaded_vehicle(), loop._ahead_watch, samples)
        except Exception as exc:  # a plugin's kernel raised: its Python call names it
            loop._fail(exc)
            return PYTHON, None
        self.nlog = int(counts[4])
        loop.edges = 0
        loop.end_call(status, self._recorded)
        s.nfev += int(counts[0])
        if steps:
            y = self.form(np.array([[steps, T[steps], 0.0]]))[0]
            s.t, s.y, s.f = float(T[steps]), y, None
            s.t_old, s.y_old, s.f_old = s.t, s.y, None
            s._last = None
            s.nsteps += int(counts[2])
            s.nrejected += int(counts[1])
            s.h = h
            loop.steps_taken += steps
            b.hold_directions(direction, frozen)
            w.commit(s.y)
        if loop._cstate[3] == 1 or (fresh and not steps):
            # a restart no step followed: its derivative (the integrator's, or the
            # loop's for the restart it hands back)
            s.f = loop.rhs(s.t, s.y)
            loop._f_restart[:] = s.f
        if not steps:
            return status, None
        return status, BodySteps(self, steps)

    def form(self, rows: np.ndarray) -> np.ndarray:
        """The whole states at ``rows`` of the last call (rows ``j, t, kind``, see
        :func:`_form_rows`), one row each."""
        loop, body = self.loop, self.body
        out = np.empty((rows.shape[0], self.y0.size))
        c, axles = loop.dyn.compiled, loop._bodies[4:]
        _form_rows(np.ascontiguousarray(rows, dtype=float), self.T, self.Z, self.ZK, self.H,
                   self.log, self.nlog, self.held0, self.rp, self.rs, self.y0, body.rel,
                   c._idx, c._knots, c._tables, c._static, body.ints, body.vgroup,
                   body.zmap, body.kept, *axles, out)
        return out

    def _recorded(self, rec: np.ndarray) -> LoopSamples:
        """The samples of the rows ``rec`` a call recorded, their states on demand."""
        entries = np.column_stack((rec[:, 5], rec[:, 6], rec[:, 5] + self.body.rel[-1]))
        rows = rec[:, [1, 0, 4]]
        return LoopSamples(rec[:, 0], entries, rec[:, 2], rec[:, 3],
                           lambda: self.form(rows))


class BodySteps:
    """The steps one call of the one body's loop took (:class:`~rrscore.steploop.Steps`'
    counterpart): their ``k + 1`` times ``t``, sizes ``h``, the coupler forces at each
    one's end, the lead's position and speed at each time; the whole states formed
    where they are read (:meth:`segment`). Valid until the loop runs again."""

    __slots__ = ("t", "h", "coupler_forces", "lead_x", "lead_v", "_run")

    def __init__(self, run: BodyRun, steps: int) -> None:
        self._run = run
        self.t, self.h = run.T[:steps + 1], run.H[:steps]
        self.coupler_forces = run.CF[:steps] if run.CF.shape[1] else None
        self.lead_x, self.lead_v = run.Z[:steps + 1, Z_X], run.Z[:steps + 1, Z_V]

    def __len__(self) -> int:
        return len(self.h)

    def coupling_x(self, half: np.ndarray) -> np.ndarray:
        """Each coupling's position (the rear end of the vehicle ahead of it; ``half``:
        the vehicles' half lengths) at each step's end, one row per step (in the run's
        buffer: fresh arrays this size cost page faults at every call)."""
        run = self._run
        out = run.coupling_rows[:len(self)]
        np.add(self.lead_x[1:, None], (run.body.rel[:-1] - half[:-1])[None, :], out=out)
        return out

    def segment(self, j: int) -> BodySegment:
        """Step ``j`` as a segment (:class:`BodySegment`)."""
        return BodySegment(self._run, j)

    def __iter__(self) -> Iterator[BodySegment]:
        return (self.segment(j) for j in range(len(self)))


class BodySegment:
    """Step ``j`` of the one body as a :class:`~rrscore.integrator.Segment`: the whole
    states at its ends and inside it formed when asked (the method's continuous
    extension of the small state), the lead's position and speed from the small state
    alone (:meth:`lead`)."""

    def __init__(self, run: BodyRun, j: int) -> None:
        self._run, self._j = run, j
        self.t0, self.t1 = float(run.T[j]), float(run.T[j + 1])
        self.coupler_forces = run.CF[j] if run.CF.shape[1] else None

    @property
    def y0(self) -> np.ndarray:
        return self._run.form(np.array([[self._j, self.t0, 0.0]]))[0]

    @property
    def y1(self) -> np.ndarray:
        return self._run.form(np.array([[self._j + 1, self.t1, 0.0]]))[0]

    def __call__(self, t: float) -> np.ndarray:
        """The whole state at ``t`` in ``[t0, t1]``."""
        if t >= self.t1:
            return self.y1
        return self._run.form(np.array([[self._j, max(t, self.t0), 1.0]]))[0]

    def lead(self, t: float, sx: int, sv: int) -> tuple[float, float]:
        """The lead's position and speed at ``t`` (``sx``, ``sv``: where they are in the
        whole state, not needed here)."""
        run, j = self._run, self._j
        z = np.empty(run.Z.shape[1])
        if t >= self.t1:
            z[:] = run.Z[j + 1]
        elif t <= self.t0:
            z[:] = run.Z[j]
        else:
            _dense(t, self.t0, float(run.H[j]), run.Z[j], run.ZK[j], z)
        return float(z[Z_X]), float(z[Z_V])
