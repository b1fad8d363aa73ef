"""The rules' braking-distance method: its parts evaluated by hand, and its stopping
distance against the simulated emergency stop of the same train."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import CONFIGS, make_scenario, shipped_drive

from rrscore import Drive, load_scenario
from rrscore.physics.brakeshoes import TONNE_FORCE, shoe_friction
from rrscore.physics.brakingdistance import (
    braking_distance,
    braking_ratio,
    calculated_friction,
    calculated_shoe_force,
    consist_axles,
    preparation_time,
    stopping_distances,
)

LOCO = {"config": "vehicles/simple_loco_air.toml"}
CAR = "vehicles/freight_car_4axle_air.toml"


@pytest.mark.parametrize("shoe", ["cast_iron", "composite"])
@pytest.mark.parametrize("force_tf", [1.5, 3.5])
@pytest.mark.parametrize("speed_kmh", [10.0, 50.0, 100.0])
def test_calculated_force_times_calculated_friction_is_the_shoes_friction_force(
        shoe, force_tf, speed_kmh):
    rules = calculated_friction(shoe, speed_kmh) * calculated_shoe_force(shoe, force_tf)
    actual = shoe_friction(shoe, force_tf * TONNE_FORCE, speed_kmh / 3.6) * force_tf
    assert rules == pytest.approx(actual, rel=1e-12)


def test_calculated_friction_and_force_are_the_rules_formulas_by_hand():
    # cast iron at 40 km/h: 0.27 * 140/300; 3 tf: 3 * (0.6/0.27) * 148/340
    assert calculated_friction("cast_iron", 40.0) == pytest.approx(0.126, rel=1e-12)
    assert calculated_shoe_force("cast_iron", 3.0) == pytest.approx(2.901961, rel=1e-6)
    # composite at 60 km/h: 0.36 * 210/270; 2 tf: 2 * (0.44/0.36) * 22/28
    assert calculated_friction("composite", 60.0) == pytest.approx(0.28, rel=1e-12)
    assert calculated_shoe_force("composite", 2.0) == pytest.approx(1.920635, rel=1e-6)


@pytest.mark.parametrize(("kind", "axles", "level", "on_descent"), [
    ("freight", 200, 7.0, 8.0),
    ("freight", 201, 10.0, 11.5),
    ("freight", 301, 12.0, 13.8),
    ("passenger", 40, 4.0, 4.5),
])
def test_the_preparation_time_follows_the_rules_bands_by_axles_and_grade(
        kind, axles, level, on_descent):
    # b_T = 100 N/kN; a 10 per mille descent is i = -10
    assert preparation_time(kind, axles, 0.0, 100.0) == pytest.approx(level)
    assert preparation_time(kind, axles, -10.0, 100.0) == pytest.approx(on_descent)


def _hand_theta(pressure: float) -> float:
    """Ten shipped gondolas' braking ratio by hand, their cylinders at ``pressure``: one
    car's piston (356 mm) less the 1.5 kN spring, times the rigging's 8 at 90 %, shared by
    8 shoes; the rules' calculated force of each; 8 shoes over the car's 92.5 t."""
    k = (pressure * math.pi * 0.356**2 / 4 - 1500.0) * 8 * 0.9 / 8 / 9806.65
    k_p = k * 0.6 / 0.27 * (16 * k + 100) / (80 * k + 100)
    return 8 * k_p / 92.5


def _hand_step(theta: float, vn: float, vk: float) -> float:
    """One of the rules' steps by hand (km/h), level track, the loaded car's resistance."""
    coefficient = 1000 * 1.06 / (2 * 9.80665 * 3.6**2)
    vm = (vn + vk) / 2
    b = 1000 * theta * 0.27 * (vm + 100) / (5 * vm + 100)
    w = 0.7 + (3 + 0.1 * vm + 0.0025 * vm**2) / 23.125  # loaded car, q0 = 23.125 t
    return coefficient * (vn**2 - vk**2) / (b + w)


def test_ten_cars_from_20_kmh_give_the_distance_worked_out_by_hand():
    train = make_scenario([{"config": CAR, "count": 10}]).build_train()
    result = braking_distance(train, 20.0 / 3.6)
    theta = _hand_theta(0.40e6)
    assert result.braking_ratio == {"cast_iron": pytest.approx(theta, rel=1e-9)}
    # 40 axles: t_p = 7 s on level track, run at 20 km/h
    assert result.preparation_time_s == pytest.approx(7.0)
    assert result.preparation_distance_m == pytest.approx(20 * 7 / 3.6)
    assert 1000 * 1.06 / (2 * 9.80665 * 3.6**2) == pytest.approx(4.17, abs=0.001)
    assert result.braking_distance_m == pytest.approx(
        _hand_step(theta, 20, 10) + _hand_step(theta, 10, 0), rel=1e-9)
    assert [s[:2] for s in result.steps] == [(20.0, 10.0), (10.0, 0.0)]


def test_the_driver_s_stopping_curve_at_a_share_of_the_pressure_is_worked_out_by_hand():
    # the built-in driver plans on 0.7 of the full pressure: 0.28 MPa in the cylinders;
    # the distance from each speed of the curve is the hand steps below it added up
    train = make_scenario([{"config": CAR, "count": 10}]).build_train()
    theta = _hand_theta(0.7 * 0.40e6)
    assert braking_ratio(train, 0.7) == {"cast_iron": pytest.approx(theta, rel=1e-9)}
    curve = stopping_distances(train, [0.0, 10 / 3.6, 20 / 3.6, 35 / 3.6], 0.7)
    hand = np.cumsum([0.0, _hand_step(theta, 10, 0), _hand_step(theta, 20, 10),
                      _hand_step(theta, 35, 20)])
    np.testing.assert_allclose(curve, hand, rtol=1e-9)


@pytest.mark.parametrize(("cars", "axles", "t_p"), [(50, 200, 7.0), (51, 204, 10.0)])
def test_the_consist_s_axles_choose_the_preparation_time_band_not_the_locomotive_s(
        cars, axles, t_p):
    # SimpleLoco (8 axles, with the driver's valve and an independent brake) and
    # four-axle cars: 4 * 50 = 200 axles in the consist, the first band (7 s on level
    # track), though the train's 208 would be the second; 4 * 51 = 204, the second (10 s).
    train = make_scenario([LOCO, {"config": CAR, "count": cars}]).build_train()
    result = braking_distance(train, 60 / 3.6)
    assert result.axles == axles
    assert result.preparation_time_s == pytest.approx(t_p)
    assert result.preparation_distance_m == pytest.approx(60 * t_p / 3.6)


def test_a_locomotive_hauled_dead_counts_with_the_cars(tmp_path):
    # A second SimpleLoco braked as a car (no valve, no independent brake) behind the
    # working one: its 8 axles join the 50 cars' 200, the second band.
    dead = tmp_path / "dead_loco.toml"
    dead.write_text((CONFIGS / "vehicles" / "simple_loco_air.toml").read_text()
                    .replace("driver_valve = true", "driver_valve = false")
                    .replace("independent = true", "independent = false"))
    train = make_scenario([LOCO, {"config": str(dead)},
                           {"config": CAR, "count": 50}]).build_train()
    assert consist_axles(train) == 208
    assert braking_distance(train, 60 / 3.6).preparation_time_s == pytest.approx(10.0)


def test_a_rising_grade_shortens_the_stop_and_a_falling_one_lengthens_it():
    train = make_scenario([{"config": CAR, "count": 10}]).build_train()
    level = braking_distance(train, 60 / 3.6).total_m
    assert braking_distance(train, 60 / 3.6, 6.0).total_m < level
    assert braking_distance(train, 60 / 3.6, -6.0).total_m > level


def test_a_train_without_distributors_has_no_rules_distance():
    train = make_scenario([{"config": "vehicles/freight_car_4axle.toml"}]).build_train()
    with pytest.raises(ValueError, match="no air-braked vehicle"):
        braking_distance(train, 10.0)


def test_the_rules_distance_and_the_simulated_emergency_stop_of_50_cars_agree_within_10pct():
    # SimpleLoco + 50 loaded cars (a consist of 200 axles), emergency from 80 km/h on
    # level track
    simulated = shipped_drive("brake_emergency_80").summary["brake_applications"][0]
    train = load_scenario(CONFIGS / "scenarios" / "brake_emergency_80.toml").build_train()
    rules = braking_distance(train, 80 / 3.6)
    assert rules.preparation_time_s == pytest.approx(7.0)  # up to 200 axles
    assert rules.total_m == pytest.approx(simulated["distance_m"], rel=0.10)


def test_the_rules_distance_and_the_simulated_stop_of_20_cars_from_100_kmh_agree_within_10pct():
    scenario = make_scenario([LOCO, {"config": CAR, "count": 20}],
                             driver=[{"at_time": "1 s", "set": {"brake_valve": 5}}],
                             start={"position": "1 km", "speed": "100 km/h"},
                             stop={"max_time": "300 s", "standstill": True})
    simulated = Drive(scenario).run().summary["brake_applications"][0]
    assert simulated["kind"] == "emergency" and simulated["end"] == "stopped"
    rules = braking_distance(scenario.build_train(), 100 / 3.6)
    assert rules.total_m == pytest.approx(simulated["distance_m"], rel=0.10)
