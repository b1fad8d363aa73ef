"""Plugins' functions as the compiled loop calls them: generated adapters.

A plugin writes each function once, on a named tuple of arrays (its record, see
:mod:`rrscore.model.records`). The loop is compiled once for every plugin, so it calls
plugins through functions of fixed signatures (first-class function values): an
*adapter*, generated for each plugin class, takes the record's buffer and layout,
unpacks the named tuple (views, no copies) and calls the plugin's function. The
adapter's source is written to rrscore's cache directory (:func:`rrscore.jit.cache_dir`)
and imported from there, so
numba caches it on disk like any module; its name carries a hash of the plugin's source,
so an edited plugin gets a new one.

Where numba cannot compile the plugin's function (it uses a Python object, say), the
adapter calls it in Python instead (numba's object mode), with the same named tuple of
numpy views: slower, and just as correct. :class:`Adapter` says which, and why.
"""

from __future__ import annotations

import hashlib
import inspect
import sys
import textwrap
import warnings
from collections import namedtuple
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numba
import numpy as np
from numba import njit, types
from numba.experimental import structref

from ..jit import UNCOMPILED, load_generated, register_struct_type

#: The adapters' signatures: a vehicle type's control step ``(t, dt, buf, lay)``, its
#: states' rates ``(t, buf, lay, s, ds)``, an input ``(buf, lay, vehicle, which, value)``
#: (``which`` indexes its controls, then its keys), a coupler model's force law
#: ``(d, d_dot, buf, lay, z, dz, out)``; each returns 0.
_F, _ROW, _LAY = types.float64, types.float64[::1], types.int64[::1]
_BLOCK = types.float64[:, ::1]
STEP = types.int64(_F, _F, _ROW, _LAY)
RATES = types.int64(_F, _ROW, _LAY, _BLOCK, _BLOCK)
INPUT = types.int64(_ROW, _LAY, types.int64, types.int64, _F)
FORCE = types.int64(_ROW, _ROW, _ROW, _LAY, _BLOCK, _BLOCK, _ROW)
#: Bump when the generated source changes shape (old cached adapters are then not used).
TEMPLATE_VERSION = 4


@dataclass(frozen=True)
class Adapter:
    """One plugin function as the loop calls it: :attr:`call` (compiled, or calling the
    plugin in Python where :attr:`reason` says why it is not compiled)."""

    call: Any
    reason: str | None = None

    @property
    def compiled(self) -> bool:
        """Whether the plugin's function itself runs compiled."""
        return self.reason is None

    def __deepcopy__(self, memo: dict) -> Adapter:
        return self


#: Packages whose functions a plugin calls but whose changes come with a new release of
#: theirs, not an edit of the plugin's (the standard library's too): not followed.
NOT_FOLLOWED = frozenset({"numpy", "numba", "scipy", "llvmlite"}) | sys.stdlib_module_names


def _followed(obj: Any) -> Any:
    """The Python function behind ``obj`` (a function, or a numba dispatcher's) if it is
    one a plugin's change may be in; else None."""
    fn = getattr(obj, "py_func", obj)
    if not inspect.isfunction(fn):
        return None
    return None if (fn.__module__ or "").split(".")[0] in NOT_FOLLOWED else fn


def _module_source(name: str) -> str:
    """The module's source file as it is now (not as ``linecache`` last read it)."""
    try:
        return Path(inspect.getfile(sys.modules[name])).read_text(encoding="utf-8")
    except (KeyError, OSError, TypeError, UnicodeDecodeError):
        return name


def source_behind(functions: Any) -> str:
    """The source of every module the plugin's ``functions`` can reach: their own modules,
    those of the functions they name (by module global or through a module) and so on.
    An adapter's name carries its hash: numba caches a compiled function by its own
    file, and would not see an edit of a helper kernel the plugin's step calls."""
    sources: dict[str, str] = {}
    todo = [fn for fn in map(_followed, functions) if fn is not None]
    seen: set[Any] = set()
    while todo:
        fn = todo.pop()
        if fn in seen:
            continue
        seen.add(fn)
        if fn.__module__ not in sources:
            sources[fn.__module__] = _module_source(fn.__module__)
        for name in fn.__code__.co_names:
            value = fn.__globals__.get(name)
            if inspect.ismodule(value):
                top = value.__name__.split(".")[0]
                if top not in NOT_FOLLOWED and value.__name__ not in sources:
                    sources[value.__name__] = _module_source(value.__name__)
                continue
            called = _followed(value)
            if called is not None:
                todo.append(called)
    return "\0".join(f"{name}\0{text}" for name, text in sorted(sources.items()))


