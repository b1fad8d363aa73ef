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

The cases stream: each is made from its index when it is handed out (see
:mod:`~rrscore.run.sweepcases`), at most :data:`WINDOW_PER_WORKER` per worker are handed
out ahead of the first unwritten row, and each row is written as soon as the rows before
it are, so a sweep of a million cases starts writing at once and runs in bounded memory.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..model.config import lookup_path
from ..model.errors import (
    ConfigError,
    Interrupted,
    RrsError,
    clear_interruptions,
    interruption_behind,
    note_interruption,
    on_signal,
    take_interruption,
    writing_outputs,
)
from .drive import Drive, prepare_output_dir, release_output_dir
from .files import write_atomically
from .lifecycle import write_failure
from .recorder import LineFile
from .run import Run
from .scenario import Scenario
from .sweepcases import MAX_CASES, MODES, Cases
from .sweepplot import plottable_figures, sweep_plot
from .tables import csv_to_parquet, optional

DEFAULT_COLUMNS = ("sim_time_s", "distance_m", "max_speed_mps", "final_speed_mps",
                   "max_coupler_tension_N", "max_coupler_compression_N", "stop_reason")
"""The summary figures a sweep tabulates unless told otherwise."""

SI_SUFFIX = "_si"
"""Suffix of the column holding a parameter's value as the case resolved it (SI units)."""

ROWS_KEPT = 100_000
"""A sweep of at most this many cases keeps its rows in memory (:attr:`SweepResult.rows`)
unless told otherwise; a bigger one keeps them in ``sweep.csv`` only (a row takes about
a kilobyte in memory)."""

FAILURES_KEPT = 100
"""The failed rows a sweep keeps whatever its size (:attr:`SweepResult.first_failures`,
``first_failures`` of ``sweep.json``); :attr:`SweepResult.failures` counts them all."""

WINDOW_PER_WORKER = 16
"""Cases handed out per worker ahead of the first unwritten row: enough to keep every
worker busy while one case takes longer than the others, few enough that the cases in
flight and the finished rows waiting for an earlier one stay a handful."""

VALUES_CHECKED_FIRST = 1_000
"""Distinct values of a key checked before the first case (each takes milliseconds: the
whole scenario is resolved again); a later bad one fails its own case, its row saying
why, so that a zip of 10^6 distinct values starts at once, not after an hour."""

MAX_WORKERS = 256
"""The most local worker processes a sweep starts."""

STOP_GRACE_S = 5.0
"""How long an interrupted pool's workers have to end their drives (each interrupted, so
its outputs are written whole) before they are killed."""


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
        drive = Drive(case, keep_coupler_forces=False)  # (a row takes the summary only)
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


#: What a local pool's worker runs its cases on: the scenario, the summary columns and the
#: cases, given once when the worker starts (a forked worker inherits them; a fresh one gets
#: them pickled once), so that a case is sent as its index. With the scenario sent with
#: every case, a worker spent about half a millisecond of each 24 ms case taking it in.
_POOL_SWEEP: tuple[Scenario, Sequence[str], Cases] | None = None

#: Whether this worker is running a case, and how many signals it has had: the first
#: while it runs a case interrupts the case's drive; any other is ignored (the sweep's
#: process ends the pool).
_IN_CASE = [False]
_WORKER_SIGNALS = [0]


def _start_pool_worker(scenario: Scenario, columns: Sequence[str], cases: Cases) -> None:
    global _POOL_SWEEP
    _POOL_SWEEP = (scenario, columns, cases)
    clear_interruptions()  # a forked worker's copy of the sweep's signal state
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), _on_worker_signal)


def _on_worker_signal(signum: int, frame: Any) -> None:
    # Ctrl-C reaches the workers with the sweep's process (one process group), and the
    # sweep forwards SIGTERM: a running drive ends as interrupted, its outputs whole; a
    # worker between cases waits to be told to stop, printing no traceback
    _WORKER_SIGNALS[0] += 1
    if _IN_CASE[0] and _WORKER_SIGNALS[0] == 1:
        exc = Interrupted(signum)
        if on_signal(exc):  # (or after the drive's end-of-drive outputs, if it is writing)
            raise note_interruption(exc)


