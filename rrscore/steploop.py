"""The step loop between control steps, compiled.

Between two control steps nothing a plugin returns changes, so the solver's steps
need no Python at all where every piece of the right-hand side has a compiled
form. :class:`StepLoop` then takes the Dormand–Prince steps in one numba call
(cached on disk): the stages, the right-hand side (the coupler models' kernels,
the vehicle plugins' compiled ``state_rates``, :func:`rrscore.compiled.body_rates`),
the error norm relative to the train's mean motion, the step-size control, and
the event functions after every step. Its arithmetic is the Python path's
(:class:`~rrscore.solvers.DormandPrince45` on :meth:`TrainDynamics.rhs
<rrscore.dynamics.TrainDynamics.rhs>`, the same compiled pieces in the same order),
so both take the same steps.

The loop hands back to :class:`~rrscore.integrator.Integrator` whenever the
Python path has something to do: an event function changed sign in a step (the
step is not taken; the integrator takes it again and locates the event), a
stage was not finite or the step size collapsed (the integrator repeats the step
and reports the failure), or its buffer of steps is full. The steps it took are
handed on together, as arrays (:class:`Steps`): the run's monitors take them in
a few array operations, not one call per step, and a step becomes a
:class:`~rrscore.integrator.Segment`, with the method's own dense output, only
where a sample or a named point falls in it. The run's samples, inside its
steps and at the control times it takes (:mod:`rrscore.controlsteps`), the loop
records itself, with what their rows need beyond the state (:class:`LoopSamples`).

When it applies (:meth:`StepLoop.applies`): the ``rk45`` solver; every axle
rolling and no extra lookups of the route (the compiled body pass applies); every
coupling coupled, in one coupler model that has a compiled
``force_kernel`` (the shipped ``spring_damper``, ``sa3`` and ``linear`` do); every
vehicle plugin's states written as a compiled ``state_rates`` (at most
:data:`MAX_STATE_BATCHES` vehicle types with states); adhesion laws of the shipped
forms. An air brake integrates its own states a control step ahead (see
:mod:`rrscore.airbrake`); the train's only take its brake torques, held, and the
air it draws from the main reservoirs, which the loop subtracts as the Python path
does. Anything else runs on the Python path, which stays the reference. The
scenario key ``solver.compiled = false`` forces the Python path.

A rigid train is taken as one body where it fits (:mod:`rrscore.rigidbody`,
:meth:`StepLoop.one_body_at`): a small state of its own, whose steps are the same
but whose arithmetic is not the Python path's to the bit (within the solver's
tolerance of it; each vehicle's gravity and curve work exact where the Python
path's is a quadrature).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterator
from functools import partial
from typing import TYPE_CHECKING

import numpy as np
from numba import njit, types
from numba.core.errors import NumbaError, NumbaExperimentalFeatureWarning
from numba.experimental import structref

from .adhesion import interp_one
from .autodriver import DRIVER_PARAMS_SIZE, DRIVER_STATE_SIZE
from .compiled import (
    ALL_RATES,
    BODY_WORK_ROWS,
    MOTION_RATES,
    NONZERO_RATES,
    STATE_RATES,
    Kernel,
    body_rates,
    compile_kernel,
    dot,
    plugin_state_rates,
)
from .controlsteps import (
    CHECKED,
    CONTROL_KERNEL,
    CONTROL_WORK_ROWS,
    HANDED_BACK,
    LAYOUT_COLUMNS,
    MAX_CONTROL_BATCHES,
    RESTARTED,
    RIGID,
    SET_KERNEL,
    W_DT,
    W_SAMPLE_DT,
    W_SAMPLE_K,
    WATCH_SIZE,
    ControlSteps,
    control_step,
    copy_writable,
)
from .copies import copy_into, copy_rows
from .dynamics import traction_loaded
from .errors import interruption_behind
from .integrator import (
    EVENT_RTOL,
    ILLINOIS_ITERATIONS,
    KINK_END,
    ON_SURFACE,
    Segment,
    illinois_point,
    illinois_update,
    kink_bound,
)
from .rigidbody import RigidBody, equal_speeds
from .solvers import (
    _DP_A,
    _DP_B,
    _DP_C,
    _DP_E,
    MIN_STEP,
    DormandPrince45,
    dp_dense,
    dp_dense_weights,
)
from .state import entry_ranges
from .wheelsets import fill_rolling, margin_one

if TYPE_CHECKING:
    from .dynamics import TrainDynamics

# The plugins' functions reach the loop as first-class functions (numba calls the feature
# experimental); the loop is held to the Python path by tests, so the notice is noise.
warnings.filterwarnings("ignore", "First-class function type", NumbaExperimentalFeatureWarning)

#: Vehicle types with states that the compiled loop serves at most (a train has a few).
MAX_STATE_BATCHES = 4
#: Steps the loop takes before it hands them to Python, at most.
BUFFER_STEPS = 32
#: The loop's buffers of steps (states, derivatives, stages: nine rows of the state per
#: step) stay within this: a long train hands its steps on more often instead (10,000
#: vehicles: 2 steps a call, where 32 took 306 MB more than the train itself; with 5
#: a call, 64 MiB, its drive took 2 to 5 % longer: the buffers are more memory to run
#: through than the calls cost).
BUFFER_BYTES = 32 * 2**20
#: The states of the samples one call of the loop records stay within this too: the run
#: samples more finely than a control step's samples fit in from the loop's steps.
SAMPLE_BYTES = 64 * 2**20

#: The signature of ``CouplerModel.force_kernel``: ``(d, d_dot, z, params, force, dz)``:
#: deflections and their rates of the model's couplings, its states ``z`` (one row per
#: state), its parameter table; it writes the forces (tension +) and the states' rates.
COUPLER_KERNEL = types.void(types.float64[::1], types.float64[::1], types.float64[:, ::1],
                            types.float64[:, ::1], types.float64[::1],
                            types.float64[:, ::1])

_COUPLER_FN = types.FunctionType(COUPLER_KERNEL)
_STATES_FN = types.FunctionType(STATE_RATES)
_CONTROL_FN = types.FunctionType(CONTROL_KERNEL)
_SET_FN = types.FunctionType(SET_KERNEL)

# The Dormand-Prince stage coefficients as one table (row i: the coefficients of stage i).
_A = np.zeros((7, 6))
for _i, _row in enumerate(_DP_A):
    _A[_i, :_row.size] = _row

# Arguments passed as numpy scalars, not literals: numba compiles a function once for
# each literal argument (``True``, ``0``) it meets and again for a typed one, and a second
# _rhs cost some 6 s of a first run's compile time.
ZERO = np.int64(0)

# Status of a call of the loop: ``t_end`` reached; an event with an action (or a slack
# edge it could not end a step on) in the next step; a step the Python path must take (a
# stage not finite, a collapsing step size); the buffers full; a condition event (an axle
# driven beyond adhesion) holding at a restart, for the integrator to act on before any step;
# a control time handed back to Python (rrscore.controlsteps), nothing of it done.
DONE, CROSSING, PYTHON, FULL, CONDITION, HANDED = 0, 1, 2, 3, 4, 5

# Rows of the loop's ``room`` (a state each, see _advance): the error estimate, a stage's
# state, the two ends of a step taken again, the error's reference and scale, a sample's
# derivative and state, a derivative not kept.
R_ERR, R_STATE, R_ENDS, R_REF, R_MAG, R_SAMPLE_DY, R_SAMPLE_Y, R_DY = 0, 1, 2, 4, 5, 6, 7, 8
ROOM_ROWS = 9

# Rows of the right-hand side's ``work`` array beyond the body pass's (rrscore.compiled):
# the couplers' deflections and their rates, the speeds of a batch of vehicles with
# states, and the main reservoirs' rates after the air brake's draw.
W_D, W_D_DOT, W_V, W_AFTER = range(BODY_WORK_ROWS, BODY_WORK_ROWS + 4)
RHS_WORK_ROWS = BODY_WORK_ROWS + 4


@njit(cache=True)
def rhs_work(vehicles, couplings, reservoirs):  # pragma: no cover (compiled)
    """The ``work`` array :func:`_rhs` takes for a train of ``vehicles`` with
    ``couplings`` and an air brake drawing on ``reservoirs`` main reservoirs (from Python
    and from the loop alike)."""
    return np.zeros((RHS_WORK_ROWS, max(vehicles, couplings, reservoirs, 1)))


def _no_coupler(d, d_dot, z, params, force, dz):  # pragma: no cover (compiled)
    for i in range(force.size):
        force[i] = 0.0


def _no_states(t, v, s, inputs, ds):  # pragma: no cover (compiled)
    pass


@structref.register
class _KernelsType(types.StructRef):
    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


class _Kernels(structref.StructRefProxy):
    """The plugins' compiled functions, held where the compiled loop can call them (a
    function handed to numba from Python costs tens of microseconds per call; a struct
    holding it, about one). Shared, never copied: a run's snapshot keeps it as is."""

    def __deepcopy__(self, memo: dict) -> _Kernels:
        return self


structref.define_proxy(_Kernels, _KernelsType, ["coupler", "states", "steps", "setters"])
_STEPS = types.UniTuple(_CONTROL_FN, MAX_CONTROL_BATCHES)
_SETTERS = types.UniTuple(_SET_FN, MAX_CONTROL_BATCHES)
_KERNELS_TYPE = _KernelsType([("coupler", _COUPLER_FN),
                              ("states", types.UniTuple(_STATES_FN, MAX_STATE_BATCHES)),
                              ("steps", _STEPS), ("setters", _SETTERS)])


@njit(_KERNELS_TYPE(_COUPLER_FN, types.UniTuple(_STATES_FN, MAX_STATE_BATCHES), _STEPS,
                    _SETTERS), cache=True)
def _make_kernels(coupler, states, steps, setters):  # pragma: no cover (compiled)
    k = structref.new(_KERNELS_TYPE)
    k.coupler = coupler
    k.states = states
    k.steps = steps
    k.setters = setters
    return k


# ------------------------------------------------------------- right-hand side
# The right-hand side is compiled without numba's reference counting: a function with it
# takes an atomic increment and decrement of every array it is given, on entry and exit,
# which for the 27 arrays of a right-hand side cost about a fifth of one. Only the calls
# of the plugins' kernels keep it (through their function types they run ten times as
# slowly without), in small functions of their own given only what the kernel reads.
@njit(cache=True, _nrt=True)  # (explicit: called from code compiled without)
def _coupler_kernel(kern, d, d_dot, z, params, cf, dz):  # pragma: no cover (compiled)
    """The coupler model's ``force_kernel`` (see :data:`COUPLER_KERNEL`)."""
    kern.coupler(d, d_dot, z, params, cf, dz)


