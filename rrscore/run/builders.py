"""Vehicle and train configs built in code, as typed records that write back to TOML.

A :class:`VehicleConfig` holds the keys of a vehicle file's ``[vehicle]`` table (and its
plugin's ``[params]``), a :class:`TrainConfig` those of a train file's ``[train]`` table,
its vehicles :class:`TrainVehicle` entries. Their fields are the schema's keys
(:data:`~rrscore.model.vehicle.VEHICLE_SCHEMA`,
:data:`~rrscore.model.train.TRAIN_SCHEMA`), with the same defaults, so a record and a
file say the same things the same way; values may carry units as in a file
(``empty_mass="23 t"``) or be SI numbers. Nothing is checked when a record is made:
:meth:`VehicleConfig.check` and :meth:`TrainConfig.check` check it as the loader checks
a file (a :class:`~rrscore.model.errors.ConfigError` names the key), and what
:meth:`~VehicleConfig.write` writes loads back, through the same loader, to the same
config. The records are immutable; :func:`dataclasses.replace` makes a changed copy::

    car = VehicleConfig(type="freight_car", empty_mass="23 t", length="13.92 m",
                        num_axis=4, payload_mass="69.5 t")
    heavy = dataclasses.replace(car, payload_mass="75 t")
    train = TrainConfig("test", [TrainVehicle("configs/vehicles/simple_loco.toml"),
                                 TrainVehicle(heavy, count=40)])
    train.write("my_train.toml")
    scenario = scenario.with_values({"train": train.table()})
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomli_w

from ..model.config import (
    Context,
    Include,
    freeze,
    include,
    load_toml,
    load_top_table,
    strip_private,
    thaw,
)
from ..model.errors import ConfigError
from ..model.train import TRAIN_SCHEMA, Train, resolve_train
from ..model.vehicle import VEHICLE_SCHEMA
from .files import write_atomically
from .plugins import Registry, load_registry

#: A value as a config file gives it: an SI number, or a string with its unit ("23 t").
Quantity = float | int | str

#: The sections of ``[vehicle]`` that are tables of their own (resistance, adhesion, brake).
VEHICLE_SECTIONS = ("resistance", "adhesion", "brake")


def _table(record: Any, skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """A record's fields as a TOML table: nested records as tables, empty tables and
    None left out (as a file leaves out what it does not set)."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(record):
        if f.name in skip:
            continue
        value = getattr(record, f.name)
        if hasattr(value, "table"):
            value = value.table()
        elif isinstance(value, Mapping):
            if not value:
                continue
            value = strip_private(thaw(value))
        elif isinstance(value, list | tuple):
            value = [v.table() if hasattr(v, "table") else strip_private(thaw(v))
                     for v in value]
        if value is None:
            continue
        out[f.name] = value
    return out


def _context(what: str) -> Context:
    return Context(f"<{what} built in code>", "", Path.cwd())


def _known_keys(table: Mapping[str, Any], cls: type, ctx: Context) -> dict[str, Any]:
    """``table`` restricted to the fields of ``cls``; an unknown key is the
    :class:`ConfigError` the loader would give."""
    names = [f.name for f in dataclasses.fields(cls)]
    for key in table:
        if key not in names:
            raise ctx.child(key).error(f"unknown key; expected one of {', '.join(names)}")
    return dict(table)


