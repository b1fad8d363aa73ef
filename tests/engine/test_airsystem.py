"""The air brake against answers worked out by hand: the pipe's wave speed from its
configured bores and volumes, the distributors' characteristic in each mode, release and
recharge, a parted train, the locomotive's independent brake, and config errors."""

from __future__ import annotations

import math
import tomllib

import numpy as np
import pytest
from conftest import CONFIGS, make_scenario, shipped_drive

from rrscore import Drive
from rrscore.engine.airsystem import OWED_TOLERANCE
from rrscore.model.errors import ConfigError
from rrscore.run.run import Run

LOCO = {"config": "vehicles/simple_loco_air.toml"}
CAR = {"type": "freight_car", "empty_mass": "23 t", "payload_mass": "69.5 t",
       "length": "13.92 m", "num_axis": 4}


def _car(count: int = 1, **brake) -> dict:
    return {"config": {"vehicle": {**CAR, "brake": {"system": "air",
                                                    "distributor": "freight", **brake}}},
            "count": count}


def _run(vehicles, actions, **sections) -> Run:
    return Run(make_scenario(vehicles, driver=actions, **sections))


def _pipe(run: Run) -> np.ndarray:
    return run.state("brake.pipe")


def _cylinders(run: Run) -> np.ndarray:
    """Cylinder pressure of every vehicle that has one (lead first)."""
    return run.state("brake.cylinder")


def _front_arrival(run: Run, drop: float, t_end: float, step: float = 0.01) -> float:
    """First time the tail's pipe pressure is ``drop`` below where it started."""
    p0 = _pipe(run)[-1]
    while run.t < t_end:
        run.advance(run.t + step)
        if _pipe(run)[-1] < p0 - drop:
            return run.t
    raise AssertionError(f"the pressure at the tail did not fall by {drop} Pa")


def _hand_wave_speed() -> tuple[float, float]:
    """Wave speed of the freight car's pipe (13.92 m of 32 mm bore, a 0.6 m hose of 35 mm at
    each end, 3 L hung on it), worked out from the lumped line: one car per
    sqrt(L C) seconds, L = sum of length / bore area, C = volume / (gamma R T)."""
    a_pipe, a_hose = math.pi * 0.032**2 / 4, math.pi * 0.035**2 / 4
    inertance = 13.92 / a_pipe + 2 * 0.6 / a_hose
    volume = 13.92 * a_pipe + 2 * 0.6 * a_hose + 0.003
    return 13.92 / math.sqrt(inertance * volume / (1.4 * 287.05 * 293.15)), 13.92


def _distance_to_tail(run: Run) -> float:
    length = run.train.length
    return float(length[0] / 2 + length[1:].sum() - length[-1] / 2)


def test_a_pressure_drop_reaches_the_tail_of_100_cars_at_the_pipes_wave_speed():
    # Cars whose distributors do not vent: the front of the drop the valve's emergency port
    # makes at the head travels along the pipe alone. Within 10 % of the hand answer.
    run = _run([LOCO, _car(100, emergency=False)],
               [{"at_time": 0.0, "set": {"brake_valve": 5}}], solver={"control_step": 0.01})
    speed, _ = _hand_wave_speed()
    assert speed == pytest.approx(283.1, abs=0.1)
    expected = _distance_to_tail(run) / speed  # 1401.4 m at 283.1 m/s: 4.95 s
    assert _front_arrival(run, 5e3, 10.0) == pytest.approx(expected, rel=0.10)


def test_an_emergency_runs_along_the_train_at_the_wave_speed_and_applies_every_brake():
    # With quick action every distributor vents the pipe: the 50 kPa fall that applies
    # the brakes reaches the tail within 10 % of the pipe's own wave time, and every
    # cylinder fills to the loaded mode's 0.40 MPa.
    run = _run([LOCO, _car(100)], [{"at_time": 0.0, "set": {"brake_valve": 5}}],
               solver={"control_step": 0.01})
    speed, _ = _hand_wave_speed()
    assert _front_arrival(run, 50e3, 10.0) == pytest.approx(
        _distance_to_tail(run) / speed, rel=0.10)
    run.advance(40.0)
    cylinders = _cylinders(run)[1:]
    assert cylinders == pytest.approx(0.40e6, abs=1e3)
    assert _pipe(run).max() < 5e3


