"""Drives shared by the calibration tests, run once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from rrscore import Drive, load_scenario

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
LEVELS = CONFIGS / "scenarios" / "calibration_levels.toml"
SENSOR_LINE = CONFIGS / "routes" / "sensor_line.toml"

#: LevelLoco's configured speed step and rates (configs/vehicles/level_loco.toml)
SPEED_STEP, ACCELERATION, DECELERATION = 2.0, 0.3, 0.5


@pytest.fixture(scope="session")
def levels_run(tmp_path_factory) -> Path:
    """The output directory of configs/scenarios/calibration_levels.toml."""
    out = tmp_path_factory.mktemp("calibration") / "levels"
    Drive(load_scenario(LEVELS)).run(out)
    return out
