"""Yard drives (rrscore.yard: yard, yardrun, yarddrive): switches followed and run
through, side collisions at fouling points, buffer stops, retarders, locomotives, route
setting, the shipped yard scenarios and their outputs."""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest
from conftest import CONFIGS, car_config

from rrscore.model.config import Context
from rrscore.model.errors import ConfigError, OutputError
from rrscore.run.drive import LOCK_NAME, prepare_output_dir, release_output_dir
from rrscore.yard.freecars import REST_SPEED
from rrscore.yard.yard import load_yard, yard_from_table
from rrscore.yard.yarddrive import drive_yard
from rrscore.yard.yardrun import YardRun

YARDS = CONFIGS / "yards"
CAR = "../vehicles/freight_car_4axle.toml"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
# the test car (conftest.car_config): 23 t + 69.5 t, four wheelsets of 96 kg m^2 on 0.957 m
M_CAR = 92.5e3
M_EFF = M_CAR + 4 * 96.0 / (0.957 / 2) ** 2  # with its wheelsets' rotating inertia, kg
FREE_CAR = car_config(resistance={"formula": "none", "starting": False})  # hand brake 60 kN


def yard(cuts: list[dict], network: str = "../networks/junction.toml", **keys) -> YardRun:
    """A run of a yard scenario given as a table (paths relative to configs/yards)."""
    table = {"name": "test", "network": network, "cuts": cuts, **keys}
    sc = yard_from_table(table, Context("<test>", "yard", YARDS))
    return YardRun(sc)


def cut(name: str, track: str, front: float, count: int = 1, config=CAR, **keys) -> dict:
    return {"name": name, "track": track, "front": front,
            "train": {"coupling": {"coupling_speed": "5 km/h"},
                      "vehicles": [{"config": config, "count": count}]}, **keys}


def tracks_of(run: YardRun, name: str) -> set[str]:
    track, _, _, _ = run._state()
    k = run.scenario.cut_names.index(name)
    return {run.net.tracks[t].name for t in track[run.scenario.cars.cut == k]}


def kinds(run: YardRun) -> list[str]:
    return [e.kind for e in run.events]


# ------------------------------------------------------------------ switches
@pytest.mark.parametrize("position, leg", [("normal", "straight"), ("reverse", "siding")])
def test_a_facing_move_follows_the_switch_position(position, leg):
    run = yard([cut("car", "main", 250.0, speed=2.0)],
               actions=[{"at": 0.0, "switch": "s1", "position": position}])
    run.advance(200.0)
    assert tracks_of(run, "car") == {leg}
    assert "run-through" not in kinds(run)


@pytest.mark.parametrize("run_through", ["stop", "force"])
def test_a_trailing_move_against_the_switch_runs_it_through(run_through):
    # two cars roll from the straight leg towards the main track; s1 is set for the siding
    run = yard([cut("cars", "straight", 60.0, 2, facing="start", speed=1.5)],
               actions=[{"at": 0.0, "switch": "s1", "position": "reverse"}],
               run_through=run_through)
    run.advance(300.0)
    (event,) = [e for e in run.events if e.kind == "run-through"]
    assert event.cut == "cars" and "s1" in event.detail
    # the front face reached the toe: its centre half a car into the leg (13.92 m over
    # the couplers less the 5.5 mm of slack on the compression side)
    assert event.track == "straight" and event.offset == pytest.approx((13.92 - 0.0055) / 2,
                                                                       abs=1e-6)
    if run_through == "stop":
        assert run.stop_reason == "run-through of switch s1"
        assert run.t == pytest.approx(event.t)
    else:
        assert run.forced == ["s1"] and run.positions == [0]  # forced over to this leg
        assert tracks_of(run, "cars") == {"main"}


def test_the_same_trailing_move_with_the_switch_set_right_passes():
    run = yard([cut("cars", "straight", 60.0, 2, facing="start", speed=1.5)])
    run.advance(300.0)
    assert "run-through" not in kinds(run)
    assert tracks_of(run, "cars") == {"main"}


