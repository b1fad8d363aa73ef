"""Sweeps: one scenario run over a grid or a list of parameter values, on local processes
or on a Dask cluster, giving one table of summary figures with the parameters as columns.

A parameter is a dotted key path of the ``[scenario]`` table, as
:meth:`~rrscore.run.scenario.Scenario.with_values` takes it (``stop.max_time``,
``train.vehicles[1].count``), with a list of values that may carry units
(``"40 km/h"``). Each case is built and driven where it runs, from the pickled
scenario and its values, so the table is the same whichever way the sweep runs::

    sweep = Sweep(scenario, {"start.speed": ["0 km/h", "20 km/h"], "stop.max_time": [5, 10]})
    result = sweep.run(out="out/sweep", workers=2)   # or scheduler="tcp://host:8786"
    print(result.rows[0]["max_speed_mps"])
"""

from __future__ import annotations

import contextlib
import itertools
import json
import multiprocessing
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..model.config import lookup_path
from ..model.errors import ConfigError, RrsError
from .drive import Drive, prepare_output_dir, release_output_dir
from .files import write_atomically
from .lifecycle import write_failure
from .recorder import LineFile
from .run import Run
from .scenario import Scenario

DEFAULT_COLUMNS = ("sim_time_s", "distance_m", "max_speed_mps", "final_speed_mps",
                   "max_coupler_tension_N", "max_coupler_compression_N", "stop_reason")
"""The summary figures a sweep tabulates unless told otherwise."""

SI_SUFFIX = "_si"
"""Suffix of the column holding a parameter's value as the case resolved it (SI units)."""