@pytest.mark.parametrize("mode, p_max", [("empty", 0.16e6), ("medium", 0.30e6),
                                         ("loaded", 0.40e6)])
@pytest.mark.parametrize("service_s", [3.0, 5.0, 10.0])
def test_cylinder_pressure_after_a_pipe_reduction_is_the_modes_characteristic(
        mode, p_max, service_s):
    # Service for T s lowers the equalizing reservoir, and with it the pipe, by
    # 0.02 MPa/s * T; lapped, the car's cylinder settles at
    # p_max * (reduction - 0.01 MPa) / (0.15 MPa - 0.01 MPa), at most p_max.
    run = _run([LOCO, _car(1, mode=mode)],
               [{"at_time": 1.0, "set": {"brake_valve": 4}},
                {"at_time": 1.0 + service_s, "set": {"brake_valve": 3}}])
    run.advance(90.0)
    reduction = 0.02e6 * service_s
    expected = p_max * min(max((reduction - 0.01e6) / 0.14e6, 0.0), 1.0)
    assert _pipe(run) == pytest.approx(0.5e6 - reduction, abs=50.0)
    assert _cylinders(run)[1] == pytest.approx(expected, abs=100.0)


def test_after_release_the_pipe_recharges_to_running_pressure_and_every_cylinder_empties():
    run = _run([LOCO, _car(20)],
               [{"at_time": 1.0, "set": {"brake_valve": 4}},
                {"at_time": 6.0, "set": {"brake_valve": 3}},
                {"at_time": 60.0, "set": {"brake_valve": 1}},
                {"at_time": 70.0, "set": {"brake_valve": 2}}])
    run.advance(59.0)
    assert _cylinders(run)[1:].min() > 0.2e6  # applied: 0.4 * (0.1 - 0.01) / 0.14 MPa
    run.advance(600.0)
    assert _pipe(run) == pytest.approx(0.5e6, abs=2e3)
    assert _cylinders(run).max() < 100.0
    assert run.state("brake.aux") == pytest.approx(0.5e6, abs=5e3)


def test_graduated_release_follows_the_pipe_up_and_direct_release_empties_the_cylinder():
    # Full service, then the pipe raised by 0.05 MPa and lapped: a graduated distributor
    # lets its cylinder down to p_max * (0.10 - 0.01) / 0.14, a direct one empties it.
    actions = [{"at_time": 1.0, "set": {"brake_valve": 4}},
               {"at_time": 9.0, "set": {"brake_valve": 3}},   # pipe 0.34 MPa
               {"at_time": 60.0, "set": {"brake_valve": 1}},  # up to the running pressure
               {"at_time": 60.5, "set": {"brake_valve": 3}}]
    graduated = _run([LOCO, _car(1, release="graduated")], actions)
    direct = _run([LOCO, _car(1, release="direct")], actions)
    for run in (graduated, direct):
        run.advance(59.0)
        assert _cylinders(run)[1] == pytest.approx(0.40e6, abs=100.0)
        run.advance(150.0)
    rise = _pipe(graduated)[1] - 0.34e6
    assert 0.02e6 < rise < 0.12e6
    reduction = 0.5e6 - _pipe(graduated)[1]
    assert _cylinders(graduated)[1] == pytest.approx(
        0.40e6 * (reduction - 0.01e6) / 0.14e6, abs=200.0)
    assert _cylinders(direct)[1] < 100.0


