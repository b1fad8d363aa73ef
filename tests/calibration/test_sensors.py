"""Sensor layouts, sensor logs and synthetic logs of simulated drives."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rrscore.calibration.sensors import (
    Command,
    Hit,
    LogError,
    RecordedDrive,
    SensorLayout,
    SensorLog,
    Stop,
    crossings,
    load_layout,
    read_log,
    synthetic_log,
)

from .conftest import LEVELS, SENSOR_LINE


def test_layout_from_a_route_a_scenario_or_a_drive(levels_run):
    for source in (SENSOR_LINE, LEVELS, levels_run):
        layout = load_layout(source)
        assert len(layout) == 30
        assert layout.names[0] == "S01" and layout.positions[0] == 250.0
        assert layout.position("S21") == 5250.0
    assert load_layout(SENSOR_LINE, "S0?").names == tuple(f"S0{i}" for i in range(1, 10))


def test_layout_needs_two_sensors(tmp_path):
    with pytest.raises(LogError, match="expected at least two sensors"):
        load_layout(SENSOR_LINE, "nothing*")


def test_log_round_trip(tmp_path):
    log = SensorLog([Hit("a", "S01", 1.5), Hit("a", "S02", 3.25)],
                    [Command("a", 0.0, 4, None, 110.0), Command("a", 3.25, 0, "S02")],
                    [Stop("a", 20.0, 600.5)])
    path = tmp_path / "log.csv"
    log.write(path)
    back = read_log(path, load_layout(SENSOR_LINE))
    assert back.hits == log.hits and back.commands == log.commands and back.stops == log.stops
    assert back.runs == ["a"]


@pytest.mark.parametrize("row, message", [
    ("a,hit,S99,1.0,,", "line 2: sensor: found 'S99', expected a sensor of"),
    ("a,hit,S01,soon,,", "line 2: time_s: found 'soon', expected a number"),
    ("a,jump,S01,1.0,,", "line 2: kind: found 'jump', expected one of hit, command, stop"),
    ("a,command,,1.0,fast,", "line 2: level: found 'fast', expected a number"),
    ("a,command,,1.0,2.5,", "line 2: level: found '2.5', expected a whole number"),
    ("a,stop,,1.0,,", "line 2: position_m: empty"),
    (",hit,S01,1.0,,", "line 2: run: empty"),
])
def test_bad_log_lines_are_named(tmp_path, row, message):
    path = tmp_path / "bad.csv"
    path.write_text("run,kind,sensor,time_s,level,position_m\n" + row + "\n")
    with pytest.raises(LogError) as err:
        read_log(path, load_layout(SENSOR_LINE))
    assert str(err.value).startswith(str(path)) and message in str(err.value)


def test_a_log_without_the_columns_is_refused(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("when,where\n1,2\n")
    with pytest.raises(LogError, match="line 1: found columns"):
        read_log(path)


def test_crossing_times_of_a_constant_acceleration_are_exact():
    # x = 0.15 t^2 sampled every second: the front passes 100 m at sqrt(100 / 0.15) s
    t = np.arange(0.0, 60.0, 1.0)
    drive = RecordedDrive(t, 0.15 * t ** 2, 0.3 * t, [])
    layout = SensorLayout(("a", "b"), (100.0, 250.0))
    passed = dict(crossings(drive, layout))
    assert passed["a"] == pytest.approx(math.sqrt(100 / 0.15), abs=1e-9)
    assert passed["b"] == pytest.approx(math.sqrt(250 / 0.15), abs=1e-9)


def test_synthetic_log_of_a_drive(levels_run):
    layout = load_layout(levels_run)
    drive = RecordedDrive.from_dir(levels_run)
    assert [lv for _, lv in drive.commands] == [4, 6, 10, 3, 8, 5, 0]
    log = synthetic_log([drive], layout)
    sensors = [h.sensor for h in log.hits]
    assert sensors == [f"S{i:02d}" for i in range(1, 22)]  # it stops 100 m past S21
    # commands given as a sensor fired carry that sensor; the start carries its position
    # (the scenario's start position, which is the train's front)
    assert [c.sensor for c in log.commands] == [None, "S03", "S06", "S10", "S14", "S18", "S21"]
    assert log.commands[0].position == pytest.approx(100.0)
    # the stop: 10 m/s at 0.5 m/s^2 is 100 m (and up to one 50 ms control step of latency)
    assert log.stops[0].position - 5250.0 == pytest.approx(100.0 + 0.25, abs=0.26)


def test_timing_noise_and_missed_hits_follow_their_settings(levels_run):
    layout = load_layout(levels_run)
    drive = RecordedDrive.from_dir(levels_run)
    clean = synthetic_log([drive], layout)
    noisy = synthetic_log([drive], layout, repeats=40, noise=0.005, seed=7)
    truth = {h.sensor: h.time for h in clean.hits}
    errors = np.array([h.time - truth[h.sensor] for h in noisy.hits])
    assert len(noisy.runs) == 40 and errors.size == 40 * 21
    # 840 draws: the sample std within 10 % of 5 ms, the mean within 4 standard errors
    assert errors.std() == pytest.approx(0.005, rel=0.1)
    assert abs(errors.mean()) < 4 * 0.005 / math.sqrt(errors.size)
    missed = synthetic_log([drive], layout, repeats=40, miss=0.1, seed=7)
    share = 1 - len(missed.hits) / (40 * 21)
    assert share == pytest.approx(0.1, abs=0.035)  # 3.4 binomial standard deviations
    same = synthetic_log([drive], layout, repeats=3, noise=0.005, seed=7)
    assert same.hits == synthetic_log([drive], layout, repeats=3, noise=0.005, seed=7).hits
