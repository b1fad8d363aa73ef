"""The air brake as a system of the event loop, advanced a control step at a time.

The pneumatics (:mod:`rrscore.physics.airbrake`) are a system of their own
(:class:`AirSystem`): the brake pipe's chain of small volumes and short hoses rings at
a few tens of hertz and its ports are stiff near balance, so an explicit method needs
steps of a few milliseconds there, while the train's motion, which the brake reaches
only through the torque held over a control step, keeps its own, longer steps. At each
control step of the train (:func:`air_before`, :func:`air_after`, from the train's
compiled control step or from Python's), the brake:

1. reads the driver's brake valve handles and the independent brake levels from the
   vehicle plugins' records;
2. sets each axle's air brake torque from the cylinder pressures and the speeds (held
   over the control step, as the plugins' ``q_r`` are);
3. watches the brake applications for the summary (:data:`APPLICATION`);
4. is carried to the next control time by the same event loop as the train
   (:func:`rrscore.engine.loop.advance`, Bogacki-Shampine 3(2) by default);
5. draws the air its valves and independent brakes took from a main reservoir over
   the step from that reservoir's state, at a steady rate over the next step (the
   train's right-hand side), so no air is made or lost.

Samples between control times interpolate the brake's states linearly.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np

from ..jit import kernel, struct
from ..model.brake import MODES, SHOE_TYPES, TABLE, TIMES
from ..model.state import StateLayout, StateSpec, entry_ranges
from ..physics.airbrake import (
    CYLINDER_BAND,
    EMERGENCY,
    RUNNING,
    SERVICE,
    AirLayout,
    Cylinders,
    Distributors,
    Feeders,
    Pipe,
    Valves,
    air_rates,
    cylinder_forces,
)
from ..physics.pneumatics import R_AIR, TEMPERATURE, VISCOSITY, circle_area
from . import system
from .adapters import decision_due
from .loop import DONE, advance, loop_state, work_for

#: Main reservoir pressure (Pa) the air brake may owe a reservoir before the rate at which
#: it draws the reservoir down is updated (which restarts the train's steps).
OWED_TOLERANCE = 200.0
#: Applications the brake watch holds before Python takes them (at the next control
#: step, which an application's end hands to Python).
APPLICATIONS = 64

AirSystem = struct("AirSystem", (
    "live", "formed", "controlled", "atol", "rtol", "ev_kind", "lay", "pipe", "valves",
    "dists", "cyls", "feeders", "inflow", "target"), """The air brake's pneumatics as a
    system of the loop: its layout and parts (:mod:`rrscore.physics.airbrake`) and the
    scratch of its right-hand side (``inflow`` per vehicle, ``target`` per cylinder).""")

#: One brake application of the summary: kind (:data:`KINDS`), where it began (time,
#: the front's position, the lead's speed), the largest coupler tension and compression
#: during it and at which coupling, how it ended (0 under way, 1 stopped, 2 released)
#: and where (time, front, lead's speed); its measure at the start and its peak (the
#: train's air brake: the first driver's valve's equalizing reservoir pressure, its
#: lowest (the reduction as the driver reads it: the pipe follows it); the
#: independent brake: its largest pressure asked for, Pa; the dynamic brake: the train's
#: largest dynamic brake force, N; the brake_level control: its largest level).
APPLICATION = np.dtype([
    ("kind", "f8"), ("start_t", "f8"), ("start_x", "f8"), ("start_v", "f8"),
    ("max_tension", "f8"), ("tension_coupling", "f8"), ("max_compression", "f8"),
    ("compression_coupling", "f8"), ("end", "f8"), ("end_t", "f8"), ("end_x", "f8"),
    ("end_v", "f8"), ("start_measure", "f8"), ("peak", "f8")])
ENDS = ("under way", "stopped", "released")
#: The kinds of application, by the ``kind`` of :data:`APPLICATION`: the train's air
#: brake through a driver's brake valve (service or emergency), the locomotives'
#: independent brakes, the dynamic brakes, the vehicles' ``brake_level`` control (a
#: locomotive's own straight brake, or whatever brake a vehicle model works by it).
KINDS = ("service", "emergency", "independent", "dynamic", "brake_level")
#: The watch's channels, one application of each under way at a time: the train's air
#: brake, the independent brake, the dynamic brake, the brake_level control.
AIR, INDEPENDENT, DYNAMIC, LEVEL = range(4)

#: The air brake of a train as its control step works it: the system, its method, loop
#: state and work; whether the train has one (``on[0]``); the state at the last control
#: time and that time and the next (``span``); where the handles are read from (per
#: valve and per independent brake: the vehicle type and the index in its record's
#: buffer) and the independent brakes' cylinders and full pressures; per feeder, the
#: train state of its main reservoir (-1: a held supply), its supply pressure, the rate
#: the train draws it down at and the pressure owed; per draw entry of the train, its
#: feeder; the brake force at the rail of each vehicle and each axle's share of its
#: vehicle's force as a torque (its radius over its vehicle's axles); the applications
#: ended (``apps``, ``count[0]`` of them) and those under way (``current``, one per
#: channel of the watch, ``active[k]`` 1/0); the work of the air brake, the dynamic
#: brakes and the part of the air brake's done by cylinders the independent brake held
#: (``works``), each vehicle's dynamic brake force and, per vehicle type, the row of its
#: dynamic brake signal (-1: none; ``works[3:7]``: each channel's measure at the last
#: control step); per independent brake, whether it fills and whether
#: it releases at once (1/0: its time is 0); per vehicle, whether its cylinder's
#: pressure is the independent brake's (1/0, at the control step), and the buffer (type,
#: index) of its brake_level control (-1: none); the lowest auxiliary reservoir pressure
#: (Pa), its distributor and when (``lowest_aux``); per independent brake, the index of
#: its model's ``bail_off`` control in its record's buffer (-1: none).
AirRun = namedtuple("AirRun", [
    "system", "tab", "state", "work", "on", "y0", "span", "valve_type", "valve_at",
    "indep_cyl", "indep_type", "indep_at", "indep_max", "mr_state", "supply", "rate",
    "owed", "draw_of", "force", "axle_share", "apps", "count", "active", "works", "dynamic",
    "dynamic_row", "indep_fill_now", "indep_release_now", "current", "by_indep",
    "level_type", "level_at", "lowest_aux", "bail_at"])


# ------------------------------------------------------------------ the loop's contract
@kernel
def rhs(sys, fns, t, y, dy, full):  # pragma: no cover (compiled)
    """The pneumatics' derivatives."""
    air_rates(sys.pipe, sys.valves, sys.dists, sys.cyls, sys.feeders, sys.lay, y, dy,
              sys.inflow, sys.target)