def unpack_source(fields: tuple[str, ...], ints: int, rows: int, tables: int) -> str:
    """The body of a function ``unpack(buf, lay)`` returning the named tuple ``Record``
    of a record laid out as :class:`~rrscore.model.records.Record` lays it out."""
    values = []
    base = 1 + 2 * (rows + tables)
    values += [f"lay[{base + j}]" for j in range(ints)]
    for k in range(rows):
        at = 1 + 2 * k
        values.append(f"buf[lay[{at}]:lay[{at}] + n]")
    for k in range(tables):
        at = 1 + 2 * (rows + k)
        values.append(f"table(buf, lay[{at}], n, lay[{at + 1}])")
    body = ",\n        ".join(values)
    return f"def unpack(buf, lay):\n    n = lay[0]\n    return Record(\n        {body})\n"


def states_source(count: int) -> str:
    """A function ``states(z)`` returning the named tuple ``States`` of the rows of ``z``."""
    rows = ", ".join(f"z[{k}]" for k in range(count)) + ("," if count == 1 else "")
    return f"def states(z):\n    return States({rows})\n\n\n"


def _module_name(kind: str, cls: type, parts: list[str]) -> str:
    digest = hashlib.sha256("\0".join([str(TEMPLATE_VERSION), cls.__module__,
                                       cls.__qualname__, *parts]).encode()).hexdigest()
    return f"rrscore_{kind}_{cls.__name__.lower()}_{digest[:16]}"


def _compile(name: str, header: str, compiled: str, fallback: str,
             functions: dict[str, Any]) -> tuple[Any, str | None]:
    """Load the adapter module: the compiled form, or where numba refuses the plugin's
    function, the one that calls it in Python (and why)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return load_generated(name, header + compiled, functions), None
    except Exception as exc:  # numba's typing errors, and whatever else it raises
        lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
        reason = f"{type(exc).__name__}: {lines[0] if lines else ''}"
        for line in lines:
            if line.startswith(("Unknown attribute", "Untyped global", "Use of unsupported",
                                "No implementation", "Cannot determine", "Invalid use")):
                reason = f"{type(exc).__name__}: {line}"
                break
    return load_generated(name + "_py", header + fallback, functions), reason


HEADER = """\
# rrscore's adapter for {what}; generated, do not edit.
# (plugin source hash {digest})
from collections import namedtuple

from numba import njit, objmode

from rrscore.engine.adapters import FORCE, INPUT, RATES, STEP
from rrscore.jit import table

Record = namedtuple("Record", {fields!r})
States = namedtuple("States", {states!r})

"""


@dataclass(frozen=True)
class VehicleAdapters:
    """A vehicle type's adapters: its control step, its states' rates (a no-op without
    states) and its inputs, and the record's unpacking for calls from Python."""

    step: Adapter
    rates: Adapter
    input: Adapter
    unpack: Any
    states: Any

    def __deepcopy__(self, memo: dict) -> VehicleAdapters:
        return self


_VEHICLES: dict[tuple, VehicleAdapters] = {}