def test_a_train_that_parts_brakes_in_emergency_on_both_parts():
    # Moving at 40 km/h, coupling 15 parts: the torn hoses vent the pipe of both parts,
    # the distributors go to emergency, and both parts stop.
    run = _run([LOCO, _car(30)], [{"at_time": 2.0, "uncouple": 15}],
               start={"speed": "40 km/h"}, stop={"max_time": 120.0})
    run.advance(40.0)
    cylinders = _cylinders(run)
    assert cylinders[1:16] == pytest.approx(0.40e6, abs=2e3)   # the front part's cars
    assert cylinders[16:] == pytest.approx(0.40e6, abs=2e3)    # the rear part
    # The valve, left in running, feeds the head of the front part, drawing its main
    # reservoir down, but cannot outrun the torn hose and the distributors' vents.
    assert _pipe(run)[8:].max() < 5e3
    assert run.system.air.torn[15]
    assert not run.system.air.torn[:15].any() and not run.system.air.torn[16:].any()
    run.advance(120.0)
    assert np.abs(run.state("body.v")).max() < 0.01


def test_an_angle_cock_left_open_at_the_tail_vents_the_pipe_and_a_shut_one_holds_it():
    # The valve in running position feeds the head through its 16 mm relay port, but the
    # 35 mm hose open to the air drains the pipe faster: the distributors go to emergency,
    # vent it too, and every brake applies; with the cock shut nothing happens.
    tail = {**_car(5), "count": 1, "open_rear_cock": True}
    run = _run([LOCO, _car(5), tail], [], start={"speed": "30 km/h"})
    run.advance(30.0)
    assert _pipe(run)[1:].max() < 0.1e6 and _pipe(run)[-1] < 1e3
    assert _cylinders(run)[1:] == pytest.approx(0.40e6, abs=2e3)
    shut = _run([LOCO, _car(6)], [], start={"speed": "30 km/h"})
    shut.advance(30.0)
    assert _pipe(shut) == pytest.approx(0.5e6, abs=100.0)
    assert _cylinders(shut) == pytest.approx(0.0, abs=1.0)


def test_the_air_charging_an_empty_train_is_the_air_its_main_reservoir_gave():
    # Compressor held off (cut-in at 0) and no leaks: the mass of air in the pipe
    # (adiabatic, p V / gamma R T) and auxiliary reservoirs after charging equals the mass
    # the valve drew, and the main reservoir's pressure fell by that mass times R T / V.
    # The brake runs on its own integration: its draw reaches the reservoir as a rate held
    # over each control step, at most OWED_TOLERANCE behind.
    cfg = tomllib.loads((CONFIGS / "vehicles" / "simple_loco_air.toml").read_text())
    cfg["params"].update({"cut_in": 0.0, "leak_tau": "1e9 s", "reservoir_initial": "0.9 MPa"})
    run = _run([{"config": cfg}, _car(5)], [], start={"brakes": "empty"})
    run.advance(300.0)
    air, rt = run.system.air, 287.05 * 293.15
    drawn = run.state("brake.drawn")[0]
    stored = (run.state("brake.pipe") @ air.pipe_volumes / 1.4
              + run.state("brake.aux") @ air.aux_volumes) / rt
    assert drawn > 3.0  # kg: about 94 L per car charged to 0.5 MPa
    assert stored == pytest.approx(drawn, rel=1e-9)
    fallen = (0.9e6 - run.state("simple_loco.main_reservoir")[0]) * 1.0 / rt  # 1 m^3
    assert fallen == pytest.approx(drawn, abs=OWED_TOLERANCE * 1.0 / rt + 0.005)  # + leak


def test_a_braking_run_paused_snapshotted_and_resumed_is_the_same_to_the_bit():
    def braking() -> Run:
        return _run([LOCO, _car(10)], [{"at_time": 1.0, "set": {"brake_valve": 4}},
                                       {"at_time": 6.0, "set": {"brake_valve": 3}}],
                    start={"speed": "50 km/h"})
    straight = braking()
    straight.advance(20.0)
    paused = braking()
    paused.advance(3.33)
    snap = paused.snapshot()
    paused.advance(11.0)
    paused.restore(snap)
    paused.advance(20.0)
    for name in ("brake.pipe", "brake.cylinder", "brake.aux", "simple_loco.main_reservoir"):
        assert np.array_equal(paused.state(name), straight.state(name)), name
    assert np.array_equal(paused.y, straight.y)