@kernel
def sample(sys, fns, t, y, f, row):  # pragma: no cover (compiled)
    """No samples of its own: the train's samples read it."""
    return 0


# (no events: the valves' modes are smooth in the pressures; no reference: pressures are
# held to absolute tolerances; no control steps: the train's advances it)
for _generic, _impl in ((system.rhs, rhs), (system.events, system.no_events),
                        (system.kink_bound, system.no_kinks),
                        (system.reference, system.no_reference),
                        (system.commit, system.nothing_to_commit),
                        (system.control, system.no_control), (system.sample, sample)):
    _generic.register(AirSystem, _impl)


# ------------------------------------------------------------------- control steps
@kernel
def read_handles(air, plugins):  # pragma: no cover (compiled)
    """The driver's brake valve handles (positions 1 to 5) and the independent brakes'
    target pressures, from the vehicle plugins' records."""
    valves, cyls = air.system.valves, air.system.cyls
    for k in range(valves.vehicle.size):
        value = plugins.bufs[air.valve_type[k]][air.valve_at[k]]
        valves.position[k] = min(max(np.rint(value), 1.0), 5.0)
    for k in range(air.indep_cyl.size):
        level = plugins.bufs[air.indep_type[k]][air.indep_at[k]]
        cyls.ind_target[air.indep_cyl[k]] = min(max(level, 0.0), 1.0) * air.indep_max[k]
        at = air.bail_at[k]  # (in the same record, where its model has a bail_off control)
        bail = at >= 0 and plugins.bufs[air.indep_type[k]][at] > 0.5
        cyls.bailed[air.indep_cyl[k]] = 1.0 if bail else 0.0
        independent_at_once(air, k)


@kernel
def independent_at_once(air, k):  # pragma: no cover (compiled)
    """Independent brake ``k`` whose application (or release) time is 0: its cylinder
    pressure set at the control step to the pressure asked for (filling: at most its
    main reservoir's; releasing: not below what its distributor asks), the air it took
    owed by that reservoir (drawn down over the coming step, as the rest)."""
    asys = air.system
    cyls, dists, lay, feeders = asys.cyls, asys.dists, asys.lay, asys.feeders
    c = air.indep_cyl[k]
    f = cyls.feeder[c]
    y = air.work.y
    pc, want = y[lay.sc + c], cyls.ind_target[c]
    if air.indep_fill_now[k] != 0.0 and want > pc:
        new = max(min(want, feeders.source[f]), pc)
        y[lay.sc + c] = new
        air.owed[f] += (new - pc) * cyls.volume[c] / feeders.volume[f]
        return
    if air.indep_release_now[k] == 0.0:
        return
    a = cyls.distributor[c]
    if a >= 0 and cyls.bailed[c] == 0.0:
        pd, pw = y[lay.sp + dists.vehicle[a]], y[lay.sw + a]
        want = max(want, dists.p_max[a] * min(max(
            (pw - pd - dists.dead[a]) / (dists.full[a] - dists.dead[a]), 0.0), 1.0))
    if want < pc:
        y[lay.sc + c] = want


