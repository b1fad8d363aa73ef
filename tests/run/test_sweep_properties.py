"""Property-based attacks on sweep specs (hypothesis): a malformed ``rrs sweep`` command
line (``--param`` strings, unknown keys, empty values, non-finite numbers, grids of too
many cases, bad ``--workers``, zip lists of different lengths) is one line on stderr,
exit status 2, naming the option, with no traceback, no internal error and nothing
written, refused before any case runs; and a sweep's cases, made one at a time from their
index, are exactly the grid's product or the zip's rows.

The CI run tries a few hundred specs; set ``RRS_PROPERTY_SCALE`` (say 20) for a longer,
nightly run.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import os
import string
import tempfile
from pathlib import Path

import pytest
from conftest import CONFIGS
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import rrscore
from rrscore.cli.main import main
from rrscore.model.errors import ConfigError
from rrscore.run.sweep import MAX_WORKERS, Sweep
from rrscore.run.sweepcases import MAX_CASES, Cases

SCALE = max(1, int(os.environ.get("RRS_PROPERTY_SCALE", "1")))
SCENARIO = CONFIGS / "scenarios" / "simple_loco_level.toml"

#: Keys of the scenario a sweep may vary, each with a value that is valid for it.
KEYS = {"start.speed": "10 km/h", "stop.max_time": "2 s", "solver.control_step": "0.05 s",
        "output.sample_interval": "1 s"}

#: Values wrong for the keys above (the NEGATIVE ones but for the start speed):
#: non-finite and out-of-range numbers, bad units, wrong types.
BAD_VALUES = st.sampled_from([
    "nan", "inf", "-inf", "1e999", "-1e999", "-1", "-1e30", "-1e308", "nan km/h",
    "inf s", "5 furlongs", "12 kg", "true", "[]", "[1, 2]", "{a = 1}", '"fast"', "-0.5 s",
])

#: Values wrong for every key above but the start speed (a train may start backwards).
NEGATIVE = ("-1", "-1e30", "-1e308", "-0.5 s")

NAME = st.text(string.ascii_lowercase + "_.[]0123456789", min_size=1, max_size=20)


def _spec(kind: str, draw: st.DrawFn) -> tuple[list[str], str]:
    """A malformed command line of kind ``kind`` and a fragment its error must hold."""
    key = draw(st.sampled_from(sorted(KEYS)))
    if kind == "no_equals":
        return ["--param", draw(NAME)], "--param"
    if kind == "empty_key":
        return ["--param", "=" + KEYS[key]], "--param"
    if kind == "empty_values":
        return ["--param", f"{key}=" + draw(st.sampled_from(["", ",", " , ,", ",,,"]))], \
            f"--param {key}: found no values"
    if kind == "unknown_key":
        return ["--param", f"nosuch_{draw(NAME)}=1"], "--param"
    if kind == "bad_value":
        good = [KEYS[key]] * draw(st.integers(0, 3))
        bad = draw(BAD_VALUES.filter(lambda v: key != "start.speed" or v not in NEGATIVE))
        values = [*good, bad]
        return ["--param", f"{key}=" + ",".join(draw(st.permutations(values)))], "--param"
    if kind == "twice":
        return ["--param", f"{key}={KEYS[key]}", "--param", f"{key}={KEYS[key]}"], \
            "given twice"
    if kind == "huge_grid":
        # a grid past the limit, its values all valid: refused by its count alone
        per_key = int(MAX_CASES ** (1 / len(KEYS))) + 1 + draw(st.integers(0, 50))
        args = []
        for k in KEYS:
            stem = KEYS[k].split()[0]
            args += ["--param", f"{k}=" + ",".join(f"{stem}{i:04d}" for i in range(per_key))]
        return args, "expected at most 1,000,000,000"
    if kind == "zip_lengths":
        n, m = draw(st.integers(1, 4)), draw(st.integers(1, 4))
        if n == m:
            m += 1
        other = next(k for k in sorted(KEYS) if k != key)
        return ["--zip", "--param", f"{key}=" + ",".join([KEYS[key]] * n),
                "--param", f"{other}=" + ",".join([KEYS[other]] * m)], \
            "different numbers of values"
    if kind == "workers":
        workers = draw(st.one_of(st.integers(max_value=0),
                                 st.integers(min_value=MAX_WORKERS + 1, max_value=10**12)))
        return ["--param", f"{key}={KEYS[key]}", f"--workers={workers}"], "--workers"
    if kind == "workers_text":
        text = draw(st.sampled_from(["abc", "1.5", "nan", "", "1e3", "two"]))
        return ["--param", f"{key}={KEYS[key]}", f"--workers={text}"], "--workers"
    assert kind == "columns"
    return ["--param", f"{key}={KEYS[key]}", "--columns", f"nosuch_{draw(NAME)}"], \
        "--columns"


KINDS = ("no_equals", "empty_key", "empty_values", "unknown_key", "bad_value", "twice",
         "huge_grid", "zip_lengths", "workers", "workers_text", "columns")


@st.composite
def bad_specs(draw: st.DrawFn) -> tuple[str, list[str], str]:
    kind = draw(st.sampled_from(KINDS))
    args, fragment = _spec(kind, draw)
    return kind, args, fragment


def run_cli(args: list[str]) -> tuple[int, str]:
    """``rrs`` in this process: its exit status and its stderr."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(args)
        except SystemExit as exc:  # a command-line error found by argparse: its status
            code = exc.code
    return code, err.getvalue()


