"""``scenario.resolved.toml`` at the start (the whole scenario, re-runnable as it is) and
``summary.json`` at the very end, after every other plugin has had its say."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ...model.hookspecs import hookimpl


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


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that ``path`` is always either whole or as it was: a
    temporary file in the same directory, synced, then renamed over it."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