@kernel
def air_before(sys, t, y):  # pragma: no cover (compiled)
    """The air brake's part of a control step before the plugins' outputs are placed:
    the handles read, the hoses of parted couplings torn, each axle's air brake torque
    set (``control.inputs.air_torque``) from the cylinder pressures and the speeds at
    ``y``, the dynamic brakes' forces read and the applications watched."""
    air, lay = sys.control.air, sys.lay
    if air.on[0] == 0:
        read_dynamic(air, sys.plugins)
        watch_applications(sys, t, y)
        return
    asys = air.system
    read_handles(air, sys.plugins)
    held_by_independent(air)
    lowest_aux(air, t)
    pipe = asys.pipe
    for j in range(pipe.torn.size):
        if pipe.hoses[j] != 0.0 and pipe.coupled[j] == 0.0:
            pipe.torn[j] = 1.0
    v = y[lay.sv:lay.sv + lay.n]
    for i in range(air.force.size):
        air.force[i] = 0.0
    cylinder_forces(asys.cyls, asys.lay, air.work.y, v, air.force)
    ax, torque = sys.axles, sys.control.inputs.air_torque
    for a in range(torque.size):
        torque[a] = air.force[ax.vehicle[a]] * air.axle_share[a]
    read_dynamic(air, sys.plugins)
    watch_applications(sys, t, y)


@kernel
def read_dynamic(air, plugins):  # pragma: no cover (compiled)
    """Each vehicle's dynamic brake force (a magnitude), from its plugin's signal."""
    for b in range(plugins.count.size):
        row = air.dynamic_row[b]
        if row < 0:
            continue
        buf = plugins.bufs[b]
        first = plugins.first[b]
        for j in range(plugins.count[b]):
            air.dynamic[plugins.index[first + j]] = abs(buf[row + j])


@kernel
def held_by_independent(air):  # pragma: no cover (compiled)
    """Which vehicles' cylinders the independent brake holds (its pressure asked for above
    the distributor's, as the right-hand side last worked that out, or, after it, while
    the cylinder releases down to the distributor's): their work is the independent
    brake's."""
    cyls, target, lay = air.system.cyls, air.system.target, air.system.lay
    for c in range(cyls.vehicle.size):
        own = target[c] if cyls.distributor[c] >= 0 and cyls.bailed[c] == 0.0 else 0.0
        i = cyls.vehicle[c]
        # (and while it releases what it applied, down to what the distributor asks)
        held = cyls.feeder[c] >= 0 and (cyls.ind_target[c] > own or (
            air.by_indep[i] != 0.0 and air.work.y[lay.sc + c] > own + CYLINDER_BAND))
        air.by_indep[i] = 1.0 if held else 0.0


@kernel
def lowest_aux(air, t):  # pragma: no cover (compiled)
    """The lowest auxiliary reservoir pressure in the train so far, at control steps."""
    lay, low = air.system.lay, air.lowest_aux
    y = air.work.y
    for k in range(air.system.dists.vehicle.size):
        if y[lay.sa + k] < low[0]:
            low[0], low[1], low[2] = y[lay.sa + k], air.system.dists.vehicle[k], t


@kernel
def driver_readings(air, state, params, t):  # pragma: no cover (compiled)
    """What the built-in driver reads of the air brake before a decision at ``t``, into its
    state (:data:`~rrscore.engine.adapters.DRIVER_STATE`): the first driver's valve's
    equalizing reservoir pressure and the lowest auxiliary reservoir pressure now (Pa; NaN
    without an air brake). Read only where a decision is due and the driver works the
    train's brakes (``params``): the other control steps need none."""
    if params[0].train_brakes == 0.0 or not decision_due(state, t):
        return
    s = state[0]
    if air.on[0] == 0:
        s.equalizing = s.aux_low = np.nan
        return
    lay, y = air.system.lay, air.work.y
    s.equalizing = y[lay.se] if air.system.valves.vehicle.size > 0 else np.nan
    low = np.inf
    for k in range(air.system.dists.vehicle.size):
        low = min(low, y[lay.sa + k])
    s.aux_low = low


@kernel
def brake_channels(sys, y):  # pragma: no cover (compiled)
    """What each channel of the watch reads at this control step: whether it applies,
    its measure (see :data:`APPLICATION`) into ``air.works[3:7]``, and whether the air
    brake's application is an emergency."""
    air = sys.control.air
    valves, pipe, cyls = air.system.valves, air.system.pipe, air.system.cyls
    emergency = applying = False
    released = valves.vehicle.size > 0
    for k in range(valves.vehicle.size):
        pos = valves.position[k]
        emergency = emergency or pos == EMERGENCY
        applying = applying or pos == SERVICE
        released = released and pos <= RUNNING
    for j in range(pipe.torn.size):
        emergency = emergency or pipe.torn[j] != 0.0
    m = air.works[3:7]
    m[AIR] = air.work.y[air.system.lay.se] if valves.vehicle.size > 0 else np.nan
    m[INDEPENDENT] = 0.0
    for k in range(air.indep_cyl.size):
        m[INDEPENDENT] = max(m[INDEPENDENT], cyls.ind_target[air.indep_cyl[k]])
    m[DYNAMIC] = 0.0
    for i in range(air.dynamic.size):
        m[DYNAMIC] += air.dynamic[i]
    m[LEVEL] = 0.0
    for i in range(air.level_type.size):
        if air.level_type[i] >= 0:
            m[LEVEL] = max(m[LEVEL], sys.plugins.bufs[air.level_type[i]][air.level_at[i]])
    on = (applying or emergency, m[INDEPENDENT] > 0.0, m[DYNAMIC] > 0.0, m[LEVEL] > 0.0)
    # (the air brake's application ends where every valve is back in release or running)
    off = (released and not emergency, not on[1], not on[2], not on[3])
    return on, off, emergency


