"""Vehicle and train configs built in code (rrscore/run/builders.py): their fields are the
schema's keys with the schema's defaults; what they write loads back, through the
loader, to the config the record stands for (every shipped file, and random records by
hypothesis); a bad value is the loader's ConfigError; a built train drives."""

from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import CONFIGS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rrscore
from rrscore.model.config import REQUIRED, Context, Include, Param, Section, include
from rrscore.model.errors import ConfigError
from rrscore.model.train import TRAIN_SCHEMA, TRAIN_VEHICLE_SCHEMA
from rrscore.model.vehicle import VEHICLE_SCHEMA
from rrscore.run.builders import TrainConfig, TrainVehicle, VehicleConfig

SCALE = max(1, int(os.environ.get("RRS_PROPERTY_SCALE", "1")))
VEHICLES = sorted((CONFIGS / "vehicles").glob("*.toml"))
TRAINS = sorted((CONFIGS / "trains").glob("*.toml"))


@pytest.fixture(scope="module")
def configs(tmp_path_factory) -> Path:
    """A copy of the shipped vehicles and trains, to write beside (the vehicle paths of a
    train file are relative to it; the tests write nothing into the repository)."""
    root = tmp_path_factory.mktemp("configs")
    for sub in ("vehicles", "trains"):
        shutil.copytree(CONFIGS / sub, root / sub)
    return root


def loaded(path: Path, schema: dict, what: str, key: str | None = None) -> dict[str, Any]:
    """The config the normal loader makes of a file (without its bookkeeping)."""
    ctx = Context(str(path), "", path.resolve().parent)
    return _plain(include(str(path.resolve()), Include(schema, what=what, file_key=key), ctx))


def _plain(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _plain(v) for k, v in data.items() if not str(k).startswith("_")}
    if isinstance(data, list):
        return [_plain(v) for v in data]
    return data


def _defaults(schema: dict) -> dict[str, Any]:
    return {k: p.default for k, p in schema.items() if isinstance(p, Param)}


def test_the_records_fields_are_the_schemas_keys_with_its_defaults() -> None:
    vehicle = VEHICLE_SCHEMA["vehicle"].schema
    fields = {f.name: f for f in dataclasses.fields(VehicleConfig)}
    assert set(fields) == set(vehicle) | {"params"}
    for name, param in _defaults(vehicle).items():
        default = fields[name].default
        assert default == (dataclasses.MISSING if param is REQUIRED else param), name
    assert all(isinstance(vehicle[s], Section) for s in ("resistance", "adhesion", "brake"))
    for cls, schema in ((TrainVehicle, TRAIN_VEHICLE_SCHEMA), (TrainConfig, TRAIN_SCHEMA)):
        fields = {f.name: f for f in dataclasses.fields(cls)}
        assert set(fields) == set(schema), cls.__name__
        for name, param in _defaults(schema).items():
            assert fields[name].default == (dataclasses.MISSING if param is REQUIRED
                                            else param), name


@pytest.mark.parametrize("path", VEHICLES, ids=lambda p: p.name)
def test_every_shipped_vehicle_file_written_back_loads_to_the_same_config(path, tmp_path):
    record = VehicleConfig.load(path)
    record.write(tmp_path / "v.toml")
    assert loaded(tmp_path / "v.toml", VEHICLE_SCHEMA, "vehicle") == \
        loaded(path, VEHICLE_SCHEMA, "vehicle")
    assert VehicleConfig.load(tmp_path / "v.toml") == record
    assert record.resolved() == loaded(path, VEHICLE_SCHEMA, "vehicle")


@pytest.mark.parametrize("path", TRAINS, ids=lambda p: p.name)
def test_every_shipped_train_file_written_back_loads_to_the_same_config(path, configs):
    record = TrainConfig.load(path)
    copy = configs / "trains" / f"written_{path.name}"
    record.write(copy)
    assert loaded(copy, TRAIN_SCHEMA, "train", "train") == \
        loaded(path, TRAIN_SCHEMA, "train", "train")
    assert TrainConfig.load(copy) == record
    assert record.resolved(base=path.parent) == loaded(path, TRAIN_SCHEMA, "train", "train")


# --- random records (hypothesis) -------------------------------------------------------

def _quantity(lo: float, hi: float, units: dict[str, float]):
    """An SI number in [lo, hi], or the same as a string in one of ``units`` (its factor
    to SI)."""
    si = st.floats(min_value=lo, max_value=hi, allow_nan=False)
    text = st.sampled_from(sorted(units)).flatmap(
        lambda u: st.floats(min_value=lo / units[u], max_value=hi / units[u],
                            allow_nan=False).map(lambda x: f"{x!r} {u}"))
    return st.one_of(si, text)


