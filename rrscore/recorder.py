"""Recording a drive: rows of signals written to ``timeseries.csv`` as they are sampled,
so a drive that stops early, by interruption or error, keeps what it wrote."""

from __future__ import annotations

import csv
import time
from pathlib import Path

import numpy as np


class Recorder:
    """Collects sampled rows in memory and, with a file, writes each row as it comes."""

    FLUSH_SECONDS = 1.0

    def __init__(self, columns: list[str], path: str | Path | None = None) -> None:
        self.columns = columns
        self.rows: list[list[float]] = []
        self._fh = None
        self._writer = None
        self._last_flush = time.monotonic()
        if path is not None:
            self._fh = open(path, "w", newline="", encoding="utf-8")  # noqa: SIM115
            self._writer = csv.writer(self._fh)
            self._writer.writerow(columns)
            self._fh.flush()

    def record(self, row: list[float]) -> None:
        """Add one row (values in column order)."""
        self.rows.append(row)
        if self._writer is not None:
            self._writer.writerow([f"{v:.10g}" for v in row])
            now = time.monotonic()
            if now - self._last_flush > self.FLUSH_SECONDS:
                self._fh.flush()
                self._last_flush = now

    def close(self) -> None:
        """Flush and close the file (safe to call twice)."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None
            self._writer = None

    def series(self) -> dict[str, np.ndarray]:
        """The recorded columns as arrays."""
        data = np.array(self.rows, dtype=float).reshape(len(self.rows), len(self.columns))
        return {c: data[:, i] for i, c in enumerate(self.columns)}