def test_the_independent_brake_fills_the_locomotives_cylinders_from_the_main_reservoir():
    run = _run([LOCO, _car(2)], [{"at_time": 1.0, "set": {"independent_brake": 0.5}}])
    run.advance(30.0)
    cylinders = _cylinders(run)
    assert cylinders[0] == pytest.approx(0.2e6, abs=100.0)  # half of 0.4 MPa
    assert cylinders[1:] == pytest.approx(0.0, abs=1.0)     # the train brake stays off
    assert _pipe(run) == pytest.approx(0.5e6, abs=50.0)


def test_bail_off_keeps_the_locomotives_cylinders_out_of_a_train_application():
    # A 3 s service (0.06 MPa reduction) asks every distributor for
    # 0.4 MPa * (0.06 - 0.01) / 0.14 = 0.142857 MPa. Bailed off, the locomotive's cylinders
    # stay empty and its reservoir keeps its air while the car's brake applies; let go at
    # 40 s, they fill to what the distributor asks, from the auxiliary reservoir.
    expected = 0.4e6 * (0.06e6 - 0.01e6) / 0.14e6
    run = _run([LOCO, _car(1)], [{"at_time": 0.5, "set": {"bail_off": 1.0}},
                                 {"at_time": 1.0, "set": {"brake_valve": 4}},
                                 {"at_time": 4.0, "set": {"brake_valve": 3}},
                                 {"at_time": 40.0, "set": {"bail_off": 0.0}}])
    run.advance(39.0)
    cylinders, aux = _cylinders(run), run.state("brake.aux")
    assert cylinders[0] == pytest.approx(0.0, abs=1.0)
    assert cylinders[1] == pytest.approx(expected, abs=100.0)
    assert aux[0] == pytest.approx(0.5e6, abs=100.0)
    run.advance(90.0)
    assert _cylinders(run)[0] == pytest.approx(expected, abs=100.0)
    assert run.state("brake.aux")[0] < 0.5e6 - 0.5 * expected * 64 / 300


def _loco(**brake) -> dict:
    """The air-braked SimpleLoco with its ``[vehicle.brake]`` keys changed."""
    with open(CONFIGS / "vehicles" / "simple_loco_air.toml", "rb") as f:
        config = tomllib.load(f)
    config["vehicle"]["brake"].update(brake)
    return {"config": config}


def test_the_independent_brake_fills_at_its_configured_rate():
    # 8 s from empty to 0.4 MPa: 50 kPa/s, faster than the loco's distributor (0.4 MPa
    # over 20 s), so the cylinder rises on a straight line from the control step at 1 s
    # (until within the valve's 10 kPa band of its target): 0.15 MPa at 4 s, 0.3 MPa at 7 s.
    run = _run([_loco(independent_application_time="8 s"), _car(2)],
               [{"at_time": 1.0, "set": {"independent_brake": 1.0}}])
    for t, expected in ((4.0, 0.15e6), (7.0, 0.30e6)):
        run.advance(t)
        assert _cylinders(run)[0] == pytest.approx(expected, abs=500.0), t
    run.advance(20.0)
    assert _cylinders(run)[0] == pytest.approx(0.4e6, abs=100.0)


def test_the_independent_brake_releases_at_its_configured_rate():
    # Applied fully, then released at 20 s with a 16 s release time: 25 kPa/s down,
    # 0.25 MPa at 26 s.
    run = _run([_loco(independent_release_time="16 s"), _car(2)],
               [{"at_time": 1.0, "set": {"independent_brake": 1.0}},
                {"at_time": 20.0, "set": {"independent_brake": 0.0}}])
    run.advance(19.0)
    assert _cylinders(run)[0] == pytest.approx(0.4e6, abs=100.0)
    run.advance(26.0)
    assert _cylinders(run)[0] == pytest.approx(0.25e6, abs=500.0)


