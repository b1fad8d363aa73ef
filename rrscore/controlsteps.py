"""Control steps taken inside the compiled step loop, with the plugins' step kernels.

At a control time the Python path checks the stop conditions and the driver's
actions, calls every vehicle model's ``step``, places what they set and restarts
the solver where it changed (:meth:`rrscore.run.Run.advance`). In a steady drive
that Python, a few hundred microseconds, costs more than the steps between two
control times. Where every vehicle type of the train gives a ``step_kernel``
(``step`` again, as plain loops numba compiles: see
:class:`~rrscore.vehicle.VehicleModel`), the compiled loop
(:mod:`rrscore.steploop`) takes those control steps itself, up to the next
sample of the time series (and the one at its time, if any) or timed driver's
action: the same checks, the kernels on the same inputs, the same placing and
restart, so the same steps to the bit.

It hands a control time back to Python, with nothing of it done, wherever the
Python path could do something it cannot: a stop condition or a driver's action
that may be due there, a kernel that declines, outputs that are not finite or
negative, an axle newly driven or braked (or no longer); and a kernel that raises,
its writes undone, and every control step after it. A restart that finds an axle
driven beyond adhesion is handed back done, for the integrator to act on.
The run decides when to let the loop go ahead (:meth:`rrscore.run.Run.advance`):
never while a key is held, a ramp is under way, or with an air brake, whose air
runs on its own integration in Python. The built-in driver's decisions are the
loop's too (:func:`rrscore.autodriver.decide`, every ``update_interval``) where
it drives without a timetable and every vehicle type it drives can take them:
its ``control_kernel`` (``set_control`` compiled), or, where the model keeps
``set_control`` as the framework gives it, the control among its
``step_fields``. Elsewhere the loop goes only up to the driver's next decision,
which is Python's.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

import numpy as np
from numba import njit, types

from .autodriver import (
    BRAKE,
    D_COMMAND,
    D_ON,
    DRIVER_PARAMS_SIZE,
    DRIVER_STATE_SIZE,
    P_REAR_HALF,
    TRACTION,
    decide,
    levels,
)
from .compiled import Kernel, compile_kernel
from .copies import copy_into
from .dynamics import HELD_WORK_ROWS, _place, held_inputs_of
from .vehicle import VehicleModel, step_field_kind
from .wheelsets import loaded_rows_update

if TYPE_CHECKING:
    from .autodriver import AutoDriver
    from .dynamics import TrainDynamics

#: The signature of ``VehicleModel.step_kernel``: ``(t, dt, x, v, fields, q_a, q_r)``,
#: returning 0 where it did what ``step`` does.
CONTROL_KERNEL = types.int64(types.float64, types.float64, types.float64[::1],
                             types.float64[::1], types.float64[:, ::1],
                             types.float64[:, ::1], types.float64[:, ::1])
#: The signature of ``VehicleModel.control_kernel``: ``(control, value, fields)``,
#: returning 0 where it did what ``set_control`` does.
SET_KERNEL = types.int64(types.int64, types.float64, types.float64[:, ::1])
#: Vehicle types the compiled control steps serve at most (a train has a few).
MAX_CONTROL_BATCHES = 4

# Columns of the batches' layout (one row per batch): vehicles, axles each, fields, and
# where its arrays start: in the float buffer its fields, Q_a, Q_r, adhesion factor,
# orientation and what it set last; in the int buffer its vehicles, axles, where each
# field's state is in the state vector (or -1) and which field feeds each of its state
# rates' inputs (or -1); its place among the batches with states (or -1); for the
# built-in driver's traction and brake levels, the control's index in the model's
# ``controls`` (-1: the model has none) and its row among the fields (-1: the model's
# control kernel sets it); whether the model gives a control kernel (1/0).
(_N, _K, _NF, _FIELDS, _QA, _QR, _FACTOR, _SIGN, _LAST, _VEH, _AXLES, _SPEC, _INMAP,
 _VS, _T_CTL, _T_ROW, _B_CTL, _B_ROW, _SETTER) = range(19)
LAYOUT_COLUMNS = 19
# Entries of the watch array: the front's limit (a stop position, the route's end, an
# action's position), the lead's start position, the maximum distance (0: none), the
# standstill speed, whether standstill stops (1/0), whether the train has moved (1/0,
# updated), the lowest speed an action waits for above and the highest below, the lead's
# half length, the control step; the run's next sample's index and the sample interval
# (0: the loop records no samples, see rrscore.steploop).
(W_FRONT, W_X0, W_DISTANCE, W_STANDSTILL_SPEED, W_STANDSTILL, W_MOVED, W_ABOVE, W_BELOW,
 W_HALF, W_DT, W_SAMPLE_K, W_SAMPLE_DT) = range(12)
WATCH_SIZE = 12
# Results of a control step: taken with the inputs unchanged, taken with new inputs (a
# restart), handed back to Python undone.
KEPT, RESTARTED, HANDED_BACK = 0, 1, 2
#: Bits of :func:`control_step`'s ``flags``.
RIGID, CHECKED = 1, 2


def _no_step(t, dt, x, v, fields, q_a, q_r):  # pragma: no cover (compiled)
    return 1


def _no_set(control, value, fields):  # pragma: no cover (compiled)
    return 1


def field_kinds(cls: type) -> list[tuple[str, str]]:
    """``cls.step_fields`` as ``(kind, name)`` (:func:`rrscore.vehicle.step_field_kind`)."""
    return [step_field_kind(name) for name in cls.step_fields]


def field_value(model: VehicleModel, kind: str, name: str) -> object:
    """The array ``step_fields`` names by ``(kind, name)`` (None for a signal not yet
    written)."""
    if kind == "out":
        return model.out.get(name)
    owner = {"p": model.p, "state": model.state}.get(kind, model)
    return getattr(owner, name)


def _fields(model: VehicleModel, kinds: list[tuple[str, str]]) -> np.ndarray:
    """``model``'s ``step_fields`` as the kernels get them, one row each (zeros for a
    signal not yet written)."""
    fields = np.zeros((len(kinds), model.count))
    for r, (kind, name) in enumerate(kinds):
        value = field_value(model, kind, name)
        if value is not None:
            fields[r] = value
    return fields


def kernel_problems(model: VehicleModel, t: float, dt: float) -> list[str]:
    """Where ``model``'s ``step_kernel`` does not compute what its ``step`` does, to the
    bit, from the model's state as it is and at a few speeds (keys released first): one
    line per difference found (none: they agree, or the kernel declined)."""
    cls = type(model)
    if cls.step_kernel is None:
        return []
    kernel = compile_kernel(cls.step_kernel, CONTROL_KERNEL)
    model = copy.deepcopy(model)
    rows = np.arange(model.count)
    for key in cls.keys:
        if model.key_down(key).any():
            model.press(key, rows, False)
    kinds = field_kinds(cls)
    problems = []
    for speed in (None, 0.0, 3.0, 30.0, -12.0):
        a, b = copy.deepcopy(model), copy.deepcopy(model)
        if speed is not None:
            a.v = np.full(model.count, speed)
            b.v = a.v.copy()
        fields = _fields(a, kinds)
        q_a, q_r = np.array(a.Q_a, dtype=float), np.array(a.Q_r, dtype=float)
        try:
            code = kernel.call(float(t), float(dt), np.array(a.x, dtype=float),
                               np.array(a.v, dtype=float), fields, q_a, q_r)
        except Exception as exc:
            return [f"step_kernel raised {type(exc).__name__}: {exc}"]
        if code != 0:
            continue  # declined: step runs instead
        try:
            b.step(t, dt)
        except Exception as exc:
            return [f"step() raised {type(exc).__name__}: {exc}"]
        at = f"at v = {float(np.asarray(b.v).flat[0]):g} m/s" if model.count else ""
        got = [("Q_a", q_a, b.Q_a), ("Q_r", q_r, b.Q_r)] + [
            (f"{kind}.{name}" if kind != "attr" else name, fields[r], field_value(b, kind, name))
            for r, (kind, name) in enumerate(kinds) if kind in ("attr", "out")]
        for name, mine, theirs in got:
            if not np.array_equal(mine, np.asarray(theirs, dtype=float), equal_nan=True):
                problems.append(f"step_kernel differs from step() {at}: {name} is "
                                f"{np.asarray(mine).tolist()} where step() gives "
                                f"{np.asarray(theirs, dtype=float).tolist()}")
                break
    return problems


def control_kernel_problems(model: VehicleModel) -> list[str]:
    """Where ``model``'s ``control_kernel`` does not do to its ``step_fields`` what its
    ``set_control`` does to those attributes, to the bit, for each of its controls set
    on every vehicle to the ends and the middle of the control's range: one line per
    difference found (none: they agree, or the kernel declined)."""
    cls = type(model)
    if cls.control_kernel is None:
        return []
    kernel = compile_kernel(cls.control_kernel, SET_KERNEL)
    kinds = field_kinds(cls)
    rows = np.arange(model.count)
    problems = []
    for control, name in enumerate(cls.controls):
        lo, hi = cls.control_ranges.get(name, (0.0, 1.0))
        for value in (lo, (lo + hi) / 2, hi):
            fields = _fields(model, kinds)  # (read only: the model is left as it is)
            try:
                code = kernel.call(control, float(value), fields)
            except Exception as exc:
                return [f"control_kernel raised {type(exc).__name__}: {exc}"]
            if code != 0:
                continue  # declined: set_control runs instead
            b = copy.deepcopy(model)
            try:
                b.set_control(name, rows, float(value))
            except Exception as exc:
                return [f"set_control raised {type(exc).__name__}: {exc}"]
            for r, (kind, field) in enumerate(kinds):
                if kind != "attr":
                    continue
                theirs = np.asarray(field_value(b, kind, field), dtype=float)
                if not np.array_equal(fields[r], theirs, equal_nan=True):
                    problems.append(f"control_kernel differs from set_control({name!r}, "
                                    f"{value:g}): {field} is {fields[r].tolist()} where "
                                    f"set_control gives {theirs.tolist()}")
                    break
    return problems


# A control step is compiled without numba's reference counting (a function with it takes
# an atomic increment and decrement of each of its thirty arrays, on entry and exit, and
# of every view it takes); the calls of the plugins' kernels keep it (through their
# function types they run ten times as slowly without), in these two.
@njit(cache=True, _nrt=True)  # (explicit: called from code compiled without)
def _step_kernel(kern, b, t, dt, x, v, fields, q_a, q_r):  # pragma: no cover (compiled)
    """Batch ``b``'s compiled ``step``: its status (0: done)."""
    return kern.steps[b](t, dt, x, v, fields, q_a, q_r)


