"""Property-based attacks on yard and network files (hypothesis), through the command
line (``rrs validate`` and ``rrs drive``, called in this process): a malformed yard or
network is a line per mistake on stderr, exit status 2, naming the file and the key path; never a
traceback, never an "internal error", never a hang (random valid yards run by the
engine: tests/yard/test_yard_properties.py).

Mutations of the shipped files: keys deleted or renamed (an unknown key), values
replaced by wrong types, wrong units, negative, zero, non-finite and huge values, names
pointed at tracks, switches, cuts and points that do not exist, list entries doubled
(duplicate names), and joints added between track ends (loops, ends joined twice).
``RRS_PROPERTY_SCALE`` (say 20) runs more of them.
"""

from __future__ import annotations

import contextlib
import copy
import io
import math
import os
import re
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

from rrscore.cli.main import main

SCALE = max(1, int(os.environ.get("RRS_PROPERTY_SCALE", "1")))
YARDS = sorted(p.relative_to(CONFIGS) for p in (CONFIGS / "yards").glob("*.toml"))
NETWORKS = sorted(p.relative_to(CONFIGS) for p in (CONFIGS / "networks").glob("*.toml"))

#: Values that are wrong somewhere (as tests/model/test_config_properties.py's), and
#: names of things a yard or network may point at that exist in no shipped file.
BAD_VALUES = st.one_of(
    st.sampled_from([
        math.nan, math.inf, -math.inf, 1e308, -1e308, 1e-308, 0, -1, 0.0, -0.0, 10**18,
        -(10**18), True, False, "", " ", "nan m", "inf m/s", "1e308 m", "1e308 m/s",
        "-5 m", "-2 m/s", "0 m", "0 s", "1e-300 s", "5 furlongs", "12 kg", "80 km/h",
        "3 in", "1e400 m", "NaN", "-1 N/m", "0 N/m", "1e308 N/m", "-120 kN", "1e308 kN",
        "../../nonexistent.toml", "../vehicles", "a\u0000b", "x" * 300, [], [1, "a"],
        [math.nan], [0, 0], [-1], [10**9], ["main.end"], ["main.end", "main.end"],
        ["main.end", "nosuch.start"], {}, {"a": 1}, [{}], "🚂",
        "nosuch", "nosuch.end", "main.middle", "main", "main.start", "main.end",
        "straight.end", "siding.start", "s1", "w9", "c9", "hump", "push.end",
    ]),
    st.integers(min_value=-(10**12), max_value=10**12),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
)


def _network(doc: dict) -> dict | None:
    """The network table of a network file, or a yard's inline one."""
    net = doc.get("network", doc.get("yard", {}).get("network") if isinstance(
        doc.get("yard"), dict) else None)
    return net if isinstance(net, dict) else None


def _track_ends(net: dict) -> list[str]:
    tracks = net.get("tracks", [])
    if not isinstance(tracks, list):
        return ["main.end"]
    names = [t["name"] for t in tracks if isinstance(t, dict) and isinstance(t.get("name"), str)]
    return [f"{n}.{e}" for n in names for e in ("start", "end")] or ["main.end"]


