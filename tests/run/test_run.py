"""A run apart from its scenario: determinism, immutability, snapshots, pickling."""

from __future__ import annotations

import multiprocessing
import pickle
from pathlib import Path

import numpy as np
import pytest
from conftest import CONFIGS

from rrscore import Drive, Run, load_scenario
from rrscore.run import scenario as scenario_module

FREIGHT = CONFIGS / "scenarios/freight_50.toml"
SA3_RUNOUT = CONFIGS / "scenarios/runout_100.toml"


def _short(path: Path, seconds: float = 40.0):
    return load_scenario(path).with_values({"stop.max_time": seconds,
                                            "output.sample_interval": 0.5})


def _drive_in_child(scenario, out: str) -> None:
    Drive(scenario).run(out)


def test_scenario_config_is_read_only():
    sc = load_scenario(FREIGHT)
    with pytest.raises(TypeError):
        sc.config["stop"]["max_time"] = 3.0
    with pytest.raises(TypeError):
        sc.config["train"]["vehicles"].append({})


def test_a_run_leaves_its_scenario_as_it_was():
    sc = _short(FREIGHT)
    before = pickle.dumps(sc)
    Drive(sc).run()
    assert pickle.dumps(sc) == before


def test_same_scenario_run_twice_gives_byte_identical_timeseries(tmp_path):
    sc = _short(FREIGHT)
    Drive(sc).run(tmp_path / "a")
    Drive(sc).run(tmp_path / "b")
    a = (tmp_path / "a" / "timeseries.csv").read_bytes()
    assert len(a.splitlines()) > 50
    assert a == (tmp_path / "b" / "timeseries.csv").read_bytes()
    assert (tmp_path / "a" / "events.csv").read_bytes() == \
        (tmp_path / "b" / "events.csv").read_bytes()


def test_scenario_pickled_to_a_child_process_gives_byte_identical_timeseries(tmp_path):
    sc = _short(SA3_RUNOUT, 20.0)
    Drive(sc).run(tmp_path / "here")
    ctx = multiprocessing.get_context("spawn")  # a fresh interpreter: nothing shared
    child = ctx.Process(target=_drive_in_child, args=(sc, str(tmp_path / "there")))
    child.start()
    child.join(300)
    assert child.exitcode == 0
    here = (tmp_path / "here" / "timeseries.csv").read_bytes()
    assert here == (tmp_path / "there" / "timeseries.csv").read_bytes()


def test_scenarios_unpickled_in_one_process_load_the_plugins_once(monkeypatch, tmp_path):
    # a sweep's worker unpickles a scenario with every case: loading the plugins again for
    # each cost an eighth of a short case
    sc = _short(FREIGHT, 5.0)
    loads = []
    real = scenario_module.load_registry
    monkeypatch.setattr(scenario_module, "load_registry",
                        lambda dirs: loads.append(dirs) or real(dirs))
    monkeypatch.setattr(scenario_module, "_REGISTRIES", {})
    monkeypatch.delenv("RRS_PLUGIN_PATH", raising=False)
    a, b = pickle.loads(pickle.dumps(sc)), pickle.loads(pickle.dumps(sc))
    assert a.registry is b.registry and len(loads) == 1
    there, here = Drive(a).run().series, Drive(sc).run().series
    assert there.keys() == here.keys() and len(here["time_s"]) > 5
    for k in here:
        np.testing.assert_array_equal(there[k], here[k])
    # another plugin path is another set of plugins: loaded afresh
    monkeypatch.setenv("RRS_PLUGIN_PATH", str(tmp_path))
    c = pickle.loads(pickle.dumps(sc))
    assert c.registry is not a.registry and len(loads) == 2


def test_snapshot_then_restore_reproduces_the_rest_of_the_drive_exactly():
    sc = _short(FREIGHT, 60.0)
    rows: list[list[float]] = []
    events = []
    run = Run(sc, on_sample=lambda t, y, row: rows.append(row), on_event=events.append)
    run.advance(20.0)
    saved = run.snapshot()
    mark, marked_events = len(rows), len(events)
    assert run.advance() == "max_time"
    first = rows[mark:]
    first_events = events[marked_events:]
    y_end = run.y
    run.restore(saved)
    assert run.t == pytest.approx(20.0) and run.stop_reason is None
    del rows[mark:]
    del events[marked_events:]
    assert run.advance() == "max_time"
    assert len(first) > 50
    assert rows[mark:] == first
    assert events[marked_events:] == first_events
    np.testing.assert_array_equal(run.y, y_end)


def test_a_run_paused_at_any_time_ends_as_one_run_straight_through():
    sc = _short(FREIGHT, 30.0)
    straight = Run(sc)
    straight.advance()
    paused = Run(sc)
    for t in (1.234, 7.0, 12.01):  # pauses are rounded up to control times
        assert paused.advance(t) is None
    paused.advance()
    np.testing.assert_array_equal(paused.y, straight.y)


def test_run_state_blocks_are_named_with_units():
    run = Run(_short(FREIGHT))
    blocks = run.system.layout.blocks
    assert list(blocks)[:2] == ["body.x", "body.v"]
    assert {"wheel.phi", "wheel.omega"} <= set(blocks)
    assert blocks["body.v"].spec.unit == "m/s"
    assert blocks["wheel.omega"].spec.unit == "rad/s"
    assert blocks["simple_loco.main_reservoir"].spec.unit == "Pa"
    assert run.state("body.v").shape == (51,)
    np.testing.assert_array_equal(run.state("body.x"), run.y[run.system.layout["body.x"]])


def test_named_points_are_passed_at_the_times_constant_speed_gives():
    # two free cars coasting at 10 m/s without resistance, the start position being the
    # train's front: the front reaches each point (p - 1000 m) / v after the start;
    # front and rear columns bound the train
    from conftest import car_config, make_scenario

    car = car_config(resistance={"formula": "none", "starting": False})
    sc = make_scenario([{"config": car, "count": 2}],
                       points=[{"name": "P", "position": "1100 m"},
                               {"name": "Q", "position": "1234.5 m"},
                               {"name": "behind", "position": "900 m"}],
                       start={"position": "1000 m", "speed": 10.0},
                       stop={"max_time": 30.0}, output={"sample_interval": 1.0})
    r = Drive(sc).run()
    front0 = 1000.0
    points = {p["point"]: p for p in r.summary["points"]}
    assert set(points) == {"P", "Q"}
    for name, at in (("P", 1100.0), ("Q", 1234.5)):
        assert points[name]["time_s"] == pytest.approx((at - front0) / 10.0, abs=1e-6)
        assert points[name]["speed_mps"] == pytest.approx(10.0, rel=1e-9)
    s = r.series
    assert s["front_m"][0] == front0
    np.testing.assert_allclose(s["front_m"], s["position_m"] + 13.92 / 2, rtol=1e-12)
    length = s["front_m"] - s["rear_m"]
    np.testing.assert_allclose(length, 2 * 13.92, atol=0.05)  # two cars, slack aside
