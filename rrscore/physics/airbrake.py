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

**Integration.** The air brake's states are its own (:attr:`AirBrake.layout`,
read with ``Run.state("brake.pipe")``), integrated apart from the train's
motion: at each control step, after the brake torque is set, a compiled
Bogacki-Shampine 3(2) pair carries them to the next control time. The pipe's
chain of small volumes and short hoses rings at a few tens of hertz and its
ports are stiff near balance, so an explicit solver needs steps of a few
milliseconds there; the train's motion, which the brake reaches only through
the torque held over the control step, keeps its own, longer steps. The air a
valve or an independent brake takes from a main reservoir over the step is
drawn from the reservoir's state at a steady rate over the same step, so no
air is made or lost. Samples between control times interpolate the brake's
states linearly.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from . import brakeshoes
from ..component import Component, Loads, Signal
from ..model.config import Context, Param, Section
from .pneumatics import (
    ATMOSPHERE,
    GAMMA,
    R_AIR,
    TEMPERATURE,
    VISCOSITY,
    circle_area,
    port_flow,
)
from ..model.state import StateLayout, StateSpec

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
    "shoe_type": Param(kind=str, default="cast_iron",
                       choices=(*brakeshoes.SHOE_TYPES, brakeshoes.TABLE),
                       doc="shoe material (the rules' friction formula), or 'table' for "
                           "friction_table"),
    "friction_table": Section({
        "speeds": Param("m/s", [], "speeds of the table's points, increasing (a list, e.g. "
                       "[\"0 km/h\", \"40 km/h\"])", kind=list, min=0.0),
        "friction": Param(kind=list, item=float, default=[],
                          doc="shoe friction coefficient at each speed"),
    }, doc="shoe friction against speed for shoe_type = 'table': linear between the points, "
           "the end values beyond them, independent of the shoe force"),
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
#: Main reservoir pressure (Pa) the air brake may owe a reservoir before the rate at which
#: it draws the reservoir down is updated (which restarts the train's solver).
OWED_TOLERANCE = 200.0
#: Decay (s) of the flow state of a closed joint.
CLOSED_TAU = 0.05
#: Handle positions of the driver's brake valve.
RELEASE, RUNNING, LAP, SERVICE, EMERGENCY = 1, 2, 3, 4, 5
POSITIONS = {RELEASE: "release and charging", RUNNING: "running", LAP: "lap",
             SERVICE: "service", EMERGENCY: "emergency"}