def test_a_switch_is_not_thrown_while_a_car_stands_on_it():
    run = yard([cut("car", "straight", 15.0, hand_brakes=[0])],  # on the panel (20 m)
               actions=[{"at": 1.0, "switch": "s1", "position": "reverse"}])
    run.advance(5.0)
    assert "switch refused" in kinds(run)
    assert run.positions == [0]


# ------------------------------------------------------------------ side collisions
@pytest.mark.parametrize("front, collides", [(22.0, True), (80.0, False)])
def test_cars_passing_a_car_left_in_the_fouling_zone_collide_side_on(front, collides):
    # the siding is within the 3.2 m clearance of the straight leg for its first ~37 m;
    # a car standing with its front at 22 m fouls it, one at 80 m stands clear
    run = yard([cut("runners", "main", 250.0, 2, config=FREE_CAR, speed=3.0),
                cut("parked", "siding", front, hand_brakes=[0])], side_collision="stop")
    run.advance(150.0)
    hits = [e for e in run.events if e.kind == "side collision"]
    if collides:
        assert len(hits) == 1 and {hits[0].cut, hits[0].other_cut} == {"runners", "parked"}
        assert run.stop_reason == "side collision"
        # the runners' front comes within the clearance of the parked car's rear end,
        # 8.08 m into the siding and R (1 - cos(8.08 / R)) off the straight leg, after
        # running d at a steady 3 m/s (no resistance): found at a step's end (0.1 s); a
        # car is 13.92 m over couplers less the 5.5 mm of slack on the compression side
        rear = front - (13.92 - 0.0055)
        off = 190.0 * (1 - math.cos(rear / 190.0))
        d = 300.0 + rear - math.sqrt(3.2 ** 2 - off ** 2) - 250.0
        t = d / 3.0
        assert t <= hits[0].t < t + 0.1 + 1e-9
    else:
        assert hits == [] and run.stop_reason != "side collision"
        assert tracks_of(run, "runners") == {"straight"}


def test_a_car_left_in_the_fouling_zone_is_reported_fouling_the_other_leg():
    run = yard([cut("parked", "siding", 22.0, hand_brakes=[0])])
    assert run.fouling() == {0: ["straight"]}
    clear = yard([cut("parked", "siding", 80.0, hand_brakes=[0])])
    assert clear.fouling() == {}


# ------------------------------------------------------------------ buffer stops
def test_a_car_meets_the_buffer_stop_at_its_closed_form_speed_and_force_u_sqrt_km():
    # constant rolling resistance A on level track: u^2 = v0^2 - 2 (A / M) d exactly
    a_force, v0 = 900.0, 2.0
    config = car_config(resistance={"formula": "davis", "A": a_force, "B": 0.0, "C": 0.0,
                                    "starting": False})
    run = yard([cut("car", "straight", 150.0, config=config, speed=v0)])
    run.advance(100.0)
    hit = next(e for e in run.events if e.kind == "buffer stop")
    m = M_EFF
    u = math.sqrt(v0 * v0 - 2.0 * a_force / m * 50.0)
    assert float(hit.detail.split()[1]) == pytest.approx(u, abs=1e-3)  # 'at u m/s'
    assert hit.value == pytest.approx(u * math.sqrt(2e6 * m), rel=1e-3)


# ------------------------------------------------------------------ retarders, moves
RETARDER_NET = {
    "tracks": [{"name": "t", "length": 600.0, "start": [0, 0], "heading": 0}],
    "retarders": [{"name": "R", "track": "t", "from": 100.0, "to": 140.0, "force": 120e3}],
    "points": [{"name": "after", "track": "t", "offset": 141.0}],
}


# What follows, by hand: A/M = 900 N / 94.2 t = 0.00956 m/s^2 and s = 346 m, so a car
# leaving at v reaches the standing car if v^2 > 2 (A/M) s = 6.6 m^2/s^2. Leaving at
# 4 m/s it strikes at about 2.9 m/s, above the cars' 5 km/h coupling speed (an impact);
# leaving at under 2 m/s it stops short.
@pytest.mark.parametrize("exit_speed, outcome", [(None, "coupled"), (4.0, "impact"),
                                                  (2.0, "stopped short")])