@njit(cache=True, _nrt=False)
def _coupler_forces(y, dy, cf, kern, lay, ctable, work):  # pragma: no cover (compiled)
    """Coupler forces into ``cf`` and the coupler states' rates into ``dy`` (as
    :meth:`Couplings.force_and_rates <rrscore.couplers.Couplings.force_and_rates>`); the
    deflections and their rates in rows :data:`W_D` and :data:`W_D_DOT` of ``work``."""
    sx, sv, nc, z0, zk, rigid = lay[0], lay[1], lay[2], lay[3], lay[4], lay[5]
    if nc == 0:
        return
    if rigid:  # nothing deflects; the body pass fills in the forces
        for i in range(nc):
            cf[i] = 0.0
        dz = dy[z0:z0 + zk * nc]
        for i in range(dz.size):
            dz[i] = 0.0
        return
    nominal = ctable[0]
    d = work[W_D, :nc]
    d_dot = work[W_D_DOT, :nc]
    # over views from 0 (an offset index keeps a loop scalar: see body_rates)
    x_ahead, x_behind = y[sx:sx + nc], y[sx + 1:sx + 1 + nc]
    v_ahead, v_behind = y[sv:sv + nc], y[sv + 1:sv + 1 + nc]
    for i in range(nc):
        d[i] = x_ahead[i] - x_behind[i] - nominal[i]
    for i in range(nc):
        d_dot[i] = v_ahead[i] - v_behind[i]
    _coupler_kernel(kern, d, d_dot, y[z0:z0 + zk * nc].reshape((zk, nc)), ctable[1:], cf,
                    dy[z0:z0 + zk * nc].reshape((zk, nc)))


@njit(cache=True, _nrt=False)
def _rhs(t, y, dy, cf, kern, lay, ctable, vs_lay, vs_index, vs_sign, inputs, air, bodies,
         held, frozen, direction, rates, work):  # pragma: no cover (compiled)
    """:meth:`TrainDynamics.rhs <rrscore.dynamics.TrainDynamics.rhs>` of the common case:
    couplers, the vehicle plugins' states, the air the air brake draws from main
    reservoirs (``air``: their states' indices and the rates), then the body pass, which
    writes what ``rates`` says (:data:`~rrscore.compiled.ALL_RATES`: every rate; a step's
    stages leave the zeros their buffer holds, and the second stage the energy flows, which
    nothing reads). ``work``: the intermediates' rows (:func:`rhs_work`), so that it
    allocates nothing."""
    _coupler_forces(y, dy, cf, kern, lay, ctable, work)
    if vs_lay.shape[0]:
        plugin_state_rates(t, y, dy, kern, lay[1], vs_lay, vs_index, vs_sign, inputs,
                        work[W_V])
    mr_index, mr_draw = air
    if mr_index.size:  # as numpy's dy[index] -= draw: read all, then write (the last wins)
        after = work[W_AFTER, :mr_index.size]
        for k in range(mr_index.size):
            after[k] = dy[mr_index[k]] - mr_draw[k]
        for k in range(mr_index.size):
            dy[mr_index[k]] = after[k]
    idx, knots, tables, static, axle_vehicle, inv_radius, axles = bodies
    body_rates(y, cf, dy, idx, knots, tables, static, held, frozen, direction,
               axle_vehicle.size if rates == ALL_RATES else 0, lay[5] == 1, work, rates)


@njit(cache=True)
def _rhs_flat(t, y, dy, cf, kern, lay, ctable, vs_lay, vs_index, vs_sign, in0, in1, in2,
              in3, mr_index, mr_draw, b_idx, knots, tables, static, axle_vehicle, inv_radius,
              axles, held, frozen, direction, work):  # pragma: no cover (compiled)
    """:func:`_rhs` with its arguments flat, for calls from Python."""
    _rhs(t, y, dy, cf, kern, lay, ctable, vs_lay, vs_index, vs_sign, (in0, in1, in2, in3),
         (mr_index, mr_draw), (b_idx, knots, tables, static, axle_vehicle, inv_radius, axles),
         held, frozen, direction, ALL_RATES, work)


# ---------------------------------------------------------------------- events
@njit(cache=True)
def _psi(law, coef, speeds, values, v):  # pragma: no cover (compiled)
    """Adhesion coefficient of the shipped forms (:func:`rrscore.adhesion.adhesion_law`):
    0 hyperbolic, 1 constant, 2 table."""
    speed = abs(v)
    if law == 0:
        return max(coef[0] + coef[1] / (coef[2] + coef[3] * speed) - coef[4] * speed, 0.0)
    if law == 1:
        return coef[0]
    return interp_one(speed, speeds, values)


@njit(cache=True, _nrt=False)
def _slip_margins(v, a, slip, slip_laws, laws_coef, laws_speeds, laws_values,
                  out):  # pragma: no cover (compiled)
    """The slip margins into ``out``: 1 for every axle, :func:`margin_one` for the loaded
    ones (``slip``: their rows; ``v``, ``a``: the vehicles' speeds and accelerations).
    Compiled without reference counting: each axle's law is read through three slices,
    and their counts' atomic increments and decrements cost more than the margins did
    where every axle is braked."""
    for k in range(out.size):
        out[k] = 1.0
    last_veh, last_law, psi = -1, -1, 0.0
    for j in range(slip.shape[1]):
        veh = int(slip[1, j])
        speed = v[veh]
        law = slip_laws[j]
        if veh != last_veh or law != last_law:  # (a vehicle's axles one after the other:
            size = int(laws_coef[law, 6])  # its adhesion coefficient taken once)
            psi = _psi(int(laws_coef[law, 0]), laws_coef[law, 1:6], laws_speeds[law, :size],
                       laws_values[law, :size], speed)
            last_veh, last_law = veh, law
        out[int(slip[0, j])] = margin_one(speed, a[veh], psi, slip[6, j], slip[7, j],
                                          slip[2, j], slip[3, j], slip[4, j], slip[5, j])


@njit(cache=True, _nrt=False)
def _events(y, f, cf, g, lay, frozen, direction, slip, slip_laws, laws_coef, laws_speeds,
            laws_values, kinks, ctable, break_force, coupler_watch):  # pragma: no cover
    """The event functions the Python path watches in the common case, one after the
    other into ``g``: standstill of the vehicles held by friction, the slip
    margins of the loaded axles (if any), the couplings' slack edges, their break
    margins (if any is watched). ``cf``: the coupler forces at ``y`` (from its right-hand
    side). Returns how many entries it wrote."""
    sx, sv, nc, nv = lay[0], lay[1], lay[2], lay[6]
    # standstill: always written (1 where no friction holds a vehicle), so the entries
    # stay in place as the held vehicles change
    v = y[sv:sv + nv]
    for i in range(nv):
        g[i] = v[i] * direction[i] if frozen[i] else 1.0
    n = nv
    if lay[7]:  # slip margins: 1 for every axle, margin_one for the loaded ones
        na = lay[8]
        _slip_margins(y[sv:], f[sv:], slip, slip_laws, laws_coef, laws_speeds, laws_values,
                      g[n:n + na])
        n += na
    if lay[9]:  # slack edges: deflection less each kink, per coupling
        nominal = ctable[0]
        nk = kinks.shape[1]
        x_ahead, x_behind = y[sx:sx + nc], y[sx + 1:sx + 1 + nc]
        edges = g[n:n + nc * nk]
        for i in range(nc):
            d = x_ahead[i] - x_behind[i] - nominal[i]
            for j in range(nk):
                edges[i * nk + j] = d - kinks[i, j]
        n += nc * nk
    if lay[10]:  # break margins
        margins = g[n:n + nc]
        for i in range(nc):
            margins[i] = break_force[i] - cf[i] if coupler_watch[i] else 1.0
        n += nc
    return n


@njit(cache=True, _nrt=False)
def _crossing(g0, g1, n, both_from, both_to):  # pragma: no cover (compiled)
    """Whether an entry of the first ``n`` fell through zero or, for the slack edges
    (entries ``both_from`` to ``both_to``), rose through it: as
    :func:`rrscore.integrator._any_crossing`."""
    # ors over every entry, no early exit nor range check per entry: vectorised (most
    # steps cross nothing, so every entry is looked at anyway)
    hit = 0
    for i in range(n):
        hit |= np.int64(g0[i] > 0.0) & np.int64(g1[i] < 0.0)
    lo = max(both_from, 0)
    a, b = g0[lo:max(min(both_to, n), lo)], g1[lo:max(min(both_to, n), lo)]
    for i in range(a.size):
        hit |= np.int64(a[i] < 0.0) & np.int64(b[i] > 0.0)
    return hit != 0


# ------------------------------------------------------------------- the loop
@njit(cache=True, _nrt=False)
def _reference(y, ref, lay, weights):  # pragma: no cover (compiled)
    """:meth:`TrainDynamics.reference <rrscore.dynamics.TrainDynamics.reference>` on the
    velocities, into ``ref`` (the spins' part is not needed: every axle rolls in the
    loop, and a rolling axle's spin is not under error control)."""
    sv, nv = lay[1], lay[6]
    mean = dot(weights, y[sv:sv + nv])
    out = ref[sv:sv + nv]
    for i in range(nv):
        out[i] = mean


@njit(cache=True, _nrt=False)
def _finite_in(row, ranges):  # pragma: no cover (compiled)
    """Whether the entries of ``row`` in the ranges (rows ``start, stop``) are finite: an
    or over all of them, with no early exit, so that the compiler vectorises it."""
    bad = 0
    for r in range(ranges.shape[0]):
        part = row[ranges[r, 0]:ranges[r, 1]]
        for c in range(part.size):
            x = part[c]
            bad |= np.int64((x - x) != 0.0)  # NaN where x is infinite or NaN
    return bad == 0


@njit(cache=True, _nrt=False)
def _stage_live(y, h, coef, ks, m, live, state):  # pragma: no cover (compiled)
    """:func:`rrscore.solvers._stage_state` on the entries in the ranges ``live`` only,
    written into ``state`` (its other entries are left as they are: no right-hand side
    reads them); the same arithmetic in the same order, so the same values. Returns
    whether the entries of the stage ``ks[m - 1]`` and of the state it forms are finite.
    (A stage not finite elsewhere makes the step's end not finite: the step fails as
    on the Python path, a stage later.) ``coef``: at least five coefficients (the inner
    stages': the step's end is :func:`_step_end`).

    Entry by entry, each sum whole in a register (``0 + a0 k0 + a1 k1 + ...``, added
    in the order the solver adds the rows), with a loop for each count of stages: so
    the compiler vectorises each, where a loop over the stages inside did not."""
    if not _finite_in(ks[m - 1], live):
        return False
    a0, a1, a2, a3, a4 = coef[0], coef[1], coef[2], coef[3], coef[4]
    bad = 0
    for r in range(live.shape[0]):
        lo, hi = live[r, 0], live[r, 1]
        yy, out = y[lo:hi], state[lo:hi]
        k0, k1, k2, k3, k4 = ks[0, lo:hi], ks[1, lo:hi], ks[2, lo:hi], ks[3, lo:hi], \
            ks[4, lo:hi]
        w = hi - lo
        if m == 1:
            for c in range(w):
                v = yy[c] + h * (0.0 + a0 * k0[c])
                out[c] = v
                bad |= np.int64((v - v) != 0.0)
        elif m == 2:
            for c in range(w):
                v = yy[c] + h * (0.0 + a0 * k0[c] + a1 * k1[c])
                out[c] = v
                bad |= np.int64((v - v) != 0.0)
        elif m == 3:
            for c in range(w):
                v = yy[c] + h * (0.0 + a0 * k0[c] + a1 * k1[c] + a2 * k2[c])
                out[c] = v
                bad |= np.int64((v - v) != 0.0)
        elif m == 4:
            for c in range(w):
                v = yy[c] + h * (0.0 + a0 * k0[c] + a1 * k1[c] + a2 * k2[c] + a3 * k3[c])
                out[c] = v
                bad |= np.int64((v - v) != 0.0)
        else:
            for c in range(w):
                v = yy[c] + h * (0.0 + a0 * k0[c] + a1 * k1[c] + a2 * k2[c] + a3 * k3[c]
                                 + a4 * k4[c])
                out[c] = v
                bad |= np.int64((v - v) != 0.0)
    return bad == 0


