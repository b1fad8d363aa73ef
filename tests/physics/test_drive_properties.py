"""Property-based attack on the laws as the train engine runs them (hypothesis): random
valid short drives (a locomotive, up to ten cars of either shipped kind, every shipped
coupler model but the table gear, any grade, curve and speed limit) give only finite
outputs and a summary.

The CI run tries 100 drives; set ``RRS_PROPERTY_SCALE`` (say 20) for a longer, nightly
run.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np
from conftest import make_scenario
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from rrscore import Drive

SCALE = max(1, int(os.environ.get("RRS_PROPERTY_SCALE", "1")))

COUPLERS = {
    "spring_damper": {"stiffness": "20 MN/m", "damping": "200 kN*s/m", "slack": "11 mm"},
    "sa3": {},
    "linear": {},
}


@st.composite
def short_drives(draw) -> dict[str, Any]:
    cars = draw(st.integers(min_value=0, max_value=10))
    vehicles: list[dict[str, Any]] = [{"config": "vehicles/simple_loco.toml"}]
    if cars:
        vehicles.append({"config": draw(st.sampled_from(["vehicles/freight_car_4axle.toml",
                                                         "vehicles/us_hopper_davis.toml"])),
                         "count": cars,
                         "payload_fraction": draw(st.floats(min_value=0.0, max_value=1.0))})
    model = draw(st.sampled_from(sorted(COUPLERS)))
    grade = draw(st.floats(min_value=-30.0, max_value=30.0))
    driver = [{"at_time": draw(st.floats(min_value=0.0, max_value=5.0)),
               "set": {"traction_level": draw(st.floats(min_value=0.0, max_value=1.0))}}]
    if draw(st.booleans()):
        driver.append({"at_time": draw(st.floats(min_value=0.0, max_value=20.0)),
                       "press": "brake"})
    return {
        "vehicles": vehicles,
        "elements": [{"length": "5 km", "grade": f"{grade} permille",
                      "radius": draw(st.sampled_from([0.0, 300.0, 1000.0])),
                      # a route without limits reports the limit as inf ("none") by design
                      "speed_limit": f"{draw(st.integers(min_value=20, max_value=160))} km/h"}],
        "coupling": {"model": model, "params": COUPLERS[model]},
        "start": {"speed": draw(st.floats(min_value=0.0, max_value=25.0)),
                  "slack": draw(st.sampled_from(["neutral", "bunched", "stretched"]))},
        # (rk4 at 2 ms: within its stability limit on every one of these trains, 5 ms on
        # empty cars with friction gears; a longer step is refused before the drive)
        "solver": draw(st.sampled_from([{"method": "rk45"},
                                        {"method": "rk4", "step": 0.002}])),
        "driver": driver,
        "stop": {"max_time": draw(st.floats(min_value=1.0, max_value=30.0)),
                 "standstill": draw(st.booleans())},
        "output": {"sample_interval": draw(st.sampled_from([0.25, 0.5, 1.0])),
                   "vehicles": [0], "vehicle_signals": ["speed_mps", "max_slip_mps"]},
    }


def _finite(value: Any) -> bool:
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    if isinstance(value, float):
        return math.isfinite(value)
    return True


@settings(max_examples=100 * SCALE, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(spec=short_drives())
def test_a_random_valid_short_drive_gives_finite_outputs_and_a_summary(spec):
    scenario = make_scenario(**spec)
    result = Drive(scenario).run()
    s = result.summary
    event(f"stop: {s['stop_reason']}")
    assert s["stop_reason"] in ("max_time", "standstill", "end_of_route", "no progress"), s
    if s["stop_reason"] == "no progress":  # the guard, not a hang: it names what repeats
        assert "event" in s["error"] and "t = " in s["error"]
    # the energy account closes to 0.1 % of its largest flow (else the drive warns), or
    # to a microjoule (a drive that hardly moves)
    largest = max(abs(v) for k, v in s["energy"].items() if k != "balance_error_J")
    assert abs(s["energy"]["balance_error_J"]) <= max(1e-3 * largest, 1e-6), s["energy"]
    assert s["warnings"] == []
    s = {k: v for k, v in s.items() if k != "real_time_factor"}  # inf for a 0 s wall time
    assert _finite(s), s
    for name, column in result.series.items():
        assert np.isfinite(column).all(), name