@kernel
def watch_applications(sys, t, y):  # pragma: no cover (compiled)
    """At a control step, on each channel of the watch (:data:`AIR` ...): an application
    begins where its brake is applied while the train moves (the air brake: a valve put
    in service or emergency, or a coupling parting and tearing the hoses, an emergency);
    one under way follows its peak, becomes an emergency, or ends (released)."""
    air, lay = sys.control.air, sys.lay
    on, off, emergency = brake_channels(sys, y)
    m = air.works[3:7]
    front = y[lay.sx] + sys.bodies.half[0]
    top = 0.0
    for i in range(lay.n):
        top = max(top, abs(y[lay.sv + i]))
    for k in range(4):
        app = air.current[k]
        if air.active[k] == 0:
            if on[k] and top > sys.control.watch[0].standstill_speed:
                app.kind = (1.0 if emergency else 0.0) if k == AIR else k + 1.0
                app.start_t, app.start_x, app.start_v = t, front, y[lay.sv]
                app.max_tension = app.max_compression = 0.0
                app.tension_coupling = app.compression_coupling = -1.0
                app.end = 0.0
                app.start_measure = app.peak = m[k]
                air.active[k] = 1
            continue
        if k == AIR:
            if emergency:
                app.kind = 1.0
            app.peak = min(app.peak, m[k])  # (the pipe's lowest pressure)
        else:
            app.peak = max(app.peak, m[k])
        if off[k]:
            end_application(air, k, 2.0, t, front, y[lay.sv])


@kernel
def end_application(air, k, how, t, front, speed):  # pragma: no cover (compiled)
    """The application under way on channel ``k`` ends (``how``: 1 stopped, 2 released)
    at ``t``: moved to the ended ones (where there is room: the control step hands
    Python the table when it is half full)."""
    app = air.current[k]
    app.end, app.end_t, app.end_x, app.end_v = how, t, front, speed
    air.active[k] = 0
    if air.count[0] < air.apps.size:
        air.apps[air.count[0]] = app
        air.count[0] += 1


@kernel
def watch_step(sys, t0, t1, y0, y1, cf):  # pragma: no cover (compiled)
    """After a committed step from ``(t0, y0)`` to ``(t1, y1)`` (``cf``: the coupler
    forces at its end): the air, independent and dynamic brakes' work (their forces held
    over the step, the speed's size taken as its mean), and of each application under
    way the largest in-train forces and its end where the whole train stands."""
    air, lay = sys.control.air, sys.lay
    dt = t1 - t0
    work_air = work_dynamic = work_indep = 0.0
    top = 0.0
    for i in range(lay.n):
        speed = 0.5 * (abs(y0[lay.sv + i]) + abs(y1[lay.sv + i]))
        work_air += air.force[i] * speed
        work_indep += air.force[i] * air.by_indep[i] * speed
        work_dynamic += air.dynamic[i] * speed
        top = max(top, abs(y1[lay.sv + i]))
    air.works[0] += work_air * dt
    air.works[1] += work_dynamic * dt
    air.works[2] += work_indep * dt
    for k in range(4):
        if air.active[k] == 0:
            continue
        app = air.current[k]
        for j in range(cf.size):
            if cf[j] > app.max_tension:
                app.max_tension, app.tension_coupling = cf[j], j
            if -cf[j] > app.max_compression:
                app.max_compression, app.compression_coupling = -cf[j], j
        if top <= sys.control.watch[0].standstill_speed:
            end_application(air, k, 1.0, t1, y1[lay.sx] + sys.bodies.half[0], y1[lay.sv])


@kernel
def air_after(sys, fns, t, dt, y):  # pragma: no cover (compiled)
    """The air brake carried from ``t`` to the next control time ``t + dt``, its main
    reservoirs at their pressures in the train's state ``y``; the air they gave drawn
    from them at a steady rate over the coming step. Returns ``(ok, changed)``: whether
    the air brake's steps went through, and whether the rate changed (the train's steps
    then restart)."""
    air = sys.control.air
    if air.on[0] == 0:
        return True, False
    asys = air.system
    feeders, lay = asys.feeders, asys.lay
    for f in range(feeders.vehicle.size):
        k = air.mr_state[f]
        feeders.source[f] = y[k] if k >= 0 else air.supply[f]
    w, st = air.work, air.state[0]
    for i in range(w.y.size):
        air.y0[i] = w.y[i]
    air.span[0], air.span[1] = t, t + dt
    st.t_end = t + dt
    st.known = 0  # the handles and the main reservoirs' pressures are new: a restart
    code = advance(asys, fns, air.tab, air.state, w)
    if code != DONE:
        return False, False
    # The fall of each main reservoir's pressure this step asks for, and what the rate
    # held from before gives: while they differ by less than OWED_TOLERANCE (carried
    # over, so no air is lost), the rate stays and the train's steps need not restart.
    rt = R_AIR * TEMPERATURE
    changed = False
    for f in range(feeders.vehicle.size):
        drawn = w.y[lay.sd + f] - air.y0[lay.sd + f]
        air.owed[f] += rt * drawn / feeders.volume[f] - air.rate[f] * dt
        changed = changed or abs(air.owed[f]) >= OWED_TOLERANCE
    if changed:
        for f in range(feeders.vehicle.size):
            air.rate[f] += air.owed[f] / dt
            air.owed[f] = 0.0
        for k in range(sys.draw_rate.size):
            sys.draw_rate[k] = air.rate[air.draw_of[k]]
    return True, changed