def test_an_independent_brake_with_time_zero_fills_and_releases_at_once():
    # The full pressure at the first control step after the handle moves, none at the
    # first after it is released.
    run = _run([_loco(independent_application_time="0 s", independent_release_time="0 s"),
                _car(2)],
               [{"at_time": 1.0, "set": {"independent_brake": 1.0}},
                {"at_time": 3.0, "set": {"independent_brake": 0.0}}])
    step = run.control_step
    run.advance(1.0)
    assert _cylinders(run)[0] == 0.0
    run.advance(1.0 + step)
    assert _cylinders(run)[0] == pytest.approx(0.4e6, abs=1.0)
    run.advance(3.0)
    assert _cylinders(run)[0] == pytest.approx(0.4e6, abs=1.0)
    run.advance(3.0 + step)
    assert _cylinders(run)[0] == pytest.approx(0.0, abs=1.0)
    assert _cylinders(run)[1:] == pytest.approx(0.0, abs=1.0)


@pytest.mark.parametrize(("key", "value"), [("independent_application_time", "-1 s"),
                                          ("independent_release_time", "5 m")])
def test_an_independent_time_not_a_non_negative_time_is_a_config_error_naming_the_key(
        key, value):
    with pytest.raises(ConfigError) as err:
        make_scenario([_loco(**{key: value}), _car(1)])
    assert f"brake.{key}" in str(err.value)


def test_a_braked_train_on_a_grade_stays_put():
    # Emergency at a standstill on 20 per mille: the cylinders' shoe friction holds the
    # train (a braked vehicle stands still); it does not creep a millimetre in 10 min.
    run = _run([LOCO, _car(10)], [{"at_time": 0.0, "set": {"brake_valve": 5}}],
               elements=[{"length": "5 km", "grade": "20 permille"}],
               start={"position": "2 km", "brakes": "charged"})
    run.advance(25.0)
    x = run.state("body.x")
    run.advance(600.0)
    assert np.abs(run.state("body.x") - x).max() < 1e-3


def test_an_empty_start_leaves_pipe_and_reservoirs_at_atmospheric_pressure():
    run = _run([LOCO, _car(3)], [], start={"brakes": "empty"})
    assert _pipe(run) == pytest.approx(0.0)
    assert run.state("brake.aux") == pytest.approx(0.0)


def test_a_driver_valve_on_a_vehicle_without_a_brake_valve_control_is_a_config_error():
    with pytest.raises(ConfigError) as err:
        make_scenario([_car(1, driver_valve=True)])
    assert "brake.driver_valve" in str(err.value)
    assert "brake_valve" in str(err.value)


def test_an_unknown_distributor_mode_names_the_key_and_the_choices():
    with pytest.raises(ConfigError) as err:
        make_scenario([LOCO, _car(1, mode="full")])
    message = str(err.value)
    assert "brake.mode" in message and "'loaded'" in message


def test_table_shoes_brake_with_the_tables_friction_at_the_cars_speed():
    # A service reduction held in lap: once the cylinders are full, the force each car's
    # shoes give is shoes * friction(v) * K, friction read off the table at its speed.
    table = {"speeds": ["0 km/h", "100 km/h"], "friction": [0.30, 0.10]}
    run = _run([LOCO, _car(3, shoe_type="table", friction_table=table)],
               [{"at_time": 0.0, "set": {"brake_valve": 4}},
                {"at_time": 4.0, "set": {"brake_valve": 3}}], start={"speed": "100 km/h"})
    run.advance(40.0)
    held = run.state("brake.cylinder")
    run.advance(45.0)
    air = run.system.air
    cyls = air.system.cyls  # the rigging of each cylinder (the lead's first)
    pc = run.state("brake.cylinder")[1:]
    assert pc == pytest.approx(held[1:], rel=1e-4) and pc.min() > 50e3  # full, steady
    shoe = (pc * cyls.piston_area[1:] - cyls.spring[1:]) * cyls.ratio[1:] \
        * cyls.efficiency[1:] / cyls.shoes[1:]
    v_kmh = np.abs(run.state("body.v")[air.cyl[1:]]) * 3.6
    assert 30.0 < v_kmh.min() < v_kmh.max() < 90.0
    friction = 0.30 - 0.20 * v_kmh / 100.0
    # the force was set at the last control step, at most 0.05 s ago: 1e-3 of friction
    assert air.run.force[air.cyl[1:]] == pytest.approx(cyls.shoes[1:] * friction * shoe,
                                                        rel=1e-3)


