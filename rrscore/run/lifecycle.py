"""The drive's lifecycle hooks, called plugin by plugin.

A drive calls ``rrs_drive_start``, ``rrs_sample``, ``rrs_event`` and
``rrs_drive_end`` (:mod:`rrscore.hookspecs`). :class:`LifecycleHooks` calls them
as pluggy would (last registered first, each implementation with the arguments it
names), and adds what a drive needs:

* A plugin that raises is named, with the hook and the simulated time, in a
  :class:`~rrscore.errors.PluginError` (an ``OSError`` is an output writer's
  failure, :class:`~rrscore.errors.OutputError`, naming the file). The other
  plugins still get the same call, and the one that raised gets no more rows or
  events in this drive. So the drive ends as failed with what it wrote: the other
  writers get the final row, and every plugin gets ``rrs_drive_end`` (the summary
  is written), as the hook specification promises.
* Each hook's implementations are looked up once per drive and called directly:
  ``rrs_sample`` runs once per row of the time series, and pluggy's machinery
  costs several times what a writer does with a row.

A hook with a wrapper (``hookwrapper=True`` or ``wrapper=True``) needs pluggy's
machinery: it is called through pluggy, and the plugin that raised is found in the
traceback.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pluggy

from ..model.errors import PLUGIN_FAILURES, OutputError, RrsError, plugin_failure

#: The hooks a plugin that raised gets no more of in that drive (``rrs_drive_end`` it
#: still gets: the hook specification promises it however the drive ends).
PER_ROW = ("rrs_sample", "rrs_sample_rows", "rrs_event")


class LifecycleHooks:
    """One drive's calls of the lifecycle hooks of ``manager``'s plugins, but for the
    plugins named in ``skip`` (a yard drive's: the train's own output writers)."""

    def __init__(self, manager: pluggy.PluginManager, skip: frozenset[str] = frozenset()
                 ) -> None:
        self.manager = manager
        self.skip = skip
        #: The names of the plugins that raised in this drive.
        self.failed: set[str] = set()
        # per hook: [(function, argument names, plugin name)] in calling order, or the
        # pluggy caller where a wrapper needs pluggy's machinery
        self._calls: dict[str, list[tuple[Callable[..., Any], tuple[str, ...], str]]
                          | pluggy.HookCaller] = {}

    def call(self, hook: str, t: float, /, **kwargs: Any) -> None:
        """Call every implementation of ``hook`` with ``kwargs``, at simulated time ``t``
        (``rrs_sample``'s own ``t`` goes in ``kwargs``).
        Raises the first failure (:class:`PluginError` or :class:`OutputError`) once
        every implementation has had the call; an interruption at once."""
        calls = self._calls.get(hook)
        if calls is None:
            calls = self._resolve(hook)
        first: RrsError | None = None
        if isinstance(calls, list):
            for function, argnames, name in calls:
                try:
                    function(*[kwargs[a] for a in argnames])
                except PLUGIN_FAILURES as exc:
                    first = first or self._failure(hook, name, exc, t)
        else:
            try:
                calls(**kwargs)
            except PLUGIN_FAILURES as exc:
                first = self._failure(hook, self._culprit(hook, exc), exc, t)
        if first is not None:
            raise first

    def implemented(self, hook: str) -> bool:
        """Whether a plugin that has not failed in this drive implements ``hook``."""
        calls = self._calls.get(hook)
        if calls is None:
            calls = self._resolve(hook)
        return bool(calls) if isinstance(calls, list) else True

    def implementers(self, *hooks: str) -> list:
        """The functions that implement any of ``hooks``."""
        return [impl.function for hook in hooks
                for impl in getattr(self.manager.hook, hook).get_hookimpls()
                if impl.plugin_name not in self.skip]

    def _resolve(self, hook: str) -> list | pluggy.HookCaller:
        caller = getattr(self.manager.hook, hook)
        skip = self.skip | (self.failed if hook in PER_ROW else set())
        impls = [i for i in caller.get_hookimpls() if i.plugin_name not in skip]
        if any(i.hookwrapper or i.wrapper for i in impls):
            plugins = [self.manager.get_plugin(n) for n in skip]
            calls = (self.manager.subset_hook_caller(hook, plugins) if plugins else caller)
        else:  # pluggy calls the last registered first
            calls = [(i.function, tuple(i.argnames), i.plugin_name) for i in reversed(impls)]
        self._calls[hook] = calls
        return calls

    def _culprit(self, hook: str, exc: BaseException) -> str:
        """The plugin whose implementation of ``hook`` raised ``exc`` (through pluggy):
        the innermost frame of the traceback that is one of them."""
        codes = {getattr(i.function, "__code__", None): i.plugin_name
                 for i in getattr(self.manager.hook, hook).get_hookimpls()}
        name, tb = "?", exc.__traceback__
        while tb is not None:
            name = codes.get(tb.tb_frame.f_code, name)
            tb = tb.tb_next
        return name

    def _failure(self, hook: str, plugin: str, exc: BaseException, t: float) -> RrsError:
        """The error for ``exc`` raised by ``plugin`` in ``hook``; the plugin gets no more
        rows or events. An interruption behind ``exc`` is raised instead."""
        if isinstance(exc, OSError):
            error: RrsError = write_failure(exc, t)
            error.__cause__ = exc
        elif isinstance(exc, RrsError):
            error = exc
        else:  # (raises the interruption behind it, if any)
            error = plugin_failure(f"plugin {plugin!r} ({hook})", exc, t)
            error.__cause__ = exc
        if plugin not in self.failed:
            self.failed.add(plugin)
            for h in PER_ROW:
                self._calls.pop(h, None)
        return error


def write_failure(exc: OSError, t: float | None = None,
                  name: str | None = None) -> OutputError:
    """The :class:`OutputError` of an output writer whose file (``name``, else the one
    ``exc`` names) could not be written, at simulated time ``t`` if given."""
    name = name or exc.filename
    where = f"{name}: " if name else ""
    when = f", at t = {t:.3f} s" if t is not None else ""
    return OutputError(f"output writer failed: {where}{exc.strerror or exc}{when}")
