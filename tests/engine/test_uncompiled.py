"""The compiled code is the reference code compiled: every shipped scenario, and the
branches they do not reach in a short stretch (a slip and re-adhesion, a slide and
locked wheels, a coupler breaking, couplers meeting, the air brake applied, vehicles
stopping, a rigid train as one body), driven compiled
and with numba's compilation off (``NUMBA_DISABLE_JIT=1``, the same functions run as
Python), agree: positions within 1 mm, coupler forces within 0.5 %, the same events."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = sorted(p.stem for p in (REPO / "configs" / "scenarios").glob("*.toml"))

#: (name, scenario, values set on it): a short stretch of every shipped scenario, and of
#: variants that reach the branches the stretches do not.
#: (the 100-car slack cases run a quarter of a second: as Python they take 40 s a second)
CASES = [(name, name, {"stop.max_time": 0.25 if name.startswith("run") else 1.0})
         for name in SCENARIOS] + [
    ("brake_emergency_applied", "brake_emergency_80", {"stop.max_time": 3.0}),
    ("coupler_break", "freight_50", {"stop.max_time": 3.0,
                                     "train.coupling.break_force": "150 kN"}),
    ("slip_and_readhesion", "simple_loco_level", {
        "stop.max_time": 3.0,
        "driver": [{"at_time": 0.0, "set": {"traction_level": 1.0}},
                   {"at_time": 0.0, "rail_condition": "wet"},
                   {"at_time": 1.0, "set": {"traction_level": 0.1}}]}),
    ("slide_and_wheels_locked", "simple_loco_level", {
        "stop.max_time": 4.0, "start.speed": "60 km/h",
        "driver": [{"at_time": 0.0, "rail_condition": "wet"},
                   {"at_time": 0.0, "set": {"brake_level": 1.0}}]}),
    ("rigid_one_body", "rigid_40km", {"stop.max_time": 30.0}),
    ("speed_limit_exceeded", "freight_50", {"stop.max_time": 3.0,
                                            "start.speed": "90 km/h"}),
]

#: Runs every case and prints each one's figures as a JSON line (in this process, or
#: in one with numba's compilation off).
SCRIPT = """
import json, sys
import numpy as np
import rrscore
from rrscore.api import load_scenario
for name, scenario, values in json.loads(sys.argv[1]):
    sc = load_scenario(f"{sys.argv[2]}/configs/scenarios/{scenario}.toml").with_values(values)
    r = rrscore.Drive(sc).run()
    s = r.series
    forces = [k for k in s if k.startswith("c") and k.endswith("_force_N")]
    print(json.dumps({"name": name, "distance": r.summary["distance_m"],
                      "front": np.asarray(s["front_m"]).tolist(),
                      "speed": np.asarray(s["speed_mps"]).tolist(),
                      "forces": [np.asarray(s[k]).tolist() for k in forces],
                      "tension": r.summary["max_coupler_tension_N"],
                      "compression": r.summary["max_coupler_compression_N"],
                      "events": sorted(e.kind for e in r.events),
                      "applications": [(a["kind"], a["start_time_s"], a["end"])
                                       for a in r.summary["brake_applications"]],
                      "exceeded": r.summary["speed_limit_exceeded"]["count"],
                      "exceedances": [[e["start_time_s"], e["max_excess_mps"], e["time_s"]]
                                      for e in r.summary["speed_limit_exceedances"]],
                      "stop": r.summary["stop_reason"]}))
"""


def _drive_all(compiled: bool) -> dict[str, dict]:
    env = dict(os.environ)
    if not compiled:
        env["NUMBA_DISABLE_JIT"] = "1"
    done = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(CASES), str(REPO)],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    out = {}
    for line in done.stdout.splitlines():
        figures = json.loads(line)
        out[figures["name"]] = figures
    return out


@pytest.fixture(scope="module")
def both() -> tuple[dict, dict]:
    return _drive_all(True), _drive_all(False)


def test_the_cases_reach_every_branch_of_the_train_engine(both):
    kinds = {k for figures in both[0].values() for k in figures["events"]}
    assert {"slip", "slide", "re-adhesion", "wheel locked", "coupler break", "coupled",
            "impact", "driver"} <= kinds
    assert both[0]["speed_limit_exceeded"]["exceeded"] == 1


@pytest.mark.parametrize("name", [c[0] for c in CASES])
def test_a_drive_compiled_is_the_same_drive_uncompiled(both, name):
    compiled, uncompiled = both[0][name], both[1][name]
    assert compiled["stop"] == uncompiled["stop"]
    assert compiled["events"] == uncompiled["events"]
    assert compiled["applications"] == uncompiled["applications"]
    assert compiled["exceeded"] == uncompiled["exceeded"]
    np.testing.assert_allclose(np.reshape(compiled["exceedances"], (-1, 3)),
                               np.reshape(uncompiled["exceedances"], (-1, 3)), rtol=0,
                               atol=1e-6)
    assert len(compiled["front"]) == len(uncompiled["front"])
    np.testing.assert_allclose(compiled["front"], uncompiled["front"], rtol=0, atol=1e-3)
    assert compiled["distance"] == pytest.approx(uncompiled["distance"], abs=1e-3)
    for a, b in zip(compiled["forces"], uncompiled["forces"], strict=True):
        scale = max(np.max(np.abs(a)), 1.0)
        np.testing.assert_allclose(a, b, rtol=0, atol=5e-3 * scale)
    for key in ("tension", "compression"):
        assert compiled[key] == pytest.approx(uncompiled[key], rel=5e-3, abs=1e-6)