# The weights of a step's end and of its error estimate on the stages but the second
# (its weights are zero in both: the sums below leave its term out, which adds exactly
# zero where it is finite; a long train's step ends are paced by the stages they read)
_B0, _B2, _B3, _B4, _B5 = _DP_B[0], _DP_B[2], _DP_B[3], _DP_B[4], _DP_B[5]
_E0, _E2, _E3, _E4, _E5, _E6 = _DP_E[0], _DP_E[2], _DP_E[3], _DP_E[4], _DP_E[5], _DP_E[6]
assert _DP_B[1] == 0.0 and _DP_B[6] == 0.0 and _DP_E[1] == 0.0


@njit(cache=True, _nrt=False)
def _step_end(y, h, ks, ranges, out):  # pragma: no cover (compiled)
    """The step's end, ``y + h * (b @ ks)`` (:func:`rrscore.solvers._stage_state` with
    Dormand-Prince's weights ``b``), on the entries in the ``ranges`` only, written into
    ``out``: the same values where the stages are finite (the second stage's term, of
    weight zero, left out). Returns whether the entries of the sixth stage and of the
    end are finite (as :func:`_stage_live`, in the same pass)."""
    bad = 0
    for r in range(ranges.shape[0]):
        lo, hi = ranges[r, 0], ranges[r, 1]
        yy, o = y[lo:hi], out[lo:hi]
        k0, k2, k3, k4, k5 = ks[0, lo:hi], ks[2, lo:hi], ks[3, lo:hi], ks[4, lo:hi], \
            ks[5, lo:hi]
        for c in range(hi - lo):
            k = k5[c]
            v = yy[c] + h * (0.0 + _B0 * k0[c] + _B2 * k2[c] + _B3 * k3[c] + _B4 * k4[c]
                             + _B5 * k)
            o[c] = v
            bad |= np.int64((v - v) != 0.0) | np.int64((k - k) != 0.0)
    return bad == 0


@njit(cache=True, _nrt=False)
def _error_ratio(h, ks, atol, rtol, mag0, y1, ref1, controlled, work):  # pragma: no cover
    """The embedded error estimate (:func:`rrscore.solvers._weighted`) and its norm
    (:func:`rrscore.solvers._max_ratio`) over the entries in the ranges ``controlled``,
    the same arithmetic in the same order: the others (``atol = inf``) add nothing to
    the norm. Returns whether the estimate is finite there, and the norm. ``work``: room
    for the estimate (as long as ``y1``). The estimate entry by entry, as
    :func:`_stage_live` sums."""
    worst = 0.0
    for r in range(controlled.shape[0]):
        lo, hi = controlled[r, 0], controlled[r, 1]
        k0, k2, k3, k4, k5, k6 = (ks[0, lo:hi], ks[2, lo:hi], ks[3, lo:hi],
                                  ks[4, lo:hi], ks[5, lo:hi], ks[6, lo:hi])
        err = work[:hi - lo]
        bad = 0
        for c in range(hi - lo):  # (the second stage's weight is zero: see _step_end)
            e = (0.0 + _E0 * k0[c] + _E2 * k2[c] + _E3 * k3[c] + _E4 * k4[c]
                 + _E5 * k5[c] + _E6 * k6[c]) * h
            err[c] = e
            bad |= np.int64((e - e) != 0.0)
        if bad:
            return False, worst
        at, rt, m0, yy, rr = atol[lo:hi], rtol[lo:hi], mag0[lo:hi], y1[lo:hi], ref1[lo:hi]
        for c in range(hi - lo):
            a = abs(err[c])
            if a > 0.0:
                ratio = a / (at[c] + rt[c] * max(m0[c], abs(yy[c] - rr[c])))
                if not ratio <= worst:  # NaN wins, as in numpy's max
                    worst = ratio
    return True, worst


@njit(cache=True, _nrt=False)
def _step_factor(norm, rejected):  # pragma: no cover (compiled)
    """The factor on an accepted step's size for the next (as the solver sets it)."""
    factor = 5.0 if norm == 0 else min(5.0, 0.9 * norm ** (-1.0 / 5.0))
    return min(factor, 1.0) if rejected else factor


@njit(cache=True, _nrt=False)
def _step(t, y, f, h_next, t_bound, max_step, atol, rtol, weights, R, live,
          formed, controlled, ks, ref, mag0, cf, counts, y1):  # pragma: no cover (compiled)
    """One accepted Dormand-Prince step from ``(t, y, f)``, not past ``t_bound``, as
    :meth:`rrscore.solvers._Adaptive._step` takes it (stages into ``ks``; ``cf`` left
    at the coupler forces of the new state); the inner stages' states only on the
    entries ``live`` (:func:`_stage_live`), the step's end on the entries ``formed``
    (the wheels' read off the bodies), the error on the entries ``controlled``
    (:func:`_error_ratio`). Returns ``(ok, t1, h_next, h)`` (``h``
    the step's size, which the dense output takes: ``t1 - t`` may round); not ok
    where the Python path must take it (a stage not finite, the step size collapsing).
    ``counts[0]``, ``counts[1]``: right-hand sides and rejected trials, added to. ``R``:
    the right-hand side's arguments but the state, then room for its intermediates
    (:func:`rhs_work`), for the error estimate and for a stage's state (each as long as
    ``y``), and the ranges of entries whose rates are zero while the loop serves (kept
    as they are). ``y1``: where the step's end is written (as long as ``y``, not ``y``
    itself; its entries are all written where the step is ok). Compiled without numba's
    reference counting, as the right-hand side (see :func:`_rhs`), so it returns no
    array (the caller would let go of one it was never given)."""
    kern, lay, ctable, vs_lay, vs_index, vs_sign, inputs, air, bodies, held, frozen, \
        direction, work, err, state, still = R
    _reference(y, ref, lay, weights)
    for r in range(controlled.shape[0]):
        lo, hi = controlled[r, 0], controlled[r, 1]
        m0, yy, rr = mag0[lo:hi], y[lo:hi], ref[lo:hi]
        for c in range(hi - lo):
            m0[c] = abs(yy[c] - rr[c])
    exponent = -1.0 / 5.0
    h = min(h_next, max_step)
    rejected = False
    # a stage's state (``state``, from ``R``): only the entries ``live`` are formed (and
    # read by the right-hand side); the others are never read, so they are not copied
    while True:
        last = t + h >= t_bound
        if last:
            h = t_bound - t
        for r in range(formed.shape[0]):  # (the wheels' rates: the zeros ks holds, as f's)
            lo, hi = formed[r, 0], formed[r, 1]
            k0, ff = ks[0, lo:hi], f[lo:hi]
            for c in range(hi - lo):
                k0[c] = ff[c]
        for i in range(1, 6):
            if not _stage_live(y, h, _A[i], ks, i, live, state):
                return False, t, h_next, h
            _rhs(t + _DP_C[i] * h, state, ks[i], cf, kern, lay, ctable, vs_lay, vs_index,
                 vs_sign, inputs, air, bodies, held, frozen, direction,
                 MOTION_RATES if i == 1 else NONZERO_RATES, work)
        # the step's end on the entries ``formed``; the others, the wheels', are read off
        # the bodies below, once the step is accepted (every entry is written: no copy)
        if not _step_end(y, h, ks, formed, y1):
            return False, t, h_next, h
        _copy_ranges(y1, y, still)  # (rates zero while the loop serves: see StepLoop)
        _rhs(t + h, y1, ks[6], cf, kern, lay, ctable, vs_lay, vs_index, vs_sign, inputs,
             air, bodies, held, frozen, direction, NONZERO_RATES, work)
        counts[0] += 6
        # (outside ``formed``, the wheels' columns: the zeros the buffer holds)
        if not _finite_in(ks[6], formed):
            return False, t, h_next, h
        _reference(y1, ref, lay, weights)
        finite, norm = _error_ratio(h, ks, atol, rtol, mag0, y1, ref, controlled, err)
        if not finite:
            return False, t, h_next, h
        if norm <= 1.0:
            # the rolling axles' spins and angles: read off the bodies, not integrated
            # (as the integrator fills them after each step of the Python path)
            idx, _, _, _, axle_vehicle, inv_radius, axles = bodies
            fill_rolling(y, y1, axles, axle_vehicle, inv_radius, idx[0], idx[1], idx[2],
                         idx[3])
            if not last:
                h_next = min(h * _step_factor(norm, rejected), max_step)
            return True, (t_bound if last else t + h), h_next, h
        factor = max(0.2, 0.9 * norm ** exponent)
        counts[1] += 1
        rejected = True
        h *= factor
        if h < MIN_STEP * max(1.0, abs(t)):
            return False, t, h_next, h


@njit(cache=True)
def _dense_state(t, t0, t1, h, y0, y1, f0, f1, ks, whole, ranges,
                 out):  # pragma: no cover (compiled)
    """The state at ``t`` in a committed step from ``(t0, y0)`` to ``(t1, y1)``, on the
    entries in the ``ranges`` (rows ``start, stop``) of ``out``, as
    :class:`~rrscore.integrator.Segment` gives it for the step (:meth:`Steps.segment`):
    the method's dense output (:func:`rrscore.solvers.dp_dense`, ``h`` the step's size)
    where the step is ``whole``, else the cubic Hermite between its ends (derivatives
    ``f0``, ``f1``); ``y0``'s own entries at or before ``t0``. The same arithmetic in
    the same order, so the same values. (The segment reads the rolling wheels' entries
    off the bodies after: :func:`rrscore.wheelsets.fill_rolling`.)"""
    if t <= t0:
        for r in range(ranges.shape[0]):
            lo, hi = ranges[r, 0], ranges[r, 1]
            o, a0 = out[lo:hi], y0[lo:hi]  # views from 0: see _coupler_forces
            for c in range(hi - lo):
                o[c] = a0[c]
        return
    if whole:
        w = dp_dense_weights((t - t0) / h)
        for r in range(ranges.shape[0]):
            lo, hi = ranges[r, 0], ranges[r, 1]
            acc = np.zeros(hi - lo)  # a fresh array, which the compiler vectorises over
            for k in range(7):  # row by row: the stages are rows of ks
                a = w[k]
                row = ks[k, lo:hi]
                for c in range(hi - lo):
                    acc[c] += a * row[c]
            o, a0 = out[lo:hi], y0[lo:hi]
            for c in range(hi - lo):
                o[c] = a0[c] + acc[c] * h
        return
    hh = t1 - t0
    s = (t - t0) / hh
    a = (1 + 2 * s) * (1 - s) ** 2
    b = s * (1 - s) ** 2 * hh
    c2 = s * s * (3 - 2 * s)
    d = s * s * (s - 1) * hh
    for r in range(ranges.shape[0]):
        lo, hi = ranges[r, 0], ranges[r, 1]
        o, p0, q0, p1, q1 = out[lo:hi], y0[lo:hi], f0[lo:hi], y1[lo:hi], f1[lo:hi]
        for c in range(hi - lo):
            o[c] = a * p0[c] + b * q0[c] + c2 * p1[c] + d * q1[c]


