"""The equations of motion of a train on a route, assembled from components.

The state vector is laid out from the blocks its components declare
(:mod:`rrscore.state`): the bodies (``body.x``, ``body.v`` per vehicle), the
wheelsets (``wheel.phi``, ``wheel.omega`` per axle), the couplings (the
states of coupler models with memory, per coupling) and the states vehicle
plugins declare (per vehicle). The right-hand side runs in two phases over
whole arrays (see :mod:`rrscore.component`): every component adds its forces,
the bodies turn them into accelerations, then every component writes its
derivatives. There is no Python loop over vehicles or axles; the loops are
over components and over vehicle types.

Inputs from vehicle plugins (``Q_a``, ``Q_r``, adhesion factors) are gathered
once per control step and held in between.

A rigid train (``rigid=True``) keeps the same state and components, but its bodies
move as one (see :mod:`rrscore.bodies`): the couplers neither deflect nor act as
springs, their events (slack edges, breaking, coupling) are not watched, and their
forces are the ones the common acceleration takes. With no coupler modes left, the
solver's steps are limited by the accuracy of the train's motion alone.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from numba import njit

from .airbrake import AirBrake
from .bodies import (
    Bodies,
    held_force_rows,
    held_friction_into,
    held_rows_into,
    rigid_coupler_forces,
)
from .compiled import CompiledBodies, compile_kernel, dot
from .component import Component, EventBlock, Loads, Signal
from .energy import EnergyAccount
from .errors import RrsError, plugin_call, plugin_failure
from .events import Event
from .reductions import any_set
from .state import StateLayout
from .track import Route
from .train import Train
from .wheelsets import Wheelsets


def _same(a: np.ndarray, b: np.ndarray | None) -> bool:
    """``np.array_equal(a, b)`` (False for None), without its checks: it runs for every
    batch at every control step."""
    return b is not None and a.shape == b.shape and not any_set(a != b)


@njit(cache=True)
def _held_inputs(body_force, body_resist, mass, equiv, rows, vehicle, c0, start0,
                 rigid):  # pragma: no cover (compiled)
    """:func:`~rrscore.bodies.held_rows` of the bodies' own inputs plus, per vehicle, the
    force and brake resistance its loaded rolling axles (``rows``: :attr:`Wheelsets.
    loaded_rows <rrscore.wheelsets.Wheelsets.loaded_rows>`, on ``vehicle``) pass through
    the rail, ``torque / r`` and ``brake / r``, and its rolling axles' equivalent mass
    ``equiv`` added to ``mass``: fresh arrays, filled by :func:`held_inputs_into`."""
    n = body_force.size
    held = np.empty((5, n))
    friction = np.empty(n, dtype=np.bool_)
    held_inputs_into(held, friction, np.empty((HELD_WORK_ROWS, n)), body_force, body_resist,
                     mass, equiv, rows, vehicle, c0, start0, rigid)
    return held, friction


#: Rows of the ``work`` array :func:`held_inputs_into` takes.
HELD_WORK_ROWS = 5


@njit(cache=True, _nrt=False)
def held_inputs_into(held, friction, work, body_force, body_resist, mass, equiv, rows,
                     vehicle, c0, start0, rigid):  # pragma: no cover (compiled)
    """:func:`_held_inputs` written into ``held`` and ``friction`` (as
    :func:`~rrscore.bodies.held_rows_into`), with :data:`HELD_WORK_ROWS` rows of a value
    per vehicle in ``work`` for its sums: one compiled pass at each change of inputs,
    allocating nothing (the compiled loop's control steps take it)."""
    n = body_force.size
    force, resist, torque, brake, mass_eff = (work[0, :n], work[1, :n], work[2, :n],
                                              work[3, :n], work[4, :n])
    for i in range(n):
        force[i] = body_force[i]
        resist[i] = body_resist[i]
        torque[i] = 0.0
        brake[i] = 0.0
    for j in range(vehicle.size):  # as np.bincount: in axle order, from zero
        torque[vehicle[j]] += rows[2, j] / rows[4, j]
        brake[vehicle[j]] += rows[3, j] / rows[4, j]
    for i in range(n):
        force[i] += torque[i]
        resist[i] += brake[i]
        mass_eff[i] = mass[i] + equiv[i]
    held_rows_into(held, friction, force, resist, mass_eff, c0, start0, rigid)


@njit(cache=True, _nrt=False)
def held_inputs_of(held, friction, work, changed, body_force, body_resist, c0, start0, rows,
                   vehicle, rigid):  # pragma: no cover (compiled)
    """:func:`held_inputs_into` for the vehicles ``changed`` marks (1.0; 0.0 elsewhere)
    alone, the others' held rows as they are: what a control step that placed new inputs
    on a few vehicles takes (the compiled loop's; the loaded axles' set unchanged, and
    every vehicle's effective mass too, so rows 3 and 4 stand). Each changed vehicle's
    rows are :func:`held_inputs_into`'s to the bit (its loaded axles summed in the same
    order); ``friction`` is then taken over every vehicle as it takes it. ``work``:
    :data:`HELD_WORK_ROWS` rows of a value per vehicle."""
    n = body_force.size
    torque, brake = work[0, :n], work[1, :n]
    for i in range(n):
        torque[i] = 0.0
        brake[i] = 0.0
    for j in range(vehicle.size):
        i = vehicle[j]
        if changed[i] != 0.0:
            torque[i] += rows[2, j] / rows[4, j]
            brake[i] += rows[3, j] / rows[4, j]
    for i in range(n):
        if changed[i] != 0.0:
            force = body_force[i]
            force += torque[i]
            resist = body_resist[i]
            resist += brake[i]
            held_force_rows(held, i, force, resist, c0[i])
    held_friction_into(held, friction, start0, rigid)


@njit(cache=True, _nrt=False)
def _take_one(a, last, k):  # pragma: no cover (compiled)
    # over a view from 0, each entry written and the change or-ed, with no branch
    part = last[k:k + a.size]
    changed = 0
    j = 0
    for x in a.flat:
        changed |= np.int64(not x == part[j])  # NaN counts as changed, as in np.array_equal
        part[j] = x
        j += 1
    return changed != 0, k + a.size


@njit(cache=True, _nrt=False)
def _take_changed(q_a, q_r, factor, last):  # pragma: no cover (compiled)
    """Whether a model's ``Q_a``, ``Q_r`` and ``adhesion_factor`` differ from ``last``
    (what it set at the last control step, end to end); ``last`` takes the new values."""
    a, k = _take_one(q_a, last, np.int64(0))  # (typed: one compiled _take_one)
    b, k = _take_one(q_r, last, k)
    c, k = _take_one(factor, last, k)
    return a or b or c


@njit(cache=True, _nrt=False)
def _place(q_a, q_r, factor, last, sign, veh, axles, body_force, body_resist, torque,
           brake_own, rail_factor, rail_condition):  # pragma: no cover (compiled)
    """:func:`_take_changed` and, where a model set something new, what it set placed
    in the train's arrays: forces and torques in the train frame (times each vehicle's
    orientation ``sign``), resistances and brakes as magnitudes, and the rail factor as
    the rail condition times the model's adhesion factor. ``veh``, ``axles``: the
    batch's vehicles and its axles (row by row). One pass where numpy took a dozen
    small calls at every control step; returns whether anything changed."""
    if not _take_changed(q_a, q_r, factor, last):
        return False
    k = q_a.shape[1] - 1
    for i in range(q_a.shape[0]):
        s = sign[i]
        body_force[veh[i]] = q_a[i, 0] * s
        body_resist[veh[i]] = abs(q_r[i, 0])
        for j in range(k):
            a = axles[i * k + j]
            torque[a] = q_a[i, j + 1] * s
            brake_own[a] = abs(q_r[i, j + 1])
            rail_factor[a] = rail_condition[a] * factor[i, j]
    return True


def _as_slice(index: np.ndarray) -> slice | np.ndarray:
    """``index`` as a slice if it is a run of consecutive integers, else itself."""
    if index.size and np.array_equal(index, np.arange(index[0], index[0] + index.size)):
        return slice(int(index[0]), int(index[0]) + index.size)
    return index


class VehicleStates(Component):
    """The continuous states vehicle plugins declare (``VehicleModel.states``)."""

    name = "vehicle states"

    def __init__(self, train: Train, bodies: Bodies) -> None:
        self.train, self.bodies = train, bodies
        self.batches = [b for b in train.batches if b.model.states]
        self.slices: list[dict[str, slice]] = []
        # Where each batch's vehicles are (a slice when they stand together, as they
        # mostly do: cheaper than an index array at every stage) and their orientation.
        self._where = [_as_slice(b.model.index) for b in self.batches]
        self._sign = [train.orientation[b.model.index] for b in self.batches]
        #: Per batch: its ``state_rates`` as a :class:`~rrscore.compiled.Kernel` (None for a
        #: model that overrides ``rates`` instead), and the inputs held for it.
        self.kernels = [None if type(b.model).state_rates is None
                        else compile_kernel(type(b.model).state_rates) for b in self.batches]
        self.inputs = [np.zeros((len(b.model.rates_inputs), b.model.count))
                       for b in self.batches]
        # each batch's states: one block of the state vector, and its (states, n) shape
        self._rows: list[tuple[slice, tuple[int, int]]] = []
        self.hold_inputs()

    def hold_inputs(self) -> bool:
        """Read the arrays each model's ``rates_inputs`` names (after its ``step``) and
        hold them for ``state_rates``; return whether any changed."""
        changed = False
        for b, held in zip(self.batches, self.inputs, strict=True):
            if not held.size:
                continue
            try:  # as plugin_call, without building the message at every control step
                new = b.model.rates_input_values()
            except Exception as exc:
                if isinstance(exc, RrsError):
                    raise
                raise plugin_failure(b.describe("rates_inputs"), exc) from exc
            if not _same(new, held):
                held[:] = new
                changed = True
        return changed

    def declare(self, layout: StateLayout) -> None:
        names = [b.model.type_name for b in self.batches]
        for i, b in enumerate(self.batches):
            tag = names[i] if names.count(names[i]) == 1 else f"{names[i]}#{i}"
            self.slices.append({k: layout.add(f"{tag}.{k}", spec, b.model.count)
                                for k, spec in b.model.states.items()})
            blocks = list(self.slices[-1].values())  # laid end to end, in order
            self._rows.append((slice(blocks[0].start, blocks[-1].stop),
                               (len(blocks), b.model.count)))

    def initial(self, y: np.ndarray) -> None:
        for b, slices in zip(self.batches, self.slices, strict=True):
            with plugin_call(b.describe("initial_state")):
                init = b.model.initial_state()
            for k, sl in slices.items():
                y[sl] = init[k]

    def rates(self, t: float, y: np.ndarray, loads: Loads, dy: np.ndarray) -> None:
        if not self.batches:
            return
        v = y[self.bodies.sv]
        for b, slices, where, sign, kernel, held, (rows, shape) in zip(
                self.batches, self.slices, self._where, self._sign, self.kernels, self.inputs,
                self._rows, strict=True):
            try:
                if kernel is not None:  # one call on whole arrays, compiled where it could be
                    kernel.call(t, v[where] * sign, np.ascontiguousarray(y[rows]).reshape(shape),
                                held, dy[rows].reshape(shape))  # dy: a fresh array, a view
                    continue
                s = SimpleNamespace(v=v[where] * sign, **{k: y[sl] for k, sl in slices.items()})
                r = b.model.rates(t, s)
                for k, sl in slices.items():
                    dy[sl] = r[k]
            except Exception as exc:  # not plugin_call: this runs at every stage
                if isinstance(exc, RrsError):
                    raise
                what = "state_rates" if kernel is not None else "rates"
                raise plugin_failure(b.describe(what), exc, t) from exc

    def publish(self, y: np.ndarray) -> None:
        """Hand each model its states' current values (``model.state``) before ``step``."""
        for b, slices in zip(self.batches, self.slices, strict=True):
            for k, sl in slices.items():
                setattr(b.model.state, k, y[sl].copy())

    def signals(self) -> dict[str, Signal]:
        # one column per state name over the whole train, NaN where a vehicle lacks it
        where: dict[str, list[tuple[slice, np.ndarray]]] = {}
        units: dict[str, str] = {}
        for b, slices in zip(self.batches, self.slices, strict=True):
            for k, sl in slices.items():
                where.setdefault(k, []).append((sl, b.model.index))
                units[k] = b.model.states[k].unit
        n = self.train.count

        def column(parts: list[tuple[slice, np.ndarray]]):
            def fn(y: np.ndarray, loads: Loads) -> np.ndarray:
                col = np.full(n, np.nan)
                for sl, index in parts:
                    col[index] = y[sl]
                return col
            return fn

        return {k: ("vehicle", units[k], column(parts)) for k, parts in where.items()}


@njit(cache=True, _nrt=False)
def traction_sum(body_force, torque, axle_vehicle, radius, per):  # pragma: no cover
    """The drive force summed over the train (N): each vehicle's body force and its
    axles' torques over their radii, vehicle by vehicle in train order (``per``: room
    for a value per vehicle). The run's time series (:func:`traction_total`) and the
    compiled loop's samples (:mod:`rrscore.steploop`) both take it from here, so that
    the two agree to the bit."""
    for i in range(per.size):
        per[i] = 0.0
    for a in range(torque.size):
        per[axle_vehicle[a]] += torque[a] / radius[a]
    total = 0.0
    for i in range(body_force.size):
        total += body_force[i] + per[i]
    return total


@njit(cache=True, _nrt=False)
def traction_loaded(body_force, rows, per):  # pragma: no cover (compiled)
    """:func:`traction_sum` where every axle rolls, from the loaded axles alone (``rows``:
    :attr:`Wheelsets.loaded_rows <rrscore.wheelsets.Wheelsets.loaded_rows>`, in axle
    order: axle, vehicle, torque, brake, radius, ...): an axle that is not loaded has no
    torque and adds nothing to its vehicle's sum, so the total is the same to the bit, at
    the cost of the loaded axles instead of every axle (the compiled loops' samples)."""
    for i in range(per.size):
        per[i] = 0.0
    for c in range(rows.shape[1]):
        per[int(rows[1, c])] += rows[2, c] / rows[4, c]
    total = 0.0
    for i in range(body_force.size):
        total += body_force[i] + per[i]
    return total


@njit(cache=True)
def traction_total(body_force, torque, axle_vehicle, radius):  # pragma: no cover (compiled)
    """:func:`traction_sum` with room of its own."""
    return traction_sum(body_force, torque, axle_vehicle, radius, np.empty(body_force.size))


class TrainDynamics:
    """A train's equations of motion: its components, the state layout, the right-hand
    side, the held inputs and the events. A run owns one; it is built afresh per run."""

    def __init__(self, train: Train, route: Route, wind: float = 0.0,
                 air_density: float = 1.225, position_tol: float = 1e-5,
                 speed_tol: float = 1e-6, rigid: bool = False) -> None:
        self.train, self.route = train, route
        self.n, self.na = train.count, train.axle_count
        #: The train moves as one body (the scenario's ``dynamics = "rigid"``).
        self.rigid = rigid
        self.bodies = Bodies(train, route, wind, air_density, position_tol, speed_tol,
                             rigid)
        self.wheelsets = Wheelsets(train, self.bodies, speed_tol, accelerations=self.rhs,
                                   on_modes_changed=self.refresh)
        self.wheelsets.loads_at = self.loads
        self.couplings = train.couplings
        self.vehicle_states = VehicleStates(train, self.bodies)
        #: The air brake, if any vehicle carries one (its rates follow the vehicle states':
        #: it draws air from their main reservoirs).
        self.airbrake = AirBrake(train, self.couplings) if train.has_air_brake else None
        self.energy = EnergyAccount(train, self.bodies, self.wheelsets)
        # Forces are added in this order; the bodies come last and sum them up. The
        # energy account adds none: its rates are the work of the forces the others set.
        self.components: list[Component] = [self.couplings, self.wheelsets,
                                            self.vehicle_states, self.bodies, self.energy]
        if self.airbrake is not None:
            self.components.insert(3, self.airbrake)
        self.layout = StateLayout()
        self.bodies.declare(self.layout)
        self.wheelsets.declare(self.layout)
        for c in (self.couplings, self.vehicle_states, self.airbrake, self.energy):
            if c is not None:
                c.declare(self.layout)
        if self.airbrake is not None:
            self.airbrake.sv = self.bodies.sv
            self.airbrake.link_main_reservoirs(self.vehicle_states)
        self.size = self.layout.size
        self.sx, self.sv = self.bodies.sx, self.bodies.sv
        self.sphi, self.somega = self.wheelsets.sphi, self.wheelsets.somega
        self.couplings.sx, self.couplings.sv = self.sx, self.sv
        #: Entries of the state no right-hand side reads: the wheel angles and the energy
        #: account, integrals of what the rest gives (a solver may form them only at a
        #: step's end; the compiled step loop does).
        self.unread = np.zeros(self.size, dtype=bool)
        self.unread[self.sphi] = True
        for sl in [*self.energy.slices.values(), self.energy.coupler]:
            self.unread[sl] = True
        #: :attr:`unread` while every axle rolls: the spins too (a rolling axle's spin and
        #: angle are read off its body after each step, and only slipping axles' spins
        #: feed forces back).
        self.unread_rolling = self.unread.copy()
        self.unread_rolling[self.somega] = True

        # Events go into one list, in time order.
        self.log: list[Event] = []
        self.couplings.events_out = self.log
        self.wheelsets.events_out = self.log
        self.bodies.on_stop = self.wheelsets.stop_with_vehicles

        # Inputs held over a control step (train frame): body force and extra resistance.
        self.body_force = np.zeros(self.n)
        self.body_resist = np.zeros(self.n)
        self._axle_brake_own = np.zeros(train.axle_count)  # the models' own, without air
        #: Per batch: the batch, its vehicles and its axles (flat, in the train's order)
        #: as slices where they stand together, its vehicles' orientation, and what its
        #: model set at the last :meth:`set_inputs` (a one-item list; None: take it).
        self.placed = [(b, _as_slice(b.model.index), _as_slice(b.axles.ravel()),
                        train.orientation[b.model.index], [None]) for b in train.batches]
        # the same vehicles and axles as index arrays, for the compiled placing pass
        self._indices = [(np.ascontiguousarray(b.model.index, dtype=np.int64),
                          np.ascontiguousarray(b.axles.ravel(), dtype=np.int64))
                         for b in train.batches]
        self._mean_weights = train.mass / train.total_mass
        per = [(self.bodies.events(), "vehicle"), (self.wheelsets.events(), "axle")]
        if not rigid:
            per.append((self.couplings.events(), "coupling"))
        self.events: list[EventBlock] = [b for blocks, _ in per for b in blocks]
        self._event_kind = [kind for blocks, kind in per for _ in blocks]
        self.compiled = CompiledBodies(self)
        self.refresh()

    def event_where(self, block: int, j: int) -> str:
        """Where component ``j`` of event block ``block`` is: "vehicle 3", "vehicle 0
        axle 1" or "coupling 7"."""
        kind = self._event_kind[block]
        if kind == "axle":
            return (f"vehicle {int(self.train.axle_vehicle[j])} "
                    f"axle {int(self.wheelsets.axle_in_vehicle[j])}")
        return f"{kind} {j}"

    # ------------------------------------------------------------------ state
    def initial_state(self, lead_position: float, speed: float | np.ndarray,
                      slack: str = "neutral", gaps: np.ndarray | None = None) -> np.ndarray:
        """State with the lead vehicle's centre at ``lead_position``, all at ``speed``
        (a number, or one per vehicle).

        ``slack``: 'neutral' (couplers in the middle of their slack), 'bunched' (every
        coupler at the compressed end of its slack) or 'stretched'. ``gaps`` adds
        distance per coupling (cars standing apart).
        """
        spacing = self.couplings.start_spacing(slack, gaps)
        y = self.layout.initial()
        y[self.sx] = lead_position - np.concatenate([[0.0], np.cumsum(spacing)])
        y[self.sv] = speed
        for c in self.components:
            c.initial(y)
        self.start_step(y)
        return y

    def atol(self) -> np.ndarray:
        """Absolute tolerance of every state entry, from the components' specs."""
        a = self.layout.atol()
        a[self.somega] = self.wheelsets.speed_tol / self.train.axle_radius
        return a

    def rtol_mask(self) -> np.ndarray:
        """1 where the relative tolerance applies: velocities (relative to the train's mean
        motion, see :meth:`reference`), spins and plugin states; 0 for positions and
        angles, whose size says nothing about the error that matters."""
        m = np.ones(self.size)
        m[self.sx] = 0.0
        m[self.sphi] = 0.0
        return m

    def reference(self, y: np.ndarray) -> np.ndarray:
        """The train's mean motion, subtracted before the relative tolerance applies, so a
        train at speed is held to the same accuracy of its relative motions (coupler modes)
        as a standing one."""
        mean = dot(self._mean_weights, y[self.sv])
        ref = np.zeros(self.size)
        ref[self.sv] = mean
        np.divide(mean, self.train.axle_radius, out=ref[self.somega])
        return ref

    def start_step(self, y: np.ndarray) -> None:
        """Hold friction directions for the coming steps (at a restart)."""
        self.bodies.start_step(y)
        self.wheelsets.start_step(y)

    def commit(self, y: np.ndarray) -> None:
        """After each accepted step (no event): update held modes that do not change the
        right-hand side."""
        self.bodies.commit(y)
        self.wheelsets.commit(y)
        if self.airbrake is not None:
            self.airbrake.commit(y)

    # ----------------------------------------------------------------- inputs
    def refresh(self) -> None:
        """Recompute the per-vehicle sums that are constant between inputs or mode changes."""
        w = self.wheelsets
        w.refresh_modes()
        self._use_compiled = self.compiled.applies()
        tr = self.train
        self.bodies.take_held(*_held_inputs(self.body_force, self.body_resist, tr.mass,
                                            w.mass_equiv_rolling(), w.loaded_rows,
                                            w.loaded_vehicle(), tr.c0, tr.start0,
                                            self.rigid))
        if w.slipping.size:
            self.bodies.mark_friction(self.train.axle_vehicle[w.slipping])

    def set_inputs(self) -> bool:
        """Gather ``Q_a``/``Q_r`` from every vehicle model (train frame) and refresh the sums.

        Returns whether anything changed: if not, the solver need not restart.
        """
        w = self.wheelsets
        changed = False
        for (b, _, _, sign, last), (veh, axles) in zip(self.placed, self._indices,
                                                      strict=True):
            m = b.model
            # a batch that set the same as last time (most cars, most of the time) is
            # skipped: what it set is kept end to end in last[0], compared in one pass
            if last[0] is None:  # NaN differs from everything: the first call places all
                last[0] = np.full(m.Q_a.size + m.Q_r.size + m.adhesion_factor.size, np.nan)
            if _place(m.Q_a, m.Q_r, m.adhesion_factor, last[0], sign, veh, axles,
                      self.body_force, self.body_resist, w.axle_torque, self._axle_brake_own,
                      w.rail_factor, w.rail_condition):
                changed = True
        if self.airbrake is not None:
            brake = self._axle_brake_own + self.airbrake.axle_torque
            if not _same(brake, w.axle_brake):
                w.axle_brake[:] = brake
                changed = True
        elif changed:
            w.axle_brake[:] = self._axle_brake_own
        held = self.vehicle_states.hold_inputs()  # what the plugins' state rates read
        if not changed:
            return held
        self.refresh()
        return True

    def set_rail_condition(self, factor: float) -> None:
        """Rail condition factor under the whole train from now on (wet rails, leaves, ...)."""
        self.wheelsets.rail_condition[:] = factor
        self._forget_inputs()
        self.set_inputs()

    def _forget_inputs(self) -> None:
        """Take every model's inputs again at the next :meth:`set_inputs`."""
        for *_, last in self.placed:
            last[0] = None

    # -------------------------------------------------------------------- rhs
    def loads(self, t: float, y: np.ndarray) -> Loads:
        """Phase 1 of the right-hand side: every force, and the bodies' accelerations."""
        loads = Loads(np.zeros(self.n), np.zeros(self.n))
        for c in self.components:
            if c is self.couplings and self.rigid:
                loads.coupler_force = np.zeros(self.n - 1)  # rigid ones: after the bodies
                continue
            c.forces(t, y, loads)
        self.bodies.accelerate(y, loads)
        if self.rigid and self.n > 1:
            loads.coupler_force = rigid_coupler_forces(loads.net, self.bodies.mass_eff,
                                                       loads.accel[0])
        return loads

    def rhs(self, t: float, y: np.ndarray) -> np.ndarray:
        """``dy/dt`` for the solver; a pure function of ``t``, ``y`` and the held modes.

        While every axle rolls, the bodies, wheelsets and energy account run as one
        compiled pass (:mod:`rrscore.compiled`); the coupler models and the vehicle
        plugins' states are called as in :meth:`rhs_components`.
        """
        if not self._use_compiled:
            return self.rhs_components(t, y)
        dy = np.empty(self.size)
        cp = self.couplings
        if self.rigid:
            cf = self._rigid_couplers(dy)
        elif self.n > 1:
            cf = cp.force_and_rates(t, y, dy)
        else:
            cf = np.zeros(0)
        self.vehicle_states.rates(t, y, None, dy)
        if self.airbrake is not None:
            self.airbrake.rates(t, y, None, dy)
        self.compiled.rates(y, cf, dy)
        return dy

    def rhs_components(self, t: float, y: np.ndarray) -> np.ndarray:
        """``dy/dt`` from the components' own methods (the reference for :meth:`rhs`)."""
        loads = self.loads(t, y)
        dy = np.empty(self.size)
        for c in self.components:
            if c is self.couplings and self.rigid:
                self._rigid_couplers(dy)
                continue
            c.rates(t, y, loads, dy)
        return dy

    def _rigid_couplers(self, dy: np.ndarray) -> np.ndarray:
        """A rigid train's couplers: their models' states stand still (nothing deflects).
        Returns room for their forces, which the compiled pass fills in (the bodies share
        one acceleration instead of pushing on each other)."""
        for slices in self.couplings.state_slices:
            for sl in slices.values():
                dy[sl] = 0.0
        return np.zeros(max(self.n - 1, 0))

    def coupler_forces(self, y: np.ndarray) -> np.ndarray:
        """Force of every coupling at ``y``, tension +. In a rigid train, the force the
        common acceleration takes (:func:`rrscore.bodies.rigid_coupler_forces`)."""
        if self.n < 2:
            return np.zeros(0)
        if self.rigid:
            if self._use_compiled:  # the compiled pass works them out as the loads do
                cf = np.zeros(self.n - 1)
                self.compiled.rates(y, cf, np.empty(self.size))
                return cf
            return self.loads(0.0, y).coupler_force
        return self.couplings.force_at(y)

    def traction_force(self) -> np.ndarray:
        """Drive force demanded of each vehicle (train frame, N), from the held inputs."""
        tr = self.train
        return self.body_force + np.bincount(
            tr.axle_vehicle, self.wheelsets.axle_torque / tr.axle_radius, tr.count)

    def traction_total(self) -> float:
        """The train's drive force (N): :meth:`traction_force` summed, in the arithmetic
        the compiled loop uses for its samples (:func:`traction_total`)."""
        tr = self.train
        return float(traction_total(self.body_force, self.wheelsets.axle_torque,
                                    tr.axle_vehicle, tr.axle_radius))

    def signals(self) -> dict[str, Signal]:
        """Every output signal the components provide, by name. A coupling signal and a
        vehicle signal may share a name (``force_N``): coupling signals are keyed
        ``coupling:NAME``."""
        out: dict[str, Signal] = {}
        for c in self.components:
            for name, sig in c.signals().items():
                out[f"coupling:{name}" if sig[0] == "coupling" else name] = sig
        out["traction_force_N"] = ("vehicle", "N", lambda y, loads: self.traction_force())
        return out

    def jac_sparsity(self):
        """Which entries of ``dy/dt`` may depend on which of ``y``, as a scipy sparse
        matrix, for solvers that form the Jacobian: every entry belongs to a vehicle (or,
        for a coupling, to the two it joins), and depends only on entries of vehicles at
        most one place away along the train, never on wheel angles."""
        from scipy import sparse

        lo = np.empty(self.size, dtype=int)
        hi = np.empty(self.size, dtype=int)
        veh = np.arange(self.n)
        for sl in (self.sx, self.sv):
            lo[sl] = hi[sl] = veh
        for sl in (self.sphi, self.somega):
            lo[sl] = hi[sl] = self.train.axle_vehicle
        for (_model, idx), slices in zip(self.couplings.groups, self.couplings.state_slices,
                                        strict=True):
            for sl in slices.values():
                lo[sl], hi[sl] = idx, idx + 1
        for b, slices in zip(self.vehicle_states.batches, self.vehicle_states.slices,
                             strict=True):
            for sl in slices.values():
                lo[sl] = hi[sl] = b.model.index
        for sl in self.energy.slices.values():
            lo[sl] = hi[sl] = veh
        lo[self.energy.coupler], hi[self.energy.coupler] = veh[:-1], veh[:-1] + 1
        # A coupling's entries reach one vehicle further than a body's: take lo - 2.
        order = np.argsort(lo, kind="stable")
        sorted_lo = lo[order]
        begin = np.searchsorted(sorted_lo, lo - 2, side="left")
        end = np.searchsorted(sorted_lo, hi + 1, side="right")
        # Wheel angles feed nothing back: no entry depends on them.
        phi = np.zeros(self.size, dtype=bool)
        phi[self.sphi] = True
        rows, cols = [], []
        for a in range(self.size):  # set-up only, never in the integration loop
            c = order[begin[a]:end[a]]
            c = c[~phi[c]]
            rows.append(np.full(len(c), a))
            cols.append(c)
        data = np.ones(sum(len(c) for c in cols), dtype=bool)
        return sparse.csr_matrix((data, (np.concatenate(rows), np.concatenate(cols))),
                                 shape=(self.size, self.size))
