"""The README's plugin tour is a real, running example, written in the one form of the
plugin API and compiled by numba."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from conftest import REPO

from rrscore import drive, load_registry, load_scenario
from rrscore.cli.plugincheck import adapters_of, check_vehicle_type
from rrscore.jit import UNCOMPILED

PLUGINS = REPO / "examples/shunter/plugins"


def test_readme_shows_the_shunter_plugin_verbatim():
    code = (PLUGINS / "shunter.py").read_text()
    assert code.strip() in (REPO / "README.md").read_text()


def test_shunter_example_scenario_runs_and_pulls_its_cars():
    r = drive(REPO / "examples/shunter/scenario.toml")
    assert r.summary["stop_reason"] == "max_time"
    assert r.summary["distance_m"] > 500.0
    # notch 4 of 8 at 220 kN starting effort: 110 kN at the start (the t = 0 row shows
    # the state after the actions at 0 s)
    assert r.series["v0_force_N"][0] == 110e3


def test_shunter_notch_keys_move_the_notch_within_its_range():
    # notch 4, then 8 by a control; two presses up are clamped at 8, one down gives 7:
    # 7/8 of the constant-power curve, power / speed (the vehicle config: 750 kW, 220 kN)
    sc = load_scenario(REPO / "examples/shunter/scenario.toml")
    presses = [{"at_time": t, "press": key} for t, key in (
        (40.0, "notch_up"), (41.0, "notch_up"), (42.0, "notch_down"))]
    releases = [{"at_time": a["at_time"] + 0.5, "release": a["press"]} for a in presses]
    driver = [{"at_time": 0.0, "set": {"notch": 4}}, {"at_time": 31.0, "set": {"notch": 8}},
              *presses, *releases]
    r = drive(sc.with_values({"driver": driver, "stop.max_time": 50.0}))
    t, v, f = r.series["time_s"], r.series["speed_mps"], r.series["v0_force_N"]
    k = int(np.argmax(t >= 39.0))
    assert f[k] == pytest.approx(750e3 / v[k], rel=1e-12)  # notch 8, above 3.4 m/s
    k = int(np.argmax(t >= 43.0))
    assert t[k] < 44.0 and f[k] == pytest.approx(7 / 8 * 750e3 / v[k], rel=1e-12)


def test_shunter_passes_the_plugin_check():
    check = check_vehicle_type(load_registry([PLUGINS]), "shunter")
    assert check.ok, check.problems


@pytest.mark.skipif(UNCOMPILED, reason="NUMBA_DISABLE_JIT: nothing is compiled")
def test_shunter_runs_compiled(tmp_path):
    # a copy, which numba compiles from nothing (see the next test for the plugin's own
    # directory)
    (tmp_path / "shunter.py").write_text((PLUGINS / "shunter.py").read_text())
    adapters = adapters_of(load_registry([tmp_path]).vehicle_types["shunter"])
    assert set(adapters) == {"step", "on_input"}
    for name, adapter in adapters.items():
        assert adapter.compiled, f"{name}: {adapter.reason}"


@pytest.mark.skipif(UNCOMPILED, reason="NUMBA_DISABLE_JIT: nothing is compiled")
def test_a_plugin_from_a_plugin_directory_runs_compiled_in_every_process():
    lines = []
    for _ in range(2):
        done = subprocess.run([sys.executable, "-m", "rrscore.cli.main", "plugins", "-v",
                               "--plugins", str(PLUGINS)], capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, done.stderr
        out = done.stdout
        lines.append(out[out.index("vehicle type shunter"):].splitlines()[1:9])
    for listed in lines:
        assert "      step: compiled by numba" in listed, listed
        assert "      on_input: compiled by numba" in listed, listed
