"""How rrscore compiles its laws: one decorator, one dispatcher, one compile clock.

Every law, solver step and controller is a plain function over arrays and named
tuples of arrays (:func:`kernel`), or of numbers (:func:`law`). Each is compiled with
numba (cached on disk); with
``NUMBA_DISABLE_JIT=1`` in the environment the very same functions run as Python,
which is the reference the compiled run is tested against. There is no second coding.

:func:`generic` makes one name serve several *systems* (the multi-body train, the
rigid train as one body, the air brake): each system is a named tuple type, and the
generic function picks the implementation by that type, at compile time in compiled
code (numba then compiles the event loop once per system type and inlines the right
one) and by ``isinstance`` in Python.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
import importlib.util
import os
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from llvmlite import ir
from numba import njit, types, vectorize
from numba.core import cgutils
from numba.core import event as numba_event
from numba.core.datamodel import default_manager, models
from numba.core.errors import NumbaExperimentalFeatureWarning
from numba.core.imputils import impl_ret_borrowed
from numba.core.typing.templates import AttributeTemplate
from numba.experimental import structref
from numba.extending import (
    infer_getattr,
    lower_builtin,
    lower_getattr_generic,
    lower_setattr_generic,
    overload,
    type_callable,
)
from numba.np.arrayobj import make_array, populate_array

#: True when numba compiles nothing (``NUMBA_DISABLE_JIT=1``): every kernel runs as
#: written, in Python.
UNCOMPILED = os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0")

# Plugins' functions reach the loop as first-class function values (numba calls the
# feature experimental); compiled and uncompiled runs are held to each other by tests.
warnings.filterwarnings("ignore", "First-class function type", NumbaExperimentalFeatureWarning)


def kernel(fn: Callable | None = None, *, inline: bool = False, counted: bool = False) -> Any:
    """Compile ``fn`` with numba: cached on disk, numpy's error model (a division by zero
    gives inf or NaN, as it does in Python with numpy floats, so compiled and uncompiled
    runs agree), and without numba's reference counting: counted, every array a function
    reads out of a tuple or struct (and every view it makes) costs an atomic increment
    and decrement, which were half of a drive's time. Such a function may not allocate an
    array, return a new one or read a :func:`struct`'s fields (numba says so when it
    compiles it): ``counted=True`` for those, off the hot path. ``inline``: numba inlines
    it into its callers (small helpers on the hot path, which LLVM would otherwise
    call)."""
    options: dict[str, Any] = {"cache": True, "error_model": "numpy"}
    if inline:
        options = {"inline": "always", "error_model": "numpy"}
    if not counted:
        options["_nrt"] = False

    def wrap(f: Callable) -> Any:
        return njit(**options)(f)

    return wrap if fn is None else wrap(fn)


def law(fn: Callable) -> Any:
    """A physical law of scalars (every argument and the result a float), compiled as a
    numpy ufunc: called with arrays from Python it broadcasts as numpy does, called from
    compiled code with numbers it is a plain function call, inlined where LLVM sees fit.
    The one coding of the law serves both."""
    arity = fn.__code__.co_argcount
    return vectorize([f"float64({', '.join(['float64'] * arity)})"], cache=True)(fn)


def table(flat: Any, start: int, rows: int, cols: int) -> Any:
    """The ``rows`` by ``cols`` table (C order) of ``flat[start:start + rows * cols]``, a
    view. The same as ``reshape``; compiled, it builds the view directly, without the
    checks numba's ``reshape`` makes at each call (about 150 ns: most of what a
    right-hand side cost that takes a few state blocks as tables)."""
    return flat[start:start + rows * cols].reshape((rows, cols))


@type_callable(table)
def _table_type(context):  # pragma: no cover (typing)
    def typer(flat, start, rows, cols):
        if isinstance(flat, types.Array) and flat.ndim == 1 and flat.layout == "C" and all(
                isinstance(arg, types.Integer) for arg in (start, rows, cols)):
            return types.Array(flat.dtype, 2, "C")
        return None

    return typer


@lower_builtin(table, types.Array, types.Integer, types.Integer, types.Integer)
def _table_lower(context, builder, signature, args):  # pragma: no cover (compiled)
    flat_value, start_value, rows_value, cols_value = args
    result = signature.return_type
    src = make_array(signature.args[0])(context, builder, flat_value)
    out = make_array(result)(context, builder)
    itemsize = context.get_constant(types.intp, context.get_abi_sizeof(
        context.get_data_type(result.dtype)))
    rows_value = context.cast(builder, rows_value, signature.args[2], types.intp)
    cols_value = context.cast(builder, cols_value, signature.args[3], types.intp)
    start_value = context.cast(builder, start_value, signature.args[1], types.intp)
    populate_array(out, data=builder.gep(src.data, [start_value]),
                   shape=cgutils.pack_array(builder, [rows_value, cols_value]),
                   strides=cgutils.pack_array(builder, [builder.mul(cols_value, itemsize),
                                                        itemsize]),
                   itemsize=itemsize, meminfo=src.meminfo, parent=src.parent)
    return impl_ret_borrowed(context, builder, result, out._getvalue())


def installation_tag(root: Path | None = None) -> str:
    """What names this installation of rrscore (the package at ``root``, by default this
    one) among others sharing a cache: a hash of where its package lies and of its
    modules' sizes and times. Generated code compiled by one version can refer to types
    of modules another lacks (numba then fails to read its cache index: a
    ModuleNotFoundError in every drive), so each keeps its own."""
    root = (root or Path(__file__).parent).resolve()
    digest = hashlib.sha256(str(root).encode())
    for path in sorted(root.rglob("*.py")):
        stat = path.stat()
        digest.update(f"{path.relative_to(root)}:{stat.st_size}:{stat.st_mtime_ns};".encode())
    return digest.hexdigest()[:16]


@functools.cache
def cache_dir() -> Path:
    """Where rrscore writes the modules it generates (``RRS_CACHE_DIR``, else the user's
    cache), in a folder of this installation's own (:func:`installation_tag`): plugins'
    adapters (:mod:`rrscore.engine.adapters`), structs' accessors. numba caches their
    compiled code beside them, as for any module."""
    base = os.environ.get("RRS_CACHE_DIR")
    candidates = [Path(base)] if base else []
    candidates.append(Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
                      / "rrscore" / "generated")
    candidates.append(Path(tempfile.gettempdir()) / f"rrscore-{os.getuid()}" / "generated")
    tag = installation_tag()
    for path in candidates:
        path = path / tag
        try:
            path.mkdir(parents=True, exist_ok=True)
            probe = path / f".write-test-{os.getpid()}"
            probe.write_text("")
            probe.unlink()
            return path
        except OSError:
            continue
    raise OSError("no writable directory for rrscore's generated modules (set RRS_CACHE_DIR)")


def load_generated(name: str, source: str, namespace: dict[str, Any]) -> Any:
    """``source`` written to :func:`cache_dir` as module ``name`` (unless it is there
    already, the same) and imported, ``namespace`` in its globals before it runs. The
    module's name should carry a hash of what it was generated from."""
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
    module.__dict__.update(namespace)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def struct(name: str, fields: tuple[str, ...], doc: str) -> type:
    """A mutable record of named fields that compiled code takes as one pointer (a numba
    structref): ``name(*values)`` builds one, ``obj.field`` reads a field in Python and in
    compiled code, ``obj.set("field", value)`` replaces one. A system of the event loop is
    one (:mod:`rrscore.engine.system`): a named tuple of a hundred arrays, passed by value,
    made every call and every compile of the loop's functions slow. Compiled code reads a
    field as a borrowed reference (:func:`register_struct_type`), so functions compiled
    without reference counting take structs. Under ``NUMBA_DISABLE_JIT`` it is a plain
    class with the same fields. Define it at the top level of a module (numba's cache
    finds its type there by name). Its constructor and accessors are generated
    functions, cached on disk like the rest."""
    module = sys._getframe(1).f_globals["__name__"]
    if UNCOMPILED:
        def init(self: Any, *values: Any) -> None:
            for field, value in zip(fields, values, strict=True):
                object.__setattr__(self, field, value)

        def set_field(self: Any, field: str, value: Any) -> None:
            setattr(self, field, value)

        return type(name, (), {"__slots__": fields, "__init__": init, "set": set_field,
                               "__doc__": doc, "__module__": module, "_fields": fields})

    def preprocess_fields(self: Any, members: Any) -> Any:
        return tuple((field, types.unliteral(typ)) for field, typ in members)

    type_class = type(f"{name}Type", (types.StructRef,),
                      {"preprocess_fields": preprocess_fields, "__module__": module})
    register_struct_type(type_class)
    setattr(sys.modules[module], type_class.__name__, type_class)  # (numba's cache: pickle)
    accessors: dict[str, Any] = {}

    # Python keeps the values it built a struct from (the same arrays compiled code
    # holds): reading a field from Python is a lookup, not a call of compiled code that
    # boxes it anew (which a signal arriving in it could leave half done).
    def new(cls: Any, *values: Any) -> Any:
        obj = accessors["make"](*values)
        obj._values = dict(zip(fields, values, strict=True))
        return obj

    def set_field(self: Any, field: str, value: Any) -> None:
        accessors[f"set_{field}"](self, value)
        if "_values" in self.__dict__:
            self._values[field] = value

    def deepcopy(self: Any, memo: dict) -> Any:
        return type(self)(*(copy.deepcopy(getattr(self, field), memo) for field in fields))

    def getter(field: str) -> property:
        def get(self: Any) -> Any:
            values = self.__dict__.get("_values")
            return values[field] if values is not None else accessors[f"get_{field}"](self)

        return property(get)

    members: dict[str, Any] = {field: getter(field) for field in fields}
    members |= {"__new__": new, "set": set_field, "__deepcopy__": deepcopy, "__doc__": doc,
                "__module__": module, "_fields": fields, "type_class": type_class}
    proxy = type(name, (structref.StructRefProxy,), members)
    structref.define_proxy(proxy, type_class, list(fields))
    setattr(sys.modules[module], f"_{name}Proxy", proxy)
    args = ", ".join(fields)
    source = (f"# rrscore's accessors of {module}.{name}; generated, do not edit.\n"
              f"from numba import njit\n\nfrom {module} import _{name}Proxy as Proxy\n\n\n"
              f"@njit(cache=True)\ndef make({args}):\n    return Proxy({args})\n")
    for field in fields:
        source += (f"\n\n@njit(cache=True)\ndef get_{field}(obj):\n    return obj.{field}\n"
                   f"\n\n@njit(cache=True)\ndef set_{field}(obj, value):\n"
                   f"    obj.{field} = value\n")
    digest = hashlib.sha256(source.encode()).hexdigest()[:16]
    generated = load_generated(f"rrscore_struct_{name.lower()}_{digest}", source, {})
    accessors.update({k: v for k, v in vars(generated).items() if not k.startswith("_")})
    return proxy


#: How numba's runtime lays out a block of memory it manages (``NRT_MemInfo``): the
#: reference count, the destructor and its data, the data, the size.
_MEMINFO = ir.LiteralStructType([ir.IntType(64), ir.IntType(8).as_pointer(),
                                 ir.IntType(8).as_pointer(), ir.IntType(8).as_pointer(),
                                 ir.IntType(64)])


def _fields_of(context: Any, builder: Any, typ: Any, value: Any) -> Any:
    """The fields of struct ``value`` (of numba type ``typ``), read and written in place."""
    meminfo = cgutils.create_struct_proxy(typ)(context, builder, value=value).meminfo
    block = builder.bitcast(meminfo, _MEMINFO.as_pointer())
    data = builder.load(cgutils.gep(builder, block, 0, 3))
    payload = typ.get_data_type()
    data = builder.bitcast(data, context.get_value_type(payload).as_pointer())
    return cgutils.create_struct_proxy(payload)(context, builder, ref=data)


def register_struct_type(type_class: type) -> None:
    """Register a numba structref type class (as ``structref.register`` does), its fields
    read as borrowed references: compiled with reference counting, a read counts one as
    numba's own does; compiled without, it counts none, and needs no runtime (numba's
    own asks for it to find the data, which a function compiled without reference
    counting has not). Writing a field counts references, as numba's does."""
    default_manager.register(type_class, models.StructRefModel)

    @infer_getattr
    class _Fields(AttributeTemplate):
        key = type_class

        def generic_resolve(self, typ, attr):  # pragma: no cover (typing)
            return typ.field_dict.get(attr)

    @lower_getattr_generic(type_class)
    def _read(context, builder, typ, value, attr):  # pragma: no cover (compiled)
        field = getattr(_fields_of(context, builder, typ, value), attr)
        return impl_ret_borrowed(context, builder, typ.field_dict[attr], field)

    @lower_setattr_generic(type_class)
    def _write(context, builder, signature, args, attr):  # pragma: no cover (compiled)
        typ, value_type = signature.args
        obj, value = args
        fields = _fields_of(context, builder, typ, obj)
        field_type = typ.field_dict[attr]
        value = context.cast(builder, value, value_type, field_type)
        old = getattr(fields, attr)
        context.nrt.incref(builder, field_type, value)
        context.nrt.decref(builder, field_type, old)  # (last: the value may be the old one)
        setattr(fields, attr, value)


def generic(name: str, doc: str) -> Callable:
    """A function ``name(system, *args)`` that calls the implementation registered for the
    type of ``system`` (``name.register(SystemType, implementation)``, a :func:`kernel`).
    In compiled code the choice is made when the caller is compiled: each system type gets
    its own compiled caller (cached), with the implementation inlined where LLVM sees fit;
    in Python, at each call. Registering from the module that defines a system keeps the
    modules that call the generic function (the stepper, the event loop) free of imports
    of the systems."""
    table: dict[type, Callable] = {}

    def call(system: Any, *args: Any) -> Any:
        return table[type(system)](system, *args)

    @overload(call, jit_options={"cache": True, "_nrt": False})
    def _typed(system, *args):  # pragma: no cover (typing; numba matches these names)
        chosen = table.get(type(system))
        if chosen is None:
            return None
        return lambda system, *args: chosen(system, *args)

    def register(system_type: type, implementation: Callable) -> None:
        table[system_type] = implementation
        if hasattr(system_type, "type_class"):  # a struct: its numba type says which
            table[system_type.type_class] = implementation

    call.__name__ = call.__qualname__ = name
    call.__doc__ = doc
    call.register = register  # type: ignore[attr-defined]
    return call


class _CompileClock(numba_event.Listener):
    """Adds up the time numba spends compiling: its "numba:compile" event fires only when a
    function is compiled, not when it is loaded from the on-disk cache. Compiles nest (a
    function compiles what it calls): the outermost is timed."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._depth = 0
        self._t0 = 0.0
        #: Called once each when numba next starts compiling (:func:`compile_notice`).
        self.waiting: list[Callable[[], None]] = []

    def on_start(self, event: numba_event.Event) -> None:
        if self._depth == 0:
            self._t0 = time.perf_counter()
            callbacks, self.waiting = self.waiting, []
            for notify in callbacks:
                with contextlib.suppress(Exception):  # a notice never stops a compile
                    notify()
        self._depth += 1

    def on_end(self, event: numba_event.Event) -> None:
        self._depth -= 1
        if self._depth == 0:
            self.seconds += time.perf_counter() - self._t0


_CLOCK = _CompileClock()
numba_event.register("numba:compile", _CLOCK)


@contextlib.contextmanager
def compile_notice(notify: Callable[[], None]) -> Iterator[None]:
    """Within the block, call ``notify()`` once, when numba starts compiling (code loaded
    from its on-disk cache does not count): for telling a user why the first drive on an
    install pauses for a while."""
    _CLOCK.waiting.append(notify)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):  # (called already)
            _CLOCK.waiting.remove(notify)


def compile_seconds() -> float:
    """Seconds numba has spent compiling in this process so far (rrscore's loop, the laws
    and plugins' functions); code loaded from the on-disk cache adds nothing."""
    return _CLOCK.seconds