def test_a_retarder_brakes_a_car_to_its_exit_speed(exit_speed, outcome):
    # level track, constant resistance A: without an exit speed of its own, the retarder
    # takes the energy-height rule's for meeting the standing car at the coupling target,
    # v_exit^2 = v_c^2 + 2 (A / M) s, s from the retarder's end to the standing car
    a_force = 900.0
    config = car_config(resistance={"formula": "davis", "A": a_force, "B": 0.0, "C": 0.0,
                                    "starting": False})
    retarder = {**RETARDER_NET["retarders"][0]}
    if exit_speed is not None:
        retarder["exit_speed"] = exit_speed
    run = yard([cut("runner", "t", 80.0, config=config, speed=6.0, destination="t"),
                cut("standing", "t", 500.0, hand_brakes=[0])],
               network={**RETARDER_NET, "retarders": [retarder]}, coupling_target=1.2)
    run.advance(400.0)
    (event,) = [e for e in run.events if e.kind == "retarder"]
    m = M_EFF
    s = (500.0 - 13.92 + 0.0055) - 140.0  # cars touching at their couplers' compressed end
    target = exit_speed or math.sqrt(1.2 ** 2 + 2.0 * a_force / m * s)
    assert event.value == pytest.approx(target, rel=1e-9)
    # braked in proportion near the end, the car leaves at the speed aimed at; a fixed
    # exit speed is reached somewhere in the retarder (40 m), resistance slows it after
    left = run.passages[0]["after"]["speed_mps"]
    if exit_speed is not None:
        assert math.sqrt(target ** 2 - 2.0 * a_force / m * 40.0) - 0.01 < left <= target
    (report, _) = run.report()
    if outcome == "stopped short":
        # too slow to reach the standing car: it stops short, v^2 / 2a past the point; the
        # yard stops at standstill (< 0.01 m/s), a few millimetres before the car does
        assert report["stopped_short"] and report["coupling_speed_mps"] is None
        gap = (s - 1.0) - left ** 2 / (2.0 * a_force / m)
        assert report["gap_ahead_m"] == pytest.approx(gap, abs=0.1)
        assert run.stop_reason == "standstill"
        return
    assert not report["stopped_short"]
    couple = next(e for e in run.events if e.kind in ("coupled", "impact"))
    assert couple.kind == outcome
    assert couple.speed == pytest.approx(math.sqrt(left ** 2 - 2.0 * a_force / m * (s - 1.0)),
                                         rel=0.01)
    if exit_speed is None:  # the energy-height speed, aimed from wherever it is released
        assert couple.speed == pytest.approx(1.2, abs=0.03)


def test_a_locomotive_pushes_at_its_speed_stops_at_its_point_and_holds():
    net = {"tracks": [{"name": "t", "length": 800.0, "start": [0, 0], "heading": 0}],
           "points": [{"name": "stop here", "track": "t", "offset": 400.0}]}
    run = yard([cut("train", "t", 200.0, 3), cut("loco", "t", 158.2,
                                                  config="../vehicles/simple_loco.toml")],
               network=net,
               moves=[{"cut": "loco", "speed": 1.5, "max_force": 200e3,
                       "until_point": "stop here"}])
    run.advance(60.0)
    _, _, tspeed, _ = run._state()
    assert tspeed == pytest.approx(1.5, rel=0.01)  # all four moving together at 1.5 m/s
    run.advance(400.0)
    _, offset, tspeed, _ = run._state()
    assert np.abs(tspeed).max() < 0.01
    # it sees the point at a step's end (v dt past it), then brakes towards 0 with its
    # speed control (v / tau asked, at most brake / M): at the limit down to v = tau b/M,
    # then exponentially, v tau more
    cars = run.scenario.cars
    v, tau, dt = 1.5, 2.0, 0.1
    decel = 200e3 / cars.mass.sum()
    v1 = min(v, tau * decel)
    bound = v * dt + (v * v - v1 * v1) / (2 * decel) + v1 * tau
    loco = 3
    assert 400.0 < offset[loco] <= 400.0 + bound
    assert run.moves[0]["phase"] == "hold"


# ------------------------------------------------------------------ holding devices
GRADE_NET = {"tracks": [{"name": "t", "length": 400.0, "grade": 0.02, "start": [0, 0],
                         "heading": 0}],
             "points": [{"name": "winch post", "track": "t", "offset": 300.0}]}
