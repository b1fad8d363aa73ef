"""The multi-body train of one run: its system built, and what only Python does with it.

:class:`TrainSystem` lays the state out, builds the :class:`~rrscore.engine.multibody.
MultiBody` system from a :class:`~rrscore.model.train.Train` and a route (records,
adapters, tables), and owns its arrays, every mode among them. It sets the initial
state, acts on the events the loop stops at (a vehicle stopping, a wheel slipping or
locking, a coupler breaking or coupling), and gives the outputs' signals. Its arrays are
the run's state: a snapshot copies the object.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from ..model.errors import PLUGIN_FAILURES, PluginError, RrsError, plugin_failure
from ..model.events import Event
from ..model.records import record_type
from ..model.state import StateLayout, StateSpec, entry_ranges
from ..physics.bodies import ENERGY_FLOWS, Bodies, held_arrays
from ..physics.wheelsets import Axles, rail_force_needed
from . import control as ctl
from . import multibody as mb
from .adapters import (
    DRIVER_PARAMS,
    DRIVER_STATE,
    MAX_GROUPS,
    MAX_TYPES,
    coupler_adapter,
    function_table,
    no_force,
    no_input,
    no_rates,
    no_step,
    vehicle_adapters,
)
from .airsystem import AirBrake, air_after, air_before, driver_readings
from .limitwatch import limit_watch
from .onebody import INTEGRALS, OneBodyTrain
from .tableau import BOGACKI_SHAMPINE

_ENERGY_DOCS = {
    "drive": "put in by traction (negative: taken out by an electric brake)",
    "brake": "dissipated by friction brakes",
    "resistance": "dissipated by running, curve and starting resistance",
    "gravity": "work of gravity (the fall of potential energy)",
    "air": "work of the air force relative to the wind",
    "slip": "dissipated in the contact of slipping axles",
}


def _start_groups(train: Any) -> int:
    """How many starting speeds the train's vehicles with a starting resistance have."""
    speeds = np.asarray(train.start_speed, dtype=float)
    starting = (np.asarray(train.start0) != 0.0) & (speeds > 0.0)
    return int(np.unique(speeds[starting]).size)


class AirBrakeFailed(RrsError):
    """The air brake's steps failed (their size fell below the smallest step)."""


def _energy_spec(what: str) -> StateSpec:
    return StateSpec("J", f"energy {what}, cumulative since the start", atol=np.inf)