def _run_pool_case(i: int, out: str | None) -> dict[str, Any]:
    assert _POOL_SWEEP is not None  # set by _start_pool_worker
    scenario, columns, cases = _POOL_SWEEP
    if _WORKER_SIGNALS[0]:  # the sweep is ending: a case queued for this worker is not run
        raise Interrupted(signal.SIGTERM)
    _IN_CASE[0] = True
    try:
        return run_case(scenario, cases[i], columns, out)
    except SystemError as exc:  # a signal met in compiled code: an interruption
        interruption = interruption_behind(exc)
        if interruption is None:
            raise
        raise interruption from None  # (the cause would not reach the sweep's process)
    finally:
        _IN_CASE[0] = False


@dataclass
class SweepResult:
    """A finished (or interrupted) sweep: the table's ``columns`` and its :attr:`rows` in
    case order (kept in memory for a sweep of at most :data:`ROWS_KEPT` cases, unless told
    otherwise), how many ``cases`` it has, how many rows were written (``done``), the
    failures, where the files went, how long it took and the processor time its cases
    took, summed over the workers."""

    columns: list[str]
    #: The rows, or None when they were not kept in memory (see :attr:`rows`).
    kept_rows: list[dict[str, Any]] | None
    cases: int = 0
    done: int = 0
    #: How many cases ended in an error, and the rows of the first :data:`FAILURES_KEPT`.
    failures: int = 0
    first_failures: list[dict[str, Any]] = field(default_factory=list)
    out_dir: Path | None = None
    wall_time_s: float = 0.0
    runner: str = ""
    interrupted: bool = False
    cpu_time_s: float = 0.0
    #: The interruption that stopped it (Ctrl-C, or a signal's), to raise again.
    interruption: KeyboardInterrupt | None = field(default=None, repr=False, compare=False)

    @property
    def rows(self) -> list[dict[str, Any]]:
        """Every row written, in case order (an interrupted sweep's end with the rows of
        cases that finished past the first unfinished one). A sweep that did not keep its
        rows in memory raises :class:`~rrscore.errors.RrsError` saying where they are."""
        if self.kept_rows is None:
            where = f"in {self.out_dir / 'sweep.csv'}" if self.out_dir is not None \
                else "nowhere (no out directory; on_row is called with each)"
            raise RrsError(f"the rows of this sweep of {self.cases} cases were not kept in "
                           f"memory (more than {ROWS_KEPT:,}; run it with keep_rows=True to "
                           f"keep them): they are {where}")
        return self.kept_rows

    @property
    def failed(self) -> list[dict[str, Any]]:
        """The rows of the cases that ended in an error (all of them: needs :attr:`rows`;
        :attr:`first_failures` is kept whatever the sweep's size)."""
        return [r for r in self.rows if r["error"]]


