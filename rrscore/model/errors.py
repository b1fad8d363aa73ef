"""The errors rrscore reports to people: each one is a complete, one-paragraph message."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


class RrsError(Exception):
    """Base of every error rrscore reports without a traceback."""


class ConfigError(RrsError):
    """A config that cannot be used: names the file, key path, what was found and expected."""

    def __init__(self, file: str | None, key: str | None, message: str) -> None:
        self.file = file
        self.key = key
        self.message = message
        where = ": ".join(p for p in (file, key) if p)
        super().__init__(f"{where}: {message}" if where else message)

    def __reduce__(self):
        # (an error raised in a sweep's worker process reaches the parent whole)
        return (type(self), (self.file, self.key, self.message))


class ConfigErrors(ConfigError):
    """Several :class:`ConfigError` found in one pass over a file (``rrs validate`` prints
    one line each). Its ``file``, ``key`` and ``message`` are the first one's."""

    def __init__(self, errors: list[ConfigError]) -> None:
        first = errors[0]
        super().__init__(first.file, first.key, first.message)
        self.errors = list(errors)
        self.args = ("\n".join(str(e) for e in self.errors),)

    def __str__(self) -> str:
        return "\n".join(str(e) for e in self.errors)

    def __reduce__(self):
        return (ConfigErrors, (self.errors,))


def each_error(exc: ConfigError) -> list[ConfigError]:
    """The errors ``exc`` stands for: itself, or each of a :class:`ConfigErrors`."""
    return list(exc.errors) if isinstance(exc, ConfigErrors) else [exc]


def one_error(errors: list[ConfigError]) -> ConfigError:
    """The error to raise for ``errors`` (at least one): the only one, or all of them."""
    return errors[0] if len(errors) == 1 else ConfigErrors(errors)


class OutputError(RrsError):
    """Outputs cannot be written: the directory is unwritable, in use or full."""


class Interrupted(KeyboardInterrupt):
    """A drive stopped by a signal (SIGINT, SIGTERM, SIGHUP): handled like Ctrl-C."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


#: Interruptions a signal handler has raised (``rrs drive``'s): a run checks between its
#: control steps, so that one lost on its way through compiled code still ends the drive.
_raised: list[KeyboardInterrupt] = []


def note_interruption(exc: KeyboardInterrupt) -> KeyboardInterrupt:
    """Remember ``exc``, which a signal handler is about to raise; returns it."""
    _raised.append(exc)
    return exc


def is_noted(exc: BaseException) -> bool:
    """Whether ``exc`` is an interruption a signal handler raised and a run will raise
    again (not yet taken)."""
    return any(exc is noted for noted in _raised)


def take_interruption() -> KeyboardInterrupt | None:
    """An interruption raised by a signal handler and not yet taken, if any (a run raises
    it again: a C library on the way, numba's for one, may have swallowed it)."""
    return _raised.pop() if _raised else None


def clear_interruptions() -> None:
    """Forget the interruptions raised so far (their drive has ended)."""
    _raised.clear()
    _signals.update(seen=0, writing=False, deferred=None)


#: The signals a command has had (``seen``), whether a drive is writing its end-of-drive
#: outputs (``writing``) and the interruption that waits for them (``deferred``).
_signals: dict = {"seen": 0, "writing": False, "deferred": None}


def on_signal(exc: KeyboardInterrupt) -> bool:
    """What a signal handler does with the interruption ``exc``: True, raise it now.

    The first signal ends the drive. One that comes while the drive writes its
    end-of-drive outputs, the first of the command, waits for them to be written
    (:func:`writing_outputs`); any other one then cuts them off (each file is whole or
    absent even so). A further signal while a drive ends, before it writes, is ignored."""
    _signals["seen"] += 1
    if _signals["writing"]:
        if _signals["seen"] == 1:
            _signals["deferred"] = exc
            return False
        return True
    return _signals["seen"] == 1


@contextmanager
def writing_outputs() -> Iterator[None]:
    """The block in which a drive writes its end-of-drive outputs (see :func:`on_signal`);
    the interruption that waited for it, if any, is raised after it."""
    _signals["writing"] = True
    try:
        yield
    finally:
        _signals["writing"] = False
        waited, _signals["deferred"] = _signals["deferred"], None
    if waited is not None:
        raise waited


def interruption_behind(exc: BaseException) -> KeyboardInterrupt | None:
    """The interruption (Ctrl-C, or a signal's :class:`Interrupted`) behind ``exc``, if
    any. A signal whose handler raises while compiled (numba) code hands back its result
    surfaces as a SystemError ("returned a result with an exception set") caused by the
    interruption: it must end the drive as an interruption, not as a failure."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, KeyboardInterrupt):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


class PluginError(RrsError):
    """A plugin raised: names the plugin, the vehicles it serves and the simulated time."""


#: What plugin code raises that counts as its failure: any exception, and ``SystemExit``
#: (a plugin calling ``sys.exit`` fails; it does not end rrscore without its outputs).
PLUGIN_FAILURES = (Exception, SystemExit)


@contextmanager
def plugin_call(who: str, t: float | None = None) -> Iterator[None]:
    """Turn an exception raised by plugin code into a :class:`PluginError` naming ``who``
    (the plugin and the vehicles it serves) and the simulated time ``t``.

    KeyboardInterrupt passes through, so an interrupted drive can keep its results.
    """
    try:
        yield
    except RrsError:
        raise
    except PLUGIN_FAILURES as exc:
        raise plugin_failure(who, exc, t) from exc


def plugin_failure(who: str, exc: BaseException, t: float | None = None) -> PluginError:
    """The :class:`PluginError` for ``exc`` raised by plugin code ``who`` at time ``t``
    (for hot paths that catch exceptions themselves rather than use :func:`plugin_call`).

    An interruption behind ``exc`` (see :func:`interruption_behind`) is raised instead:
    the plugin did not fail, the drive was stopped while it ran."""
    interruption = interruption_behind(exc)
    if interruption is not None:
        raise interruption
    when = f", at t = {t:.3f} s" if t is not None else ", during set-up"
    return PluginError(f"{who} raised {type(exc).__name__}: {exc}{when}")
