"""The automatic air brake of a train: brake pipe, driver's brake valve, distributors and
brake cylinders, whose pressures are continuous states.

**Brake pipe.** Each vehicle with ``system = "air"`` in its ``[vehicle.brake]``
carries a share of the pipe: its length of pipe, its hoses and the volumes hung
on it (``extra_volume``: branch pipe, dirt collector, distributor passages).
Its pressure ``brake.pipe`` is one state per vehicle; the air flowing between
neighbours through the joined hoses, ``brake.flow``, is one state per coupling,
driven by the pressure difference and held back by the air's inertia (the
path's length over bore area) and by wall friction (laminar plus Darcy). This
is the lumped form of the pipe's wave equation: a pressure change runs along the
train at ``pneumatics.wave_speed`` of the configured pipe, hoses and volumes
(about 280 m/s with the defaults). A joint is closed where a vehicle has no
pipe or ``brake_pipe_connected = false`` (angle cocks shut); a vehicle whose train
entry has ``open_rear_cock = true`` vents where no hose is joined behind it (an
open end, as at a tail whose cock was left open); a coupling that
parts tears its hoses open and both ends vent to the air, also after the
vehicles have run together and coupled again. Leaks vent through a
hole of ``leak_area``.

**Driver's brake valve** (``driver_valve = true``, on a locomotive). Its
handle has five positions, read from the vehicle model's ``brake_valve``
control at each control step: 1 release and charging (the pipe fed through a
wide port), 2 running (the equalizing reservoir held at ``running_pressure``),
3 lap (the equalizing reservoir held where it is), 4 service (the equalizing
reservoir falls at ``service_rate``), 5 emergency (the pipe vented through a
wide port). A relay valve holds the pipe at the equalizing reservoir's
pressure, feeding from the main reservoir (the model's ``main_reservoir``
state if it has one, which the feed then draws down; otherwise a supply held at
``supply_pressure``) or venting to the air.

**Distributor** (``distributor = "freight"`` or ``"passenger"``). Its
auxiliary reservoir charges from the pipe through a choke. Its working chamber
remembers the pressure the pipe was charged to; the brake cylinder is filled
from the auxiliary reservoir towards ``p_max * (reduction - dead_band) /
(full_service_reduction - dead_band)``, clipped to ``0 .. p_max``, where the
reduction is the working chamber's pressure less the pipe's and ``p_max`` the
mode's maximum (``mode = "empty"``, ``"medium"`` or ``"loaded"``). With
``release = "graduated"`` the cylinder follows the pipe back up step by step;
with ``"direct"`` a rise of ``release_step`` above the lowest pipe pressure of
the application (smoothed over ``quick_action_time``) releases it fully. The
cylinder fills and empties at the rates ``p_max / application_time`` and
``p_max / release_time``. A quick-action
chamber follows the pipe through a choke (``quick_action_time``): when the pipe
falls faster than it can follow, by more than ``emergency_threshold``, the
distributor vents the pipe at its own vehicle, which makes an emergency run
along the train.

**Independent brake** (``independent = true``): the locomotive's own
cylinders filled from the main reservoir to ``independent_brake`` times
``independent_pressure``, read from the model's ``independent_brake`` control;
a double check valve gives the cylinders the higher of this and the
distributor's pressure. It fills and releases at ``independent_pressure`` over
``independent_application_time`` and ``independent_release_time`` (5 s each by
default; the cylinder takes the faster of these and its distributor's rates); a time of
0 sets the pressure at once, at the control step the control changes
(:func:`rrscore.engine.airsystem.independent_at_once`), for a locomotive whose
cylinders fill as fast as the air can flow.

**Bail-off.** A locomotive with an independent brake whose model has a ``bail_off``
control releases its cylinders from the train's automatic application while the
control is 1: they take only what the independent brake asks, and its distributor
draws no air from its auxiliary reservoir for them. Let go, the cylinders fill again to
what the distributor asks.

**Cylinder to rail.** At each control step the cylinder pressure gives each
shoe's force through the rigging (:mod:`rrscore.physics.brakeshoes`) and the shoe
friction at the vehicle's speed the brake torque on each axle, held as the
plugins' ``q_r`` are until the next control step.

This module holds the laws: the pneumatics' right-hand side (:func:`air_rates`) and
the brake force of each cylinder (:func:`cylinder_forces`), on named tuples of arrays
(:data:`Pipe`, :data:`Valves`, :data:`Distributors`, :data:`Cylinders`,
:data:`Feeders`). How they are integrated (by the engine's event loop, a control step
at a time, apart from the train's motion) is :mod:`rrscore.engine.airsystem`'s.
"""

