"""`rrs cab`: driven through a pseudo-terminal with scripted keys, it accelerates, brakes,
paces itself to the chosen multiple of real time and writes a headless drive's outputs."""

from __future__ import annotations

import csv
import json
import os
import pty
import re
import subprocess
import sys
import threading
import time
from types import SimpleNamespace

import numpy as np
import pytest
from conftest import CONFIGS

from rrscore import load_scenario
from rrscore.cli.cab import Cab, bindings, engineering, unit_of
from rrscore.run.drive import Drive

SCENARIO = f"""\
[scenario]
name = "cab test"
train = "{CONFIGS / 'trains' / 'simple_loco.toml'}"
route = "{CONFIGS / 'routes' / 'level_30km.toml'}"
[scenario.start]
point = "start"
[scenario.stop]
max_time = "60 s"
[scenario.output]
sample_interval = "0.5 s"
vehicles = [0]
vehicle_signals = ["traction_level"]
"""


class Terminal:
    """A child process on a pseudo-terminal: what it prints is collected as it comes."""

    def __init__(self, args: list[str]) -> None:
        master, slave = pty.openpty()
        self.master = master
        self.proc = subprocess.Popen(args, stdin=slave, stdout=slave, stderr=slave,
                                     close_fds=True)
        os.close(slave)
        self.output = b""
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self.master, 4096)
            except OSError:  # the child has gone: the pty is closed
                return
            if not data:
                return
            self.output += data

    def wait_for(self, text: bytes, timeout: float = 60.0) -> None:
        """Wait until the output matches the regular expression ``text``."""
        end = time.monotonic() + timeout
        while re.search(text, self.output) is None:
            assert time.monotonic() < end, f"no {text!r} in {self.output[-2000:]!r}"
            assert self.proc.poll() is None, self.output.decode(errors="replace")
            time.sleep(0.02)

    def type(self, chars: str) -> None:
        os.write(self.master, chars.encode())

    def close(self, timeout: float = 60.0) -> int:
        code = self.proc.wait(timeout)
        self._reader.join(5)
        os.close(self.master)
        return code


