"""Which report an output directory gets, and writing it: a sweep's (``sweep.csv``), a
yard's (``positions.csv`` or ``yard.resolved.toml``) or a drive's (the rest)."""

from __future__ import annotations

from pathlib import Path

from ..model.errors import RrsError
from .common import bokeh, write_html

#: The file written in the output directory.
REPORT = "report.html"


def kind_of(out_dir: Path) -> str:
    """``"sweep"``, ``"yard"`` or ``"drive"``: what wrote ``out_dir``, from its files."""
    if (out_dir / "sweep.csv").is_file() or (out_dir / "sweep.json").is_file():
        return "sweep"
    if (out_dir / "positions.csv").is_file() or (out_dir / "yard.resolved.toml").is_file():
        return "yard"
    if any((out_dir / n).is_file() for n in ("timeseries.csv", "summary.json", "events.csv")):
        return "drive"
    raise RrsError(f"{out_dir}: nothing to report: found none of timeseries.csv, "
                   "summary.json, events.csv (rrs drive), positions.csv (a yard) or "
                   "sweep.csv (rrs sweep)")


def write_report(out_dir: str | Path) -> Path:
    """Write ``report.html`` in ``out_dir`` from the outputs there (whole or not at all)
    and return its path; an :class:`~rrscore.model.errors.RrsError` says why not."""
    out_dir = Path(out_dir)
    if not out_dir.is_dir():
        raise RrsError(f"{out_dir}: not a directory, expected the output directory of "
                       "rrs drive or rrs sweep")
    bokeh()  # the missing extra first, whatever the directory holds
    kind = kind_of(out_dir)
    if kind == "sweep":
        from .sweep import sweep_parts as parts_of
    elif kind == "yard":
        from .yard import yard_parts as parts_of
    else:
        from .drive import drive_parts as parts_of
    parts, title = parts_of(out_dir)
    return write_html(parts, out_dir / REPORT, f"{title}: rrscore report")
