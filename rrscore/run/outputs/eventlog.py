"""``events.csv``: every event (slip, re-adhesion, couplings, impacts, breaks, driver
actions) with its time, written as it happens; with ``output.format = "parquet"``,
``events.parquet`` at the drive's end, whole."""

from __future__ import annotations

from ...model.hookspecs import hookimpl
from ..recorder import LineFile
from ..tables import EVENT_COLUMNS as COLUMNS
from ..tables import event_columns, write_parquet


@hookimpl
def rrs_drive_start(drive) -> None:
    """Open ``events.csv`` and write its header."""
    if drive.out_dir is None or drive.scenario.config["output"]["format"] != "csv":
        return
    drive.store["events"] = LineFile(drive.out_dir / "events.csv", COLUMNS)


@hookimpl
def rrs_event(drive, event) -> None:
    """One line per event."""
    if "events" in drive.store:
        drive.store["events"].write([f"{event.t:.6f}", event.kind, event.where,
                                     f"{event.value:.6g}", event.detail])


@hookimpl(tryfirst=True)
def rrs_drive_end(drive, result) -> None:
    """Close the file (or write ``events.parquet``): first of the end-of-drive outputs,
    with the time series."""
    if "events" in drive.store:
        drive.store.pop("events").close()
    elif drive.out_dir is not None and drive.scenario.config["output"]["format"] == "parquet":
        write_parquet(drive.out_dir / "events.parquet", event_columns(drive.events))
