"""``rrs report OUT_DIR`` and ``--report`` on ``rrs drive`` and ``rrs sweep``:
``report.html`` from a run's outputs (:mod:`rrscore.report`; needs the report extra)."""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable
from pathlib import Path

from ..model.errors import RrsError

HELP = ("write OUT_DIR/report.html: a drive's, yard's or sweep's outputs as one interactive "
        "page (zoom, hover) that opens offline; needs the report extra "
        "(pip install 'rrscore[report]')")
FLAG_HELP = ("also write OUT/report.html when the run ends, however it ends (see rrs report; "
             "needs the report extra)")

Command = Callable[[argparse.Namespace], int]


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

    print(f"report in {write_report(args.out_dir)}")
    return 0


def with_report(command: Command) -> Command:
    """``command`` (one that runs into ``args.out``: drive, sweep) and, with ``--report``,
    the report of what it wrote. Bokeh missing is refused before anything runs (exit 2).
    After a run that ended by itself, a report that cannot be written is the output
    writer's failure (exit 1: the run's own outputs are there). After a run that a signal
    or a failure ended, the report of what it wrote is written if it can be, and the
    run's own ending is what ``rrs`` reports."""

    @functools.wraps(command)
    def run_and_report(args: argparse.Namespace) -> int:
        if not getattr(args, "report", False):
            return command(args)
        from ..report.common import bokeh
        from ..report.page import write_report

        bokeh()
        try:
            status = command(args)
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt) or getattr(exc, "during_drive", False):
                try:
                    print(f"report in {write_report(Path(args.out))}")
                except (RrsError, OSError):  # nothing usable: the run's error says enough
                    pass
            raise
        try:
            path = write_report(Path(args.out))
        except RrsError as exc:
            error = RrsError(f"output writer failed: report.html: {exc}")
            error.during_drive = True  # type: ignore[attr-defined]
            raise error from None
        print(f"report in {path}")
        return status

    return run_and_report
