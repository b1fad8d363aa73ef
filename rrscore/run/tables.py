"""A drive's tables for analysis: as pandas DataFrames (:meth:`DriveResult.to_pandas
<rrscore.run.drive.DriveResult.to_pandas>`) and as Parquet files (``output.format =
"parquet"``, ``rrs drive --format parquet``, ``rrs sweep --format parquet``).

The tables are the CSVs' (``timeseries``, ``coupler_forces``, ``events``, a sweep's
table), with the CSVs' column names, which carry their units (``speed_mps``,
``c3_force_N``, ``time_s``). pandas and pyarrow are an optional extra
(``pip install 'rrscore[analysis]'``); without them these functions raise
:class:`MissingExtra`, one line naming the extra.

Every Parquet file is written whole or not at all: into a temporary file beside it, a
row group at a time (memory bounded however long the drive), synced and renamed into
place when complete. A drive that is interrupted (Ctrl-C, a signal) still ends its
files with the rows so far, as its CSVs would; one killed outright (SIGKILL) leaves no
Parquet file, where a CSV would keep the rows written before the kill.
"""

from __future__ import annotations

import csv
import importlib
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..model.errors import RrsError
from ..model.events import Event
from .files import replace_whole

#: The optional extra that brings pandas and pyarrow.
EXTRA = "analysis"

#: The columns of ``events.csv`` (and of the events table): ``value`` is in the unit
#: :data:`rrscore.model.events.KINDS` gives for its event.
EVENT_COLUMNS = ["time_s", "event", "where", "value", "detail"]

#: Rows gathered before a Parquet row group is written (of ``timeseries`` and
#: ``coupler_forces``): a few megabytes for a wide table, few row groups for a long drive.
ROW_GROUP_VALUES = 1 << 20


class MissingExtra(RrsError, ImportError):
    """pandas or pyarrow is not installed: the message names the extra that brings it."""


def optional(module: str, purpose: str) -> Any:
    """Import ``module`` (pandas, pyarrow.parquet, ...), or raise :class:`MissingExtra`
    saying which extra to install for ``purpose``."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        top = module.split(".")[0]
        if isinstance(exc, ModuleNotFoundError) and exc.name in (top, module):
            why = "is not installed"
        else:  # installed but broken (built for another numpy, say): its first line
            lines = str(exc).strip().splitlines() or [type(exc).__name__]
            why = f"fails to import ({lines[0]})"
        raise MissingExtra(f"{purpose} needs {top}, which {why}; install the {EXTRA} "
                           f"extra: pip install 'rrscore[{EXTRA}]'") from None


def event_columns(events: Sequence[Event]) -> dict[str, np.ndarray]:
    """The events as the columns of ``events.csv``: ``time_s`` and ``value`` floats,
    ``event`` (the kind), ``where`` and ``detail`` strings."""
    return {"time_s": np.array([e.t for e in events], dtype=float),
            "event": np.array([e.kind for e in events], dtype=object),
            "where": np.array([e.where for e in events], dtype=object),
            "value": np.array([e.value for e in events], dtype=float),
            "detail": np.array([e.detail for e in events], dtype=object)}


def coupler_force_columns(count: int) -> list[str]:
    """The columns of ``coupler_forces.csv`` for ``count`` couplings."""
    return ["time_s"] + [f"c{j}_force_N" for j in range(count)]


@dataclass(frozen=True)
class Frames:
    """A drive's tables as pandas DataFrames, one row per sample (per event for
    ``events``), columns named as in the CSVs (units in the names: ``speed_mps``).

    ``coupler_forces`` is None where the drive has no such table (one vehicle, or
    ``output.coupler_forces = false``)."""

    #: The time series: ``time_s``, ``position_m``, ``speed_mps``, ... (timeseries.csv).
    timeseries: Any
    #: Every event: ``time_s``, ``event``, ``where``, ``value``, ``detail`` (events.csv).
    events: Any
    #: Every coupling's force: ``time_s``, ``c0_force_N``, ... (coupler_forces.csv).
    coupler_forces: Any | None


def frames(series: Mapping[str, np.ndarray], events: Sequence[Event],
           coupler_forces: Mapping[str, np.ndarray] | None) -> Frames:
    """The :class:`Frames` of a drive's ``series``, ``events`` and ``coupler_forces``."""
    pd = optional("pandas", "to_pandas()")
    return Frames(pd.DataFrame(dict(series)),
                  pd.DataFrame(event_columns(events), columns=EVENT_COLUMNS),
                  None if coupler_forces is None else pd.DataFrame(dict(coupler_forces)))


def write_parquet(path: str | Path, columns: Mapping[str, np.ndarray]) -> None:
    """Write ``columns`` (name to array, all of one length) as a Parquet file, whole or
    not at all."""
    pa = optional("pyarrow", "Parquet output")
    pq = optional("pyarrow.parquet", "Parquet output")
    table = pa.table({k: _arrow_array(pa, v) for k, v in columns.items()})
    replace_whole(path, lambda fh: pq.write_table(table, fh))


def _arrow_array(pa: Any, values: np.ndarray) -> Any:
    if values.dtype == object:  # (strings: an empty column is still a string column)
        return pa.array(values.tolist(), type=pa.string())
    return pa.array(values)