NAMES = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), max_size=20)
RESISTANCE = st.one_of(
    st.just({}),
    st.fixed_dictionaries({"formula": st.just("davis"),
                           "A": _quantity(0.0, 5e3, {"N": 1.0, "kN": 1e3}),
                           "B": st.floats(0.0, 100.0), "C": st.floats(0.0, 10.0)}),
    st.fixed_dictionaries({"formula": st.sampled_from(["freight_4axle_roller", "passenger"])},
                          optional={"starting": st.booleans(),
                                    "curve": st.sampled_from(["russian", "area"])}),
)
VEHICLE = st.builds(
    VehicleConfig,
    type=st.sampled_from(["freight_car", "simple_loco"]),
    empty_mass=_quantity(1.0, 2e5, {"kg": 1.0, "t": 1e3}),
    length=_quantity(1.0, 40.0, {"m": 1.0, "mm": 1e-3}),
    num_axis=st.integers(1, 12),
    name=NAMES,
    payload_mass=_quantity(0.0, 1e5, {"kg": 1.0, "t": 1e3}),
    wheel_diameter=_quantity(0.3, 2.0, {"m": 1.0, "mm": 1e-3}),
    wheelset_inertia=_quantity(1.0, 1e3, {"kg*m^2": 1.0}),
    resistance=RESISTANCE,
    adhesion=st.one_of(st.just({}), st.fixed_dictionaries(
        {"formula": st.just("constant"), "psi": st.floats(0.05, 0.5)})),
    params=st.just({}),
)
TRAIN = st.builds(
    TrainConfig,
    name=NAMES,
    vehicles=st.lists(st.builds(
        TrainVehicle,
        config=st.one_of(VEHICLE, st.just("freight_car_4axle.toml")),
        count=st.integers(1, 50),
        payload_fraction=st.floats(0.0, 1.0),
        orientation=st.sampled_from(["forward", "reversed"]),
        coupled=st.booleans()), min_size=1, max_size=4),
    coupling=st.one_of(st.just({}), st.just({"model": "sa3"}),
                       st.builds(lambda k: {"model": "spring_damper",
                                            "params": {"stiffness": f"{k!r} MN/m"}},
                                 st.floats(1.0, 100.0))),
)


@settings(max_examples=60 * SCALE, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(record=VEHICLE)
def test_a_vehicle_record_written_loads_back_equal(record, tmp_path_factory) -> None:
    path = tmp_path_factory.mktemp("v") / "v.toml"
    record.write(path)
    assert VehicleConfig.load(path) == record
    assert loaded(path, VEHICLE_SCHEMA, "vehicle") == record.resolved()


@settings(max_examples=40 * SCALE, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(record=TRAIN)
def test_a_train_record_written_loads_back_equal(record, configs) -> None:
    path = configs / "vehicles" / "train.toml"  # beside the vehicle its paths name
    record.write(path)
    assert TrainConfig.load(path) == record
    assert loaded(path, TRAIN_SCHEMA, "train", "train") == record.resolved(base=path.parent)


# --- checks and use ---------------------------------------------------------------------

CAR = VehicleConfig(type="freight_car", empty_mass="23 t", length="13.92 m", num_axis=4,
                    payload_mass="69.5 t", wheel_diameter="0.957 m")


@pytest.mark.parametrize("change, key", [
    ({"num_axis": 0}, "num_axis"),
    ({"empty_mass": "23 furlongs"}, "empty_mass"),
    ({"resistance": {"formula": "davis", "A": 1.0, "B": 0.0, "C": 0.0, "D": 1}}, "D"),
    ({"params": {"hand_brake_force": "lots"}}, "hand_brake_force"),
    ({"type": "tram"}, "type"),
])
def test_a_bad_value_is_the_loaders_config_error_naming_the_key(change, key) -> None:
    with pytest.raises(ConfigError) as info:
        dataclasses.replace(CAR, **change).check()
    assert key in str(info.value) and "\n" not in str(info.value)


def test_a_record_cannot_be_changed_in_place() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        CAR.num_axis = 6  # type: ignore[misc]
    with pytest.raises(TypeError):
        CAR.resistance["formula"] = "davis"  # type: ignore[index]


def test_a_train_built_in_code_drives_with_its_mass(tmp_path) -> None:
    loco = str(CONFIGS / "vehicles" / "simple_loco.toml")
    train = TrainConfig("built", [TrainVehicle(loco),
                                  TrainVehicle(CAR, count=10, payload_fraction=0.5)],
                        coupling={"model": "sa3"})
    built = train.check()
    loco_mass = VehicleConfig.load(loco).resolved()["vehicle"]["empty_mass"]
    assert built.count == 11
    assert built.total_mass == pytest.approx(loco_mass + 10 * (23e3 + 0.5 * 69.5e3),
                                             rel=1e-12)
    scenario = rrscore.load_scenario(CONFIGS / "scenarios" / "simple_loco_level.toml")
    result = rrscore.drive(scenario.with_values({"train": train.table(),
                                                 "stop.max_time": 5}))
    assert result.summary["train_mass_kg"] == pytest.approx(built.total_mass, rel=1e-12)
    assert len(result.coupler_forces) == 11  # time_s and ten couplings
