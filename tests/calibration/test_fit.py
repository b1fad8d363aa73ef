"""Fitting Davis coefficients and F_max to a drive made with known values
(configs/scenarios/calibration_coastdown.toml: full traction for 12 s, then coasting)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rrscore import Drive, load_scenario
from rrscore.calibration import fit as fit_module
from rrscore.calibration.fit import Record, fit, get_value, load_record, write_fit
from rrscore.calibration.sensors import LogError
from rrscore.model.errors import RrsError

from .conftest import CONFIGS

COASTDOWN = CONFIGS / "scenarios" / "calibration_coastdown.toml"
VEHICLE = "train.vehicles[0].config."
KEYS = [VEHICLE + "vehicle.resistance.A", VEHICLE + "vehicle.resistance.B",
        VEHICLE + "vehicle.resistance.C", VEHICLE + "params.F_max"]
#: the values the drive is made with (configs/vehicles/simple_loco_davis.toml), SI
TRUE = np.array([4000.0, 150.0, 8.0, 450e3])
#: where the fits start: 20 % and 10 % off
START = TRUE * np.array([1.2, 0.8, 1.2, 0.9])


@pytest.fixture(scope="module")
def recorded():
    sc = load_scenario(COASTDOWN)
    s = Drive(sc).run().series
    return sc, s["time_s"], s["speed_mps"]


def test_the_scenario_holds_the_values_to_recover(recorded):
    sc, *_ = recorded
    assert [get_value(sc, k) for k in KEYS] == pytest.approx(TRUE, rel=1e-12)


def test_recovers_davis_and_f_max_from_noise_free_data_within_2_percent(recorded):
    sc, t, v = recorded
    result = fit(sc, Record("series", t, v), KEYS, initial=list(START))
    err = result.values / TRUE - 1
    print("noise-free relative errors", err)
    assert np.all(np.abs(err) < 0.02)
    assert result.rms < 1e-6


def test_recovers_them_from_noisy_data_within_5_percent(recorded, tmp_path, monkeypatch):
    sc, t, v = recorded
    rng = np.random.default_rng(5)
    noisy = v + rng.normal(0.0, 0.02, v.size)  # a speed recorder good to 2 cm/s
    result = fit(sc, Record("series", t, noisy), KEYS, initial=list(START))
    err = result.values / TRUE - 1
    print("noisy relative errors", err, "standard errors", result.std_errors / TRUE)
    assert np.all(np.abs(err) < 0.05)
    # the residuals are the noise, and each value is within 3 standard errors
    assert result.rms == pytest.approx(0.02, rel=0.1)
    assert np.all(np.abs(result.values - TRUE) < 3 * result.std_errors)
    legends = []
    real = fit_module.save_figure

    def keep(fig, path, **options):  # fit.png's legend: both curves, above the data
        legend = fig.axes[0].get_legend()
        legends.append(([t.get_text() for t in legend.get_texts()], legend.get_bbox_to_anchor()
                        .transformed(fig.axes[0].transAxes.inverted()).y0))
        real(fig, path, **options)

    monkeypatch.setattr(fit_module, "save_figure", keep)
    files = write_fit(result, Record("series", t, noisy, source="noisy"), tmp_path)
    assert legends == [(["recorded", "fitted model"], 1.0)]
    summary = json.loads(files[0].read_text())
    assert [p["key"] for p in summary["parameters"]] == KEYS
    refit = load_scenario(files[1])
    assert [get_value(refit, k) for k in KEYS] == pytest.approx(result.values, rel=1e-12)
    assert files[2].stat().st_size > 0


def test_an_unknown_key_is_named(recorded):
    sc, t, v = recorded
    with pytest.raises(RrsError, match=r"calibration_coastdown.toml: train.vehicles\[0\]"
                                       r".config.params.F_maxx: no such key"):
        fit(sc, Record("series", t, v), [VEHICLE + "params.F_maxx"])
    with pytest.raises(RrsError, match="found 'davis', expected a number"):
        fit(sc, Record("series", t, v), [VEHICLE + "vehicle.resistance.formula"])


def test_records_load_from_a_drive_a_series_or_a_sensor_log(tmp_path, levels_run):
    rec = load_record(levels_run)
    assert rec.kind == "series" and rec.times[0] == 0.0 and rec.speed.size == rec.times.size
    log = tmp_path / "log.csv"
    log.write_text("run,kind,sensor,time_s,level,position_m\na,hit,S01,1.5,,\n")
    rec = load_record(log)
    assert rec.kind == "sensors" and rec.sensors == ("S01",)
    bad = tmp_path / "bad.csv"
    bad.write_text("t,v\n1,2\n")
    with pytest.raises(RrsError, match="bad.csv: line 1: found columns"):
        load_record(bad)


def test_fits_to_sensor_passing_times(tmp_path):
    # LevelLoco from rest to level 5 (10 m/s) past S01..S04: its acceleration (0.3 m/s^2)
    # recovered from the passing times alone, starting from 0.25
    from rrscore.calibration.sensors import RecordedDrive, load_layout, synthetic_log
    from rrscore.model.config import Context
    from rrscore.run.scenario import scenario_from_table

    table = {"train": "trains/level_loco.toml", "route": "routes/sensor_line.toml",
             "start": {"position": "100 m"}, "driver": [{"at_time": 0.0, "set": {"level": 5}}],
             "stop": {"max_time": "120 s"}, "solver": {"control_step": "0.25 s"},
             "output": {"sample_interval": 0.1, "plots": False, "coupler_forces": False}}
    sc = scenario_from_table(table, Context("<test>", "scenario", CONFIGS))
    Drive(sc).run(tmp_path / "run")
    log = synthetic_log([RecordedDrive.from_dir(tmp_path / "run")], load_layout(tmp_path / "run"))
    log.write(tmp_path / "log.csv")
    record = load_record(tmp_path / "log.csv")
    assert record.sensors == ("S01", "S02", "S03", "S04")
    key = VEHICLE + "params.acceleration"
    result = fit(sc, record, [key], initial=[0.25])
    print("sensor fit", result.values, result.nfev, result.rms)
    assert result.values[0] == pytest.approx(0.3, rel=1e-3)
    assert result.rms < 1e-3  # s


def test_a_record_longer_than_the_scenario_can_simulate_blames_the_record():
    # (issue 50: the scenario's stop.max_time was blamed for the data file's length; the
    # check comes before any trial drive runs)
    scenario = load_scenario(CONFIGS / "scenarios" / "calibration_coastdown.toml")
    fine = scenario.with_values({"output.sample_interval": 1e-4})  # 1e10 rows in 1e6 s
    record = Record("series", np.array([0.0, 1e6]), np.array([1.0, 0.0]), (), "rec.csv")
    with pytest.raises(LogError, match=r"^rec\.csv: the record runs to 1e\+06 s, longer than "
                       r"the scenario can simulate: .*sample_interval"):
        fit(fine, record, ["train.vehicles[0].config.params.F_max"])