PULL = M_CAR * 9.80665 * 0.02 / math.sqrt(1.0 + 0.02 ** 2)  # gravity down 20 per mille


def test_a_hand_brake_holds_a_car_on_20_permille_and_it_rolls_freely_once_released():
    run = yard([cut("car", "t", 200.0, config=FREE_CAR, hand_brakes=[0])], network=GRADE_NET,
               actions=[{"at": 60.0, "cut": "car", "hand_brakes": False}])
    _, x0, _, _ = run._state()
    run.advance(60.0)  # 60 kN of hand brake (the type's default) against 18.1 kN of pull
    _, x, v, _ = run._state()
    assert v[0] == 0.0 and x[0] == x0[0]
    run.advance(70.0)  # then downhill (towards the start) at g sin(theta) m / M_eff
    _, x, v, _ = run._state()
    a = PULL / M_EFF
    assert v[0] == pytest.approx(-a * 10.0, rel=1e-9)
    assert x[0] == pytest.approx(x0[0] - a * 50.0, rel=1e-9)
    assert [e.detail for e in run.events if e.kind == "hand brakes"] == ["off"]


@pytest.mark.parametrize("restitution", [0.1, 0.134, 0.2])
def test_a_car_rolling_down_onto_a_buffer_stop_bounces_the_bouncing_ball_sum_and_rests(
        restitution):
    # from rest, down 20 per mille onto the stop at the track's start: it strikes at
    # u = sqrt(2 a d), and bounces ever lower for 2 e u / (a (1 - e)) (less the bounces
    # under REST_SPEED, cut off: at most 2 e REST_SPEED / (a (1 - e))), then rests on the
    # stop, which holds the whole pull
    e = restitution
    run = yard([cut("car", "t", 200.0, config=FREE_CAR)], network=GRADE_NET,
               restitution=e, stop={"standstill": False})
    d = float(run.vehicle_ends()[3][0])  # the rear end's offset: how far it rolls
    run.advance(120.0)
    a = PULL / M_EFF
    u = math.sqrt(2.0 * a * d)
    hits = [ev.t for ev in run.events if ev.kind == "buffer stop"]
    assert hits[0] == pytest.approx(math.sqrt(2.0 * d / a), rel=1e-9)
    closed = 2.0 * e * u / (a * (1.0 - e))
    assert 0.0 <= closed - (hits[-1] - hits[0]) <= 2.0 * e * REST_SPEED / (a * (1.0 - e))
    _, x, v, _ = run._state()
    assert v[0] == 0.0
    assert run.engines[0].stop_forces()[0] == pytest.approx(PULL, rel=1e-9)


@pytest.mark.parametrize("chock_friction", [0.2, 0.05])
def test_a_chock_holds_a_car_on_20_permille_or_slides_at_the_difference(chock_friction):
    # a chock holds up to chock_friction times one axle's load: 45.4 kN at 0.2, 11.3 kN at
    # 0.05 against a pull of 18.1 kN
    config = {**FREE_CAR, "params": {"chock_friction": chock_friction}}
    run = yard([cut("car", "t", 200.0, config=config, chocks=[0])], network=GRADE_NET)
    _, x0, _, _ = run._state()
    run.advance(20.0)
    _, x, v, _ = run._state()
    hold = chock_friction * M_CAR * 9.80665 / 4
    if hold >= PULL:
        assert v[0] == 0.0 and x[0] == x0[0]
    else:
        a = (PULL - hold) / M_EFF
        assert v[0] == pytest.approx(-a * 20.0, rel=1e-9)
        assert x[0] == pytest.approx(x0[0] - a * 200.0, rel=1e-9)


