"""Property-based attacks (hypothesis): malformed configs never give a traceback and
always name a file; random valid short drives give only finite outputs and a summary.

The CI run tries 500 malformed configs and 100 drives; set ``RRS_PROPERTY_SCALE`` (say 20)
for a longer, nightly run.
"""

from __future__ import annotations

import copy
import math
import os
import shutil
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tomli_w
from conftest import CONFIGS, make_scenario
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from rrscore import Drive, validate_file
from rrscore.model.errors import RrsError

SCALE = max(1, int(os.environ.get("RRS_PROPERTY_SCALE", "1")))
SHIPPED = sorted(p.relative_to(CONFIGS) for p in CONFIGS.rglob("*.toml"))

#: Values that are wrong somewhere: wrong types, bad units, NaN and infinities, huge and
#: tiny numbers, empty and odd strings, nested tables and lists.
BAD_VALUES = st.one_of(
    st.sampled_from([
        math.nan, math.inf, -math.inf, 1e308, -1e308, 1e-308, 0, -1, 0.0, -0.0, 10**18,
        -(10**18), True, False, "", " ", "nan km/h", "inf t", "1e308 km/h", "1e308 permille",
        "1e308 kg*m^2", "-5 t", "5 furlongs", "12 kg", "80 km/h", "3 in", "1e400 m", "NaN",
        "../../nonexistent.toml", "a\u0000b", "x" * 300, [], [1, "a"], [math.nan], {},
        {"a": 1}, [{}], "🚂",
    ]),
    st.integers(min_value=-(10**12), max_value=10**12),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
)


def _paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    """Every key path in a parsed TOML document (tables, lists and leaves)."""
    out = []
    if isinstance(node, dict):
        for k, v in node.items():
            out.append((*prefix, k))
            out.extend(_paths(v, (*prefix, k)))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out.append((*prefix, i))
            out.extend(_paths(v, (*prefix, i)))
    return out


def _mutate(doc: dict, path: tuple, kind: str, value: Any) -> None:
    node = doc
    for part in path[:-1]:
        node = node[part]
    key = path[-1]
    if kind == "delete":
        del node[key]
    elif kind == "rename" and isinstance(node, dict):
        node[f"{key}x"] = node.pop(key)
    else:
        # a copy: hypothesis may hand out one list object twice, and a list put inside
        # itself would make the document endless
        node[key] = copy.deepcopy(value)


@pytest.fixture(scope="module")
def configs_copy(tmp_path_factory) -> Path:
    """A copy of configs/, so mutated files sit where their relative paths resolve."""
    root = tmp_path_factory.mktemp("configs")
    shutil.copytree(CONFIGS, root / "configs")
    return root / "configs"


@settings(max_examples=500 * SCALE, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_a_malformed_config_is_one_error_naming_a_file_never_a_traceback(configs_copy, data):
    rel = data.draw(st.sampled_from(SHIPPED), label="file")
    doc = tomllib.loads((CONFIGS / rel).read_text())
    mutations = data.draw(st.integers(min_value=1, max_value=3), label="mutations")
    for _ in range(mutations):
        paths = _paths(doc)
        if not paths:
            break
        path = data.draw(st.sampled_from(paths), label="path")
        kind = data.draw(st.sampled_from(["replace", "replace", "replace", "delete", "rename"]),
                         label="kind")
        _mutate(doc, path, kind, data.draw(BAD_VALUES, label="value"))
    target = configs_copy / rel.parent / f"mutated_{rel.name}"
    try:
        target.write_text(tomli_w.dumps(doc))
    except (ValueError, TypeError):  # not representable in TOML (a NUL in a key, say)
        return
    try:
        validate_file(target)
        event("valid")
    except RrsError as exc:
        event(f"rejected: {type(exc).__name__}")
        message = str(exc)
        assert "\n" not in message
        assert ".toml" in message, message  # names the file the problem is in
    # anything else escapes: a traceback, which this test exists to catch


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
        "solver": {"method": draw(st.sampled_from(["rk45", "rk4"]))},
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
    s = {k: v for k, v in s.items() if k != "real_time_factor"}  # inf for a 0 s wall time
    assert _finite(s), s
    for name, column in result.series.items():
        assert np.isfinite(column).all(), name
