"""A train: vehicles in order, grouped by type, every per-vehicle, per-axle and per-coupling
value laid out as arrays, and each vehicle type's record.

Vehicle 0 leads; the train runs towards +x. The vehicles of one type (and axle count)
form a :class:`Batch`, whose record (:mod:`rrscore.model.records`) holds what its plugin
declared, one entry per vehicle, whatever configs they came from.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import numpy as np

from .brake import check_brake
from .config import (
    Context,
    FreeTable,
    Include,
    Param,
    Section,
    TableList,
    source_context,
    stack_params,
    validate,
)
from .couplers import COUPLING_SCHEMA, CouplerModel
from .errors import ConfigError, PluginError, plugin_call
from .formulas import (
    ADHESION_FORMULAS,
    FORMULAS,
    RAIL_CONDITIONS,
    adhesion_law,
    law_table,
    rail_condition_factor,
    running_resistance,
    starting_resistance,
)
from .records import Record
from .units import G
from .vehicle import VEHICLE_SCHEMA, VehicleModel, control_of, record_rows, record_tables

#: The most vehicles one train may have: longer than any train run, and small enough that a
#: typo in ``count`` cannot exhaust memory before a drive starts.
MAX_VEHICLES = 20000

TRAIN_VEHICLE_SCHEMA = {
    "config": Include(VEHICLE_SCHEMA, "vehicle config: a path or an inline table", "vehicle"),
    "count": Param(kind=int, default=1, doc="how many of this vehicle", min=1,
                   max=MAX_VEHICLES),
    "payload_fraction": Param(kind=float, default=1.0, doc="load as a fraction of payload_mass",
                              min=0.0, max=1.0),
    "orientation": Param(kind=str, default="forward", choices=("forward", "reversed"),
                         doc="'reversed' vehicles face the rear of the train"),
    "coupling": FreeTable("coupling to the vehicle ahead, overriding train.coupling"),
    "coupled": Param(kind=bool, default=True,
                     doc="false: each of these vehicles starts uncoupled from the one ahead"),
    "brake_pipe_connected": Param(kind=bool, default=True,
                                  doc="false: the brake hoses to the vehicle ahead are not "
                                      "joined (angle cocks shut)"),
    "open_rear_cock": Param(kind=bool, default=False,
                            doc="true: the angle cock at the vehicle's rear is open, so where "
                                "no hose is joined behind it (at the tail) the pipe vents "
                                "there"),
}

TRAIN_SCHEMA = {
    "name": Param(kind=str, default="train", doc="train name"),
    "coupling": Section(COUPLING_SCHEMA, "coupling used between all vehicles"),
    "vehicles": TableList(TRAIN_VEHICLE_SCHEMA, "vehicles, lead first", min_items=1),
}
"""The ``[train]`` table of a train file (or a scenario's inline train)."""


@dataclass
class Batch:
    """The vehicles of one type in a train, and their record: ``cls`` the plugin's class,
    ``index`` their places in the train (0 = lead), ``axles`` their axles' indices
    (``(count, num_axis)``), ``params`` every parameter as an array (one entry per vehicle,
    non-numeric ones too), ``record`` the record."""

    cls: type[VehicleModel]
    index: np.ndarray
    axles: np.ndarray
    params: SimpleNamespace
    record: Record
    config_source: str
    plugin: str = "?"

    @property
    def count(self) -> int:
        """How many vehicles the batch has."""
        return int(self.index.size)

    @property
    def num_axis(self) -> int:
        """Wheelsets per vehicle (the same for the whole batch)."""
        return int(self.axles.shape[1])

    @property
    def type_name(self) -> str:
        """The plugin's type name."""
        return self.cls.type_name

    def describe(self, method: str) -> str:
        """'vehicle plugin 'x' (plugin p) in step() for vehicles 1-3 from f.toml', for errors."""
        return (f"vehicle plugin {self.cls.type_name!r} ({self.plugin}) in {method}() for "
                f"{describe_vehicles(self.index)} from {self.config_source}")


@dataclass
class CouplingSetup:
    """The couplings of a train as built: ``groups`` (a coupler model serving each group of
    couplings, and their indices), nominal centre distances, break forces (``inf``: never),
    coupling speeds, and which couplings start coupled."""

    groups: list[tuple[CouplerModel, np.ndarray]]
    nominal: np.ndarray
    break_force: np.ndarray
    coupling_speed: np.ndarray
    coupled: np.ndarray
    origins: list[str]

    @property
    def count(self) -> int:
        """How many couplings."""
        return int(self.nominal.size)

    def free_range(self) -> tuple[np.ndarray, np.ndarray]:
        """The slack range ``(lo, hi)`` of every coupling."""
        lo, hi = np.zeros(self.count), np.zeros(self.count)
        for (model, idx), origin in zip(self.groups, self.origins, strict=True):
            couplings = describe_vehicles(idx).replace("vehicle", "coupling")
            with plugin_call(f"coupler model {type(model).type_name!r} ({origin}) in "
                             f"free_range(), for {couplings}"):
                lo[idx], hi[idx] = model.free_range()
        return lo, hi

    def kinks(self) -> np.ndarray:
        """Every coupling's kinks, ``(count, k)``, NaN where it has fewer."""
        tables = []
        for model, idx in self.groups:
            k = np.asarray(model.kinks(), dtype=float).reshape(idx.size, -1)
            block = np.full((self.count, k.shape[1]), np.nan)
            block[idx] = k
            tables.append(block)
        return np.concatenate([np.zeros((self.count, 0)), *tables], axis=1)

    def start_spacing(self, slack: str = "neutral",
                      gaps: np.ndarray | None = None) -> np.ndarray:
        """Centre distance of each coupled pair at the start: nominal, with the slack
        'neutral' (in its middle), 'bunched' (closed) or 'stretched', plus ``gaps``."""
        lo, hi = self.free_range()
        d = {"neutral": 0.5 * (lo + hi), "bunched": lo, "stretched": hi}[slack]
        return self.nominal + d + (0.0 if gaps is None else np.asarray(gaps))


def describe_vehicles(index: np.ndarray) -> str:
    """'vehicle 0', 'vehicles 1-50' or 'vehicles 0, 7, 9' for messages."""
    if len(index) == 1:
        return f"vehicle {index[0]}"
    if np.array_equal(index, np.arange(index[0], index[0] + len(index))):
        return f"vehicles {index[0]}-{index[-1]}"
    return "vehicles " + ", ".join(str(i) for i in index[:8]) + (" ..." if len(index) > 8 else "")


def _unknown(ctx: Context, found: str, names: list[str], what: str) -> ConfigError:
    return ctx.error(f"found {found!r}, expected a {what}: one of {', '.join(sorted(names))}")


def _check_vehicle_formulas(veh: dict, ctx: Context) -> None:
    """Check resistance and adhesion choices now, so errors name the config key."""
    res = veh["resistance"]
    if res["formula"] not in FORMULAS:
        raise _unknown(ctx.child("resistance").child("formula"), res["formula"],
                       list(FORMULAS), "resistance formula")
    adh = veh["adhesion"]
    if adh["formula"] not in ADHESION_FORMULAS:
        raise _unknown(ctx.child("adhesion").child("formula"), adh["formula"],
                       list(ADHESION_FORMULAS), "adhesion formula")
    try:
        rail_condition_factor(adh["rail_condition"])
    except (KeyError, ValueError):
        raise _unknown(ctx.child("adhesion").child("rail_condition"), adh["rail_condition"],
                       list(RAIL_CONDITIONS), "rail condition") from None


def _resistance_params(res: dict) -> dict[str, float]:
    names = FORMULAS[res["formula"]].params
    return {k: res[k] for k in names if res.get(k) is not None}


def _adhesion_params(adh: dict) -> dict[str, Any]:
    names = ADHESION_FORMULAS[adh["formula"]].params
    return {k: adh[k] for k in names if adh.get(k) is not None}


def resolve_train(train: dict[str, Any], registry: Any,
                  unchecked: set[str] | None = None) -> None:
    """Check, at load time, what only the plugins can check: each vehicle config's type,
    formulas and ``[params]``, and each coupling's model and params. Fills the checked
    values into ``train`` (a fresh, mutable table), so the scenario that holds it is the
    whole, resolved description; :class:`Train` then builds from it without changing it.

    With ``unchecked`` (a set), a vehicle type or coupler model ``registry`` lacks is added
    to it ("vehicle type 'x'", "coupler model 'y'") instead of refused, and what only its
    plugin can check is left unchecked (``rrs validate`` of a config whose plugins were not
    imported); the train is then not for building."""
    total = sum(entry["count"] for entry in train["vehicles"])
    if total > MAX_VEHICLES:
        raise source_context(train, "vehicles").error(
            f"found {total} vehicles in all, expected at most {MAX_VEHICLES} in one train")
    for entry in train["vehicles"]:
        cfg = entry["config"]
        veh = cfg["vehicle"]
        ctx = source_context(cfg, "vehicle")
        cls = registry.vehicle_types.get(veh["type"])
        if cls is None and unchecked is not None:  # what needs no plugin is still checked
            unchecked.add(f"vehicle type {veh['type']!r}")
            _check_vehicle_formulas(veh, ctx)
            check_brake(veh["brake"], ctx.child("brake"))
            continue
        if cls is None:
            err = _unknown(ctx.child("type"), veh["type"], list(registry.vehicle_types),
                           "vehicle type")
            raise type(err)(err.file, err.key, err.message + " (a plugin's type? load it "
                            "with --plugins DIR or the scenario's plugin_dirs)")
        _check_vehicle_formulas(veh, ctx)
        brake = veh["brake"]
        check_brake(brake, ctx.child("brake"))
        for flag, control in (("driver_valve", "brake_valve"),
                              ("independent", "independent_brake")):
            if brake["system"] == "air" and brake[flag] and control not in cls.controls:
                raise ctx.child("brake").child(flag).error(
                    f"found true, but vehicle type {veh['type']!r} has no {control!r} "
                    f"control to work it; expected false, or a type with that control")
        if not cfg.get("_checked"):
            params_ctx = source_context(cfg, "params")
            cfg["params"] = validate(cfg["params"], cls.params, params_ctx)
            _check_vehicle_params(cls, cfg["params"], params_ctx)
            cfg["_checked"] = True
    default = train["coupling"]
    train_ctx = source_context(train, "coupling")

    def known(setting: dict[str, Any]) -> bool:
        if unchecked is None or setting["model"] in registry.coupler_models:
            return True
        unchecked.add(f"coupler model {setting['model']!r}")
        return False

    if known(default):
        _check_coupling(default, registry, train_ctx)
    for e_i, entry in enumerate(train["vehicles"]):
        if entry["coupling"] and not entry["coupling"].get("_checked"):
            ctx = source_context(train, "vehicles").child(e_i).child("coupling")
            # (the default's own marks, "_params_checked", are not keys of the merged table)
            merged = {**{k: v for k, v in default.items() if not k.startswith("_")},
                      **entry["coupling"]}
            if "params" not in entry["coupling"] and merged["model"] != default["model"]:
                merged["params"] = {}
            merged = validate(merged, COUPLING_SCHEMA, ctx)
            if not known(merged):
                continue
            _check_coupling(merged, registry, ctx)
            merged["_checked"] = True
            entry["coupling"] = merged


def _check_vehicle_params(cls: type[VehicleModel], params: dict[str, Any],
                          ctx: Context) -> None:
    """The type's own check of its parameters together (``check_params``) at load time,
    where the file and key are known: a ValueError is a config error there."""
    if cls.check_params is None:
        return
    try:
        with plugin_call(f"vehicle plugin {cls.type_name!r} in check_params()"):
            cls.check_params(params)
    except PluginError as exc:
        cause = exc.__cause__
        if not isinstance(cause, ValueError):
            raise
        raise ctx.error(str(cause)) from None


def _check_coupling(setting: dict[str, Any], registry: Any, ctx: Context) -> None:
    cls = registry.coupler_models.get(setting["model"])
    if cls is None:
        raise _unknown(ctx.child("model"), setting["model"], list(registry.coupler_models),
                       "coupler model")
    if not setting.get("_params_checked"):
        setting["params"] = validate(setting["params"], cls.params, ctx.child("params"))
        # the model's own checks (a draft-gear table that is unusable) at load time, where
        # the file and key are known, not when a run builds the train
        try:
            with plugin_call(f"coupler model {setting['model']!r} in setup()"):
                cls([setting["params"]])
        except PluginError as exc:
            cause = exc.__cause__
            if not isinstance(cause, ValueError):
                raise
            raise ctx.child("params").error(str(cause)) from None
        setting["_params_checked"] = True


def _record(cls: type[VehicleModel], vehicles: list[dict], params: SimpleNamespace,
            mass: np.ndarray, gravity: float) -> Record:
    """The record of a batch of ``cls`` (``vehicles``: their vehicle tables)."""
    n, k = len(vehicles), int(vehicles[0]["num_axis"])
    initial = {name: control_of(cls, name).initial for name in cls.controls}
    # a list param is a table, a row per vehicle as wide as the longest list, NaN after
    widths = {name: max([len(v or ()) for v in getattr(params, name)] + [1])
              for name in record_tables(cls)}
    record = Record(f"{cls.__name__}Record", n, record_rows(cls),
                    [("q_a", k + 1), ("q_r", k + 1), ("adhesion", k), ("axle_slip", k),
                     *((name, k) for name in cls.axle_fields), *widths.items()],
                    [("count", n), ("axles", k)], initial)
    for name, spec in cls.params.items():
        if spec.kind in (float, int, bool):
            values = getattr(params, name)
            record.row(name)[:] = [np.nan if v is None else float(v) for v in values]
    for name in widths:
        table = record.row(name)
        table[:] = np.nan
        for i, values in enumerate(getattr(params, name)):
            table[i, :len(values or ())] = values or ()
    record.row("mass")[:] = mass
    record.row("gravity")[:] = gravity
    record.row("wheel_radius")[:] = [v["wheel_diameter"] / 2.0 for v in vehicles]
    record.row("wheelset_inertia")[:] = [v["wheelset_inertia"] for v in vehicles]
    record.row("adhesion")[:] = 1.0
    for name, spec in cls.states.items():
        record.row(name)[:] = spec.initial
    return record


class Train:
    """The assembled train, built afresh for each run from a resolved ``[train]`` table
    (see :func:`resolve_train`) and a plugin registry. It never writes into the table."""

    def __init__(self, train: Mapping[str, Any], registry: Any, gravity: float = G) -> None:
        self.name = train["name"]
        entries = train["vehicles"]
        entry_of: list[int] = []
        for e_i, entry in enumerate(entries):
            entry_of += [e_i] * entry["count"]
        n = len(entry_of)
        self.count = n
        self.entry_of = np.array(entry_of)
        vehicles = [entries[e]["config"] for e in entry_of]  # per vehicle: its config
        self.orientation = np.array(
            [1.0 if entries[e]["orientation"] == "forward" else -1.0 for e in entry_of])
        payload = np.array([entries[e]["payload_fraction"] for e in entry_of])
        tables = [cfg["vehicle"] for cfg in vehicles]
        self.mass = np.array([v["empty_mass"] for v in tables]) + payload * np.array(
            [v["payload_mass"] for v in tables])
        axle_counts = np.array([v["num_axis"] for v in tables], dtype=int)
        first_axle = np.concatenate([[0], np.cumsum(axle_counts)[:-1]])
        self.num_axis = axle_counts
        self.axle_count = int(axle_counts.sum())
        self.axle_vehicle = np.repeat(np.arange(n), axle_counts)

        # Batches: one per vehicle type and axle count (a record's tables have one column
        # per axle), in order of first appearance.
        groups: dict[tuple[str, int], list[int]] = {}
        for i, veh in enumerate(tables):
            groups.setdefault((veh["type"], veh["num_axis"]), []).append(i)
        self.batches: list[Batch] = []
        self.batch_of = np.zeros(n, dtype=int)
        self.row_of = np.zeros(n, dtype=int)
        for b_i, ((type_name, k), index) in enumerate(groups.items()):
            cls = registry.vehicle_types[type_name]
            rows = [vehicles[i] for i in index]
            idx = np.array(index)
            params = stack_params([cfg["params"] for cfg in rows], cls.params)
            record = _record(cls, [tables[i] for i in index], params, self.mass[idx], gravity)
            sources = sorted({cfg["_source"][0] or "<inline>" for cfg in rows})
            self.batches.append(Batch(
                cls, idx, first_axle[idx][:, None] + np.arange(k)[None, :], params, record,
                ", ".join(sources), registry.origin.get(("vehicle_types", type_name), "?")))
            self.batch_of[idx] = b_i
            self.row_of[idx] = np.arange(len(index))

        self.length = np.array([v["length"] for v in tables], dtype=float)
        self.half_length = self.length / 2.0
        self.c0, self.c1, self.c2 = np.zeros(n), np.zeros(n), np.zeros(n)
        self.start0, self.start_speed = np.zeros(n), np.ones(n)
        self.curve_area = np.zeros(n, dtype=bool)  # True: AREA curve resistance, else 700/R
        self.cd_a = np.zeros(n)  # m^2, explicit air-drag area; 0 = no explicit air term
        self.tunnel_factor = np.ones(n)  # multiplier on aerodynamic terms fully in a tunnel
        self.axle_radius = np.zeros(self.axle_count)
        self.axle_inertia = np.zeros(self.axle_count)
        law_rows: list[np.ndarray] = []
        self.axle_law = np.zeros(self.axle_count, dtype=np.int64)
        self.creep_slip = np.zeros(self.axle_count)
        self.kinetic_ratio = np.zeros(self.axle_count)
        self.rail_factor = np.ones(self.axle_count)
        laws: dict[int, int] = {}
        for i, cfg in enumerate(vehicles):
            veh = cfg["vehicle"]
            ax = slice(first_axle[i], first_axle[i] + axle_counts[i])
            self.axle_radius[ax] = veh["wheel_diameter"] / 2.0
            self.axle_inertia[ax] = veh["wheelset_inertia"]
            adh = veh["adhesion"]
            if id(adh) not in laws:
                try:
                    law_rows.append(adhesion_law(adh["formula"], _adhesion_params(adh)))
                except ValueError as exc:
                    raise source_context(cfg, "vehicle").child("adhesion").error(
                        str(exc)) from None
                laws[id(adh)] = len(law_rows) - 1
            self.axle_law[ax] = laws[id(adh)]
            self.creep_slip[ax] = adh["creep_slip"]
            self.kinetic_ratio[ax] = adh["kinetic_ratio"]
            self.rail_factor[ax] = rail_condition_factor(adh["rail_condition"])
            res = veh["resistance"]
            self.curve_area[i] = res["curve"] == "area"
            self.cd_a[i] = 0.0 if res["air_cd_a"] is None else res["air_cd_a"]
            self.tunnel_factor[i] = res["tunnel_factor"]
            try:
                run = running_resistance(res["formula"], self.mass[i], int(axle_counts[i]),
                                         _resistance_params(res), g=gravity)
                start = starting_resistance(
                    self.mass[i], int(axle_counts[i]), run, v_blend=res["starting_speed"],
                    specific=None if res["starting_specific"] is None
                    else res["starting_specific"] * 1000.0, g=gravity)
            except ValueError as exc:
                raise source_context(cfg, "vehicle").child("resistance").error(
                    str(exc)) from None
            self.c0[i], self.c1[i], self.c2[i] = run.c0, run.c1, run.c2
            if res["starting"]:
                self.start0[i], self.start_speed[i] = start.force0, start.v_blend
        #: The adhesion laws, a row each (:func:`~rrscore.model.formulas.adhesion_law`).
        self.laws = law_table(law_rows)
        #: Each vehicle's ``[vehicle.brake]`` table, and whether its brake hoses are joined
        #: to the vehicle ahead.
        self.brake_configs = [cfg["vehicle"]["brake"] for cfg in vehicles]
        self.brake_pipe_connected = np.array(
            [entries[e]["brake_pipe_connected"] for e in entry_of], dtype=bool)
        self.open_rear_cock = np.array(
            [entries[e]["open_rear_cock"] for e in entry_of], dtype=bool)
        self.has_air_brake = any(c["system"] == "air" for c in self.brake_configs)
        #: Acceleration due to gravity, m/s^2 (the scenario's environment.gravity).
        self.gravity = gravity
        self.weight = self.mass * gravity
        self.axle_normal = self.weight[self.axle_vehicle] / self.num_axis[self.axle_vehicle]
        self.axle_mass_equiv = self.axle_inertia / self.axle_radius**2
        self.couplings = self._build_couplings(train, entries, registry)

    def _build_couplings(self, train: Mapping, entries: list, registry: Any) -> CouplingSetup:
        n = self.count
        settings = [entries[self.entry_of[j]]["coupling"] or train["coupling"]
                    for j in range(1, n)]
        by_model: dict[str, list[int]] = {}
        for j, s in enumerate(settings):
            by_model.setdefault(s["model"], []).append(j)
        groups = []
        for name, idx in by_model.items():
            cls = registry.coupler_models[name]
            with plugin_call(f"coupler model {name!r} in setup()"):
                model = cls([settings[j]["params"] for j in idx])
            groups.append((model, np.array(idx, dtype=np.int64)))
        nominal = (self.length[:-1] + self.length[1:]) / 2.0
        coupled = np.array([entries[self.entry_of[j]]["coupled"] for j in range(1, n)], bool)
        breaking = np.array([s["break_force"] for s in settings], dtype=float)
        return CouplingSetup(
            groups, nominal, np.where(breaking > 0, breaking, np.inf),
            np.array([s["coupling_speed"] for s in settings], dtype=float), coupled,
            [registry.origin.get(("coupler_models", name), "") for name in by_model])

    @property
    def total_mass(self) -> float:
        """Mass of the whole train, kg."""
        return float(self.mass.sum())

    @property
    def total_length(self) -> float:
        """Length of the train over couplers at nominal spacing, m."""
        return float(self.length.sum())