def test_a_winch_pulls_two_cars_up_the_grade_to_its_post_and_holds_them_there():
    run = yard([cut("pair", "t", 150.0, 2, config=FREE_CAR, hand_brakes=[1])],
               network=GRADE_NET,
               actions=[{"at": 0.0, "cut": "pair", "hand_brakes": False}],
               moves=[{"cut": "pair", "kind": "winch", "speed": 0.5, "max_force": 80e3,
                       "until_point": "winch post"}])
    run.advance(60.0)
    _, x, v, _ = run._state()
    assert v == pytest.approx([0.5, 0.5], rel=0.01)  # pulled up at the speed asked
    run.advance(600.0)
    _, x, v, _ = run._state()
    # held against gravity at the post: the yard stops once every car is below 0.01 m/s
    # (the second car may still settle into its coupling's slack)
    assert run.stop_reason == "standstill" and np.abs(v).max() < 0.01
    # its centre passes the post by v dt before the winch sees it, then v tau while its
    # speed control brakes (80 kN and gravity: faster than v / tau asks)
    assert 300.0 < x[0] < 300.0 + 0.5 * 0.1 + 0.5 * 2.0
    assert run.moves[0]["phase"] == "hold"
    assert any(e.kind == "move" and e.cut == "pair" for e in run.events)


def test_a_locomotive_keeps_its_way_onto_a_track_that_runs_the_other_way():
    # a.end joined to b.end: on b the offsets count down as the locomotive goes on; it
    # keeps pushing towards its front and stops at the point on b, its ends reported there
    net = {"tracks": [{"name": "a", "length": 200.0, "start": [0, 0], "heading": 0},
                      {"name": "b", "length": 200.0, "start": [400, 0], "heading": 180}],
           "connections": [{"ends": ["a.end", "b.end"]}],
           "points": [{"name": "on b", "track": "b", "offset": 120.0}]}
    run = yard([cut("loco", "a", 150.0, config="../vehicles/simple_loco.toml")], network=net,
               moves=[{"cut": "loco", "speed": 2.0, "max_force": 200e3,
                       "until_point": "on b"}])
    run.advance(40.0)  # 150 m -> well onto b at 2 m/s
    track, offset, tspeed, _ = run._state()
    assert run.net.tracks[track[0]].name == "b" and tspeed[0] == pytest.approx(-2.0, rel=0.01)
    run.advance(300.0)
    ft, fo, rt, ro = run.vehicle_ends()
    half = float(run.half[0])
    assert run.net.tracks[ft[0]].name == "b" and run.net.tracks[rt[0]].name == "b"
    assert ro[0] - fo[0] == pytest.approx(2 * half)  # the front towards b's start
    assert 120.0 - 2.0 * (0.1 + 2.0) < (fo[0] + ro[0]) / 2 < 120.0  # centre past the point
    assert run.moves[0]["phase"] == "hold"


def test_a_switch_thrown_after_a_car_turned_onto_a_reversed_track_leaves_it_its_way():
    # as above, with a junction elsewhere in the yard: throwing its switch forms the lines
    # again, and the locomotive on b must go on towards its front, not turn round
    net = {"tracks": [{"name": "a", "length": 200.0, "start": [0, 0], "heading": 0},
                      {"name": "b", "length": 200.0, "start": [400, 0], "heading": 180},
                      {"name": "x", "length": 100.0, "start": [0, 100], "heading": 0},
                      {"name": "y", "length": 100.0},
                      {"name": "z", "plan": [{"radius": 190.0, "angle": 9.3054},
                                             {"radius": 190.0, "angle": -9.3054},
                                             {"line": 50.0}]}],
           "connections": [{"ends": ["a.end", "b.end"]}],
           "switches": [{"name": "s", "points": "x.end", "legs": ["y.start", "z.start"]}],
           "points": [{"name": "on b", "track": "b", "offset": 120.0}]}
    run = yard([cut("loco", "a", 150.0, config="../vehicles/simple_loco.toml")], network=net,
               moves=[{"cut": "loco", "speed": 2.0, "max_force": 200e3,
                       "until_point": "on b"}],
               actions=[{"at": 60.0, "switch": "s", "position": "reverse"}])
    run.advance(70.0)
    assert run.positions == [1]  # thrown
    track, _, tspeed, face = run._state()
    assert run.net.tracks[track[0]].name == "b"
    assert tspeed[0] == pytest.approx(-2.0, rel=0.01) and face[0] == -1.0  # towards b.start
    run.advance(300.0)
    ft, fo, _, ro = run.vehicle_ends()
    assert run.net.tracks[ft[0]].name == "b" and fo[0] < ro[0]
    assert 120.0 - 2.0 * (0.1 + 2.0) < (fo[0] + ro[0]) / 2 < 120.0  # held at its point
    assert run.moves[0]["phase"] == "hold"