@pytest.mark.parametrize(("brake", "key", "says"), [
    ({"shoe_type": "table", "friction_table": {"speeds": ["0 km/h"], "friction": [0.3]}},
     "brake.friction_table", "two or more"),
    ({"shoe_type": "table", "friction_table": {"speeds": [0, 10, 5], "friction": [.3, .2, .1]}},
     "brake.friction_table.speeds", "increasing"),
    ({"shoe_type": "table", "friction_table": {"speeds": [0, 10], "friction": [0.3, 1.5]}},
     "brake.friction_table.friction[1]", "<= 1"),
    ({"friction_table": {"speeds": [0, 10], "friction": [0.3, 0.2]}},
     "brake.friction_table", "shoe_type = 'table'"),
])
def test_a_friction_table_that_cannot_be_used_is_a_config_error_naming_its_key(brake, key,
                                                                                 says):
    with pytest.raises(ConfigError) as err:
        make_scenario([LOCO, _car(1, **brake)])
    assert key in str(err.value) and says in str(err.value)


def test_the_shipped_air_braked_vehicles_load():
    for name in ("simple_loco_air", "freight_car_4axle_air"):
        assert (CONFIGS / "vehicles" / f"{name}.toml").exists()
    run = _run([LOCO, {"config": "vehicles/freight_car_4axle_air.toml", "count": 2}], [])
    assert _pipe(run) == pytest.approx(0.5e6)


def test_empty_cars_braked_in_loaded_mode_slide_on_wet_rails_and_in_empty_mode_do_not():
    # Why distributors have load modes: the loaded mode's shoe force on an empty car's
    # 5.75 t axles is more than wet rails carry, and the wheels lock.
    def stop(mode: str) -> dict:
        car = _car(5, mode=mode)
        car["config"]["vehicle"]["adhesion"] = {"rail_condition": "wet"}
        car["payload_fraction"] = 0.0
        sc = make_scenario([LOCO, car], driver=[{"at_time": 0.0, "set": {"brake_valve": 5}}],
                           start={"speed": "60 km/h"},
                           stop={"max_time": 120.0, "standstill": True})
        return Drive(sc).run().summary

    loaded, empty = stop("loaded"), stop("empty")
    assert loaded["slide_events"] > 0
    assert empty["slide_events"] == 0
    assert empty["stop_reason"] == loaded["stop_reason"] == "standstill"


def test_the_summary_gives_each_application_its_stopping_distance_time_and_forces():
    r = shipped_drive("brake_emergency_80")
    s = r.summary
    (app,) = s["brake_applications"]
    assert app["kind"] == "emergency" and app["end"] == "stopped"
    assert app["start_time_s"] == pytest.approx(2.0)
    assert app["time_s"] == pytest.approx(s["sim_time_s"] - 2.0, abs=0.05)
    front = r.series["front_m"]
    t = r.series["time_s"]
    assert app["distance_m"] == pytest.approx(front[-1] - np.interp(2.0, t, front), abs=0.01)
    assert app["max_coupler_compression_N"] == pytest.approx(s["max_coupler_compression_N"])
    # every friction brake of this train is the air brake
    energy = s["braking_energy_J"]
    assert energy["air_brake"] == pytest.approx(s["energy"]["brake_J"], rel=1e-6)
    assert abs(s["energy"]["balance_error_J"]) < 1e-6 * s["energy"]["brake_J"]


