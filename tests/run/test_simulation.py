"""The drive loop: stop conditions, orientation and sampling."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_scenario

from rrscore import Drive

LOCO = {"config": "vehicles/simple_loco.toml"}
FULL = [{"at_time": 0.0, "set": {"traction_level": 1.0}}]


def test_reversed_locomotive_drives_towards_minus_x():
    sc = make_scenario([{**LOCO, "orientation": "reversed"}], start={"position": "10 km"},
                       driver=FULL, stop={"max_time": 20.0})
    r = Drive(sc).run()
    assert r.series["speed_mps"][-1] < -1.0
    assert r.summary["distance_m"] < -10.0


def test_stop_after_a_distance():
    sc = make_scenario([LOCO], start={"position": "1 km"}, driver=FULL,
                       stop={"max_time": 600.0, "max_distance": "500 m"})
    r = Drive(sc).run()
    assert r.summary["stop_reason"] == "max_distance"
    # stopped at the first control step past 500 m: within one step's travel
    assert 500.0 <= r.summary["distance_m"] < 500.0 + 0.05 * r.summary["final_speed_mps"] + 1e-9


def test_stop_at_a_named_point_and_at_the_end_of_the_route():
    elements = [{"length": "3 km"}]
    sc = make_scenario([LOCO], elements, points=[{"name": "signal", "position": "2 km"}],
                       start={"position": "1 km"}, driver=FULL,
                       stop={"max_time": 600.0, "at_point": "signal"})
    r = Drive(sc).run()
    assert r.summary["stop_reason"] == "at_position"
    front = r.series["position_m"][-1] + 32.8 / 2
    assert front == pytest.approx(2000.0, abs=2.0)
    sc = make_scenario([LOCO], elements, start={"position": "1 km"}, driver=FULL,
                       stop={"max_time": 600.0})
    assert Drive(sc).run().summary["stop_reason"] == "end_of_route"


def test_samples_finer_than_the_control_step_are_taken_on_time():
    sc = make_scenario([LOCO], driver=FULL, stop={"max_time": 1.0},
                       output={"sample_interval": 0.01})
    t = Drive(sc).run().series["time_s"]
    np.testing.assert_allclose(t, np.arange(101) * 0.01, atol=1e-9)


def test_row_at_a_control_time_shows_the_actions_of_that_time():
    # The t = 0 row used to show traction 0, written before the actions at 0 s applied.
    sc = make_scenario([LOCO], start={"position": "1 km"}, driver=FULL,
                       stop={"max_time": 2.0})
    r = Drive(sc).run()
    assert r.series["time_s"][0] == 0.0
    assert r.series["traction_force_N"][0] == pytest.approx(450e3, rel=1e-12)  # F_max


def test_fine_sampling_does_not_change_the_integration():
    # Samples come from the solver's dense output; they no longer end steps.
    def run(sample):
        sc = make_scenario([LOCO, {"config": "vehicles/freight_car_4axle.toml", "count": 5}],
                           start={"position": "1 km", "slack": "bunched"}, driver=FULL,
                           stop={"max_time": 20.0}, output={"sample_interval": sample})
        return Drive(sc).run()

    coarse, fine = run(1.0), run(0.01)
    assert coarse.summary["steps"] == fine.summary["steps"]
    assert coarse.summary["distance_m"] == fine.summary["distance_m"]
    assert len(fine.series["time_s"]) == 2001
    # the fine rows at whole seconds are the coarse rows, to the dense output's accuracy
    np.testing.assert_allclose(fine.series["speed_mps"][::100], coarse.series["speed_mps"],
                               rtol=0, atol=1e-6)


def test_the_progress_reaches_one_however_the_drive_stops():
    sc = make_scenario([{"config": "vehicles/simple_loco.toml"}],
                       start={"speed": "20 km/h"}, stop={"max_time": "2 h", "standstill": True},
                       driver=[{"at_time": 0, "set": {"brake_level": 1.0}}])
    seen: list[float] = []
    result = Drive(sc).run(progress=lambda f, t, v: seen.append(f), chunk=1.0)
    assert result.summary["stop_reason"] == "standstill"  # long before max_time
    assert result.summary["sim_time_s"] < 0.5 * 7200.0
    assert seen[-1] == 1.0 and max(seen[:-1]) < 0.5

    def interrupt_at_second(fraction, t, v):
        seen.append(fraction)
        if len(seen) == 2:
            raise KeyboardInterrupt

    seen.clear()
    with pytest.raises(KeyboardInterrupt):
        Drive(sc).run(progress=interrupt_at_second, chunk=1.0)
    assert len(seen) == 3 and seen[1] < 0.5 and seen[-1] == 1.0


def test_summary_is_replaced_whole_and_leaves_no_temporary_file(tmp_path):
    from rrscore.run.outputs.summary import write_atomically

    target = tmp_path / "summary.json"
    target.write_text("old")
    write_atomically(target, '{"new": 1}\n')
    assert target.read_text() == '{"new": 1}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["summary.json"]


def test_a_full_disk_during_the_drive_ends_it_naming_the_file_and_keeps_the_summary(
        tmp_path, monkeypatch):
    import errno
    import json

    from rrscore.model.errors import OutputError
    from rrscore.run.recorder import LineFile

    sc = make_scenario([{"config": "vehicles/simple_loco.toml"}],
                       driver=[{"at_time": 0, "set": {"traction_level": 1.0}}],
                       stop={"max_time": "60 s"}, output={"sample_interval": "0.1 s"})
    real_write = LineFile.write
    rows = 0

    def write(self, values):
        nonlocal rows
        rows += 1
        if rows == 100:
            raise OSError(errno.ENOSPC, "No space left on device", "timeseries.csv")
        real_write(self, values)

    monkeypatch.setattr(LineFile, "write", write)
    with pytest.raises(OutputError) as info:
        Drive(sc).run(tmp_path / "out")
    assert str(info.value).startswith(
        "output writer failed: timeseries.csv: No space left on device, at t = ")
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["stop_reason"] == "error"
    assert summary["error"] == str(info.value)
    assert 0.0 < summary["sim_time_s"] < 60.0