def test_cab_through_a_pty_accelerates_brakes_and_writes_its_outputs(tmp_path):
    scenario = tmp_path / "cab.toml"
    scenario.write_text(SCENARIO)
    out = tmp_path / "out"
    term = Terminal([sys.executable, "-m", "rrscore.cli.main", "cab", str(scenario), "--out",
                     str(out), "--speedup", "10"])
    try:
        term.wait_for(b"km/h")       # the dashboard is up: the terminal is in cbreak mode
        # the drive under way (past numba's loading or compiling, which the pace waits for)
        term.wait_for(rb"time +(0\.[1-9]|[1-9])")
        term.type("w")               # traction_up latched: the level rises 0.5 per second
        time.sleep(0.5)              # about 5 simulated seconds
        term.type("w")               # released: full level held
        time.sleep(1.5)
        term.type("b")               # brake latched: the brake level rises to 1
        time.sleep(1.5)
        term.type("q")
    finally:
        code = term.close()
    screen = term.output.decode(errors="replace")
    assert code == 0, screen
    assert "w  traction_up" in screen and "[held]" in screen and "x10 real time" in screen
    assert "brake_level" in screen and "main_reservoir" in screen

    summary = json.loads((out / "summary.json").read_text())
    assert summary["stop_reason"] == "quit"
    # paced: 10 simulated seconds per wall second, never faster
    assert summary["wall_time_s"] >= 0.95 * summary["sim_time_s"] / 10
    assert summary["max_speed_mps"] > 5.0                       # it accelerated
    assert summary["final_speed_mps"] < 0.8 * summary["max_speed_mps"]  # and braked
    with open(out / "events.csv", newline="") as fh:
        cab_events = [r["detail"] for r in csv.DictReader(fh) if r["event"] == "driver"]
    assert cab_events == ["cab: press traction_up", "cab: release traction_up",
                          "cab: press brake"]
    for name in ("timeseries.csv", "speed.png", "scenario.resolved.toml"):
        assert (out / name).is_file()
    with open(out / "timeseries.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert float(rows[-1]["time_s"]) == pytest.approx(summary["sim_time_s"])
    assert max(float(r["v0_traction_level"]) for r in rows) > 0.9


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_cab_applies_keys_from_a_pipe_and_matches_the_headless_drive(tmp_path):
    # without a terminal (a pipe) and with a clock that never lags, the cab applies a stroke
    # at the next control step; pressing at t = 0 equals a headless `press` at t = 0
    scenario = tmp_path / "cab.toml"
    scenario.write_text(SCENARIO.replace('max_time = "60 s"', 'max_time = "10 s"'))
    sc = load_scenario(scenario)
    read, write = os.pipe()
    os.write(write, b"w")
    screen = open(os.devnull, "w")  # noqa: SIM115
    clock = FakeClock()
    cab = Cab(Drive(sc), speedup=1e9, fd=read, screen=screen, clock=clock)
    result = cab.run(tmp_path / "out")
    screen.close()
    os.close(read)
    os.close(write)
    headless = Drive(sc.with_values({"driver": [{"at_time": 0.05, "press": "traction_up"}]}))
    expected = headless.run()
    np.testing.assert_array_equal(result.series["speed_mps"], expected.series["speed_mps"])
    assert result.summary["stop_reason"] == "max_time"


def test_keys_without_bindings_get_digits():
    model = SimpleNamespace(keys={"horn": "", "bell": "", "sand": ""},
                            key_bindings={"sand": "d"})
    assert bindings(model) == {"d": "sand", "1": "horn", "2": "bell"}


@pytest.mark.parametrize(("value", "unit", "shown"), [
    (22.2222222, "m/s", "80.0 km/h"),     # 80 km/h = 22.22 m/s
    (452_000.0, "N", "452.0 kN"),
    (500_000.0, "Pa", "5.00 bar"),        # 1 bar = 1e5 Pa
    (772_300.0, "Pa", "7.72 bar"),        # (the cab printed 7.723e+05)
    (2_500_000.0, "W", "2.50 MW"),
    (430_000.0, "W", "430 kW"),
    (3.6e9, "J", "3600.00 MJ"),
    (0.375, "%", "38 %"),
    (3.0, "", "3"),
    (0.25, "m/s^2", "0.25 m/s^2"),
])
def test_the_dashboard_shows_values_in_the_units_a_driver_reads(value, unit, shown):
    assert engineering(value, unit) == shown


def test_a_vehicle_types_names_get_their_units_from_declarations_and_suffixes():
    model = load_scenario(CONFIGS / "scenarios" / "brake_service_80.toml").registry \
        .vehicle_types["simple_loco"]
    assert unit_of(model, "main_reservoir") == "Pa"       # a state's declared unit
    assert unit_of(model, "traction_level") == "%"        # a 0..1 control
    assert unit_of(model, "brake_valve") == ""            # a handle position, 1..5
    assert unit_of(model, "traction_force_N") == "N"      # a signal's suffix
    assert unit_of(model, "dynamic_brake_power_W") == "W"
    assert unit_of(model, "compressor_on") == ""


def test_the_dashboard_of_an_air_braked_train_shows_its_brake_pressures_in_bar():
    sc = load_scenario(CONFIGS / "scenarios" / "brake_service_80.toml")
    drive = Drive(sc)
    cab = Cab(drive, screen=open(os.devnull, "w"))  # noqa: SIM115
    drive.run_.advance(5.0)
    lines = cab.dashboard()
    pipe = drive.dyn.air.signal("brake_pipe_Pa", drive.run_.t)
    cylinder = drive.dyn.air.signal("brake_cylinder_Pa", drive.run_.t)
    assert lines[5].startswith("brake pipe") and f"{pipe[0] / 1e5:.2f} bar" in lines[5]
    assert lines[5].endswith(f"at the rear {pipe[-1] / 1e5:6.2f} bar")
    assert lines[6].startswith("cylinder") and f"{cylinder[0] / 1e5:.2f} bar" in lines[6]
    assert any(line.split()[:1] == ["main_reservoir"] and line.endswith(" bar")
               for line in lines)
    assert "e+0" not in "\n".join(lines)  # no raw SI exponents left


def test_a_notch_key_steps_one_notch_a_stroke_where_others_latch(tmp_path):
    # LevelLoco's level keys are notch keys: four strokes of w are level 4 (latched, as
    # before, they were level 2: press, release, press, release)
    sc = load_scenario(CONFIGS / "scenarios" / "calibration_levels.toml")
    drive = Drive(sc)
    cab = Cab(drive, screen=open(os.devnull, "w"))  # noqa: SIM115
    level = cab.batch.record.row("level")
    start = float(level[int(cab.row[0])])
    for char in "wwww":
        cab.stroke(char)
    assert float(level[int(cab.row[0])]) == start + 4
    cab.stroke("s")
    assert float(level[int(cab.row[0])]) == start + 3
    assert cab.latched == set()
    details = [e.detail for e in drive.run_.system.log if e.kind == "driver"]
    assert details[-5:] == ["cab: notch level_up"] * 4 + ["cab: notch level_down"]


def test_a_notch_key_that_is_not_a_key_is_refused_when_the_type_is_registered():
    from rrscore.model.vehicle import check_vehicle_type
    from rrscore.run.plugins import class_problems

    level_loco = load_scenario(CONFIGS / "scenarios" / "calibration_levels.toml").registry \
        .vehicle_types["level_loco"]
    broken = type("Broken", (level_loco,), {"type_name": "broken_level_loco",
                                            "notch_keys": ("level_up", "throttle_up")})
    with pytest.raises(TypeError, match="notch_keys names 'throttle_up', which is not one "
                                        "of its keys"):
        check_vehicle_type(broken)
    assert any(p.startswith("notch_keys names 'throttle_up'") for p in class_problems(broken))