from __future__ import annotations

from collections import namedtuple

from ..jit import kernel
from .brakeshoes import shoe_brake_force, shoe_force
from .pneumatics import ATMOSPHERE, GAMMA, R_AIR, TEMPERATURE, port_flow

#: Proportional band of the relay valve and the distributor's cylinder valve, Pa: fully
#: open this far from balance.
RELAY_BAND = 20e3
CYLINDER_BAND = 10e3
EMERGENCY_BAND = 5e3
#: Rate (1/s) at which the direct-release memory and working chamber follow the pipe.
FOLLOW = 20.0
#: Decay (s) of the flow state of a closed joint.
CLOSED_TAU = 0.05
#: Handle positions of the driver's brake valve.
RELEASE, RUNNING, LAP, SERVICE, EMERGENCY = 1, 2, 3, 4, 5
POSITIONS = {RELEASE: "release and charging", RUNNING: "running", LAP: "lap",
             SERVICE: "service", EMERGENCY: "emergency"}

#: Where the air brake's state blocks start: the pipe (a pressure per vehicle), the flows
#: (per joint), the distributors' auxiliary reservoirs, working chambers, quick-action
#: chambers and release memories, the cylinders, the equalizing reservoirs (per valve)
#: and the air drawn from each feeding main reservoir; the vehicles, and the size.
AirLayout = namedtuple("AirLayout", ["n", "sp", "sq", "sa", "sw", "sk", "sl", "sc", "se",
                                     "sd", "size"])

#: The brake pipe, per vehicle: whether it has one (1/0), its volume, leak hole and hose
#: bore; per joint: hoses joined (1/0), torn (1/0: they vent), the couplings' coupled
#: flags (the train's own array), the path's inertance and its laminar and turbulent
#: friction; per vehicle, whether its rear angle cock is open (1/0).
Pipe = namedtuple("Pipe", ["has_pipe", "volume", "leak_area", "hose_area", "hoses", "torn",
                           "coupled", "inertance", "lam", "turb", "open_rear"])

#: The driver's brake valves: vehicle, feeder (index into :data:`Feeders`), the handle's
#: position (set at each control step), running pressure, service and charging rates,
#: relay, charging and emergency port areas.
Valves = namedtuple("Valves", ["vehicle", "feeder", "position", "running", "service_rate",
                               "charging_rate", "relay_area", "charging_area",
                               "emergency_area"])

#: The distributors: vehicle, cylinder (index into :data:`Cylinders`), the mode's maximum
#: cylinder pressure, full service reduction, dead band, release step, direct release
#: (1/0), auxiliary reservoir volume, charging choke area, working chamber and
#: quick-action time constants, emergency threshold, vent area and hold time.
Distributors = namedtuple("Distributors", [
    "vehicle", "cylinder", "p_max", "full", "dead", "release_step", "direct", "aux_volume",
    "choke", "work_tau", "quick_tau", "em_threshold", "em_area", "em_hold"])

#: The brake cylinders (of every vehicle with a distributor or an independent brake):
#: vehicle, distributor (-1: none), feeder of its independent brake (-1: none), volume,
#: fill and release rates, the independent brake's pressure and whether it bails off the
#: distributor's application (1/0; both set at each control step);
#: the rigging: piston area, cylinders, release spring, lever ratio, efficiency, shoes,
#: shoe material (an index of :data:`~rrscore.model.brake.SHOE_TYPES`, -1: a table) and
#: the shoes' friction table (``(k, 2, m)``, the cylinder's ``table`` row).
Cylinders = namedtuple("Cylinders", [
    "vehicle", "distributor", "feeder", "volume", "rate_in", "rate_out", "ind_target",
    "bailed",
    "piston_area", "cylinders", "spring", "ratio", "efficiency", "shoes", "material",
    "table", "tables"])

#: The main reservoirs that feed valves and independent brakes: vehicle, pressure now
#: (the train's main reservoir state, or a held supply), volume.
Feeders = namedtuple("Feeders", ["vehicle", "source", "volume"])


@kernel(inline=True)
def unit_clip(x):  # pragma: no cover (compiled)
    """``x`` clipped to 0 .. 1."""
    return min(max(x, 0.0), 1.0)