def test_hand_brakes_hold_the_train_on_20_permille_for_an_hour_then_released_it_rolls_back():
    r = shipped_drive("handbrake_hold_20")
    # The locomotive has no hand brake: it settles back into the couplers' slack (22 mm)
    # in the first seconds; from then on nothing moves until the release.
    t, x = r.series["time_s"], r.series["position_m"]
    assert x[t == 5.0][0] == pytest.approx(x[0] - 0.022, abs=2e-3)
    held = (t >= 5.0) & (t <= 3600.0)  # an hour
    assert np.all(x[held] == x[held][0])
    assert x[-1] < x[0] - 100.0  # rolled back down the grade after the release
    assert r.series["speed_mps"][-1] < -5.0


def test_the_train_stopped_on_the_descent_is_held_there_by_its_own_brakes():
    r = shipped_drive("brake_downgrade_100")
    (app,) = r.summary["brake_applications"]
    assert app["end"] == "stopped"
    after = r.series["time_s"] > app["end_time_s"] + 1.0
    assert np.abs(r.series["speed_mps"][after]).max() == 0.0
    assert np.ptp(r.series["position_m"][after]) == 0.0


def test_release_and_recharge_after_a_service_application_empties_every_cylinder():
    r = shipped_drive("brake_release_recharge")
    t = r.series["time_s"]
    applied = t == 59.0
    for v in (1, 25, 50):
        assert r.series[f"v{v}_brake_cylinder_Pa"][applied][0] == pytest.approx(
            0.40e6 * (0.1e6 - 0.01e6) / 0.14e6, abs=300.0)
        assert r.series[f"v{v}_brake_cylinder_Pa"][-1] < 100.0
        assert r.series[f"v{v}_brake_pipe_Pa"][-1] > 0.48e6


# ----------------------------------------------------------- the summary's applications
def _summary(actions, until: float = 40.0, **sections) -> dict:
    sections.setdefault("start", {"speed": "60 km/h"})
    run = _run([LOCO, _car(5)], actions, **sections)
    run.advance(until)
    return run.summary(1.0)


def test_a_service_application_is_listed_with_its_reduction_and_where_it_ended():
    # Service for 5 s lowers the pipe at the valve by 0.02 MPa/s * 5 s = 1 bar; lapped,
    # then released at 20 s.
    s = _summary([{"at_time": 1.0, "set": {"brake_valve": 4}},
                  {"at_time": 6.0, "set": {"brake_valve": 3}},
                  {"at_time": 20.0, "set": {"brake_valve": 1}}])
    (app,) = s["brake_applications"]
    assert app["kind"] == "service" and app["end"] == "released"
    assert app["reduction_Pa"] == pytest.approx(0.1e6, abs=100.0)
    assert app["reduction_bar"] == pytest.approx(1.0, abs=1e-3)
    assert (app["start_time_s"], app["end_time_s"]) == pytest.approx((1.0, 20.0))
    assert app["distance_m"] == pytest.approx(app["end_position_m"] - app["start_position_m"])
    assert app["max_coupler_compression_N"] > 0.0