@njit(cache=True, _nrt=True)  # (explicit: called from code compiled without)
def _set_kernel(kern, b, control, value, fields):  # pragma: no cover (compiled)
    """Batch ``b``'s compiled ``control_kernel``: its status (0: done)."""
    return kern.setters[b](control, value, fields)


@njit(cache=True, _nrt=False)
def _due(y, sx, sv, nv, watch):  # pragma: no cover (compiled)
    """Whether a stop condition or a driver's action that :meth:`Run.advance
    <rrscore.run.Run.advance>` checks may be due at the state ``y`` (a control time),
    with the run's arithmetic; marks the train as moved as it does."""
    top = 0.0
    for i in range(nv):
        top = max(top, abs(y[sv + i]))
    if top > watch[W_STANDSTILL_SPEED]:
        watch[W_MOVED] = 1.0
    front = y[sx] + watch[W_HALF]
    lead = abs(y[sv])
    if front >= watch[W_FRONT] or lead >= watch[W_ABOVE] or lead <= watch[W_BELOW]:
        return True
    if watch[W_DISTANCE] > 0 and abs(y[sx] - watch[W_X0]) >= watch[W_DISTANCE]:
        return True
    return watch[W_STANDSTILL] != 0.0 and watch[W_MOVED] != 0.0 \
        and top <= watch[W_STANDSTILL_SPEED]