class TrainSystem:
    """The multi-body system of one run (see the module).

    :param train: the assembled train (its records are this run's).
    :param route: the route.
    :param wind, air_density: the environment's (m/s along the track, kg/m^3).
    :param position_tol, speed_tol: absolute tolerances of positions (m) and velocities
        (m/s; at the rim for a slipping axle's spin).
    :param rigid: the train moves as one body.
    :param air_tableau: the method that integrates the air brake's pneumatics.
    """

    def __init__(self, train: Any, route: Any, wind: float, air_density: float,
                 position_tol: float, speed_tol: float, rigid: bool = False,
                 air_tableau: Any = None) -> None:
        self.train, self.route = train, route
        n, na, nc = train.count, train.axle_count, max(train.count - 1, 0)
        if len(train.batches) > MAX_TYPES:
            raise PluginError(f"a train has at most {MAX_TYPES} vehicle types; this one has "
                              f"{len(train.batches)}")
        if len(train.couplings.groups) > MAX_GROUPS:
            raise PluginError(f"a train has at most {MAX_GROUPS} coupler models; this one has "
                              f"{len(train.couplings.groups)}")
        self.rigid = rigid
        self.log: list[Event] = []
        #: Vehicles stopped by their standstill events so far.
        self.standstills = 0
        # -- the state's layout
        lay = StateLayout()
        sx = lay.add("body.x", StateSpec("m", "position of the vehicle's centre along the route",
                                         position_tol), n)
        sv = lay.add("body.v", StateSpec("m/s", "velocity along the route (error held relative "
                                         "to the train's mean)", speed_tol), n)
        names = [b.type_name for b in train.batches]
        self._state_blocks: list[tuple[int, int]] = []  # per batch: start, states
        for i, b in enumerate(train.batches):
            tag = names[i] if names.count(names[i]) == 1 else f"{names[i]}#{i}"
            blocks = [lay.add(f"{tag}.{k}", spec, b.count) for k, spec in b.cls.states.items()]
            self._state_blocks.append((blocks[0].start if blocks else 0, len(blocks)))
        cp = train.couplings
        models = [type(m).type_name for m, _ in cp.groups]
        self._group_blocks: list[tuple[int, int]] = []
        for g, (model, idx) in enumerate(cp.groups):
            tag = models[g] if models.count(models[g]) == 1 else f"{models[g]}#{g}"
            blocks = [lay.add(f"coupler.{tag}.{k}", spec, idx.size)
                      for k, spec in model.states.items()]
            self._group_blocks.append((blocks[0].start if blocks else 0, len(blocks)))
        somega = lay.add("wheel.omega", StateSpec("rad/s", "wheelset angular velocity "
                                                  "(tolerance: the speed's at the rim)",
                                                  speed_tol), na)
        sphi = lay.add("wheel.phi", StateSpec("rad", "wheelset angle (feeds nothing back: "
                                              "uncontrolled)", np.inf), na)
        energy = [lay.add(f"energy.{f}", _energy_spec(_ENERGY_DOCS[f]), n)
                  for f in ENERGY_FLOWS]
        swork = lay.add("energy.coupler", _energy_spec("taken up by the coupling (springs "
                                                       "and draft gear)"), nc)
        if rigid:  # the one body's integrals (rrscore.engine.onebody)
            lay.add("rigid.integrals", StateSpec("", "the one body's integrals of the speed",
                                                 atol=np.inf), INTEGRALS + _start_groups(train))
        self.layout = lay
        #: The entries of the vehicle plugins' states.
        self.plugin_states = slice(sv.stop, self._group_blocks[0][0] if any(
            k for _, k in self._group_blocks) else somega.start)
        self.size = lay.size
        self.lay = mb.Layout(n, na, nc, sx.start, sv.start, somega.start, sphi.start,
                             energy[0].start, swork.start)
        self.sx, self.sv, self.somega, self.sphi = sx, sv, somega, sphi
        self.energy_slices = dict(zip(ENERGY_FLOWS, energy, strict=True))
        self.coupler_work = swork
        # -- tolerances: rtol on velocities (relative to the mean), spins and plugin states
        atol = lay.atol()
        atol[somega] = speed_tol / train.axle_radius
        self.atol = atol
        rtol_mask = np.ones(self.size)
        rtol_mask[sx] = 0.0
        rtol_mask[sphi] = 0.0
        self.rtol_mask = rtol_mask
        self.rtol = np.zeros(self.size)
        self._build(wind, air_density, air_tableau or BOGACKI_SHAMPINE)

    # ------------------------------------------------------------------ building
    def _build(self, wind: float, air_density: float, air_tableau: Any) -> None:
        tr, route, lay = self.train, self.route, self.lay
        n, na, nc = lay.n, lay.na, lay.nc
        area = tr.curve_area.astype(float)
        self._use_area = bool(tr.curve_area.any()) and route.has_curves
        if self._use_area:
            route.check_area_curves()  # AREA is undefined for R < 15.24 m
        self._use_tunnel = route.has_tunnel and bool((tr.tunnel_factor != 1.0).any())
        bodies = Bodies(tr.half_length.copy(), tr.mass.copy(), tr.weight.copy(),
                        tr.weight * 1e-3, tr.c0.copy(), tr.c1.copy(), tr.c2.copy(),
                        tr.start0.copy(), tr.start_speed.copy(),
                        0.5 * air_density * tr.cd_a, np.full(n, float(wind)),
                        tr.tunnel_factor - 1.0, area, 0.5 / tr.half_length)
        axles = Axles(np.ascontiguousarray(tr.axle_vehicle, dtype=np.int64),
                      tr.axle_radius.copy(), 1.0 / tr.axle_radius, tr.axle_inertia.copy(),
                      tr.axle_mass_equiv.copy(), tr.axle_normal.copy(),
                      np.ascontiguousarray(tr.axle_law, dtype=np.int64), tr.creep_slip.copy(),
                      tr.kinetic_ratio.copy(), tr.rail_factor.copy(), tr.rail_factor.copy(),
                      np.zeros(na), np.zeros(na), np.ones(na), np.zeros(na), np.zeros(na),
                      np.zeros(na))
        cp = tr.couplings
        lo, hi = cp.free_range()
        kinks = cp.kinks()
        self.kinks = np.where(np.isfinite(kinks), kinks, np.nan)
        couplings = mb.Couplings(cp.nominal.copy(), lo, hi, cp.break_force.copy(),
                                 cp.coupling_speed.copy(), cp.coupled.astype(float),
                                 np.ascontiguousarray(self.kinks), self._groups())
        counts = np.zeros(4, dtype=np.int64)
        flags = np.array([self.rigid, self._use_area or self._use_tunnel], dtype=np.int64)
        modes = mb.Modes(counts, np.zeros(na, dtype=np.int64), np.zeros(na, dtype=np.int64),
                         np.zeros(8, dtype=np.int64), flags)
        scratch = mb.Scratch(np.zeros(n), np.zeros(n), np.zeros((4, n)), np.zeros((3, n)),
                             np.zeros(nc), np.zeros(nc), np.zeros(nc), np.zeros(nc),
                             np.zeros(nc), np.zeros(nc), np.zeros(self.size),
                             np.zeros((1, 2), dtype=np.int64))
        points = sorted(route.points.values())
        self.point_names = sorted(route.points, key=route.points.get)
        monitor = mb.Monitor(np.zeros(nc), np.zeros(nc), np.full(nc, np.nan), np.zeros(nc),
                             np.zeros(nc), np.full(nc, np.nan), np.zeros(1),
                             np.array(points, dtype=float), np.full(len(points), np.nan),
                             np.full(len(points), np.nan), np.zeros(1, dtype=np.int64))
        m_events = n + 3 * na + nc * (self.kinks.shape[1] + 2)
        self.inputs = ctl.Inputs(np.zeros(n), np.zeros(n), np.zeros(na), np.zeros(na))
        plugins, steps, rates, inputs = self._plugins()
        self._functions = (steps, rates, inputs, self._forces)
        #: The plugins' functions and the built-in driver's decision
        #: (:func:`~rrscore.engine.adapters.function_table`).
        self.fns = function_table(*self._functions)
        watch = np.zeros(1, dtype=ctl.WATCH).view(np.recarray)
        watch[0].front_limit = np.inf
        watch[0].above, watch[0].below = np.inf, -np.inf
        watch[0].half0 = tr.half_length[0]
        self.watch = watch
        self.driver_state = np.zeros(1, dtype=DRIVER_STATE).view(np.recarray)
        self.driver_params = np.zeros(1, dtype=DRIVER_PARAMS).view(np.recarray)
        #: The air brake (:class:`~rrscore.engine.airsystem.AirBrake`; ``air.on``: the
        #: train has one).
        self.air = AirBrake(tr, couplings.coupled, air_tableau)
        draw_index = self.air.link(plugins, tr.batches, self._main_reservoirs())
        #: The speed-limit watch (:mod:`rrscore.engine.limitwatch`).
        self.limits = limit_watch(route.starts, route.lengths, route.speed_limits)
        control = ctl.Control(watch, self.inputs, self.driver_state, self.driver_params,
                              np.zeros((5, 1)), self.air.run, self.limits)
        #: The system, as the event loop takes it (:class:`~rrscore.engine.multibody.
        #: MultiBody`).
        self.sys = mb.MultiBody(
            entry_ranges(np.zeros(self.size, dtype=bool)),
            entry_ranges(np.zeros(self.size, dtype=bool)),
            entry_ranges(np.zeros(self.size, dtype=bool)), self.atol, self.rtol,
            np.zeros(m_events, dtype=np.int64), lay, bodies, held_arrays(n), axles, tr.laws,
            couplings, route.track, np.zeros((2, n), dtype=np.int64), plugins,
            draw_index, np.zeros(draw_index.size), modes, scratch, tr.mass / tr.total_mass,
            monitor, np.zeros(1), control)
        counts[mb.WATCHED] = int(np.count_nonzero(np.isfinite(cp.break_force) & cp.coupled))
        counts[mb.UNCOUPLED] = int(np.count_nonzero(~cp.coupled))
        self.ranges()

    def _main_reservoirs(self) -> dict[int, int]:
        """Each vehicle's ``main_reservoir`` state, as an index into the state vector,
        where its plugin declares one."""
        out = {}
        for b, (z0, _k) in zip(self.train.batches, self._state_blocks, strict=True):
            if "main_reservoir" in b.cls.states:
                r = list(b.cls.states).index("main_reservoir")
                for row, i in enumerate(b.index):
                    out[int(i)] = z0 + r * b.count + row
        return out

    def _plugins(self) -> tuple[mb.Plugins, tuple, tuple, tuple]:
        """The plugins' table (each batch's record and where its rows are) and their
        functions: control steps, states' rates, inputs."""
        tr = self.train
        steps, rates, inputs, bufs, lays = [], [], [], [], []
        int_cols: dict[str, list[int]] = {k: [] for k in (
            "count", "first", "axles", "state0", "nstates", "row_x", "row_v", "row_state",
            "row_qa", "row_qr", "row_adh", "row_slip", "axle_first")}
        driven = np.full((MAX_TYPES, len(mb.DRIVEN)), -1, dtype=np.int64)
        index, sign, axle_index = [], [], []
        self.adapters = []
        for b_i, b in enumerate(tr.batches):
            rec = b.record
            names = (*b.cls.controls, *b.cls.keys)
            ad = vehicle_adapters(b.cls, rec.fields, len(rec.rows), len(rec.tables),
                                  len(rec.ints), names)
            self.adapters.append(ad)
            steps.append(ad.step.call)
            rates.append(ad.rates.call)
            inputs.append(ad.input.call)
            bufs.append(rec.buffer)
            lays.append(rec.layout)
            z0, k = self._state_blocks[b_i]
            cols = int_cols
            cols["count"].append(b.count)
            cols["first"].append(len(index))
            cols["axles"].append(b.num_axis)
            cols["state0"].append(z0)
            cols["nstates"].append(k)
            cols["row_x"].append(rec.index("x"))
            cols["row_v"].append(rec.index("v"))
            cols["row_state"].append(rec.index(next(iter(b.cls.states))) if k else 0)
            at = 1 + 2 * len(rec.rows)
            cols["row_qa"].append(int(rec.layout[at]))
            cols["row_qr"].append(int(rec.layout[at + 2]))
            cols["row_adh"].append(int(rec.layout[at + 4]))
            # (a type with no per-axle fields has no per-axle control: its slip row is
            # left at 0, which saves a loop over every axle at every control step)
            cols["row_slip"].append(int(rec.layout[at + 6]) if b.cls.axle_fields else -1)
            driven[b_i] = [names.index(c) if c in b.cls.controls else -1 for c in mb.DRIVEN]
            cols["axle_first"].append(len(axle_index))
            index += list(b.index)
            sign += list(tr.orientation[b.index])
            axle_index += list(b.axles.ravel())
        pad = MAX_TYPES - len(tr.batches)
        steps += [no_step] * pad
        rates += [no_rates] * pad
        inputs += [no_input] * pad
        bufs += [np.zeros(0)] * pad
        lays += [np.zeros(1, dtype=np.int64)] * pad
        for values in int_cols.values():
            values += [0] * pad
        ints = {k: np.array(v, dtype=np.int64) for k, v in int_cols.items()}
        placed = tuple(np.full(c * (3 * k + 2), np.nan)
                       for c, k in zip(ints["count"], ints["axles"], strict=True))
        table = mb.Plugins(tuple(bufs), tuple(lays), ints["count"], ints["first"],
                           np.array(index, dtype=np.int64), np.array(sign, dtype=float),
                           ints["axles"], ints["state0"], ints["nstates"], ints["row_x"],
                           ints["row_v"], ints["row_state"], ints["row_qa"], ints["row_qr"],
                           ints["row_adh"], ints["row_slip"], driven,
                           ints["axle_first"], np.array(axle_index, dtype=np.int64), placed,
                           np.ones(MAX_TYPES, dtype=np.int64),
                           tuple(np.full(buf.size if k else 0, np.nan)
                                 for buf, k in zip(bufs, ints["nstates"], strict=True)))
        return table, tuple(steps), tuple(rates), tuple(inputs)

    def _groups(self) -> mb.Groups:
        """The coupler groups' table: each model's adapter, record and couplings."""
        cp = self.train.couplings
        forces, bufs, lays, count, first, index, z0, nz = [], [], [], [], [], [], [], []
        self.coupler_adapters = []
        whole = []
        for g, (model, idx) in enumerate(cp.groups):
            rec = model.record
            ad = coupler_adapter(type(model), rec.fields, len(rec.rows), len(rec.tables),
                                 len(rec.ints))
            self.coupler_adapters.append(ad)
            forces.append(ad.force.call)
            bufs.append(rec.buffer)
            lays.append(rec.layout)
            count.append(idx.size)
            first.append(len(index))
            index += list(idx)
            start, k = self._group_blocks[g]
            z0.append(start)
            nz.append(k)
            whole.append(int(len(cp.groups) == 1 and np.array_equal(idx, np.arange(cp.count))))
        pad = MAX_GROUPS - len(cp.groups)
        forces += [no_force] * pad
        bufs += [np.zeros(0)] * pad
        lays += [np.zeros(1, dtype=np.int64)] * pad
        for values in (count, first, z0, nz, whole):
            values += [0] * pad
        self._forces = tuple(forces)
        return mb.Groups(tuple(bufs), tuple(lays),
                         *(np.array(v, dtype=np.int64) for v in (count, first)),
                         np.array(index, dtype=np.int64),
                         *(np.array(v, dtype=np.int64) for v in (z0, nz, whole)))

    def ranges(self) -> None:
        """The loop's ranges from the modes: every entry a right-hand side reads (``live``:
        positions, velocities, plugin and coupler states, slipping spins), those a step
        changes (``formed``: and slipping angles, the energy account), those under error
        control (finite ``atol``, rolling spins left out)."""
        lay, md = self.lay, self.sys.modes
        slipping = md.slipping[:md.counts[mb.SLIPPING]]
        live = np.zeros(self.size, dtype=bool)
        live[lay.sx:lay.somega] = True  # bodies, plugin and coupler states
        live[lay.somega + slipping] = True
        formed = live.copy()
        formed[lay.sphi + slipping] = True
        formed[lay.senergy:] = True
        controlled = np.isfinite(self.atol)
        rolling = np.ones(lay.na, dtype=bool)
        rolling[slipping] = False
        controlled[lay.somega:lay.somega + lay.na] &= ~rolling
        self._set(live=entry_ranges(live), formed=entry_ranges(formed),
                  controlled=entry_ranges(controlled))

    def _set(self, **fields: Any) -> None:
        """Fields of the system replaced."""
        for field, value in fields.items():
            self.sys.set(field, value)

    def set_tolerances(self, rtol: float) -> None:
        """The relative tolerance on the entries it applies to (see :attr:`rtol_mask`)."""
        self.rtol[:] = rtol * self.rtol_mask

    # ------------------------------------------------------------------ the state
    def initial_state(self, lead_position: float, speed: float | np.ndarray,
                      slack: str = "neutral", gaps: np.ndarray | None = None) -> np.ndarray:
        """The state with the lead vehicle's centre at ``lead_position``, all at ``speed``
        (a number, or one per vehicle), the couplings' slack 'neutral', 'bunched' or
        'stretched', ``gaps`` added per coupling; the plugins' and couplers' states at
        their start."""
        tr, _lay = self.train, self.lay
        spacing = tr.couplings.start_spacing(slack, gaps)
        y = self.layout.initial()
        y[self.sx] = lead_position - np.concatenate([[0.0], np.cumsum(spacing)])
        y[self.sv] = speed
        for b_i, b in enumerate(tr.batches):
            if b.cls.initial is not None:
                veh = b.record.view
                states = self.states_of(y, b_i)
                try:
                    b.cls.initial(veh, states)
                except PLUGIN_FAILURES as exc:
                    raise plugin_failure(b.describe("initial"), exc, 0.0) from exc
        d = y[self.sx][:-1] - y[self.sx][1:] - tr.couplings.nominal
        for (model, idx), (z0, k) in zip(tr.couplings.groups, self._group_blocks, strict=True):
            if k:
                init = model.initial_state(d[idx])
                for r, name in enumerate(model.states):
                    y[z0 + r * idx.size:z0 + (r + 1) * idx.size] = init[name]
        ax = self.sys.axles
        ax.x_at[:] = y[self.sx][tr.axle_vehicle]
        ax.phi_at[:] = 0.0
        mb.fill(self.sys, y)
        self.hold(y)  # the masses, and what holds until the first control step changes it
        #: A rigid train's one body (:mod:`rrscore.engine.onebody`), while it serves.
        self.one = OneBodyTrain(self, y) if self.rigid else None
        return y

    def state_slice(self, batch: int, name: str) -> slice:
        """Where state ``name`` of batch ``batch`` (of ``train.batches``) lies in the
        state vector: one entry per vehicle of the batch."""
        b = self.train.batches[batch]
        z0, _k = self._state_blocks[batch]
        r = list(b.cls.states).index(name)
        return slice(z0 + r * b.count, z0 + (r + 1) * b.count)

    def states_of(self, y: np.ndarray, batch: int) -> Any:
        """The states of batch ``batch`` (of ``train.batches``) in the state vector ``y``,
        as its plugin sees them: ``s.NAME[i]``, views of ``y``."""
        b = self.train.batches[batch]
        z0, k = self._state_blocks[batch]
        return record_type("States", tuple(b.cls.states))(
            *(y[z0 + r * b.count:z0 + (r + 1) * b.count] for r in range(k)))

    @property
    def loop_system(self) -> Any:
        """The system the event loop integrates now: the one body while a rigid train is
        one, else the multi-body train."""
        return self.one.sys if self.one is not None and self.one.active else self.sys

    def choose(self, y: np.ndarray) -> bool:
        """Go over to the one body where a rigid train can be one at ``y``, or back to the
        multi-body layout where it can no longer; whether the system changed (the loop
        then restarts)."""
        one = self.one
        if one is None:
            return False
        if not one.active and one.fits(y):
            one.start(y)
            return True
        if one.active and (self.sys.modes.counts[mb.SLIPPING] or self.air.on):
            one.stop(y)
            return True
        return False

    def full_state(self, y: np.ndarray) -> np.ndarray:
        """``y`` with what the loop does not integrate formed (a copy): the rolling axles'
        spins and angles read off their bodies; the vehicles of a rigid train as one body
        where it puts them, with their energy flows."""
        y = np.array(y, dtype=float)
        self.form(y)
        return y

    def form(self, y: np.ndarray, f: np.ndarray | None = None) -> None:
        """:meth:`full_state` in place (and the vehicles' accelerations into ``f``, where
        given, while the train is one body)."""
        if self.one is not None and self.one.active:
            self.one.fill(y)
            if f is not None:
                f[self.sv] = f[self.sv.start]
        else:
            mb.fill(self.sys, y)

    def top_speed(self, y: np.ndarray) -> float:
        """The largest speed of any vehicle at ``y``."""
        if self.one is not None and self.one.active:
            return abs(float(y[self.sv.start]))
        return float(np.abs(y[self.sv]).max())

    # ------------------------------------------------------------------ control
    def step_plugins(self, t: float, dt: float, y: np.ndarray) -> None:
        """Every vehicle type's control step, type by type (a plugin that raises is named,
        with the time)."""
        for b_i, b in enumerate(self.train.batches):
            ctl.read_in(self.sys, b_i, y)
            try:
                self.adapters[b_i].step.call(t, dt, b.record.buffer, b.record.layout)
            except PLUGIN_FAILURES as exc:
                if isinstance(exc, RrsError):
                    raise
                raise plugin_failure(b.describe("step"), exc, t) from exc
        b_i, what = ctl.outputs_problem(self.sys)
        if b_i >= 0:
            b = self.train.batches[b_i]
            problem = ("set a non-finite q_a, q_r or adhesion factor" if what == 1 else
                       "set a negative q_r (resistances are magnitudes)")
            raise PluginError(f"{b.describe('step')} {problem}, at t = {t:.3f} s")

    def failure(self, exc: BaseException, t: float, y: np.ndarray) -> RrsError:
        """The error to raise for ``exc``, raised by compiled code at ``t``, state ``y``:
        the plugin whose function raises it, found by calling each one's from Python
        (the run is over: what they change no longer matters), named with the time."""
        y = self.full_state(y)
        probes = []
        for b_i, b in enumerate(self.train.batches):
            rec, ad = b.record, self.adapters[b_i]
            probes.append((b.describe("step"), lambda ad=ad, rec=rec: ad.step.call(
                t, 0.0, rec.buffer, rec.layout)))
        for b_i, b in enumerate(self.train.batches):
            z0, k = self._state_blocks[b_i]
            if k:
                rec, ad = b.record, self.adapters[b_i]
                block = np.ascontiguousarray(y[z0:z0 + k * b.count].reshape(k, b.count))
                probes.append((b.describe("rates"), lambda ad=ad, rec=rec, s=block: (
                    ad.rates.call(t, rec.buffer, rec.layout, s, np.zeros_like(s)))))
        cp = self.train.couplings
        x = y[self.sx]
        deflection = x[:-1] - x[1:] - cp.nominal
        for g, (model, idx) in enumerate(cp.groups):
            rec, ad = model.record, self.coupler_adapters[g]
            z0, k = self._group_blocks[g]
            block = np.ascontiguousarray(y[z0:z0 + k * idx.size].reshape(k, idx.size))
            lo, hi = model.free_range()
            who = f"coupler model {type(model).type_name!r} ({cp.origins[g]}) in force()"
            for r, j in enumerate(idx):  # each coupling where it is, the others at rest
                d = 0.5 * (lo + hi)
                d[r] = deflection[j]
                probes.append((f"{who} for coupling {j}",
                               lambda ad=ad, rec=rec, d=d, z=block: ad.force.call(
                                   d, np.zeros_like(d), rec.buffer, rec.layout, z,
                                   np.zeros_like(z), np.zeros_like(d))))
        for found, probe in probes:
            try:
                probe()
            except PLUGIN_FAILURES as raised:  # the plugin that fails
                return plugin_failure(found, raised, t)
        return PluginError(f"a plugin's compiled function raised {type(exc).__name__}: "
                           f"{exc}, at t = {t:.3f} s")

    def drive_with(self, decide: object, state: np.ndarray, params: np.ndarray,
                   sections: np.ndarray) -> None:
        """Let the loop's control steps take the built-in driver's decisions (``decide``, of
        the signature :data:`~rrscore.engine.adapters.DECIDE`) on its ``state``, settings
        and the route's ``sections`` (arrays the driver shares)."""
        self.fns = function_table(*self._functions, decide)
        self.driver_state, self.driver_params = state, params
        c = self.sys.control
        self._set(control=c._replace(driver_state=state, driver_params=params,
                                     sections=sections))

    def set_input(self, b: int, rows: np.ndarray, name: str, value: Any, t: float) -> None:
        """A key pressed (1) or released (0), or a control set, on rows ``rows`` of batch
        ``b`` (``value``: one for all, or one per row): its record's row set and the
        plugin's ``on_input`` called (a plugin that raises is named, with the time)."""
        batch = self.train.batches[b]
        which = (*batch.cls.controls, *batch.cls.keys).index(name)
        rec = batch.record
        rows = np.atleast_1d(rows)
        values = np.broadcast_to(np.asarray(value, dtype=float), rows.shape)
        try:
            for r, v in zip(rows, values, strict=True):
                self.adapters[b].input.call(rec.buffer, rec.layout, int(r), which, float(v))
        except PLUGIN_FAILURES as exc:
            if isinstance(exc, RrsError):
                raise
            raise plugin_failure(batch.describe("on_input"), exc, t) from exc

    def set_rail_condition(self, factor: float) -> None:
        """The rail condition under the whole train from now on (wet rails, leaves): taken
        at the next control step, where it is placed with the plugins' adhesion factors."""
        self.sys.axles.rail_condition[:] = factor
        for placed in self.sys.plugins.placed:  # every type's outputs placed again
            placed[:] = np.nan

    def plugin_problem(self, b: int, t: float) -> None:
        """Raise the error of vehicle type ``b``'s control step at ``t``, which set outputs
        it may not (found by the loop's control step)."""
        b_i, what = ctl.outputs_problem(self.sys)
        batch = self.train.batches[b if b_i < 0 else b_i]
        problem = ("set a non-finite q_a, q_r or adhesion factor" if what != 2 else
                   "set a negative q_r (resistances are magnitudes)")
        raise PluginError(f"{batch.describe('step')} {problem}, at t = {t:.3f} s")

    def driver_readings(self, state: np.ndarray, params: np.ndarray, t: float) -> None:
        """What the built-in driver reads of the air brake at ``t``, into its ``state``
        (:func:`~rrscore.engine.airsystem.driver_readings`)."""
        driver_readings(self.air.run, state, params, t)

    def air_before(self, t: float, y: np.ndarray) -> None:
        """The air brake's part of a control step before the inputs are placed
        (:func:`~rrscore.engine.airsystem.air_before`)."""
        air_before(self.sys, t, y)

    def air_after(self, t: float, dt: float, y: np.ndarray) -> bool:
        """The air brake carried to ``t + dt`` (:func:`~rrscore.engine.airsystem.
        air_after`); whether the air it draws from main reservoirs changed. Raises
        :class:`~rrscore.model.errors.RrsError` where its steps failed."""
        ok, changed = air_after(self.sys, self.fns, t, dt, y)
        if not ok:
            st = self.air.run.state[0]
            raise AirBrakeFailed(f"the air brake's steps failed at t = {st.t:.6f} s "
                                 f"(step size {st.h:.1e} s)")
        return bool(changed)

    def place(self, y: np.ndarray) -> bool:
        """What the plugins set placed and held (see :func:`rrscore.engine.control.
        place_inputs`); whether anything changed."""
        one = self.one if self.one is not None and self.one.active else None
        if one is not None:
            one.held_changed(y, True)
        changed = bool(ctl.place_inputs(self.sys, self.inputs, y))
        changed = bool(ctl.records_changed(self.sys)) or changed
        if one is not None:
            one.held_changed(y, False)
        return changed

    def hold(self, y: np.ndarray) -> None:
        """The held sums taken again after a change of modes (an axle slipping, say)."""
        one = getattr(self, "one", None)
        one = one if one is not None and one.active else None
        if one is not None:
            one.held_changed(y, True)
        ctl.hold_inputs(self.sys, self.inputs, y, True)
        if one is not None:
            one.held_changed(y, False)

    # ------------------------------------------------------------------ events
    def event_where(self, entry: int) -> tuple[int, int]:
        """The block and component of event entry ``entry``."""
        blocks = self.sys.modes.blocks
        block = int(np.searchsorted(blocks, entry, side="right") - 1)
        return block, int(entry - blocks[block])

    def describe_event(self, entry: int) -> str:
        """'standstill at vehicle 3', 'slip at vehicle 0 axle 1': for messages."""
        block, j = self.event_where(entry)
        name = ("standstill", "slip", "wheel stops", "re-adhesion", "slack edge",
                "coupler break", "contact")[block]
        md, _tr = self.sys.modes, self.train
        if block == mb.STANDSTILL:
            return f"{name!r} at vehicle {j}"
        if block in (mb.SLIP, mb.STOPS, mb.READHESION):
            k = int((md.loaded if block == mb.SLIP else md.slipping)[j])
            return f"{name!r} at {self._axle_name(k)}"
        if block == mb.SLACK:
            return f"{name!r} at coupling {j // max(self.kinks.shape[1], 1)}"
        return f"{name!r} at coupling {j}"

    def _axle_name(self, k: int) -> str:
        tr = self.train
        first = np.concatenate([[0], np.cumsum(tr.num_axis)[:-1]])
        veh = int(tr.axle_vehicle[k])
        return f"vehicle {veh} axle {int(k - first[veh])}"

    def act(self, t: float, y: np.ndarray, f: np.ndarray, entries: np.ndarray) -> bool:
        """Act on the events at ``entries`` (the loop stopped there, at ``t``, state ``y``
        with derivative ``f``): changes ``y`` and the modes in place; whether anything
        changed (an action may decline: a slip whose demand no longer exceeds adhesion
        where the event landed). Events with one kind act together."""
        self.form(y, f)
        blocks = self.sys.modes.blocks
        entries = np.asarray(entries, dtype=np.int64)
        where = np.searchsorted(blocks, entries, side="right") - 1
        acted = False
        for block in np.unique(where):
            idx = entries[where == block] - blocks[block]
            acted |= (self._stop, self._start_slip, self._lock, self._readhere, None,
                      self._break, self._contact)[block](t, y, f, idx)
        if acted:
            self.ranges()
            self.hold(y)
        return acted

    def _stop(self, t: float, y: np.ndarray, f: np.ndarray, idx: np.ndarray) -> bool:
        """Vehicles stopping: their speed exactly 0, friction holding them (all of a rigid
        train as its lead stops: its vehicles keep one speed)."""
        held = self.sys.held
        if self.sys.modes.flags[mb.RIGID] != 0:
            idx = np.arange(self.lay.n)
        self.standstills += idx.size
        y[self.lay.sv + idx] = 0.0
        held.direction[idx] = 0.0
        held.frozen[idx] = 0.0
        return True

    def _lock(self, t: float, y: np.ndarray, f: np.ndarray, idx: np.ndarray) -> bool:
        """Sliding wheels stopping: their spin exactly 0, held there (locked)."""
        md, ax, lay = self.sys.modes, self.sys.axles, self.lay
        for j in idx:
            k = int(md.slipping[j])
            self._event(t, "wheel locked", k, y[lay.sv + ax.vehicle[k]])
            y[lay.somega + k] = 0.0
            ax.spin[k] = 0.0
        return True

    def _demand(self, axles: np.ndarray, y: np.ndarray,
                f: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Of ``axles`` at the state ``y`` (derivative ``f``): their vehicles, those's
        speeds, the force each axle asks of the rail to roll, and adhesion's limit."""
        ax, lay = self.sys.axles, self.lay
        veh = ax.vehicle[axles]
        v, a = y[lay.sv + veh], f[lay.sv + veh]
        need = rail_force_needed(v, a, ax.torque[axles], ax.brake[axles], ax.radius[axles],
                                 ax.mass_equiv[axles])
        return veh, v, need, self._adhesion(axles, v)

    def _start_slip(self, t: float, y: np.ndarray, f: np.ndarray, idx: np.ndarray) -> bool:
        """Loaded axles whose demand exceeds adhesion start to slip (or slide)."""
        sys, lay, ax = self.sys, self.lay, self.sys.axles
        axles = sys.modes.loaded[idx].copy()
        veh, v, need, cap = self._demand(axles, y, f)
        # Decline axles that need no more than adhesion gives where the event landed: a
        # braked axle's demand jumps from the full brake to the static hold as its vehicle
        # stops, so a crossing found just before the stop can be gone at it. At rest a
        # held vehicle's demand is constant, so a crossing located there is the vehicle
        # moving off (its push reaching its hold): its brakes then act against the push.
        brink = (np.abs(need) <= cap) & (v == 0.0)
        if brink.any():
            push = self._net_push(t, y)[veh[brink]]
            d = np.sign(push)
            kb = axles[brink]
            need[brink] = np.where(d != 0.0, (ax.torque[kb] - ax.brake[kb] * d) / ax.radius[kb],
                                   need[brink])
        over = np.abs(need) > cap
        if not over.any():
            return False
        for k, n_k, vk in zip(axles[over], need[over], v[over], strict=True):
            y[lay.somega + k] = (vk + ax.creep_slip[k] * np.sign(n_k)) / ax.radius[k]
            y[lay.sphi + k] = ax.phi_at[k] + (y[lay.sx + ax.vehicle[k]] - ax.x_at[k]) \
                * ax.inv_radius[k]
            ax.rolling[k] = 0.0
            ax.spin[k] = np.sign(y[lay.somega + k])
            self._event(t, "slip" if n_k > 0 else "slide", int(k), abs(n_k),
                        f"{abs(n_k):.0f} N demanded")
        self._list_slipping()
        return True

    def _readhere(self, t: float, y: np.ndarray, f: np.ndarray, idx: np.ndarray) -> bool:
        """Slipping axles whose slip fell below the creep peak roll again, where rolling asks
        no more of the rail than adhesion gives (a wheel locked by a brake stronger than
        adhesion slides on until its vehicle stops)."""
        sys, lay, ax = self.sys, self.lay, self.sys.axles
        axles = sys.modes.slipping[idx].copy()
        _, v, need, cap = self._demand(axles, y, f)
        ok = np.abs(need) <= cap
        if not ok.any():
            return False
        for k, vk in zip(axles[ok], v[ok], strict=True):
            slip = y[lay.somega + k] * ax.radius[k] - vk
            ax.rolling[k] = 1.0
            ax.phi_at[k] = y[lay.sphi + k]
            ax.x_at[k] = y[lay.sx + ax.vehicle[k]]
            y[lay.somega + k] = vk * ax.inv_radius[k]
            self._event(t, "re-adhesion", int(k), slip)
        self._list_slipping()
        return True

    def _break(self, t: float, y: np.ndarray, f: np.ndarray, idx: np.ndarray) -> bool:
        """Couplers breaking in tension: uncoupled, both parts run on."""
        force = self.coupler_forces(y)
        cp = self.sys.couplings
        for j in idx:
            cp.coupled[j] = 0.0
            self.log.append(Event(t, "coupler break", coupling=int(j), value=float(force[j]),
                                  detail=f"{force[j]:.0f} N"))
        self._count_couplings()
        return True

    def _contact(self, t: float, y: np.ndarray, f: np.ndarray, idx: np.ndarray) -> bool:
        """Uncoupled faces meeting: they couple at a closing speed up to the coupling speed,
        else the cars part again after the impact; the gears start from rest."""
        lay, cp = self.lay, self.sys.couplings
        closing = y[lay.sv + idx + 1] - y[lay.sv + idx]
        self.reset_gears(y, idx)
        for j, c in zip(idx, closing, strict=True):
            joins = bool(c <= cp.coupling_speed[j])
            if joins:
                cp.coupled[j] = 1.0
            self.log.append(Event(t, "coupled" if joins else "impact", coupling=int(j),
                                  value=float(c), detail=f"{c:.3f} m/s"))
        self._count_couplings()
        return True

    def uncouple(self, j: int) -> None:
        """Uncouple coupling ``j`` (a driver's action)."""
        self.sys.couplings.coupled[j] = 0.0
        self._count_couplings()

    def reset_gears(self, y: np.ndarray, couplings: np.ndarray) -> None:
        """The coupler models' states of ``couplings`` put back to their start."""
        tr = self.train
        d = y[self.sx][:-1] - y[self.sx][1:] - tr.couplings.nominal
        for (model, idx), (z0, k) in zip(tr.couplings.groups, self._group_blocks, strict=True):
            rows = np.flatnonzero(np.isin(idx, couplings))
            if k and rows.size:
                init = model.initial_state(d[idx])
                for r, name in enumerate(model.states):
                    y[z0 + r * idx.size + rows] = init[name][rows]

    def _count_couplings(self) -> None:
        cp, counts = self.sys.couplings, self.sys.modes.counts
        coupled = cp.coupled != 0.0
        counts[mb.WATCHED] = int(np.count_nonzero(np.isfinite(cp.break_force) & coupled))
        counts[mb.UNCOUPLED] = int(np.count_nonzero(~coupled))

    def _list_slipping(self) -> None:
        md, ax = self.sys.modes, self.sys.axles
        slipping = np.flatnonzero(ax.rolling == 0.0)
        md.slipping[:slipping.size] = slipping
        md.counts[mb.SLIPPING] = slipping.size

    def _adhesion(self, axles: np.ndarray, v: np.ndarray) -> np.ndarray:
        from ..physics.adhesion import psi_many

        ax = self.sys.axles
        return (psi_many(self.sys.laws, np.ascontiguousarray(ax.law[axles]),
                         np.ascontiguousarray(v, dtype=float))
                * ax.rail_factor[axles] * ax.normal[axles])

    def _net_push(self, t: float, y: np.ndarray) -> np.ndarray:
        """Each vehicle's signed force before friction (what a standing one is pushed by)."""
        mb.rhs(self.sys, self.fns, t, y, np.empty(self.size), False)
        return self.sys.scratch.force.copy()

    def _event(self, t: float, kind: str, k: int, value: float, detail: str = "") -> None:
        tr = self.train
        first = np.concatenate([[0], np.cumsum(tr.num_axis)[:-1]])
        veh = int(tr.axle_vehicle[k])
        self.log.append(Event(t, kind, vehicle=veh, axle=int(k - first[veh]),
                              value=float(value), detail=detail))

    # ------------------------------------------------------------------ outputs
    def coupler_forces(self, y: np.ndarray) -> np.ndarray:
        """Every coupling's force at ``y`` (tension +); a rigid train's, those its common
        acceleration takes."""
        if self.lay.nc == 0:
            return np.zeros(0)
        if self.rigid:
            mb.rhs(self.sys, self.fns, 0.0, y, np.empty(self.size), False)
        else:
            scratch = self.sys.scratch
            mb.coupler_forces(self.sys, self.fns, y, scratch.dz, scratch.cf, False)
        return self.sys.scratch.cf.copy()

    def derivative(self, t: float, y: np.ndarray, dy: np.ndarray) -> None:
        """The right-hand side at ``(t, y)`` into ``dy`` (the entries a stage reads)."""
        try:
            mb.rhs(self.sys, self.fns, t, y, dy, False)
        except RrsError:
            raise
        except PLUGIN_FAILURES as exc:  # a plugin's compiled function raised: name it
            raise self.failure(exc, t, y) from exc

    def sample_row(self, t: float, y: np.ndarray, f: np.ndarray, row: np.ndarray) -> int:
        """A time-series row at ``(t, y)`` (``f`` the derivative there) into ``row``
        (:func:`rrscore.engine.multibody.sample`, the right-hand side evaluated there
        first); the number of values."""
        try:
            mb.rhs(self.sys, self.fns, t, y, np.empty(self.size), False)
            return int(mb.sample(self.sys, self.fns, t, y, f, row))
        except RrsError:
            raise
        except PLUGIN_FAILURES as exc:  # a plugin's compiled function raised: name it
            raise self.failure(exc, t, y) from exc

    def accelerations(self, t: float, y: np.ndarray) -> np.ndarray:
        """Every vehicle's acceleration at ``(t, y)``."""
        dy = np.empty(self.size)
        mb.rhs(self.sys, self.fns, t, y, dy, False)
        return dy[self.sv].copy()

    def kinetic(self, y: np.ndarray) -> np.ndarray:
        """Each vehicle's kinetic energy with its axles' rotation, J."""
        from ..physics.energy import kinetic_energy

        y = self.full_state(y)
        tr = self.train
        return kinetic_energy(tr.mass, y[self.sv], tr.axle_inertia, y[self.somega],
                              tr.axle_vehicle)

    def traction_force(self) -> np.ndarray:
        """Drive force demanded of each vehicle (train frame, N), from the held inputs."""
        tr, ax = self.train, self.sys.axles
        return self.inputs.body_force + np.bincount(tr.axle_vehicle, ax.torque * ax.inv_radius,
                                                    tr.count)

    def __deepcopy__(self, memo: dict) -> TrainSystem:
        new = object.__new__(TrainSystem)
        memo[id(self)] = new
        for key, value in self.__dict__.items():
            shared = key in ("route", "adapters", "coupler_adapters", "layout", "fns",
                             "_forces", "_functions")
            if key != "one":
                setattr(new, key, value if shared else copy_arrays(value, memo))
        new.one = None if self.one is None else self.one.copy(new, memo)
        return new


def copy_arrays(value: Any, memo: dict) -> Any:
    """A copy of ``value`` in which every array is copied (once: what shares an array
    shares its copy), every named tuple and tuple rebuilt and rrscore's own objects
    copied deeply (each says what it shares), but compiled functions, classes and other
    objects kept as they are (they do not change in a run)."""
    if isinstance(value, np.ndarray) or type(value) in (list, dict, set):
        return copy.deepcopy(value, memo)
    if isinstance(value, tuple):
        items = [copy_arrays(v, memo) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if hasattr(value, "_fields") and hasattr(value, "set"):  # a struct (rrscore.jit.struct)
        return copy.deepcopy(value, memo)
    if hasattr(value, "__dict__") and not isinstance(value, type) and \
            type(value).__module__.startswith("rrscore."):
        return copy.deepcopy(value, memo)  # (rrscore's objects say what they share)
    return value
