"""``rrs report OUT_DIR`` and ``--report`` on ``rrs drive`` and ``rrs sweep``:
``report.html`` from a run's outputs (:mod:`rrscore.report`; needs the report extra)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from ..model.errors import RrsError

HELP = ("write OUT_DIR/report.html: a drive's, yard's or sweep's outputs as one interactive "
        "page (zoom, hover) that opens offline; needs the report extra "
        "(pip install 'rrscore[report]')")
FLAG_HELP = "also write OUT/report.html when the run ends (see rrs report; needs the report extra)"


def add_command(command: Callable[[str, str, str], argparse.ArgumentParser]) -> None:
    """Add ``rrs report`` through ``rrs``'s own command factory."""
    p = command("report", HELP, "rrs report out/freight_50")
    p.add_argument("out_dir", metavar="OUT_DIR", help="output directory of rrs drive or "
                   "rrs sweep (a yard's too)")
    p.set_defaults(func=run)


def add_flag(p: argparse.ArgumentParser) -> None:
    """``--report`` on a command that runs (drive, sweep)."""
    p.add_argument("--report", action="store_true", help=FLAG_HELP)


def run(args: argparse.Namespace) -> int:
    """``rrs report``: write the report, say where."""
    from ..report.page import write_report

    path = write_report(args.out_dir)
    print(f"report in {path}")
    return 0


def check_first(args: argparse.Namespace) -> None:
    """With ``--report``, refuse before any drive when Bokeh is missing (exit 2)."""
    if getattr(args, "report", False):
        from ..report.common import bokeh

        bokeh()


def after_run(args: argparse.Namespace) -> None:
    """With ``--report``, write the report of the run that just ended; a report that
    cannot be written is the output writer's failure (exit 1: the run's own outputs are
    there)."""
    if not getattr(args, "report", False):
        return
    from ..report.page import write_report

    try:
        path = write_report(Path(args.out))
    except RrsError as exc:
        error = RrsError(f"output writer failed: report.html: {exc}")
        error.during_drive = True  # type: ignore[attr-defined]
        raise error from None
    print(f"report in {path}")