# ------------------------------------------------------------------------ building
def _column(configs: list[dict], key: str, dtype: Any = float) -> np.ndarray:
    return np.array([c[key] for c in configs], dtype=dtype)


def _independent_rate(cfg: list[dict], indep: np.ndarray, which: str) -> np.ndarray:
    """The independent brakes' fill (``which`` "application") or release rates, Pa/s:
    their full pressure over their time; 0 where the time is 0 (the control step then
    sets the pressure at once: :func:`independent_at_once`)."""
    full = _column([cfg[i] for i in indep], "independent_pressure")
    time = _column([cfg[i] for i in indep], f"independent_{which}_time")
    return np.divide(full, time, out=np.zeros(indep.size), where=time > 0.0)


def _index(values: Any) -> np.ndarray:
    return np.ascontiguousarray(values, dtype=np.int64)


class AirBrake:
    """The air brake of one run's train: its system and the loop that carries it, built
    from the vehicles' ``[vehicle.brake]`` tables; what Python reads of it (its states
    by name, the signals, the applications).

    :param train: the assembled train.
    :param coupled: the couplings' coupled flags (the train system's own array: the
        pipe's joints follow it).
    :param tableau: the method that integrates it (an explicit adaptive tableau).
    """

    def __init__(self, train: Any, coupled: np.ndarray, tableau: Any) -> None:
        self.train = tr = train
        n = tr.count
        cfg = tr.brake_configs
        self.on = bool(tr.has_air_brake)
        has_pipe = np.array([c["system"] == "air" for c in cfg])
        self.has_pipe = has_pipe
        pipe = self._pipe(cfg, has_pipe, coupled)
        kind = np.array([c["distributor"] if c["system"] == "air" else "none" for c in cfg])
        self.dist = dist = np.flatnonzero(kind != "none")
        self.valve = valve = np.flatnonzero([c["system"] == "air" and c["driver_valve"]
                                             for c in cfg])
        self.indep = indep = np.flatnonzero([c["system"] == "air" and c["independent"]
                                             for c in cfg])
        self.feeders = feeders = np.union1d(valve, indep)
        self.cyl = cyl = np.union1d(dist, indep)
        lay = self.layout = StateLayout()
        pa = StateSpec("Pa", "gauge pressure", atol=20.0)
        sp = lay.add("brake.pipe", StateSpec("Pa", "brake pipe pressure, gauge", atol=20.0), n)
        sq = lay.add("brake.flow", StateSpec("kg/s", "air flow from each vehicle's pipe to "
                                             "the next one's", atol=1e-4), max(n - 1, 0))
        sa = lay.add("brake.aux", StateSpec("Pa", "auxiliary reservoir pressure, gauge",
                                            atol=20.0), dist.size)
        sw = lay.add("brake.working", pa, dist.size)
        sk = lay.add("brake.quick", pa, dist.size)
        sl = lay.add("brake.lowest", pa, dist.size)
        sc = lay.add("brake.cylinder", StateSpec("Pa", "brake cylinder pressure, gauge",
                                                 atol=20.0), cyl.size)
        se = lay.add("brake.equalizing", StateSpec("Pa", "equalizing reservoir pressure, "
                                                   "gauge", atol=20.0), valve.size)
        sd = lay.add("brake.drawn", StateSpec("kg", "air drawn from each feeding main "
                                              "reservoir", atol=np.inf), feeders.size)
        self.air_layout = AirLayout(n, sp.start, sq.start, sa.start, sw.start, sk.start,
                                    sl.start, sc.start, se.start, sd.start, lay.size)
        v = [cfg[i] for i in valve]
        valves = Valves(_index(valve), _index(np.searchsorted(feeders, valve)),
                        np.full(valve.size, float(RUNNING)), _column(v, "running_pressure"),
                        _column(v, "service_rate"), _column(v, "charging_rate"),
                        circle_area(_column(v, "relay_port")),
                        circle_area(_column(v, "charging_port")),
                        circle_area(_column(v, "emergency_port")))
        dists = self._distributors(cfg, dist, cyl)
        cyls = self._cylinders(cfg, dist, indep, cyl, feeders, dists)
        f = [cfg[i] for i in feeders]
        feeder_parts = Feeders(_index(feeders), _column(f, "supply_pressure"),
                               _column(f, "main_reservoir_volume"))
        atol = lay.atol()
        formed = np.ones(lay.size, dtype=bool)
        live = formed.copy()
        live[sd] = False
        self.system = AirSystem(entry_ranges(live), entry_ranges(formed),
                                entry_ranges(np.isfinite(atol)), atol, np.zeros(lay.size),
                                np.zeros(1, dtype=np.int64), self.air_layout, pipe, valves,
                                dists, cyls, feeder_parts, np.zeros(n), np.zeros(cyl.size))
        self.tab = tableau.coefficients()
        state = loop_state()
        state[0].h = 1e-3
        work = work_for(lay.size, self.tab.stages, 1, 1, 1, 0)
        self.indep_max = _column([cfg[i] for i in indep], "independent_pressure")
        self.mr_state = np.full(feeders.size, -1, dtype=np.int64)
        self.run = AirRun(
            self.system, self.tab, state, work, np.array([int(self.on)], dtype=np.int64),
            np.zeros(lay.size), np.zeros(2), _index(np.zeros(valve.size)),
            _index(np.zeros(valve.size)), _index(np.searchsorted(cyl, indep)),
            _index(np.zeros(indep.size)), _index(np.zeros(indep.size)), self.indep_max,
            self.mr_state, _column(f, "supply_pressure"), np.zeros(feeders.size),
            np.zeros(feeders.size), np.zeros(0, dtype=np.int64), np.zeros(n),
            tr.axle_radius / tr.num_axis[tr.axle_vehicle],
            np.zeros(APPLICATIONS, dtype=APPLICATION).view(np.recarray),
            np.zeros(1, dtype=np.int64), np.zeros(4, dtype=np.int64), np.zeros(7),
            np.zeros(n), np.full(8, -1, dtype=np.int64),
            (_column([cfg[i] for i in indep], "independent_application_time") == 0.0) * 1.0,
            (_column([cfg[i] for i in indep], "independent_release_time") == 0.0) * 1.0,
            np.zeros(4, dtype=APPLICATION).view(np.recarray), np.zeros(n),
            np.full(n, -1, dtype=np.int64), np.zeros(n, dtype=np.int64),
            np.array([np.inf, -1.0, np.nan]), np.full(indep.size, -1, dtype=np.int64))
        #: Applications Python has taken from the watch (dicts, as the summary lists them).
        self.applications: list[dict[str, Any]] = []

    # -- the parts
    def _pipe(self, cfg: list[dict], has_pipe: np.ndarray, coupled: np.ndarray) -> Pipe:
        """The brake pipe: a joint's path is the rear half of one vehicle's pipe, its rear
        hose, the next one's front hose and the front half of its pipe; per piece, its
        inertance ``l/A`` and laminar and turbulent friction (pressure drop ``q lam / rho
        + q |q| turb / rho``)."""
        tr = self.train
        length = np.array([c["pipe_length"] if c["pipe_length"] is not None else L
                           for c, L in zip(cfg, tr.length, strict=True)])
        d_pipe, d_hose = _column(cfg, "pipe_diameter"), _column(cfg, "hose_diameter")
        a_pipe, a_hose = circle_area(d_pipe), circle_area(d_hose)
        hose, friction = _column(cfg, "hose_length"), _column(cfg, "pipe_friction")
        volume = np.where(has_pipe, a_pipe * length + 2 * a_hose * hose
                          + _column(cfg, "extra_volume"), 1.0)
        half = 0.5 * length / a_pipe + hose / a_hose
        lam = 16 * VISCOSITY * length / (d_pipe**2 * a_pipe) \
            + 32 * VISCOSITY * hose / (d_hose**2 * a_hose)
        turb = friction * 0.5 * length / (2 * d_pipe * a_pipe**2) \
            + friction * hose / (2 * d_hose * a_hose**2)
        connected = np.asarray(tr.brake_pipe_connected[1:], dtype=bool)
        # hoses are joined where couplings are coupled at the start; a coupling that parts
        # tears them, and they stay open and venting when the vehicles meet again
        hoses = connected & has_pipe[:-1] & has_pipe[1:] & (np.asarray(coupled) != 0.0)
        open_rear = np.asarray(tr.open_rear_cock, dtype=bool) & has_pipe
        return Pipe(has_pipe.astype(float), volume,
                    np.where(has_pipe, _column(cfg, "leak_area"), 0.0), a_hose,
                    hoses.astype(float), np.zeros(hoses.size), coupled,
                    half[:-1] + half[1:], lam[:-1] + lam[1:], turb[:-1] + turb[1:],
                    open_rear.astype(float))

    @staticmethod
    def _distributors(cfg: list[dict], dist: np.ndarray, cyl: np.ndarray) -> Distributors:
        d = [cfg[i] for i in dist]
        mode_max = {m: _column(d, f"max_pressure_{m}") for m in MODES}
        p_max = np.array([mode_max[c["mode"]][k] for k, c in enumerate(d)])
        em_area = np.where(_column(d, "emergency", bool),
                           circle_area(_column(d, "emergency_vent")), 0.0)
        return Distributors(
            _index(dist), _index(np.searchsorted(cyl, dist)), p_max,
            _column(d, "full_service_reduction"), _column(d, "dead_band"),
            _column(d, "release_step"),
            np.array([c["release"] == "direct" for c in d], dtype=float),
            _column(d, "aux_volume"), circle_area(_column(d, "charging_choke")),
            _column(d, "working_chamber_time"), _column(d, "quick_action_time"),
            _column(d, "emergency_threshold"), em_area, _column(d, "vent_hold_time"),
            ) if d else Distributors(_index([]), _index([]), *(np.zeros(0) for _ in range(12)))

    @staticmethod
    def _cylinders(cfg: list[dict], dist: np.ndarray, indep: np.ndarray, cyl: np.ndarray,
                   feeders: np.ndarray, dists: Distributors) -> Cylinders:
        c = [cfg[i] for i in cyl]
        distributor = np.full(cyl.size, -1)
        distributor[np.searchsorted(cyl, dist)] = np.arange(dist.size)
        feeder = np.full(cyl.size, -1)
        feeder[np.searchsorted(cyl, indep)] = np.searchsorted(feeders, indep)
        rate_in, rate_out = np.zeros(cyl.size), np.zeros(cyl.size)
        at = np.searchsorted(cyl, dist)
        rate_in[at] = dists.p_max / np.array(
            [cfg[i]["application_time"] or TIMES[cfg[i]["distributor"]][0] for i in dist])
        rate_out[at] = dists.p_max / np.array(
            [cfg[i]["release_time"] or TIMES[cfg[i]["distributor"]][1] for i in dist])
        at = np.searchsorted(cyl, indep)
        rate_in[at] = np.maximum(rate_in[at], _independent_rate(cfg, indep, "application"))
        rate_out[at] = np.maximum(rate_out[at], _independent_rate(cfg, indep, "release"))
        material = [SHOE_TYPES.index(x["shoe_type"]) if x["shoe_type"] != TABLE else -1
                    for x in c]
        tables: list[tuple] = []
        table = []
        for x in c:
            if x["shoe_type"] != TABLE:
                table.append(0)
                continue
            key = (tuple(x["friction_table"]["speeds"]), tuple(x["friction_table"]["friction"]))
            if key not in tables:
                tables.append(key)
            table.append(tables.index(key))
        width = max([len(k[0]) for k in tables] + [1])
        padded = np.full((max(len(tables), 1), 2, width), np.nan)
        for k, (speeds, friction) in enumerate(tables):
            padded[k, 0, :len(speeds)] = speeds
            padded[k, 1, :len(friction)] = friction
        return Cylinders(
            _index(cyl), _index(distributor), _index(feeder),
            _column(c, "cylinders") * _column(c, "cylinder_volume"), rate_in, rate_out,
            np.zeros(cyl.size), np.zeros(cyl.size),
            circle_area(_column(c, "cylinder_diameter")),
            _column(c, "cylinders"), _column(c, "spring_force"), _column(c, "rigging_ratio"),
            _column(c, "rigging_efficiency"), _column(c, "shoes"), _index(material),
            _index(table), padded)

    # -- linking to the train
    def link(self, plugins: Any, batches: list, vehicle_state: dict[int, int]) -> np.ndarray:
        """Where the handles are read (each vehicle type's record; ``plugins``: the train
        system's table) and which main reservoirs feed the valves and independent
        brakes (``vehicle_state``: a vehicle's ``main_reservoir`` state index in the
        train's state, where its model has one). Returns the train state indices the air
        brake draws from."""
        tr, run = self.train, self.run

        def source(i: int, control: str) -> tuple[int, int]:
            b, row = int(tr.batch_of[i]), int(tr.row_of[i])
            rec = batches[b].record
            return b, rec.index(control) + row

        for k, i in enumerate(self.valve):
            run.valve_type[k], run.valve_at[k] = source(int(i), "brake_valve")
        for k, i in enumerate(self.indep):
            run.indep_type[k], run.indep_at[k] = source(int(i), "independent_brake")
            if "bail_off" in batches[run.indep_type[k]].record.rows:
                run.bail_at[k] = source(int(i), "bail_off")[1]
        for f, i in enumerate(self.feeders):
            self.mr_state[f] = vehicle_state.get(int(i), -1)
        for b, batch in enumerate(batches):
            rec = batch.record
            if "dynamic_brake_force_N" in rec.rows:
                run.dynamic_row[b] = rec.index("dynamic_brake_force_N")
        for i in range(tr.count):
            if "brake_level" in batches[int(tr.batch_of[i])].record.rows:
                run.level_type[i], run.level_at[i] = source(i, "brake_level")
        draws = np.flatnonzero(self.mr_state >= 0)
        self.run = run = run._replace(draw_of=_index(draws))
        return self.mr_state[draws]

    def initial(self, start: str) -> None:
        """The brake at the start: ``start`` "charged" (pipe and reservoirs at the running
        pressure) or "empty" (at the atmosphere's)."""
        s, lay = self.system, self.air_layout
        charge = float(s.valves.running.max()) if self.valve.size and start == "charged" \
            else 0.0
        y = self.run.work.y
        y[:] = 0.0
        y[lay.sp:lay.sp + lay.n] = np.where(self.has_pipe, charge, 0.0)
        for name in ("brake.aux", "brake.working", "brake.quick", "brake.lowest",
                     "brake.equalizing"):
            y[self.layout[name]] = charge
        self.run.y0[:] = y
        self.run.state[0].known = 0

    # -- reading it
    def state_at(self, t: float) -> np.ndarray:
        """The brake's states at ``t`` within the last control step: linear between the
        step's ends (the dense output used for samples)."""
        run = self.run
        y, t0, t1 = run.work.y, float(run.span[0]), float(run.span[1])
        if t >= t1 or t1 <= t0:
            return y.copy()
        w = max(t - t0, 0.0) / (t1 - t0)
        return run.y0 + w * (y - run.y0)

    def signal(self, name: str, t: float) -> np.ndarray:
        """Signal ``name`` (:data:`rrscore.run.signals.BRAKE_SIGNALS`) of every vehicle at
        ``t``, NaN where a vehicle has no such part."""
        n = self.train.count
        if name == "air_brake_force_N":
            return self.run.force.copy()
        y = self.state_at(t)
        col = np.full(n, np.nan)
        if name == "brake_pipe_Pa":
            return np.where(self.has_pipe, y[self.layout["brake.pipe"]], np.nan)
        index, block = {"brake_cylinder_Pa": (self.cyl, "brake.cylinder"),
                        "aux_reservoir_Pa": (self.dist, "brake.aux"),
                        "equalizing_reservoir_Pa": (self.valve, "brake.equalizing")}[name]
        col[index] = y[self.layout[block]]
        return col

    def take_applications(self) -> None:
        """The applications the watch has ended, moved to :attr:`applications`."""
        run = self.run
        count = int(run.count[0])
        for app in run.apps[:count]:
            self.applications.append(_application(app))
        run.count[0] = 0

    def report(self, t: float, front: float, speed: float) -> list[dict[str, Any]]:
        """Every application so far, in the order they began; one under way is listed
        with ``end`` "under way" (at ``t``, the front at ``front``, the lead at
        ``speed``)."""
        self.take_applications()
        out = list(self.applications)
        run = self.run
        for k in range(run.active.size):
            if run.active[k]:
                app = run.current[k].copy()
                app.end, app.end_t, app.end_x, app.end_v = 0.0, t, front, speed
                out.append(_application(app))
        return sorted(out, key=lambda a: a["start_time_s"])

    def lowest_aux(self) -> dict[str, Any] | None:
        """The lowest auxiliary reservoir pressure in the train (at control steps): its
        value, the vehicle and when; None where the train has no distributor."""
        value, vehicle, t = (float(x) for x in self.run.lowest_aux)
        if vehicle < 0:
            return None
        return {"pressure_Pa": value, "pressure_bar": value / 1e5, "vehicle": int(vehicle),
                "time_s": t}

    @property
    def pipe_volumes(self) -> np.ndarray:
        """Each vehicle's pipe volume, m^3 (its pipe, hoses and the volumes on it)."""
        return self.system.pipe.volume

    @property
    def aux_volumes(self) -> np.ndarray:
        """Each distributor's auxiliary reservoir volume, m^3."""
        return self.system.dists.aux_volume

    @property
    def torn(self) -> np.ndarray:
        """Per coupling, whether its brake hoses are torn (1) or not (0)."""
        return self.system.pipe.torn


