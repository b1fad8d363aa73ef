"""``rrs schema``: JSON Schema documents made from the validator's declarations. Every
shipped config passes its schema; each broken config fails both the schema and
``rrs validate``, on the same key."""

from __future__ import annotations

import copy
import json
import tomllib
from pathlib import Path

import pytest
import tomli_w
from bad_inputs import CONFIGS
from jsonschema import Draft202012Validator

from rrscore.api import check_file
from rrscore.cli.main import main
from rrscore.cli.schema import KINDS, config_schema
from rrscore.model.errors import ConfigError

FOLDERS = {"vehicles": "vehicle", "trains": "train", "routes": "route",
           "scenarios": "scenario", "networks": "network", "yards": "yard"}
SHIPPED = sorted(p for p in CONFIGS.rglob("*.toml") if p.parent.name in FOLDERS)


@pytest.fixture(scope="module")
def checkers() -> dict[str, Draft202012Validator]:
    out = {}
    for kind in KINDS:
        schema = config_schema(kind)
        Draft202012Validator.check_schema(schema)  # a well-formed draft 2020-12 document
        out[kind] = Draft202012Validator(schema)
    return out


def key_path(parts) -> str:
    """A jsonschema path (['train', 'vehicles', 0, 'count']) as the validator writes it."""
    text = ""
    for p in parts:
        text += f"[{p}]" if isinstance(p, int) else (f".{p}" if text else p)
    return text


def schema_keys(checker: Draft202012Validator, data: dict) -> set[str]:
    """The key paths the schema finds fault with: an unknown or missing key is named
    itself, not the table it is in."""
    keys = set()
    for err in checker.iter_errors(data):
        where = list(err.absolute_path)
        if err.validator == "additionalProperties":
            allowed = err.schema.get("properties", {})
            keys.update(key_path([*where, k]) for k in err.instance if k not in allowed)
        elif err.validator == "required":
            keys.update(key_path([*where, k]) for k in err.validator_value
                        if k not in err.instance)
        else:
            keys.add(key_path(where))
    return keys


def validator_keys(path: Path) -> set[str]:
    try:
        check_file(path)
    except ConfigError as exc:
        return {e.key for e in getattr(exc, "errors", [exc])}
    return set()


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_shipped_config_passes_its_schema(path, checkers) -> None:
    data = tomllib.loads(path.read_text())
    assert schema_keys(checkers[FOLDERS[path.parent.name]], data) == set()


def absolute_includes(data, folder: Path):
    """``data`` with the files it names (trains, routes, vehicles, networks, plugin
    folders) made absolute, so that a copy elsewhere names the same files."""
    if isinstance(data, list):
        return [absolute_includes(v, folder) for v in data]
    if not isinstance(data, dict):
        return data
    out = {}
    for key, value in data.items():
        if key in ("config", "train", "route", "network") and isinstance(value, str):
            value = str((folder / value).resolve())
        elif key == "plugin_dirs":
            value = [str((folder / v).resolve()) for v in value]
        out[key] = absolute_includes(value, folder)
    return out


def set_key(data: dict, path: str, value) -> None:
    *parents, last = path.replace("]", "").replace("[", ".").split(".")
    node = data
    for p in parents:
        node = node[int(p)] if p.isdigit() else node.setdefault(p, {})
    if value is DELETE:
        del node[last]
    else:
        node[int(last) if last.isdigit() else last] = value


DELETE = object()

#: (shipped file, key path, bad value): wrong type, unknown key, value out of range or
#: not among the choices, missing required key, too few entries, a plugin's params.
BROKEN = [
    ("scenarios/freight_50.toml", "scenario.start.speed", True),
    ("scenarios/freight_50.toml", "scenario.solver.stepp", 0.1),
    ("scenarios/freight_50.toml", "scenario.dynamics", "rigidd"),
    ("scenarios/freight_50.toml", "scenario.train", 3),
    ("vehicles/simple_loco.toml", "vehicle.empty_mass", -5.0),
    ("vehicles/simple_loco.toml", "vehicle.length", DELETE),
    ("vehicles/simple_loco.toml", "vehicle.num_axis", 2.5),
    ("vehicles/simple_loco.toml", "vehicle.resistance.curve", "roman"),
    ("vehicles/simple_loco.toml", "params.F_maxx", "400 kN"),
    ("vehicles/freight_car_4axle.toml", "vehicle.adhesion.kinetic_ratio", 1.5),
    ("trains/freight_50.toml", "train.vehicles[0].count", 0),
    ("trains/freight_50.toml", "train.vehicles[1].orientation", "backwards"),
    ("trains/freight_50.toml", "train.coupling.break_force", -1.0),
    ("routes/level_30km.toml", "route.elements", []),
    ("routes/level_30km.toml", "route.elements[0].colour", "red"),
    ("networks/junction.toml", "network.tracks", "none"),
    ("yards/hump_20_cuts.toml", "yard.cuts[0].front", -3.0),
]


@pytest.mark.parametrize("shipped, key, value", BROKEN, ids=[f"{k}={v!r}"[:50] for _, k, v in
                                                              BROKEN])
def test_a_broken_config_fails_schema_and_validate_on_the_same_key(
        shipped, key, value, checkers, tmp_path) -> None:
    source = CONFIGS / shipped
    data = absolute_includes(tomllib.loads(source.read_text()), source.parent)
    set_key(data, key, value if value is DELETE else copy.deepcopy(value))
    path = tmp_path / source.name
    path.write_text(tomli_w.dumps(data))
    assert schema_keys(checkers[FOLDERS[source.parent.name]], data) == {key}
    assert validator_keys(path) == {key}


def test_schema_writes_a_file_that_is_the_printed_document(tmp_path, capsys) -> None:
    assert main(["schema", "train", "--out", str(tmp_path / "train.json")]) == 0
    written = json.loads((tmp_path / "train.json").read_text())
    capsys.readouterr()
    assert main(["schema", "train"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert written == printed == config_schema("train")
    assert written["$schema"] == "https://json-schema.org/draft/2020-12/schema"
