"""The README's plugin tour is a real, running example."""

from __future__ import annotations

from conftest import REPO

from rrscore import drive


def test_readme_shows_the_shunter_plugin_verbatim():
    code = (REPO / "examples/shunter/plugins/shunter.py").read_text()
    assert code.strip() in (REPO / "README.md").read_text()


def test_shunter_example_scenario_runs_and_pulls_its_cars():
    r = drive(REPO / "examples/shunter/scenario.toml")
    assert r.summary["stop_reason"] == "max_time"
    assert r.summary["distance_m"] > 500.0
    # notch 4 of 8 at 220 kN starting effort: 110 kN at the start (the t = 0 row shows
    # the state after the actions at 0 s)
    assert r.series["v0_force_N"][0] == 110e3