@dataclass(frozen=True)
class VehicleConfig:
    """A vehicle config: the ``[vehicle]`` table of a vehicle file (every key of
    :data:`~rrscore.model.vehicle.VEHICLE_SCHEMA`, same names, same defaults) and the
    plugin's ``params``. Numbers are SI; a string carries its unit (``"23 t"``).
    ``resistance``, ``adhesion`` and ``brake`` are tables as in a file (``{"formula":
    "davis", "A": "1.2 kN", ...}``), ``params`` the vehicle type's parameters."""

    type: str
    empty_mass: Quantity
    length: Quantity
    num_axis: int
    name: str = ""
    payload_mass: Quantity = 0.0
    wheel_diameter: Quantity = 1.05
    wheelset_inertia: Quantity = 100.0
    resistance: Mapping[str, Any] = field(default_factory=dict)
    adhesion: Mapping[str, Any] = field(default_factory=dict)
    brake: Mapping[str, Any] = field(default_factory=dict)
    params: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in (*VEHICLE_SECTIONS, "params"):  # read-only, as the record is
            object.__setattr__(self, name, freeze(dict(getattr(self, name))))

    def table(self) -> dict[str, Any]:
        """The vehicle file's tables, ``{"vehicle": {...}, "params": {...}}`` (also the
        inline form a train's ``config`` key takes)."""
        out = {"vehicle": _table(self, skip=("params",))}
        if self.params:
            out["params"] = strip_private(thaw(self.params))
        return out

    def to_toml(self) -> str:
        """The vehicle file, as TOML."""
        return tomli_w.dumps(self.table())

    def write(self, path: str | Path) -> None:
        """Write the vehicle file to ``path``, whole or not at all."""
        write_atomically(path, self.to_toml())

    @classmethod
    def from_table(cls, table: Mapping[str, Any], ctx: Context | None = None) -> VehicleConfig:
        """The record of a vehicle file's tables (``{"vehicle": ..., "params": ...}``), its
        values as the file gives them (not checked: see :meth:`check`)."""
        ctx = ctx or _context("vehicle")
        body = table.get("vehicle")
        if not isinstance(body, Mapping):
            raise ctx.child("vehicle").error("missing table; expected a [vehicle] table")
        body = _known_keys(body, cls, ctx.child("vehicle"))
        body.pop("params", None)  # (params sit beside [vehicle], not in it)
        try:
            return cls(**body, params=table.get("params", {}))
        except TypeError as exc:  # a required key left out
            raise ctx.child("vehicle").error(f"{exc}; expected type, empty_mass, length "
                                             "and num_axis") from None

    @classmethod
    def load(cls, path: str | Path) -> VehicleConfig:
        """The record of a vehicle file, its values as the file gives them (a unit string
        stays a string)."""
        data = load_toml(path, "vehicle")
        ctx = Context(str(path), "", Path(path).resolve().parent)
        for key in data:
            if key not in ("vehicle", "params"):
                raise ctx.child(key).error("unknown key (allowed here: vehicle, params)")
        return cls.from_table(data, ctx)

    def resolved(self) -> dict[str, Any]:
        """The config as the loader makes it of the file :meth:`write` writes: every
        default filled in, units converted to SI (the ``[vehicle]`` table checked; the
        ``params`` as given, checked by the vehicle's plugin: see :meth:`check`)."""
        return _private_free(include(self.table(), Include(VEHICLE_SCHEMA, what="vehicle"),
                                     _context("vehicle")))

    def check(self, registry: Registry | None = None) -> Train:
        """Check the vehicle as a train would use it (its ``params`` by its plugin, from
        ``registry``, rrscore's own plugins by default): a train of this one vehicle."""
        return TrainConfig("check", [TrainVehicle(self)]).check(registry)


@dataclass(frozen=True)
class TrainVehicle:
    """One entry of a train's ``vehicles``: a vehicle (a :class:`VehicleConfig` or the
    path of a vehicle file, relative to the train file), how many, and how they are
    loaded, turned and coupled (the keys of
    :data:`~rrscore.model.train.TRAIN_VEHICLE_SCHEMA`)."""

    config: VehicleConfig | str
    count: int = 1
    payload_fraction: float = 1.0
    orientation: str = "forward"
    coupling: Mapping[str, Any] = field(default_factory=dict)
    coupled: bool = True
    brake_pipe_connected: bool = True
    open_rear_cock: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "coupling", freeze(dict(self.coupling)))
        if isinstance(self.config, os.PathLike):
            object.__setattr__(self, "config", os.fspath(self.config))

    def table(self) -> dict[str, Any]:
        """The entry as a table of ``[[train.vehicles]]``."""
        return _table(self)

    @classmethod
    def from_table(cls, table: Mapping[str, Any], ctx: Context) -> TrainVehicle:
        """The record of a ``[[train.vehicles]]`` table, values as given."""
        body = _known_keys(table, cls, ctx)
        if "config" not in body:
            raise ctx.child("config").error("missing; expected a vehicle file or table")
        if isinstance(body["config"], Mapping):
            body["config"] = VehicleConfig.from_table(body["config"], ctx.child("config"))
        return cls(**body)