def _application(app: Any) -> dict[str, Any]:
    """One application record as the summary lists it."""
    kind = KINDS[int(app.kind)]
    if kind in ("service", "emergency"):
        drop = float(app.start_measure - app.peak)  # (NaN: no valve, the hoses tore)
        measure = {"reduction_Pa": drop if drop == drop else None,
                   "reduction_bar": drop / 1e5 if drop == drop else None}
    elif kind == "independent":
        measure = {"max_cylinder_pressure_Pa": float(app.peak)}
    elif kind == "dynamic":
        measure = {"max_dynamic_brake_force_N": float(app.peak)}
    else:
        measure = {"max_brake_level": float(app.peak)}
    return {"kind": kind, **measure,
            "start_time_s": float(app.start_t), "start_position_m": float(app.start_x),
            "start_speed_mps": float(app.start_v),
            "max_coupler_tension_N": float(app.max_tension),
            "max_coupler_tension_coupling": int(app.tension_coupling),
            "max_coupler_compression_N": float(app.max_compression),
            "max_coupler_compression_coupling": int(app.compression_coupling),
            "end": ENDS[int(app.end)], "end_time_s": float(app.end_t),
            "end_position_m": float(app.end_x),
            "end_speed_mps": float(app.end_v), "time_s": float(app.end_t - app.start_t),
            "distance_m": float(app.end_x - app.start_x)}