class _Table:
    """The table as the runners finish its cases, in any order: each row goes to
    ``sweep.csv`` (whole, and on disk at once, so an interrupted sweep keeps its finished
    rows) and to ``on_row`` as soon as the rows of every earlier case have; ``sweep.json``
    at the end. Holds only the rows waiting for an earlier case (a handful: the runners
    hand out cases within :data:`WINDOW_PER_WORKER` of the first unwritten row), and every
    row when ``keep``."""

    def __init__(self, out: Path | None, columns: list[str], cases: Cases, keep: bool,
                 on_row: Callable[[dict[str, Any]], None] | None) -> None:
        self.out, self.columns, self.cases, self.on_row = out, columns, cases, on_row
        self.rows: list[dict[str, Any]] | None = [] if keep else None
        self.waiting: dict[int, dict[str, Any]] = {}
        self.next = 0  # the case whose row is written next
        self.done = self.failures = 0
        self.first_failures: list[dict[str, Any]] = []
        self.cpu_s = 0.0
        # whole rows, each on disk as it comes (a full disk cuts the file back to them)
        self._file = LineFile(out / "sweep.csv", columns) if out is not None else None

    def add(self, i: int, row: dict[str, Any]) -> None:
        """Case ``i``'s row, from :func:`run_case`; written with those it let through."""
        self.cpu_s += row.pop("_cpu_s", 0.0)
        self.waiting[i] = {"case": i, **{k: _plain(v) for k, v in self.cases[i].items()},
                           **row}
        while self.next in self.waiting:  # rows go out in case order whoever finishes first
            self._write(self.waiting.pop(self.next))
            self.next += 1

    def add_waiting(self) -> None:
        """The rows still waiting for an unfinished case (the sweep was interrupted)."""
        for i in sorted(self.waiting):
            self._write(self.waiting.pop(i))

    def _write(self, case_row: dict[str, Any]) -> None:
        row = {c: case_row.get(c) for c in self.columns}
        with writing_outputs():  # a signal now waits for the row to be whole on disk
            if self._file is not None:
                with _writing("sweep.csv"):
                    self._file.write([_cell(row[c]) for c in self.columns])
                    self._file.flush()
            self.done += 1
            if self.rows is not None:
                self.rows.append(row)
            if row["error"]:
                self.failures += 1
                if len(self.first_failures) < FAILURES_KEPT:
                    self.first_failures.append(row)
        if self.on_row is not None:
            self.on_row(row)

    def close(self, meta: dict[str, Any]) -> None:
        """Close ``sweep.csv`` and write ``sweep.json``: ``meta`` (the sweep's spec, how
        it ran and ended), the columns, where the rows are and the failures."""
        if self._file is None:
            return
        with _writing("sweep.csv"):
            self._file.close()
        doc = {**meta, "columns": self.columns, "rows_file": "sweep.csv",
               "order": "case", "done": self.done, "failures": self.failures,
               "first_failures": self.first_failures}
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
    :class:`~rrscore.errors.ConfigError` naming the key, before anything runs; so is a
    sweep of more than :data:`~rrscore.run.sweepcases.MAX_CASES` cases.
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
        if self.mode not in MODES:
            raise self._error(None, f"sweep mode: found {self.mode!r}, expected grid or zip")
        if not self.params:
            raise self._error(None, "a sweep needs at least one parameter")
        counts = {k: len(v) for k, v in self.params.items()}
        for key, n in counts.items():
            if not n:
                raise self._error(key, "found no values, expected at least one to sweep")
        if self.mode == "zip" and len(set(counts.values())) > 1:
            raise self._error(None, "zip sweep: found different numbers of values ("
                              + ", ".join(f"{k}: {n}" for k, n in counts.items())
                              + "), expected the same number for every key")
        total = self.cases().count
        if total > MAX_CASES:
            raise self._error(None, f"{self.mode} sweep of "
                              + " x ".join(f"{k} ({n})" for k, n in counts.items())
                              + f": found {total:,} cases, expected at most {MAX_CASES:,}")
        for key, values in self.params.items():
            seen: set[str] = set()
            for value in values:
                if repr(value) in seen:  # (each distinct value checked once)
                    continue
                if len(seen) == VALUES_CHECKED_FIRST:  # the rest: as their cases are built
                    break
                seen.add(repr(value))
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

    def cases(self) -> Cases:
        """The values of every case, in case order: a sequence whose items are made when
        asked for (``len``, index, iterate; ``list()`` makes them all)."""
        return Cases(self.params, self.mode)

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
            on_row: Callable[[dict[str, Any]], None] | None = None,
            keep_rows: bool | None = None) -> SweepResult:
        """Run every case and return the table in case order. ``workers`` local processes
        (1: in this process; at most :data:`MAX_WORKERS`), or the Dask cluster ``scheduler``
        (an address such as ``tcp://10.0.0.5:8786`` or a ``dask.distributed.Client``). With
        ``out``, writes ``sweep.csv`` (row by row, in case order), ``sweep.json`` (the
        sweep's spec, counts and failures), with the scenario's ``output.format =
        "parquet"`` ``sweep.parquet`` (the same table, written at the end from
        ``sweep.csv``, whole) and, unless the scenario's ``output.plots`` is false,
        ``sweep.png`` (each figure against each parameter, drawn at the end if not
        interrupted: :mod:`~rrscore.run.sweepplot`) there, and with ``save_runs`` each
        case's outputs to ``out/runs/case_NNNN``. ``on_row`` is called with each row as it
        is written. ``keep_rows`` keeps every row in memory (:attr:`SweepResult.rows`); by
        default a sweep of at most :data:`ROWS_KEPT` cases does. Ctrl-C or a signal stops
        the sweep at once and keeps the finished rows."""
        if isinstance(workers, bool) or not isinstance(workers, int) \
                or not 1 <= workers <= MAX_WORKERS:
            raise RrsError(f"workers: found {workers!r}, expected a whole number from 1 to "
                           f"{MAX_WORKERS}")
        if save_runs and out is None:
            raise RrsError("save_runs needs an output directory (out)")
        out_dir = Path(out) if out is not None else None
        cases = self.cases()
        runs = (out_dir / "runs").resolve() if save_runs and out_dir is not None else None
        width = max(4, len(str(len(cases) - 1)))

        def case_out(i: int) -> str | None:  # where case i's outputs go, if anywhere
            return str(runs / f"case_{i:0{width}d}") if runs is not None else None

        workers = min(workers, len(cases))  # no idle processes
        if scheduler is not None:
            _dask()  # before any file is written
            runner = "dask"
        elif workers > 1:
            runner = f"{workers} local workers"
        else:
            runner = "1 local worker"
        units = {p: self.scenario.unit_of(p) for p in self.params}
        meta = {"scenario": self.scenario.file, "mode": self.mode,
                "params": _plain(self.params), "units": units, "cases": len(cases),
                "runner": runner}
        keep = len(cases) <= ROWS_KEPT if keep_rows is None else keep_rows
        parquet = out_dir is not None and self.scenario.config["output"]["format"] == "parquet"
        if parquet:
            optional("pyarrow.parquet", "output.format = 'parquet'")  # before any file
        # the directory locked as a drive locks it (a second sweep or drive is refused)
        lock = prepare_output_dir(out_dir) if out_dir is not None else None
        try:
            table = _Table(out_dir, self.table_columns, cases, keep, on_row)
            result = self._run_cases(table, case_out, meta, scheduler, workers)
            if parquet:  # from sweep.csv, streaming: also an interrupted sweep's rows
                with writing_outputs(), _writing("sweep.parquet"):
                    csv_to_parquet(out_dir / "sweep.csv", out_dir / "sweep.parquet")
            if out_dir is not None and not result.interrupted \
                    and self.scenario.config["output"]["plots"]:
                # drawn from sweep.csv, streaming: bounded whatever the number of cases
                with _writing("sweep.png"):
                    sweep_plot(out_dir / "sweep.csv", out_dir / "sweep.png", list(self.params),
                               plottable_figures(self.columns),
                               f"{self.scenario.config['name']}: {result.done} cases", units)
            return result
        finally:
            if lock is not None:
                release_output_dir(out_dir, lock)

    def _run_cases(self, table: _Table, case_out: Callable[[int], str | None],
                   meta: dict[str, Any], scheduler: Any, workers: int) -> SweepResult:
        """:meth:`run`'s cases, once its output directory is locked."""
        cases = table.cases
        wall0 = time.perf_counter()
        interruption: KeyboardInterrupt | None = None
        try:
            if scheduler is not None:
                _run_dask(scheduler, self.scenario, self.columns, case_out, table)
            elif workers > 1:
                _run_pool(workers, self.scenario, self.columns, case_out, table)
            else:
                for i in range(len(cases)):
                    table.add(i, run_case(self.scenario, cases[i], self.columns, case_out(i)))
        except (KeyboardInterrupt, SystemError) as exc:
            # (a SystemError: a signal met in compiled code outside a drive's steps)
            interruption = interruption_behind(exc)
            if interruption is None:
                raise
            table.add_waiting()  # finished, but behind an unfinished case
        except Exception:
            # a signal lost inside numba's dispatcher while it compiled surfaces as another
            # error (a KeyError of argument types) with the interruption noted: rrs ends it
            # as that interruption, and so must sweep.json
            interruption = take_interruption()
            if interruption is None:
                raise
            table.add_waiting()
        finally:
            wall = time.perf_counter() - wall0
            table.close({**meta, "interrupted": interruption is not None,
                         "wall_time_s": round(wall, 3), "cpu_time_s": round(table.cpu_s, 3)})
        return SweepResult(table.columns, table.rows, len(cases), table.done, table.failures,
                           table.first_failures, table.out, wall, meta["runner"],
                           interruption is not None, table.cpu_s, interruption)


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
              case_out: Callable[[int], str | None], table: _Table) -> None:
    """The cases on ``workers`` local processes, handed out by index, at most
    :data:`WINDOW_PER_WORKER` per worker ahead of the first unwritten row."""
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    n, window = len(table.cases), WINDOW_PER_WORKER * workers
    with ProcessPoolExecutor(max_workers=workers, mp_context=_context(),
                             initializer=_start_pool_worker,
                             initargs=(scenario, columns, table.cases)) as pool, \
            warnings.catch_warnings():
        # Python 3.12+ warns of any fork with more than one native thread; _context
        # forks only with BLAS's idle pool besides this one
        warnings.filterwarnings("ignore", "This process .* is multi-threaded",
                                DeprecationWarning)
        running: dict[Any, int] = {}  # future: case
        handed = 0  # cases handed out
        try:
            while True:
                while handed < n and handed < table.next + window:
                    running[pool.submit(_run_pool_case, handed, case_out(handed))] = handed
                    handed += 1
                if not running:
                    break
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for f in sorted(finished, key=running.__getitem__):
                    table.add(running.pop(f), f.result())
        except BaseException:
            _stop_pool(pool, running)
            for f, i in running.items():  # rows that came in meanwhile are kept
                if f.done() and not f.cancelled() and f.exception() is None:
                    table.add(i, f.result())
            raise