@dataclass(frozen=True)
class TrainConfig:
    """A train config: the ``[train]`` table of a train file (the keys of
    :data:`~rrscore.model.train.TRAIN_SCHEMA`): its ``name``, its ``vehicles`` lead
    first (:class:`TrainVehicle`) and the ``coupling`` between them (``{"model":
    "sa3"}``, as in a file)."""

    name: str = "train"
    vehicles: Sequence[TrainVehicle] = ()
    coupling: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "vehicles", tuple(self.vehicles))
        object.__setattr__(self, "coupling", freeze(dict(self.coupling)))

    def table(self) -> dict[str, Any]:
        """The ``[train]`` table (also what a scenario's ``train`` key takes inline:
        ``scenario.with_values({"train": train.table()})``)."""
        return _table(self)

    def to_toml(self) -> str:
        """The train file, as TOML (its vehicles inline, or the paths they were given)."""
        return tomli_w.dumps({"train": self.table()})

    def write(self, path: str | Path) -> None:
        """Write the train file to ``path``, whole or not at all (vehicle paths are
        relative to the file, as in any train file)."""
        write_atomically(path, self.to_toml())

    @classmethod
    def from_table(cls, table: Mapping[str, Any], ctx: Context | None = None) -> TrainConfig:
        """The record of a ``[train]`` table, values as given (not checked: see
        :meth:`check`)."""
        ctx = ctx or _context("train")
        body = _known_keys(table, cls, ctx)
        vehicles = body.get("vehicles", [])
        if not isinstance(vehicles, list) or not all(isinstance(v, Mapping) for v in vehicles):
            raise ctx.child("vehicles").error("expected an array of tables [[train.vehicles]]")
        body["vehicles"] = [TrainVehicle.from_table(v, ctx.child("vehicles").child(i))
                            for i, v in enumerate(vehicles)]
        return cls(**body)

    @classmethod
    def load(cls, path: str | Path) -> TrainConfig:
        """The record of a train file, its values as the file gives them (vehicle files
        named by path stay paths)."""
        data, ctx = load_top_table(path, "train")
        return cls.from_table(data, ctx)

    def resolved(self, base: str | Path | None = None) -> dict[str, Any]:
        """The ``[train]`` table as the loader makes it of the file :meth:`write` writes
        (in the folder ``base``, the current one by default, against which vehicle paths
        are read): defaults filled in, units in SI, vehicle files read in."""
        ctx = Context("<train built in code>", "", Path(base or Path.cwd()))
        return _private_free(include(self.table(), Include(TRAIN_SCHEMA, what="train"), ctx))

    def check(self, registry: Registry | None = None, base: str | Path | None = None,
              gravity: float | None = None) -> Train:
        """Check the train as a train file is checked (every vehicle's keys and its
        plugin's params, the couplings) and return it built
        (:class:`~rrscore.model.train.Train`: ``count``, ``total_mass``, ...).
        ``registry``: the plugins, rrscore's own by default; ``base``: the folder vehicle
        paths are relative to (the current one by default)."""
        registry = registry or load_registry()
        ctx = Context("<train built in code>", "", Path(base or Path.cwd()))
        body = include(self.table(), Include(TRAIN_SCHEMA, what="train"), ctx)
        if not body["vehicles"]:
            raise ConfigError(ctx.file, "vehicles", "found none, expected at least one")
        resolve_train(body, registry)
        return Train(body, registry) if gravity is None else Train(body, registry, gravity)


def _private_free(data: Any) -> Any:
    """``data`` without the loader's bookkeeping (``_source`` keys), None kept."""
    if isinstance(data, Mapping):
        return {k: _private_free(v) for k, v in data.items() if not str(k).startswith("_")}
    if isinstance(data, list):
        return [_private_free(v) for v in data]
    return data


__all__ = ["TrainConfig", "TrainVehicle", "VehicleConfig"]
