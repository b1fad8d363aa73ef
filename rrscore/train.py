"""A train: vehicles in order, batched by type into models, with every per-vehicle,
per-axle and per-coupling parameter laid out as arrays for the dynamics.

Vehicle 0 leads; the train runs towards +x. Vehicles built from the same
vehicle config share one model object (a *batch*).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from . import adhesion, resistance
from .config import (
    Context,
    FreeTable,
    Include,
    Param,
    Section,
    TableList,
    source_context,
    validate,
)
from .couplers import COUPLING_SCHEMA, Couplings
from .errors import ConfigError, plugin_call
from .pluginmanager import Registry
from .vehicle import VEHICLE_SCHEMA, VehicleModel

TRAIN_VEHICLE_SCHEMA = {
    "config": Include(VEHICLE_SCHEMA, "vehicle config: a path or an inline table", "vehicle"),
    "count": Param(kind=int, default=1, doc="how many of this vehicle", min=1),
    "payload_fraction": Param(kind=float, default=1.0, doc="load as a fraction of payload_mass",
                              min=0.0, max=1.0),
    "orientation": Param(kind=str, default="forward", choices=("forward", "reversed"),
                         doc="'reversed' vehicles face the rear of the train"),
    "coupling": FreeTable("coupling to the vehicle ahead, overriding train.coupling"),
    "coupled": Param(kind=bool, default=True,
                     doc="false: each of these vehicles starts uncoupled from the one ahead"),
}

TRAIN_SCHEMA = {
    "name": Param(kind=str, default="train", doc="train name"),
    "coupling": Section(COUPLING_SCHEMA, "coupling used between all vehicles"),
    "vehicles": TableList(TRAIN_VEHICLE_SCHEMA, "vehicles, lead first", min_items=1),
}
"""The ``[train]`` table of a train file (or a scenario's inline train)."""

G = resistance.G


@dataclass
class Batch:
    """A model and the train positions and axles of the vehicles it serves."""

    model: VehicleModel
    config_source: str
    axles: np.ndarray  # (count, num_axis) global axle indices
    plugin: str = "?"

    def describe(self, method: str) -> str:
        """'vehicle plugin 'x' (plugin p) in step() for vehicles 1-3 from f.toml', for errors."""
        m = self.model
        return (f"vehicle plugin {m.type_name!r} ({self.plugin}) in {method}() for "
                f"{describe_vehicles(m.index)} from {self.config_source}")


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
    if res["formula"] not in resistance.FORMULAS:
        raise _unknown(ctx.child("resistance").child("formula"), res["formula"],
                       list(resistance.FORMULAS), "resistance formula")
    adh = veh["adhesion"]
    if adh["formula"] not in adhesion.ADHESION_FORMULAS:
        raise _unknown(ctx.child("adhesion").child("formula"), adh["formula"],
                       list(adhesion.ADHESION_FORMULAS), "adhesion formula")
    try:
        adhesion.rail_condition_factor(adh["rail_condition"])
    except (KeyError, ValueError):
        raise _unknown(ctx.child("adhesion").child("rail_condition"), adh["rail_condition"],
                       list(adhesion.RAIL_CONDITIONS), "rail condition") from None


def _resistance_params(res: dict) -> dict[str, float]:
    names = resistance.FORMULAS[res["formula"]].params
    return {k: res[k] for k in names if res.get(k) is not None}


def _adhesion_params(adh: dict) -> dict[str, Any]:
    names = adhesion.ADHESION_FORMULAS[adh["formula"]].params
    return {k: adh[k] for k in names if adh.get(k) is not None}


class Train:
    """The assembled train. Built from a normalised ``[train]`` table and a plugin registry."""

    def __init__(self, train: dict[str, Any], registry: Registry) -> None:
        self.name = train["name"]
        entries = train["vehicles"]

        # Expand entries into vehicles and group them into batches by vehicle config.
        groups: dict[int, list[int]] = {}
        entry_of: list[int] = []
        for e_i, entry in enumerate(entries):
            for _ in range(entry["count"]):
                groups.setdefault(id(entry["config"]), []).append(len(entry_of))
                entry_of.append(e_i)
        n = len(entry_of)
        self.count = n
        self.entry_of = np.array(entry_of)
        self.orientation = np.array(
            [1.0 if entries[e]["orientation"] == "forward" else -1.0 for e in entry_of]
        )
        payload = np.array([entries[e]["payload_fraction"] for e in entry_of])

        self.batches: list[Batch] = []
        self.batch_of = np.zeros(n, dtype=int)
        self.row_of = np.zeros(n, dtype=int)
        axle_counts = np.zeros(n, dtype=int)
        for b_i, index in enumerate(groups.values()):
            cfg = entries[entry_of[index[0]]]["config"]
            veh = cfg["vehicle"]
            ctx = source_context(cfg, "vehicle")
            cls = registry.vehicle_types.get(veh["type"])
            if cls is None:
                err = _unknown(ctx.child("type"), veh["type"], list(registry.vehicle_types),
                               "vehicle type")
                raise type(err)(err.file, err.key, err.message + " (a plugin's type? load it "
                                "with --plugins DIR or the scenario's plugin_dirs)")
            _check_vehicle_formulas(veh, ctx)
            cfg["params"] = validate(cfg["params"], cls.params, source_context(cfg, "params"))
            batch = Batch(None, cfg["_source"][0] or "<inline>",  # type: ignore[arg-type]
                          np.zeros((len(index), veh["num_axis"]), dtype=int),
                          registry.origin.get(("vehicle_types", veh["type"]), "?"))
            batch.model = cls(cfg, cfg["params"], np.array(index), payload[index])
            with plugin_call(batch.describe("setup")):
                batch.model.setup()
            self.batches.append(batch)
            self.batch_of[index] = b_i
            self.row_of[index] = np.arange(len(index))
            axle_counts[index] = veh["num_axis"]

        # Axles: each vehicle's wheelsets are contiguous, vehicles in train order.
        first_axle = np.concatenate([[0], np.cumsum(axle_counts)[:-1]])
        self.axle_count = int(axle_counts.sum())
        self.axle_vehicle = np.repeat(np.arange(n), axle_counts)
        for b in self.batches:
            b.axles = first_axle[b.model.index][:, None] + np.arange(b.model.num_axis)[None, :]

        self.mass = np.zeros(n)
        self.length = np.zeros(n)
        self.num_axis = axle_counts
        self.c0 = np.zeros(n)
        self.c1 = np.zeros(n)
        self.c2 = np.zeros(n)
        self.start0 = np.zeros(n)
        self.start_speed = np.ones(n)
        self.curve_area = np.zeros(n, dtype=bool)  # True: AREA curve resistance, else 700/R
        self.cd_a = np.zeros(n)  # m^2, explicit air-drag area; 0 = no explicit air term
        self.tunnel_factor = np.ones(n)  # multiplier on aerodynamic terms fully in a tunnel
        self.axle_radius = np.zeros(self.axle_count)
        self.axle_inertia = np.zeros(self.axle_count)
        self.adhesion_laws: list = []  # psi(v) per batch
        self.axle_law = np.zeros(self.axle_count, dtype=int)
        self.creep_slip = np.zeros(self.axle_count)
        self.kinetic_ratio = np.zeros(self.axle_count)
        self.rail_factor = np.ones(self.axle_count)
        for b in self.batches:
            m = b.model
            veh = m.config["vehicle"]
            idx = m.index
            self.mass[idx] = m.mass
            self.length[idx] = veh["length"]
            ax = b.axles.ravel()
            self.axle_radius[ax] = m.wheel_radius
            self.axle_inertia[ax] = veh["wheelset_inertia"]
            adh = veh["adhesion"]
            try:
                law = adhesion.adhesion_law(adh["formula"], _adhesion_params(adh))
            except ValueError as exc:
                ctx = source_context(m.config, "vehicle").child("adhesion")
                raise ctx.error(str(exc)) from None
            self.axle_law[ax] = len(self.adhesion_laws)
            self.adhesion_laws.append(law)
            self.creep_slip[ax] = adh["creep_slip"]
            self.kinetic_ratio[ax] = adh["kinetic_ratio"]
            self.rail_factor[ax] = adhesion.rail_condition_factor(adh["rail_condition"])
            res = veh["resistance"]
            ctx = source_context(m.config, "vehicle").child("resistance")
            self.curve_area[idx] = res["curve"] == "area"
            self.cd_a[idx] = 0.0 if res["air_cd_a"] is None else res["air_cd_a"]
            self.tunnel_factor[idx] = res["tunnel_factor"]
            for row, i in enumerate(idx):
                try:
                    run = resistance.running_resistance(
                        res["formula"], m.mass[row], m.num_axis, _resistance_params(res)
                    )
                    start = resistance.starting_resistance(
                        m.mass[row], m.num_axis, run, v_blend=res["starting_speed"],
                        specific=None if res["starting_specific"] is None
                        else res["starting_specific"] * 1000.0,
                    )
                except ValueError as exc:
                    raise ctx.error(str(exc)) from None
                self.c0[i], self.c1[i], self.c2[i] = run.c0, run.c1, run.c2
                if res["starting"]:
                    self.start0[i], self.start_speed[i] = start.force0, start.v_blend
        self.half_length = self.length / 2.0
        self.weight = self.mass * G
        self.axle_normal = self.weight[self.axle_vehicle] / self.num_axis[self.axle_vehicle]
        self.axle_mass_equiv = self.axle_inertia / self.axle_radius**2

        self.couplings = self._build_couplings(train, entries, registry)

    def _build_couplings(self, train: dict, entries: list[dict], registry: Registry) -> Couplings:
        n = self.count
        default = train["coupling"]
        train_ctx = source_context(train, "coupling")
        settings = []
        for j in range(1, n):
            entry = entries[self.entry_of[j]]
            if entry["coupling"]:
                ctx = source_context(train, "vehicles").child(int(self.entry_of[j]))
                ctx = ctx.child("coupling")
                merged = {**{k: v for k, v in default.items()}, **entry["coupling"]}
                if "params" not in entry["coupling"] and merged["model"] != default["model"]:
                    merged["params"] = {}
                settings.append((validate(merged, COUPLING_SCHEMA, ctx), ctx))
                entry["coupling"] = settings[-1][0]
            else:
                settings.append((default, train_ctx))
        by_model: dict[str, list[int]] = {}
        for j, (s, _) in enumerate(settings):
            by_model.setdefault(s["model"], []).append(j)
        groups = []
        checked: dict[int, dict] = {}
        for name, idx in by_model.items():
            cls = registry.coupler_models.get(name)
            if cls is None:
                raise _unknown(settings[idx[0]][1].child("model"), name,
                               list(registry.coupler_models), "coupler model")
            params = []
            for j in idx:
                s, ctx = settings[j]
                if id(s) not in checked:
                    s["params"] = validate(s["params"], cls.params, ctx.child("params"))
                    checked[id(s)] = s["params"]
                params.append(checked[id(s)])
            groups.append((cls(params), np.array(idx, dtype=int)))
        nominal = (self.length[:-1] + self.length[1:]) / 2.0
        coupled = np.array([entries[self.entry_of[j]]["coupled"] for j in range(1, n)], bool)
        return Couplings(
            groups,
            nominal,
            np.array([s["break_force"] for s, _ in settings]),
            np.array([s["coupling_speed"] for s, _ in settings]),
            coupled,
        )

    @property
    def total_mass(self) -> float:
        """Mass of the whole train, kg."""
        return float(self.mass.sum())

    @property
    def total_length(self) -> float:
        """Length of the train over couplers at nominal spacing, m."""
        return float(self.length.sum())