def _mutate(doc: dict, data: st.DataObject) -> None:
    """One mutation of ``doc``, drawn from ``data``."""
    kind = data.draw(st.sampled_from(["replace", "replace", "replace", "delete", "rename",
                                      "unknown", "double", "join"]), label="kind")
    net = _network(doc)
    if kind == "join" and net is not None:
        # a joint between two track ends: a loop, an end joined twice, an end to itself
        ends = _track_ends(net)
        pair = data.draw(st.lists(st.sampled_from(ends), min_size=2, max_size=2), label="ends")
        as_switch = data.draw(st.booleans(), label="as switch")
        key = "switches" if as_switch else "connections"
        if not isinstance(net.setdefault(key, []), list):
            return  # replaced by something else already
        if as_switch:
            leg = data.draw(st.sampled_from(ends), label="leg")
            net[key].append({"name": "new", "points": pair[0], "legs": [pair[1], leg]})
        else:
            net[key].append({"ends": pair})
        return
    paths = key_paths(doc)
    if kind == "double":  # a list entry twice: duplicate names, duplicate joints
        lists = [p for p in paths if isinstance(_at(doc, p), list) and _at(doc, p)]
        if lists:
            node = _at(doc, data.draw(st.sampled_from(lists), label="list"))
            node.append(copy.deepcopy(data.draw(st.sampled_from(node), label="entry")))
            return
        kind = "replace"
    if kind == "unknown":
        tables = [()] + [p for p in paths if isinstance(_at(doc, p), dict)]
        node = _at(doc, data.draw(st.sampled_from(tables), label="table"))
        node[data.draw(st.sampled_from(["speeed", "lenght", "stifness", "x"]),
                       label="key")] = 1
        return
    if not paths:  # nothing left to change
        return
    path = data.draw(st.sampled_from(paths), label="path")
    node = _at(doc, path[:-1])
    key = path[-1]
    if kind == "delete":
        del node[key]
    elif kind == "rename" and isinstance(node, dict):
        node[f"{key}x"] = node.pop(key)
    else:
        # a copy: hypothesis may hand out one list object twice
        node[key] = copy.deepcopy(data.draw(BAD_VALUES, label="value"))


def _at(doc: Any, path: tuple) -> Any:
    for part in path:
        doc = doc[part]
    return doc


@pytest.fixture(scope="module")
def configs_copy(tmp_path_factory) -> Path:
    """A copy of configs/, so mutated files sit where their relative paths resolve."""
    root = tmp_path_factory.mktemp("configs")
    shutil.copytree(CONFIGS, root / "configs")
    return root / "configs"


def rrs(*args: Any) -> tuple[int, str, str]:
    """``rrs ARGS`` in this process: exit status, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


#: A config error's line: the file, then the key path in it (a table name first), or
#: what the file holds at its top level when no table of a config is there.
ERROR_LINE = re.compile(r"^rrs: error: (?P<file>\S.*?\.toml): ((?P<key>[\w\[][^:]*): \S"
                        r"|found top-level keys )")


def assert_config_error(code: int, err: str, target: Path) -> None:
    """A line per mistake (at least one), exit 2, each naming ``target`` and a key path
    in it; no internal error."""
    assert code == 2, err
    lines = err.splitlines()
    assert len(lines) >= 1, err
    assert "internal error" not in err and "Traceback" not in err, err
    for line in lines:
        match = ERROR_LINE.match(line)
        assert match is not None, err
        assert Path(match["file"]).name == target.name, err


def check_mutant(configs_copy: Path, rel: Path, doc: dict, tmp_path_factory) -> str:
    """Write ``doc`` as a mutated ``rel``, validate it and (a yard) drive it; returns
    what happened, for hypothesis's statistics."""
    target = configs_copy / rel.parent / f"mutated_{rel.name}"
    try:
        target.write_text(tomli_w.dumps(doc))
    except (ValueError, TypeError):  # not representable in TOML (a NUL in a key, say)
        return "not TOML"
    code, _, err = rrs("validate", target)
    if code != 0:
        assert_config_error(code, err, target)
    if rel.parent.name != "yards":
        return "valid" if code == 0 else "rejected"
    out = tmp_path_factory.mktemp("drive")
    # the drive is bounded by the command line's own limits: a valid mutant may ask for
    # a long drive (the wall limit is a documented stop, not a failure)
    dcode, _, derr = rrs("drive", target, "--out", out / "run", "--wall-limit", 5,
                         "--set", "output.plot=false")
    assert "internal error" not in derr and "Traceback" not in derr, derr
    if code != 0:  # refused before any drive (a file without [yard] is read as a scenario)
        assert_config_error(dcode, derr, target)
        return "rejected"
    if dcode == 0:
        return "drove"
    assert len(derr.splitlines()) == 1, derr
    if dcode == 2:  # the --set met a mutated [yard.output]: the config error of the key
        assert_config_error(dcode, derr, target)
        return "refused --set"
    assert dcode == 1, derr  # the drive failed: said in one line, summary kept
    assert (out / "run" / "summary.json").is_file(), derr
    return "drive failed: " + derr.split(": ")[-1][:40]


