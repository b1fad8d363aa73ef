"""``rrs schema``: JSON Schema documents made from the validator's declarations. Every
shipped config passes its schema; each broken config fails both the schema and
``rrs validate``, on the same key."""

from __future__ import annotations

import copy
import json
import pickle
import tomllib
from pathlib import Path

import pytest
import tomli_w
from bad_inputs import CONFIGS
from jsonschema import Draft202012Validator

from rrscore.api import check_file
from rrscore.cli.main import main
from rrscore.cli.schema import KINDS, config_schema
from rrscore.model.config import REQUIRED
from rrscore.model.errors import ConfigError, ConfigErrors
from rrscore.model.vehicle import VEHICLE_SCHEMA
from rrscore.run.plugins import load_registry

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


@pytest.mark.parametrize("shipped, key, value", BROKEN, ids=[  # (ids alike on every worker)
    f"{k}=deleted" if v is DELETE else f"{k}={v!r}"[:50] for _, k, v in BROKEN])
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


@pytest.mark.parametrize("kind", KINDS)
def test_each_schema_is_strict_json(kind) -> None:
    json.dumps(config_schema(kind), allow_nan=False)  # no Infinity or NaN: editors refuse them


REGISTRY = load_registry()


@pytest.mark.parametrize("name", sorted(REGISTRY.vehicle_types))
def test_each_vehicle_types_params_are_in_the_vehicle_schema(name, checkers) -> None:
    vehicle = {"vehicle": {"type": name, "empty_mass": 2e4, "length": 14.0, "num_axis": 4},
               "params": {"no_such_param": 1.0}}
    assert schema_keys(checkers["vehicle"], vehicle) == {"params.no_such_param"}
    declared = REGISTRY.vehicle_types[name].params
    wrong = next((k for k, p in declared.items() if p.kind is not str and p.unit is None), None)
    if wrong is not None:  # a plain number, integer or flag given as a table
        vehicle["params"] = {wrong: {}}
        assert schema_keys(checkers["vehicle"], vehicle) == {f"params.{wrong}"}


@pytest.mark.parametrize("name", sorted(REGISTRY.coupler_models))
def test_each_coupler_models_params_are_in_the_train_schema(name, checkers) -> None:
    train = {"train": {"coupling": {"model": name, "params": {"no_such_param": 1.0}},
                       "vehicles": [{"config": "car.toml"}]}}
    required = {f"train.coupling.params.{k}" for k, p in
                REGISTRY.coupler_models[name].params.items() if p.default is REQUIRED}
    assert schema_keys(checkers["train"], train) == {
        "train.coupling.params.no_such_param", *required}


# ------------------------------------------------------------ every error in one run

THREE_MISTAKES = """\
[vehicle]
type = "freight_car"
empty_mass = "-3 t"
length = "14 m"
num_axis = 4
wheel_diameter = "0.9 furlongs"

[vehicle.resistance]
curve = "roman"
"""


def test_a_file_with_three_mistakes_gets_three_errors_in_one_run(tmp_path, capsys) -> None:
    path = tmp_path / "car.toml"
    path.write_text(THREE_MISTAKES)
    assert main(["validate", str(path)]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert [line.split(": ")[3] for line in lines] == [
        "vehicle.empty_mass", "vehicle.wheel_diameter", "vehicle.resistance.curve"]
    assert all(line.startswith(f"rrs: error: {path}: ") for line in lines)
    data = tomllib.loads(THREE_MISTAKES)
    # (the schema takes any string for a quantity: its unit and bounds are the validator's)
    assert schema_keys(Draft202012Validator(config_schema("vehicle")), data) == {
        "vehicle.resistance.curve"}


def test_validate_checks_every_file_named_and_reports_the_errors_of_each(
        tmp_path, capsys) -> None:
    bad = tmp_path / "car.toml"
    bad.write_text(THREE_MISTAKES)
    worse = tmp_path / "other.toml"
    worse.write_text("[vehicle]\nlength = \"14 m\"\n")
    good = Path(__file__).parents[2] / "configs" / "vehicles" / "freight_car_4axle.toml"
    assert main(["validate", str(bad), str(good), str(worse)]) == 2
    out, err = capsys.readouterr()
    assert out.startswith(f"{good}: ok")  # the good file between the bad ones is checked
    files = [line.removeprefix("rrs: error: ").split(": ")[0] for line in err.splitlines()]
    assert files[:3] == [str(bad)] * 3 and set(files[3:]) == {str(worse)}


def test_errors_in_several_entries_and_included_files_are_all_reported(tmp_path) -> None:
    (tmp_path / "car.toml").write_text(THREE_MISTAKES)
    (tmp_path / "train.toml").write_text(
        '[train]\nname = 7\n[[train.vehicles]]\nconfig = "car.toml"\ncount = 0\n'
        '[[train.vehicles]]\nconfig = "car.toml"\norientation = "sideways"\n')
    with pytest.raises(ConfigError) as caught:
        check_file(tmp_path / "train.toml")
    where = [(Path(e.file).name, e.key) for e in caught.value.errors]
    assert where == [
        ("train.toml", "train.name"),
        ("car.toml", "vehicle.empty_mass"), ("car.toml", "vehicle.wheel_diameter"),
        ("car.toml", "vehicle.resistance.curve"), ("train.toml", "train.vehicles[0].count"),
        ("car.toml", "vehicle.empty_mass"), ("car.toml", "vehicle.wheel_diameter"),
        ("car.toml", "vehicle.resistance.curve"),
        ("train.toml", "train.vehicles[1].orientation")]


def test_a_misspelt_required_key_is_one_error_and_one_mistake_keeps_its_message(
        tmp_path) -> None:
    path = tmp_path / "car.toml"
    path.write_text(THREE_MISTAKES.replace('empty_mass = "-3 t"', 'empty_mas = "3 t"')
                    .replace('"0.9 furlongs"', '"0.9 m"').replace('"roman"', '"area"'))
    with pytest.raises(ConfigError) as caught:
        check_file(path)
    assert not hasattr(caught.value, "errors")  # one error: a plain ConfigError, as before
    assert caught.value.key == "vehicle.empty_mas"
    assert str(caught.value) == (f"{path}: vehicle.empty_mas: unknown key; did you mean "
                                 f"'empty_mass'? (allowed here: "
                                 f"{', '.join(VEHICLE_SCHEMA['vehicle'].schema)})")


def test_config_errors_survive_pickling_whole() -> None:
    one = ConfigError("a.toml", "train.name", "found 7, expected a string")
    both = ConfigErrors([one, ConfigError("b.toml", None, "config file not found")])
    assert str(pickle.loads(pickle.dumps(one))) == "a.toml: train.name: found 7, expected a string"
    back = pickle.loads(pickle.dumps(both))
    assert [(e.file, e.key, e.message) for e in back.errors] == [
        ("a.toml", "train.name", "found 7, expected a string"),
        ("b.toml", None, "config file not found")]
    assert str(back) == str(both)
