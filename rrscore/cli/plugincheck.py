"""``rrs plugins --check`` and ``rrs plugins -v``: a plugin exercised as a new user's would be.

What is wrong with a plugin's declarations is found when the registry is built
(:func:`rrscore.run.plugins.class_problems`, :func:`rrscore.model.vehicle.
check_vehicle_type`); what is wrong with what it does shows only when it runs. The
checks here run it:

* a vehicle type (:func:`check_vehicle_type`): one vehicle built from default values,
  driven with each of its keys pressed in turn; reported are the exceptions its
  functions raise (named), the ``q_a``, ``q_r`` or adhesion factors it sets that are not
  finite or ``q_r`` entries that are negative (the engine refuses them at every control
  step too), and declared signals its ``step`` never writes;
* a coupler model (:func:`check_coupler_model`): built for 41 couplings from default
  values, its force law evaluated through the adapter the engine calls, across +-0.2 m
  of deflection; reported are exceptions, entries of the force or of its states' rates
  left unwritten or not finite, and results of the wrong shape.

Both say how each of the plugin's functions runs (:func:`how_it_runs`): compiled by
numba, or in Python through numba's object mode, and why (``rrs plugins -v`` prints
the same).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..engine.adapters import Adapter, coupler_adapter, vehicle_adapters
from ..jit import UNCOMPILED
from ..model.config import REQUIRED, Context, Param
from ..model.couplers import CouplerModel
from ..model.errors import RrsError
from ..model.records import Record
from ..model.vehicle import VehicleModel, record_rows, record_tables

#: The vehicle table of a vehicle exercised with default values (``rrs plugins --check``,
#: the ``rrs_train`` fixture), for keys its caller does not name.
DEFAULT_VEHICLE: dict[str, Any] = {
    "empty_mass": "80 t", "length": "20 m", "num_axis": 4, "wheel_diameter": "1.05 m",
    "wheelset_inertia": "100 kg*m^2",
}
#: Axles of the records :func:`adapters_of` builds (the adapters do not depend on it).
_AXLES = 4
#: Couplings a coupler model is checked with, and the deflections they take (m).
COUPLINGS = 41
DEFLECTION = 0.2


def vehicle_config(vehicle_type: str, params: dict[str, Any] | None = None,
                   **vehicle: Any) -> dict[str, Any]:
    """An inline vehicle config of ``vehicle_type`` with :data:`DEFAULT_VEHICLE` values,
    overridden by ``vehicle`` (``empty_mass="120 t"``, ``resistance={"formula": "none"}``),
    and the type's ``params``."""
    return {"vehicle": {"type": vehicle_type, **DEFAULT_VEHICLE, **vehicle},
            "params": dict(params or {})}


# -- how a plugin's functions run ---------------------------------------------------------------
def vehicle_record(cls: type[VehicleModel], count: int = 1, axles: int = _AXLES) -> Record:
    """An empty record of vehicle type ``cls`` for ``count`` vehicles of ``axles`` axles,
    laid out as a train lays out its records (:mod:`rrscore.model.train`)."""
    return Record(f"{cls.__name__}Record", count, record_rows(cls),
                  [("q_a", axles + 1), ("q_r", axles + 1), ("adhesion", axles),
                   ("axle_slip", axles), *((name, axles) for name in cls.axle_fields),
                   *((name, 1) for name in record_tables(cls))],
                  [("count", count), ("axles", axles)])


def coupler_record(cls: type[CouplerModel], count: int = 1) -> Record:
    """An empty record of coupler model ``cls`` for ``count`` couplings, laid out as
    :class:`~rrscore.model.couplers.CouplerModel` lays out its own (without building the
    model, whose parameters may have no defaults)."""
    scalars = [k for k, spec in cls.params.items() if spec.kind is not list]
    tables = [(k, 1) for k, spec in cls.params.items() if spec.kind is list]
    return Record(f"{cls.__name__}Params", count, [*scalars, *cls.fields], tables,
                  [("count", count)])


def adapters_of(cls: type) -> dict[str, Adapter]:
    """The adapters through which the engine calls the functions ``cls`` gives (a vehicle
    type's ``step``, ``rates``, ``on_input``; a coupler model's ``force``), built from its
    declarations for a default one-vehicle (one-coupling) record: the same adapters a
    train of the type uses (they depend on the record's names, not on its values). Empty
    for other classes."""
    if isinstance(cls, type) and issubclass(cls, VehicleModel):
        rec = vehicle_record(cls)
        ad = vehicle_adapters(cls, rec.fields, len(rec.rows), len(rec.tables), len(rec.ints),
                              (*cls.controls, *cls.keys))
        found = {"step": ad.step, "rates": ad.rates, "on_input": ad.input}
        return {name: adapter for name, adapter in found.items()
                if getattr(cls, name) is not None}
    if isinstance(cls, type) and issubclass(cls, CouplerModel):
        rec = coupler_record(cls)
        ad = coupler_adapter(cls, rec.fields, len(rec.rows), len(rec.tables), len(rec.ints))
        return {"force": ad.force}
    return {}


