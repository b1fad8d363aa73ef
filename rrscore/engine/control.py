"""The control step's pieces, compiled: the plugins' control steps and placing their inputs.

At a control time the vehicle plugins' ``step`` functions run on their records (their
vehicles' positions, speeds and states copied in first), and what they set (``q_a``,
``q_r``, the adhesion factor) is placed in the train's arrays: forces and torques in the
train frame, brakes as magnitudes, the rail factor as the rail condition times the
plugin's factor. The sums the bodies need (each vehicle's force and resistance through
its rolling axles, its effective mass) follow, and the loaded axles (those an axle's
slip margin is watched for). The run calls these from Python; the event loop, where it
takes the control steps itself, from compiled code (:func:`train_control`): the same
functions.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..jit import kernel
from ..physics.bodies import hold_directions, hold_friction
from . import system
from .airsystem import APPLICATIONS, air_after, air_before, driver_readings
from .loop import BROKE, CHANGED, HAND_BACK, KEPT
from .multibody import LOADED, RIGID, SLIPPING, MultiBody, event_layout

#: What the plugins set, placed: per vehicle the body force (train frame) and resistance;
#: per axle the plugins' own brake torque and the air brake's.
Inputs = namedtuple("Inputs", ["body_force", "body_resist", "brake_own", "air_torque"])


@kernel
def read_in(sys, b, y):  # pragma: no cover (compiled)
    """Type ``b``'s record given its vehicles' positions, speeds (vehicle frame) and
    states at ``y``, before its control step; each axle's slip velocity (vehicle frame,
    ``omega r - v`` of a slipping axle, 0 for one rolling: its creep is not integrated)
    in ``axle_slip``."""
    p, lay, ax = sys.plugins, sys.lay, sys.axles
    n, first, buf = p.count[b], p.first[b], p.bufs[b]
    row_x, row_v, k = p.row_x[b], p.row_v[b], p.axles[b]
    row_slip = p.row_slip[b]  # (-1: the type has no per-axle control to read it)
    for j in range(n):
        i, sign = p.index[first + j], p.sign[first + j]
        buf[row_x + j] = y[lay.sx + i]
        buf[row_v + j] = y[lay.sv + i] * sign
        for c in range(k if row_slip >= 0 else 0):
            a = p.axle_index[p.axle_first[b] + j * k + c]
            slip = 0.0 if ax.rolling[a] != 0.0 else \
                (y[lay.somega + a] * ax.radius[a] - y[lay.sv + i]) * sign
            buf[row_slip + j * k + c] = slip
    z0, row_s = p.state0[b], p.row_state[b]
    for k in range(p.nstates[b] * n):
        buf[row_s + k] = y[z0 + k]


@kernel
def step_plugins(sys, fns, t, dt, y):  # pragma: no cover (compiled)
    """Every vehicle type's control step (its record read in first)."""
    p = sys.plugins
    for b in range(p.count.size):
        if p.count[b] > 0:
            read_in(sys, b, y)
            fns.steps[b](t, dt, p.bufs[b], p.lays[b])


@kernel
def outputs_problem(sys):  # pragma: no cover (compiled)
    """After the plugins' control steps: which types' outputs (``q_a``, ``q_r``, the
    adhesion factors: one block of each record) changed since they were last placed
    (``plugins.changed``), and of those the first whose outputs are not finite or whose
    ``q_r`` is negative (resistances are magnitudes): ``(type, what)``, ``what`` 1 for
    not finite and 2 for negative; ``(-1, 0)`` where all are fine."""
    p = sys.plugins
    for b in range(p.count.size):
        n, k = p.count[b], p.axles[b]
        buf, placed = p.bufs[b], p.placed[b]
        block = buf[p.row_qa[b]:p.row_qa[b] + placed.size]
        differ = 0
        for r in range(placed.size):  # (counted, not and-ed: a loop on vectors)
            differ += block[r] != placed[r]
        p.changed[b] = 1 if differ > 0 else 0
        if differ == 0:
            continue
        for r in range(n * (k + 1)):
            qa, qr = buf[p.row_qa[b] + r], buf[p.row_qr[b] + r]
            if not (np.isfinite(qa) and np.isfinite(qr)):
                return b, 1
            if qr < 0.0:
                return b, 2
        for r in range(n * k):
            if not np.isfinite(buf[p.row_adh[b] + r]):
                return b, 1
    return -1, 0


