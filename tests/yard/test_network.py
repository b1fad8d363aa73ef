"""Track networks (rrscore.yard.network): plan geometry against closed forms, lines formed by
the switches' positions, paths, fouling zones, and config errors that name the key."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from conftest import CONFIGS

from rrscore.model.config import Context, validate
from rrscore.model.errors import ConfigError
from rrscore.yard.network import NETWORK_SCHEMA, Network, load_network

R = 190.0
ANGLE = 9.3054  # degrees: two such arcs of 190 m make an S-curve 5 m across


def network(table: dict) -> Network:
    cfg = validate(table, NETWORK_SCHEMA, Context("net.toml", "network", Path.cwd()))
    cfg["_source"] = ("net.toml", "network", str(Path.cwd()))
    return Network(cfg)


def junction(**switch) -> dict:
    """A main track, a switch at its end, a straight leg and an S-curve siding."""
    return {
        "tracks": [
            {"name": "main", "length": 300.0, "start": [0.0, 0.0], "heading": 0.0},
            {"name": "straight", "length": 200.0},
            {"name": "siding", "plan": [{"radius": R, "angle": ANGLE},
                                        {"radius": R, "angle": -ANGLE}, {"line": 150.0}]},
        ],
        "switches": [{"name": "s1", "points": "main.end",
                      "legs": ["straight.start", "siding.start"], **switch}],
    }


def test_an_s_curve_ends_where_the_closed_form_puts_it():
    # two arcs of radius R turning by +a and -a: across 2 R (1 - cos a), along 2 R sin a
    net = network(junction())
    siding = net.tracks[net.track_index["siding"]]
    a = math.radians(ANGLE)
    arc = R * a
    assert siding.length == pytest.approx(2 * arc + 150.0, abs=1e-9)
    end_of_curves = siding.coords(2 * arc)
    assert end_of_curves[0] == pytest.approx(300.0 + 2 * R * math.sin(a), abs=2e-3)
    assert end_of_curves[1] == pytest.approx(2 * R * (1 - math.cos(a)), abs=2e-3)
    assert siding.xy[-1][1] == pytest.approx(5.0, abs=1e-3)
    # a point halfway round the first arc sits on the circle about its centre (0, R)
    p = siding.coords(arc / 2) - np.array([300.0, R])
    assert np.hypot(*p) == pytest.approx(R, abs=0.01)  # chords of at most 1 m: 0.7 mm sag


def test_a_plan_gives_the_track_its_curve_resistance_elements():
    net = network(junction())
    siding = net.tracks[net.track_index["siding"]]
    assert [e["radius"] for e in siding.elements] == [R, R, 0.0]


@pytest.mark.parametrize("position, with_main", [("normal", "straight"),
                                                  ("reverse", "siding")])
def test_the_lines_follow_the_switch_and_the_other_leg_ends_at_its_toe(position, with_main):
    net = network(junction(position=position))
    lines = net.lines([0 if position == "normal" else 1])
    names = {tuple(net.tracks[t].name for t in ln.tracks): ln for ln in lines}
    other_leg = ({"straight", "siding"} - {with_main}).pop()
    assert set(names) == {("main", with_main), (other_leg,)}
    through = names[("main", with_main)]
    assert through.ends == (("stop", 2e6), ("stop", 2e6))
    other = names[(other_leg,)]
    # the leg set against it: open at its toe (a run-through), a buffer stop at its end
    assert other.ends[0] == ("switch", 0.0)
    assert other.ends[1][0] == "stop"


def test_line_coordinates_run_through_tracks_in_either_direction():
    # track b is laid end to end with a but backwards: b's end meets a's end
    net = network({"tracks": [
        {"name": "a", "length": 100.0, "start": [0.0, 0.0], "heading": 0.0},
        {"name": "b", "length": 50.0, "start": [150.0, 0.0], "heading": 180.0}],
        "connections": [{"ends": ["a.end", "b.end"]}]})
    (line,) = net.lines([])
    assert line.length == 150.0
    track, offset = line.locate(np.array([10.0, 120.0]))
    assert [net.tracks[t].name for t in track] == ["a", "b"]
    assert offset == pytest.approx([10.0, 30.0])  # 20 m into b from its end
    assert line.coordinate(net.track_index["b"], 30.0) == pytest.approx(120.0)


def test_a_path_lists_the_switch_positions_it_needs():
    net = load_network(CONFIGS / "networks" / "hump_yard.toml")
    t = net.track_index
    chain = net.path(t["hump"], True, t["c6"])
    assert [net.tracks[k].name for k, _ in chain] == ["hump", "b", "e", "c6"]
    settings = {net.switches[k].name: p for k, p in net.switch_settings(chain)}
    assert settings == {"s1": 1, "s3": 1, "s5": 1}
    # backwards from a class track to the hump: trailing through the same switches
    back = net.path(t["c2"], False, t["hump"])
    assert {net.switches[k].name: p for k, p in net.switch_settings(back)} == {"s4": 0,
                                                                               "s2": 1, "s1": 0}
    assert net.path(t["c1"], True, t["hump"]) is None  # c1's end is a buffer stop


def test_the_fouling_zone_of_a_turnout_ends_where_the_legs_part_by_the_clearance():
    # the siding's distance from the straight leg: R (1 - cos(s/R)) round the first arc,
    # then 2 R (1 - cos a) - R (1 - cos((2 R a - s)/R)) round the second; they are closer
    # than the reach (clearance + margin + half the 1 m sampling) up to where that equals
    # it; beyond the S-curve they are 5 m apart and do not conflict
    net = network(junction())
    width, margin = 3.2, 0.3
    zones = net.conflict_zones(width, margin)
    t = net.track_index
    (zone,) = [z for z in zones if {z[0], z[3]} == {t["straight"], t["siding"]}]
    reach = width + margin + 0.5
    a = math.radians(ANGLE)

    def across(s: float) -> float:
        if s <= R * a:
            return R * (1 - math.cos(s / R))
        return 2 * R * (1 - math.cos(a)) - R * (1 - math.cos((2 * R * a - s) / R))

    lo, hi = 0.0, 2 * R * a
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if across(mid) < reach else (lo, mid)
    siding_hi = zone[2] if zone[0] == t["siding"] else zone[5]
    assert siding_hi == pytest.approx(lo, abs=1.0)  # the points are 1 m apart
    # tracks joined end to end (main and either leg) are not a conflict zone
    assert all({z[0], z[3]} != {t["main"], t["siding"]} for z in zones)


def test_parallel_tracks_closer_than_the_clearance_conflict_along_their_length():
    tracks = [{"name": "a", "length": 100.0, "start": [0.0, 0.0], "heading": 0.0},
              {"name": "b", "length": 100.0, "start": [0.0, 3.0], "heading": 0.0},
              {"name": "c", "length": 100.0, "start": [0.0, 12.0], "heading": 0.0}]
    net = network({"tracks": tracks})
    zones = net.conflict_zones(3.2, 0.0)
    assert [(net.tracks[z[0]].name, net.tracks[z[3]].name) for z in zones] == [("a", "b")]
    assert zones[0][1:3] == (0.0, 100.0)


def test_every_track_end_joined_to_nothing_is_a_buffer_stop():
    net = network(junction())
    t = net.track_index
    assert set(net.stops) == {(t["main"], 0), (t["straight"], 1), (t["siding"], 1)}


@pytest.mark.parametrize("change, key, words", [
    (lambda n: n["switches"][0].update(points="main.middle"), "network.switches[0].points",
     "expected a track end"),
    (lambda n: n["switches"][0].update(legs=["straight.start"]), "network.switches[0].legs",
     "expected 2"),
    (lambda n: n["tracks"][1].update(start=[0.0, 50.0], heading=0.0), "network.tracks[0]",
     "expected joined ends to meet"),
    (lambda n: n["tracks"][1].update(elements=[{"length": 150.0}]),
     "network.tracks[1].elements", "expected the track's length"),
    (lambda n: n["tracks"].append({"name": "main", "length": 10.0}),
     "network.tracks[3].name", "no other track has"),
    (lambda n: n.update(connections=[{"ends": ["main.end", "straight.end"]}]),
     "network.switches[0].points", "found main.end, which connection 0 already uses"),
    (lambda n: n["tracks"][2]["plan"].append({"radius": 100.0}),
     "network.tracks[2].plan[3].angle", "expected the angle"),
    (lambda n: n["tracks"][1].update(length=1e-308),  # (no extent to draw it on)
     "network.tracks[1].length", "expected a track of at least 0.001 m"),
])
def test_a_bad_network_names_the_key_and_what_was_expected(change, key, words):
    table = junction()
    change(table)
    with pytest.raises(ConfigError) as err:
        network(table)
    assert err.value.key == key, str(err.value)
    assert words in str(err.value)


def test_a_loop_of_tracks_is_refused_with_a_clear_error():
    table = {"tracks": [
        {"name": "a", "length": 100.0, "start": [0.0, 0.0], "heading": 0.0},
        {"name": "b", "length": 100.0, "start": [100.0, 0.0], "heading": 180.0}],
        "connections": [{"ends": ["a.end", "b.start"]}, {"ends": ["b.end", "a.start"]}]}
    with pytest.raises(ConfigError, match="loop"):
        network(table)


def test_a_polyline_plan_gives_coordinates_along_it():
    net = network({"tracks": [{"name": "l", "points": [[0, 0], [30, 40], [30, 100]]}]})
    tr = net.tracks[0]
    assert tr.length == pytest.approx(110.0)
    assert tr.coords(25.0) == pytest.approx([15.0, 20.0])
    assert tr.coords(80.0) == pytest.approx([30.0, 70.0])


def test_a_loop_that_a_switch_would_close_is_refused_at_load():
    # a -> switch s1 -> b (a buffer stop at its end) as set; thrown to c, the line runs
    # a -> c -> a: a loop no drive could run on, refused before any drive starts
    table = {"tracks": [
        {"name": "a", "length": 100.0, "start": [0.0, 0.0], "heading": 0.0},
        {"name": "b", "length": 50.0},
        {"name": "c", "points": [[100.0, 0.0], [150.0, 50.0], [0.0, 50.0], [0.0, 0.0]]}],
        "switches": [{"name": "s1", "points": "a.end", "legs": ["b.start", "c.start"]}],
        "connections": [{"ends": ["c.end", "a.start"]}]}
    with pytest.raises(ConfigError) as err:
        network(table)
    assert err.value.key == "network.tracks"
    assert "loop" in str(err.value) and "'s1' to c.start" in str(err.value), str(err.value)
    # the same tracks without the closing connection are a network like any other
    table["connections"] = []
    assert len(network(table).lines([0])) == 2
