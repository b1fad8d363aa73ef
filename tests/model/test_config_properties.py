"""Property-based attacks on the configs (hypothesis): a malformed config never gives a
traceback and always names a file (random valid drives: tests/physics/
test_drive_properties.py).

The CI run tries 500 malformed configs; set ``RRS_PROPERTY_SCALE`` (say 20) for a longer,
nightly run.
"""

from __future__ import annotations

import copy
import math
import os
import shutil
import tomllib
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from bad_inputs import key_paths
from conftest import CONFIGS
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from rrscore import validate_file
from rrscore.model.errors import ConfigError, RrsError, each_error

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
def test_a_malformed_config_is_one_line_errors_naming_a_file_never_a_traceback(
        configs_copy, data):
    rel = data.draw(st.sampled_from(SHIPPED), label="file")
    doc = tomllib.loads((CONFIGS / rel).read_text())
    mutations = data.draw(st.integers(min_value=1, max_value=3), label="mutations")
    for _ in range(mutations):
        paths = key_paths(doc)
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
        # every mistake of the file (rrs validate prints one line each)
        for error in each_error(exc) if isinstance(exc, ConfigError) else [exc]:
            message = str(error)
            assert "\n" not in message
            assert ".toml" in message, message  # names the file the problem is in
    # anything else escapes: a traceback, which this test exists to catch
