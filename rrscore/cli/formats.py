"""``--format csv|parquet`` of ``rrs drive`` and ``rrs sweep``: the scenario's
``output.format`` (:mod:`rrscore.run.tables`), set from the command line."""

from __future__ import annotations

import argparse
from typing import Any

from ..model.errors import ConfigError
from ..run.tables import optional
from ..yard.yard import YardScenario

FORMATS = ("csv", "parquet")


def format_opt(p: argparse.ArgumentParser) -> None:
    """Add ``--format`` to a command that drives scenarios."""
    p.add_argument("--format", choices=FORMATS,
                   help="file format of the tables (timeseries, coupler_forces, events; a "
                        "sweep's table): csv (default, written row by row) or parquet "
                        "(needs the analysis extra); overrides output.format")


def format_value(scenario: Any, fmt: str) -> dict[str, Any]:
    """The change ``--format fmt`` makes to ``scenario`` (for ``with_values``): refused,
    one line, for a yard (its tables are CSV only) and for parquet without pyarrow."""
    if isinstance(scenario, YardScenario):
        if fmt != "csv":
            raise ConfigError("--format", None, f"found {fmt!r} for a yard, expected csv: "
                              "a yard drive writes its tables as CSV only")
        return {}
    if fmt == "parquet":
        optional("pyarrow.parquet", "--format parquet")
    return {"output.format": fmt}
