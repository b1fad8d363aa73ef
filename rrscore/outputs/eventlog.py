"""``events.csv``: every event (slip, re-adhesion, couplings, impacts, breaks, driver
actions) with its time, written as it happens."""

from __future__ import annotations

import csv

from ..hookspecs import hookimpl

COLUMNS = ["time_s", "event", "where", "value", "detail"]


@hookimpl
def rrs_drive_start(drive) -> None:
    """Open ``events.csv`` and write its header."""
    if drive.out_dir is None:
        return
    fh = open(drive.out_dir / "events.csv", "w", newline="", encoding="utf-8")  # noqa: SIM115
    writer = csv.writer(fh)
    writer.writerow(COLUMNS)
    drive.store["events"] = (fh, writer)


@hookimpl
def rrs_event(drive, event) -> None:
    """One line per event."""
    if "events" in drive.store:
        fh, writer = drive.store["events"]
        writer.writerow([f"{event.t:.6f}", event.kind, event.where, f"{event.value:.6g}",
                         event.detail])


@hookimpl
def rrs_drive_end(drive, result) -> None:
    """Close the file."""
    if "events" in drive.store:
        fh, _ = drive.store.pop("events")
        fh.close()