def check_brake(brake: dict, ctx: Context) -> None:
    """Checks across the keys of one vehicle's ``[vehicle.brake]`` table (``ctx`` its
    place in the config), beyond what the schema checks key by key."""
    table = brake["friction_table"]
    speeds, friction = table["speeds"], table["friction"]
    where = ctx.child("friction_table")
    if brake["shoe_type"] != brakeshoes.TABLE:
        if speeds or friction:
            raise where.error(f"found a friction table, but shoe_type is "
                              f"{brake['shoe_type']!r}; expected shoe_type = 'table' to use it")
        return
    if len(speeds) < 2 or len(friction) != len(speeds):
        raise where.error(f"found {len(speeds)} speeds and {len(friction)} friction values, "
                          f"expected two or more of each, as many of one as of the other")
    if any(b <= a for a, b in zip(speeds, speeds[1:], strict=False)):
        raise where.child("speeds").error(
            f"found {[round(v * 3.6, 3) for v in speeds]} km/h, expected increasing speeds")
    for i, mu in enumerate(friction):
        if not 0.0 < mu <= 1.0:
            raise where.child("friction").child(i).error(
                f"found {mu!r}, expected a friction coefficient > 0 and <= 1")


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
        self.shoe_type = np.array([brakeshoes.SHOE_TYPES.index(x["shoe_type"])
                                   if x["shoe_type"] in brakeshoes.SHOE_TYPES else -1
                                   for x in c], dtype=int)
        # Table shoes, grouped by their table: (rows of cyl, speeds, friction) per table.
        groups: dict[tuple, list[int]] = {}
        for row, x in enumerate(c):
            if x["shoe_type"] == brakeshoes.TABLE:
                key = (tuple(x["friction_table"]["speeds"]), tuple(x["friction_table"]["friction"]))
                groups.setdefault(key, []).append(row)
        self.friction_tables = [(np.array(rows), np.array(k[0]), np.array(k[1]))
                                for k, rows in groups.items()]
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
        #: Pressure rate (Pa/s) at which each feeder's main reservoir is drawn down over
        #: the current control step, and the train states it applies to.
        self.mr_rate = np.zeros(len(self.feeders))
        self._mr_held = np.zeros(len(self.feeders), dtype=bool)
        self._mr_states = np.zeros(0, dtype=int)
        self._owed = np.zeros(len(self.feeders))  # Pa of main reservoir fall not yet drawn
        self.h = 1e-3  # the air brake's integration step, carried from one call to the next
        self.message: str | None = None
        #: Time the signals are read at (set by the run before it samples).
        self.sample_time = 0.0
        self._declare()
        self._scratch = np.zeros((6, self.layout.size))

    # ----------------------------------------------------------------- layout
    def _declare(self) -> None:
        """The air brake's own state vector (see the module docstring: it is integrated
        apart from the train's motion)."""
        layout = self.layout = StateLayout()
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
        self.sd = layout.add("brake.drawn", StateSpec("kg", "air drawn from each feeding main "
                                                      "reservoir", atol=np.inf),
                             len(self.feeders))
        self._atol = layout.atol()

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
        self._mr_held = self.mr_index >= 0
        self._mr_states = self.mr_index[self._mr_held]

    def initial(self, y: np.ndarray) -> None:
        """Start the air brake's own states (``start``: "charged" or "empty")."""
        charge = float(self.running.max()) if self.valve.size and self.start == "charged" \
            else 0.0
        b = np.zeros(self.layout.size)
        b[self.sp] = np.where(self.has_pipe, charge, 0.0)
        for sl in (self.sa, self.sw, self.sk, self.sl, self.se):
            b[sl] = charge
        self.y = b
        self.t0 = self.t1 = 0.0
        self.y0 = b.copy()
        self.mr_rate[:] = 0.0
        self._owed[:] = 0.0

    def state_at(self, t: float) -> np.ndarray:
        """The air brake's states at ``t`` within the last control step: linear between the
        step's ends (the dense output used for samples)."""
        if t >= self.t1 or self.t1 <= self.t0:
            return self.y
        w = max(t - self.t0, 0.0) / (self.t1 - self.t0)
        return self.y0 + w * (self.y - self.y0)

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
        shoe = brakeshoes.shoe_force(self.y[self.sc], self.piston_area, self.cylinders,
                                     self.spring, self.ratio, self.efficiency, self.shoes)
        v = y[self.sv][self.cyl]
        self.force[:] = 0.0
        self.force[self.cyl] = brakeshoes.brake_force(self.shoe_type, shoe, self.shoes, v,
                                                         self.friction_tables)
        per_axle = self.force / tr.num_axis
        self.axle_torque[:] = per_axle[tr.axle_vehicle] * tr.axle_radius

    def advance(self, t: float, t_next: float, y: np.ndarray) -> bool:
        """Integrate the air brake from ``t`` to the next control time ``t_next``, its main
        reservoirs held at their pressures in the train's state ``y``; the air they give
        is drawn from them at a steady rate over the same interval. Returns whether that
        rate changed (the train's solver then restarts). A failure leaves the brake where
        it was and its reason in :attr:`message`."""
        self.t0, self.y0 = t, self.y.copy()
        source = self.supply.copy()
        source[self._mr_held] = y[self._mr_states]
        b = self.y.copy()
        drawn = b[self.sd].copy()
        reached, self.h, ok = _integrate(
            b, t, t_next, self.h, self._atol, self._scratch, self.sp.start, self.sq.start,
            self.sa.start, self.sw.start, self.sk.start, self.sl.start, self.sc.start,
            self.se.start, self.sd.start, source,
               self.has_pipe, self.volume, self.leak_area, self.hose_area, self.hoses,
               self.open_rear, self.torn, self.couplings.coupled, self.inertance, self.lam,
               self.turb,
               self.valve, self.position, self.running, self.service_rate,
               self.charging_rate, self.relay_area, self.charging_area, self.emergency_area,
               self.valve_feeder,
               self.dist, self.p_max, self.full, self.dead, self.release_step, self.direct,
               self.aux_volume, self.choke, self.work_tau, self.quick_tau, self.em_threshold,
               self.em_area, self.em_hold, self.cyl_dist, self.cyl_aux, self.cyl_feeder,
               self.cyl_volume, self.rate_in, self.rate_out, self.ind_target, self._inflow,
               self._target, self._mr_draw)
        if not ok:
            self.message = (f"the air brake's integration failed at t = {reached:.6f} s "
                            f"(step size {self.h:.1e} s)")
            self.y0 = self.y
            return False
        self.y, self.t1 = b, t_next
        # The fall of each main reservoir's pressure this step asks for, and what the rate
        # held from before would give: while they differ by less than OWED_TOLERANCE
        # (carried over, so no air is lost), the rate stays and the train's solver need
        # not restart for it.
        span = max(t_next - t, 1e-300)
        self._owed += R_AIR * TEMPERATURE * (b[self.sd] - drawn) / self.mr_volume \
            - self.mr_rate * span
        if np.all(np.abs(self._owed) < OWED_TOLERANCE):
            return False
        self.mr_rate += self._owed / span
        self._owed[:] = 0.0
        return True

    # -------------------------------------------------------------------- rhs
    def rates(self, t: float, y: np.ndarray, loads: Loads | None, dy: np.ndarray) -> None:
        """The train's derivatives: only the air the brake draws from the locomotives'
        main reservoirs (its own states are integrated by :meth:`advance`)."""
        if self._mr_states.size:
            dy[self._mr_states] -= self.mr_rate[self._mr_held]

    # ---------------------------------------------------------------- outputs
    def signals(self) -> dict[str, Signal]:
        n = self.n

        def per_vehicle(index, sl):
            def fn(y: np.ndarray, loads: Loads) -> np.ndarray:
                col = np.full(n, np.nan)
                col[index] = self.state_at(self.sample_time)[sl]
                return col
            return fn

        return {
            "brake_pipe_Pa": ("vehicle", "Pa", lambda y, loads: np.where(
                self.has_pipe, self.state_at(self.sample_time)[self.sp], np.nan)),
            "brake_cylinder_Pa": ("vehicle", "Pa", per_vehicle(self.cyl, self.sc)),
            "aux_reservoir_Pa": ("vehicle", "Pa", per_vehicle(self.dist, self.sa)),
            "equalizing_reservoir_Pa": ("vehicle", "Pa", per_vehicle(self.valve, self.se)),
            "air_brake_force_N": ("vehicle", "N", lambda y, loads: self.force.copy()),
        }


