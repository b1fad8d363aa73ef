"""The automatic air brake of a train: brake pipe, driver's brake valve, distributors and
brake cylinders, as one component whose pressures are continuous states.

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
distributor's pressure.

**Cylinder to rail.** At each control step the cylinder pressure gives each
shoe's force through the rigging (:mod:`rrscore.brakeshoes`) and the shoe
friction at the vehicle's speed the brake torque on each axle, held as the
plugins' ``Q_r`` are until the next control step.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from . import brakeshoes
from .component import Component, Loads, Signal
from .config import Param
from .pneumatics import (
    ATMOSPHERE,
    GAMMA,
    R_AIR,
    TEMPERATURE,
    VISCOSITY,
    circle_area,
    port_flow,
)
from .state import StateLayout, StateSpec

DISTRIBUTORS = ("none", "freight", "passenger")
MODES = ("empty", "medium", "loaded")
#: Per distributor type: default (application_time, release_time), s.
_TIMES = {"freight": (20.0, 45.0), "passenger": (6.0, 15.0)}

BRAKE_SCHEMA = {
    "system": Param(kind=str, default="none", choices=("none", "air"),
                    doc="'air': the vehicle carries the brake pipe (and what follows); "
                        "'none': no air brake equipment"),
    # -- brake pipe
    "pipe_length": Param("m", None, "brake pipe length on the vehicle; default its length",
                         min=0.0, exclusive_min=True),
    "pipe_diameter": Param("m", 0.032, "brake pipe bore", min=0.0, exclusive_min=True),
    "hose_length": Param("m", 0.6, "length of the hose (with its angle cock) at each end",
                         min=0.0),
    "hose_diameter": Param("m", 0.035, "hose bore", min=0.0, exclusive_min=True),
    "extra_volume": Param("m^3", 0.003, "volumes open to the pipe: branch pipe, dirt "
                          "collector, distributor passages", min=0.0),
    "pipe_friction": Param(kind=float, default=0.025, doc="Darcy friction factor of the "
                           "pipe and hoses (turbulent flow)", min=0.0),
    "leak_area": Param("m^2", 0.0, "equivalent hole through which the vehicle's pipe leaks",
                       min=0.0),
    # -- distributor (control valve)
    "distributor": Param(kind=str, default="none", choices=DISTRIBUTORS,
                         doc="distributor type, or 'none'"),
    "mode": Param(kind=str, default="loaded", choices=MODES, doc="load mode"),
    "release": Param(kind=str, default="direct", choices=("direct", "graduated"),
                     doc="'direct' (flat): a small pipe rise releases fully; 'graduated' "
                         "(mountain): the cylinder follows the pipe back up"),
    "max_pressure_empty": Param("Pa", 0.16e6, "cylinder pressure of a full application, "
                                "empty mode", min=0.0),
    "max_pressure_medium": Param("Pa", 0.30e6, "same, medium mode", min=0.0),
    "max_pressure_loaded": Param("Pa", 0.40e6, "same, loaded mode", min=0.0),
    "full_service_reduction": Param("Pa", 0.15e6, "pipe reduction that gives the full "
                                    "cylinder pressure", min=0.0, exclusive_min=True),
    "dead_band": Param("Pa", 0.01e6, "pipe reduction the distributor ignores (slow leaks)",
                       min=0.0),
    "release_step": Param("Pa", 0.015e6, "pipe rise that releases a direct-release "
                          "distributor", min=0.0, exclusive_min=True),
    "application_time": Param("s", None, "time to fill the cylinder to its maximum; default "
                              "20 s freight, 6 s passenger", min=0.0, exclusive_min=True),
    "release_time": Param("s", None, "time to empty it from its maximum; default 45 s "
                          "freight, 15 s passenger", min=0.0, exclusive_min=True),
    "aux_volume": Param("m^3", 0.078, "auxiliary reservoir volume", min=0.0,
                        exclusive_min=True),
    "charging_choke": Param("m", 0.002, "bore of the choke charging the auxiliary reservoir",
                            min=0.0, exclusive_min=True),
    "working_chamber_time": Param("s", 5.0, "time constant of the working chamber's charging",
                                  min=0.0, exclusive_min=True),
    "emergency": Param(kind=bool, default=True, doc="the distributor vents the pipe in an "
                       "emergency (quick action)"),
    "quick_action_time": Param("s", 1.0, "time constant of the quick-action chamber's choke",
                               min=0.0, exclusive_min=True),
    "emergency_threshold": Param("Pa", 0.05e6, "lag of the pipe behind the quick-action "
                                 "chamber that opens the emergency vent", min=0.0,
                                 exclusive_min=True),
    "emergency_vent": Param("m", 0.02, "bore of the emergency vent", min=0.0,
                            exclusive_min=True),
    "vent_hold_time": Param("s", 20.0, "time constant of the quick-action chamber while the "
                            "emergency vent is open (it holds the vent open)", min=0.0,
                            exclusive_min=True),
    # -- brake cylinders and rigging
    "cylinders": Param(kind=int, default=1, doc="brake cylinders (equal) on the vehicle",
                       min=0),
    "cylinder_diameter": Param("m", 0.356, "brake cylinder piston diameter", min=0.0,
                               exclusive_min=True),
    "cylinder_volume": Param("m^3", 0.014, "volume of one cylinder at working stroke",
                             min=0.0, exclusive_min=True),
    "spring_force": Param("N", 1.5e3, "release spring force at working stroke, per cylinder",
                          min=0.0),
    "rigging_ratio": Param(kind=float, default=8.0, doc="lever ratio of the rigging", min=0.0),
    "rigging_efficiency": Param(kind=float, default=0.9, doc="efficiency of the rigging",
                                min=0.0, max=1.0),
    "shoes": Param(kind=int, default=8, doc="brake shoes on the vehicle", min=1),
    "shoe_type": Param(kind=str, default="cast_iron", choices=brakeshoes.SHOE_TYPES,
                       doc="shoe material (friction formula)"),
    # -- locomotive: driver's brake valve and independent brake
    "driver_valve": Param(kind=bool, default=False, doc="a driver's brake valve feeds the "
                          "pipe here (the vehicle model's brake_valve control works it)"),
    "running_pressure": Param("Pa", 0.5e6, "pipe pressure in running position", min=0.0),
    "service_rate": Param("Pa/s", 0.02e6, "equalizing reservoir fall in service position",
                          min=0.0, exclusive_min=True),
    "charging_rate": Param("Pa/s", 0.1e6, "equalizing reservoir rise in release and running "
                           "position", min=0.0, exclusive_min=True),
    "relay_port": Param("m", 0.016, "bore of the relay valve's feed and exhaust port", min=0.0,
                        exclusive_min=True),
    "charging_port": Param("m", 0.025, "bore of the feed port in release and charging "
                           "position", min=0.0, exclusive_min=True),
    "emergency_port": Param("m", 0.025, "bore of the valve's emergency vent", min=0.0,
                            exclusive_min=True),
    "supply_pressure": Param("Pa", 0.8e6, "main reservoir pressure when the vehicle model "
                             "has no main_reservoir state", min=0.0),
    "main_reservoir_volume": Param("m^3", 1.0, "main reservoir volume (the feed draws it "
                                   "down)", min=0.0, exclusive_min=True),
    "independent": Param(kind=bool, default=False, doc="an independent (locomotive) brake "
                         "fills the cylinders from the main reservoir (the vehicle model's "
                         "independent_brake control, 0..1)"),
    "independent_pressure": Param("Pa", 0.4e6, "cylinder pressure of a full independent "
                                  "application", min=0.0),
}
"""The ``[vehicle.brake]`` table of a vehicle config."""

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


def _column(configs: list[dict], key: str, dtype=float) -> np.ndarray:
    return np.array([c[key] for c in configs], dtype=dtype)


class AirBrake(Component):
    """The train's air brake (see the module docstring): one component, vectorized over
    the vehicles that have each part."""

    name = "air brake"

    def __init__(self, train, couplings) -> None:
        self.train, self.couplings = train, couplings
        n = self.n = train.count
        cfg = train.brake_configs
        self.has_pipe = np.array([c["system"] == "air" for c in cfg])
        length = np.array([c["pipe_length"] if c["pipe_length"] is not None else L
                           for c, L in zip(cfg, train.length, strict=True)])
        a_pipe = circle_area(_column(cfg, "pipe_diameter"))
        a_hose = circle_area(_column(cfg, "hose_diameter"))
        hose = _column(cfg, "hose_length")
        friction = _column(cfg, "pipe_friction")
        d_pipe, d_hose = _column(cfg, "pipe_diameter"), _column(cfg, "hose_diameter")
        self.volume = np.where(self.has_pipe, a_pipe * length + 2 * a_hose * hose
                               + _column(cfg, "extra_volume"), 1.0)
        self.leak_area = np.where(self.has_pipe, _column(cfg, "leak_area"), 0.0)
        self.hose_area = a_hose
        # A joint's path: the rear half of one vehicle's pipe, its rear hose, the next one's
        # front hose and the front half of its pipe. Per piece: inertance l/A, laminar and
        # turbulent friction coefficients (pressure drop = flow * lam/rho + flow|flow| *
        # turb/rho).
        half = (0.5 * length / a_pipe, hose / a_hose)
        lam = (16 * VISCOSITY * length / (d_pipe**2 * a_pipe),
               32 * VISCOSITY * hose / (d_hose**2 * a_hose))
        turb = (friction * 0.5 * length / (2 * d_pipe * a_pipe**2),
                friction * hose / (2 * d_hose * a_hose**2))
        per_end = [sum(x) for x in (half, lam, turb)]
        self.inertance = per_end[0][:-1] + per_end[0][1:]
        self.lam = per_end[1][:-1] + per_end[1][1:]
        self.turb = per_end[2][:-1] + per_end[2][1:]
        connected = np.asarray(train.brake_pipe_connected[1:], dtype=bool)
        joined = connected & self.has_pipe[:-1] & self.has_pipe[1:]
        #: Joints whose hoses are joined (run state): those of couplings coupled at the
        #: start. A coupling that parts tears its hoses (``torn``), and they stay open
        #: and venting when the vehicles meet again: couplers couple on contact, hoses
        #: do not.
        self.hoses = joined & np.asarray(couplings.coupled, dtype=bool)
        self.torn = np.zeros(max(n - 1, 0), dtype=bool)
        #: Vehicles whose rear angle cock is open: they vent where no hose is joined behind.
        self.open_rear = np.asarray(train.open_rear_cock, dtype=bool) & self.has_pipe

        # Distributors.
        kind = np.array([c["distributor"] if c["system"] == "air" else "none" for c in cfg])
        self.dist = np.flatnonzero(kind != "none")
        d = [cfg[i] for i in self.dist]
        mode_max = {m: _column(d, f"max_pressure_{m}") for m in MODES}
        self.p_max = np.array([mode_max[c["mode"]][k] for k, c in enumerate(d)])
        times = np.array([(c["application_time"] or _TIMES[c["distributor"]][0],
                           c["release_time"] or _TIMES[c["distributor"]][1]) for c in d]
                         ).reshape(-1, 2)
        self.apply_rate = self.p_max / times[:, 0]
        self.release_rate = self.p_max / times[:, 1]
        self.full = _column(d, "full_service_reduction")
        self.dead = _column(d, "dead_band")
        self.release_step = _column(d, "release_step")
        self.direct = np.array([c["release"] == "direct" for c in d], dtype=bool)
        self.aux_volume = _column(d, "aux_volume")
        self.choke = circle_area(_column(d, "charging_choke"))
        self.work_tau = _column(d, "working_chamber_time")
        self.quick_tau = _column(d, "quick_action_time")
        self.em_threshold = _column(d, "emergency_threshold")
        self.em_hold = _column(d, "vent_hold_time")
        self.em_area = np.where(_column(d, "emergency", bool), circle_area(
            _column(d, "emergency_vent")), 0.0)

        # Driver's valves and independent brakes (locomotives).
        self.valve = np.flatnonzero([c["system"] == "air" and c["driver_valve"] for c in cfg])
        v = [cfg[i] for i in self.valve]
        self.running = _column(v, "running_pressure")
        self.service_rate = _column(v, "service_rate")
        self.charging_rate = _column(v, "charging_rate")
        self.relay_area = circle_area(_column(v, "relay_port"))
        self.charging_area = circle_area(_column(v, "charging_port"))
        self.emergency_area = circle_area(_column(v, "emergency_port"))
        self.position = np.full(len(self.valve), RUNNING)
        self.indep = np.flatnonzero([c["system"] == "air" and c["independent"] for c in cfg])
        self.indep_max = _column([cfg[i] for i in self.indep], "independent_pressure")
        self.indep_level = np.zeros(len(self.indep))
        # Main reservoirs of the vehicles that feed the valve or the independent brake.
        self.feeders = np.union1d(self.valve, self.indep)
        f = [cfg[i] for i in self.feeders]
        self.supply = _column(f, "supply_pressure")
        self.mr_volume = _column(f, "main_reservoir_volume")
        self.mr_index = np.full(len(self.feeders), -1)  # state index of the model's MR

        # Brake cylinders: every vehicle with a distributor or an independent brake.
        self.cyl = np.union1d(self.dist, self.indep)
        c = [cfg[i] for i in self.cyl]
        self.cyl_dist = np.searchsorted(self.cyl, self.dist)  # where distributors sit in cyl
        self.cyl_indep = np.searchsorted(self.cyl, self.indep)
        self.cyl_volume = _column(c, "cylinders") * _column(c, "cylinder_volume")
        self.piston_area = circle_area(_column(c, "cylinder_diameter"))
        self.cylinders = _column(c, "cylinders")
        self.spring = _column(c, "spring_force")
        self.ratio = _column(c, "rigging_ratio")
        self.efficiency = _column(c, "rigging_efficiency")
        self.shoes = _column(c, "shoes")
        self.shoe_type = np.array([brakeshoes.SHOE_TYPES.index(x["shoe_type"]) for x in c],
                                  dtype=int)
        # The cylinder's air comes from the auxiliary reservoir (distributor) or the main
        # reservoir (independent brake alone); for a locomotive with both, from whichever
        # asks for the higher pressure.
        self.cyl_aux = np.full(len(self.cyl), -1)
        self.cyl_aux[self.cyl_dist] = np.arange(len(self.dist))
        self.cyl_feeder = np.full(len(self.cyl), -1)
        self.cyl_feeder[self.cyl_indep] = np.searchsorted(self.feeders, self.indep)
        self.valve_feeder = np.searchsorted(self.feeders, self.valve)

        self.rate_in = np.zeros(len(self.cyl))
        self.rate_out = np.zeros(len(self.cyl))
        self.rate_in[self.cyl_dist] = self.apply_rate
        self.rate_out[self.cyl_dist] = self.release_rate
        # the independent brake fills and releases in about 5 s
        self.rate_in[self.cyl_indep] = np.maximum(self.rate_in[self.cyl_indep],
                                                  self.indep_max / 5.0)
        self.rate_out[self.cyl_indep] = np.maximum(self.rate_out[self.cyl_indep],
                                                   self.indep_max / 5.0)
        self.ind_target = np.zeros(len(self.cyl))  # independent brake's pressure, held
        self._inflow = np.zeros(n)
        self._target = np.zeros(len(self.cyl))
        self._mr_draw = np.zeros(len(self.feeders))

        #: Brake torque of the air brake on each axle (N m), set at each control step.
        self.axle_torque = np.zeros(train.axle_count)
        #: Brake force at the rail of each vehicle (N), set at each control step.
        self.force = np.zeros(n)
        self.start = "charged"

    # ----------------------------------------------------------------- layout
    def declare(self, layout: StateLayout) -> None:
        pa = StateSpec("Pa", "gauge pressure", atol=20.0)
        self.sp = layout.add("brake.pipe", StateSpec("Pa", "brake pipe pressure, gauge",
                                                     atol=20.0), self.n)
        self.sq = layout.add("brake.flow", StateSpec("kg/s", "air flow from each vehicle's "
                                                     "pipe to the next one's", atol=1e-4),
                             max(self.n - 1, 0))
        nd = len(self.dist)
        self.sa = layout.add("brake.aux", StateSpec("Pa", "auxiliary reservoir pressure, "
                                                    "gauge", atol=20.0), nd)
        self.sw = layout.add("brake.working", pa, nd)
        self.sk = layout.add("brake.quick", pa, nd)
        self.sl = layout.add("brake.lowest", pa, nd)
        self.sc = layout.add("brake.cylinder", StateSpec("Pa", "brake cylinder pressure, "
                                                         "gauge", atol=20.0), len(self.cyl))
        self.se = layout.add("brake.equalizing", StateSpec(
            "Pa", "equalizing reservoir pressure, gauge", atol=20.0), len(self.valve))
        self.slices = [self.sp, self.sq, self.sa, self.sw, self.sk, self.sl, self.sc, self.se]

    def link_main_reservoirs(self, vehicle_states) -> None:
        """Feed valves and independent brakes from their models' ``main_reservoir`` states
        where the models declare one (else from ``supply_pressure``)."""
        tr = self.train
        for k, i in enumerate(self.feeders):
            b = tr.batch_of[i]
            for batch, slices in zip(vehicle_states.batches, vehicle_states.slices,
                                     strict=True):
                if batch is tr.batches[b] and "main_reservoir" in slices:
                    self.mr_index[k] = slices["main_reservoir"].start + tr.row_of[i]

    def initial(self, y: np.ndarray) -> None:
        charge = float(self.running.max()) if self.valve.size and self.start == "charged" \
            else 0.0
        y[self.sp] = np.where(self.has_pipe, charge, 0.0)
        y[self.sq] = 0.0
        for sl in (self.sa, self.sw, self.sk, self.sl):
            y[sl] = charge
        y[self.sc] = 0.0
        y[self.se] = charge

    def commit(self, y: np.ndarray) -> None:
        """After each accepted step: hoses of couplings that have parted stay torn."""
        self.torn |= self.hoses & ~self.couplings.coupled

    # ------------------------------------------------------------ control step
    def step(self, t: float, y: np.ndarray) -> None:
        """At a control step: read the brake handles from the vehicle models and set the
        brake torque of every axle from the cylinder pressures and speeds."""
        tr = self.train
        for k, i in enumerate(self.valve):
            m = tr.batches[tr.batch_of[i]].model
            self.position[k] = int(np.clip(np.rint(m.brake_valve[tr.row_of[i]]), 1, 5))
        for k, i in enumerate(self.indep):
            m = tr.batches[tr.batch_of[i]].model
            self.indep_level[k] = float(np.clip(m.independent_brake[tr.row_of[i]], 0.0, 1.0))
        self.ind_target[self.cyl_indep] = self.indep_level * self.indep_max
        shoe = brakeshoes.shoe_force(y[self.sc], self.piston_area, self.cylinders,
                                     self.spring, self.ratio, self.efficiency, self.shoes)
        v = y[self.sv][self.cyl]
        self.force[:] = 0.0
        self.force[self.cyl] = brakeshoes.brake_force(self.shoe_type, shoe, self.shoes, v)
        per_axle = self.force / tr.num_axis
        self.axle_torque[:] = per_axle[tr.axle_vehicle] * tr.axle_radius

    # -------------------------------------------------------------------- rhs
    def rates(self, t: float, y: np.ndarray, loads: Loads | None, dy: np.ndarray) -> None:
        _rates(y, dy, self.sp.start, self.sq.start, self.sa.start, self.sw.start,
               self.sk.start, self.sl.start, self.sc.start, self.se.start,
               self.has_pipe, self.volume, self.leak_area, self.hose_area, self.hoses,
               self.open_rear, self.torn, self.couplings.coupled, self.inertance, self.lam,
               self.turb,
               self.valve, self.position, self.running, self.service_rate,
               self.charging_rate, self.relay_area, self.charging_area, self.emergency_area,
               self.valve_feeder, self.supply, self.mr_index, self.mr_volume,
               self.dist, self.p_max, self.full, self.dead, self.release_step, self.direct,
               self.aux_volume, self.choke, self.work_tau, self.quick_tau, self.em_threshold,
               self.em_area, self.em_hold, self.cyl_dist, self.cyl_aux, self.cyl_feeder,
               self.cyl_volume, self.rate_in, self.rate_out, self.ind_target, self._inflow,
               self._target, self._mr_draw)

    # ---------------------------------------------------------------- outputs
    def signals(self) -> dict[str, Signal]:
        n = self.n

        def per_vehicle(index, sl):
            def fn(y: np.ndarray, loads: Loads) -> np.ndarray:
                col = np.full(n, np.nan)
                col[index] = y[sl]
                return col
            return fn

        return {
            "brake_pipe_Pa": ("vehicle", "Pa", lambda y, loads: np.where(
                self.has_pipe, y[self.sp], np.nan)),
            "brake_cylinder_Pa": ("vehicle", "Pa", per_vehicle(self.cyl, self.sc)),
            "aux_reservoir_Pa": ("vehicle", "Pa", per_vehicle(self.dist, self.sa)),
            "equalizing_reservoir_Pa": ("vehicle", "Pa", per_vehicle(self.valve, self.se)),
            "air_brake_force_N": ("vehicle", "N", lambda y, loads: self.force.copy()),
        }


@njit(cache=True)
def _clip01(x: float) -> float:  # pragma: no cover (compiled)
    return min(max(x, 0.0), 1.0)


@njit(cache=True)
def _rates(y, dy, sp, sq, sa, sw, sk, sl, sc, se,
           has_pipe, volume, leak_area, hose_area, hoses, open_rear, torn, coupled,
           inertance, lam, turb,
           valve, position, running, service_rate, charging_rate, relay_area, charging_area,
           emergency_area, valve_feeder, supply, mr_index, mr_volume,
           dist, p_max, full, dead, release_step, direct, aux_volume, choke, work_tau,
           quick_tau, em_threshold, em_area, em_hold, dist_cyl, cyl_aux, cyl_feeder, cyl_volume,
           rate_in, rate_out, ind_target, inflow, target, mr_draw):  # pragma: no cover
    """The air brake's derivatives (see :class:`AirBrake`); ``sp`` ... ``se`` are where
    its blocks start in ``y``, the scratch arrays ``inflow`` (per vehicle), ``target``
    (per cylinder) and ``mr_draw`` (per main reservoir) are overwritten."""
    rt = R_AIR * TEMPERATURE
    n = has_pipe.size
    for i in range(n):
        inflow[i] = -port_flow(y[sp + i], 0.0, leak_area[i])
    # The pipe: flow through each joint, driven by the pressure difference against the air's
    # inertia and the wall friction; a torn joint vents both ends.
    for j in range(n - 1):
        q = y[sq + j]
        if hoses[j] and coupled[j] and not torn[j]:
            pa, pb = y[sp + j], y[sp + j + 1]
            rho = (0.5 * (pa + pb) + ATMOSPHERE) / rt
            dy[sq + j] = (pa - pb - q * (lam[j] + abs(q) * turb[j]) / rho) / inertance[j]
            inflow[j] -= q
            inflow[j + 1] += q
        else:
            dy[sq + j] = -q / CLOSED_TAU
            if hoses[j]:
                inflow[j] -= port_flow(y[sp + j], 0.0, hose_area[j])
                inflow[j + 1] -= port_flow(y[sp + j + 1], 0.0, hose_area[j + 1])
    # An open angle cock with no hose joined behind it (a joined or torn hose is above).
    for i in range(n):
        if open_rear[i] and (i == n - 1 or not hoses[i]):
            inflow[i] -= port_flow(y[sp + i], 0.0, hose_area[i])
    for f in range(supply.size):
        mr_draw[f] = 0.0
    # Driver's brake valves: the relay valve holds the pipe at the equalizing reservoir.
    for k in range(valve.size):
        i, f, pos = valve[k], valve_feeder[k], position[k]
        src = y[mr_index[f]] if mr_index[f] >= 0 else supply[f]
        pv, pe = y[sp + i], y[se + k]
        area = charging_area[k] if pos == RELEASE else relay_area[k]
        feed = _clip01((pe - pv) / RELAY_BAND) * max(port_flow(src, pv, area), 0.0)
        exhaust = _clip01((pv - pe) / RELAY_BAND) * port_flow(pv, 0.0, area)
        vent = port_flow(pv, 0.0, emergency_area[k]) if pos == EMERGENCY else 0.0
        inflow[i] += feed - exhaust - vent
        mr_draw[f] += feed
        fall = _clip01(pe / RELAY_BAND)
        if pos <= RUNNING:
            dy[se + k] = min(max((running[k] - pe) / RELAY_BAND, -1.0), 1.0) * charging_rate[k]
        elif pos == LAP:
            dy[se + k] = 0.0
        elif pos == SERVICE:
            dy[se + k] = -service_rate[k] * fall
        else:
            dy[se + k] = -5.0 * service_rate[k] * fall
    # Distributors: charging, the working chamber and release memory, the quick-action
    # chamber and its emergency vent, and the cylinder pressure they ask for.
    for c in range(target.size):
        target[c] = 0.0
    for k in range(dist.size):
        i = dist[k]
        pd, pw, pk, pl = y[sp + i], y[sw + k], y[sk + k], y[sl + k]
        charge = max(port_flow(pd, y[sa + k], choke[k]), 0.0)  # through a check valve
        inflow[i] -= charge
        # The release memory follows the quick-action chamber, the pipe pressure smoothed
        # over quick_action_time, so the ringing of the pipe in an emergency does not
        # read as a release.
        releasing = direct[k] and pk > pl + release_step[k]
        dy[sw + k] = FOLLOW * (pd - pw) if releasing else max(pd - pw, 0.0) / work_tau[k]
        if pk < pl:
            dy[sl + k] = FOLLOW * (pk - pl)
        elif releasing:
            dy[sl + k] = FOLLOW * (pk - release_step[k] - pl)
        else:
            dy[sl + k] = 0.0
        # While its vent is open the chamber drains only through the slow vent choke, so
        # the vent stays open after the pipe has emptied, for about 2.2 vent_hold_time (from
        # 0.5 MPa), and a train in emergency cannot be released before.
        opening = _clip01((pk - pd - em_threshold[k]) / EMERGENCY_BAND)
        if em_area[k] > 0.0 and opening > 0.0:
            inflow[i] -= opening * port_flow(pd, 0.0, em_area[k])
            dy[sk + k] = (pd - pk) * ((1.0 - opening) / quick_tau[k] + opening / em_hold[k])
        else:
            dy[sk + k] = (pd - pk) / quick_tau[k]
        target[dist_cyl[k]] = p_max[k] * _clip01((pw - pd - dead[k]) / (full[k] - dead[k]))
        dy[sa + k] = rt * charge / aux_volume[k]
    # Cylinders fill from the auxiliary reservoir, or from the main reservoir where the
    # independent brake asks for more, and exhaust to the air.
    for c in range(target.size):
        pc, a, f = y[sc + c], cyl_aux[c], cyl_feeder[c]
        want, from_aux = target[c], a >= 0
        if f >= 0 and ind_target[c] > want:
            want, from_aux = ind_target[c], False
        if from_aux:
            src = y[sa + a]
        elif f >= 0:
            src = y[mr_index[f]] if mr_index[f] >= 0 else supply[f]
        else:
            src = 0.0
        err = want - pc
        fill = _clip01(err / CYLINDER_BAND) * rate_in[c] * _clip01((src - pc) / CYLINDER_BAND)
        dy[sc + c] = fill - _clip01(-err / CYLINDER_BAND) * rate_out[c]
        drawn = fill * cyl_volume[c] / rt  # kg/s, at the same temperature
        if from_aux:
            dy[sa + a] -= rt * drawn / aux_volume[a]
        elif f >= 0:
            mr_draw[f] += drawn
    for i in range(n):
        dy[sp + i] = GAMMA * rt * inflow[i] / volume[i] if has_pipe[i] else 0.0
    for f in range(supply.size):
        if mr_index[f] >= 0:
            dy[mr_index[f]] -= rt * mr_draw[f] / mr_volume[f]
