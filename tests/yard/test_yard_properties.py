"""Random valid yards (hypothesis) run by the free-car engine: no two cars of a line
overlap and no car passes a buffer stop at any sample, every car-car impact conserves
the momentum of the two bodies that meet and loses kinetic energy (parting at the
restitution's share of the closing speed, or coupled, not at all), every buffer-stop
blow keeps the restitution's share of the speed, and two runs of one yard are the same
to the last bit. Malformed yards and networks: tests/yard/test_yard_config_properties.py.

A yard here: a lead track (level, or a hump's descent), one to three classification
tracks behind one or two switches, buffer stops at every free end, one to four cuts of
one to three cars on the lead with random masses, lengths, speeds, coupling speeds and
destinations, now and then a cut standing on a classification track and a retarder on
the lead.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pytest
import tomli_w
from conftest import CONFIGS, car_config
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from rrscore.cli.main import main
from rrscore.model.config import Context
from rrscore.yard.freecars import REST_SPEED, FreeCars
from rrscore.yard.yard import YardScenario, load_yard, yard_from_table
from rrscore.yard.yardrun import YardRun

SCALE = max(1, int(os.environ.get("RRS_PROPERTY_SCALE", "1")))
#: Faces of neighbouring cars may sit this far inside each other, and a car this far
#: past a buffer stop, m (the engine places faces to 1e-9 m; positions of up to a
#: kilometre carry about 1e-13 m of rounding).
OVERLAP_TOL = 1e-6
#: Momentum of the two bodies at an impact is kept to this share of the sum of |m v|.
MOMENTUM_TOL = 1e-12
#: Relative speeds after an impact match the restitution law to this, m/s.
SPEED_TOL = 1e-9
#: The S-curve of two 190 m arcs that puts a diverging leg 5 m beside the straight one
#: (configs/networks/shunting.toml's).
S_CURVE = [{"radius": "190 m", "angle": 9.3054}, {"radius": "190 m", "angle": -9.3054}]
#: What the yard does on a side collision and a run-through, every combination. (With
#: 'continue' and 'force', a cut may run a switch through while another cut's car stands
#: across its toe: the drive stops there, see
#: test_forcing_a_switch_under_a_standing_car_stops_the_drive_there.)
SIDES_AND_RUN_THROUGHS = [{"side_collision": side, "run_through": through}
                          for side in ("stop", "continue") for through in ("stop", "force")]


@st.composite
def yards(draw, restitution: st.SearchStrategy[float]) -> dict:
    """A ``[yard]`` table with its network inline (see the module docstring)."""
    hump = draw(st.booleans(), label="hump")
    lead = draw(st.floats(150.0, 400.0), label="lead length")
    grade = (-draw(st.floats(5.0, 25.0), label="hump grade") if hump
             else draw(st.sampled_from([0.0, 0.0, 1.0, -1.0]), label="lead grade"))
    n_class = draw(st.integers(1, 3), label="classification tracks")
    lengths = draw(st.lists(st.floats(60.0, 300.0), min_size=3, max_size=3), label="lengths")
    c_grade = draw(st.sampled_from([0.0, -0.6, 0.6]), label="classification grade")
    tracks = [{"name": "lead", "length": f"{lead} m", "grade": f"{grade} permille",
               "start": [0, 0], "heading": 0}]
    switches, connections = [], []
    if n_class == 1:
        tracks.append({"name": "c1", "length": f"{lengths[0]} m", "grade": f"{c_grade} permille"})
        connections.append({"ends": ["lead.end", "c1.start"]})
    elif n_class == 2:
        tracks += [{"name": "c1", "length": f"{lengths[0]} m", "grade": f"{c_grade} permille"},
                   {"name": "c2", "grade": f"{c_grade} permille",
                    "plan": [*S_CURVE, {"line": f"{lengths[1]} m"}]}]
        switches.append({"name": "s1", "points": "lead.end", "legs": ["c1.start", "c2.start"]})
    else:
        tracks += [{"name": "c1", "length": f"{lengths[0]} m", "grade": f"{c_grade} permille"},
                   {"name": "ladder", "plan": [*S_CURVE, {"line": "20 m"}]},
                   {"name": "c2", "length": f"{lengths[1]} m", "grade": f"{c_grade} permille"},
                   {"name": "c3", "grade": f"{c_grade} permille",
                    "plan": [*S_CURVE, {"line": f"{lengths[2]} m"}]}]
        switches += [{"name": "s1", "points": "lead.end", "legs": ["c1.start", "ladder.start"]},
                     {"name": "s2", "points": "ladder.end", "legs": ["c2.start", "c3.start"]}]
    classes = [f"c{k + 1}" for k in range(n_class)]
    stops = [{"at": "lead.start",
              "stiffness": f"{draw(st.floats(0.5, 5.0), label='stiffness')} MN/m"}]
    stops += [{"at": f"{c}.end", "stiffness": f"{draw(st.floats(0.5, 5.0))} MN/m"}
              for c in classes]
    network = {"name": "random", "tracks": tracks, "switches": switches,
               "connections": connections, "buffer_stops": stops}
    if draw(st.booleans(), label="retarder"):
        a = draw(st.floats(0.0, lead - 50.0), label="retarder from")
        retarder = {"name": "R", "track": "lead", "from": f"{a} m", "to": f"{a + 40.0} m",
                    "force": f"{draw(st.floats(30.0, 150.0), label='retarder force')} kN"}
        if draw(st.booleans(), label="exit speed"):
            retarder["exit_speed"] = f"{draw(st.floats(0.5, 4.0))} m/s"
        network["retarders"] = [retarder]

    def car() -> dict:
        kw = {"payload_mass": f"{draw(st.floats(0.0, 70.0), label='payload')} t",
              "length": f"{draw(st.floats(8.0, 20.0), label='car length')} m"}
        if draw(st.booleans(), label="no resistance"):
            kw["resistance"] = {"formula": "none", "starting": False}
        return car_config(**kw)

    def train() -> dict:
        cars = [{"config": car()} for _ in range(draw(st.integers(1, 3), label="cars"))]
        speed = draw(st.floats(0.3, 2.5), label="coupling speed")
        return {"coupling": {"coupling_speed": f"{speed} m/s"}, "vehicles": cars}

    cuts = []
    front = lead - draw(st.floats(0.0, 20.0), label="first gap")
    for k in range(draw(st.integers(1, 4), label="cuts")):
        t = train()
        room = sum(float(v["config"]["vehicle"]["length"].split()[0]) for v in t["vehicles"])
        if front - room - 1.0 < 0.0:
            break
        cuts.append({"name": f"cut {k}", "track": "lead", "front": f"{front} m",
                     "speed": f"{draw(st.floats(0.0, 4.0), label='speed')} m/s",
                     "destination": draw(st.sampled_from([None, *classes]),
                                         label="destination"),
                     "train": t})
        front -= room + 1.0 + draw(st.floats(0.0, 40.0), label="gap")
    if draw(st.booleans(), label="standing cut"):
        k = draw(st.integers(0, n_class - 1), label="standing on")
        t = train()
        room = sum(float(v["config"]["vehicle"]["length"].split()[0]) for v in t["vehicles"])
        if room + 2.0 <= lengths[k]:  # wholly on its track, clear of the lead's cuts
            cuts.append({"name": "standing", "track": classes[k], "front": f"{room + 2.0} m",
                         "train": t})
    for cut in cuts:
        if cut.get("destination") is None:
            cut.pop("destination", None)
    return {"name": "random yard", "network": network, "cuts": cuts,
            "restitution": draw(restitution, label="restitution"),
            "step": f"{draw(st.sampled_from([0.2, 0.5, 1.0]), label='step')} s",
            **draw(st.sampled_from(SIDES_AND_RUN_THROUGHS), label="side collision, run-through"),
            "stop": {"max_time": "150 s"}}


@dataclass
class Impact:
    """What two bodies (or one and a buffer stop) did at an impact."""

    kind: str
    momentum: tuple[float, float]  # before, after, kg m/s
    scale: float  # sum of |m v| before, kg m/s
    energy: tuple[float, float]  # before, after, J
    rel: tuple[float, float]  # the meeting faces' relative speed before, after, m/s
    restitution: float  # the share the engine should leave of the closing speed


@contextlib.contextmanager
def recording_impacts() -> Iterator[list[Impact]]:
    """Every impact the free-car engine acts on, with the speeds of the cars it concerns
    just before and just after (read from the engine's public ``v``, which is kept from
    one call to the next only as a cache, dropped here again)."""
    records: list[Impact] = []
    impact, wall_impact = FreeCars._impact, FreeCars._wall_impact

    def speeds(eng: FreeCars, i0: int, i1: int) -> np.ndarray:
        eng._x = eng._v = None
        v = np.array(eng.v[i0:i1])
        eng._x = eng._v = None
        return v

    def on_impact(eng: FreeCars, g, contact: bool) -> None:
        h, j = g.next, g.i1 - 1
        i0, i1 = g.i0, h.i1
        before, resting = speeds(eng, i0, i1), eng.counts["resting"]
        impact(eng, g, contact)
        after = speeds(eng, i0, i1)
        m = eng.mass[i0:i1]
        kind = eng.log[-1].kind
        closing = abs(before[j - i0] - before[j + 1 - i0])
        # no bounce when coupled, slower than REST_SPEED, or struck again once its contact
        # has bounced its share at this instant (counted 'resting')
        e = 0.0 if kind == "coupled" or closing <= REST_SPEED or \
            eng.counts["resting"] > resting else eng.restitution
        records.append(Impact(kind, (m @ before, m @ after), float(m @ np.abs(before)),
                              (0.5 * m @ before**2, 0.5 * m @ after**2),
                              (before[j - i0] - before[j + 1 - i0],
                               after[j - i0] - after[j + 1 - i0]), e))

    def on_wall(eng: FreeCars, g) -> None:
        i0, i1 = g.i0, g.i1
        before, resting = speeds(eng, i0, i1), eng.counts["resting"]
        wall_impact(eng, g)
        after = speeds(eng, i0, i1)
        m = eng.mass[i0:i1]
        e = 0.0 if abs(before[0]) <= REST_SPEED or eng.counts["resting"] > resting \
            else eng.restitution
        records.append(Impact("buffer stop", (m @ before, m @ after), float(m @ np.abs(before)),
                              (0.5 * m @ before**2, 0.5 * m @ after**2),
                              (before[0], after[0]), e))

    FreeCars._impact, FreeCars._wall_impact = on_impact, on_wall
    try:
        yield records
    finally:
        FreeCars._impact, FreeCars._wall_impact = impact, wall_impact


def check_line_geometry(run: YardRun) -> None:
    """No two cars of a line overlap, a coupled pair is no further apart than its slack,
    and no car stands past a buffer stop."""
    for eng in run.engines:
        if eng is None:
            continue
        gaps = eng.gaps()
        assert (gaps >= -OVERLAP_TOL).all(), f"cars overlap by {-gaps.min():.3g} m at " \
                                            f"t = {run.t} s"
        assert (gaps[eng.coupled] <= eng.slack[eng.coupled] + OVERLAP_TOL).all(), run.t
        half = 0.5 * eng.length
        rear, front = eng.x[0] - half[0], eng.x[-1] + half[-1]
        if not eng.open_ends[0]:
            assert rear >= eng.buffer_stops[0] - OVERLAP_TOL, f"past a stop at t = {run.t} s"
        if not eng.open_ends[1]:
            assert front <= eng.buffer_stops[1] + OVERLAP_TOL, f"past a stop at t = {run.t} s"


def run_checked(scenario: YardScenario) -> tuple[YardRun, list[Impact]]:
    """The yard run step by step, its lines' geometry checked after every step."""
    run = YardRun(scenario)
    check_line_geometry(run)
    max_time = scenario.config["stop"]["max_time"]
    with recording_impacts() as impacts:
        while run.stop_reason is None:
            run.advance(min(run.t + run.dt, max_time))
            check_line_geometry(run)
    return run, impacts