def read_parquet(path: str | Path) -> dict[str, np.ndarray]:
    """A Parquet table of numbers written by a drive, as ``{column: array}`` (an
    :class:`~rrscore.model.errors.RrsError` naming the file if it cannot be read)."""
    pq = optional("pyarrow.parquet", f"reading {path}")
    try:
        table = pq.read_table(path)
    except (OSError, ValueError) as exc:  # (pyarrow's ArrowInvalid is a ValueError)
        raise RrsError(f"{path}: cannot be read ({exc}), expected a table a drive wrote") \
            from None
    return {name: table.column(name).to_numpy() for name in table.column_names}


class ParquetRows:
    """A Parquet file of float columns written as rows come (:meth:`record_many`), as
    :class:`~rrscore.run.recorder.Recorder` writes a CSV: row groups of about
    :data:`ROW_GROUP_VALUES` values go to a temporary file beside ``path``, which
    :meth:`close` completes, syncs and renames to ``path``. :meth:`discard` (or a failure
    in :meth:`close`) removes it: the file is whole or absent."""

    def __init__(self, path: str | Path, columns: list[str]) -> None:
        pa = optional("pyarrow", "Parquet output")
        self._pq = optional("pyarrow.parquet", "Parquet output")
        self.path = Path(path)
        self.columns = columns
        self._schema = pa.schema([(c, pa.float64()) for c in columns])
        self._tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        self._fh = open(self._tmp, "wb")  # noqa: SIM115
        try:
            self._writer = self._pq.ParquetWriter(self._fh, self._schema)
        except BaseException:
            self.discard()
            raise
        self._pending: list[np.ndarray] = []
        self._rows = 0
        self._group_rows = max(1024, ROW_GROUP_VALUES // max(len(columns), 1))

    def record_many(self, rows: np.ndarray) -> None:
        """Add rows (a 2-D array, values in column order)."""
        self._pending.append(np.array(rows, dtype=float))
        self._rows += len(rows)
        if self._rows >= self._group_rows:
            self._write_group()

    def _write_group(self) -> None:
        if not self._pending:
            return
        data = np.concatenate(self._pending)
        self._pending, self._rows = [], 0
        self._writer.write_batch(_batch(self._schema, data))

    def close(self) -> None:
        """Write the rows waiting, complete the file and put it in place (safe to call
        twice); on failure, remove it and raise."""
        if self._writer is None:
            return
        try:
            self._write_group()
            self._writer.close()
            self._fh.flush()
            os.fsync(self._fh.fileno())
            self._fh.close()
            os.replace(self._tmp, self.path)
        finally:
            self.discard()

    def discard(self) -> None:
        """Close and remove the temporary file, leaving no ``path`` (safe to call twice)."""
        self._writer = None
        self._pending = []
        if not self._fh.closed:
            self._fh.close()
        self._tmp.unlink(missing_ok=True)


def _batch(schema: Any, data: np.ndarray) -> Any:
    pa = optional("pyarrow", "Parquet output")
    return pa.record_batch([pa.array(np.ascontiguousarray(data[:, i]))
                            for i in range(data.shape[1])], schema=schema)


#: The rows of a CSV converted at a time by :func:`csv_to_parquet`.
CSV_BATCH_ROWS = 50_000


def csv_to_parquet(csv_path: str | Path, parquet_path: str | Path) -> None:
    """Write a CSV table (a sweep's ``sweep.csv``) as Parquet, whole or not at all, in
    bounded memory: one pass finds each column's type (integers or floats where every
    non-empty cell is one, else strings), a second writes row groups of
    :data:`CSV_BATCH_ROWS` rows. An empty cell is null in a column of numbers and ""
    in a column of strings (a sweep's ``error`` is "" where the case ran)."""
    pa = optional("pyarrow", "Parquet output")
    pq = optional("pyarrow.parquet", "Parquet output")
    with open(csv_path, newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        header = next(reader)
        found: list[str | None] = [None] * len(header)  # no cell seen yet
        for row in reader:
            for i, cell in enumerate(row):
                if cell != "" and found[i] != "str":
                    found[i] = _widen(found[i], cell)
    kinds = [k or "str" for k in found]
    types = {"int": pa.int64(), "float": pa.float64(), "str": pa.string()}
    schema = pa.schema([(c, types[k]) for c, k in zip(header, kinds, strict=True)])

    def write(out) -> None:
        with open(csv_path, newline="", encoding="utf-8") as fh, \
                pq.ParquetWriter(out, schema) as writer:
            reader = csv.reader(fh)
            next(reader)
            for rows in _chunks(reader, CSV_BATCH_ROWS):
                writer.write_table(pa.table(
                    [pa.array([_cell(r[i], kinds[i]) for r in rows], type=schema.field(i).type)
                     for i in range(len(header))], schema=schema))

    replace_whole(parquet_path, write)


def _widen(kind: str | None, cell: str) -> str:
    """The narrowest of int, float, str that holds both a column's cells so far (of
    ``kind``; None: none yet) and ``cell``."""
    if kind in (None, "int"):
        try:
            int(cell)
            return "int"
        except ValueError:
            pass
    try:
        float(cell)
        return "float"
    except ValueError:
        return "str"


def _cell(text: str, kind: str) -> Any:
    if text == "":
        return "" if kind == "str" else None
    return int(text) if kind == "int" else float(text) if kind == "float" else text


def _chunks(rows: Iterable[list[str]], size: int) -> Iterable[list[list[str]]]:
    chunk: list[list[str]] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk

