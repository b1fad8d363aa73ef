"""The built-in driver working a train's brakes: the dynamic brake first, graduated air
brake applications, the reservoirs' recharge, stops at a point planned on the brakes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import CONFIGS

import rrscore
from rrscore.driving.trainhandling import (
    MAX_RELEASE_BAND,
    RELEASE_BAND,
    full_service_aux,
    next_reduction,
    work_brakes,
    works_train_brakes,
)
from rrscore.engine.adapters import DRIVER_PARAMS, DRIVER_STATE
from rrscore.model.errors import ConfigError
from rrscore.physics.brakingdistance import braking_distance

DATA = Path(__file__).parent.parent / "data" / "trainhandling"
DESCENT = CONFIGS / "scenarios" / "descent_air_50.toml"
#: The loaded mode's full service cylinder pressure of the shipped cars and locomotive:
#: what a full service needs the auxiliary reservoirs to hold at the least, Pa.
FULL_SERVICE_CYLINDER = 0.40e6


def _descent(train: Path | None = None):
    sc = rrscore.load_scenario(DESCENT)
    if train is not None:
        sc = sc.with_values({"train": str(train)})
    sc = sc.with_values({"output.vehicles": list(range(sc.train.count)),
                         "output.vehicle_signals": ["aux_reservoir_Pa"]})
    result = rrscore.drive(sc)
    _applies_only_with_the_air_for_a_full_service(sc, result)
    return sc, result.summary


def _applies_only_with_the_air_for_a_full_service(sc, result):
    # at the start of every service application every auxiliary reservoir holds what a
    # full service needs (full_service_aux, 0.4718 MPa for the shipped car), read at the
    # last row before it: recharging only raises them, so that row is the lower bound
    t = result.series["time_s"]
    braked = [(i, full_service_aux(c)) for i, c in enumerate(sc.train.brake_configs)
              if c["system"] == "air" and c["distributor"] != "none"]
    starts = [a["start_time_s"] for a in result.summary["brake_applications"]
              if a["kind"] == "service"]
    assert starts
    for start in starts:
        row = int(np.searchsorted(t, start, side="right")) - 1
        for i, need in braked:
            assert result.series[f"v{i}_aux_reservoir_Pa"][row] >= need, (start, i)


def _holds_the_limit_on_the_train_brakes(summary, dynamic: bool):
    # no exceedance of the 60 km/h limit by more than 2 km/h
    worst = max((e["max_excess_kmh"] for e in summary["speed_limit_exceedances"]),
                default=0.0)
    assert worst < 2.0
    # at least 80 % of the braking energy through the air and dynamic brakes
    by_kind = summary["braking_energy_J"]["by_kind"]
    total = sum(by_kind.values())
    assert (by_kind["train_air_brake"] + by_kind["dynamic_brake"]) / total >= 0.8
    assert (by_kind["dynamic_brake"] > 0.0) == dynamic
    # the reservoirs never below the pressure of a full service's cylinders (and, in
    # _descent, never applied without what a full service needs)
    assert summary["lowest_aux_reservoir"]["pressure_Pa"] >= FULL_SERVICE_CYLINDER
    kinds = {a["kind"] for a in summary["brake_applications"]}
    assert "service" in kinds and "brake_level" not in kinds
    # graduated: every service application at least the smallest reduction, 0.05 MPa
    reductions = [a["reduction_Pa"] for a in summary["brake_applications"]
                  if a["kind"] == "service"]
    assert min(reductions) >= 0.05e6 - 1e3


def test_holds_a_heavy_train_down_a_long_descent_on_the_air_brake_alone():
    # SimpleLoco without a dynamic brake and 50 loaded air-braked cars (4,809 t), 12 km of
    # 8 per mille under 60 km/h: the train's air brake, cycled as the reservoirs recharge
    sc, summary = _descent(DATA / "freight_50_air_no_dynamic.toml")
    assert summary["distance_m"] >= 15000.0
    _holds_the_limit_on_the_train_brakes(summary, dynamic=False)


def test_holds_the_same_train_with_the_dynamic_brake_first():
    sc, summary = _descent()
    _holds_the_limit_on_the_train_brakes(summary, dynamic=True)
    first = summary["brake_applications"][0]
    assert first["kind"] == "dynamic"


def test_stops_at_a_point_from_80_kmh_planned_on_the_brakes():
    # SimpleLoco and 20 loaded cars with graduated-release distributors, from 80 km/h to a
    # point 4 km on: the front within 5 m of it, and the braking distance (from the first
    # application to rest) within 10 % of the rules' method for this train at the share of
    # its full brake force the driver plans on (0.7)
    sc = rrscore.load_scenario(DATA / "stop_80.toml")
    result = rrscore.drive(sc)
    front = result.series["position_m"][-1] + sc.train.half_length[0]
    assert result.summary["final_speed_mps"] == 0.0
    assert abs(front - 4000.0) <= 5.0
    # (the stop's brakes: those still on at rest)
    first = min(a["start_position_m"] for a in result.summary["brake_applications"]
                if a["end"] == "stopped")
    rules = braking_distance(sc.train, 80 / 3.6, pressure_share=0.7).total_m
    assert abs((front - first) / rules - 1.0) <= 0.10


def test_a_train_stopped_short_of_its_point_pulls_up_to_it():
    # the shipped 50 cars with direct-release distributors: over-braked near the point, the
    # driver can only release all, so the train stands short of it; the drive (standstill =
    # true) goes on, the driver pulls up and stops within 5 m with a second application
    sc = rrscore.load_scenario(DATA / "stop_80.toml").with_values(
        {"train": str(CONFIGS / "trains" / "freight_50_air.toml")})
    result = rrscore.drive(sc)
    front = result.series["position_m"][-1] + sc.train.half_length[0]
    assert result.summary["stop_reason"] == "standstill"
    assert abs(front - 4000.0) <= 5.0
    service = [a for a in result.summary["brake_applications"] if a["kind"] == "service"]
    assert [a["end"] for a in service] == ["released", "stopped"]


def test_a_multibody_train_comes_to_rest_as_promptly_as_a_rigid_one():
    # the same stop with the couplers held (dynamics = "rigid"): every vehicle of the
    # multi-body train at rest within 1 s of the rigid train, fronts within 1 m
    ends = {}
    for dynamics in ("rigid", "multibody"):
        sc = rrscore.load_scenario(DATA / "stop_80.toml").with_values({"dynamics": dynamics})
        result = rrscore.drive(sc)
        assert result.summary["stop_reason"] == "standstill"
        ends[dynamics] = (result.summary["sim_time_s"],
                          result.series["position_m"][-1] + sc.train.half_length[0])
    assert abs(ends["multibody"][0] - ends["rigid"][0]) <= 1.0
    assert abs(ends["multibody"][1] - ends["rigid"][1]) <= 1.0


def _driver_records():
    """A built-in driver's run state and settings, one zeroed record each, for its rules
    worked by hand."""
    return (np.zeros(1, dtype=DRIVER_STATE).view(np.recarray),
            np.zeros(1, dtype=DRIVER_PARAMS).view(np.recarray))


def test_a_train_back_over_its_target_unrecharged_is_released_lower_from_then_on():
    # direct release, the brakes released: 0.5 m/s over its target with a reservoir
    # short of a full service, the train gets the smallest application and the band
    # below the target at which it is released doubles (1, 2, 4 m/s, then no further);
    # recharged, it is applied at the target without widening the band
    state, params = _driver_records()
    p, s = params[0], state[0]
    p.min_reduction, p.full_reduction, p.full_service_aux = 50e3, 150e3, 471.8e3
    p.settle, p.graduated = 10.0, 0.0
    s.target, s.release_band, s.air_changed = 15.0, RELEASE_BAND, -100.0
    s.aux_low = 471.0e3
    assert next_reduction.py_func(60e3, 0.0, 15.4, state, params) == 0.0  # not yet
    bands = []
    for _ in range(4):
        assert next_reduction.py_func(60e3, 0.0, 15.6, state, params) == 50e3
        bands.append(float(s.release_band))
    assert bands == [2.0, 4.0, MAX_RELEASE_BAND, MAX_RELEASE_BAND] and MAX_RELEASE_BAND == 4.0
    s.release_band, s.aux_low = RELEASE_BAND, 480e3
    assert next_reduction.py_func(60e3, 0.0, 15.1, state, params) == 50e3
    assert s.release_band == RELEASE_BAND
    # applied (50 kPa held), the direct-release brakes go off only below the band
    s.reduction, s.release_band = 50e3, 4.0
    assert next_reduction.py_func(0.0, 0.0, 12.0, state, params) == 50e3
    assert next_reduction.py_func(0.0, 0.0, 10.9, state, params) == 0.0


def test_with_unbraked_cars_the_driver_brings_the_multibody_front_to_rest_with_the_rigid():
    # rigid_40km: four braked locomotives and 100 unbraked cars (brake_level driving). The
    # driver's stop is the same with slack: the lead stands within 1 s (a sample) of the
    # rigid train, at the same place within 0.5 m. (The cars then run out on couplers
    # pressed by the locomotives' braking alone: docs/driving.md.)
    ends = {}
    for dynamics in ("rigid", "multibody"):
        sc = rrscore.load_scenario(CONFIGS / "scenarios" / "rigid_40km.toml").with_values(
            {"dynamics": dynamics})
        series = rrscore.drive(sc).series
        speed = series["speed_mps"]
        moving = int(np.argmax(speed > 1.0))
        rest = moving + int(np.argmax(speed[moving:] == 0.0))
        assert speed[rest] == 0.0
        ends[dynamics] = (series["time_s"][rest],
                          series["position_m"][rest] + sc.train.half_length[0])
    assert abs(ends["multibody"][0] - ends["rigid"][0]) <= 1.0
    assert abs(ends["multibody"][1] - ends["rigid"][1]) <= 0.5


def test_holding_a_limit_on_direct_release_brakes_keeps_the_dynamic_brake_on_with_the_air():
    # the air applied (50 kPa) to hold a 15 m/s limit, the train now under it (the speed
    # law asks a little traction): the dynamic brake stays full down to the release speed
    # (15 - 2 m/s); braking down a falling target (a stop), it goes with the speed law
    state, params = _driver_records()
    p, s = params[0], state[0]
    p.has_dynamic, p.graduated, p.settle = 1.0, 0.0, 10.0
    p.min_reduction, p.full_reduction, p.full_service_aux, p.running = 50e3, 150e3, 0.0, 500e3
    s.reduction, s.air_changed, s.release_band = 50e3, -20.0, 2.0
    s.target, s.air_target, s.equalizing, s.aux_low = 15.0, 15.0, 450e3, 480e3
    work_brakes.py_func(0.2, 5.0, 14.0, state, params)
    assert (s.dynamic, s.reduction, s.command) == (1.0, 50e3, 0.0)
    work_brakes.py_func(0.2, 6.0, 12.9, state, params)  # under the release speed
    assert (s.dynamic, s.reduction) == (0.0, 0.0)
    s.reduction, s.air_target, s.target = 50e3, 15.0, 12.0  # a stop's falling curve
    work_brakes.py_func(0.2, 7.0, 11.5, state, params)
    assert s.dynamic == 0.0


def test_the_pressure_a_full_service_needs_is_worked_by_hand():
    # the shipped car: 0.40 MPa loaded, one 14 L cylinder on a 78 L reservoir:
    # 0.40 (1 + 14/78) = 0.4717949 MPa
    cfg = rrscore.load_scenario(DESCENT).train.brake_configs[1]
    assert full_service_aux(cfg) == pytest.approx(0.4e6 * (1 + 14 / 78), rel=1e-12)


def test_auto_works_the_train_brakes_only_with_a_valve_and_air_braked_cars():
    assert works_train_brakes("auto", rrscore.load_scenario(DESCENT).train)
    plain = rrscore.load_scenario(CONFIGS / "scenarios" / "rigid_40km.toml").train
    assert not works_train_brakes("auto", plain)
    assert works_train_brakes("train", plain) and not works_train_brakes("level", plain)


def test_train_brakes_without_a_brake_valve_is_a_config_error():
    sc = rrscore.load_scenario(CONFIGS / "scenarios" / "rigid_40km.toml")
    with pytest.raises(ConfigError) as err:
        sc.with_values({"autodriver.brakes": "train"})
    assert "autodriver.brakes" in str(err.value) and "driver_valve" in str(err.value)
