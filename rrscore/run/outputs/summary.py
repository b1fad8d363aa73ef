"""``scenario.resolved.toml`` at the start (the whole scenario, re-runnable as it is) and
``summary.json`` at the very end, after every other plugin has had its say."""

from __future__ import annotations

import json

from ...model.hookspecs import hookimpl
from ..files import write_atomically


@hookimpl
def rrs_drive_start(drive) -> None:
    """Write the resolved scenario first, so even a drive that fails at once leaves it."""
    if drive.out_dir is not None:
        drive.scenario.write_resolved(drive.out_dir / "scenario.resolved.toml")


@hookimpl(trylast=True)
def rrs_drive_end(drive, result) -> None:
    """Write ``summary.json`` (last, so plugins may add keys to ``result.summary``)."""
    if drive.out_dir is not None:
        text = json.dumps(result.summary, indent=2) + "\n"
        write_atomically(drive.out_dir / "summary.json", text)
