"""Config files: one clear message for bad input (file, key path, found, expected), and
resolved scenarios with every default filled in that load back to the same thing."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
from bad_inputs import (
    CASES,
    CONFIGS,
    LEVEL,
    LOCO,
    LOCO_TRAIN,
    BadInput,
    scenario_toml,
    toml_path,
    vehicle_toml,
)

from rrscore import ConfigError, load_scenario, validate_file
from rrscore.model.config import FreeTable, Include, Param, Section, TableList, param_at
from rrscore.run.scenario import SCENARIO_SCHEMA

SCENARIOS = CONFIGS / "scenarios"


def config_error(bad: BadInput) -> str:
    """The message of the ConfigError that checking ``bad.path`` raises."""
    with pytest.raises(ConfigError) as info:
        validate_file(bad.path)
    message = str(info.value)
    for fragment in bad.fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    assert "\n" not in message  # one paragraph, one line
    return message


# ------------------------------------------------------------------ bad input


def test_unknown_key_names_file_and_key_path_with_did_you_mean_hint(tmp_path: Path) -> None:
    message = config_error(CASES["unknown_key"](tmp_path))
    assert "allowed here:" in message
    assert "empty_mass" in message.split("allowed here:")[1]


def test_unknown_key_without_close_match_has_no_hint(tmp_path: Path) -> None:
    p = tmp_path / "colour.toml"
    p.write_text(vehicle_toml(colour='"red"'))
    message = config_error(BadInput(p, ["colour.toml", "vehicle.colour", "unknown key"]))
    assert "did you mean" not in message


def test_unknown_key_in_nested_scenario_section_gives_dotted_path(tmp_path: Path) -> None:
    p = tmp_path / "stop_typo.toml"
    p.write_text(scenario_toml(toml_path(LOCO_TRAIN), toml_path(LEVEL),
                               '[scenario.stop]\nmax_tme = "5 s"\n'))
    config_error(BadInput(p, ["stop_typo.toml", "scenario.stop.max_tme", "unknown key",
                              "did you mean 'max_time'?"]))


def test_string_where_integer_expected_names_list_index_and_value(tmp_path: Path) -> None:
    config_error(CASES["wrong_type"](tmp_path))


def test_string_where_number_expected_names_key_and_value(tmp_path: Path) -> None:
    p = tmp_path / "half_train.toml"
    p.write_text(f'[train]\n[[train.vehicles]]\nconfig = {toml_path(LOCO)}\n'
                 'payload_fraction = "half"\n')
    config_error(BadInput(p, ["half_train.toml", "train.vehicles[0].payload_fraction",
                              "'half'", "expected a number"]))


def test_scenario_naming_missing_train_file_names_scenario_key_and_path(tmp_path: Path) -> None:
    bad = CASES["missing_train_file"](tmp_path)
    config_error(bad)
    with pytest.raises(ConfigError) as info:  # the same through load_scenario
        load_scenario(bad.path)
    assert info.value.key == "scenario.train"
    assert info.value.file == str(bad.path)


def test_missing_config_file_is_reported_as_not_found(tmp_path: Path) -> None:
    bad = CASES["missing_file"](tmp_path)
    config_error(bad)
    with pytest.raises(ConfigError, match="scenario file not found"):
        load_scenario(bad.path)


def test_negative_mass_names_key_value_and_lower_bound(tmp_path: Path) -> None:
    config_error(CASES["negative_mass"](tmp_path))


def test_unknown_vehicle_type_lists_registered_types(tmp_path: Path) -> None:
    config_error(CASES["unknown_vehicle_type"](tmp_path))


def test_unknown_vehicle_type_in_train_names_the_vehicle_file(tmp_path: Path) -> None:
    veh = tmp_path / "diesel_vehicle.toml"
    veh.write_text(vehicle_toml(type='"diesel_loco"'))
    train = tmp_path / "diesel_train.toml"
    train.write_text(f'[train]\n[[train.vehicles]]\nconfig = "{veh.name}"\n')
    config_error(BadInput(train, ["diesel_vehicle.toml", "vehicle.type", "'diesel_loco'"]))


def test_unknown_solver_names_scenario_solver_method_and_choices(tmp_path: Path) -> None:
    config_error(CASES["unknown_solver"](tmp_path))


def test_quantity_in_wrong_unit_names_key_value_and_dimension(tmp_path: Path) -> None:
    config_error(CASES["wrong_unit"](tmp_path))


def test_invalid_toml_syntax_names_file_and_line(tmp_path: Path) -> None:
    config_error(CASES["invalid_toml"](tmp_path))


def test_file_that_is_not_utf8_is_a_config_error_not_a_crash(tmp_path: Path) -> None:
    config_error(CASES["not_utf8"](tmp_path))


def test_inline_vehicle_error_in_scenario_gives_full_key_path(tmp_path: Path) -> None:
    p = tmp_path / "inline_scenario.toml"
    p.write_text(
        "[scenario]\n"
        f"route = {toml_path(LEVEL)}\n"
        "[[scenario.train.vehicles]]\n"
        'config = { vehicle = { type = "freight_car", empty_mass = "-5 t", length = "12 m", '
        "num_axis = 4 } }\n"
    )
    config_error(BadInput(p, ["inline_scenario.toml",
                              "scenario.train.vehicles[0].config.vehicle.empty_mass",
                              "'-5 t'"]))


def test_plugin_param_error_names_params_key(tmp_path: Path) -> None:
    p = tmp_path / "brake_vehicle.toml"
    p.write_text(vehicle_toml() + '[params]\nhand_brake_force = "40 kg"\n')
    config_error(BadInput(p, ["brake_vehicle.toml", "params.hand_brake_force", "'40 kg'",
                              "expected a force"]))


def test_config_error_carries_file_and_key_attributes(tmp_path: Path) -> None:
    bad = CASES["unknown_solver"](tmp_path)
    with pytest.raises(ConfigError) as info:
        validate_file(bad.path)
    err = info.value
    assert err.file == str(bad.path)
    assert err.key == "scenario.solver.method"
    assert str(err) == f"{bad.path}: scenario.solver.method: {err.message}"


# --------------------------------------------------------------- resolved form


def assert_complete(data: dict[str, Any], schema: dict[str, Any], path: str) -> None:
    """Every key of ``schema`` that has a default is in ``data``, quantities are floats."""
    assert set(data) <= set(schema), f"{path}: extra keys {set(data) - set(schema)}"
    for key, spec in schema.items():
        sub = f"{path}.{key}"
        if isinstance(spec, Param):
            if spec.default is not None:
                assert key in data, f"{sub} missing from the resolved form"
            if key in data and spec.unit is not None:
                values = data[key] if spec.kind is list and data[key] is not None \
                    else [data[key]]
                for value in values:
                    assert type(value) is float, f"{sub} = {data[key]!r} is not an SI float"
        elif isinstance(spec, Section | Include):
            assert_complete(data[key], spec.schema, sub)
        elif isinstance(spec, TableList):
            for i, item in enumerate(data[key]):
                assert_complete(item, spec.schema, f"{sub}[{i}]")
        elif isinstance(spec, FreeTable):
            assert isinstance(data.get(key, {}), dict)


def assert_params_complete(values: dict[str, Any], params: dict[str, Param], path: str) -> None:
    assert set(values) == set(params), f"{path}: {sorted(values)} != {sorted(params)}"
    assert_complete(values, params, path)


def test_resolved_scenario_has_every_default_filled_in_as_si_floats() -> None:
    sc = load_scenario(SCENARIOS / "freight_50.toml")
    resolved = sc.resolved()
    assert list(resolved) == ["scenario"]
    r = resolved["scenario"]
    assert_complete(r, SCENARIO_SCHEMA, "scenario")

    registry = sc.registry
    for i, entry in enumerate(r["train"]["vehicles"]):
        cls = registry.vehicle_types[entry["config"]["vehicle"]["type"]]
        assert_params_complete(entry["config"]["params"], cls.params, f"vehicles[{i}].params")
    coupling = r["train"]["coupling"]
    assert_params_complete(coupling["params"], registry.coupler_models[coupling["model"]].params,
                           "train.coupling.params")

    # Units became SI floats.
    loco = r["train"]["vehicles"][0]["config"]
    assert loco["params"]["V_nom"] == pytest.approx(80 / 3.6, rel=1e-15)
    assert loco["params"]["F_max"] == 450e3
    assert loco["vehicle"]["empty_mass"] == 184e3
    car = r["train"]["vehicles"][1]["config"]
    assert car["vehicle"]["empty_mass"] == 23e3
    assert car["vehicle"]["wheelset_inertia"] == 96.0
    assert coupling["params"]["slack"] == pytest.approx(0.011, rel=1e-15)
    assert coupling["params"]["damping_ramp"] == 0.001  # a default
    assert r["route"]["elements"][1]["grade"] == pytest.approx(0.006, rel=1e-15)
    assert r["stop"]["max_time"] == 2400.0
    # Defaults the file does not mention.
    assert r["solver"]["rtol"] == SCENARIO_SCHEMA["solver"].schema["rtol"].default
    assert r["solver"]["max_step"] == 0.5
    assert loco["params"]["brake_rate"] == 1.0
    assert r["output"]["plots"] is True
    # Nothing private or None is left: it is written as TOML as is.
    assert "_source" not in repr(r)
    assert "None" not in repr(r)


def test_resolved_units_from_strings_become_si_values(tmp_path: Path) -> None:
    p = tmp_path / "units_scenario.toml"
    p.write_text(
        scenario_toml(toml_path(LOCO_TRAIN), toml_path(LEVEL),
                      '[scenario.start]\nspeed = "80 km/h"\nposition = "1.5 km"\n'
                      '[scenario.stop]\nmax_time = "2 min"\n'
                      '[scenario.solver]\ncontrol_step = "50 ms"\n')
    )
    r = load_scenario(p).resolved()["scenario"]
    assert r["start"]["speed"] == pytest.approx(22.2222222222222, rel=1e-12)
    assert r["start"]["position"] == 1500.0
    assert r["stop"]["max_time"] == 120.0
    assert r["solver"]["control_step"] == pytest.approx(0.05, rel=1e-15)
    assert r["name"] == "scenario"
    assert r["plugin_dirs"] == []


@pytest.mark.parametrize("name", ["freight_50.toml", "simple_loco_level.toml"])
def test_write_resolved_round_trips_to_the_same_resolved_dict(tmp_path: Path, name: str) -> None:
    sc = load_scenario(SCENARIOS / name)
    out = tmp_path / "elsewhere" / "scenario.resolved.toml"
    out.parent.mkdir()
    sc.write_resolved(out)
    text = out.read_text(encoding="utf-8")
    assert "_source" not in text
    assert tomllib.loads(text) == sc.resolved()
    again = load_scenario(out)
    assert again.resolved() == sc.resolved()
    assert again.train.count == sc.train.count
    assert again.train.total_mass == sc.train.total_mass
    assert again.route.length == sc.route.length
    assert again.start_position == sc.start_position
    assert again.stop_position == sc.stop_position
    # And a second round changes nothing either.
    again.write_resolved(tmp_path / "twice.toml")
    assert (tmp_path / "twice.toml").read_text(encoding="utf-8") == text


def test_a_param_may_declare_the_new_units_and_its_error_names_the_dimension() -> None:
    # a motor plugin's current, voltage, temperature and angle (issue 49, item 4)
    from rrscore.model.config import Context, validate

    schema = {"current": Param("A", 1000.0, "motor current"),
              "voltage": Param("V", 750.0, "line voltage"),
              "ambient": Param("K", 293.15, "air temperature"),
              "tilt": Param("rad", 0.0, "body tilt")}
    ctx = Context("motor.toml", "params")
    out = validate({"current": "1.2 kA", "voltage": "25 kV", "ambient": "-10 °C",
                    "tilt": "3 deg"}, schema, ctx)
    assert out == pytest.approx({"current": 1200.0, "voltage": 25_000.0, "ambient": 263.15,
                                 "tilt": 3 * 3.141592653589793 / 180})
    with pytest.raises(ConfigError) as info:
        validate({"current": "1.2 kV"}, schema, ctx)
    assert str(info.value) == ("motor.toml: params.current: found '1.2 kV', expected a "
                               "current such as '1200 A' or a number in A")


def test_a_key_path_names_its_param_through_includes_sections_and_lists() -> None:
    # the train (an include), its vehicles (a list of tables) and a vehicle's config (an
    # include) down to a vehicle's empty mass; a plugin's parameters are a free table
    mass = param_at(SCENARIO_SCHEMA, "train.vehicles[1].config.vehicle.empty_mass")
    assert isinstance(mass, Param) and mass.unit == "kg"
    assert param_at(SCENARIO_SCHEMA, "train.vehicles.1.count").kind is int
    assert param_at(SCENARIO_SCHEMA, "stop.max_time").unit == "s"
    assert isinstance(param_at(SCENARIO_SCHEMA, "train.vehicles[0].config.params.F_max"),
                      FreeTable)
    for nothing in ("stop.nope", "train.vehicles.first.count", "stop.max_time.x",
                    "train.vehicles"):
        assert param_at(SCENARIO_SCHEMA, nothing) is None, nothing