def _stop_pool(pool: Any, running: Mapping[Any, int]) -> None:
    """End an interrupted pool at once: no case is started; the running ones are
    interrupted (each drive ends as an interrupted drive does, its outputs whole, within
    :data:`STOP_GRACE_S`, else its worker is killed), and a worker that has had its
    signal runs none of the cases queued for it."""
    from concurrent.futures import wait

    # (the executor's processes are not public; without them the cases run to their end)
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for p in processes:  # Ctrl-C reached them already; a SIGTERM to this process did not
        with contextlib.suppress(OSError, ValueError):
            os.kill(p.pid, signal.SIGTERM)
    # (a cancelled future is never "done" for wait; the shutdown cancels them later)
    wait([f for f in running if not f.cancel()], timeout=STOP_GRACE_S)
    for p in processes:
        with contextlib.suppress(OSError, ValueError):
            if p.is_alive():
                p.kill()


def _dask() -> Any:
    """The ``dask.distributed`` module, or a one-line error naming the extra to install."""
    try:
        import dask.distributed
    except ImportError:
        raise RrsError("a Dask scheduler needs dask.distributed, an optional extra: "
                       "pip install 'rrscore[dask]'") from None
    return dask.distributed


def _run_dask(scheduler: Any, scenario: Scenario, columns: Sequence[str],
              case_out: Callable[[int], str | None], table: _Table) -> None:
    """The cases on a Dask cluster, each sent with its values, at most
    :data:`WINDOW_PER_WORKER` per worker (4 workers at least) in flight ahead of the first
    unwritten row."""
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
        size = len(client.scheduler_info().get("workers", {}))
        n, window = len(table.cases), WINDOW_PER_WORKER * max(4, size)
        running: dict[Any, tuple[int, Any]] = {}  # key: case, future
        finished = as_completed()
        handed = 0

        def hand_out() -> None:
            nonlocal handed
            while handed < n and handed < table.next + window:
                f = client.submit(run_case, shared, table.cases[handed], list(columns),
                                  case_out(handed), pure=False)
                running[f.key] = (handed, f)
                finished.add(f)
                handed += 1

        try:
            hand_out()
            for f in finished:  # (as_completed takes futures added while it is iterated)
                i, _ = running.pop(f.key)
                table.add(i, f.result())
                hand_out()
        except BaseException:
            client.cancel([f for _, f in running.values()])
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