def _plain(value: Any) -> Any:
    """A JSON-ready copy of a config value (frozen tables and tuples become dicts/lists)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def run_case(scenario: Scenario, values: Mapping[str, Any], columns: Sequence[str],
             out: str | None = None) -> dict[str, Any]:
    """Build one case (``scenario`` with ``values``), drive it headless and return its row
    without the case index: the parameters in SI (``KEY_si``), the summary ``columns`` and
    ``error`` ("" when it ran). A case that fails is a row with its error, never an
    exception. Runs in whichever process gets the case; ``_cpu_s`` is the processor time it
    took there (not a column of the table)."""
    cpu0 = time.process_time()
    row = _case_row(scenario, values, columns, out)
    row["_cpu_s"] = time.process_time() - cpu0
    return row


def _case_row(scenario: Scenario, values: Mapping[str, Any], columns: Sequence[str],
              out: str | None) -> dict[str, Any]:
    row: dict[str, Any] = {f"{k}{SI_SUFFIX}": None for k in values}
    row.update({c: None for c in columns})
    try:
        case = scenario.with_values(values)
    except KeyError as exc:
        return {**row, "stop_reason": "error", "error": str(exc.args[0])}
    except RrsError as exc:
        return {**row, "stop_reason": "error", "error": str(exc)}
    for k in values:
        row[f"{k}{SI_SUFFIX}"] = _plain(lookup_path(case.config, k))
    drive = None
    try:
        drive = Drive(case)
        summary = drive.run(out).summary
    except RrsError as exc:
        # the figures where the drive ended, when it got as far as starting
        summary = drive.run_.summary(0.0) if drive is not None else {}
        summary["stop_reason"], summary["error"] = "error", str(exc)
    for c in columns:
        try:
            row[c] = _plain(lookup_path(summary, c))
        except KeyError:
            row[c] = None
    row["stop_reason"] = summary.get("stop_reason", "error")
    row["error"] = summary.get("error") or ""
    return row


#: What a local pool's worker runs its cases on: the scenario and the summary columns,
#: given once when the worker starts (a forked worker inherits them; a fresh one gets
#: them pickled once), so that a case sends only its values. With the scenario sent
#: with every case, a worker spent about half a millisecond of each 24 ms case taking
#: it in.
_POOL_SWEEP: tuple[Scenario, Sequence[str]] | None = None


def _start_pool_worker(scenario: Scenario, columns: Sequence[str]) -> None:
    global _POOL_SWEEP
    _POOL_SWEEP = (scenario, columns)


def _run_pool_case(values: Mapping[str, Any], out: str | None) -> dict[str, Any]:
    assert _POOL_SWEEP is not None  # set by _start_pool_worker
    scenario, columns = _POOL_SWEEP
    return run_case(scenario, values, columns, out)


@dataclass
class SweepResult:
    """A finished (or interrupted) sweep: the table's ``columns`` and its ``rows`` in case
    order, where the files went, how long it took and the processor time its cases took,
    summed over the workers."""

    columns: list[str]
    rows: list[dict[str, Any]]
    out_dir: Path | None = None
    wall_time_s: float = 0.0
    runner: str = ""
    interrupted: bool = False
    cpu_time_s: float = 0.0
    #: The interruption that stopped it (Ctrl-C, or a signal's), to raise again.
    interruption: KeyboardInterrupt | None = field(default=None, repr=False, compare=False)

    @property
    def failed(self) -> list[dict[str, Any]]:
        """The rows of cases that ended in an error."""
        return [r for r in self.rows if r["error"]]


@dataclass
class _TableWriter:
    """Writes ``sweep.csv`` row by row (so an interrupted sweep keeps its finished rows)
    and ``sweep.json`` at the end."""

    out: Path | None
    columns: list[str]
    meta: dict[str, Any]
    rows: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        # whole rows, each on disk as it comes (a full disk cuts the file back to them)
        self._file = LineFile(self.out / "sweep.csv", self.columns) \
            if self.out is not None else None

    def write(self, row: dict[str, Any]) -> None:
        self.rows.append(row)
        if self._file is not None:
            with _writing("sweep.csv"):
                self._file.write([_cell(row[c]) for c in self.columns])
                self._file.flush()

    def close(self, interrupted: bool) -> None:
        if self._file is None:
            return
        with _writing("sweep.csv"):
            self._file.close()
        doc = {**self.meta, "interrupted": interrupted, "columns": self.columns,
               "rows": self.rows}
        with _writing("sweep.json"):
            write_atomically(self.out / "sweep.json",  # type: ignore[operator]
                             json.dumps(doc, indent=1, default=str, allow_nan=True) + "\n")


@contextlib.contextmanager
def _writing(name: str) -> Iterator[None]:
    """An ``OSError`` while ``name`` is written (a full disk) as the sweep's
    :class:`OutputError` (exit status 1: the sweep ran, its table could not be kept)."""
    try:
        yield
    except OSError as exc:
        error = write_failure(exc, name=name)
        error.during_drive = True  # type: ignore[attr-defined]  # the CLI's exit status
        raise error from exc


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, list | dict):
        return json.dumps(value)
    return value


class Sweep:
    """A scenario and parameters to vary: ``params`` maps key paths of the ``[scenario]``
    table to lists of values (units allowed). ``mode`` "grid" runs every combination
    (Cartesian product, the last key varying fastest); "zip" runs the i-th values of every
    key together (all lists the same length). ``columns`` picks the summary figures to
    tabulate (nested ones with dots: ``energy.drive_J``).

    Every key and every value is checked when the sweep is made: a bad one is a
    :class:`~rrscore.errors.ConfigError` naming the key, before anything runs.
    """

    def __init__(self, scenario: Scenario, params: Mapping[str, Sequence[Any]],
                 mode: str = "grid", columns: Sequence[str] | None = None) -> None:
        self.scenario = scenario
        self.params = {k: list(v) for k, v in params.items()}
        self.mode = mode
        self.columns = list(DEFAULT_COLUMNS if columns is None else columns)
        self._check()

    def _error(self, key: str | None, message: str) -> ConfigError:
        return ConfigError(self.scenario.file or "<scenario>", key, message)

    def _check(self) -> None:
        if self.mode not in ("grid", "zip"):
            raise self._error(None, f"sweep mode: found {self.mode!r}, expected grid or zip")
        if not self.params:
            raise self._error(None, "a sweep needs at least one parameter")
        for key, values in self.params.items():
            if not values:
                raise self._error(key, "found no values, expected at least one to sweep")
            for value in values:
                try:
                    case = self.scenario.with_values({key: value})
                except KeyError:
                    raise self._error(key, "no such key in the scenario (give key paths of "
                                      "the [scenario] table, as in scenario.resolved.toml, "
                                      "e.g. stop.max_time or train.vehicles[1].count)"
                                      ) from None
                if case.config["dynamics"] == "events":
                    raise self._error("dynamics", "found 'events', expected 'multibody' or "
                                      "'rigid': a sweep tabulates the continuous core's "
                                      "summaries")
        counts = {k: len(v) for k, v in self.params.items()}
        if self.mode == "zip" and len(set(counts.values())) > 1:
            raise self._error(None, "zip sweep: found different numbers of values ("
                              + ", ".join(f"{k}: {n}" for k, n in counts.items())
                              + "), expected the same number for every key")
        known = Run(self.scenario).summary(1.0)
        for c in self.columns:
            if c == "error":
                continue
            try:
                lookup_path(known, c)
            except KeyError:
                simple = ", ".join(k for k, v in known.items()
                                   if not isinstance(v, dict | list))
                raise RrsError(f"sweep column {c!r}: no such summary figure (give keys of "
                               f"summary.json, nested ones with dots as in energy.drive_J; "
                               f"top-level figures: {simple})") from None

    def cases(self) -> list[dict[str, Any]]:
        """The values of every case, in case order."""
        keys = list(self.params)
        if self.mode == "zip":
            combos: Iterable[tuple] = zip(*self.params.values(), strict=True)
        else:
            combos = itertools.product(*self.params.values())
        return [dict(zip(keys, c, strict=True)) for c in combos]

    @property
    def table_columns(self) -> list[str]:
        """The columns of the table: case, each key as given and in SI, the figures, error."""
        cols = ["case"]
        for k in self.params:
            cols += [k, f"{k}{SI_SUFFIX}"]
        cols += [c for c in self.columns if c != "error"]
        if "stop_reason" not in cols:
            cols.append("stop_reason")
        return [*cols, "error"]

    def run(self, out: str | Path | None = None, workers: int = 1,
            scheduler: Any = None, save_runs: bool = False,
            on_row: Callable[[dict[str, Any]], None] | None = None) -> SweepResult:
        """Run every case and return the table in case order. ``workers`` local processes
        (1: in this process), or the Dask cluster ``scheduler`` (an address such as
        ``tcp://10.0.0.5:8786`` or a ``dask.distributed.Client``). With ``out``, writes
        ``sweep.csv`` (row by row) and ``sweep.json`` there, and with ``save_runs`` each
        case's outputs to ``out/runs/case_NNNN``. ``on_row`` is called with each row as it
        is written. Ctrl-C stops the sweep and keeps the finished rows."""
        if workers < 1:
            raise RrsError(f"workers: found {workers}, expected 1 or more")
        if save_runs and out is None:
            raise RrsError("save_runs needs an output directory (out)")
        out_dir = Path(out) if out is not None else None
        cases = self.cases()
        width = max(4, len(str(len(cases) - 1)))
        # each case's values and where its outputs go; the scenario and the columns,
        # which every case shares, go to the runners once
        tasks = [(values, str((out_dir / "runs" / f"case_{i:0{width}d}").resolve())
                  if save_runs and out_dir is not None else None)
                 for i, values in enumerate(cases)]
        if scheduler is not None:
            _dask()  # before any file is written
            runner = "dask"
        elif workers > 1:
            runner = f"{workers} local workers"
        else:
            runner = "1 local worker"
        meta = {"scenario": self.scenario.file, "mode": self.mode,
                "params": _plain(self.params), "cases": len(cases), "runner": runner}
        # the directory locked as a drive locks it (a second sweep or drive is refused)
        lock = prepare_output_dir(out_dir) if out_dir is not None else None
        try:
            return self._run_cases(out_dir, cases, tasks, runner, meta, scheduler, workers,
                                   on_row)
        finally:
            if lock is not None:
                release_output_dir(out_dir, lock)

    def _run_cases(self, out_dir: Path | None, cases: list, tasks: list, runner: str,
                   meta: dict[str, Any], scheduler: Any, workers: int,
                   on_row: Callable[[dict[str, Any]], None] | None) -> SweepResult:
        """:meth:`run`'s cases, once its output directory is locked."""
        writer = _TableWriter(out_dir, self.table_columns, meta)
        pending: dict[int, dict[str, Any]] = {}
        done = 0
        cpu = 0.0

        def collect(i: int, row: dict[str, Any]) -> None:
            nonlocal done, cpu
            cpu += row.pop("_cpu_s", 0.0)
            pending[i] = {"case": i, **{k: _plain(v) for k, v in cases[i].items()}, **row}
            while done in pending:  # rows go out in case order whoever finishes first
                r = pending.pop(done)
                writer.write({c: r.get(c) for c in writer.columns})
                if on_row is not None:
                    on_row(writer.rows[-1])
                done += 1

        wall0 = time.perf_counter()
        interruption: KeyboardInterrupt | None = None
        try:
            if scheduler is not None:
                _run_dask(scheduler, self.scenario, self.columns, tasks, collect)
            elif workers > 1:
                _run_pool(workers, self.scenario, self.columns, tasks, collect)
            else:
                for i, (values, case_out) in enumerate(tasks):
                    collect(i, run_case(self.scenario, values, self.columns, case_out))
        except KeyboardInterrupt as exc:
            interruption = exc
            for i in sorted(pending):  # finished, but behind an unfinished case
                writer.write({c: pending[i].get(c) for c in writer.columns})
        finally:
            writer.close(interruption is not None)
        return SweepResult(writer.columns, writer.rows, out_dir,
                           time.perf_counter() - wall0, runner, interruption is not None, cpu,
                           interruption)


#: Modules whose presence means a GUI may be open (matplotlib's interactive backends).
_GUI_TOOLKITS = ("tkinter", "PyQt5", "PyQt6", "PySide2", "PySide6", "gi", "wx")


def _context() -> multiprocessing.context.BaseContext:
    """How the workers start: forked from this process where that is safe, else from a
    fork server (or spawned).

    A forked worker starts at once, with rrscore imported and numba's compiled code
    loaded; a fresh process takes about 1.5 s for that (0.8 s of imports, 0.7 s for
    numba's first use), the time of 20 to 40 short drives, which once made 2 workers no
    faster than 1. Forking is safe on Linux while this process runs no other Python
    thread, numba has not started its thread pool and no GUI toolkit is loaded: the
    native threads left are BLAS's idle pool, which OpenBLAS shuts down around a fork
    itself (``pthread_atfork``). Elsewhere (macOS, a Jupyter kernel's threads, numba's
    parallel code) a fork could copy a lock held by another thread, and a worker
    inheriting open plot windows would share their display connection (a worker that
    saves plots switches matplotlib to Agg, closing them), so the workers start fresh."""
    methods = multiprocessing.get_all_start_methods()
    if _fork_is_safe() and "fork" in methods:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


def _fork_is_safe() -> bool:
    """Whether forking this process is safe (see :func:`_context`)."""
    if not sys.platform.startswith("linux") or threading.active_count() != 1:
        return False
    parallel = sys.modules.get("numba.np.ufunc.parallel")
    if getattr(parallel, "_is_initialized", False):
        return False
    return not any(name in sys.modules for name in _GUI_TOOLKITS)


def _run_pool(workers: int, scenario: Scenario, columns: Sequence[str],
              tasks: list[tuple[Mapping[str, Any], str | None]], collect: Callable) -> None:
    from concurrent.futures import ProcessPoolExecutor, as_completed

    with ProcessPoolExecutor(max_workers=workers, mp_context=_context(),
                             initializer=_start_pool_worker,
                             initargs=(scenario, columns)) as pool, \
            warnings.catch_warnings():
        # Python 3.12+ warns of any fork with more than one native thread; _context
        # forks only with BLAS's idle pool besides this one
        warnings.filterwarnings("ignore", "This process .* is multi-threaded",
                                DeprecationWarning)
        futures = {pool.submit(_run_pool_case, values, case_out): i
                   for i, (values, case_out) in enumerate(tasks)}
        try:
            for f in as_completed(futures):
                collect(futures[f], f.result())
        except BaseException:
            for f in futures:
                f.cancel()
            raise


def _dask() -> Any:
    """The ``dask.distributed`` module, or a one-line error naming the extra to install."""
    try:
        import dask.distributed
    except ImportError:
        raise RrsError("a Dask scheduler needs dask.distributed, an optional extra: "
                       "pip install 'rrscore[dask]'") from None
    return dask.distributed


def _run_dask(scheduler: Any, scenario: Scenario, columns: Sequence[str],
              tasks: list[tuple[Mapping[str, Any], str | None]], collect: Callable) -> None:
    distributed = _dask()
    Client, as_completed = distributed.Client, distributed.as_completed
    own = not isinstance(scheduler, Client)
    if own:
        try:
            client = Client(scheduler, timeout=30)
        except (OSError, TimeoutError, ValueError) as exc:
            raise RrsError(f"could not connect to the Dask scheduler at {scheduler}: "
                           f"{exc}") from None
    else:
        client = scheduler
    try:
        # the scenario sent to the workers once, each case with only its values
        shared = client.scatter(scenario, broadcast=True)
        futures = client.map(run_case, [shared] * len(tasks), [v for v, _ in tasks],
                             [list(columns)] * len(tasks), [o for _, o in tasks], pure=False)
        index = {f.key: i for i, f in enumerate(futures)}
        try:
            for f in as_completed(futures):
                collect(index[f.key], f.result())
        except BaseException:
            client.cancel(futures)
            raise
    finally:
        if own:
            client.close()


def parse_values(text: str) -> list[Any]:
    """The values of ``--param KEY=V1,V2,...``: each a TOML literal (``10``, ``0.5``,
    ``true``, ``"x"``) or else a string, such as a quantity with units (``40 km/h``)."""
    import tomllib

    values = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        try:
            values.append(tomllib.loads(f"v = {item}")["v"])
        except tomllib.TOMLDecodeError:
            values.append(item)
    return values


def sweep(scenario: Scenario, params: Mapping[str, Sequence[Any]], mode: str = "grid",
          columns: Sequence[str] | None = None, **run: Any) -> SweepResult:
    """Make a :class:`Sweep` and run it (``run`` takes the options of :meth:`Sweep.run`)."""
    return Sweep(scenario, params, mode, columns).run(**run)