# ------------------------------------------------------------------ route setting
def test_route_setting_sends_each_cut_to_its_destination():
    run = yard([cut("first", "main", 290.0, speed=3.0, destination="siding"),
                cut("second", "main", 200.0, speed=3.0, destination="straight"),
                cut("third", "main", 110.0, speed=3.0, destination="siding")])
    run.advance(300.0)
    for name, leg in (("first", "siding"), ("second", "straight"), ("third", "siding")):
        assert tracks_of(run, name) == {leg}
    assert not run.misrouted
    throws = [e.detail for e in run.events if e.kind == "switch"]
    assert throws == ["s1 to reverse", "s1 to normal", "s1 to reverse"]


def test_a_cut_that_cannot_reach_its_destination_is_a_config_error():
    with pytest.raises(ConfigError, match=r"yard\.cuts.*cannot reach track 'main'"):
        yard([cut("car", "straight", 100.0, destination="main")])


def test_overlapping_cuts_are_a_config_error_naming_the_tracks():
    with pytest.raises(ConfigError, match="overlap"):
        yard([cut("a", "main", 100.0), cut("b", "main", 95.0)])


@pytest.mark.parametrize("key, value, expected", [
    # 3e302 rows at t = 0 (the drive ran on without end before it was checked)
    ("output.sample_interval", "1e-300 s", "rows of positions.csv; expected at least 3e-07 s"),
    ("step", "1 ms", "steps; expected at least 0.1 s"),  # 1e12 steps over 1e9 s
    ("stop.max_time", "1e12 s", "<= 1e+09"),
])
def test_a_yard_asking_for_more_than_a_drive_can_finish_is_a_config_error_naming_the_key(
        key, value, expected):
    values = {key: value} if key != "step" else {key: value, "stop.max_time": "1e9 s"}
    with pytest.raises(ConfigError) as caught:
        load_yard(YARDS / "buffer_stop.toml").with_values(values)
    assert caught.value.key == f"yard.{key}"
    assert expected in caught.value.message


def test_a_yard_naming_its_own_file_as_its_network_is_a_config_error_naming_the_key(tmp_path):
    path = tmp_path / "yard.toml"
    path.write_text((YARDS / "buffer_stop.toml").read_text()
                    .replace('"../networks/junction.toml"', '"yard.toml"'))
    with pytest.raises(ConfigError) as caught:
        load_yard(path)
    assert caught.value.key == "yard.network"
    assert caught.value.message == ("found 'yard.toml', a file with [yard] (this file "
                                    "itself) and no [network] table; expected a network file")


# ------------------------------------------------------------------ shipped scenarios
def test_the_shunting_move_couples_the_cut_to_the_standing_cars_on_siding_2():
    run = YardRun(load_yard(YARDS / "shunting.toml"))
    run.advance(900.0)
    assert run.stop_reason == "standstill"
    assert [e.detail for e in run.events if e.kind == "switch"] == ["w1 to reverse",
                                                                   "w2 to reverse"]
    (coupled,) = [e for e in run.events if e.kind == "coupled" and e.cut != e.other_cut]
    assert coupled.speed <= 5 / 3.6
    assert tracks_of(run, "shunt") == {"siding 2"}
    report = {r["cut"]: r for r in run.report()}
    assert report["shunt"]["on_destination"] and report["shunt"]["coupled_to"] == ["standing"]


def test_the_hump_sorts_twenty_cuts_onto_six_tracks():
    run = YardRun(load_yard(YARDS / "hump_20_cuts.toml"))
    run.advance(1500.0)
    report = run.report()
    cuts = [r for r in report if r["destination"]]
    assert len(cuts) == 20 and len({r["destination"] for r in cuts}) == 6
    assert all(r["on_destination"] and not r["misrouted"] for r in cuts)
    assert not any(e.kind in ("side collision", "run-through") for e in run.events)
    # every cut couples on, no faster than the cars' coupling speed (5 km/h)
    for r in cuts:
        assert r["coupled_to"] and not r["stopped_short"], r["cut"]
        assert r["coupling_speed_mps"] <= 5 / 3.6, r["cut"]
        for point in ("crest", "retarder 1", "switch zone", f"{r['destination']} entry"):
            assert point in r["points"], (r["cut"], point)