def check_impacts(impacts: list[Impact]) -> None:
    for im in impacts:
        before, after = im.momentum
        if im.kind != "buffer stop":  # the stop takes momentum; two cars keep it
            assert abs(after - before) <= MOMENTUM_TOL * im.scale + 1e-12, im
        assert im.energy[1] <= im.energy[0] * (1 + 1e-12) + 1e-9, im
        # Newton's rule: they part at e times the closing speed (coupled: e = 0)
        assert im.rel[1] == pytest.approx(-im.restitution * im.rel[0], abs=SPEED_TOL), im


def fingerprint(run: YardRun) -> tuple:
    """Everything a run shows: its events, stop, time, cars' places and reports."""
    ft, fo, rt, ro = run.vehicle_ends()
    return (repr(run.events), run.stop_reason, run.t, ft.tolist(), fo.tolist(), rt.tolist(),
            ro.tolist(), repr(run.report()), list(run.positions), list(run.forced))


def check_yard(table: dict) -> tuple[YardRun, list[Impact]]:
    """Run a yard: its lines' geometry at every step, its impacts, and a second run the
    same to the last bit; returns the (first) run and its impacts."""
    scenario = yard_from_table(table, Context("<random yard>", "yard", CONFIGS / "yards"))
    run, impacts = run_checked(scenario)
    check_impacts(impacts)
    # the same yard again (not watched): the same to the last bit. (Both runs share one
    # process; an order that hangs on where objects sit in memory shows up here only as
    # hypothesis's "flaky" report, issue 50.)
    again = YardRun(scenario)
    while again.stop_reason is None:
        again.advance(min(again.t + again.dt, scenario.config["stop"]["max_time"]))
    assert fingerprint(again) == fingerprint(run)
    return run, impacts


