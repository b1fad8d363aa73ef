"""``events.csv``: every event (slip, re-adhesion, couplings, impacts, breaks, driver
actions) with its time, written as it happens."""

from __future__ import annotations

from ...model.hookspecs import hookimpl
from ..recorder import LineFile

COLUMNS = ["time_s", "event", "where", "value", "detail"]


@hookimpl
def rrs_drive_start(drive) -> None:
    """Open ``events.csv`` and write its header."""
    if drive.out_dir is None:
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
    """Close the file: first of the end-of-drive outputs, with the time series."""
    if "events" in drive.store:
        drive.store.pop("events").close()
