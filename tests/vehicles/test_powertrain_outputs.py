"""Fuel and charge per route section, and powertrain.png (rrscore.vehicles.
powertrain_outputs): against a series worked by hand, and on a constant-power drive
whose front crosses a section boundary at a time known in advance."""

from __future__ import annotations

import numpy as np
import pytest

from rrscore.vehicles.powertrain_outputs import powertrain_columns, section_figures

# as in test_powertrain.py: 2 MW balances 100 kN at 20 m/s, burning 0.11 kg/s there
CONSTANT_RESISTANCE = {"resistance": {"formula": "davis", "A": "100 kN", "B": 0, "C": 0,
                                      "starting": False}}
FUEL_MAP = {"fuel_map_power": ["0 MW", "1 MW", "3 MW"],
            "fuel_map_rate": ["18 kg/h", "216 kg/h", "576 kg/h"]}


def test_each_interval_counts_in_the_element_holding_the_front_at_its_middle():
    # the front at 0, 100, ..., 500 m; elements from 0, 250 and 1000 m
    series = {"time_s": np.arange(6.0), "front_m": np.arange(6.0) * 100.0,
              "position_m": np.zeros(6), "v0_fuel_used_kg": np.array([0, 1, 3, 6, 10, 15.0]),
              "v1_state_of_charge": np.full(6, np.nan),  # a vehicle without it: left out
              "v0_speed_mps": np.ones(6)}
    assert powertrain_columns(series) == ["v0_fuel_used_kg"]
    rows = section_figures(series, np.array([0.0, 250.0, 1000.0]),
                           np.array([250.0, 750.0, 500.0]))
    # intervals' middles at 50, 150 | 250, 350, 450 m: 1 + 2 in the first, 3 + 4 + 5 next
    assert rows == [
        {"element": 0, "start_m": 0.0, "end_m": 250.0, "time_s": 2.0, "v0_fuel_used_kg": 3.0},
        {"element": 1, "start_m": 250.0, "end_m": 1000.0, "time_s": 3.0,
         "v0_fuel_used_kg": 12.0}]


def test_a_drive_reports_fuel_per_section_and_draws_it(rrs_train, tmp_path):
    """At the constant 2 MW of the hand-worked fuel test (0.11 kg/s at 20 m/s) the front
    runs from where it starts to the element boundary at 2 km in (2000 - x0) / 20 s;
    the boundary falls inside a sample interval (0.1 s), so within one interval's fuel."""
    train = rrs_train("diesel_electric", vehicle_table=CONSTANT_RESISTANCE,
                      max_force="400 kN", max_power="2 MW", **FUEL_MAP)
    train.route = [{"length": "2 km"}, {"length": "20 km"}]
    drive = train.drive([(0.0, "set throttle=1")], max_time="300 s",
                        start={"speed": "20 m/s"}, out=tmp_path / "out")
    x0 = float(drive.series["front_m"][0])
    first, second = drive.summary["powertrain_sections"]
    assert (first["element"], second["element"]) == (0, 1)
    assert first["v0_fuel_used_kg"] == pytest.approx(0.11 * (2000.0 - x0) / 20.0,
                                                     abs=0.11 * 0.1)
    total = drive.summary["vehicle_figures"][0]["fuel_kg"]
    assert first["v0_fuel_used_kg"] + second["v0_fuel_used_kg"] == pytest.approx(total,
                                                                                   rel=1e-12)
    assert first["time_s"] + second["time_s"] == pytest.approx(300.0)
    assert (tmp_path / "out" / "powertrain.png").stat().st_size > 0