@settings(max_examples=150 * SCALE, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_a_malformed_yard_or_network_is_a_line_per_mistake_exit_2_naming_file_and_key(
        configs_copy, tmp_path_factory, data):
    rel = data.draw(st.sampled_from(YARDS + NETWORKS), label="file")
    doc = tomllib.loads((CONFIGS / rel).read_text())
    if rel.parent.name == "yards" and data.draw(st.booleans(), label="inline network"):
        # the network inline, so that its mutations reach the network through the yard
        doc["yard"]["network"] = tomllib.loads(
            (CONFIGS / "yards" / doc["yard"]["network"]).read_text())["network"]
    for _ in range(data.draw(st.integers(min_value=1, max_value=3), label="mutations")):
        _mutate(doc, data)
    event(check_mutant(configs_copy, rel, doc, tmp_path_factory))


def test_a_yard_naming_its_own_file_as_its_network_names_the_network_key(tmp_path):
    doc = tomllib.loads((CONFIGS / "yards" / "buffer_stop.toml").read_text())
    doc["yard"]["network"] = "self.toml"
    for cut in doc["yard"]["cuts"]:
        for v in cut["train"]["vehicles"]:
            v["config"] = str(CONFIGS / "vehicles" / Path(v["config"]).name)
    target = tmp_path / "self.toml"
    target.write_text(tomli_w.dumps(doc))
    code, _, err = rrs("validate", target)
    assert_config_error(code, err, target)
    assert ": yard.network: " in err, err


#: Reversing (balloon) loops: a switch whose two legs lead round to each other. No
#: setting of the switch closes them, so the search for loops at any setting let them
#: through, and a cut running round one ran the switch through, forced it over and ran
#: it through again at the same instant without end (a hang, the events growing).
BALLOONS = {
    "one track": {"tracks": [{"name": "lead", "points": [[-100, 0], [0, 0]]},
                             {"name": "loop", "points": [[0, 0], [100, 0], [100, 100],
                                                         [0, 100], [0, 0]]}],
                  "switches": [{"name": "s", "points": "lead.end",
                                "legs": ["loop.start", "loop.end"]}]},
    "three tracks": {"tracks": [{"name": "lead", "points": [[-100, 0], [0, 0]]},
                                {"name": "a", "points": [[0, 0], [100, 0]]},
                                {"name": "b", "points": [[100, 0], [100, 100]]},
                                {"name": "c", "points": [[100, 100], [0, 100], [0, 0]]}],
                     "connections": [{"ends": ["a.end", "b.start"]},
                                     {"ends": ["b.end", "c.start"]}],
                     "switches": [{"name": "s", "points": "lead.end",
                                   "legs": ["a.start", "c.end"]}]},
}


@pytest.mark.parametrize("shape", sorted(BALLOONS))
def test_a_reversing_loop_is_refused_naming_the_switch_legs(tmp_path, shape):
    network = tmp_path / "balloon.toml"
    network.write_text(tomli_w.dumps({"network": BALLOONS[shape]}))
    yard = tmp_path / "yard.toml"
    yard.write_text(tomli_w.dumps({"yard": {
        "network": "balloon.toml", "run_through": "force",
        "cuts": [{"name": "car", "track": "lead", "front": "90 m", "speed": "4 m/s",
                  "train": {"vehicles": [{"config": str(CONFIGS / "vehicles"
                                                    / "freight_car_4axle.toml")}]}}]}}))
    for target in (network, yard):
        code, _, err = rrs("validate", target)
        assert_config_error(code, err, network)  # the network file is where the loop is
        assert ": network.switches[0].legs: found a loop of tracks " in err, err
        assert "other leg of switch 's'" in err, err
    code, _, err = rrs("drive", yard, "--out", tmp_path / "out")
    assert_config_error(code, err, network)