# ------------------------------------------------------------------ outputs
def test_a_yard_drive_writes_events_positions_summary_and_plan(tmp_path):
    result = drive_yard(load_yard(YARDS / "run_through.toml"), tmp_path / "out")
    out = tmp_path / "out"
    rows = list(csv.DictReader((out / "events.csv").open()))
    assert [r["kind"] for r in rows] == ["switch", "run-through", "switch"]
    assert rows[1]["cut"] == "runaway" and float(rows[1]["speed_mps"]) > 1.0
    positions = list(csv.DictReader((out / "positions.csv").open()))
    assert positions[0]["front_track"] == "straight" and positions[-1]["rear_track"] == "main"
    # on its way through the switch the cut spans both tracks: rear still on the leg
    assert any(r["front_track"] == "main" and r["rear_track"] == "straight"
               for r in positions)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["switches_run_through"] == ["s1"]
    assert summary["cut_reports"][0]["run_throughs"] == ["s1"]
    assert (out / "plan.png").read_bytes()[:8] == PNG_MAGIC
    assert result.summary["stop_reason"] == "standstill"


def test_the_resolved_yard_file_runs_the_same_drive_again(tmp_path):
    # written unrounded (coupling speeds of 5 km/h = 1.3888... m/s): the same yard
    original = load_yard(YARDS / "run_through.toml")
    first = drive_yard(original, tmp_path / "a")
    again = load_yard(tmp_path / "a" / "yard.resolved.toml")
    assert again.resolved() == original.resolved()
    second = drive_yard(again, tmp_path / "b")
    assert second.summary["sim_time_s"] == first.summary["sim_time_s"]
    events = [(tmp_path / d / "events.csv").read_text() for d in ("a", "b")]
    assert events[0] == events[1]


def test_a_yard_drive_into_a_directory_another_drive_holds_is_refused(tmp_path):
    out = tmp_path / "out"
    lock = prepare_output_dir(out)  # as a running drive holds it
    try:
        with pytest.raises(OutputError, match="in use by another running drive"):
            drive_yard(load_yard(YARDS / "run_through.toml"), out)
    finally:
        release_output_dir(out, lock)
    drive_yard(load_yard(YARDS / "run_through.toml"), out)  # free again
    assert not (out / LOCK_NAME).exists()


def test_an_interrupted_yard_drive_keeps_its_events_and_summary(tmp_path):
    def interrupt(fraction, t, speed):
        if t >= 20.0:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        drive_yard(load_yard(YARDS / "buffer_stop.toml"), tmp_path, progress=interrupt)
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["stop_reason"] == "interrupted" and summary["sim_time_s"] >= 20.0
    assert (tmp_path / "events.csv").read_text().startswith("time_s,kind")
    assert len((tmp_path / "positions.csv").read_text().splitlines()) > 20


@pytest.mark.parametrize("restitution", [0.5, 0.9])
def test_standstill_waits_for_the_cars_to_rest_not_a_bounce_s_top(restitution):
    # lively bounces on 20 per mille: at the top of each the car is slower than
    # standstill_speed for a moment (the drive ended there, 0.003 m/s and rising); it
    # ends once the car rests on the stop, after the bouncing-ball sum 2 e u / (a (1 - e))
    e = restitution
    run = yard([cut("car", "t", 200.0, config=FREE_CAR)], network=GRADE_NET, restitution=e)
    d = float(run.vehicle_ends()[3][0])
    while run.stop_reason is None:
        run.advance(run.t + run.dt)
    assert run.stop_reason == "standstill"
    a = PULL / M_EFF
    u = math.sqrt(2.0 * a * d)
    assert run.t >= math.sqrt(2.0 * d / a) + 2.0 * e * (u - REST_SPEED) / (a * (1.0 - e))
    _, _, v, _ = run._state()
    assert v[0] == 0.0