def test_the_independent_brake_and_the_brake_level_are_applications_of_their_own():
    s = _summary([{"at_time": 1.0, "set": {"independent_brake": 0.5}},
                  {"at_time": 11.0, "set": {"independent_brake": 0.0}},
                  {"at_time": 5.0, "set": {"brake_level": 0.3}},
                  {"at_time": 8.0, "set": {"brake_level": 0.0}}])
    independent, level = s["brake_applications"]  # (in the order they began)
    assert independent["kind"] == "independent"
    assert independent["max_cylinder_pressure_Pa"] == pytest.approx(0.2e6)  # half of 0.4
    assert (independent["start_time_s"], independent["end_time_s"]) == pytest.approx((1, 11))
    assert level["kind"] == "brake_level" and level["max_brake_level"] == pytest.approx(0.3)
    assert (level["start_time_s"], level["end_time_s"]) == pytest.approx((5.0, 8.0))
    # the independent brake's work is all the air brake's: the train's own is none
    by_kind = s["braking_energy_J"]["by_kind"]
    assert by_kind["independent_brake"] > 0.0
    assert by_kind["train_air_brake"] == 0.0
    # the friction kinds together are the energy account's friction brakes
    friction = by_kind["train_air_brake"] + by_kind["independent_brake"] \
        + by_kind["other_friction"]
    assert friction == pytest.approx(s["energy"]["brake_J"], rel=1e-12)
    assert by_kind["other_friction"] > 0.0  # the straight brake (brake_level)


def test_the_dynamic_brake_is_an_application_and_its_energy_is_what_the_drive_lost():
    # No traction: the drive flow is the dynamic brake's work alone, negative.
    s = _summary([{"at_time": 1.0, "set": {"dynamic_brake_level": 1.0}},
                  {"at_time": 21.0, "set": {"dynamic_brake_level": 0.0}}])
    (app,) = s["brake_applications"]
    assert app["kind"] == "dynamic" and app["end"] == "released"
    assert app["max_dynamic_brake_force_N"] > 0.0
    dynamic = s["braking_energy_J"]["by_kind"]["dynamic_brake"]
    assert dynamic == pytest.approx(-s["energy"]["drive_J"], rel=1e-3)


def test_the_lowest_auxiliary_reservoir_is_the_one_that_filled_the_most_cylinder():
    # A 1 bar reduction, lapped: each distributor fills its cylinders to 0.4 MPa * (0.1 -
    # 0.01) / 0.14 from its auxiliary reservoir, which falls by that times the cylinders'
    # volume over its own: the locomotive's (64 L from 300 L) falls furthest.
    run = _run([LOCO, _car(5)], [{"at_time": 1.0, "set": {"brake_valve": 4}},
                                 {"at_time": 6.0, "set": {"brake_valve": 3}}])
    lowest = np.inf
    while run.t < 60.0:  # the run's own reservoirs, at every control step
        run.advance(run.t + run.control_step)
        lowest = min(lowest, run.state("brake.aux").min())
    s = run.summary(1.0)
    assert s["lowest_aux_reservoir"]["pressure_Pa"] == lowest
    # Within 1.5 kPa: in lap the pipe hunts by some 40 Pa about its pressure, and the
    # cylinders fill and exhaust by turns with it, drawing the reservoirs down by under
    # 1 kPa a minute after they filled.
    cylinder = 0.4e6 * 0.09 / 0.14
    low = s["lowest_aux_reservoir"]
    assert low["vehicle"] == 0
    assert low["pressure_Pa"] == pytest.approx(0.5e6 - cylinder * 0.064 / 0.3, abs=1500.0)
    assert low["pressure_bar"] == pytest.approx(low["pressure_Pa"] / 1e5)
    assert s["brake_applications"] == []  # (a standing train: no application)


def test_more_applications_than_the_watchs_table_holds_are_all_listed():
    # 70 short applications of the brake_level control (the table holds 64 ended ones
    # until Python takes them), 1 s on and 1 s off.
    actions = []
    for k in range(70):
        actions += [{"at_time": 1.0 + 2 * k, "set": {"brake_level": 0.05}},
                    {"at_time": 2.0 + 2 * k, "set": {"brake_level": 0.0}}]
    s = _summary(actions, until=150.0, start={"speed": "80 km/h"})
    apps = s["brake_applications"]
    assert len(apps) == 70
    assert [a["start_time_s"] for a in apps] == pytest.approx([1.0 + 2 * k for k in range(70)])
    assert all(a["kind"] == "brake_level" and a["end"] == "released" for a in apps)
