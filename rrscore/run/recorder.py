"""Recording a drive: rows of signals written to ``timeseries.csv`` as they are sampled,
so a drive that stops early, by interruption or error, keeps what it wrote."""

from __future__ import annotations

import csv
import io
import os
import time
from pathlib import Path

import numpy as np
from numba import njit


class LineFile:
    """A CSV file written in whole lines: rows are formatted into complete lines and
    handed to the operating system in batches, so a drive killed at any moment leaves no
    torn row. A killed process's ``write`` may stop at any page of the file it copies
    (Linux checks for a fatal signal between pages), so no call spans a page boundary
    except one of a single row."""

    FLUSH_SECONDS = 1.0
    #: The page size ``write`` copies a file in.
    PAGE = 4096

    def __init__(self, path: str | Path, header: list[str]) -> None:
        self._fh = open(path, "wb", buffering=0)  # noqa: SIM115
        self._offset = 0  # bytes written so far: where in its page the next write starts
        self._pending: list[str] = []
        self._text = io.StringIO()
        self._csv = csv.writer(self._text)
        self._last_flush = time.monotonic()
        self.write(header)
        self.flush()

    def write(self, values: list) -> None:
        """Queue one row (strings or numbers, in column order)."""
        self._csv.writerow(values)
        self._pending.append(self._text.getvalue())
        self._text.seek(0)
        self._text.truncate()
        now = time.monotonic()
        if now - self._last_flush > self.FLUSH_SECONDS or len(self._pending) >= 4096:
            self.flush()
            self._last_flush = now

    def flush(self) -> None:
        """Hand the queued rows to the operating system (whole lines only): the rows that
        fit in the current page in one call, a row that crosses into the next in one.
        A row leaves the queue once written: an exception on the way (a signal's
        interruption, raised between two calls) leaves the rest queued for
        :meth:`close`, not lost."""
        if not self._pending or self._fh is None:
            return
        rows = [r.encode("utf-8") for r in self._pending]
        done = 0  # rows written
        try:
            while done < len(rows):
                room = self.PAGE - self._offset % self.PAGE
                if len(rows[done]) > room:  # this row crosses a page boundary: alone
                    self._write(rows[done])
                    done += 1
                    continue
                end, size = done, 0
                while end < len(rows) and size + len(rows[end]) <= room:
                    size += len(rows[end])
                    end += 1
                self._write(b"".join(rows[done:end]))
                done = end
        finally:
            del self._pending[:done]

    def _write(self, data: bytes) -> None:
        """Write whole rows; a write that fails part way (a full disk, a file size limit)
        is cut back to where they began, so the file still ends in a whole line."""
        start = self._offset
        view = memoryview(data)
        try:
            while view:  # a regular file takes it all at once; be safe anyway
                n = self._fh.write(view)
                self._offset += n
                view = view[n:]
        except OSError:
            if self._offset != start:
                try:
                    os.ftruncate(self._fh.fileno(), start)
                    self._fh.seek(start)
                    self._offset = start
                except OSError:
                    pass  # (nothing more can be done with this file)
            raise

    def close(self) -> None:
        """Flush and close (safe to call twice)."""
        if self._fh is not None:
            try:
                self.flush()
            finally:
                self._fh.close()
                self._fh = None