@njit(cache=True, _nrt=False)
def _copy_ranges(dst, src, ranges):  # pragma: no cover (compiled)
    """``src``'s entries in the ``ranges`` (rows ``start, stop``) copied into ``dst``."""
    for r in range(ranges.shape[0]):
        lo, hi = ranges[r, 0], ranges[r, 1]
        a, b = dst[lo:hi], src[lo:hi]
        for c in range(hi - lo):
            a[c] = b[c]


@njit(cache=True)
def _sample_states(rec, T, Y, F, KS, H, WHOLE, formed, still, idx, axle_vehicle, inv_radius,
                   axles, out):  # pragma: no cover (compiled)
    """The states of the samples a call recorded (rows ``rec``, see :func:`_advance`)
    into the rows of ``out``: a buffer row, or the state on a step's interpolant
    (:func:`_dense_state`, as the loop took it) on the entries ``formed``, those
    ``still`` as at the step's start, the rolling wheels' filled in. (Arguments flat:
    numba types a tuple from Python slowly.)"""
    for r in range(rec.shape[0]):
        j = int(rec[r, 1])
        if rec[r, 4] == 0.0 or rec[r, 0] <= T[j]:
            copy_into(out[r], Y[j])
        else:
            _dense_state(rec[r, 0], T[j], T[j + 1], H[j], Y[j], Y[j + 1], KS[j, 0],
                         F[j + 1], KS[j], WHOLE[j], formed, out[r])
            _copy_ranges(out[r], Y[j], still)
            fill_rolling(Y[j], out[r], axles, axle_vehicle, inv_radius, idx[0], idx[1],
                         idx[2], idx[3])


@njit(cache=True)
def _sample_entries(rec, T, Y, F, KS, H, WHOLE, at, row, out):  # pragma: no cover
    """Entries ``at[:, 0]`` (ranges of one entry each, none a wheel's) of the samples'
    states, as :func:`_sample_states` forms them, into the columns of ``out``;
    ``row``: room for a state."""
    for r in range(rec.shape[0]):
        j = int(rec[r, 1])
        if rec[r, 4] == 0.0 or rec[r, 0] <= T[j]:
            for q in range(at.shape[0]):
                out[r, q] = Y[j, at[q, 0]]
        else:
            _dense_state(rec[r, 0], T[j], T[j + 1], H[j], Y[j], Y[j + 1], KS[j, 0],
                         F[j + 1], KS[j], WHOLE[j], at, row)
            for q in range(at.shape[0]):
                out[r, q] = row[at[q, 0]]


@njit(cache=True)
def _record_sample(samples, cstate, watch, where, kind, traction):  # pragma: no cover
    """The run's next sample (``watch[W_SAMPLE_K]``) recorded in row ``cstate[5]`` of
    ``samples``: its time, where its state is, its ``kind`` and drive force (see
    :func:`_advance`; the caller writes the acceleration); both counts moved on.
    Returns the row."""
    r = cstate[5]
    samples[r, 0] = watch[W_SAMPLE_K] * watch[W_SAMPLE_DT]
    samples[r, 1] = where
    samples[r, 3] = traction
    samples[r, 4] = kind
    cstate[5] += 1
    watch[W_SAMPLE_K] += 1.0
    return r


@njit(cache=True)
def _dense_deflection(t, t0, h, y0, ks, i, sx, nominal):  # pragma: no cover (compiled)
    """Deflection of coupling ``i`` at ``t`` on the step's continuous extension
    (:func:`rrscore.solvers.dp_dense`, for the two positions it needs)."""
    w = dp_dense_weights((t - t0) / h)
    x = np.empty(2)
    for m in range(2):
        c = sx + i + m
        acc = 0.0
        for k in range(7):
            acc += w[k] * ks[k, c]
        x[m] = y0[c] + h * acc
    return x[0] - x[1] - nominal[i]


@njit(cache=True)
def _illinois(t0, h, y0, ks, i, kink, sx, nominal, a, b, ga, gb):  # pragma: no cover
    """:meth:`rrscore.integrator.Integrator._illinois` (its very steps) on a slack edge's
    function."""
    sign0 = ga > 0
    tol = EVENT_RTOL * max(b - a, 1e-300)
    side = ZERO
    for _ in range(ILLINOIS_ITERATIONS):
        if b - a <= tol or gb == ga:
            break
        c = illinois_point(a, b, ga, gb)
        gc = _dense_deflection(c, t0, h, y0, ks, i, sx, nominal) - kink
        a, b, ga, gb, side = illinois_update(a, b, ga, gb, c, gc, sign0, side)
    return a, b


@njit(cache=True)
def _locate_slack(t0, t1, h, y0, ks, g0, g1, first, nk, sx, nominal,
                  kinks):  # pragma: no cover (compiled)
    """As :meth:`rrscore.integrator.Integrator._locate` where only slack edges (entries
    from ``first`` on, ``nk`` per coupling) crossed in the step of size ``h`` from ``t0``
    to ``t1``: the upper end of the final bracket and the entry located."""
    m = kinks.shape[0] * nk
    best, jbest = np.inf, -1
    for e in range(m):
        a, b = g0[first + e], g1[first + e]
        if (a > 0.0 and b < 0.0) or (a < 0.0 and b > 0.0):
            est = t0 + (t1 - t0) * a / (a - b)
            if est < best:
                best, jbest = est, e
    j = jbest
    lo, hi = t0, t1
    for _ in range(4):
        i, k = j // nk, j % nk
        g_hi = _dense_deflection(hi, t0, h, y0, ks, i, sx, nominal) - kinks[i, k]
        lo, hi = _illinois(t0, h, y0, ks, i, kinks[i, k], sx, nominal, lo, hi,
                           g0[first + j], g_hi)
        if not lo > t0:
            break
        nxt = -1
        for e in range(m):  # one crossing earlier, at lo already?
            a, b = g0[first + e], g1[first + e]
            if not ((a > 0.0 and b < 0.0) or (a < 0.0 and b > 0.0)):
                continue
            ii, kk = e // nk, e % nk
            g = _dense_deflection(lo, t0, h, y0, ks, ii, sx, nominal) - kinks[ii, kk]
            if (a > 0.0 and g < 0.0) or (a < 0.0 and g > 0.0):
                nxt = e
                break
        if nxt < 0:
            break
        j = nxt
        lo, hi = t0, lo
    return hi, j


@njit(cache=True)
def _advance(t, t_end, h_next, max_step, max_steps, atol, rtol, weights, kern, lay, ctable,
             vs_lay, vs_index, vs_sign, in0, in1, in2, in3, mr_index, mr_draw, b_idx, knots,
             tables, static, axle_vehicle, inv_radius, axles, held, frozen, direction,
             has_friction,
             slip, slip_laws, laws_coef, laws_speeds, laws_values, kinks, break_force,
             coupler_watch, live, formed, still, controlled, T, Y, F, KS, H, WHOLE, CF, G_OUT,
             counts, cstate, cbuf, save, clay, cint, driver, sections,
             body_force, body_resist, axle_torque,
             brake_own, axle_brake, rail_factor, rail_condition, rolling, vconst,
             loaded_vehicle, watch, f_restart, ks2, samples, room, g_room, work, c_work,
             cf_room, f_start):  # pragma: no cover (compiled)
    """Dormand–Prince steps from ``(T[0], Y[0], f_start)`` towards ``t_end``, as the
    integrator takes them on the Python path. Step ``j`` goes from row ``j`` to row
    ``j + 1`` of ``T, Y, F``, its stages in ``KS[j]``; ``WHOLE[j]`` false where it
    ends at a slack edge reached in more than one step (its dense output is then the
    cubic Hermite, as the Python path's).

    A step in which only slack edges crossed (they have no action) is handled here as
    the integrator does it: the earliest crossing located on the dense output, the
    step taken again to end there unless every crossing falls in its last
    :data:`~rrscore.integrator.KINK_END`, the edges reached counted; a step about to
    meet an edge is cut to end just past it (:func:`~rrscore.integrator.kink_bound`).
    Any other crossing hands the step to the Python path.

    ``live``, ``formed``, ``still``, ``controlled``: the ranges (rows ``start, stop``) of
    the state's entries a right-hand side reads, of those a step's end forms (all but the
    wheels', read off the bodies: :func:`rrscore.wheelsets.fill_rolling`, and those
    ``still``, whose rates are zero while the loop serves: the step leaves them as they
    are) and of those under error control (a finite ``atol``). ``ks2``: room for the
    stages of a step taken again to end on a slack edge (its wheels' columns zero, as
    ``KS``'s: the stages leave them).
    Returns ``(status, steps committed, next step size)``. ``counts``: right-hand
    sides, rejected trials, solver steps (with the ones taken again), slack edges.

    ``lay[12]`` set: a restart (the inputs changed at a control step). ``F[0]`` is then
    computed here, and the slip margins checked before any step, as
    :meth:`rrscore.integrator.Integrator.restart` checks its condition events: if one is
    negative, no step is taken and the status is :data:`CONDITION`.

    Control steps (:mod:`rrscore.controlsteps`): ``cstate`` holds the control steps
    taken, the next control time's index and the last index the loop may take (the
    times are index times ``watch``'s control step, as the run counts them). At each of
    them the loop takes the control step (:func:`~rrscore.controlsteps.control_step`)
    and goes on as a new call would: a restart where the inputs changed (``cstate[3]``
    1 until a step follows), the event values taken afresh. At ``t_end`` itself (a
    sample is due there) it takes the control step and ends the call, the restart left
    to the run (``cstate[3]`` 2). A control step handed back ends the call there with
    :data:`HANDED`.

    Samples (``watch[W_SAMPLE_DT]`` set): the loop records what the run's row needs
    beyond the state at the run's sample times (``watch[W_SAMPLE_K]`` times the
    interval, counted on) that fall in the steps it takes or on the control times it
    takes. ``samples`` row ``cstate[5]`` gets the sample time, where the state is, the
    lead's acceleration (the right-hand side at that state with the inputs then, as the
    run evaluates it) and the drive force (:func:`~rrscore.dynamics.traction_total`),
    and the kind of sample: 1 inside a step (before its end less 1e-12 s, as
    :meth:`Run._steps <rrscore.run.Run._steps>` assigns them; the state on the step's
    interpolant, :func:`_dense_state`; column 1 the step), 0 at a control time the loop
    takes, but for ``t_end`` (within 1e-9 s, as :meth:`Run._sample
    <rrscore.run.Run._sample>` takes it; after the control step and its restart; column
    1 the buffer row of the state). The call ends (:data:`FULL`) at a control time where
    the rows left might not hold the samples up to the next one."""
    # arguments come flat: numba types a tuple from Python slowly, an array quickly
    inputs = (in0, in1, in2, in3)
    air = (mr_index, mr_draw)
    bodies = (b_idx, knots, tables, static, axle_vehicle, inv_radius, axles)
    nc = lay[2]
    # the right-hand side's intermediates, the steps' error estimates and their stages'
    # states, the ends of a step taken again to end on a slack edge, the error's
    # reference and scale, the samples' states and derivatives (``room``, rows of a state;
    # the reference's zero outside the speeds), the event values, the control steps' room
    # (their kernels' positions and speeds, the held inputs' sums): the loop's own, kept
    # between calls (for a long train, fresh arrays cost their pages at every call)
    R = (kern, lay, ctable, vs_lay, vs_index, vs_sign, inputs, air, bodies, held, frozen,
         direction, work, room[R_ERR], room[R_STATE], still)
    sx = lay[0]
    nominal = ctable[0]
    cf, s_cf = cf_room[0], cf_room[1]
    nk = kinks.shape[1]
    g0, g1 = g_room[0], g_room[1]
    slack_from = lay[6] + (lay[8] if lay[7] else 0)
    slack_to = slack_from + (nc * nk if lay[9] else 0)
    ref, mag0 = room[R_REF], room[R_MAG]
    tmp = np.zeros(2, dtype=np.int64)
    landed = np.zeros(nc * nk, dtype=np.bool_)
    steps = 0
    status = DONE
    fresh = lay[12] != 0
    resume = lay[11] != 0
    f0 = F[0] if fresh else f_start  # the derivative the next step starts from
    dc = watch[W_DT]
    sampling = watch[W_SAMPLE_DT] > 0.0
    pending = -1  # a sample whose acceleration the coming restart's derivative gives
    s_dy, s_y = room[R_SAMPLE_DY], room[R_SAMPLE_Y]  # a sample's derivative and state
    # the drive force of the samples: of the held inputs, so the same until a control step
    # with new inputs; taken when a sample needs it (most control steps are not followed
    # by a sample before the next)
    traction = 0.0
    traction_due = sampling
    t_per = np.empty(body_force.size)  # (traction_loaded's room)
    checked = False  # a control step taken in this call (see control_step)
    while True:
        # (re)starting at row ``steps``: at the call's start, or at a control time the
        # loop took (with new inputs: ``fresh``)
        y = Y[steps]
        if fresh:  # a restart: the derivative at the start (and the coupler forces)
            _rhs(t, y, f0, cf, kern, lay, ctable, vs_lay, vs_index, vs_sign, inputs, air,
                 bodies, held, frozen, direction, ALL_RATES, work)
            counts[0] += 1
            if pending >= 0:  # the sample recorded here: its acceleration is this one's
                samples[pending, 2] = f0[lay[1]]
                pending = -1
        elif lay[10]:  # the break margins need the coupler forces at the start
            _rhs(t, y, room[R_DY], cf, kern, lay, ctable, vs_lay, vs_index, vs_sign,
                 inputs, air, bodies, held, frozen, direction, ALL_RATES, work)
        ng = _events(y, f0, cf, g0, lay, frozen, direction, slip, slip_laws, laws_coef,
                     laws_speeds, laws_values, kinks, ctable, break_force, coupler_watch)
        if fresh and lay[7]:  # a restart: does an axle's slip margin hold below zero now?
            for j in range(lay[6], lay[6] + lay[8]):
                if g0[j] < 0.0:
                    status = CONDITION
            if status == CONDITION:
                break
        if resume and lay[9]:  # going on after a full buffer: the edges as the last call
            for e in range(nc * nk):  # left them (those just reached beyond their surface)
                g0[slack_from + e] = G_OUT[e]
        fresh = resume = False
        # steps to the next control time the loop takes (if any), else to t_end
        t_target = min(t_end, cstate[1] * dc) if cstate[1] <= cstate[2] else t_end
        while t < t_target:
            if steps == max_steps:
                status = FULL
                break
            y = Y[steps]
            f = f0
            ks = KS[steps]
            tmp[:] = 0
            t_bound = t_target
            if slack_to > slack_from:  # a step about to meet a slack edge ends just past it
                t_bound = kink_bound(t, t_target, h_next, max_step, y, f, g0, slack_from, nk,
                                     sx, lay[1], nominal, kinks)
            # the step's end straight into the buffer's next row
            y1 = Y[steps + 1]
            f_end = ks[6]
            ok, t1, h_new, h_used = _step(t, y, f, h_next, t_bound, max_step, atol, rtol,
                                          weights, R, live, formed, controlled, ks, ref, mag0,
                                          cf, tmp, y1)
            if not ok:
                status = PYTHON
                break
            ng = _events(y1, f_end, cf, g1, lay, frozen, direction, slip, slip_laws, laws_coef,
                         laws_speeds, laws_values, kinks, ctable, break_force, coupler_watch)
            whole = True
            n_edges = 0
            resteps = 0
            located = False
            if _crossing(g0, g1, ng, slack_from, slack_to):
                located = True
                # only slack edges (no action) are handled here
                if _crossing(g0, g1, slack_from, ZERO, ZERO) or _crossing(
                        g0[slack_to:ng], g1[slack_to:ng], ng - slack_to, ZERO, ZERO):
                    status = CROSSING
                    break
                t_star, j = _locate_slack(t, t1, h_used, y, ks, g0, g1, slack_from, nk, sx,
                                          nominal, kinks)
                near_start = t_star - t <= EVENT_RTOL * max(1.0, abs(t))
                near_end = t1 - t_star <= KINK_END * (t1 - t)  # the step stands
                # ``resteps``: solver steps taken again (the crossing one counts too, as on
                if t_star < t1 and not near_start and not near_end:  # the Python path)
                    # take it again, shorter, to end on the edge (as Integrator._step_to)
                    ta, ya, fa, ha = t, y, f, h_new
                    while ta < t_star:  # (the ends in turn in two rows of ``room``)
                        yb = room[R_ENDS + resteps % 2]
                        ok, tb, ha, h_used = _step(ta, ya, fa, ha, t_star, max_step, atol, rtol,
                                                   weights, R, live, formed, controlled, ks2,
                                                   ref, mag0, cf, tmp, yb)
                        if not ok:
                            break
                        resteps += 1
                        ta, ya, fa = tb, yb, ks2[6].copy()
                    if not ok:
                        status = CROSSING  # the Python path takes it all
                        break
                    whole = resteps == 1
                    if whole:
                        copy_rows(ks, ks2)
                    t1, y1, h_new, f1 = ta, ya, ha, fa
                else:
                    f1 = f_end.copy()
                # the edges reached now: crossed, or on the surface within rounding
                for e in range(nc * nk):
                    landed[e] = False
                    a, b = g0[slack_from + e], g1[slack_from + e]
                    if not ((a > 0.0 and b < 0.0) or (a < 0.0 and b > 0.0)):
                        continue
                    i, k = e // nk, e % nk
                    g_now = y1[sx + i] - y1[sx + i + 1] - nominal[i] - kinks[i, k]
                    crossed = (a > 0.0 and g_now < 0.0) or (a < 0.0 and g_now > 0.0)
                    on = crossed or abs(g_now) <= ON_SURFACE * abs(a - b)
                    if near_start and e == j:
                        on = True
                    if on:
                        n_edges += 1
                        landed[e] = not crossed
                counts[2] += resteps
                counts[3] += n_edges
            else:
                f1 = f_end
            counts[0] += tmp[0]
            counts[1] += tmp[1]
            counts[2] += 1
            h_next = h_new
            steps += 1
            T[steps] = t1
            if resteps:  # (else the step's end is there already)
                copy_into(Y[steps], y1)
            if not whole:  # (else its derivative is the step's last stage, KS[steps - 1, 6])
                copy_into(F[steps], f1)
            f0 = f1
            cstate[3] = 0  # a step taken since the loop's last restart
            WHOLE[steps - 1] = whole
            H[steps - 1] = h_used
            copy_into(CF[steps - 1], cf)  # the coupler forces at the new state (its last)
            t = t1
            # as Bodies.commit: friction directions held from the new state
            speeds = y1[lay[1]:lay[1] + lay[6]]  # a view from 0: see _coupler_forces
            for i in range(speeds.size):
                v = speeds[i]
                direction[i] = 1.0 if v > 0.0 else (-1.0 if v < 0.0 else 0.0)
                frozen[i] = has_friction[i] and direction[i] != 0.0
            # the sample times inside the step (before its end less 1e-12 s, as the run
            # assigns them to steps): the lead's acceleration at the state on the step's
            # interpolant (the right-hand side, with the inputs of the control step
            # before: it reads the entries ``live`` alone, so only these are formed; the
            # run forms the whole state, :func:`_sample_states`) and the drive force
            while sampling and watch[W_SAMPLE_K] * watch[W_SAMPLE_DT] < t1 - 1e-12:
                ts = watch[W_SAMPLE_K] * watch[W_SAMPLE_DT]
                j = steps - 1
                _dense_state(ts, T[j], T[j + 1], H[j], Y[j], Y[j + 1], KS[j, 0], F[j + 1],
                             KS[j], WHOLE[j], live, s_y)
                _rhs(ts, s_y, s_dy, s_cf, kern, lay, ctable, vs_lay, vs_index, vs_sign,
                     inputs, air, bodies, held, frozen, direction, MOTION_RATES, work)
                if traction_due:
                    traction = traction_loaded(body_force, slip, t_per)
                    traction_due = False
                r = _record_sample(samples, cstate, watch, j, 1.0, traction)
                samples[r, 2] = s_dy[lay[1]]
            if located:
                # as the Python path after an event: fresh values, with the edges that landed
                # on their surface put beyond it, so the next step does not find them again
                ng = _events(y1, f1, cf, g0, lay, frozen, direction, slip, slip_laws,
                             laws_coef, laws_speeds, laws_values, kinks, ctable, break_force,
                             coupler_watch)
                for e in range(nc * nk):
                    if landed[e]:
                        g = g0[slack_from + e]
                        g0[slack_from + e] = (1.0 if g1[slack_from + e] > 0 else -1.0) * max(
                            abs(g), 1e-300)
            else:
                g0, g1 = g1, g0  # as the Python path: the values before the commit above
        if status != DONE or cstate[1] > cstate[2] or cstate[1] * dc != t:
            break  # at t_end, with no control step of the loop's here
        # a control time the loop takes itself (rrscore.controlsteps), once the steps
        # before it are handed on if the buffer is full, or the samples if the rows left
        # might not hold those up to the next control time (the samples here, inside the
        # steps to the next and at it; a call starts with room for them)
        if steps == max_steps or (sampling and cstate[5] + int(dc / watch[W_SAMPLE_DT]) + 3
                                  > samples.shape[0]):
            status = FULL
            break
        try:
            code = control_step(t, Y[steps], sx, lay[1], kern, cbuf, save, clay, cint,
                                driver, sections, inputs, body_force, body_resist,
                                axle_torque, brake_own, axle_brake, rail_factor,
                                rail_condition, rolling, vconst, loaded_vehicle, slip,
                                held, has_friction,
                                (RIGID if lay[5] else 0) | (CHECKED if checked else 0),
                                watch, c_work)
        except Exception:  # a kernel raised: its writes undone, the rest of the run's
            # control steps Python's (whose step names the plugin)
            copy_writable(cbuf, save, clay)
            copy_into(driver[0], driver[1])
            cstate[4] = 1
            code = HANDED_BACK
        if code == HANDED_BACK:  # the Python path takes this control step, and the rest
            cstate[2] = -1
            status = HANDED
            break
        cstate[0] += 1
        cstate[1] += 1
        checked = True
        if sampling and code == RESTARTED:  # new inputs (KEPT: none changed)
            traction_due = True
        if t >= t_end:  # a sample is due here: the run takes it, then the restart
            if code == RESTARTED:
                cstate[3] = 2
            break
        if code == RESTARTED:  # as Integrator.restart: friction held with the new sums
            fresh = True
            f0 = f_restart  # the step before keeps its own end's derivative in F
            cstate[3] = 1  # a restart no step has followed yet
            for i in range(lay[6]):
                frozen[i] = has_friction[i] and direction[i] != 0.0
        if sampling and abs(watch[W_SAMPLE_K] * watch[W_SAMPLE_DT] - t) <= 1e-9:
            if traction_due:
                traction = traction_loaded(body_force, slip, t_per)
                traction_due = False
            r = _record_sample(samples, cstate, watch, steps, 0.0, traction)
            if fresh:  # the restart's derivative, taken next at the same state and inputs
                pending = r
            else:
                _rhs(t, Y[steps], s_dy, s_cf, kern, lay, ctable, vs_lay, vs_index, vs_sign,
                     inputs, air, bodies, held, frozen, direction, ALL_RATES, work)
                samples[r, 2] = s_dy[lay[1]]
    for e in range(nc * nk):  # the slack edges' values the next step starts from
        G_OUT[e] = g0[slack_from + e] if lay[9] else 0.0
    return status, steps, h_next


