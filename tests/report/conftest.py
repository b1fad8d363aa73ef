"""The runs the report's tests read: a drive, a sweep and a yard, each once per session
of tests/report."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import CONFIGS

import rrscore
from rrscore.report.page import write_report
from rrscore.run.sweep import Sweep

# Level, then 150 m at +5 ‰, then 2 km at -3 ‰ on a 600 m curve limited to 70 km/h: the
# train's front (50 air-braked cars behind it) crosses two changes of grade in its 20 s.
ELEMENTS = [{"length": "1.95 km", "speed_limit": "90 km/h"},
            {"length": "150 m", "grade": "5 permille", "speed_limit": "90 km/h"},
            {"length": "2 km", "grade": "-3 permille", "radius": "600 m",
             "speed_limit": "70 km/h"},
            {"length": "26 km"}]


@pytest.fixture(scope="package")
def drive_dir(tmp_path_factory) -> Path:
    """A drive of the shipped 50-car service-brake scenario on a route whose kilometre
    posts start at km 10."""
    scenario = rrscore.load_scenario(CONFIGS / "scenarios" / "brake_service_80.toml")
    scenario = scenario.with_values({"stop.max_time": "20 s", "start.position": "1.9 km",
                                     "route.start_chainage": "10 km",
                                     "route.elements": ELEMENTS})
    out = tmp_path_factory.mktemp("drive") / "out"
    rrscore.drive(scenario, out)
    write_report(out)
    return out


@pytest.fixture(scope="package")
def sweep_dir(tmp_path_factory) -> Path:
    """A sweep of the level-line scenario over start speed, duration and solver (12
    cases; the solver's name a parameter that is not a number)."""
    scenario = rrscore.load_scenario(CONFIGS / "scenarios" / "simple_loco_level.toml")
    params = {"start.speed": [0, "20 km/h", "40 km/h"], "stop.max_time": [5, 10],
              "solver.method": ["rk45", "rk23"]}
    out = tmp_path_factory.mktemp("sweep")
    Sweep(scenario, params).run(out, 1)
    write_report(out)
    return out


@pytest.fixture(scope="package")
def yard_dir(tmp_path_factory) -> Path:
    """The shipped buffer-stop yard, driven."""
    out = tmp_path_factory.mktemp("yard") / "out"
    rrscore.drive(CONFIGS / "yards" / "buffer_stop.toml", out)
    write_report(out)
    return out