@kernel
def place_inputs(sys, inputs, y):  # pragma: no cover (compiled)
    """What the plugins set placed in the train's arrays (of the types whose outputs
    changed, :func:`outputs_problem`), the held sums taken again, the loaded axles
    listed; returns whether anything changed (the loop then restarts)."""
    p, ax = sys.plugins, sys.axles
    changed = False
    for b in range(p.count.size):
        if p.changed[b] == 0:
            continue
        n, k, first, buf = p.count[b], p.axles[b], p.first[b], p.bufs[b]
        for j in range(n):
            i, sign = p.index[first + j], p.sign[first + j]
            qa = buf[p.row_qa[b] + j * (k + 1):p.row_qa[b] + (j + 1) * (k + 1)]
            qr = buf[p.row_qr[b] + j * (k + 1):p.row_qr[b] + (j + 1) * (k + 1)]
            adh = buf[p.row_adh[b] + j * k:p.row_adh[b] + (j + 1) * k]
            force, resist = qa[0] * sign, abs(qr[0])
            changed |= force != inputs.body_force[i] or resist != inputs.body_resist[i]
            inputs.body_force[i] = force
            inputs.body_resist[i] = resist
            for c in range(k):
                a = p.axle_index[p.axle_first[b] + j * k + c]
                torque, brake = qa[c + 1] * sign, abs(qr[c + 1])
                rail = ax.rail_condition[a] * adh[c]
                changed |= (torque != ax.torque[a] or brake != inputs.brake_own[a]
                            or rail != ax.rail_factor[a])
                ax.torque[a] = torque
                inputs.brake_own[a] = brake
                ax.rail_factor[a] = rail
        placed = p.placed[b]
        block = buf[p.row_qa[b]:p.row_qa[b] + placed.size]
        for r in range(placed.size):
            placed[r] = block[r]
        p.changed[b] = 0
    if changed or sys.control.air.on[0] != 0:
        for a in range(ax.torque.size):
            brake = inputs.brake_own[a] + inputs.air_torque[a]
            changed |= brake != ax.brake[a]
            ax.brake[a] = brake
    if changed:
        hold_inputs(sys, inputs, y, False)
    return changed


@kernel
def records_changed(sys):  # pragma: no cover (compiled)
    """Whether a vehicle type with states changed its record since the last look (beyond
    the positions, speeds and states each control step reads in): its states' rates may
    read what changed (a compressor switched on), so the loop restarts there."""
    p = sys.plugins
    changed = False
    for b in range(p.count.size):
        seen = p.seen[b]
        if seen.size == 0:
            continue
        n, buf = p.count[b], p.bufs[b]
        # the rows read in are not changes: taken as seen, then the whole record compared
        # in one loop on vectors
        for start, stop in ((p.row_x[b], p.row_x[b] + n), (p.row_v[b], p.row_v[b] + n),
                            (p.row_state[b], p.row_state[b] + p.nstates[b] * n)):
            for r in range(start, stop):
                seen[r] = buf[r]
        differ = 0
        for r in range(buf.size):
            differ += buf[r] != seen[r]
        if differ > 0:
            changed = True
            for r in range(buf.size):
                seen[r] = buf[r]
    return changed


@kernel
def hold_inputs(sys, inputs, y, modes):  # pragma: no cover (compiled)
    """The sums held over the control step from the placed inputs and the axles' modes:
    each vehicle's force and resistance through its rolling axles (``torque / r``,
    ``brake / r``), its effective mass (their ``J/r^2`` added: where ``modes`` changed,
    the axles rolling or slipping), whether friction can hold it; the loaded axles; the
    drive force of the train (the samples'); the directions friction acts in from the
    speeds at ``y``; and the events' layout."""
    lay, ax, held, bodies = sys.lay, sys.axles, sys.held, sys.bodies
    md = sys.modes
    n = lay.n
    for i in range(n):
        held.force[i] = inputs.body_force[i]
        held.resist[i] = inputs.body_resist[i]
    traction = 0.0
    for i in range(n):
        traction += inputs.body_force[i]
    loaded = 0
    for a in range(ax.torque.size):
        torque, brake = ax.torque[a], ax.brake[a]
        if torque == 0.0 and brake == 0.0:  # (most axles of a long train: nothing to add)
            continue
        i = ax.vehicle[a]
        traction += torque * ax.inv_radius[a]
        if ax.rolling[a] == 0.0:
            continue
        held.force[i] += torque * ax.inv_radius[a]
        held.resist[i] += brake * ax.inv_radius[a]
        md.loaded[loaded] = a
        loaded += 1
    md.counts[LOADED] = loaded
    sys.totals[0] = traction
    for i in range(n):
        held.base[i] = held.resist[i] + bodies.c0[i]
    if modes:
        hold_masses(sys)
    hold_friction(held, bodies.start0, md.flags[RIGID] != 0)
    for c in range(md.counts[SLIPPING]):  # sliding wheels hold their vehicles too
        held.friction[ax.vehicle[md.slipping[c]]] = 1.0
    if md.flags[RIGID] != 0 and md.counts[SLIPPING] > 0:
        for i in range(n):
            held.friction[i] = 1.0
    hold_directions(held, y[lay.sv:lay.sv + n])
    event_layout(sys)