def count(run: YardRun, impacts: list[Impact]) -> None:
    """How a random yard ended, for hypothesis's statistics."""
    event(f"stop: {run.stop_reason}")
    event(f"impacts: {min(len(impacts), 5)}{'+' if len(impacts) >= 5 else ''}")


@settings(max_examples=40 * SCALE, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(table=yards(st.just(0.0)))
def test_a_random_inelastic_yard_keeps_cars_apart_and_momentum_and_is_repeatable(table):
    count(*check_yard(table))


@settings(max_examples=40 * SCALE, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(table=yards(st.floats(0.01, 1.0)))
def test_a_random_yard_with_restitution_keeps_cars_apart_and_momentum_and_is_repeatable(
        table):
    count(*check_yard(table))


@pytest.mark.parametrize("restitution", [0.1, 0.134, 0.2])
def test_a_buffer_stop_yard_with_restitution_runs_to_rest(restitution):
    scenario = load_yard(CONFIGS / "yards" / "buffer_stop.toml").with_values(
        {"restitution": restitution})
    run, impacts = run_checked(scenario)
    check_impacts(impacts)
    assert run.stop_reason == "standstill"
    assert math.isfinite(run.t)


def creeping_cut_yard() -> dict:
    """A yard (found by the random inelastic yards above) of one cut of two coupled cars,
    buffer to buffer, set down on a 1 permille fall at 1.4e-50 m/s: each car's resistance
    is more than its weight's pull down the grade, so each is held."""
    def car(payload: str) -> dict:
        return {"config": car_config(payload_mass=payload, length="8.0 m")}

    return {
        "name": "creeping cut", "restitution": 0.0, "step": "0.2 s",
        "side_collision": "stop", "run_through": "stop", "stop": {"max_time": "150 s"},
        "network": {
            "name": "random",
            "tracks": [{"name": "lead", "length": "150.0 m", "grade": "-1.0 permille",
                        "start": [0, 0], "heading": 0},
                       {"name": "c1", "length": "60.0 m", "grade": "0.0 permille"}],
            "switches": [], "connections": [{"ends": ["lead.end", "c1.start"]}],
            "buffer_stops": [{"at": "lead.start", "stiffness": "1.0 MN/m"},
                             {"at": "c1.end", "stiffness": "1.0 MN/m"}]},
        "cuts": [{"name": "cut 0", "track": "lead", "front": "150.0 m",
                  "speed": "1.4093125627579276e-50 m/s",
                  "train": {"coupling": {"coupling_speed": "1.0 m/s"},
                            "vehicles": [car("51.0 t"), car("0.0 t")]}}]}


def test_a_cut_set_down_at_a_creep_and_held_by_friction_stands_where_it_was_set_down():
    # Hand-worked: each car's pull down the grade (m g 0.001: 0.73 kN loaded, 0.23 kN
    # empty) is less than its resistance at rest, so friction stops each within 1e-47 s,
    # having moved (1.4e-50 m/s)^2 / 2a < 1e-96 m: nothing meets, nothing couples, the cut
    # stands to the end. (The engine joined the empty car, stopped first, to the loaded
    # one still creeping, which set it rolling; the joint pulled, they split, it stopped,
    # and so on until "impacts at t = 0.000000 s do not settle".)
    table = creeping_cut_yard()
    start = YardRun(yard_from_table(table, Context("<creeping cut>", "yard",
                                                   CONFIGS / "yards"))).vehicle_ends()
    run, impacts = check_yard(table)
    assert impacts == [] and run.events == [] and run.stop_reason == "max_time" and run.t == 150.0
    assert [r["final_speed_mps"] for r in run.report()] == [0.0]
    for before, after in zip(start, run.vehicle_ends(), strict=True):
        np.testing.assert_allclose(after, before, rtol=0.0, atol=1e-9)


def forced_switch_yard() -> dict:
    """A yard (found by the random yards above) where a cut bounced back from a buffer
    stop runs switch s1 through while the cuts behind it, sent to c3, stand across its
    toe; side collisions are only logged, so the run goes on to the run-through."""
    s_curve = [*S_CURVE, {"line": "20 m"}]

    def cars(*spec: tuple[float, float]) -> list[dict]:
        return [{"config": car_config(payload_mass=f"{p} t", length=f"{length} m")}
                for length, p in spec]

    def cut(name: str, front: str, speed: str, coupling: str, vehicles: list, **keys) -> dict:
        return {"name": name, "track": "lead", "front": front, "speed": speed,
                "train": {"coupling": {"coupling_speed": coupling}, "vehicles": vehicles},
                **keys}

    return {
        "name": "forced switch under a standing cut", "restitution": 0.43959562797252816,
        "step": "0.2 s", "side_collision": "continue", "run_through": "force",
        "stop": {"max_time": "150 s"},
        "network": {"tracks": [
            {"name": "lead", "length": "150 m", "grade": "-5 permille", "start": [0, 0],
             "heading": 0},
            {"name": "c1", "length": "100 m"},
            {"name": "ladder", "plan": s_curve},
            {"name": "c2", "length": "60 m"},
            {"name": "c3", "plan": [*S_CURVE, {"line": "60 m"}]}],
            "switches": [
                {"name": "s1", "points": "lead.end", "legs": ["c1.start", "ladder.start"]},
                {"name": "s2", "points": "ladder.end", "legs": ["c2.start", "c3.start"]}]},
        "cuts": [
            cut("runner", "150 m", "3.227899526840787 m/s", "1.1709889759380339 m/s",
                cars((19, 0), (8, 0), (8, 58.12134317175965))),
            cut("second", "114 m", "0 m/s", "2.1921430419525616 m/s", cars((8, 0), (8, 0)),
                destination="c3"),
            cut("third", "72 m", "0 m/s", "0.9541299834569146 m/s",
                cars((8, 0), (8, 0), (8, 0))),
        ]}


def test_forcing_a_switch_under_a_standing_car_stops_the_drive_there():
    # the points cannot be thrown under the car across them: the drive stops at the
    # run-through, the lines as they stood (it was an engine error that left them half
    # re-formed)
    scenario = yard_from_table(forced_switch_yard(),
                               Context("<forced switch>", "yard", CONFIGS / "yards"))
    run, impacts = run_checked(scenario)
    check_impacts(impacts)
    assert run.stop_reason == "run-through of switch s1 under a standing car"
    assert run.events[-1].kind == "run-through" and "s1" in run.events[-1].detail
    assert run.forced == []  # (not thrown)


def test_a_yard_drive_stopped_by_a_forced_switch_under_a_car_keeps_its_summary(tmp_path):
    target = tmp_path / "forced_switch.toml"
    target.write_text(tomli_w.dumps({"yard": forced_switch_yard()}))
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        code = main(["drive", str(target), "--out", str(tmp_path / "out")])
    assert code == 0 and err.getvalue() == "", err.getvalue()
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["stop_reason"] == "run-through of switch s1 under a standing car"