@kernel
def pipe_flows(pipe, lay, y, dy, inflow):  # pragma: no cover (compiled)
    """The air into each vehicle's pipe (``inflow``, kg/s): leaks, the flow through each
    joint (driven by the pressure difference against the air's inertia and the wall
    friction; its rate into ``dy``), torn hoses and open angle cocks venting."""
    rt = R_AIR * TEMPERATURE
    n, sp, sq = lay.n, lay.sp, lay.sq
    for i in range(n):
        inflow[i] = -port_flow(y[sp + i], 0.0, pipe.leak_area[i])
    for j in range(n - 1):
        q = y[sq + j]
        if pipe.hoses[j] != 0.0 and pipe.coupled[j] != 0.0 and pipe.torn[j] == 0.0:
            pa, pb = y[sp + j], y[sp + j + 1]
            rho = (0.5 * (pa + pb) + ATMOSPHERE) / rt
            dy[sq + j] = (pa - pb - q * (pipe.lam[j] + abs(q) * pipe.turb[j]) / rho) \
                / pipe.inertance[j]
            inflow[j] -= q
            inflow[j + 1] += q
        else:
            dy[sq + j] = -q / CLOSED_TAU
            if pipe.hoses[j] != 0.0:
                inflow[j] -= port_flow(y[sp + j], 0.0, pipe.hose_area[j])
                inflow[j + 1] -= port_flow(y[sp + j + 1], 0.0, pipe.hose_area[j + 1])
    # an open angle cock with no hose joined behind it (a joined or torn hose is above)
    for i in range(n):
        if pipe.open_rear[i] != 0.0 and (i == n - 1 or pipe.hoses[i] == 0.0):
            inflow[i] -= port_flow(y[sp + i], 0.0, pipe.hose_area[i])


@kernel
def valve_flows(valves, feeders, lay, y, dy, inflow, drawn):  # pragma: no cover (compiled)
    """The driver's brake valves: the relay valve holds the pipe at the equalizing
    reservoir's pressure (feeding from the main reservoir, ``drawn`` kg/s, or venting),
    the handle moves the equalizing reservoir."""
    for k in range(valves.vehicle.size):
        i, f, pos = valves.vehicle[k], valves.feeder[k], valves.position[k]
        pv, pe = y[lay.sp + i], y[lay.se + k]
        area = valves.charging_area[k] if pos == RELEASE else valves.relay_area[k]
        feed = unit_clip((pe - pv) / RELAY_BAND) * max(port_flow(feeders.source[f], pv, area),
                                                       0.0)
        exhaust = unit_clip((pv - pe) / RELAY_BAND) * port_flow(pv, 0.0, area)
        vent = port_flow(pv, 0.0, valves.emergency_area[k]) if pos == EMERGENCY else 0.0
        inflow[i] += feed - exhaust - vent
        drawn[f] += feed
        fall = unit_clip(pe / RELAY_BAND)
        if pos <= RUNNING:
            dy[lay.se + k] = min(max((valves.running[k] - pe) / RELAY_BAND, -1.0), 1.0) \
                * valves.charging_rate[k]
        elif pos == LAP:
            dy[lay.se + k] = 0.0
        elif pos == SERVICE:
            dy[lay.se + k] = -valves.service_rate[k] * fall
        else:
            dy[lay.se + k] = -5.0 * valves.service_rate[k] * fall