@settings(max_examples=200 * SCALE, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                 HealthCheck.too_slow, HealthCheck.data_too_large])
@given(spec=bad_specs())
def test_a_malformed_sweep_spec_is_one_line_exit_2_naming_the_option(tmp_path: Path,
                                                                      spec) -> None:
    kind, args, fragment = spec
    event(kind)
    out = Path(tempfile.mkdtemp(dir=tmp_path)) / "sw"  # (one tmp_path for every example)
    code, err = run_cli(["sweep", str(SCENARIO), *args, "--out", str(out)])
    assert code == 2, (args, code, err)
    assert err.count("\n") == 1 and err.startswith("rrs: error: "), err
    assert "Traceback" not in err and "internal error" not in err, err
    assert fragment in err, (fragment, err)
    assert not (out / "sweep.csv").exists()  # refused before any case ran


@pytest.fixture(scope="module")
def scenario() -> rrscore.Scenario:
    return rrscore.load_scenario(SCENARIO)


@settings(max_examples=50 * SCALE, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mode=st.text(max_size=10).filter(lambda m: m not in ("grid", "zip")))
def test_an_unknown_mode_is_a_config_error_naming_the_modes(scenario, mode: str) -> None:
    with pytest.raises(ConfigError, match="expected grid or zip"):
        Sweep(scenario, {"stop.max_time": [1]}, mode=mode)


@settings(max_examples=300 * SCALE, deadline=None)
@given(values=st.lists(st.lists(st.integers(), min_size=1, max_size=5), min_size=1,
                       max_size=4),
       data=st.data())
def test_cases_made_from_their_index_are_the_grid_product_and_the_zip_rows(values,
                                                                          data) -> None:
    params = {f"k{j}": v for j, v in enumerate(values)}
    grid = Cases(params, "grid")
    expected = [dict(zip(params, combo, strict=True))
                for combo in itertools.product(*values)]
    assert len(grid) == grid.count == len(expected)
    assert list(grid) == expected
    i = data.draw(st.integers(-len(expected), len(expected) - 1))
    assert grid[i] == expected[i]
    with pytest.raises(IndexError):
        grid[len(expected)]
    n = min(len(v) for v in values)
    same = {k: v[:n] for k, v in params.items()}
    assert list(Cases(same, "zip")) == [dict(zip(same, row, strict=True))
                                        for row in zip(*same.values(), strict=True)]


def test_a_grid_past_sys_maxsize_is_counted_and_refused_without_making_a_case(
        scenario) -> None:
    values = list(range(100))
    cases = Cases({f"k{j}": values for j in range(12)})  # 10^24 cases
    assert cases.count == 10**24
    assert cases[10**18 - 1] == {**{f"k{j}": 0 for j in range(3)},
                                 **{f"k{j}": 99 for j in range(3, 12)}}
    keys = ["start.speed", "stop.max_time", "solver.control_step", "output.sample_interval",
            "train.vehicles[0].count"]
    with pytest.raises(ConfigError, match=r"found 10,000,000,000 cases, expected at most"):
        Sweep(scenario, {k: values for k in keys})  # refused before a value is checked