def vehicle_adapters(cls: Any, fields: tuple[str, ...], rows: int, tables: int,
                     ints: int, inputs: tuple[str, ...]) -> VehicleAdapters:
    """The adapters of vehicle type ``cls`` for records of these ``fields`` (``ints``
    integers, ``rows`` rows, ``tables`` tables, in that order) and these ``inputs``
    (controls, then keys)."""
    key = (cls, fields, inputs)
    if key in _VEHICLES:
        return _VEHICLES[key]
    plugin = {"_step": cls.step, "_rates": cls.rates, "_on_input": cls.on_input}
    digest = hashlib.sha256(source_behind(plugin.values()).encode())
    header = HEADER.format(what=f"{cls.__module__}.{cls.__qualname__}", fields=fields,
                           digest=digest.hexdigest()[:16], states=tuple(cls.states))
    header += unpack_source(fields, ints, rows, tables) + "\n\n"
    header += states_source(len(cls.states))
    header += f"INPUTS = {tuple(inputs)!r}\n\n\n"
    assign = ["    veh = unpack(buf, lay)"]
    for k, name in enumerate(inputs):
        test = "if" if k == 0 else "elif"
        assign.append(f"    {test} which == {k}:\n        veh.{name}[i] = value")
    if cls.on_input is not None and inputs:
        # the name by a runtime index: one compiled on_input, not one per name
        assign.append("    _on_input(veh, i, INPUTS[which], value)")
    input_body = "\n".join(assign) + "\n    return 0\n"
    step_line = "    _step(t, dt, unpack(buf, lay))\n    return 0\n"
    rates_line = ("    _rates(t, unpack(buf, lay), states(s), states(ds))\n    return 0\n"
                  if cls.rates is not None else "    return 0\n")
    compiled = textwrap.dedent("""\
        unpack = njit(inline="always")(unpack)
        states = njit(inline="always")(states)
        _step = njit(error_model="numpy")(_step)
        """)
    if cls.rates is not None:
        compiled += '_rates = njit(error_model="numpy")(_rates)\n'
    if cls.on_input is not None:
        compiled += '_on_input = njit(error_model="numpy")(_on_input)\n'
    # (the wrappers count no references: the record's views of ``buf`` live only during
    # the call, and counting them cost more than a small plugin's own work)
    compiled += ("\n\n@njit(STEP, cache=True, _nrt=False)\ndef step(t, dt, buf, lay):\n"
                 + step_line
                 + "\n\n@njit(RATES, cache=True, _nrt=False)\n"
                 + "def rates(t, buf, lay, s, ds):\n" + rates_line
                 + "\n\n@njit(INPUT, cache=True, _nrt=False)\n"
                 + "def on_input(buf, lay, i, which, value):\n" + input_body)
    fallback = ("\n\ndef _py_step(t, dt, buf, lay):\n" + step_line
                + "\n\ndef _py_rates(t, buf, lay, s, ds):\n" + rates_line
                + "\n\ndef _py_input(buf, lay, i, which, value):\n" + input_body
                + textwrap.dedent("""\


                @njit(STEP, cache=True)
                def step(t, dt, buf, lay):
                    with objmode():
                        _py_step(t, dt, buf, lay)
                    return 0


                @njit(RATES, cache=True)
                def rates(t, buf, lay, s, ds):
                    with objmode():
                        _py_rates(t, buf, lay, s, ds)
                    return 0


                @njit(INPUT, cache=True)
                def on_input(buf, lay, i, which, value):
                    with objmode():
                        _py_input(buf, lay, i, which, value)
                    return 0
                """))
    name = _module_name("vehicle", cls, [digest.hexdigest(), repr(fields), repr(inputs)])
    module, reason = _compile(name, header, compiled, fallback, plugin)
    if UNCOMPILED:
        reason = None
    made = VehicleAdapters(Adapter(module.step, reason), Adapter(module.rates, reason),
                           Adapter(module.on_input, reason), module.unpack, module.states)
    _VEHICLES[key] = made
    return made


@dataclass(frozen=True)
class CouplerAdapter:
    """A coupler model's force law as the loop calls it, and the record's unpacking."""

    force: Adapter
    unpack: Any
    states: Any

    def __deepcopy__(self, memo: dict) -> CouplerAdapter:
        return self


_COUPLERS: dict[tuple, CouplerAdapter] = {}


