"""``timeseries.csv`` (the scenario's signals) and ``coupler_forces.csv`` (every coupling's
force), written block by block as the drive samples, so an interrupted drive keeps them;
with ``output.format = "parquet"``, ``timeseries.parquet`` and ``coupler_forces.parquet``
instead, in row groups, put in place whole at the drive's end (:mod:`rrscore.run.tables`)."""

from __future__ import annotations

import numpy as np

from ...model.hookspecs import hookimpl
from ..recorder import Recorder
from ..tables import ParquetRows, coupler_force_columns


@hookimpl
def rrs_drive_start(drive) -> None:
    """Open the CSV files and write their headers."""
    if drive.out_dir is None:
        return
    drive.store["timeseries"] = table(drive, "timeseries", drive.columns)
    n = drive.train.count
    if drive.scenario.config["output"]["coupler_forces"] and n > 1:
        drive.store["coupler_forces"] = table(drive, "coupler_forces",
                                              coupler_force_columns(n - 1))


def table(drive, name: str, columns: list[str]) -> Recorder | ParquetRows:
    """The writer of table ``name`` in the drive's output directory, in the scenario's
    ``output.format``."""
    if drive.scenario.config["output"]["format"] == "parquet":
        return ParquetRows(drive.out_dir / f"{name}.parquet", columns)
    return Recorder(columns, drive.out_dir / f"{name}.csv", keep=False)


@hookimpl
def rrs_sample_rows(drive, t: np.ndarray, rows: np.ndarray) -> None:
    """Write the rows, and every coupling's force at the same instants."""
    series = drive.store.get("timeseries")
    if series is None:
        return
    series.record_many(rows)
    forces = drive.store.get("coupler_forces")
    if forces is not None:
        forces.record_many(np.column_stack([t, drive.sample_coupler_forces()]))


@hookimpl(tryfirst=True)
def rrs_drive_end(drive, result) -> None:
    """Flush and close the files: first of the end-of-drive outputs, so the rows waiting
    are on disk before the plots are drawn. Each is closed even if the other fails (a
    Parquet file left open would leave its temporary file behind)."""
    error: BaseException | None = None
    for name in ("timeseries", "coupler_forces"):
        rec = drive.store.pop(name, None)
        try:
            if rec is not None:
                rec.close()
        except BaseException as exc:  # (raised again below)
            error = error or exc
    if error is not None:
        raise error