@njit(cache=True, _nrt=False)
def _drive(t, y, sx, sv, nv, kern, cbuf, clay, dstate, dparams, sections,
           watch):  # pragma: no cover (compiled)
    """The built-in driver's decision at ``(t, y)`` (:func:`rrscore.autodriver.decide`)
    and, where its command changed, the levels set on every batch that takes them,
    traction first, then brake, as :meth:`AutoDriver._send
    <rrscore.autodriver.AutoDriver._send>` sets them. Returns -1 where a control kernel
    declined (the caller undoes), else whether the command changed (1/0)."""
    front = y[sx] + watch[W_HALF]
    rear = y[sx + nv - 1] - dparams[P_REAR_HALF]
    if not decide(t, front, rear, y[sv], dstate, dparams, sections):
        return 0
    traction, brake = levels(dstate[D_COMMAND])
    for which in range(2):
        value = traction if which == 0 else brake
        for b in range(clay.shape[0]):
            control = clay[b, _T_CTL + 2 * which]
            if control < 0:
                continue  # not one of the driver's vehicles
            n, nf = clay[b, _N], clay[b, _NF]
            fields = cbuf[clay[b, _FIELDS]:clay[b, _FIELDS] + nf * n].reshape((nf, n))
            if clay[b, _SETTER]:
                if _set_kernel(kern, b, control, value, fields) != 0:
                    return -1
            else:  # set_control as the framework gives it: the attribute's row
                row = clay[b, _T_ROW + 2 * which]
                for i in range(n):
                    fields[row, i] = value
    return 1


#: Rows of the ``work`` array :func:`control_step` takes.
CONTROL_WORK_ROWS = 3 + HELD_WORK_ROWS


@njit(cache=True, _nrt=False)
def _refused(q_a, q_r):  # pragma: no cover (compiled)
    """Whether a kernel's outputs (``q_a``, ``q_r`` flat) hold what
    :meth:`~rrscore.vehicle.VehicleModel.step_problems` refuses: a value not finite, or
    a resistance below zero."""
    bad = 0
    for j in range(q_a.size):
        a, r = q_a[j], q_r[j]
        bad |= np.int64((a - a) != 0.0) | np.int64((r - r) != 0.0) | np.int64(not r >= 0.0)
    return bad != 0


@njit(cache=True, _nrt=False)
def copy_writable(to, frm, clay):  # pragma: no cover (compiled)
    """What a control step may write before it is handed back (each batch's fields, Q_a,
    Q_r and adhesion factors, one after the other in the buffer) copied from ``frm`` to
    ``to``: to keep the buffer, and to undo the step (the orientations and what was last
    placed, two fifths of the buffer, are written only once it is taken)."""
    for b in range(clay.shape[0]):
        lo, hi = clay[b, _FIELDS], clay[b, _SIGN]
        t, f = to[lo:hi], frm[lo:hi]
        for j in range(hi - lo):
            t[j] = f[j]


@njit(cache=True, _nrt=False)
def _same(a, b):  # pragma: no cover (compiled)
    """Whether ``a`` and ``b`` hold the same values (NaN: never), or-ed over every entry
    with no early exit, so that the compiler vectorises the loop."""
    differ = 0
    for j in range(a.size):
        differ |= np.int64(not a[j] == b[j])
    return differ == 0


@njit(cache=True, _nrt=False)
def _axles_change(q_a, q_r, sign, axles, rolling, torque, axle_brake):  # pragma: no cover
    """Whether an axle of the batch is newly driven or braked by its kernel's outputs
    (``q_a``, ``q_r``: rows per vehicle; ``sign``: each one's orientation; ``axles``: its
    axles, row by row), or no longer: as the loaded axles' rows hold them."""
    k = q_a.shape[1] - 1
    differ = 0
    for i in range(q_a.shape[0]):
        s = sign[i]
        for c in range(k):
            a = axles[i * k + c]
            now = np.int64(q_a[i, c + 1] * s != 0.0) | np.int64(abs(q_r[i, c + 1]) != 0.0)
            before = np.int64(rolling[a]) & (np.int64(torque[a] != 0.0)
                                             | np.int64(axle_brake[a] != 0.0))
            differ |= now ^ before
    return differ != 0