def coupler_adapter(cls: Any, fields: tuple[str, ...], rows: int, tables: int,
                    ints: int) -> CouplerAdapter:
    """The adapter of coupler model ``cls`` for records of these ``fields``."""
    key = (cls, fields)
    if key in _COUPLERS:
        return _COUPLERS[key]
    plugin = {"_force": cls.force}
    digest = hashlib.sha256(source_behind([cls.force]).encode())
    header = HEADER.format(what=f"{cls.__module__}.{cls.__qualname__}", fields=fields,
                           digest=digest.hexdigest()[:16], states=tuple(cls.states))
    header += unpack_source(fields, ints, rows, tables) + "\n\n"
    header += states_source(len(cls.states))
    body = "    _force(d, d_dot, unpack(buf, lay), states(z), states(dz), out)\n    return 0\n"
    compiled = textwrap.dedent("""\
        unpack = njit(inline="always")(unpack)
        states = njit(inline="always")(states)
        _force = njit(error_model="numpy")(_force)


        @njit(FORCE, cache=True, _nrt=False)
        def force(d, d_dot, buf, lay, z, dz, out):
        """) + body
    fallback = ("\n\ndef _py_force(d, d_dot, buf, lay, z, dz, out):\n" + body
                + textwrap.dedent("""\


                @njit(FORCE, cache=True)
                def force(d, d_dot, buf, lay, z, dz, out):
                    with objmode():
                        _py_force(d, d_dot, buf, lay, z, dz, out)
                    return 0
                """))
    name = _module_name("coupler", cls, [digest.hexdigest(), repr(fields)])
    module, reason = _compile(name, header, compiled, fallback, plugin)
    if UNCOMPILED:
        reason = None
    made = CouplerAdapter(Adapter(module.force, reason), module.unpack, module.states)
    _COUPLERS[key] = made
    return made


# No-op functions of each signature: the loop's tables of plugin functions have a fixed
# length, and the slots a train does not use hold these.
@njit(STEP, cache=True)
def no_step(t, dt, buf, lay):  # pragma: no cover (compiled)
    """A control step that does nothing."""
    return 0


@njit(RATES, cache=True)
def no_rates(t, buf, lay, s, ds):  # pragma: no cover (compiled)
    """States' rates of a type without states."""
    return 0


@njit(INPUT, cache=True)
def no_input(buf, lay, i, which, value):  # pragma: no cover (compiled)
    """An input of a slot without a type."""
    return 0


@njit(FORCE, cache=True)
def no_force(d, d_dot, buf, lay, z, dz, out):  # pragma: no cover (compiled)
    """A coupler law that carries nothing."""
    for i in range(out.size):
        out[i] = 0.0
    return 0


#: The built-in driver's run state, one record: the integral term, the last command
#: (traction above zero, brake below), stopped at the stop point (1/0), the next decision's
#: time, the target speed, coasting (1/0), whether it drives (1/0: switched on) and the
#: time of its next decision on the speed (``next`` may come sooner, for a look at the
#: brake valve). With the train's brakes (:mod:`rrscore.driving.trainhandling`) also the
#: levels it sets (the dynamic brake, the driver's brake valve handle, the independent
#: brake, bail-off), the brake pipe reduction it holds (Pa, 0: released), when it last changed it,
#: how far the lead's speed was above the target then (m/s, at least 0) and that target,
#: what it reads at each decision: the equalizing reservoir's pressure and the lowest
#: auxiliary reservoir's (Pa, NaN: no air brake); and how far below its target it releases
#: direct-release distributors (m/s; it learns to release lower on a long descent).
DRIVER_STATE = np.dtype([("integral", "f8"), ("command", "f8"), ("stopped", "f8"),
                         ("next", "f8"), ("target", "f8"), ("coasting", "f8"), ("on", "f8"),
                         ("speed_next", "f8"), ("dynamic", "f8"), ("valve", "f8"),
                         ("independent", "f8"), ("bail", "f8"), ("reduction", "f8"),
                         ("air_changed", "f8"),
                         ("air_gap", "f8"), ("air_target", "f8"), ("equalizing", "f8"),
                         ("aux_low", "f8"), ("release_band", "f8")])
#: Its settings, one record: the decision interval, the margin below the limits, the
#: planned deceleration, the cruising speed, the stop position (NaN: none), the stop
#: tolerance; whether it works the train's brakes (1/0) and what it knows of them: whether
#: a dynamic brake, the running pressure, the smallest and the full service reduction,
#: the auxiliary reservoir pressure a full service needs, whether the distributors
#: release step by step (1/0), the time it gives the brakes between changes, the
#: equalizing reservoir's rates of fall (service) and rise (running), Pa/s, the
#: preparation time of its stops, whether it bails off the locomotives' brakes (1/0); and
#: how many of its table's columns hold route sections
#: and how many the stopping curve.
DRIVER_PARAMS = np.dtype([("interval", "f8"), ("margin", "f8"), ("decel", "f8"),
                          ("cruise", "f8"), ("stop_at", "f8"), ("tolerance", "f8"),
                          ("train_brakes", "f8"), ("has_dynamic", "f8"), ("running", "f8"),
                          ("min_reduction", "f8"), ("full_reduction", "f8"),
                          ("full_service_aux", "f8"), ("graduated", "f8"), ("settle", "f8"),
                          ("service_rate", "f8"), ("charging_rate", "f8"),
                          ("preparation", "f8"), ("bail_off", "f8"), ("n_sections", "i8"),
                          ("n_curve", "i8")])
