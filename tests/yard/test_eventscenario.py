"""A scenario run by the free-car engine (``dynamics = "events"``, rrscore.yard.eventscenario):
the same scenario under both engines, and what the free-car engine refuses."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from conftest import CONFIGS, car_config, make_scenario

import rrscore
from rrscore import Run, load_scenario
from rrscore.model.errors import ConfigError
from rrscore.run.sweep import Sweep
from rrscore.yard.eventscenario import yard_from_scenario
from rrscore.yard.yardrun import YardRun

FRICTION = {"formula": "davis", "A": 2000.0, "B": 0.0, "C": 0.0, "starting": False}
SPRING = {"model": "spring_damper", "params": {
    "stiffness": "20 MN/m", "damping": "200 kN*s/m", "slack": "5 mm"},
    "coupling_speed": "2 m/s"}


def shunting(dynamics: str, **sections):
    """A car at 1.8 m/s runs into four cars standing apart (gaps 2.5, 1.5, 3 and 2 m
    beyond the slack) and couples to each in turn; 2 kN of friction per car."""
    cars = [{"config": car_config(resistance=FRICTION)}]
    cars += [{"config": car_config(resistance=FRICTION), "coupled": False}] * 4
    start = {"position": "1 km", "speeds": [0, 0, 0, 0, 1.8], "gaps": [2.0, 3.0, 1.5, 2.5]}
    sections.setdefault("stop", {"max_time": 120.0})
    return make_scenario(cars, coupling=SPRING, dynamics=dynamics, start=start, **sections)


def test_one_scenario_runs_under_either_engine_and_they_agree_within_a_centimetre():
    # the continuous core integrates the couplers' springs and dampers through each
    # coupling; the free-car engine takes each as a plastic impact (seed 001)
    core = Run(shunting("multibody"))
    core.advance()
    events = YardRun(yard_from_scenario(shunting("events")))
    events.advance(120.0)
    _, offset, speed, _ = events._state()
    x_core = core.y[core.dyn.sx]
    assert np.all(core.y[core.dyn.sv] == 0.0) and np.all(speed == 0.0)
    np.testing.assert_allclose(offset, x_core, rtol=0, atol=0.01)  # every car, lead first
    core_couplings = [(e.t, e.coupling) for e in core.dyn.log if e.kind == "coupled"]
    assert [c for _, c in core_couplings] == [3, 2, 1, 0]  # from the rear forwards
    ours = [e for e in events.events if e.kind == "coupled"]
    # cut "vehicles 0" .. "vehicle 4": coupling j joins vehicle j to vehicle j + 1
    assert [int(e.cut.split()[-1].split("-")[-1]) for e in ours] == [3, 2, 1, 0]
    np.testing.assert_allclose([e.t for e in ours], [t for t, _ in core_couplings], atol=0.05)


def test_the_impact_scenario_couples_at_the_same_instant_in_both_engines():
    sc = load_scenario(CONFIGS / "scenarios" / "impact_1ms.toml")
    core = Run(sc)
    core.advance(20.0)
    events = YardRun(yard_from_scenario(sc.with_values({"dynamics": "events"})))
    events.advance(20.0)
    (coupled,) = [e for e in events.events if e.kind == "coupled"]
    (core_coupled,) = [e for e in core.dyn.log if e.kind == "coupled"]
    assert coupled.t == pytest.approx(core_coupled.t, abs=1e-6)
    # by hand: the gap closes over 0.3 m and half the SA-3's 11 mm (the slack starts in
    # its middle and closes on the compression side), the car slowed by its running
    # resistance at 1 m/s (3.6 km/h, axle load q0 = 23.125 t), 0.7 + (3 + 0.36 + 0.0025 *
    # 3.6^2) / q0 = 0.8467 N/kN, and the starting resistance's excess over the running
    # one at rest, 28 / (q0 + 7) - (0.7 + 3 / q0) = 0.0998 N/kN, blended out by 10 km/h:
    # 0.0639 N/kN. 0.9106 N/kN of 907.1 kN on 94.18 t (the wheelsets' rotating mass in)
    a, d = 0.9106 * 907.1 / 94177.0, 0.3 + 0.0055
    assert coupled.t == pytest.approx((1.0 - math.sqrt(1.0 - 2.0 * a * d)) / a, abs=5e-5)
    _, offset, speed, _ = events._state()
    np.testing.assert_allclose(offset, core.y[core.dyn.sx], atol=0.02)
    np.testing.assert_allclose(speed, core.y[core.dyn.sv], rtol=0.005)


def test_a_drive_of_an_event_scenario_writes_the_yard_outputs(tmp_path):
    result = rrscore.drive(shunting("events"), out=tmp_path)
    assert {p.name for p in tmp_path.iterdir()} >= {"events.csv", "positions.csv",
                                                    "summary.json", "plan.png"}
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["events"]["coupled"] == 4 and summary["cuts"] == 5
    assert result.summary["stop_reason"] == "max_time"


@pytest.mark.parametrize("sections, key", [
    ({"driver": [{"at_time": "10 s", "set": {"hand_brake": 1}}]}, "scenario.driver"),
    ({"environment": {"wind": "5 m/s"}}, "scenario.environment.wind"),
    ({"stop": {"max_time": 60.0, "at_position": "2 km"}}, "scenario.stop.at_position"),
])
def test_what_the_free_car_engine_cannot_run_is_refused_naming_the_key(sections, key):
    scenario = shunting("events", **sections)  # a valid train scenario: the yard refuses it
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        yard_from_scenario(scenario)


def test_loading_validating_or_driving_an_event_scenario_refuses_what_the_engine_lacks(
        tmp_path):
    # the shipped impact scenario with dynamics = "events" and wind, which the free-car
    # engine has no counterpart for: refused on loading, as rrscore.load_scenario,
    # rrscore.validate_file and rrscore.drive load it (rrscore.api decides the engine)
    text = (CONFIGS / "scenarios" / "impact_1ms.toml").read_text(encoding="utf-8")
    text = text.replace('"../', f'"{CONFIGS.as_posix()}/').replace(
        'name = "impact at 1 m/s"', 'name = "impact at 1 m/s"\ndynamics = "events"')
    path = tmp_path / "impact_events.toml"
    path.write_text(text + '\n[scenario.environment]\nwind = "5 m/s"\n', encoding="utf-8")
    for call in (rrscore.load_scenario, rrscore.validate_file, rrscore.drive):
        with pytest.raises(ConfigError, match=r"scenario\.environment\.wind"):
            call(path)
    path.write_text(text, encoding="utf-8")  # without the wind it loads, and drives
    assert rrscore.load_scenario(path).config["dynamics"] == "events"
    assert rrscore.drive(path).summary["events"] == {"coupled": 1}


def test_a_train_off_the_route_a_gap_inside_a_coupled_cut_and_mixed_speeds_are_refused():
    cars = [{"config": car_config(resistance=FRICTION), "count": 3}]
    with pytest.raises(ConfigError, match=r"start\.position: found the train from -41\.76 "
                       r"m to 0\.00 m, expected it between the route's ends"):
        yard_from_scenario(make_scenario(cars, dynamics="events"))
    with pytest.raises(ConfigError, match=r"start\.gaps\[1\].*coupled joint"):
        yard_from_scenario(make_scenario(cars, dynamics="events",
                                         start={"position": 100.0, "gaps": [0.0, 0.5]}))
    with pytest.raises(ConfigError, match=r"start\.speeds.*one speed per coupled cut"):
        yard_from_scenario(make_scenario(cars, dynamics="events",
                                         start={"position": 100.0, "speeds": [1.0, 1.0, 0.0]}))


def test_a_run_and_a_sweep_of_an_event_scenario_say_what_to_use_instead():
    sc = shunting("events")
    with pytest.raises(ConfigError, match="scenario.dynamics.*rrs drive or rrscore.drive"):
        Run(sc)
    with pytest.raises(ConfigError, match="dynamics.*'events'"):
        Sweep(shunting("multibody"), {"dynamics": ["multibody", "events"]})