# --------------------------------------------------------------- Python side
def _law_row(law: Callable) -> tuple[list[float], np.ndarray, np.ndarray] | None:
    """An adhesion law's compiled form (:func:`_psi`): its row and table, or None."""
    form = getattr(law, "compiled", None)
    if form is None:
        return None
    kind, coef, speeds, values = form
    return [float(kind), *coef, float(len(speeds))], speeds, values


def _kernel_is_current(cls: type) -> bool:
    """Whether ``cls`` has a ``force_kernel`` that stands for its force law: defined in
    the class that defines ``force``, ``rates`` and ``force_and_rates``, or below it. A
    subclass that overrides one of them inherits a kernel that no longer computes what
    it does, and runs on the Python path."""
    if getattr(cls, "force_kernel", None) is None:
        return False

    def defining(name: str) -> type:
        return next(c for c in cls.__mro__ if name in c.__dict__)
    kernel = defining("force_kernel")
    return all(issubclass(kernel, defining(name))
               for name in ("force", "rates", "force_and_rates", "kernel_params"))


class LoopSamples:
    """The samples one call of the loop recorded in its steps and at the control times
    it took (see :func:`_advance`), for the run's time series: their times, the lead
    vehicle's position, speed and acceleration, the rear vehicle's position and the
    train's drive force, one value each; the whole states there on demand
    (:meth:`states`: most rows need none of it), while the loop's buffers still hold
    the call's steps, that is until it runs again."""

    __slots__ = ("t", "lead_x", "lead_v", "rear_x", "accel", "traction", "_form", "_states")

    def __init__(self, t: np.ndarray, entries: np.ndarray, accel: np.ndarray,
                 traction: np.ndarray, form: Callable[[], np.ndarray]) -> None:
        self.t, self.accel, self.traction = t, accel, traction
        self.lead_x, self.lead_v, self.rear_x = entries[:, 0], entries[:, 1], entries[:, 2]
        self._form = form
        self._states: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.t)

    def states(self) -> np.ndarray:
        """The states at the samples, one row each (formed at the first call)."""
        if self._states is None:
            self._states = self._form()
        return self._states


class Steps:
    """The steps one call of the loop took, as arrays: ``k + 1`` times ``t``, states
    ``y`` and derivatives ``f`` (rows; a whole step's derivative at its end is its last
    stage, ``ks[j, 6]``, and only a step that is not whole has it in ``f[j + 1]``; a
    step's derivative at its start is its first stage, ``ks[j, 0]``), and per step its
    size ``h``, whether it is ``whole`` (else it ends at a slack edge reached in several
    steps and its dense output is the cubic Hermite), its stages ``ks`` (the loop's
    buffer) and the coupler forces at its end (rows of ``coupler_forces``; None for a train of one
    vehicle); the lead's position and speed at each time (``lead_x``, ``lead_v``; ``sx``,
    ``sv``: the bodies' blocks of the state). Consumers that want the Python path's view
    take :meth:`segment`. (:class:`rrscore.rigidloop.BodySteps` has the same reading
    side, for a rigid train taken as one body.)"""

    __slots__ = ("t", "y", "f", "h", "whole", "ks", "coupler_forces", "fill", "_sx",
                 "lead_x", "lead_v")

    def __init__(self, t: np.ndarray, y: np.ndarray, f: np.ndarray, h: np.ndarray,
                 whole: np.ndarray, ks: np.ndarray, coupler_forces: np.ndarray | None,
                 fill: Callable[[np.ndarray, np.ndarray], None] | None, sx: slice,
                 sv: slice) -> None:
        self.t, self.y, self.f, self.h, self.whole = t, y, f, h, whole
        self.ks, self.coupler_forces = ks, coupler_forces
        #: Fills in a state interpolated within a step what is not integrated (the
        #: rolling axles' spins and angles), as :class:`~rrscore.integrator.Segment`.
        self.fill = fill
        self._sx = sx
        self.lead_x, self.lead_v = y[:, sx.start], y[:, sv.start]

    def __len__(self) -> int:
        return len(self.h)

    def coupling_x(self, half: np.ndarray) -> np.ndarray:
        """Each coupling's position (the rear end of the vehicle ahead of it; ``half``:
        the vehicles' half lengths) at each step's end, one row per step."""
        return self.y[1:, self._sx][:, :-1] - half[:-1]

    def segment(self, j: int) -> Segment:
        """Step ``j`` as a :class:`~rrscore.integrator.Segment`, with the method's dense
        output where the step is whole."""
        t0 = float(self.t[j])
        dense = (partial(dp_dense, t0=t0, h=float(self.h[j]), y0=self.y[j], ks=self.ks[j])
                 if self.whole[j] else None)
        # the derivative at the step's start is its first stage: ``f[j]`` ends the step
        # before, which differs where the loop changed the inputs at a control step
        return Segment(t0, self.y[j], self.ks[j, 0], float(self.t[j + 1]), self.y[j + 1],
                       self.ks[j, 6] if self.whole[j] else self.f[j + 1], dense,
                       None if self.coupler_forces is None else self.coupler_forces[j],
                       self.fill)

    def __iter__(self) -> Iterator[Segment]:
        return (self.segment(j) for j in range(len(self)))


