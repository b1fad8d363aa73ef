"""Plugins' functions as the compiled loop calls them: generated adapters.

A plugin writes each function once, on a named tuple of arrays (its record, see
:mod:`rrscore.model.records`). The loop is compiled once for every plugin, so it calls
plugins through functions of fixed signatures (first-class function values): an
*adapter*, generated for each plugin class, takes the record's buffer and layout,
unpacks the named tuple (views, no copies) and calls the plugin's function. The
adapter's source is written to rrscore's cache directory and imported from there, so
numba caches it on disk like any module; its name carries a hash of the plugin's source,
so an edited plugin gets a new one.

Where numba cannot compile the plugin's function (it uses a Python object, say), the
adapter calls it in Python instead (numba's object mode), with the same named tuple of
numpy views: slower, and just as correct. :class:`Adapter` says which, and why.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import os
import sys
import tempfile
import textwrap
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from numba import njit, types

from ..jit import UNCOMPILED

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
TEMPLATE_VERSION = 1


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


def cache_dir() -> Path:
    """Where generated adapters are written (``RRS_CACHE_DIR``, else the user's cache)."""
    base = os.environ.get("RRS_CACHE_DIR")
    candidates = [Path(base)] if base else []
    candidates.append(Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
                      / "rrscore" / "adapters")
    candidates.append(Path(tempfile.gettempdir()) / f"rrscore-{os.getuid()}" / "adapters")
    for path in candidates:
        try:
            path.mkdir(parents=True, exist_ok=True)
            probe = path / ".write-test"
            probe.write_text("")
            probe.unlink()
            return path
        except OSError:
            continue
    raise OSError("no writable directory for rrscore's generated adapters "
                  "(set RRS_CACHE_DIR)")


def _source_of(fn: Any) -> str:
    try:
        return inspect.getsource(fn)
    except (OSError, TypeError):
        return repr(fn)


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
        values.append(f"buf[lay[{at}]:lay[{at}] + n * lay[{at + 1}]]"
                      f".reshape((n, lay[{at + 1}]))")
    body = ",\n        ".join(values)
    return f"def unpack(buf, lay):\n    n = lay[0]\n    return Record(\n        {body})\n"


def states_source(count: int) -> str:
    """A function ``states(z)`` returning the named tuple ``States`` of the rows of ``z``."""
    rows = ", ".join(f"z[{k}]" for k in range(count)) + ("," if count == 1 else "")
    return f"def states(z):\n    return States({rows})\n\n\n"


def _load(name: str, source: str, functions: dict[str, Any]) -> Any:
    """``source`` written to the cache directory as module ``name`` and imported, with
    ``functions`` (the plugin's) in its namespace before it runs."""
    if name in sys.modules:
        return sys.modules[name]
    path = cache_dir() / f"{name}.py"
    if not path.exists() or path.read_text() != source:
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(source)
        os.replace(tmp, path)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update(functions)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


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
            return _load(name, header + compiled, functions), None
    except Exception as exc:  # numba's typing errors, and whatever else it raises
        lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
        reason = f"{type(exc).__name__}: {lines[0] if lines else ''}"
        for line in lines:
            if line.startswith(("Unknown attribute", "Untyped global", "Use of unsupported",
                                "No implementation", "Cannot determine", "Invalid use")):
                reason = f"{type(exc).__name__}: {line}"
                break
    return _load(name + "_py", header + fallback, functions), reason


HEADER = """\
# rrscore's adapter for {what}; generated, do not edit.
# (plugin source hash {digest})
from collections import namedtuple

from numba import njit, objmode

from rrscore.engine.adapters import FORCE, INPUT, RATES, STEP

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
    digest = hashlib.sha256("\0".join(_source_of(f) for f in plugin.values()).encode())
    header = HEADER.format(what=f"{cls.__module__}.{cls.__qualname__}", fields=fields,
                           digest=digest.hexdigest()[:16], states=tuple(cls.states))
    header += unpack_source(fields, ints, rows, tables) + "\n\n"
    header += states_source(len(cls.states))
    assign = ["    veh = unpack(buf, lay)"]
    for k, name in enumerate(inputs):
        test = "if" if k == 0 else "elif"
        assign.append(f"    {test} which == {k}:\n        veh.{name}[i] = value")
        if cls.on_input is not None:
            assign.append(f"        _on_input(veh, i, {name!r}, value)")
    input_body = "\n".join(assign) + "\n    return 0\n"
    step_line = "    _step(t, dt, unpack(buf, lay))\n    return 0\n"
    rates_line = ("    _rates(t, unpack(buf, lay), states(s), states(ds))\n    return 0\n"
                  if cls.rates is not None else "    return 0\n")
    compiled = textwrap.dedent("""\
        unpack = njit(inline="always")(unpack)
        states = njit(inline="always")(states)
        _step = njit(cache=True, error_model="numpy")(_step)
        """)
    if cls.rates is not None:
        compiled += '_rates = njit(cache=True, error_model="numpy")(_rates)\n'
    if cls.on_input is not None:
        compiled += '_on_input = njit(cache=True, error_model="numpy")(_on_input)\n'
    compiled += ("\n\n@njit(STEP, cache=True)\ndef step(t, dt, buf, lay):\n" + step_line
                 + "\n\n@njit(RATES, cache=True)\ndef rates(t, buf, lay, s, ds):\n" + rates_line
                 + "\n\n@njit(INPUT, cache=True)\ndef on_input(buf, lay, i, which, value):\n"
                 + input_body)
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
    digest = hashlib.sha256(_source_of(cls.force).encode())
    header = HEADER.format(what=f"{cls.__module__}.{cls.__qualname__}", fields=fields,
                           digest=digest.hexdigest()[:16], states=tuple(cls.states))
    header += unpack_source(fields, ints, rows, tables) + "\n\n"
    header += states_source(len(cls.states))
    body = "    _force(d, d_dot, unpack(buf, lay), states(z), states(dz), out)\n    return 0\n"
    compiled = textwrap.dedent("""\
        unpack = njit(inline="always")(unpack)
        states = njit(inline="always")(states)
        _force = njit(cache=True, error_model="numpy")(_force)


        @njit(FORCE, cache=True)
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
