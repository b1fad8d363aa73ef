"""A scenario's limits, checked before anything runs: a drive no machine can finish (its
rows, its steps, its simulated time) is a config error naming the key that asks for it;
a control step longer than the drive is not an error, and no value overflows."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from conftest import CONFIGS

from rrscore.model.errors import ConfigError
from rrscore.run.drive import Drive
from rrscore.run.scenario import MAX_ROWS, MAX_STEPS, SERIES_BYTES, load_scenario

DEMO = CONFIGS / "scenarios" / "freight_50.toml"


@pytest.fixture(scope="module")
def demo():
    return load_scenario(DEMO)


@pytest.mark.parametrize(("values", "key", "fragment"), [
    ({"output.sample_interval": "1e-300 s"}, "scenario.output.sample_interval",
     "2.4e+303 rows of the time series"),
    ({"solver.control_step": "1e-300 s"}, "scenario.solver.control_step",
     "2.4e+303 control steps"),
    ({"solver.max_step": "1e-300 s"}, "scenario.solver.max_step", "makes at least 2.4e+303 steps"),
    ({"solver.method": "rk4", "solver.step": "1e-9 s"}, "scenario.solver.step",
     "2.4e+12 steps"),
    ({"stop.max_time": "1e308 s"}, "scenario.stop.max_time", "<= 1e+09"),
])
def test_a_drive_no_machine_finishes_is_a_config_error_naming_its_key(demo, values, key,
                                                                        fragment):
    with pytest.raises(ConfigError) as info:
        demo.with_values(values)
    message = str(info.value)
    assert f"freight_50.toml: {key}: found" in message
    assert fragment in message


def test_the_limits_sit_where_the_counts_reach_them(demo):
    # stop.max_time is 2,400 s: the last interval allowed and the first refused
    rows = 2400.0 / MAX_ROWS
    demo.with_values({"output.sample_interval": f"{rows * 1.001} s"})
    with pytest.raises(ConfigError):
        demo.with_values({"output.sample_interval": f"{rows * 0.999} s"})
    steps = 2400.0 / MAX_STEPS
    demo.with_values({"solver.control_step": f"{steps * 1.001} s"})
    with pytest.raises(ConfigError):
        demo.with_values({"solver.control_step": f"{steps * 0.999} s"})


def test_a_control_step_longer_than_the_drive_runs_without_control_steps(demo):
    # (its sample buffer was sized by control_step / sample_interval: 1e308 rows)
    summary = Drive(demo.with_values({"solver.control_step": "1e308 s",
                                      "stop.max_time": "30 s"})).run().summary
    assert summary["stop_reason"] == "max_time"
    assert summary["sim_time_s"] == pytest.approx(30.0)


def test_one_run_records_a_locomotive_s_signal_and_the_cars_speed_warning_once(demo):
    # (issue 50: vehicle_signals had to be signals every recorded vehicle has)
    scenario = demo.with_values({"output.vehicles": [0, 3, 7],
                                 "output.vehicle_signals": ["speed_mps", "traction_level"],
                                 "stop.max_time": "20 s"})
    assert scenario.warnings == (
        "output.vehicle_signals: 'traction_level' is recorded for the vehicles that have it; "
        "vehicles 3, 7 (freight_car) have none: NaN in their columns",)
    result = Drive(scenario).run()
    series = result.series
    assert np.isfinite(series["v0_traction_level"]).all()
    assert series["v0_traction_level"][-1] > 0.0  # the built-in driver is pulling away
    assert np.isnan(series["v3_traction_level"]).all() and np.isnan(
        series["v7_traction_level"]).all()
    assert np.isfinite(series["v3_speed_mps"]).all()
    assert result.summary["warnings"] == list(scenario.warnings)


def test_a_time_series_too_large_for_memory_is_refused_before_the_drive(demo, tmp_path):
    # 2,400 s at 2e-5 s is 1.2e8 rows (within MAX_ROWS); the demo's columns make it more
    # than SERIES_BYTES held in memory: it ran until the out-of-memory killer ended it.
    # The result keeps every coupling's force too (50 a row)
    columns = len(Drive(demo).columns) + demo.train.count - 1
    interval = 2400.0 * columns * 8 / SERIES_BYTES  # the shortest allowed
    big = demo.with_values({"output.sample_interval": f"{interval * 0.999} s"})
    with pytest.raises(ConfigError) as info:
        Drive(big)
    message = str(info.value)
    assert "freight_50.toml: scenario.output.sample_interval: found " in message
    assert f"rows of {columns} columns" in message and "GiB of time series" in message
    Drive(demo.with_values({"output.sample_interval": f"{interval * 1.001} s"}))  # fits
    # without the coupler forces, it fits
    Drive(big.with_values({"output.coupler_forces": False}))
    proc = subprocess.run([sys.executable, "-m", "rrscore.cli.main", "drive", str(DEMO),
                           "--out", str(tmp_path / "out"),
                           "--set", f"output.sample_interval='{interval * 0.999} s'"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2, proc.stderr
    # (after the warning about the CSV's size, which the drive would have written)
    *_, error = proc.stderr.strip().splitlines()
    assert error.startswith("rrs: error: ") and "GiB of time series" in error, proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "out").exists()