class StepLoop:
    """The compiled step loop bound to one run's solver and dynamics.

    Built by :meth:`build`, which returns None where the train or the solver can never
    use it; :meth:`applies` says whether it can now (modes change at events).
    """

    DONE, CROSSING, PYTHON, FULL, CONDITION, HANDED = (DONE, CROSSING, PYTHON, FULL,
                                                       CONDITION, HANDED)

    def __init__(self, solver: DormandPrince45, dyn: TrainDynamics,
                 coupler: Kernel | None, coupler_params: np.ndarray,
                 state_kernels: list[Kernel], laws: list) -> None:
        self.solver, self.dyn = solver, dyn
        tr, cp, vs = dyn.train, dyn.couplings, dyn.vehicle_states
        no_states = compile_kernel(_no_states)
        calls = [k.call for k in state_kernels]
        calls += [no_states.call] * (MAX_STATE_BATCHES - len(calls))
        #: The control steps the loop can take itself (None: every one is Python's).
        self.control = ControlSteps.build(dyn)
        ctl = self.control
        self._kernels = _make_kernels(
            (coupler or compile_kernel(_no_coupler, COUPLER_KERNEL)).call, tuple(calls),
            ControlSteps.no_kernels() if ctl is None else ctl.kernels,
            ControlSteps.no_setters() if ctl is None else ctl.setters)
        # control steps taken in this advance, the next control time's index, the last
        # index the loop may take, a restart no step has followed yet, a kernel raised,
        # samples recorded in the last call
        self._cstate = np.array([0, 0, -1, 0, 0, 0], dtype=np.int64)
        self._vconst = np.zeros((2, 0))
        if ctl is None:
            self._control_args = (np.zeros(0), np.zeros(0),
                                  np.zeros((0, LAYOUT_COLUMNS), np.int64),
                                  np.zeros(0, np.int64),
                                  np.zeros((3, max(DRIVER_STATE_SIZE, DRIVER_PARAMS_SIZE))))
            self._ahead_watch = np.zeros(WATCH_SIZE)
        else:
            self._control_args = (ctl.cbuf, ctl.save, ctl.clay, ctl.cint, ctl.driver)
            self._ahead_watch = ctl.watch
        #: Whether the loop may take control steps in the current advance.
        self.ahead = False
        #: Whether the last call handed a control time back (:data:`HANDED`).
        self.handed = False
        #: Set when a vehicle plugin's step kernel raised: the run's control steps are
        #: Python's from then on (its ``step`` names the plugin, should it raise too).
        self.kernel_failed = False
        self._f_restart = np.zeros(dyn.size)  # the derivative at the loop's last restart
        nc = dyn.n - 1
        zk, z0 = 0, 0
        if cp.count and cp.state_slices[0]:
            blocks = list(cp.state_slices[0].values())  # laid end to end, in order
            zk, z0 = len(blocks), blocks[0].start
        self._z = (z0, zk)
        self._ctable = np.ascontiguousarray(np.vstack([cp.nominal[None, :] if nc > 0
                                                       else np.zeros((1, 0)),
                                                       coupler_params]), dtype=float)
        # the vehicle plugins' states: where each batch's vehicles and states are
        index, sign, rows = [], [], []
        first = 0
        for b, (block, shape) in zip(vs.batches, vs._rows, strict=True):
            idx = np.asarray(b.model.index, dtype=np.int64)
            index.append(idx)
            sign.append(tr.orientation[idx].astype(float))
            rows.append([first, idx.size, block.start, shape[0]])
            first += idx.size
        self._vs_lay = np.array(rows, dtype=np.int64).reshape(-1, 4)
        self._vs_index = np.concatenate(index) if index else np.zeros(0, dtype=np.int64)
        self._vs_sign = np.concatenate(sign) if sign else np.zeros(0)
        pad = [np.zeros((0, 0))] * (MAX_STATE_BATCHES - len(vs.inputs))
        self._inputs = tuple(np.ascontiguousarray(a) for a in vs.inputs) + tuple(pad)
        c = dyn.compiled
        self._bodies = (c._idx, c._knots, c._tables, c._static, *c._axles)
        # adhesion laws, one row each: kind, five coefficients, table length
        size = max([len(s) for _, s, _ in laws] + [1])
        self._laws_coef = np.array([row for row, _, _ in laws], dtype=float).reshape(-1, 7)
        self._laws_speeds = np.zeros((len(laws), size))
        self._laws_values = np.zeros((len(laws), size))
        for i, (_, s, v) in enumerate(laws):
            self._laws_speeds[i, :len(s)] = s
            self._laws_values[i, :len(v)] = v
        if not len(laws):
            self._laws_coef = np.zeros((1, 7))
            self._laws_speeds = self._laws_values = np.zeros((1, 1))
        self._kinks = (np.ascontiguousarray(cp._kinks, dtype=float)
                       if nc > 0 and not dyn.rigid and hasattr(cp, "_kinks")
                       else np.zeros((max(nc, 0), 0)))
        self._atol_rtol: tuple[np.ndarray, np.ndarray] | None = None
        self._break_force = (np.where(np.isfinite(cp.break_force), cp.break_force, 0.0)
                             if nc > 0 else np.zeros(0))
        n = dyn.size
        # The entries a right-hand side of an all-rolling train (the loop serves no other)
        # reads, as ranges: the inner stages of a step form only these (the wheel angles
        # and spins, read off the bodies at the step's end, and the energy account,
        # integrals of the rest, can be four fifths of the state)
        self._live = entry_ranges(~dyn.unread_rolling)
        # and the entries a step's end forms: all but the wheels' (read off the bodies)
        wheels = np.zeros(n, dtype=bool)
        wheels[dyn.sphi] = wheels[dyn.somega] = True
        # and of the others those a step leaves as they are: the energy flows whose rates
        # are zero while the loop serves (slip: every axle rolls; air, where no vehicle has
        # drag): a long train's step end then sums a fifth fewer entries
        still = np.zeros(n, dtype=bool)
        still[dyn.energy.slices["slip"]] = True
        if not dyn.bodies._use_air:
            still[dyn.energy.slices["air"]] = True
        self._formed = entry_ranges(~(wheels | still))
        self._still = entry_ranges(still)
        #: The entries under error control (finite ``atol``, the rolling spins left out:
        #: their rates are zero), as ranges: set with the tolerances, at the first
        #: :meth:`run`.
        self._controlled: np.ndarray | None = None
        self._size = max(2, min(BUFFER_STEPS, BUFFER_BYTES // (9 * 8 * n)))
        size = self._size
        self._T = np.empty(size + 1)
        self._Y = np.empty((size + 1, n))
        # zeros: the rolling wheels' rates, which the one body's steps do not write
        # (rrscore.rigidbody: its right-hand side goes straight into F's rows)
        self._F = np.zeros((size + 1, n))
        # zeros: a step's stages leave the rolling wheels' rates (zero) as they are, so that
        # half a long train's stages (its wheels) need not be written at every step
        self._KS = np.zeros((size, 7, n))
        self._ks2 = np.zeros((7, n))  # the stages of a step taken again (zeros: as KS)
        self._counts = np.zeros(4, dtype=np.int64)
        self._whole = np.ones(size, dtype=np.bool_)
        self._H = np.zeros(size)
        self._CF = np.zeros((size, max(nc, 0)))
        self._g_out = np.zeros(max(nc, 0) * self._kinks.shape[1])
        # the samples a call records (see _advance): time, buffer row or step, the lead's
        # acceleration, the drive force, kind; room for one per control time (one per
        # row), and for samples between them (set at each run: _sample_rows)
        self._samples = np.zeros((size + 1, 5))
        # the entries of a sample's state its row reads (the lead's position and speed,
        # the rear's position), as ranges, and room for a state (see _recorded)
        self._sample_at = np.array([[dyn.sx.start, dyn.sx.start + 1],
                                    [dyn.sv.start, dyn.sv.start + 1],
                                    [dyn.sx.stop - 1, dyn.sx.stop]], dtype=np.int64)
        self._sample_row = np.empty(n)
        #: The samples the last :meth:`run` recorded (:class:`LoopSamples`), or None.
        self.samples: LoopSamples | None = None
        #: Where the loop records the run's samples (see :meth:`run`): a function giving
        #: the next sample's index, the sample interval and the control step, or None
        #: where it records none now.
        self.sample_clock: Callable[[], tuple[int, float, float] | None] | None = None
        self.edges = 0
        #: Set when a plugin's kernel raised: the Python path serves the rest of the run.
        self.failed = False
        #: Steps the loop has taken in this run.
        self.steps_taken = 0
        #: Control steps the loop has taken itself in this run (rrscore.controlsteps).
        self.control_steps_taken = 0
        #: Samples the loop has recorded in this run (see :class:`LoopSamples`).
        self.samples_recorded = 0
        self._advance = _advance
        self._cf = np.empty(max(nc, 0))
        self._rhs_lay = np.array([dyn.sx.start, dyn.sv.start, nc, z0, zk, int(dyn.rigid)],
                                 dtype=np.int64)
        self._no_air = (np.zeros(0, dtype=np.int64), np.zeros(0))
        self._no_sections = np.zeros((3, 0))  # the route's, for a driver the loop takes
        ab = dyn.airbrake
        self._mr_index = (np.ascontiguousarray(ab._mr_states, dtype=np.int64)
                          if ab is not None else self._no_air[0])
        # _rhs_flat's intermediates, and the loop's: the loop's own room, kept between calls
        # (see _advance)
        self._work = rhs_work(dyn.n, nc, self._mr_index.size)
        self._room = np.zeros((ROOM_ROWS, n))
        self._g_room = np.empty((2, dyn.n + dyn.na + max(nc, 0) * (self._kinks.shape[1] + 1)))
        self._c_work = np.empty((CONTROL_WORK_ROWS, max(dyn.n, 1)))
        self._cf_room = np.empty((2, max(nc, 0)))
        # the loop serves only trains with every coupling coupled: watch each that can break
        self._watch = (np.isfinite(cp.break_force) if nc > 0 else np.zeros(0, dtype=np.bool_))
        self._break_on = bool(self._watch.any()) and not dyn.rigid
        # sx, sv, couplings, coupler states' start and rows, rigid, vehicles, slip margins
        # watched (set at each call), axles, slack edges watched, break margins watched,
        # going on from a full buffer, a restart (the last two set at each call)
        self._lay = np.array([dyn.sx.start, dyn.sv.start, nc, z0, zk, int(dyn.rigid), dyn.n,
                              0, dyn.na, int(self._kinks.shape[1] > 0 and nc > 0),
                              int(self._break_on), 0, 0], dtype=np.int64)
        #: The rigid train as one body (:mod:`rrscore.rigidbody`), once made; False where
        #: it cannot be (the multi-body layout serves).
        self._body: RigidBody | None | bool = None
        #: The one body's buffers and calls (:class:`rrscore.rigidloop.BodyRun`), made
        #: with the body.
        self._body_run = None
        if dyn.rigid and self.one_body:  # made with the drive, as the route's own tables
            self.one_body_at(solver.y)

    @classmethod
    def build(cls, solver: object, dyn: TrainDynamics) -> StepLoop | None:
        """The loop for ``solver`` on ``dyn``, or None where it can never serve them."""
        if type(solver) is not DormandPrince45 or solver.reference != dyn.reference:
            return None
        if not dyn.compiled.possible:
            return None
        vs, cp = dyn.vehicle_states, dyn.couplings
        if len(vs.batches) > MAX_STATE_BATCHES:
            return None
        if any(k is None or not k.compiled for k in vs.kernels):
            return None
        coupler, params = None, np.zeros((0, max(dyn.n - 1, 0)))
        if dyn.n > 1 and not dyn.rigid:
            if len(cp.groups) != 1:
                return None
            model = cp.groups[0][0]
            if not _kernel_is_current(type(model)):
                return None
            coupler = compile_kernel(type(model).force_kernel, COUPLER_KERNEL)
            if not coupler.compiled:
                return None
            params = np.ascontiguousarray(model.kernel_params(), dtype=float)
        laws = [_law_row(law) for law in dyn.train.adhesion_laws]
        if any(row is None for row in laws):
            return None
        known = {"standstill", "wheel stops", "slip", "re-adhesion", "slack edge",
                 "coupler break", "contact"}
        if any(b.name not in known for b in dyn.events):
            return None
        return cls(solver, dyn, coupler, params, [k for k in vs.kernels], laws)

    def rhs(self, t: float, y: np.ndarray) -> np.ndarray:
        """:meth:`TrainDynamics.rhs <rrscore.dynamics.TrainDynamics.rhs>` in one compiled
        call while the loop applies (the same arithmetic), else the dynamics' own."""
        dyn = self.dyn
        if not self.applies():
            return dyn.rhs(t, y)
        dy = np.empty(y.size)
        b = dyn.bodies
        try:
            _rhs_flat(t, y, dy, self._cf, self._kernels, self._rhs_lay, self._ctable,
                      self._vs_lay, self._vs_index, self._vs_sign, *self._inputs,
                      *self._air(), *self._bodies, b.held, b.frozen, b.direction,
                      self._work)
        except Exception as exc:  # a plugin's kernel raised: its Python call names it
            self._fail(exc)
            return dyn.rhs(t, y)
        return dy

    def _fail(self, exc: Exception) -> None:
        """The loop raised ``exc``: the Python path serves the rest of the run (a plugin's
        kernel that raised is named there, where it raises again). An interruption met in
        compiled code is raised; the loop itself not compiling is a bug of rrscore's,
        which would otherwise only show as a drive fifty times as slow: warned of."""
        interruption = interruption_behind(exc)  # a signal met in compiled code
        if interruption is not None:
            raise interruption from None
        if isinstance(exc, NumbaError):
            line = next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), "")
            warnings.warn(f"rrscore's compiled step loop did not compile ({type(exc).__name__}: "
                          f"{line}); this run goes on on the Python path (the same results, "
                          "far slower). Please report it.", RuntimeWarning, stacklevel=2)
        self.failed = True

    def _air(self) -> tuple[np.ndarray, np.ndarray]:
        """The main reservoirs' states the air brake draws from and its rates, held over
        the control step (empty without an air brake)."""
        ab = self.dyn.airbrake
        if ab is None or not ab._mr_states.size:
            return self._no_air
        return self._mr_index, np.ascontiguousarray(ab.mr_rate[ab._mr_held], dtype=float)

    #: Whether the loop may take a rigid train as one body (tests set it off to compare).
    one_body = True

    def one_body_at(self, y: np.ndarray) -> RigidBody | None:
        """The rigid train as one body (:mod:`rrscore.rigidbody`) for the steps from ``y``,
        or None where the loop keeps the multi-body layout: not a rigid train, or one that
        does not fit (:meth:`RigidBody.build <rrscore.rigidbody.RigidBody.build>`), or
        vehicles no longer where the table was made for (it is made again there)."""
        dyn = self.dyn
        if not self.one_body or not dyn.rigid or self._body is False:
            return None
        body = self._body
        if not equal_speeds(y, dyn.sv.start, dyn.n):
            return None
        if body is None or not body.fits(y, dyn.sx):
            atol, rtol = (np.broadcast_to(np.asarray(a, dtype=float), y.shape)
                          for a in (self.solver.atol, self.solver.rtol))
            body = RigidBody.build(dyn, y, atol, rtol, self._vs_lay)
            self._body = False if body is None else body
        return body or None

    def kinks_out(self) -> np.ndarray:
        """The values of the action-less event block (the slack edges: :meth:`build`
        refuses any other) at the state the last :meth:`run` ended at, with the edges it
        reached on their surface put beyond it (as the Python path leaves them)."""
        return self._g_out.copy()

    def applies(self) -> bool:
        """Whether the loop stands for the Python path now: every axle rolling and every
        coupling coupled (modes that change only at events)."""
        return (not self.failed and self.dyn._use_compiled
                and self.dyn.couplings.all_coupled)

    def go_ahead(self, first: int, last: int, gather: bool = True) -> bool:
        """Let the loop take the control steps at the control times of index ``first`` to
        ``last`` itself (:mod:`rrscore.controlsteps`), with the stop conditions and
        actions set in :attr:`ControlSteps.watch <rrscore.controlsteps.ControlSteps>`;
        False where it cannot (no kernels, or the models not as the kernels need them).
        ``gather``: take the models' state afresh (else: as the last :meth:`end_ahead`
        left them, where nothing has changed them since)."""
        ctl = self.control
        if ctl is None or self.kernel_failed or last < first or (gather and not ctl.gather()):
            return False
        self._vconst = ctl.vconst
        self._cstate[:] = (0, first, last, 0, 0, 0)
        self.ahead = True
        self.handed = False
        return True

    def _next_control(self) -> float:
        """The next control time the loop has not taken, as the run computes it."""
        return float(self._cstate[1]) * float(self._ahead_watch[W_DT])

    def control_due(self, t: float) -> bool:
        """Whether the loop is to take a control step at ``t`` (the solver stands there)."""
        c = self._cstate
        return self.ahead and c[1] <= c[2] and self._next_control() == t

    def stop_ahead(self, t_end: float) -> float:
        """The loop takes no more control steps in this advance (the integrator's Python
        path takes over): ``t_end``, or the next control time if it comes first."""
        if not self.ahead:
            return t_end
        self._cstate[2] = -1
        return min(t_end, self._next_control())

    def end_ahead(self) -> tuple[int, bool]:
        """After an advance: the control steps the loop took, their outputs written back to
        the models (:meth:`ControlSteps.scatter <rrscore.controlsteps.ControlSteps.
        scatter>`), and whether the last of them changed the inputs at the time the
        advance ended (the run restarts the integrator there)."""
        if not self.ahead:
            return 0, False
        self.ahead = False
        self._cstate[2] = -1
        self.control.scatter()
        taken = int(self._cstate[0])
        self.control_steps_taken += taken
        restart = self._cstate[3] == 2
        self._cstate[3] = 0
        return taken, restart

    def take_restart(self) -> np.ndarray | None:
        """Where the loop's last call ended after a control step with new inputs and no
        step since, the derivative it took there (the integrator restarts there), else
        None; clears the flag."""
        if self._cstate[3] != 1:
            return None
        self._cstate[3] = 0
        return self._f_restart.copy()

    def _sample_rows(self, interval: float, control_step: float,
                     size: int | None = None) -> tuple[int, int]:
        """Rows of samples a call of ``size`` steps at most (default: the loop's buffer)
        needs at least (one per control time and step, and room for a control step's
        samples: the loop ends a call where fewer are left), and those it gets: up to a
        control step's samples per step, as :data:`SAMPLE_BYTES` allows their states."""
        size = self._size if size is None else size
        per_step = math.ceil(control_step / interval) + 3
        least = size + 1 + per_step
        most = SAMPLE_BYTES // (8 * self._Y.shape[1])
        return least, max(least, min(most, (size + 1) * (per_step + 1)))

    def can_sample(self, interval: float, control_step: float) -> bool:
        """Whether the loop can record samples ``interval`` apart (with control steps of
        ``control_step``) within :data:`SAMPLE_BYTES`."""
        least, _ = self._sample_rows(interval, control_step)
        return least * 8 * self._Y.shape[1] <= SAMPLE_BYTES

    def begin_call(self, fresh: bool, resume: bool, counts: np.ndarray,
                   size: int | None = None,
                   columns: int = 5) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """What every call of a loop (this one's, or :class:`rrscore.rigidloop.BodyRun`'s
        with its ``size`` of steps and ``columns`` of samples) sets first: the layout's
        per-call entries, the counts, where the run's samples are (:attr:`sample_clock`)
        with room for them (:meth:`_sample_rows`). Returns the friction directions and
        holds as the loop takes them (copies: it holds them from each new state, as the
        bodies' commit does, and the bodies take them from the state it ends at) and the
        samples' buffer."""
        b, w = self.dyn.bodies, self.dyn.wheelsets
        lay = self._lay
        lay[7] = w.loaded_rows.shape[1] > 0
        lay[11] = resume
        lay[12] = fresh
        counts[:] = 0
        self._cstate[5] = 0
        self.samples = None
        clock = self.sample_clock() if self.sample_clock is not None else None
        watch = self._ahead_watch
        if clock is None:
            watch[W_SAMPLE_DT] = 0.0
        else:
            k, interval, control_step = clock
            watch[W_SAMPLE_K], watch[W_SAMPLE_DT] = float(k), interval
            _, rows = self._sample_rows(interval, control_step, size)
            if self._samples.shape != (rows, columns):
                self._samples = np.zeros((rows, columns))
        return (np.array(b.direction, dtype=float), np.array(b.frozen, dtype=np.bool_),
                self._samples)

    def end_call(self, status: int, recorded: Callable[[np.ndarray], LoopSamples]) -> None:
        """What every call of a loop leaves: the samples it recorded (formed by
        ``recorded`` from their rows), whether it handed a control time back or a step
        kernel raised."""
        count = int(self._cstate[5])
        if count:
            self.samples_recorded += count
            self.samples = recorded(self._samples[:count].copy())
        self.handed = self.handed or status == HANDED
        if self._cstate[4]:  # a step kernel raised: Python takes the control steps now
            self.kernel_failed = True

    def _recorded(self, rec: np.ndarray) -> LoopSamples:
        """The samples of the rows ``rec`` a call recorded (see :func:`_advance`): the
        lead's position and speed and the rear's position at each (:func:`_sample_entries`),
        their states on demand (:func:`_sample_states`)."""
        entries = np.empty((rec.shape[0], 3))
        _sample_entries(rec, self._T, self._Y, self._F, self._KS, self._H, self._whole,
                        self._sample_at, self._sample_row, entries)

        def form() -> np.ndarray:
            y = np.empty((rec.shape[0], self._Y.shape[1]))
            b = self._bodies
            _sample_states(rec, self._T, self._Y, self._F, self._KS, self._H, self._whole,
                           self._formed, self._still, b[0], b[4], b[5], b[6], y)
            return y

        return LoopSamples(rec[:, 0], entries, rec[:, 2], rec[:, 3], form)

    def tolerances(self) -> tuple[np.ndarray, np.ndarray]:
        """The solver's absolute and relative tolerances, one per entry of the state (taken
        at the first call of the loop), and the ranges of the entries under error control
        (a finite ``atol``, the rolling spins left out: their rates are zero)."""
        s, dyn = self.solver, self.dyn
        if self._atol_rtol is None or self._atol_rtol[0].size != s.y.size:
            self._atol_rtol = tuple(np.ascontiguousarray(np.broadcast_to(
                np.asarray(a, dtype=float), s.y.shape)) for a in (s.atol, s.rtol))
            controlled = np.isfinite(self._atol_rtol[0])
            # every axle rolls in the loop: the spins' rates, and so their errors, are zero
            controlled[dyn.somega] = False
            self._controlled = entry_ranges(controlled)
        return self._atol_rtol

    def run(self, t_end: float, resume: bool = False,
            fresh: bool = False) -> tuple[int, Steps | None]:
        """Steps from the solver's state towards ``t_end``, committed to the solver,
        with the control steps :meth:`go_ahead` allowed on the way; the status
        (:data:`DONE`, :data:`CROSSING`, :data:`PYTHON`, :data:`FULL`, :data:`CONDITION`,
        :data:`HANDED`) and the steps taken (None if none), whose arrays are views of the
        loop's buffers: valid until it runs again (the solver's ``dense`` likewise, which
        the integrator uses only after a step of its own; and its ``y`` and ``f``, which
        hold until the next call: whoever keeps them longer copies them).

        ``fresh``: the solver was just reset at new inputs (its derivative not taken): the
        loop takes it and checks the slip margins first (see :func:`_advance`).

        A rigid train that fits the one body (:meth:`one_body_at`) is stepped by the
        one body's loop (:class:`rrscore.rigidloop.BodyRun`), whose steps are
        :class:`~rrscore.rigidloop.BodySteps`."""
        s, dyn = self.solver, self.dyn
        body = self.one_body_at(s.y)
        if body is not None:
            from .rigidloop import BodyRun  # it builds on this module's compiled pieces

            if self._body_run is None or self._body_run.body is not body:
                self._body_run = BodyRun(self, body)
            return self._body_run.run(t_end, fresh)
        if s.f is None and not fresh:
            s.f = s._eval(s.t, s.y)
        self.tolerances()
        b, w = dyn.bodies, dyn.wheelsets
        T, Y, F, KS = self._T, self._Y, self._F, self._KS
        T[0], Y[0] = s.t, s.y
        s.y = Y[0]  # (the solver's state, a view: a call writes the rows after it only)
        slip, laws = w.loaded_rows, w.loaded_law
        lay = self._lay
        counts = self._counts
        direction, frozen, samples = self.begin_call(fresh, resume, counts)
        try:
            status, steps, h = self._advance(
                s.t, t_end, s.h, s.max_step,
                self._size,
                *self._atol_rtol,
                dyn._mean_weights, self._kernels, lay, self._ctable,
                self._vs_lay, self._vs_index, self._vs_sign, *self._inputs, *self._air(),
                *self._bodies,
                b.held, frozen, direction, b.has_friction, slip, laws, self._laws_coef,
                self._laws_speeds, self._laws_values, self._kinks, self._break_force, self._watch,
                self._live, self._formed, self._still, self._controlled, T, Y, F, KS, self._H,
                self._whole, self._CF,
                self._g_out, counts, self._cstate, *self._control_args,
                self._no_sections if self.control is None else self.control.sections,
                dyn.body_force,
                dyn.body_resist, w.axle_torque, dyn._axle_brake_own, w.axle_brake,
                w.rail_factor, w.rail_condition, w.rolling, self._vconst,
                w.loaded_vehicle(), self._ahead_watch, self._f_restart, self._ks2,
                samples, self._room, self._g_room, self._work, self._c_work, self._cf_room,
                F[0] if fresh else np.ascontiguousarray(s.f))
        except Exception as exc:  # a plugin's kernel raised: its Python call names it
            self._fail(exc)
            return PYTHON, None
        #: Slack edges reached in the steps just taken.
        self.edges = int(counts[3])
        self.end_call(status, self._recorded)
        if not steps:
            if fresh:  # the derivative the loop took at the start, for the restart
                s.f = F[0].copy()
            s.nfev += int(counts[0])  # the restart's own (a failed first step counts none)
            return status, None
        # the steps read the buffers (no copy: they are used up before the loop runs
        # again, as the solver's dense output is), and so does the solver (see below)
        taken = Steps(T[:steps + 1], Y[:steps + 1], F[:steps + 1], self._H[:steps],
                      self._whole[:steps], KS, None if dyn.n < 2 else self._CF[:steps],
                      w.fill, dyn.sx, dyn.sv)
        j = steps - 1
        # a step's derivative at its start is its first stage (the row before may end a
        # control step whose inputs the loop changed)
        s._last = ((float(T[j]), Y[j], KS[j, 0], float(T[j + 1]), Y[j + 1], KS[j, 6],
                    (float(self._H[j]), KS[j])) if self._whole[j] else None)
        # (the last step's start: views, as the dense output's, valid until the loop runs
        # again; the Python path takes a step of its own, which sets them, before it
        # reads them; a long train's copies took 2 % of its drive)
        s.t_old, s.y_old, s.f_old = float(T[j]), Y[j], KS[j, 0]
        # the solver's state and derivative: views of the buffers, not copies (a long
        # train's two copies at every call were a twentieth of its drive). The next call
        # copies the state into its first row, which it never writes, before it writes
        # another, and reads the derivative in its first step alone, which writes the
        # stages of the buffer's first step: a copy where those are this one's. (The
        # state a run hands to its samples' hooks is a copy: see rrscore.run.Run._sample.)
        s.t, s.y = float(T[steps]), Y[steps]
        s.f = KS[j, 6] if self._whole[j] else F[steps]
        if self._whole[j] and j == 0:
            s.f = s.f.copy()
        s.nsteps += int(counts[2])
        self.steps_taken += steps
        s.nfev += int(counts[0])
        s.nrejected += int(counts[1])
        s.h = h
        # as dyn.commit(s.y): the air brake's commit tears no hose while all are coupled
        b.hold_directions(direction, frozen)
        w.commit(s.y)
        return status, taken