_STATE = numba.from_dtype(DRIVER_STATE)
_PARAMS = numba.from_dtype(DRIVER_PARAMS)
#: The signature of a built-in driver's decision, as the event loop calls it
#: (:func:`rrscore.driving.autodriver.decide`): ``(t, front, rear, speed, on_time, state,
#: params, sections) -> changed``.
DECIDE = numba.types.int64(*(numba.types.float64,) * 5, numba.types.Array(_STATE, 1, "C"),
                           numba.types.Array(_PARAMS, 1, "C"), numba.types.float64[:, ::1])


#: A decision due within this of the clock is due now (the loop's time and the one the
#: driver set meet only to rounding), s.
DECISION_SLACK = 1e-9


@njit(cache=True)
def decision_due(state, t):  # pragma: no cover (compiled)
    """Whether the built-in driver (its run state, :data:`DRIVER_STATE`) decides at ``t``:
    it is switched on and the time it set for its next decision has come."""
    s = state[0]
    return s.on != 0.0 and t >= s.next - DECISION_SLACK


@njit(DECIDE, cache=True)
def no_driver(t, front, rear, speed, on_time, state, params,
              sections):  # pragma: no cover (compiled)
    """No built-in driver: nothing decided."""
    return 0


#: How many vehicle types and coupler models a train may have: the loop's tables of
#: plugin functions have these fixed lengths.
MAX_TYPES = 8
MAX_GROUPS = 4

if UNCOMPILED:
    #: The plugin functions of a train: its vehicle types' control steps, states' rates and
    #: inputs, its coupler groups' force laws (tuples, padded with the no-op functions).
    Functions = namedtuple("Functions", ["steps", "rates", "inputs", "forces", "driver"])

    def function_table(steps: tuple, rates: tuple, inputs: tuple, forces: tuple,
                       driver: Any = no_driver) -> Any:
        """The plugin functions of a train and its built-in driver (:data:`Functions`)."""
        return Functions(steps, rates, inputs, forces, driver)
else:
    class _FunctionsType(types.StructRef):
        def preprocess_fields(self, fields):
            return tuple((name, types.unliteral(typ)) for name, typ in fields)

    register_struct_type(_FunctionsType)

    class Functions(structref.StructRefProxy):
        """The plugin functions of a train: its vehicle types' control steps, states' rates
        and inputs, its coupler groups' force laws. A struct, not a tuple: numba types an
        argument holding function values slowly (milliseconds, at every call from Python),
        a struct at once. Shared, never copied: a run's snapshot keeps it as is."""

        def __deepcopy__(self, memo: dict) -> Functions:
            return self

    structref.define_proxy(Functions, _FunctionsType,
                           ["steps", "rates", "inputs", "forces", "driver"])
    _TABLE = _FunctionsType([
        ("steps", types.UniTuple(types.FunctionType(STEP), MAX_TYPES)),
        ("rates", types.UniTuple(types.FunctionType(RATES), MAX_TYPES)),
        ("inputs", types.UniTuple(types.FunctionType(INPUT), MAX_TYPES)),
        ("forces", types.UniTuple(types.FunctionType(FORCE), MAX_GROUPS)),
        ("driver", types.FunctionType(DECIDE))])

    @njit(_TABLE(*(_TABLE.field_dict[f] for f in ("steps", "rates", "inputs", "forces",
                                                    "driver"))), cache=True)
    def _make_table(steps, rates, inputs, forces, driver):  # pragma: no cover (compiled)
        table = structref.new(_TABLE)
        table.steps = steps
        table.rates = rates
        table.inputs = inputs
        table.forces = forces
        table.driver = driver
        return table

    def function_table(steps: tuple, rates: tuple, inputs: tuple, forces: tuple,
                       driver: Any = no_driver) -> Any:
        """The plugin functions of a train and its built-in driver (:class:`Functions`)."""
        return _make_table(steps, rates, inputs, forces, driver)