@kernel
def distributor_flows(dists, lay, y, dy, inflow, target):  # pragma: no cover (compiled)
    """The distributors: charging their auxiliary reservoirs, the working chamber and
    release memory, the quick-action chamber and its emergency vent, and the cylinder
    pressure each asks for (into ``target``, per cylinder)."""
    rt = R_AIR * TEMPERATURE
    for k in range(dists.vehicle.size):
        i = dists.vehicle[k]
        pd, pw = y[lay.sp + i], y[lay.sw + k]
        pk, pl = y[lay.sk + k], y[lay.sl + k]
        charge = max(port_flow(pd, y[lay.sa + k], dists.choke[k]), 0.0)  # a check valve
        inflow[i] -= charge
        # The release memory follows the quick-action chamber, the pipe pressure smoothed
        # over quick_action_time, so the ringing of the pipe in an emergency does not
        # read as a release.
        releasing = dists.direct[k] != 0.0 and pk > pl + dists.release_step[k]
        dy[lay.sw + k] = FOLLOW * (pd - pw) if releasing \
            else max(pd - pw, 0.0) / dists.work_tau[k]
        if pk < pl:
            dy[lay.sl + k] = FOLLOW * (pk - pl)
        elif releasing:
            dy[lay.sl + k] = FOLLOW * (pk - dists.release_step[k] - pl)
        else:
            dy[lay.sl + k] = 0.0
        # While its vent is open the chamber drains only through the slow vent choke, so
        # the vent stays open after the pipe has emptied, for about 2.2 vent_hold_time (from
        # 0.5 MPa), and a train in emergency cannot be released before.
        opening = unit_clip((pk - pd - dists.em_threshold[k]) / EMERGENCY_BAND)
        if dists.em_area[k] > 0.0 and opening > 0.0:
            inflow[i] -= opening * port_flow(pd, 0.0, dists.em_area[k])
            dy[lay.sk + k] = (pd - pk) * ((1.0 - opening) / dists.quick_tau[k]
                                          + opening / dists.em_hold[k])
        else:
            dy[lay.sk + k] = (pd - pk) / dists.quick_tau[k]
        target[dists.cylinder[k]] = dists.p_max[k] * unit_clip(
            (pw - pd - dists.dead[k]) / (dists.full[k] - dists.dead[k]))
        dy[lay.sa + k] = rt * charge / dists.aux_volume[k]


@kernel
def cylinder_flows(cyls, dists, feeders, lay, y, dy, target,
                   drawn):  # pragma: no cover (compiled)
    """The cylinders fill from the auxiliary reservoir, or from the main reservoir where
    the independent brake asks for more, and exhaust to the air."""
    rt = R_AIR * TEMPERATURE
    for c in range(cyls.vehicle.size):
        pc, a, f = y[lay.sc + c], cyls.distributor[c], cyls.feeder[c]
        # (bailed off: the cylinder takes no part in the train's application)
        want = 0.0 if cyls.bailed[c] != 0.0 else target[c]
        from_aux = a >= 0
        if f >= 0 and cyls.ind_target[c] > want:
            want, from_aux = cyls.ind_target[c], False
        if from_aux:
            src = y[lay.sa + a]
        elif f >= 0:
            src = feeders.source[f]
        else:
            src = 0.0
        err = want - pc
        fill = unit_clip(err / CYLINDER_BAND) * cyls.rate_in[c] \
            * unit_clip((src - pc) / CYLINDER_BAND)
        dy[lay.sc + c] = fill - unit_clip(-err / CYLINDER_BAND) * cyls.rate_out[c]
        mass = fill * cyls.volume[c] / rt  # kg/s, at the same temperature
        if from_aux:
            dy[lay.sa + a] -= rt * mass / dists.aux_volume[a]
        elif f >= 0:
            drawn[f] += mass


@kernel
def air_rates(pipe, valves, dists, cyls, feeders, lay, y, dy, inflow,
              target):  # pragma: no cover (compiled)
    """The air brake's derivatives (see the module) at ``y`` into ``dy``; ``inflow`` (per
    vehicle) and ``target`` (per cylinder) are scratch."""
    rt = R_AIR * TEMPERATURE
    drawn = dy[lay.sd:lay.sd + feeders.vehicle.size]
    for f in range(drawn.size):
        drawn[f] = 0.0
    pipe_flows(pipe, lay, y, dy, inflow)
    valve_flows(valves, feeders, lay, y, dy, inflow, drawn)
    for c in range(target.size):
        target[c] = 0.0
    distributor_flows(dists, lay, y, dy, inflow, target)
    cylinder_flows(cyls, dists, feeders, lay, y, dy, target, drawn)
    for i in range(lay.n):
        dy[lay.sp + i] = GAMMA * rt * inflow[i] / pipe.volume[i] \
            if pipe.has_pipe[i] != 0.0 else 0.0


@kernel
def cylinder_forces(cyls, lay, y, v, force):  # pragma: no cover (compiled)
    """The brake force at the rail of each vehicle with a cylinder (N, into ``force``,
    per vehicle; the others' left as they are), from the cylinder pressures in ``y`` and
    the vehicles' speeds ``v``."""
    for c in range(cyls.vehicle.size):
        i = cyls.vehicle[c]
        shoe = shoe_force(y[lay.sc + c], cyls.piston_area[c], cyls.cylinders[c],
                          cyls.spring[c], cyls.ratio[c], cyls.efficiency[c], cyls.shoes[c])
        force[i] = shoe_brake_force(cyls.material[c], shoe, cyls.shoes[c], v[i],
                                    cyls.tables[cyls.table[c]])
