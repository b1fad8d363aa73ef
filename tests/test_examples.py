"""The README's plugin tour is a real, running example, written in the one form of the
plugin API and compiled by numba."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import REPO

from rrscore import drive, load_registry
from rrscore.cli.plugincheck import adapters_of, check_vehicle_type
from rrscore.jit import UNCOMPILED

PLUGINS = REPO / "examples/shunter/plugins"


@pytest.mark.xfail(strict=True, reason="README.md still shows the shunter of the old API "
                   "(numpy methods on the instance); its plugin tour is to be rewritten "
                   "with examples/shunter/plugins/shunter.py as it is now")
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
    # from notch 4: up at 30 s, set 8 at 31 s; then two more presses are clamped at 8 and
    # one press down gives 7: 7/8 of the constant-power curve, power / speed
    scenario = REPO / "examples/shunter/scenario.toml"
    from rrscore import load_scenario

    sc = load_scenario(scenario)
    driver = list(sc.config["driver"]) + [
        {"at_time": t, key: "notch_up" if "up" in what else "notch_down"}
        for t, key, what in ((40.0, "press", "up"), (40.5, "release", "up"),
                             (41.0, "press", "up"), (41.5, "release", "up"),
                             (42.0, "press", "down"))]
    r = drive(sc.with_values({"driver": driver, "stop.max_time": 50.0}))
    t = r.series["time_s"]
    v = r.series["speed_mps"]
    f = r.series["v0_force_N"]
    later = t >= 43.0
    assert later.any()
    # (the vehicle config: 750 kW, 220 kN)
    expected = 7 / 8 * min(220e3, 750e3 / max(abs(v[later][0]), 0.1))
    assert f[later][0] == pytest.approx(expected, rel=2e-2)


def test_shunter_passes_the_plugin_check():
    check = check_vehicle_type(load_registry([PLUGINS]), "shunter")
    assert check.ok, check.problems


@pytest.mark.skipif(UNCOMPILED, reason="NUMBA_DISABLE_JIT: nothing is compiled")
def test_shunter_runs_compiled_when_first_loaded():
    cls = load_registry([PLUGINS]).vehicle_types["shunter"]
    first = adapters_of(cls)
    # (a process that loaded it before may have left numba's cache stale: see below)
    assert set(first) == {"step", "on_input"}
    for name, adapter in first.items():
        assert adapter.compiled or "ModuleNotFoundError" in adapter.reason, adapter.reason


@pytest.mark.skipif(UNCOMPILED, reason="NUMBA_DISABLE_JIT: nothing is compiled")
@pytest.mark.xfail(strict=True, reason=(
    "rrscore bug: a plugin loaded from a plugin directory gets a new module name in each "
    "process (rrscore.run.plugins._import_path names it by the salted hash() of its path), "
    "so its adapter module's name changes, and numba's on-disk cache of the plugin's "
    "functions, which names the earlier adapter's record type, fails to load "
    "(ModuleNotFoundError): the adapter then calls the plugin in Python"))
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