@njit(cache=True, _nrt=False)
def control_step(t, y, sx, sv, kern, cbuf, save, clay, cint, driver, sections, inputs,
                 body_force, body_resist, torque, brake_own, axle_brake, rail_factor,
                 rail_condition, rolling, vconst, loaded_vehicle, slip, held, has_friction,
                 flags, watch, work):  # pragma: no cover (compiled)
    """One control step at ``(t, y)`` as :meth:`Run.advance <rrscore.run.Run.advance>`
    takes it where no key is held and no driver's action is due: the built-in driver's
    decision where the loop takes it (``driver``, rows: its state, a copy, its settings;
    ``sections``: the route's; see :func:`_drive`), every batch's
    kernel on its vehicles' positions, speeds and states, then what
    :meth:`TrainDynamics.set_inputs <rrscore.dynamics.TrainDynamics.set_inputs>` does
    with what they set (the placing pass, the loaded axles' rows, the held sums;
    written in place). Returns :data:`KEPT`, :data:`RESTARTED` (inputs changed, or the
    driver's command: the Python path restarts then too) or :data:`HANDED_BACK`
    (nothing done: the buffer and the driver's state as they were). ``work``:
    :data:`CONTROL_WORK_ROWS` rows of a value per vehicle, room for a batch's positions
    and speeds (rows 0 and 1), for the held inputs' sums (:func:`~rrscore.dynamics.
    held_inputs_of`) and for marking the vehicles placed anew (the last), so that it
    allocates nothing. ``flags``: :data:`RIGID` (the
    train moves as one body), :data:`CHECKED` (a control step of this call of the loop
    has been taken before, so the buffer holds what it checked and placed: a batch whose
    kernel leaves its outputs as they were is neither checked nor placed again, as
    freight cars with nothing applied at every control step). (Flags in one argument:
    a call of more than 30 arguments is one numba does not compile.)"""
    nv = body_force.size
    if _due(y, sx, sv, nv, watch):
        return HANDED_BACK
    dt = watch[W_DT]
    dstate, dsave = driver[0], driver[1]
    copy_writable(save, cbuf, clay)  # to undo the kernels' writes where handed back
    copy_into(dsave, dstate)
    acted = False
    if dstate[D_ON] != 0.0:
        code = _drive(t, y, sx, sv, nv, kern, cbuf, clay, dstate, driver[2],
                      sections, watch)
        if code < 0:
            copy_writable(cbuf, save, clay)
            copy_into(dstate, dsave)
            return HANDED_BACK
        acted = code == 1
    nb = clay.shape[0]
    kept = 0  # the batches whose outputs are as the last control step left them (bits)
    for b in range(nb):
        n, k, nf = clay[b, _N], clay[b, _K], clay[b, _NF]
        fields = cbuf[clay[b, _FIELDS]:clay[b, _FIELDS] + nf * n].reshape((nf, n))
        flat_a = cbuf[clay[b, _QA]:clay[b, _QA] + n * (k + 1)]
        flat_r = cbuf[clay[b, _QR]:clay[b, _QR] + n * (k + 1)]
        q_a, q_r = flat_a.reshape((n, k + 1)), flat_r.reshape((n, k + 1))
        x = work[0, :n]
        v = work[1, :n]
        for i in range(n):
            j = cint[clay[b, _VEH] + i]
            x[i] = y[sx + j]
            v[i] = y[sv + j] * cbuf[clay[b, _SIGN] + i]
        for r in range(nf):  # the model's states, as published before a step
            at = cint[clay[b, _SPEC] + r]
            if at >= 0:
                for i in range(n):
                    fields[r, i] = y[at + i]
        if _step_kernel(kern, b, t, dt, x, v, fields, q_a, q_r) != 0:
            copy_writable(cbuf, save, clay)
            copy_into(dstate, dsave)
            return HANDED_BACK
        lo = clay[b, _QA]  # Q_a, Q_r and the adhesion factors, one after the other
        hi = lo + 2 * n * (k + 1) + n * k
        if flags & CHECKED and _same(cbuf[lo:hi], save[lo:hi]):
            kept |= 1 << b
            continue
        # outputs step_problems would refuse (the Python path raises on them), or an axle
        # newly driven or braked, or no longer (the loaded axles change: their rows, the
        # slip margins' laws; the Python path rebuilds them). Or-ed over every entry, with
        # no early exit, so that the compiler vectorises the loops.
        if _refused(flat_a, flat_r) or _axles_change(
                q_a, q_r, cbuf[clay[b, _SIGN]:clay[b, _SIGN] + n],
                cint[clay[b, _AXLES]:clay[b, _AXLES] + n * k], rolling, torque, axle_brake):
            copy_writable(cbuf, save, clay)
            copy_into(dstate, dsave)
            return HANDED_BACK
    changed = False
    placed = work[2 + HELD_WORK_ROWS, :nv]  # the vehicles whose inputs change (1.0)
    for i in range(nv):
        placed[i] = 0.0
    for b in range(nb):
        if (kept >> b) & 1:
            continue  # (placed as they are: _place would find nothing changed)
        n, k = clay[b, _N], clay[b, _K]
        size = n * (k + 1)
        veh = cint[clay[b, _VEH]:clay[b, _VEH] + n]
        axles = cint[clay[b, _AXLES]:clay[b, _AXLES] + n * k]
        if _place(cbuf[clay[b, _QA]:clay[b, _QA] + size].reshape((n, k + 1)),
                  cbuf[clay[b, _QR]:clay[b, _QR] + size].reshape((n, k + 1)),
                  cbuf[clay[b, _FACTOR]:clay[b, _FACTOR] + n * k].reshape((n, k)),
                  cbuf[clay[b, _LAST]:clay[b, _LAST] + 2 * size + n * k],
                  cbuf[clay[b, _SIGN]:clay[b, _SIGN] + n], veh, axles, body_force,
                  body_resist, torque, brake_own, rail_factor, rail_condition):
            changed = True
            for i in range(n):
                placed[veh[i]] = 1.0
            # the axles' brakes are their own (no air brake: its trains' control steps
            # are Python's), so only this batch's change
            for j in range(n * k):
                axle_brake[axles[j]] = brake_own[axles[j]]
    inputs_changed = False
    for b in range(nb):  # the inputs the plugins' state rates read, held
        vs = clay[b, _VS]
        if vs < 0:
            continue
        n, nf = clay[b, _N], clay[b, _NF]
        fields = cbuf[clay[b, _FIELDS]:clay[b, _FIELDS] + nf * n].reshape((nf, n))
        rows = inputs[vs]
        for r in range(rows.shape[0]):
            src = cint[clay[b, _INMAP] + r]
            if src < 0:
                continue  # a param: it never changes
            for i in range(n):
                value = fields[src, i]
                if not value == rows[r, i]:  # NaN counts as changed, as on the Python path
                    rows[r, i] = value
                    inputs_changed = True
    if changed:  # as TrainDynamics.refresh, the modes unchanged (the same loaded axles:
        # an axle newly driven or braked, or no longer, was handed back above), for the
        # vehicles placed anew
        loaded_rows_update(slip, torque, axle_brake, rail_factor)
        held_inputs_of(held, has_friction, work[2:2 + HELD_WORK_ROWS], placed, body_force,
                       body_resist, vconst[0], vconst[1], slip, loaded_vehicle,
                       (flags & RIGID) != 0)
    return RESTARTED if changed or inputs_changed or acted else KEPT


