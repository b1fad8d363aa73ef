"""Every shipped scenario loads and drives (briefly): the configs stay in step with the code."""

from __future__ import annotations

import pytest
from conftest import CONFIGS, REPO

from rrscore import Drive, load_scenario

SCENARIOS = sorted(CONFIGS.glob("scenarios/*.toml")) + [REPO / "examples/shunter/scenario.toml"]


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_shipped_scenario_drives_its_first_seconds(path):
    sc = load_scenario(path).with_values({"stop.max_time": 3.0})
    r = Drive(sc).run()
    assert r.summary["stop_reason"] == "max_time"
    assert r.summary["sim_time_s"] == pytest.approx(3.0)