class Recorder:
    """Collects sampled rows in memory and, with a file, writes each row as it comes.

    Rows are kept as 64-bit floats in blocks of about :attr:`BLOCK_BYTES`, filled in
    place, so a long train's samples cost 8 bytes a value (a list of Python floats cost
    about 32) and the memory grows a block at a time, not a row at a time."""

    BLOCK_BYTES = 1 << 20

    def __init__(self, columns: list[str], path: str | Path | None = None,
                 keep: bool = True) -> None:
        self.columns = columns
        self.keep = keep  # keep rows in memory (for series()); a file writer need not
        self._blocks: list[np.ndarray] = []
        self._used = 0  # rows filled in the last block
        self._block_rows = max(16, self.BLOCK_BYTES // (8 * max(len(columns), 1)))
        self._file = LineFile(path, columns) if path is not None else None

    def __len__(self) -> int:
        """Rows kept in memory."""
        if not self._blocks:
            return 0
        return (len(self._blocks) - 1) * self._block_rows + self._used

    def record(self, row: list[float]) -> None:
        """Add one row (values in column order)."""
        if self.keep:
            if not self._blocks or self._used == self._block_rows:
                self._blocks.append(np.empty((self._block_rows, len(self.columns))))
                self._used = 0
            self._blocks[-1][self._used] = row
            self._used += 1
        if self._file is not None:
            self._file.write([f"{v:.10g}" for v in row])

    def record_many(self, rows: np.ndarray) -> None:
        """Add rows (a 2-D array, values in column order), as :meth:`record` one by one
        would."""
        if self.keep:
            done = 0
            while done < len(rows):
                if not self._blocks or self._used == self._block_rows:
                    self._blocks.append(np.empty((self._block_rows, len(self.columns))))
                    self._used = 0
                k = min(len(rows) - done, self._block_rows - self._used)
                self._blocks[-1][self._used:self._used + k] = rows[done:done + k]
                self._used += k
                done += k
        if self._file is not None:
            for row in rows.tolist():
                self._file.write([f"{v:.10g}" for v in row])

    def close(self) -> None:
        """Flush and close the file (safe to call twice)."""
        if self._file is not None:
            self._file.close()
            self._file = None

    def series(self) -> dict[str, np.ndarray]:
        """The recorded columns as arrays (a copy: recording may go on)."""
        if self._blocks:
            data = np.concatenate([*self._blocks[:-1], self._blocks[-1][:self._used]])
        else:
            data = np.empty((0, len(self.columns)))
        return {c: data[:, i] for i, c in enumerate(self.columns)}


class CouplingMonitor:
    """Per-coupling extremes and absorbed energy, updated after every solver step.

    The envelope keeps, for each coupling, the largest tension and compression
    with the time and the route position (of the coupling) where each occurred.
    The energy each coupling absorbed is not summed here: the energy account
    integrates it exactly, with the motion (:mod:`rrscore.energy`).
    """

    def __init__(self, count: int) -> None:
        self.tension = np.zeros(count)
        self.tension_time = np.zeros(count)
        self.tension_position = np.full(count, np.nan)
        self.compression = np.zeros(count)  # magnitudes
        self.compression_time = np.zeros(count)
        self.compression_position = np.full(count, np.nan)

    def update(self, t: float, position: np.ndarray, force: np.ndarray) -> None:
        """Take in one accepted step: coupling positions and forces."""
        self.update_many(np.array([t]), position[None, :], force[None, :])

    def update_many(self, t: np.ndarray, position: np.ndarray, force: np.ndarray) -> None:
        """Take in accepted steps in time order: their end times ``t`` (k), the couplings'
        positions (k, n - 1) and forces (k, n - 1). The first step to reach a new extreme
        gives its time and position."""
        _take_extremes(t, position, force, self.tension, self.tension_time,
                       self.tension_position, self.compression, self.compression_time,
                       self.compression_position)

    def summary(self, absorbed: np.ndarray) -> list[dict[str, float]]:
        """One entry per coupling, for summary.json, with the energy each ``absorbed`` (J,
        the work done on it: once it is unloaded again, what its draft gears took up)."""
        return [
            {"coupling": j,
             "max_tension_N": float(self.tension[j]),
             "max_tension_time_s": float(self.tension_time[j]),
             "max_tension_position_m": _finite_or_none(self.tension_position[j]),
             "max_compression_N": float(self.compression[j]),
             "max_compression_time_s": float(self.compression_time[j]),
             "max_compression_position_m": _finite_or_none(self.compression_position[j]),
             "energy_absorbed_J": float(absorbed[j])}
            for j in range(len(self.tension))
        ]


@njit(cache=True)
def _take_extremes(t, position, force, tension, tension_time, tension_position, compression,
                   compression_time, compression_position):  # pragma: no cover (compiled)
    """:meth:`CouplingMonitor.update_many`, in place."""
    for j in range(force.shape[0]):
        for c in range(force.shape[1]):
            f = force[j, c]
            if f > tension[c]:
                tension[c] = f
                tension_time[c] = t[j]
                tension_position[c] = position[j, c]
            if -f > compression[c]:
                compression[c] = -f
                compression_time[c] = t[j]
                compression_position[c] = position[j, c]


def _finite_or_none(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None
