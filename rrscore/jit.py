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
import os
import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from numba import njit, vectorize
from numba.core import event as numba_event
from numba.core.errors import NumbaExperimentalFeatureWarning
from numba.extending import overload

#: True when numba compiles nothing (``NUMBA_DISABLE_JIT=1``): every kernel runs as
#: written, in Python.
UNCOMPILED = os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0")

# Plugins' functions reach the loop as first-class function values (numba calls the
# feature experimental); compiled and uncompiled runs are held to each other by tests.
warnings.filterwarnings("ignore", "First-class function type", NumbaExperimentalFeatureWarning)


def kernel(fn: Callable | None = None, *, inline: bool = False) -> Any:
    """Compile ``fn`` with numba: cached on disk, numpy's error model (a division by zero
    gives inf or NaN, as it does in Python with numpy floats, so compiled and uncompiled
    runs agree). ``inline``: numba inlines it into its callers (small helpers on the
    hot path, which LLVM would otherwise call)."""
    options: dict[str, Any] = {"cache": True, "error_model": "numpy"}
    if inline:
        options = {"inline": "always", "error_model": "numpy"}

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

    @overload(call, jit_options={"cache": True})
    def _typed(system, *args):  # pragma: no cover (typing; numba matches these names)
        chosen = table.get(getattr(system, "instance_class", None))
        if chosen is None:
            return None
        return lambda system, *args: chosen(system, *args)

    def register(system_type: type, implementation: Callable) -> None:
        table[system_type] = implementation

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
