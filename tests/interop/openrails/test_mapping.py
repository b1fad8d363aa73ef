"""Each mapped token of the test files (tests/data/openrails) against its value worked by
hand from the file's text, and the tokens listed as not mapped."""

from __future__ import annotations

from pathlib import Path

import pytest

from rrscore.interop.openrails import read_vehicle
from rrscore.interop.openrails.stf import StfError

DATA = Path(__file__).resolve().parents[2] / "data" / "openrails"
TRAINSET = DATA / "TRAINS" / "TRAINSET"
LB = 0.45359237  # kg
LBF = LB * 9.80665  # N
INCH, FOOT, MPH = 0.0254, 0.3048, 1609.344 / 3600


def test_diesel_engine_in_utf16_maps_every_physics_token():
    v = read_vehicle(TRAINSET / "RRS_Diesel" / "rrs_diesel.eng")
    veh, p = v.vehicle, v.params
    assert (v.kind, veh["type"], veh["name"]) == ("engine", "table_loco", "RRS_Diesel")
    assert veh["empty_mass"] == 120 * 1000.0  # Mass ( 120t )
    assert veh["length"] == 21.2  # Size ( 3.1m 4.2m 21.2m ): the third
    assert veh["wheel_diameter"] == pytest.approx(2 * 0.5334)  # Engine WheelRadius ( 0.5334m )
    assert veh["num_axis"] == 6 and p["drive_axles"] == 6  # ORTSNumberDriveAxles ( 6 )
    assert veh["wheelset_inertia"] == 6000.0 / 6  # ORTSInertia ( 6000kgm^2 ) over 6 axles
    assert veh["resistance"] == {"formula": "davis", "A": 2800.0, "B": 36.0, "C": 9.5,
                                 "starting": False}
    assert p["max_power"] == 2200 * 1000.0  # MaxPower ( 2200kW )
    assert p["max_force"] == 350 * 1000.0  # MaxForce ( 350kN )
    assert p["brake_force"] == 300 * 1000.0  # MaxBrakeForce ( 300kN )
    assert p["dynamic_brake_force"] == 250 * 1000.0  # DynamicBrakesMaximumForce ( 250kN )
    assert p["dynamic_brake_min_speed"] == pytest.approx(5 / 3.6)  # ( 5km/h )
    # ORTSMaxTractiveForceCurves: notches 0, 0.5 and 1, points (m/s, N) as written
    assert p["curve_throttle"] == [0.0] * 2 + [0.5] * 5 + [1.0] * 9
    assert p["curve_speed"] == [0, 40, 0, 10, 20, 30, 40, 0, 5, 10, 15, 20, 25, 30, 35, 40]
    assert p["curve_force"] == [0, 0, 200e3, 150e3, 60e3, 30e3, 0, 350e3, 300e3, 250e3,
                                200e3, 150e3, 110e3, 80e3, 60e3, 0]
    assert p["dynamic_brake_curve_level"] == [0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    assert p["dynamic_brake_curve_speed"] == [0, 40, 0, 2, 5, 20, 40]
    assert p["dynamic_brake_curve_force"] == [0, 0, 0, 120e3, 250e3, 250e3, 100e3]
    # Coupling ( Spring ( Stiffness ( 2e7N/m ..) Damping ( 2e5N/m/s ..) Break ( 2.5e6N ..)
    # r0 ( 2.2cm ..) ) ): the first of each pair
    assert v.coupling == {"model": "spring_damper", "break_force": 2.5e6,
                          "params": {"stiffness": 2e7, "damping": 2e5,
                                     "slack": pytest.approx(2.2 * 0.01, rel=1e-12)}}
    assert v.unmapped == ["WagonShape", "Type", "WheelRadius", "BrakeSystemType",
                          "Engine.Type", "Engine.MaxContinuousForce", "Engine.MaxVelocity",
                          "Engine.CabView", "Engine.Sound"]
    assert v.sources["vehicle.empty_mass"] == "Mass ( 120t ), line 10"


def test_electric_engine_in_imperial_units_converts_each_by_hand():
    v = read_vehicle(TRAINSET / "RRS_Electric" / "rrs_electric.eng")
    veh, p = v.vehicle, v.params
    assert veh["empty_mass"] == pytest.approx(90 * 2240 * LB, rel=1e-12)  # 91,444.22 kg
    assert veh["length"] == pytest.approx(65 * FOOT, rel=1e-12)  # 19.812 m
    assert veh["wheel_diameter"] == pytest.approx(2 * 21 * INCH, rel=1e-12)  # 1.0668 m
    assert veh["num_axis"] == 4
    res = veh["resistance"]
    assert res["A"] == pytest.approx(300 * LBF, rel=1e-12)  # 1334.47 N
    assert res["B"] == pytest.approx(3 * LBF / MPH, rel=1e-12)  # 29.85 N/(m/s)
    assert res["C"] == pytest.approx(0.09 * LBF / MPH**2, rel=1e-12)  # 2.003 N/(m/s)^2
    assert p["max_power"] == pytest.approx(4000 * 550 * FOOT * LBF, rel=1e-12)  # 2.98 MW
    assert p["max_force"] == pytest.approx(60000 * LBF, rel=1e-12)  # 266.9 kN
    assert p["dynamic_brake_force"] == pytest.approx(45000 * LBF, rel=1e-12)
    assert p["brake_force"] == pytest.approx(50000 * LBF, rel=1e-12)
    c = v.coupling
    assert c["params"]["stiffness"] == pytest.approx(1e5 * LBF / INCH, rel=1e-12)  # 17.5 MN/m
    assert c["params"]["slack"] == pytest.approx(INCH, rel=1e-12)
    assert c["break_force"] == 450e3
    assert "curve_force" not in p  # no curves: the plugin pulls with throttle * MaxForce


def test_hopper_wagon_with_comments_takes_the_uncommented_mass():
    v = read_vehicle(TRAINSET / "RRS_Wagons" / "rrs_hopper.wag")
    veh = v.vehicle
    assert (v.kind, veh["type"]) == ("wagon", "freight_car")
    assert veh["empty_mass"] == pytest.approx(130 * 2000 * LB, rel=1e-12)  # not #Mass, Skip
    assert veh["wheel_diameter"] == pytest.approx(2 * 18 * INCH, rel=1e-12)
    assert veh["num_axis"] == 4
    assert veh["resistance"] == {"formula": "davis", "A": 737.5, "B": 14.23, "C": 1.558,
                                 "starting": False}
    assert v.params == {"hand_brake_force": 40e3}  # MaxHandbrakeForce ( 40kN )
    assert v.coupling == {"model": "spring_damper", "break_force": 3e6,
                          "params": {"stiffness": 1.5e7, "damping": 1e5,
                                     "slack": pytest.approx(1.1 * 0.01, rel=1e-12)}}
    assert "MaxBrakeForce" in v.unmapped and "BrakeSystemType" in v.unmapped


def test_coach_in_windows_1252_with_an_included_coupler():
    v = read_vehicle(TRAINSET / "RRS_Wagons" / "rrs_coach.wag")
    veh = v.vehicle
    assert veh["name"] == "Voiture Bétonnière"
    assert veh["empty_mass"] == 45000.0  # Mass ( 45000kg )
    assert veh["length"] == 26.4
    assert veh["wheel_diameter"] == pytest.approx(0.92)  # WheelRadius ( 460mm )
    assert v.params == {"hand_brake_force": 2.5e4}  # bare: N
    assert v.coupling["params"] == {"stiffness": 5e6, "slack": 0.005}  # from the .inc
    assert v.coupling["break_force"] == 1.2e6
    # no Davis coefficients: rrscore's freight formula, and the MSTS Friction unmapped
    assert veh["resistance"] == {"formula": "freight_4axle_roller"}
    assert v.unmapped == ["Type", "Friction"]


def test_tank_wagon_in_utf16_with_two_axles():
    v = read_vehicle(TRAINSET / "RRS_Wagons" / "rrs_tank.wag")
    veh = v.vehicle
    assert veh["empty_mass"] == 24e3 and veh["num_axis"] == 2
    assert veh["wheel_diameter"] == pytest.approx(0.92)  # WheelRadius ( 0.46 ): m
    assert veh["resistance"]["A"] == pytest.approx(120 * LBF, rel=1e-12)
    assert veh["resistance"]["B"] == pytest.approx(0.5 * LBF / MPH, rel=1e-12)
    assert veh["resistance"]["C"] == pytest.approx(0.03 * LBF / MPH**2, rel=1e-12)
    assert v.params["hand_brake_force"] == pytest.approx(9000 * LBF, rel=1e-12)
    assert v.coupling is None
    assert v.unmapped == ["Type", "ORTSFreightAnims"]


@pytest.mark.parametrize(("body", "line", "words"), [
    ("Wagon ( Size ( 1m 1m 10m ) )", 1, ["no Mass"]),
    ("Wagon ( Mass ( 1t ) )", 1, ["no Size"]),
    ("Wagon ( Mass ( 1t ) Size ( 1 1 ) )", 1, ["Size", "2 values", "at least 3"]),
    ("Wagon ( Mass ( 1t ) Size ( 1 1 10 )\n ORTSNumberAxles ( 2.5 ) )", 2, ["whole number"]),
    ("Wagon ( Mass ( 1t ) Size ( 1 1 10 ) )\nEngine (\n ORTSMaxTractiveForceCurves (\n"
     " 1 ( 0 100 10 ) ) )", 4, ["pairs"]),
    ("Wagon ( Mass ( 1t ) Size ( 1 1 10 ) )\nEngine (\n ORTSMaxTractiveForceCurves (\n"
     " 2 ( 0 100 10 50 ) ) )", 4, ["throttle setting from 0 to 1"]),
    ("Wagon ( Mass ( 1t ) Size ( 1 1 10 ) )\nEngine ( ORTSMaxTractiveForceCurves ( 1 (\n"
     " 10 100\n 5 50 ) ) )", 4, ["increasing"]),
    ("Engine ( MaxPower ( 1MW ) )", None, ["no 'Wagon"]),
    # values rrscore's vehicle config or the plugin's params refuse, named by their token
    ("Wagon ( x\n Mass ( 0t )\n Size ( 1 1 10 ) )", 2,
     ["Mass ( 0t ): gives vehicle.empty_mass = 0", "> 0"]),
    ("Wagon ( Mass ( 1t ) Size ( 1 1 10 )\n WheelRadius ( 3m ) )", 2,
     ["WheelRadius ( 3m ): gives vehicle.wheel_diameter = 6", "<= 3"]),
    ("Wagon ( Mass ( 1t ) Size ( 1 1 10 ) )\nEngine ( MaxForce ( -3kN ) )", 2,
     ["MaxForce ( -3kN ): gives params.max_force a negative value"]),
])
def test_unusable_tokens_are_one_line_naming_file_and_line(tmp_path, body, line, words):
    path = tmp_path / "bad.eng"
    path.write_text(body)
    with pytest.raises(StfError) as info:
        read_vehicle(path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: line {line}: " if line else f"{path}: ")
    for w in words:
        assert w in message