class ControlSteps:
    """What the compiled loop needs to take a run's control steps: the batches' kernels
    and a copy of what they read and write, laid out in one buffer. :meth:`gather` fills
    it from the models before the loop goes ahead; :meth:`scatter` writes it back after.

    Built by :meth:`build`, which returns None where some vehicle type has no compiled
    kernel (its steps stay on the Python path)."""

    def __init__(self, dyn: TrainDynamics, kernels: list[Kernel],
                 setters: list[Kernel | None] | None = None) -> None:
        self.dyn = dyn
        calls = [k.call for k in kernels]
        #: The kernels, one per batch (padded with one that always declines).
        self.kernels = tuple(calls) + self.no_kernels()[len(calls):]
        setters = setters or [None] * len(kernels)
        no_set = self.no_setters()
        #: The control kernels, one per batch (one that always declines where a model
        #: gives none).
        self.setters = tuple(no_set[0] if k is None else k.call for k in setters) \
            + no_set[len(setters):]
        #: Whether the loop can take the built-in driver's decisions: every vehicle type
        #: with its traction or brake level can have them set in the loop.
        self.decides = True
        vs = dyn.vehicle_states
        layout, ints = [], []
        at = 0
        self._fields: list[list[tuple[str, str]]] = []  # per batch: (kind, name) per row
        for (b, _, _, _, _), (veh, axles) in zip(dyn.placed, dyn._indices, strict=True):
            m = b.model
            n, k = m.count, m.num_axis
            fields = field_kinds(type(m))
            spec = [-1] * len(fields)
            vs_at = -1
            inmap: list[int] = []
            if m.states and b in vs.batches:
                vs_at = vs.batches.index(b)
                slices = vs.slices[vs_at]
                for r, (kind, rest) in enumerate(fields):
                    if kind == "state":
                        spec[r] = slices[rest].start
                # a param never changes; an attribute the kernel does not see, neither
                inmap = [fields.index(("attr", name)) if ("attr", name) in fields else -1
                         for name in m.rates_inputs]
            self._fields.append(fields)
            # the built-in driver's levels: set by the model's control kernel, or into
            # the field's row where the model keeps the framework's set_control
            levels_at = []
            own_set = type(m).set_control is not VehicleModel.set_control
            for name in (TRACTION, BRAKE):
                control = list(m.controls).index(name) if name in m.controls else -1
                row_at = fields.index(("attr", name)) if ("attr", name) in fields else -1
                if control >= 0 and setters[len(layout)] is None \
                        and (own_set or row_at < 0):
                    self.decides = False
                levels_at += [control, -1 if setters[len(layout)] is not None else row_at]
            size = n * (k + 1)
            row = [n, k, len(fields)]
            for length in (len(fields) * n, size, size, n * k, n, 2 * size + n * k):
                row.append(at)
                at += length
            ints_at = sum(len(a) for a in ints)
            row += [ints_at, ints_at + n, ints_at + n + n * k,
                    ints_at + n + n * k + len(spec), vs_at, *levels_at,
                    int(setters[len(layout)] is not None)]
            ints += [veh, axles, np.array(spec, dtype=np.int64),
                     np.array(inmap, dtype=np.int64)]
            layout.append(row)
        self.clay = np.array(layout, dtype=np.int64).reshape(-1, LAYOUT_COLUMNS)
        # per batch, as Python ints (for _parts, at every gather and scatter): its vehicles,
        # axles per vehicle, fields, and where its fields, Q_a, Q_r, adhesion factors and
        # last settings start in the buffer
        self._offsets = [(int(row[_N]), int(row[_K]), int(row[_NF]),
                          [int(row[c]) for c in (_FIELDS, _QA, _QR, _FACTOR, _LAST)])
                         for row in self.clay]
        self.cint = np.concatenate(ints).astype(np.int64) if ints else np.zeros(0, np.int64)
        self.cbuf = np.zeros(at)
        self.save = np.zeros(at)
        for (_, _, _, sign, _), row in zip(dyn.placed, self.clay, strict=True):
            self.cbuf[row[_SIGN]:row[_SIGN] + row[_N]] = sign
        tr = dyn.train
        #: Per vehicle: the resistance's constant term and the starting resistance (what
        #: the held rows take besides the inputs, :func:`~rrscore.dynamics.held_inputs_of`).
        self.vconst = np.ascontiguousarray(np.vstack([tr.c0, tr.start0]), dtype=float)
        #: The stop conditions and actions to watch (see the module's ``W_`` entries).
        self.watch = np.zeros(WATCH_SIZE)
        self._dtypes: list[list[np.dtype | None]] = [[] for _ in self._fields]
        self._gathered = np.zeros(0)  # the buffer as the last gather left it
        #: The built-in driver's run state while the loop decides (see
        #: :mod:`rrscore.autodriver`'s ``D_`` entries; ``D_ON`` 0: it does not), a copy
        #: to undo a control step handed back, its settings and the route's sections.
        #: Rows: the state, the copy, the settings (as the loop takes them).
        self.driver = np.zeros((3, max(DRIVER_STATE_SIZE, DRIVER_PARAMS_SIZE)))
        self.driver_state = self.driver[0]
        self.sections = np.zeros((3, 0))
        self._driver = None

    @staticmethod
    def no_kernels() -> tuple:
        """:data:`MAX_CONTROL_BATCHES` kernels that always decline (where a train has
        none)."""
        return (compile_kernel(_no_step, CONTROL_KERNEL).call,) * MAX_CONTROL_BATCHES

    @staticmethod
    def no_setters() -> tuple:
        """:data:`MAX_CONTROL_BATCHES` control kernels that always decline."""
        return (compile_kernel(_no_set, SET_KERNEL).call,) * MAX_CONTROL_BATCHES

    def drive(self, auto: AutoDriver | None) -> bool:
        """Hand the built-in driver's decisions to the loop for the coming advance: its
        state (and, once, its settings) into the loop's arrays. False where the loop
        cannot decide for it (no driver, disabled, a timetable, a vehicle type whose
        levels it cannot set): its next decision is then Python's."""
        state = self.driver_state
        if auto is None or not self.decides:
            state[D_ON] = 0.0
            return False
        state[:DRIVER_STATE_SIZE] = auto.loop_state()
        if self._driver is not auto:
            self.driver[2, :DRIVER_PARAMS_SIZE], self.sections = auto.loop_params()
            self._driver = auto
        return bool(state[D_ON])

    @classmethod
    def build(cls, dyn: TrainDynamics) -> ControlSteps | None:
        """The control steps for ``dyn``'s train, or None where the loop cannot take them:
        a vehicle type without a compiled ``step_kernel``, more than
        :data:`MAX_CONTROL_BATCHES` types, or an air brake."""
        batches = dyn.train.batches
        if dyn.airbrake is not None or not batches or len(batches) > MAX_CONTROL_BATCHES:
            return None
        kernels, setters = [], []
        for b in batches:
            fn = type(b.model).step_kernel
            if fn is None:
                return None
            kernel = compile_kernel(fn, CONTROL_KERNEL)
            if not kernel.compiled:
                return None
            kernels.append(kernel)
            fn = type(b.model).control_kernel
            setter = None if fn is None else compile_kernel(fn, SET_KERNEL)
            setters.append(setter if setter is not None and setter.compiled else None)
        return cls(dyn, kernels, setters)

    def _parts(self):
        """Per batch: its model, what it set last (a one-item list), its fields' kinds and
        dtypes, where its fields start in the buffer and its parts of it (fields as rows,
        ``Q_a``, ``Q_r``, adhesion factor, what it set last), in the train's order."""
        cbuf = self.cbuf
        for (b, _, _, _, last), (n, k, nf, at), fields, dtypes in zip(
                self.dyn.placed, self._offsets, self._fields, self._dtypes, strict=True):
            size = n * (k + 1)
            yield (b.model, last, fields, dtypes, at[0],
                   cbuf[at[0]:at[0] + nf * n].reshape(nf, n),
                   cbuf[at[1]:at[1] + size].reshape(n, k + 1),
                   cbuf[at[2]:at[2] + size].reshape(n, k + 1),
                   cbuf[at[3]:at[3] + n * k].reshape(n, k), cbuf[at[4]:at[4] + 2 * size + n * k])

    def gather(self) -> bool:
        """Copy what the kernels read from the models (after their last ``step``) into the
        buffer (the params once: they do not change); False where something is not as the
        kernels need it (an array of another shape, inputs not yet placed): the loop does
        not go ahead then."""
        first = not self._gathered.size
        for m, last, fields, dtypes, _, rows, q_a, q_r, factor, set_last in self._parts():
            n = m.count
            if last[0] is None or m.Q_a.shape != q_a.shape or m.Q_r.shape != q_r.shape \
                    or m.adhesion_factor.shape != factor.shape:
                return False
            dtypes.clear()
            for r, (kind, name) in enumerate(fields):
                dtype = None
                # states: read from the state vector by the loop
                if kind != "state" and (kind != "p" or first):
                    value = field_value(m, kind, name)
                    if value is not None:
                        if np.shape(value) != (n,):
                            return False
                        rows[r] = value
                        dtype = value.dtype if kind == "attr" else None
                dtypes.append(dtype)
            q_a[...] = m.Q_a
            q_r[...] = m.Q_r
            factor[...] = m.adhesion_factor
            set_last[...] = last[0]
        self._gathered = self.cbuf.copy()  # to write back only what the kernels changed
        return True

    def scatter(self) -> None:
        """Write back what the kernels wrote: the models' attributes they changed and their
        signals, ``Q_a`` and ``Q_r``, and what each set last (for the Python path's next
        placing)."""
        before = self._gathered
        for m, last, fields, dtypes, at, rows, q_a, q_r, _, set_last in self._parts():
            old = before[at:at + rows.size].reshape(rows.shape)
            changed = (rows != old).any(axis=1)
            for r, ((kind, name), dtype) in enumerate(zip(fields, dtypes, strict=True)):
                if kind == "out":
                    m.out[name] = rows[r].copy()
                elif kind == "attr" and changed[r]:
                    setattr(m, name, rows[r].astype(dtype if dtype is not None else float))
            m.Q_a[...] = q_a
            m.Q_r[...] = q_r
            last[0][...] = set_last
        self._gathered = self.cbuf.copy()  # the models now hold this
