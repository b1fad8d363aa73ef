"""Couplings between neighbouring vehicles: the coupler-model plugin API and coupling state.

Sign conventions (train frame, vehicle 0 leads, +x is the direction of travel):
the deflection ``d`` of coupling ``j`` (between vehicles ``j`` and ``j + 1``) is
the change of the distance between their centres from its nominal value (half
lengths added), so ``d > 0`` is stretched; the coupler force ``F > 0`` is
tension. Vehicle ``j`` feels ``-F``, vehicle ``j + 1`` feels ``+F``.

A coupler model serves every coupling that uses it, with parameter arrays, so
the force of the whole train is a handful of numpy operations.
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any, ClassVar

import numpy as np

from .component import Component, EventBlock, Loads, Signal
from .config import FreeTable, Param, stack_params
from .errors import RrsError, interruption_behind, plugin_failure
from .events import Event
from .state import StateLayout, StateSpec

COUPLING_SCHEMA = {
    "model": Param(kind=str, default="spring_damper", doc="coupler model (see `rrs plugins`)"),
    "params": FreeTable("parameters of the coupler model"),
    "break_force": Param("N", 0.0, "tension at which the coupler breaks; 0 = never", min=0.0),
    "coupling_speed": Param(
        "m/s", 2.0 / 3.6, "highest closing speed at which couplers couple on contact", min=0.0
    ),
}


class CouplerModel:
    """Base class of coupler (draft-gear) models. One instance serves many couplings.

    Plugins set ``type_name``, ``description``, ``params`` (``{name: Param}``)
    and implement ``force``. Parameters arrive in ``p`` as one array per
    parameter, one entry per coupling (``self.p.stiffness``, SI units), as a
    vehicle model's do; ``count`` (int) is how many couplings the object serves.
    Deflections ``d`` are in m (stretched +), rates ``d_dot`` in m/s, forces in
    N (tension +), each array of shape ``(count,)``.

    A model with memory (a friction draft gear) declares per-coupling
    continuous states in ``states`` (``{name: StateSpec}``). They live in the
    drive's state vector; ``force`` and ``rates`` receive them as a namespace
    ``s`` of arrays (``s.gear_force``) and ``rates`` returns their time
    derivatives. Both are pure functions of their arguments: the solver calls
    them at trial states it may throw away.

    Optionally, ``force_kernel`` gives both as one plain function numba compiles
    (with :meth:`kernel_params`): then a train's whole steps can run compiled
    (:mod:`rrscore.steploop`).
    """

    type_name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    params: ClassVar[dict[str, Param]] = {}
    states: ClassVar[dict[str, StateSpec]] = {}
    #: Optional: :meth:`force` and :meth:`rates` of all the model's couplings as one plain
    #: function numba compiles, ``force_kernel(d, d_dot, z, params, force, dz)`` (see
    #: :data:`rrscore.steploop.COUPLER_KERNEL`): it reads the deflections, their rates, the
    #: states (one row per name in ``states``, in order) and :meth:`kernel_params`, and
    #: writes the forces and the states' rates. It must compute what ``force`` and
    #: ``rates`` do; where a train's couplers have one, its steps run compiled.
    force_kernel: ClassVar[Callable[..., None] | None] = None

    def __init__(self, params: list[dict[str, Any]]) -> None:
        self.count = len(params)
        self.p = stack_params(params, self.params)
        self.setup()

    def setup(self) -> None:
        """Called once after the parameter arrays are built."""

    def kernel_params(self) -> np.ndarray:
        """The parameter table ``force_kernel`` reads, shape ``(rows, count)``."""
        return np.zeros((0, self.count))

    def force(self, d: np.ndarray, d_dot: np.ndarray, s: SimpleNamespace) -> np.ndarray:
        """Coupler force (tension +) for deflections ``d``, their rates ``d_dot`` and the
        model's states ``s`` (empty for a model without ``states``)."""
        raise NotImplementedError

    def rates(self, d: np.ndarray, d_dot: np.ndarray, s: SimpleNamespace) -> dict[str, np.ndarray]:
        """Time derivatives of the declared ``states``, one array per name."""
        return {}

    def force_and_rates(self, d: np.ndarray, d_dot: np.ndarray, s: SimpleNamespace
                        ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """:meth:`force` and :meth:`rates` together, as the right-hand side asks for them.
        Override it where one pass computes both for less (the shipped SA-3 gear does)."""
        return self.force(d, d_dot, s), self.rates(d, d_dot, s)

    def initial_state(self, d: np.ndarray) -> dict[str, np.ndarray]:
        """The states at the start of a drive, for initial deflections ``d``."""
        return {name: np.full(self.count, spec.initial) for name, spec in self.states.items()}

    def free_range(self) -> tuple[np.ndarray, np.ndarray]:
        """Deflections ``(lo, hi)`` between which the coupler carries no force (the slack)."""
        z = np.zeros(self.count)
        return z, z

    def kinks(self) -> np.ndarray:
        """Deflections where the force law changes piece, shape ``(count, k)``.

        The integrator ends a step exactly where a deflection crosses one, so a
        slack closing is located in time rather than smeared over a step.
        """
        lo, hi = self.free_range()
        return np.stack([lo, hi], axis=1)


def check_coupler_type(cls: type) -> None:
    """Raise TypeError if ``cls`` is not a usable coupler model class."""
    if not (isinstance(cls, type) and issubclass(cls, CouplerModel)):
        raise TypeError(f"{cls!r} is not a subclass of rrscore.CouplerModel")
    if not cls.type_name:
        raise TypeError(f"{cls.__qualname__} has no type_name")


class Couplings(Component):
    """All couplings of a train as one component: coupler models (each serving a group of
    couplings), deflection geometry, the coupled/uncoupled mode and the models' states.

    Events: slack edges and other kinks of the force laws (located, no action),
    couplers breaking above ``break_force``, and contact of uncoupled
    couplings, which couple when the closing speed is at most ``coupling_speed``.
    """

    name = "couplings"

    def __init__(self, models: list[tuple[CouplerModel, np.ndarray]], nominal: np.ndarray,
                 break_force: np.ndarray, coupling_speed: np.ndarray,
                 coupled: np.ndarray | None = None) -> None:
        self.groups = models  # (model, coupling indices)
        self.origins: list[str] = []  # the plugin providing each group's model, for errors
        self._t: float | None = None
        self.count = len(nominal)
        self.nominal = nominal  # nominal centre distance, m
        self.break_force = np.where(break_force > 0, break_force, np.inf)
        self.coupling_speed = coupling_speed
        self.coupled = (np.ones(self.count, dtype=bool) if coupled is None
                        else np.array(coupled, dtype=bool))
        self._all_coupled = bool(self.coupled.all())
        # One model serving every coupling in order: skip the index gather.
        self._single = len(models) == 1 and np.array_equal(models[0][1], np.arange(self.count))
        kinks = [np.zeros((self.count, 0))]
        for model, idx in models:
            k = model.kinks()
            block = np.full((self.count, k.shape[1]), np.nan)
            block[idx] = k
            kinks.append(block)
        self.kink_table = np.concatenate(kinks, axis=1)
        self.lo, self.hi = self.free_range()
        self.events_out: list[Event] = []  # the dynamics hands in its event list
        self.state_slices: list[dict[str, slice]] = [{} for _ in models]
        self.sx = self.sv = slice(0, 0)  # set by the dynamics once the bodies are laid out
        self._has_states = False

    # ----------------------------------------------------------------- state
    def declare(self, layout: StateLayout) -> None:
        names = [m.type_name for m, _ in self.groups]
        for g, (model, idx) in enumerate(self.groups):
            tag = model.type_name if names.count(model.type_name) == 1 else \
                f"{model.type_name}#{g}"
            for name, spec in model.states.items():
                self.state_slices[g][name] = layout.add(f"coupler.{tag}.{name}", spec, len(idx))
        self._has_states = any(self.state_slices)

    def initial(self, y: np.ndarray) -> None:
        d = self.deflection(y[self.sx])
        for (model, idx), slices in zip(self.groups, self.state_slices, strict=True):
            if slices:
                init = model.initial_state(d[idx])
                for name, sl in slices.items():
                    y[sl] = init[name]

    def _states(self, y: np.ndarray, g: int) -> SimpleNamespace:
        return SimpleNamespace(**{k: y[sl] for k, sl in self.state_slices[g].items()})

    # ---------------------------------------------------------------- forces
    def deflection(self, x: np.ndarray) -> np.ndarray:
        """Deflection of every coupling from the body positions ``x``."""
        return x[:-1] - x[1:] - self.nominal

    def force_at(self, y: np.ndarray) -> np.ndarray:
        """Coupler forces (tension +) at state ``y``."""
        x, v = y[self.sx], y[self.sv]
        return self.force(self.deflection(x), v[:-1] - v[1:], y)

    def force(self, d: np.ndarray, d_dot: np.ndarray, y: np.ndarray | None = None) -> np.ndarray:
        """Coupler forces (tension +) for deflections, their rates and the models' states
        (taken from ``y``). An uncoupled coupling carries nothing until its faces touch,
        and then only pushes."""
        try:
            return self._force(d, d_dot, y)
        except Exception as exc:  # not plugin_call: this runs at every stage
            raise self._failure("force", exc, self._t, args=(d, d_dot, y)) from exc

    def _force(self, d: np.ndarray, d_dot: np.ndarray, y: np.ndarray | None) -> np.ndarray:
        if self._single:
            f = self.groups[0][0].force(d, d_dot, self._states(y, 0) if y is not None
                                        else SimpleNamespace())
        else:
            f = np.empty(self.count)
            for g, (model, idx) in enumerate(self.groups):
                s = self._states(y, g) if y is not None else SimpleNamespace()
                f[idx] = model.force(d[idx], d_dot[idx], s)
        if not self.all_coupled:
            f = np.where(self.coupled, f, np.where(d <= self.lo, np.minimum(f, 0.0), 0.0))
        return f

    def forces(self, t: float, y: np.ndarray, loads: Loads) -> None:
        if self.count == 0:
            return
        self._t = t  # the time a failing model is reported at
        cf = self.force_at(y)
        loads.coupler_force = cf
        loads.force[:-1] -= cf
        loads.force[1:] += cf

    def force_and_rates(self, t: float, y: np.ndarray, dy: np.ndarray) -> np.ndarray:
        """:meth:`forces` and :meth:`rates` in one pass (the deflections and the models'
        states taken once): writes the rates into ``dy`` and returns the coupler forces.
        """
        self._t = t
        x, v = y[self.sx], y[self.sv]
        d, d_dot = x[:-1] - x[1:] - self.nominal, v[:-1] - v[1:]
        if not (self._single and self.all_coupled):
            f = self.force(d, d_dot, y)
            self.rates(t, y, None, dy)
            return f
        model = self.groups[0][0]
        states = self._states(y, 0)
        try:
            f, r = model.force_and_rates(d, d_dot, states)
            for name, sl in self.state_slices[0].items():
                dy[sl] = r[name]
        except Exception as exc:  # not plugin_call: this runs at every stage
            if isinstance(exc, RrsError):
                raise
            # called again one method at a time, for the error to name the one that fails
            for method in ("force", "rates"):
                try:
                    getattr(model, method)(d, d_dot, self._states(y, 0))
                except Exception:
                    raise self._failure(method, exc, t, 0, (d, d_dot, y)) from exc
            raise self._failure("force_and_rates", exc, t, 0) from exc
        return f

    def rates(self, t: float, y: np.ndarray, loads: Loads, dy: np.ndarray) -> None:
        if not self._has_states:
            return
        x, v = y[self.sx], y[self.sv]
        d, d_dot = self.deflection(x), v[:-1] - v[1:]
        # Uncoupled couplings whose faces are apart hold their memory: a gear that is
        # not pushed on does not move (it is reset when the faces meet again).
        apart = None if self.all_coupled else ~self.coupled & (d > self.lo)
        for g, (model, idx) in enumerate(self.groups):
            if self.state_slices[g]:
                try:
                    r = model.rates(d[idx], d_dot[idx], self._states(y, g))
                    for name, sl in self.state_slices[g].items():
                        dy[sl] = r[name] if apart is None else np.where(apart[idx], 0.0,
                                                                        r[name])
                except Exception as exc:
                    raise self._failure("rates", exc, t, g, (d, d_dot, y)) from exc

    def _failure(self, method: str, exc: Exception, t: float, group: int | None = None,
                 args: tuple | None = None) -> RrsError:
        """The error for a coupler model that raised in ``method``: names the model, its
        module, the coupling and the time. One model object serves all its couplings in
        one call, so the coupling is found by calling it again for each alone (with the
        call's ``args``); if none fails alone, the error names them all."""
        if isinstance(exc, RrsError):
            return exc
        interruption = interruption_behind(exc)
        if interruption is not None:  # stopped while the model ran: not its failure
            raise interruption
        if group is None:
            group = self._raising_group(exc)
        model, idx = self.groups[group]
        alone = None if args is None else self._culprit(method, group, *args)
        where = (f"coupling {alone}" if alone is not None
                 else f"coupling {int(idx[0])}" if len(idx) == 1
                 else f"couplings {int(idx[0])}-{int(idx[-1])}")
        origin = self.origins[group] if group < len(self.origins) else ""
        who = f"coupler model {model.type_name!r} ({origin or type(model).__module__}) " \
              f"in {method}() " \
              f"for {where}"
        return plugin_failure(who, exc, t)

    def _culprit(self, method: str, group: int, d: np.ndarray, d_dot: np.ndarray,
                 y: np.ndarray | None) -> int | None:
        """The first coupling of ``group`` whose model raises in ``method`` when called for
        it alone; None if none does."""
        model, idx = self.groups[group]
        states = self._states(y, group) if y is not None else SimpleNamespace()
        for n, j in enumerate(idx):
            one = SimpleNamespace(**{k: v[n:n + 1] for k, v in vars(states).items()})
            try:
                getattr(model, method)(d[j:j + 1], d_dot[j:j + 1], one)
            except Exception:
                return int(j)
        return None

    def _raising_group(self, exc: Exception) -> int:
        """The group whose model object raised ``exc`` (found in its traceback; 0 if not)."""
        groups = {id(m): g for g, (m, _) in enumerate(self.groups)}
        tb, found = exc.__traceback__, 0
        while tb is not None:
            found = groups.get(id(tb.tb_frame.f_locals.get("self")), found)
            tb = tb.tb_next
        return found

    @property
    def all_coupled(self) -> bool:
        """True while no coupling has been uncoupled (the common, cheaper case)."""
        return self._all_coupled

    def set_coupled(self, couplings: np.ndarray | int, coupled: bool) -> None:
        """Couple or uncouple couplings (a mode: only between steps)."""
        self.coupled[couplings] = coupled
        self._all_coupled = bool(self.coupled.all())

    def free_range(self) -> tuple[np.ndarray, np.ndarray]:
        """Slack range ``(lo, hi)`` of every coupling."""
        lo = np.zeros(self.count)
        hi = np.zeros(self.count)
        for model, idx in self.groups:
            lo[idx], hi[idx] = model.free_range()
        return lo, hi

    def start_spacing(self, slack: str = "neutral",
                      gaps: np.ndarray | None = None) -> np.ndarray:
        """Centre distance of each coupled pair at the start: nominal, with the slack
        'neutral' (in its middle), 'bunched' (closed) or 'stretched', plus ``gaps``."""
        lo, hi = self.free_range()
        d = {"neutral": 0.5 * (lo + hi), "bunched": lo, "stretched": hi}[slack]
        return self.nominal + d + (0.0 if gaps is None else np.asarray(gaps))

    # ---------------------------------------------------------------- events
    def events(self) -> list[EventBlock]:
        if self.count == 0:
            return []
        blocks = []
        kinks = np.where(np.isfinite(self.kink_table), self.kink_table, np.inf)
        if kinks.shape[1]:
            self._kinks = kinks
            blocks.append(EventBlock("slack edge", self._slack_edges, 0))
        blocks.append(EventBlock("coupler break", self._break_margin, -1, self._break))
        blocks.append(EventBlock("contact", self._contact_gap, -1, self._contact))
        return blocks

    def _slack_edges(self, t: float, y: np.ndarray, f: np.ndarray) -> np.ndarray:
        return (self.deflection(y[self.sx])[:, None] - self._kinks).ravel()

    def _break_margin(self, t: float, y: np.ndarray, f: np.ndarray) -> np.ndarray | None:
        watch = np.isfinite(self.break_force) & self.coupled
        if not watch.any():
            return None
        return np.where(watch, self.break_force - self.force_at(y), 1.0)

    def _break(self, t: float, y: np.ndarray, idx: np.ndarray) -> np.ndarray:
        force = self.force_at(y)
        self.set_coupled(idx, False)
        for j in idx:
            self.events_out.append(Event(t, "coupler break", coupling=int(j),
                                         value=float(force[j]), detail=f"{force[j]:.0f} N"))
        return y.copy()  # the force law changed: a new start for the solver

    def _contact_gap(self, t: float, y: np.ndarray, f: np.ndarray) -> np.ndarray | None:
        if self.all_coupled:
            return None
        return np.where(self.coupled, 1.0, self.deflection(y[self.sx]) - self.lo)

    def _contact(self, t: float, y: np.ndarray, idx: np.ndarray) -> np.ndarray:
        v = y[self.sv]
        closing = v[idx + 1] - v[idx]
        y = y.copy()
        self._reset_states(y, idx)  # faces meet: the gears start from rest
        for j, c in zip(idx, closing, strict=True):
            joins = bool(c <= self.coupling_speed[j])
            if joins:
                self.set_coupled(j, True)
            self.events_out.append(Event(t, "coupled" if joins else "impact", coupling=int(j),
                                         value=float(c), detail=f"{c:.3f} m/s"))
        return y  # coupled or not, contact is a new start for the solver

    def _reset_states(self, y: np.ndarray, couplings: np.ndarray) -> None:
        """Put the models' states of ``couplings`` back to their initial values."""
        d = self.deflection(y[self.sx])
        for (model, idx), slices in zip(self.groups, self.state_slices, strict=True):
            rows = np.flatnonzero(np.isin(idx, couplings))
            if slices and rows.size:
                init = model.initial_state(d[idx])
                for name, sl in slices.items():
                    y[sl][rows] = init[name][rows]

    # --------------------------------------------------------------- signals
    def signals(self) -> dict[str, Signal]:
        def deflection(y, loads):
            return self.deflection(y[self.sx])

        return {
            "force_N": ("coupling", "N", lambda y, loads: loads.coupler_force),
            "deflection_m": ("coupling", "m", deflection),
            "coupled": ("coupling", "1", lambda y, loads: self.coupled.astype(float)),
        }
