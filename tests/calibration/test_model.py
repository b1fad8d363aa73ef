"""The calibrated kinematic model: TOML, predictions, and stopping a simulated train where
the predictor says."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rrscore.calibration.estimation import calibrate
from rrscore.calibration.model import ChangeModel, KinematicModel, LevelModel
from rrscore.calibration.sensors import (
    Command,
    RecordedDrive,
    SensorLayout,
    load_layout,
    synthetic_log,
)
from rrscore.model.config import Context
from rrscore.model.errors import RrsError
from rrscore.run.drive import Drive
from rrscore.run.scenario import scenario_from_table

from .conftest import CONFIGS, SENSOR_LINE


def _model() -> KinematicModel:
    levels = {5: LevelModel(5, 10.0, 0.01, 10, 100.0, 0.5, 20.0, 0.1, 10, True),
              8: LevelModel(8, 16.0, 0.02, 10, 256.0, 0.0, 32.0, 0.0, 0, False)}
    changes = {(5, 8): ChangeModel(5, 8, 0.3, 0.001, 10, True),
               (8, 5): ChangeModel(8, 5, -0.5, 0.002, 9, False)}
    return KinematicModel(levels, changes, 0.5, [], ["run 3: missed hit at S08"], "log.csv")


def test_model_round_trips_through_toml(tmp_path):
    model = _model()
    model.write(tmp_path / "m.toml")
    back = KinematicModel.read(tmp_path / "m.toml")
    assert back.levels == model.levels and back.changes == model.changes
    assert back.stop_deceleration == 0.5 and back.findings == model.findings


def test_a_broken_model_file_is_named(tmp_path):
    path = tmp_path / "m.toml"
    path.write_text("[[level]]\nlevel = 3\n")
    with pytest.raises(RrsError, match=r"m.toml: level\[0\]: missing key 'velocity_mps'"):
        KinematicModel.read(path)
    path.write_text("[model]\n")
    with pytest.raises(RrsError, match="found no"):
        KinematicModel.read(path)


def test_stop_plan_on_hand_worked_numbers():
    # level 5: 10 m/s, stops in 100 m. To stop at 3000 m: command at 2900 m; from 2700 m
    # that is 200 m, 20 s, away; S11 (2750 m) is the last sensor before it, 150 m = 15 s.
    layout = SensorLayout(tuple(f"S{i}" for i in range(1, 20)),
                          tuple(250.0 * i for i in range(1, 20)))
    plan = _model().predict_stop(5, 3000.0, 2700.0, layout)
    assert plan.command_position == 2900.0
    assert (plan.distance, plan.delay) == (200.0, 20.0)
    assert (plan.sensor, plan.sensor_delay) == ("S11", 15.0)
    assert not plan.too_late and plan.stop_if_now == 2800.0
    late = _model().predict_stop(5, 3000.0, 2950.0)
    assert late.too_late and late.stop_if_now == 3050.0
    assert "too late" in late.describe()
    with pytest.raises(RrsError, match="level 7 is not in the model"):
        _model().predict_stop(7, 3000.0)


def test_unmeasured_changes_take_the_mean_of_measured_ones_the_same_way():
    model = _model()
    assert model.acceleration(5, 8) == 0.3 and model.acceleration(3, 10) == 0.3
    assert model.acceleration(10, 3) == -0.5 and model.acceleration(8, 0) == -0.5


def test_levels_without_a_measured_stop_get_one_from_the_stop_deceleration(levels_run):
    layout = load_layout(levels_run)
    log = synthetic_log([RecordedDrive.from_dir(levels_run)], layout, repeats=3,
                        noise=0.005, seed=1)
    model = KinematicModel.from_calibration(calibrate(log, layout))
    assert model.levels[5].stop_measured
    b = model.stop_deceleration
    assert b == pytest.approx(0.5, rel=0.03)  # LevelLoco brakes at 0.5 m/s^2
    lv = model.levels[10]
    assert not lv.stop_measured
    assert lv.stop_distance == pytest.approx(lv.velocity ** 2 / (2 * b), rel=1e-12)
    assert lv.stop_time == pytest.approx(lv.velocity / b, rel=1e-12)


def _freight(driver, stop):
    """LevelLoco hauling 2 loaded cars (running resistance, couplers) on the sensor line."""
    table = {
        "train": {"vehicles": [
            {"config": {"vehicle": {"type": "level_loco", "empty_mass": "80 t", "length": "20 m",
                                    "num_axis": 4, "resistance": {"formula": "loco_power"}},
                        "params": {"hauled_mass": "185 t"}}},
            {"config": "vehicles/freight_car_4axle.toml", "count": 2}]},
        "route": "routes/sensor_line.toml",
        "start": {"position": "1400 m"},
        "driver": driver,
        "stop": {"max_time": "15 min", "standstill": True, **stop},
        "output": {"sample_interval": 0.1, "plots": False, "coupler_forces": False},
    }
    return scenario_from_table(table, Context("<test>", "scenario", CONFIGS))


def test_a_train_commanded_where_the_predictor_says_stops_at_the_target(tmp_path):
    # calibrate: level 6 from rest, stop commanded as S08 fires (3 repeats, 5 ms noise)
    calib = _freight([{"at_time": 0.0, "set": {"level": 6}},
                      {"at_point": "S08", "set": {"level": 0}}], {})
    Drive(calib).run(tmp_path / "calib")
    layout = load_layout(SENSOR_LINE)
    log = synthetic_log([RecordedDrive.from_dir(tmp_path / "calib")], layout, repeats=3,
                        noise=0.005, seed=2)
    model = KinematicModel.from_calibration(calibrate(log, layout))
    stop_distance = model.levels[6].stop_distance
    assert model.levels[6].stop_measured and 100.0 < stop_distance < 200.0
    # then stop at an arbitrary point between sensors, at level 6
    target = 2333.3
    plan = model.predict_stop(6, target, 1410.0, layout)
    run = _freight([{"at_time": 0.0, "set": {"level": 6}},
                    {"at_position": plan.command_position, "set": {"level": 0}}], {})
    s = Drive(run).run().series
    stopped = s["front_m"][-1]
    assert s["speed_mps"][-1] <= 0.01 and math.isfinite(stopped)
    print(f"stopped {stopped - target:+.3f} m from the target; stop distance "
          f"{stop_distance:.2f} m")
    assert abs(stopped - target) <= 0.02 * stop_distance, (stopped, target, stop_distance)


def test_the_trajectory_is_the_closed_form_of_a_start_and_a_stop():
    # from rest at 100 m: 0.5 m/s^2 to 10 m/s (20 s, 100 m), held to 40 s (200 m more),
    # then stopped at 1 m/s^2 (10 s, 50 m): exact at the step's end points, as the steps
    # are of constant acceleration and each change ends on a step (dt 0.01 s)
    model = KinematicModel(
        levels={5: LevelModel(5, 10.0, 0.0, 3, 50.0, 0.0, 10.0, 0.0, 3, True)},
        changes={(0, 5): ChangeModel(0, 5, 0.5, 0.0, 3, True)}, stop_deceleration=1.0)
    commands = [Command("r", 0.0, 5, None, 100.0), Command("r", 40.0, 0, None, None)]
    times = np.array([0.0, 10.0, 20.0, 30.0, 40.0, 45.0, 50.0, 60.0])
    want = [100.0, 125.0, 200.0, 300.0, 400.0, 437.5, 450.0, 450.0]
    assert model.trajectory(commands, 100.0, times) == pytest.approx(want, abs=1e-6)