@kernel
def hold_masses(sys):  # pragma: no cover (compiled)
    """Each vehicle's effective mass: its own and its rolling axles' ``J/r^2``."""
    ax, held = sys.axles, sys.held
    for i in range(held.mass.size):
        held.mass[i] = sys.bodies.mass[i]
    for a in range(ax.vehicle.size):
        if ax.rolling[a] != 0.0:
            held.mass[ax.vehicle[a]] += ax.mass_equiv[a]
    for i in range(held.mass.size):
        held.inv_mass[i] = 1.0 / held.mass[i]


#: What the loop's control step watches, one record: the front's limit (a stop position,
#: the route's end, a driver's action due at a position), the lead's start position, the
#: largest distance (0: none), the speed below which a vehicle stands, whether standstill
#: stops the run (1/0), whether the train has moved (1/0, updated), the speeds at which a
#: driver's action is due (above, below), the lead's half length, and which vehicle type's
#: control step set outputs it may not (its index + 1; 0: none).
WATCH = np.dtype([("front_limit", "f8"), ("x0", "f8"), ("max_distance", "f8"),
                  ("standstill_speed", "f8"), ("standstill", "f8"), ("moved", "f8"),
                  ("above", "f8"), ("below", "f8"), ("half0", "f8"), ("failed", "f8")])

#: The control step's own data: the watch (:data:`WATCH`), what the plugins set as placed
#: (:data:`Inputs`), the built-in driver's state, settings and the route's sections, and
#: the air brake (:class:`~rrscore.engine.airsystem.AirRun`), the speed-limit watch
#: (:class:`~rrscore.engine.limitwatch.LimitWatch`).
Control = namedtuple("Control", ["watch", "inputs", "driver_state", "driver_params",
                                 "sections", "air", "limits"])


@kernel
def due(sys, watch, y):  # pragma: no cover (compiled)
    """Whether a stop condition or a driver's action may be due at the state ``y``: the
    loop then hands the control time to Python. Marks the train as moved."""
    lay = sys.lay
    w = watch[0]
    top = 0.0
    for i in range(lay.n):
        top = max(top, abs(y[lay.sv + i]))
    if top > w.standstill_speed:
        w.moved = 1.0
    front = y[lay.sx] + w.half0
    lead = abs(y[lay.sv])
    if front >= w.front_limit or lead >= w.above or lead <= w.below:
        return True
    if w.max_distance > 0.0 and abs(y[lay.sx] - w.x0) >= w.max_distance:
        return True
    if sys.control.air.count[0] >= APPLICATIONS // 2:  # the watch's table, half full
        return True
    return w.standstill != 0.0 and w.moved != 0.0 and top <= w.standstill_speed


@kernel
def set_levels(sys, fns, state, params):  # pragma: no cover (compiled)
    """The built-in driver's levels set on every vehicle that takes them (through each
    type's inputs, as a driver program's ``set``): its command as traction above zero and
    ``brake_level`` below or, where it works the train's brakes, traction and the dynamic
    brake, brake valve, independent brake and bail-off levels (the columns of
    ``plugins.driven``)."""
    p, s = sys.plugins, state[0]
    traction = 0.0 if 0.0 > s.command else s.command
    if params[0].train_brakes != 0.0:
        levels = (traction, np.nan, s.dynamic, s.valve, s.independent, s.bail)
    else:
        levels = (traction, 0.0 if 0.0 > -s.command else -s.command, np.nan, np.nan, np.nan,
                  np.nan)
    for b in range(p.count.size):
        for c in range(len(levels)):
            which, level = p.driven[b, c], levels[c]
            if which < 0 or level != level:
                continue
            for i in range(p.count[b]):
                fns.inputs[b](p.bufs[b], p.lays[b], i, which, level)


@kernel
def train_control(sys, fns, st, t, y):  # pragma: no cover (compiled)
    """The control step at ``t`` as the loop takes it: handed back where a stop condition
    or a driver's action may be due; else the built-in driver's decision, every plugin's
    control step and their inputs placed, as the run's own control step does. A plugin
    that sets outputs it may not is marked (``watch.failed``) and the time handed back."""
    c = sys.control
    if due(sys, c.watch, y):
        return HAND_BACK
    lay = sys.lay
    n = lay.n
    front = y[lay.sx] + c.watch[0].half0
    rear = y[lay.sx + n - 1] - sys.bodies.half[n - 1]
    driver_readings(c.air, c.driver_state, c.driver_params, t)
    acted = fns.driver(t, front, rear, y[lay.sv], np.inf, c.driver_state, c.driver_params,
                       c.sections) != 0
    if acted:
        set_levels(sys, fns, c.driver_state, c.driver_params)
    step_plugins(sys, fns, t, st.control_dt, y)
    b, _ = outputs_problem(sys)
    if b >= 0:
        c.watch[0].failed = b + 1.0
        return HAND_BACK
    air_before(sys, t, y)
    changed = place_inputs(sys, c.inputs, y)
    changed = records_changed(sys) or changed
    ok, drawn = air_after(sys, fns, t, st.control_dt, y)
    if not ok:
        return BROKE
    return CHANGED if changed or acted or drawn else KEPT


system.control.register(MultiBody, train_control)