def describe_adapter(name: str, adapter: Adapter) -> str:
    """One line: how the plugin's function ``name`` runs, and why where not compiled."""
    if UNCOMPILED:
        return f"{name}: runs in Python (NUMBA_DISABLE_JIT is set: nothing is compiled)"
    if adapter.compiled:
        return f"{name}: compiled by numba"
    line = (f"{name}: runs in Python (numba's object mode), as numba cannot compile the "
            f"plugin's functions: {adapter.reason}")
    if (adapter.reason or "").startswith("ModuleNotFoundError: No module named 'rrscore_"):
        line += (" (numba's cache of the plugin's functions names an adapter generated "
                 "before, for another version of the plugin or module name: delete the "
                 "__pycache__ directory beside the plugin's file)")
    return line


def how_it_runs(cls: type) -> list[str]:
    """How each function of vehicle type or coupler model ``cls`` runs, a line each
    (:func:`describe_adapter`); none for other classes."""
    return [describe_adapter(name, adapter) for name, adapter in adapters_of(cls).items()]


# -- checks -------------------------------------------------------------------------------------
@dataclass
class Check:
    """What checking one plugin class found: ``problems`` (each a failure), ``skipped``
    (why it was not exercised, if it was not) and ``runs`` (how its functions run, a line
    each: information, not failures)."""

    kind: str
    name: str
    problems: list[str] = field(default_factory=list)
    skipped: str | None = None
    runs: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Exercised, and nothing found."""
        return self.skipped is None and not self.problems


def _missing(cls: type) -> list[str]:
    return [k for k, p in cls.params.items() if isinstance(p, Param) and p.default is REQUIRED]


def _described(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def output_problems(veh: Any) -> list[str]:
    """The entries of a vehicle record ``veh`` that the engine refuses after a control
    step: ``q_a``, ``q_r`` or adhesion factors not finite, ``q_r`` negative (the first of
    each kind, named)."""
    problems = []
    for name, table in (("q_a", veh.q_a), ("q_r", veh.q_r), ("adhesion", veh.adhesion)):
        bad = np.argwhere(~np.isfinite(table))
        if bad.size:
            row, col = (int(i) for i in bad[0])
            problems.append(f"{name}[{row}, {col}] = {table[row, col]:g} is not finite")
    negative = np.argwhere(veh.q_r < 0.0)
    if negative.size:
        row, col = (int(i) for i in negative[0])
        what = "body resistance" if col == 0 else f"brake torque on axle {col}"
        problems.append(f"q_r[{row}, {col}] ({what}) = {veh.q_r[row, col]:g} is negative: "
                        "q_r holds magnitudes (>= 0) that oppose motion; put driving forces "
                        "in q_a")
    return problems


def own_signals(cls: type[VehicleModel]) -> list[str]:
    """The signals of ``cls`` that are rows of their own (not a control, key, field or
    state of the same name): those only its ``step`` writes."""
    taken = {*cls.controls, *cls.keys, *cls.fields, *cls.states}
    return [name for name in cls.signals if name not in taken]


def check_vehicle_type(registry: Any, type_name: str) -> Check:
    """Build one vehicle of ``type_name`` from default values and drive it for a second
    (longer with many keys) with each of its keys pressed in turn, a quarter of a second
    apart; report what went wrong (see the module) and how its functions run."""
    from ..run.drive import Drive
    from ..run.scenario import scenario_from_table

    cls = registry.vehicle_types[type_name]
    check = Check("vehicle type", type_name)
    try:
        check.runs = how_it_runs(cls)
    except Exception as exc:  # the adapters' own failure: not the plugin's
        check.problems.append(f"its adapters could not be built: {_described(exc)}")
        return check
    missing = _missing(cls)
    if missing:
        check.skipped = f"not exercised: parameters without a default: {', '.join(missing)}"
        return check
    keys = list(cls.keys)
    table = {"train": {"vehicles": [{"config": vehicle_config(type_name)}]},
             "route": {"elements": [{"length": "10 km"}]},
             "stop": {"max_time": max(1.0, 0.25 * (len(keys) + 1))},
             "driver": [{"at_time": 0.25 * (i + 1), "press": k} for i, k in enumerate(keys)]}
    try:
        scenario = scenario_from_table(table, Context("<rrs plugins --check>", "scenario"),
                                       registry)
        drive = Drive(scenario)
    except RrsError as exc:
        check.problems.append(str(exc))
        return check
    record = drive.run_.train.batches[0].record
    signals = own_signals(cls)
    for name in signals:  # unset: a signal step never writes stays NaN
        record.row(name)[:] = np.nan
    try:
        drive.run()
    except RrsError as exc:
        check.problems.append(str(exc))
    except Exception as exc:  # not the plugin's own call: the drive itself failed
        check.problems.append(f"the drive raised {_described(exc)}")
    check.problems += output_problems(record.view)
    t = drive.run_.t
    for name in signals:
        if np.isnan(record.row(name)).all():
            check.problems.append(f"signal {name!r} is declared but step() never wrote "
                                  f"veh.{name} in {t:g} s of driving")
    return check


def check_coupler_model(cls: type[CouplerModel]) -> Check:
    """Build ``cls`` for :data:`COUPLINGS` couplings from default values and evaluate its
    force law through its adapter at deflections across +-:data:`DEFLECTION` m, still
    and moving; report what went wrong (see the module) and how ``force`` runs."""
    check = Check("coupler model", cls.type_name)
    try:
        check.runs = how_it_runs(cls)
    except Exception as exc:
        check.problems.append(f"its adapter could not be built: {_described(exc)}")
        return check
    missing = _missing(cls)
    if missing:
        check.skipped = f"not exercised: parameters without a default: {', '.join(missing)}"
        return check
    n = COUPLINGS
    d = np.linspace(-DEFLECTION, DEFLECTION, n)
    try:
        model = cls([{k: p.default for k, p in cls.params.items()}] * n)
    except Exception as exc:
        check.problems.append(f"setup() raised {_described(exc)}")
        return check
    problems = check.problems
    try:
        lo, hi = (np.asarray(a, dtype=float) for a in model.free_range())
        kinks = np.asarray(model.kinks(), dtype=float)
        initial = model.initial_state(d)
    except Exception as exc:
        problems.append(f"free_range(), kinks() or initial_state() raised {_described(exc)}")
        return check
    if lo.shape != (n,) or hi.shape != (n,):
        problems.append(f"free_range() returned shapes {lo.shape} and {hi.shape} for {n} "
                        f"couplings, expected ({n},) each")
    if kinks.ndim != 2 or kinks.shape[0] != n:
        problems.append(f"kinks() returned shape {kinks.shape} for {n} couplings, expected "
                        f"({n}, k)")
    states = list(cls.states)
    z = np.zeros((len(states), n))
    for r, name in enumerate(states):
        value = np.asarray(initial.get(name, np.nan), dtype=float)
        if value.shape != (n,):
            problems.append(f"initial_state() gives {name!r} shape {value.shape}, expected "
                            f"({n},)")
        else:
            z[r] = value
    rec = model.record
    adapter = coupler_adapter(cls, rec.fields, len(rec.rows), len(rec.tables),
                              len(rec.ints)).force
    for speed in (0.0, 0.05, -0.05):
        d_dot = np.full(n, speed)
        out = np.full(n, np.nan)  # unwritten entries stay NaN
        dz = np.full_like(z, np.nan)
        try:
            adapter.call(d, d_dot, rec.buffer, rec.layout, z, dz, out)
        except Exception as exc:
            problems.append(f"force() raised {_described(exc)}")
            break
        bad = np.flatnonzero(~np.isfinite(out))
        if bad.size:
            problems.append(f"force() left out[{bad[0]}] unwritten or not finite "
                            f"({out[bad[0]]:g}) at d = {d[bad[0]]:g} m, d_dot = {speed:g} m/s "
                            f"({bad.size} of {n} entries)")
            break
        for r, name in enumerate(states):
            bad = np.flatnonzero(~np.isfinite(dz[r]))
            if bad.size:
                problems.append(f"force() left ds.{name}[{bad[0]}] unwritten or not finite "
                                f"at d = {d[bad[0]]:g} m, d_dot = {speed:g} m/s")
        if problems:
            break
    return check


def check_registry(registry: Any) -> list[Check]:
    """Every vehicle type and coupler model of ``registry`` checked, in name order."""
    out = [check_vehicle_type(registry, name) for name in sorted(registry.vehicle_types)]
    out += [check_coupler_model(cls) for _, cls in sorted(registry.coupler_models.items())]
    return out
