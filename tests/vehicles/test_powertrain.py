"""The powertrains (rrscore.vehicles.powertrain): fuel burnt at constant power against the
fuel map worked by hand; the battery's account against the engine's own energy flows (an
independent integration of the same forces); regeneration ending at the charge limit."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
from conftest import CONFIGS

from rrscore import Drive
from rrscore.cli.plugincheck import vehicle_config
from rrscore.model.errors import ConfigError
from rrscore.run.scenario import load_scenario
from rrscore.vehicles.powertrain import (
    BatteryElectric,
    DieselElectric,
    battery_loss,
    battery_power,
    fuel_rate,
    notch_level,
)

# resistance a constant 100 kN (Davis A alone): at 2 MW the balancing speed is 20 m/s
CONSTANT_RESISTANCE = {"resistance": {"formula": "davis", "A": "100 kN", "B": 0, "C": 0,
                                      "starting": False}}
FUEL_MAP = {"fuel_map_power": ["0 MW", "1 MW", "3 MW"],
            "fuel_map_rate": ["18 kg/h", "216 kg/h", "576 kg/h"]}  # 0.005, 0.06, 0.16 kg/s


def test_fuel_map_is_straight_lines_between_its_points_and_idle_at_no_power():
    power = np.array([0.0, 1e6, 3e6])
    rate = np.array([0.005, 0.06, 0.16])
    for p, expected in [(0.0, 0.005), (-5e5, 0.005), (5e5, 0.0325), (2e6, 0.11),
                        (3e6, 0.16), (4e6, 0.16)]:
        assert fuel_rate(p, power, rate) == pytest.approx(expected, rel=1e-12)
    assert fuel_rate(1e6, np.array([np.nan]), np.array([np.nan])) == 0.0  # no map


@pytest.mark.parametrize(("throttle", "notches", "level"), [
    (0.55, 8, 0.5), (0.57, 8, 0.625), (1.0, 8, 1.0), (0.04, 8, 0.0), (0.37, 0, 0.37)])
def test_throttle_lever_takes_the_nearest_notch(throttle, notches, level):
    assert notch_level(throttle, notches) == pytest.approx(level, rel=1e-15)


def test_constant_power_burns_the_map_rate_times_time(rrs_train):
    """At throttle 1 the power cap binds (400 kN > 2 MW / 20 m/s): 100 kN at 20 m/s, the
    constant resistance exactly, so the speed and the power at the rail (2 MW) stay put
    and the engine burns the map's rate at 2 MW, 0.06 + (0.16 - 0.06) / 2 = 0.11 kg/s:
    66 kg in 600 s, 66 / 0.835 = 79.04 L, 66 * 3.186 = 210.3 kg CO2, 1.2 GJ at the rail."""
    train = rrs_train("diesel_electric", vehicle_table=CONSTANT_RESISTANCE,
                      max_force="400 kN", max_power="2 MW", **FUEL_MAP)
    drive = train.drive([(0.0, "set throttle=1")], max_time="600 s",
                        start={"speed": "20 m/s"})
    np.testing.assert_allclose(drive.signal("speed_mps"), 20.0, rtol=1e-9)
    (fig,) = drive.summary["vehicle_figures"]
    assert fig["type"] == "diesel_electric"
    assert fig["fuel_kg"] == pytest.approx(0.11 * 600.0, rel=1e-9)
    assert fig["fuel_L"] == pytest.approx(0.11 * 600.0 / 0.835, rel=1e-9)
    assert fig["co2_kg"] == pytest.approx(0.11 * 600.0 * 3.186, rel=1e-9)
    assert fig["rail_energy_J"] == pytest.approx(2e6 * 600.0, rel=1e-9)
    # the state as a signal: fuel used grows at the rate in the time series too
    used = drive.signal("fuel_used_kg")
    np.testing.assert_allclose(used, 0.11 * drive.time, rtol=1e-9, atol=1e-12)
    assert drive.signal("notch")[-1] == 8.0


def test_a_lower_notch_burns_at_that_notch_s_power(rrs_train):
    """Notch 4 of 8 (throttle 0.55 rounds to it) pulls half the curve: with no curve half
    of max_force and of max_power, 1 MW at 10 m/s against 100 kN, at 0.06 kg/s."""
    train = rrs_train("diesel_electric", vehicle_table=CONSTANT_RESISTANCE,
                      max_force="400 kN", max_power="2 MW", **FUEL_MAP)
    drive = train.drive([(0.0, "set throttle=0.55")], max_time="300 s",
                        start={"speed": "10 m/s"})
    (fig,) = drive.summary["vehicle_figures"]
    assert drive.signal("notch")[-1] == 4.0
    assert fig["fuel_kg"] == pytest.approx(0.06 * 300.0, rel=1e-9)


def test_idle_burns_the_idle_rate_while_coasting_and_on_the_dynamic_brake(rrs_train):
    train = rrs_train("diesel_electric", vehicle_table=CONSTANT_RESISTANCE,
                      dynamic_brake_force="100 kN", **FUEL_MAP)
    drive = train.drive([(0.0, "set dynamic_brake_level=1")], max_time="50 s",
                        start={"speed": "20 m/s"})
    (fig,) = drive.summary["vehicle_figures"]
    assert fig["fuel_kg"] == pytest.approx(0.005 * 50.0, rel=1e-9)
    assert fig["rail_energy_J"] == 0.0


def test_shipped_diesel_drive_burns_what_its_fuel_rate_signal_integrates_to(tmp_path):
    """The shipped scenario: fuel used (the state) against the trapezoidal integral of the
    sampled fuel rate (a signal held per control step: the two agree to the sampling), the
    rail energy against the engine's own account of the drive force's work."""
    sc = load_scenario(CONFIGS / "scenarios" / "diesel_freight_level.toml")
    result = Drive(sc).run(tmp_path / "out")
    (fig,) = result.summary["vehicle_figures"]
    s = result.series
    assert fig["fuel_kg"] == pytest.approx(s["v0_fuel_used_kg"][-1], rel=1e-12)
    assert fig["fuel_kg"] == pytest.approx(np.trapezoid(s["v0_fuel_rate_kgps"], s["time_s"]),
                                           rel=5e-3)
    # the engine's drive work is traction less the dynamic brake's work
    dyn = np.trapezoid(s["v0_dynamic_brake_force_N"] * np.abs(s["speed_mps"]), s["time_s"])
    drive_work = result.summary["energy_per_vehicle"]["drive_J"][0]
    assert fig["rail_energy_J"] - dyn == pytest.approx(drive_work, rel=5e-3)
    written = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert written["vehicle_figures"][0]["fuel_L"] == pytest.approx(fig["fuel_kg"] / 0.835)


def test_battery_laws_split_the_round_trip_efficiency_evenly():
    e = math.sqrt(0.81)  # 0.9 each way
    assert battery_power(9e5, 0.0, 0.81) == pytest.approx(1e6, rel=1e-15)
    assert battery_power(0.0, 1e6, 0.81) == pytest.approx(-9e5, rel=1e-15)
    assert battery_loss(9e5, 0.0, 0.81) == pytest.approx(1e5, rel=1e-14)
    assert battery_loss(0.0, 1e6, 0.81) == pytest.approx(1e6 * (1 - e), rel=1e-14)
    # a round trip: 1 J in at the rail comes back as 0.81 J at the rail
    assert battery_power(battery_power(0.0, 1.0, 0.81) * -e, 0.0, 0.81) == pytest.approx(
        -battery_power(0.0, 1.0, 0.81), rel=1e-15)


BATTERY = {"battery_capacity": "200 kWh", "soc_initial": 0.5, "soc_max": 0.95,
           "soc_min": 0.05, "charge_power_max": "1 MW", "discharge_power_max": "1.5 MW",
           "round_trip_efficiency": 0.81, "max_force": "200 kN", "max_power": "2 MW",
           "dynamic_brake_force": "150 kN", "dynamic_brake_power": "2 MW",
           "dynamic_brake_min_speed": "3 km/h"}
LOW_RESISTANCE = {"resistance": {"formula": "davis", "A": "1 kN", "B": 0, "C": 0,
                                 "starting": False}}


def test_battery_account_closes_against_the_engine_s_energy_flows(rrs_train):
    """The battery's change of charge against the engine's account of the drive force's
    work (integrated by the engine from the axle torques, not by the plugin): traction
    (to 120 s, the battery giving work / 0.9) and regeneration (from 150 s, the battery
    taking work * 0.9); closes to 0.1 %."""
    train = rrs_train("battery_electric", vehicle_table=LOW_RESISTANCE, **BATTERY)
    drive = train.drive([(0.0, "set throttle=1"), (120.0, "set throttle=0"),
                         (150.0, "set dynamic_brake_level=1")], max_time="400 s",
                        signals=["speed_mps", "state_of_charge", "energy_drive_J"])
    t, work = drive.time, drive.signal("energy_drive_J")
    traction = float(np.interp(120.0, t, work))
    regenerated = traction - float(work[-1])
    assert traction > 1e8 and regenerated > 5e7  # both ways, in earnest
    e = 0.9
    given = (0.5 - drive.signal("state_of_charge")[-1]) * 200 * 3.6e6
    expected = traction / e - regenerated * e
    assert given == pytest.approx(expected, rel=1e-3)
    (fig,) = drive.summary["vehicle_figures"]
    losses = traction * (1 / e - 1) + regenerated * (1 - e)
    assert fig["battery_loss_J"] == pytest.approx(losses, rel=1e-3)
    assert fig["rail_energy_J"] - fig["regenerated_J"] == pytest.approx(
        drive.summary["energy_per_vehicle"]["drive_J"][0], rel=1e-3)
    assert abs(fig["battery_balance_error_J"]) <= 1e-6 * fig["rail_energy_J"]


def test_regeneration_stops_at_the_charge_limit(rrs_train):
    """From 94 % on the regenerative brake at 25 m/s the battery takes its charge limit,
    1 MW (the brake's 150 kN would give 3.75 MW): 1 % of 200 kWh, 7.2 MJ, in 7.2 s.
    At 95 % the brake lets go (its force 0: no resistor grid) and the charge stays,
    having passed 95 % by at most one control step's charging (1 MW * 0.05 s)."""
    params = {**BATTERY, "soc_initial": 0.94}
    train = rrs_train("battery_electric", vehicle_table=LOW_RESISTANCE, **params)
    drive = train.drive([(0.0, "set dynamic_brake_level=1")], max_time="30 s",
                        start={"speed": "25 m/s"},
                        output={"sample_interval": "0.05 s"},
                        signals=["speed_mps", "state_of_charge", "dynamic_brake_force_N",
                                 "battery_power_W"])
    soc, dyn = drive.signal("state_of_charge"), drive.signal("dynamic_brake_force_N")
    power = drive.signal("battery_power_W")
    capacity = 200 * 3.6e6
    assert dyn[0] == pytest.approx(1e6 / 0.9 / 25.0, rel=1e-9)  # the charge limit binds
    assert power[0] == pytest.approx(-1e6, rel=1e-9)
    full = np.argmax(soc >= 0.95)
    assert 0 < full and soc[full] <= 0.95 + 1e6 * 0.05 / capacity
    t_full = drive.time[full]
    assert t_full == pytest.approx(0.01 * capacity / 1e6, abs=0.5)  # ~7.2 s at <= 1 MW
    later = drive.time > t_full + 0.05 + 1e-9
    assert later.sum() > 100
    assert np.all(dyn[later] == 0.0)
    assert np.ptp(soc[later]) == 0.0
    assert soc.max() <= 0.95 + 1e6 * 0.05 / capacity


def test_powertrains_run_compiled(rrs_compiled):
    rrs_compiled(DieselElectric)
    rrs_compiled(BatteryElectric)


def test_a_consist_shares_the_notch_each_unit_giving_its_own_power(rrs_train):
    """A diesel-electric (2 MW cap, 100 kN resistance) and a battery tender (1 MW cap,
    50 kN) on one throttle for both (``all_vehicles``, as a multiple-unit trainline
    carries it), at 20 m/s: each balances its own resistance, so the speed holds and the
    diesel burns 0.11 kg/s while the battery gives 1 MW / 0.9. The battery's part ends at
    its discharge limit; the diesel goes on alone."""
    tender = vehicle_config("battery_electric", {
        **BATTERY, "battery_capacity": "10 kWh", "max_force": "400 kN", "max_power": "1 MW",
        "soc_initial": 0.5, "soc_min": 0.1},
        resistance={**CONSTANT_RESISTANCE["resistance"], "A": "50 kN"})
    train = rrs_train("diesel_electric", vehicle_table=CONSTANT_RESISTANCE, cars=1,
                      car=tender, max_force="400 kN", max_power="2 MW", **FUEL_MAP)
    drive = train.drive([(0.0, {"set": {"throttle": 1.0}, "all_vehicles": True})],
                        max_time="30 s", start={"speed": "20 m/s"},
                        output={"vehicles": [0, 1], "sample_interval": "0.05 s"},
                        signals=["speed_mps", "traction_force_N", "fuel_used_kg",
                                 "state_of_charge"])
    t = drive.time
    given = (0.5 - drive.signal("v1_state_of_charge")) * 10 * 3.6e6
    early = t <= 10.0
    np.testing.assert_allclose(drive.signal("speed_mps")[early], 20.0, rtol=1e-9)
    np.testing.assert_allclose(drive.signal("v0_fuel_used_kg")[early], 0.11 * t[early],
                               rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(given[early], 1e6 / 0.9 * t[early], rtol=1e-9, atol=1e-6)
    # 0.4 of 10 kWh at 1 MW / 0.9: empty at 12.96 s, then the tender pulls nothing
    empty = 0.4 * 10 * 3.6e6 * 0.9 / 1e6
    late = t > empty + 0.1
    assert np.all(drive.signal("v1_traction_force_N")[late] == 0.0)
    assert drive.signal("v0_traction_force_N")[-1] > 100e3  # the diesel alone, slowing
    soc = drive.signal("v1_state_of_charge")
    assert soc.min() >= 0.1 - 1.1e6 * 0.05 / (0.9 * 10 * 3.6e6)
    assert drive.speed_at(30.0) < 20.0


@pytest.mark.parametrize(("vehicle", "params", "words"), [
    ("diesel_electric", {"fuel_map_power": ["0 kW", "1 MW"], "fuel_map_rate": ["1 kg/h"]},
     "found 2 fuel_map_power and 1 fuel_map_rate entries; expected a rate for each power"),
    ("diesel_electric", {"fuel_map_power": ["1 MW", "0 kW"],
                         "fuel_map_rate": ["1 kg/h", "2 kg/h"]},
     "expected powers increasing"),
    ("diesel_electric", {"curve_throttle": [1, 1], "curve_speed": ["0 m/s", "10 m/s"],
                         "curve_force": ["100 kN"]},
     "found lists of curve_throttle 2, curve_speed 2, curve_force 1 entries"),
    ("battery_electric", {"soc_min": 0.9, "soc_max": 0.8},
     "found soc_min 0.9 and soc_max 0.8; expected soc_min below soc_max"),
])
def test_parameters_that_do_not_fit_together_are_a_config_error(rrs_train, vehicle, params,
                                                                 words):
    with pytest.raises(ConfigError, match=re.escape(words)) as caught:
        rrs_train(vehicle, **params).scenario()
    assert caught.value.key is not None and caught.value.key.endswith("params")