@njit(cache=True)
def _clip01(x: float) -> float:  # pragma: no cover (compiled)
    return min(max(x, 0.0), 1.0)


@njit(cache=True)
def _rates(y, dy, sp, sq, sa, sw, sk, sl, sc, se, sd, source,
           has_pipe, volume, leak_area, hose_area, hoses, open_rear, torn, coupled,
           inertance, lam, turb,
           valve, position, running, service_rate, charging_rate, relay_area, charging_area,
           emergency_area, valve_feeder,
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
    for f in range(source.size):
        mr_draw[f] = 0.0
    # Driver's brake valves: the relay valve holds the pipe at the equalizing reservoir.
    for k in range(valve.size):
        i, f, pos = valve[k], valve_feeder[k], position[k]
        src = source[f]
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
            src = source[f]
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
    for f in range(source.size):
        dy[sd + f] = mr_draw[f]


@njit(cache=True)
def _integrate(y, t, t_end, h, atol, scratch, *args):  # pragma: no cover (compiled)
    """Advance the air brake's states ``y`` (in place) from ``t`` to ``t_end`` with the
    Bogacki-Shampine 3(2) pair, error per entry against ``atol``, first step ``h``.
    Returns ``(t reached, next step size, success)``."""
    k1, k2, k3, k4, trial, new = scratch[0], scratch[1], scratch[2], scratch[3], \
        scratch[4], scratch[5]
    n = y.size
    _rates(y, k1, *args)
    while t < t_end:
        step = min(h, t_end - t)
        last = step >= t_end - t
        for i in range(n):
            trial[i] = y[i] + 0.5 * step * k1[i]
        _rates(trial, k2, *args)
        for i in range(n):
            trial[i] = y[i] + 0.75 * step * k2[i]
        _rates(trial, k3, *args)
        for i in range(n):
            new[i] = y[i] + step * (2.0 / 9.0 * k1[i] + 1.0 / 3.0 * k2[i] + 4.0 / 9.0 * k3[i])
        _rates(new, k4, *args)
        err = 0.0
        for i in range(n):
            e = step * (-5.0 / 72.0 * k1[i] + k2[i] / 12.0 + k3[i] / 9.0 - 0.125 * k4[i])
            err = max(err, abs(e) / atol[i])
        factor = 5.0 if err == 0.0 else min(5.0, max(0.2, 0.9 * err ** (-1.0 / 3.0)))
        if err <= 1.0:
            t = t_end if last else t + step
            for i in range(n):
                y[i] = new[i]
                k1[i] = k4[i]
            # a last step cut short to land on t_end says little about the next one's size
            h = min(h, step * factor) if last and step < h else step * factor
        else:
            h = step * factor
            if h < 1e-9:
                return t, h, False
    return t, h, True
