"""Scenarios: a train on a route with a start, a solver, a driver program, stop
conditions and outputs (checking any config file, ``rrs validate``, is
:func:`rrscore.api.validate_file`)."""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import tomli_w

from ..driving.autodriver import AUTODRIVER_SCHEMA, check_autodriver
from ..driving.program import ACTION_SCHEMA, Action, check_actions
from ..driving.trace import TRACE_SCHEMA, Trace, load_trace
from ..model.config import (
    Context,
    FreeTable,
    Include,
    Param,
    Section,
    TableList,
    freeze,
    load_top_table,
    lookup_path,
    param_at,
    path_parts,
    resolve_plugin_dirs,
    set_path,
    strip_private,
    thaw,
    validate,
)
from ..model.errors import ConfigError
from ..model.track import MAX_LENGTH, ROUTE_SCHEMA, Route
from ..model.train import TRAIN_SCHEMA, Train, resolve_train
from ..model.units import G
from .files import write_atomically
from .plugins import PATH_ENV, Registry, load_registry
from .signals import BRAKE_SIGNALS, COUPLING_SIGNALS, VEHICLE_SIGNALS

#: Fastest start speed, m/s (720 km/h): above every rail speed record.
MAX_SPEED = 200.0

#: The longest simulated time a drive may ask for (``stop.max_time``): about 32 years.
MAX_TIME = 1e9

SCENARIO_SCHEMA = {
    "name": Param(kind=str, default="scenario", doc="scenario name"),
    "train": Include(TRAIN_SCHEMA, "train: a path to a train file or an inline table", "train",
                     file_key="train"),
    "route": Include(ROUTE_SCHEMA, "route: a path to a route file or an inline table", "route",
                     file_key="route"),
    "plugin_dirs": Param(kind=list, item=str, default=[],
                         doc="plugin directories, relative to this file"),
    "dynamics": Param(kind=str, default="multibody", choices=("multibody", "rigid", "events"),
                      doc="how the train moves: 'multibody' (every vehicle a body, joined by "
                          "its couplers), 'rigid' (the train as one body with the forces "
                          "summed where each vehicle stands, as point-mass simulators do: "
                          "no slack or coupler dynamics, steps of about a second) or "
                          "'events' (vehicles rolling free, no traction or brakes, run from "
                          "event to event by the free-car engine: see "
                          "rrscore/yard/eventscenario.py)"),
    "start": Section({
        "position": Param("m", 0.0, "front of the train (the lead vehicle's front end) along "
                          "the route", min=-MAX_LENGTH, max=MAX_LENGTH),
        "point": Param(kind=str, default=None, doc="start with the front at a named route "
                       "point instead"),
        "speed": Param("m/s", 0.0, "initial speed of every vehicle", min=-MAX_SPEED,
                       max=MAX_SPEED),
        "slack": Param(kind=str, default="neutral", choices=("neutral", "bunched", "stretched"),
                       doc="initial coupler slack"),
        "brakes": Param(kind=str, default="charged", choices=("charged", "empty"),
                        doc="air brake at the start: 'charged' (pipe and reservoirs at the "
                            "driver's valve's running pressure, cylinders empty) or 'empty' "
                            "(all at atmospheric pressure)"),
        "speeds": Param("m/s", None, "initial speed per vehicle, overriding speed", kind=list,
                        min=-MAX_SPEED, max=MAX_SPEED),
        "gaps": Param("m", None, "extra distance per coupling at the start, beyond the slack",
                      kind=list, min=-MAX_LENGTH, max=MAX_LENGTH),
    }),
    "environment": Section({
        "wind": Param("m/s", 0.0, "wind speed along the track, + blowing towards +x (a tailwind "
                      "for the train); acts through vehicle.resistance.air_cd_a", min=-100.0,
                      max=100.0),
        "air_density": Param("kg/m^3", 1.225, "air density for the air_cd_a force (ISA sea "
                             "level by default)", min=0.0, exclusive_min=True, max=10.0),
        "gravity": Param("m/s^2", G, "acceleration due to gravity: weight, grade forces and "
                         "resistances given per weight (published simulators use 9.8, "
                         "9.80155 or 9.80665)", min=9.7, max=9.9),
    }),
    "solver": Section({
        "method": Param(kind=str, default="rk45", doc="solver name (see `rrs plugins`)"),
        "step": Param("s", 0.01, "fixed step (rk4) or first step (adaptive)", min=0.0,
                      exclusive_min=True),
        "rtol": Param(kind=float, default=1e-6, doc="relative tolerance (adaptive)", min=0.0),
        "atol": Param(kind=float, default=2e-8,
                      doc="absolute tolerance on velocities, m/s (adaptive); small enough "
                      "that rtol, not atol, sets the error of coupler oscillations (see "
                      "docs/architecture.md, error control)", min=0.0,
                      exclusive_min=True),
        "position_tol": Param("m", 1e-5, "absolute tolerance on positions (adaptive)", min=0.0,
                              exclusive_min=True),
        "max_step": Param("s", 0.5, "largest step (adaptive)", min=0.0, exclusive_min=True),
        "control_step": Param("s", 0.05, "period of plugin steps and driver actions", min=0.0,
                              exclusive_min=True),
    }),
    "driver": TableList(ACTION_SCHEMA, "driver program: actions at times or positions"),
    "autodriver": Section(AUTODRIVER_SCHEMA,
                          "the built-in driver (see rrscore/driving/autodriver.py)"),
    "trace": Section(TRACE_SCHEMA, "a recorded trace to drive to: speeds the trace driver "
                     "follows, or control levels set at their times (see "
                     "rrscore/driving/trace.py)"),
    "stop": Section({
        "max_time": Param("s", 3600.0, "stop after this simulated time", min=0.0,
                          exclusive_min=True, max=MAX_TIME),
        "max_distance": Param("m", 0.0, "stop after this distance; 0 = no limit", min=0.0,
                              max=MAX_LENGTH),
        "at_position": Param("m", None, "stop when the train's front passes this",
                             min=-MAX_LENGTH, max=MAX_LENGTH),
        "at_point": Param(kind=str, default=None, doc="stop when the train's front passes a point"),
        "standstill": Param(kind=bool, default=False,
                            doc="stop when the whole train stands still after having moved "
                                "(not where the built-in driver stands short of its stop_at: "
                                "it pulls up)"),
        "standstill_speed": Param("m/s", 0.01, "speed below which a vehicle counts as standing",
                                  min=0.0),
    }),
    "output": Section({
        "sample_interval": Param("s", 1.0, "time between rows of timeseries.csv", min=0.0,
                                 exclusive_min=True),
        "vehicles": Param(kind=list, item=int, default=[], doc="vehicles to record"),
        "vehicle_signals": Param(kind=list, item=str, default=["speed_mps"],
                                 doc="signals per recorded vehicle"),
        "couplings": Param(kind=list, item=int, default=[], doc="couplings to record"),
        "coupling_signals": Param(kind=list, item=str, default=["force_N"],
                                  doc="signals per recorded coupling"),
        "coupler_forces": Param(kind=bool, default=True,
                                doc="write every coupling's force to coupler_forces.csv"),
        "plots": Param(kind=bool, default=True, doc="write speed.png and force_envelope.png"),
        "format": Param(kind=str, default="csv", choices=("csv", "parquet"),
                        doc="the tables' file format: 'csv' (written row by row) or "
                            "'parquet' (whole at the drive's end; needs the analysis extra), "
                            "a sweep's table too"),
    }),
}
"""The ``[scenario]`` table."""

#: The registries of unpickled scenarios, by plugin directories and ``RRS_PLUGIN_PATH``:
#: loading the plugins afresh for each took about an eighth of a short sweep case's time
#: where every case came with its own copy of the scenario. (Plugins keep no state
#: between drives, so the scenarios of one process share a registry.)
_REGISTRIES: dict[tuple[tuple[str, ...], str], Registry] = {}


@dataclass(frozen=True)
class Scenario:
    """A checked scenario: an immutable description of a test drive.

    It holds the resolved config (read-only, every default filled in, SI
    units), the route, the checked driver actions and where it came from. It
    holds no plugin objects and no state of any run: each run builds its own
    train from it (:meth:`build_train`), so one scenario runs any number of
    times, in any process, with the same result. It pickles (the plugin
    registry is found again in the receiving process, from ``plugin_dirs``).
    """

    config: Mapping[str, Any]
    file: str | None
    route: Route
    actions: tuple[Action, ...]
    start_position: float
    stop_position: float | None
    plugin_dirs: tuple[str, ...] = ()
    _registry: Registry | None = field(default=None, repr=False, compare=False)
    #: What the checks found worth saying but not refusing (a recorded signal some
    #: recorded vehicles lack): printed by ``rrs drive`` and kept in the summary.
    warnings: tuple[str, ...] = ()
    #: The recorded trace the drive follows (``[scenario.trace]``), if any.
    trace: Trace | None = None

    @property
    def registry(self) -> Registry:
        """The plugins this scenario was checked against (after unpickling: loaded again,
        once per process for the same plugin directories)."""
        if self._registry is None:
            key = (self.plugin_dirs, os.environ.get(PATH_ENV, ""))
            if key not in _REGISTRIES:
                _REGISTRIES[key] = load_registry(self.plugin_dirs)
            object.__setattr__(self, "_registry", _REGISTRIES[key])
        return self._registry  # type: ignore[return-value]

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_registry"] = None  # classes from plugin directories do not travel
        state.pop("resolved_toml", None)  # (a cache, formed again where it is wanted)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def build_train(self) -> Train:
        """A new :class:`Train` with fresh vehicle-model objects, for one run."""
        return Train(self.config["train"], self.registry, self.config["environment"]["gravity"])

    @property
    def train(self) -> Train:
        """A new train built from this scenario (see :meth:`build_train`); for checks."""
        return self.build_train()

    def with_values(self, values: Mapping[str, Any]) -> Scenario:
        """A new scenario with some keys changed, checked like a file: ``values`` maps
        dotted key paths of the ``[scenario]`` table to values, with units as in a file
        (``{"stop.max_time": "10 min", "train.vehicles[1].payload_fraction": 0.5}``).
        This scenario is left as it is."""
        table = strip_private(thaw(self.config))
        for path, value in values.items():
            set_path(table, path, value)
        ctx = Context(self.file or "<scenario>", "scenario", Path.cwd())
        return scenario_from_table(table, ctx, self.registry, self.plugin_dirs)

    def unit_of(self, path: str) -> str | None:
        """The unit of the value at a key path of the ``[scenario]`` table (as in
        :meth:`with_values`) once resolved (SI, as in ``scenario.resolved.toml``): its
        schema's, "" for a plain number or a text, a vehicle type's for one of its
        parameters (``train.vehicles[0].config.params.NAME``); None where the path names
        no key, or a key only a plugin knows (a coupler model's parameter)."""
        found = param_at(SCENARIO_SCHEMA, path)
        if isinstance(found, Param):
            return found.unit or ""
        parts = path_parts(path)
        if not isinstance(found, FreeTable) or parts[-2:-1] != ["params"]:
            return None
        try:
            kind = lookup_path(self.config, ".".join(parts[:-2] + ["vehicle", "type"]))
            spec = self.registry.vehicle_types[kind].params[parts[-1]]
        except (KeyError, TypeError):
            return None
        return spec.unit or ""

    def resolved(self) -> dict[str, Any]:
        """The whole scenario with defaults filled in and units normalised (SI)."""
        return {"scenario": strip_private(thaw(self.config))}

    @functools.cached_property
    def resolved_toml(self) -> str:
        """:meth:`resolved` as TOML (formed once: every drive of the scenario writes it or
        hashes it for its provenance, and a sweep drives one scenario many times)."""
        return tomli_w.dumps(self.resolved())

    def write_resolved(self, path: str | Path) -> None:
        """Write :meth:`resolved` as TOML, which ``rrs drive`` runs the same way again."""
        write_atomically(path, self.resolved_toml)


def _check_names(values: list, allowed, limit: int | None, ctx: Context, what: str) -> None:
    for i, v in enumerate(values):
        if limit is not None:
            if not 0 <= v < limit:
                raise ctx.child(i).error(
                    f"found {v}, expected a {what} index from 0 to {limit - 1}")
        elif v not in allowed:
            raise ctx.child(i).error(f"found {v!r}, expected one of {', '.join(allowed)}")


def _signals_lacking(output: dict[str, Any], train: Train, brake_signals: tuple[str, ...],
                     ctx: Context) -> tuple[str, ...]:
    """A plugin's signal is recorded for the recorded vehicles that have it (NaN in the
    others' columns): one warning names those that lack it. A signal none of them has is a
    config error."""
    warnings = []
    chosen = output["vehicles"]
    for k, signal in enumerate(output["vehicle_signals"]):
        if signal in VEHICLE_SIGNALS or signal in brake_signals or not chosen:
            continue
        models = {i: train.batches[train.batch_of[i]].cls for i in chosen}
        lacking = [i for i, m in models.items()
                   if signal not in m.signals and signal not in m.states]
        if len(lacking) == len(chosen):
            offered = sorted({s for m in models.values() for s in (*m.signals, *m.states)})
            raise ctx.child("vehicle_signals").child(k).error(
                f"found {signal!r}, but no recorded vehicle has such a signal; expected one "
                f"of {', '.join((*VEHICLE_SIGNALS, *brake_signals, *offered))}")
        if lacking:
            types = sorted({models[i].type_name for i in lacking})
            warnings.append(
                f"output.vehicle_signals: {signal!r} is recorded for the vehicles that have "
                f"it; vehicle{'s' if len(lacking) > 1 else ''} "
                f"{', '.join(map(str, lacking))} ({', '.join(types)}) "
                f"{'have' if len(lacking) > 1 else 'has'} none: NaN in "
                f"{'their columns' if len(lacking) > 1 else 'its column'}")
    return tuple(warnings)


#: More than these over ``stop.max_time`` no drive finishes (days of wall-clock time at
#: the least, or a terabyte of CSV): rows of the time series, and steps (fixed steps, the
#: adaptive solver's largest steps, control steps).
MAX_ROWS = 1e9
MAX_STEPS = 1e10


#: The time series a drive keeps in memory (its result's ``series``, 8 bytes a value)
#: takes at most this: a drive asking for more would end in the system's out-of-memory
#: killer, hours in, with nothing written.
SERIES_BYTES = 4 * 2**30


def check_series_memory(scenario: Scenario, columns: int) -> None:
    """Refuse (naming ``output.sample_interval``) a drive whose time series of
    ``columns`` columns over ``stop.max_time`` would not fit in :data:`SERIES_BYTES`."""
    cfg = scenario.config
    t_max, interval = cfg["stop"]["max_time"], cfg["output"]["sample_interval"]
    size = t_max / interval * columns * 8
    if size > SERIES_BYTES:
        raise ConfigError(
            scenario.file, "scenario.output.sample_interval",
            f"found {interval:g} s, which over stop.max_time = {t_max:g} s makes "
            f"{t_max / interval:.3g} rows of {columns} columns, {size / 2**30:.3g} GiB of "
            f"time series held in memory; expected at least "
            f"{t_max * columns * 8 / SERIES_BYTES:.3g} s (at most "
            f"{SERIES_BYTES / 2**30:g} GiB), or a shorter stop.max_time or fewer "
            "recorded signals (or output.coupler_forces = false)")


def _check_counts(cfg: dict[str, Any], adaptive: bool, ctx: Context) -> None:
    """The rows and steps ``stop.max_time`` asks for, within :data:`MAX_ROWS` and
    :data:`MAX_STEPS` (each error names the key that sets the count)."""
    check_counts(cfg, [("output", "sample_interval", "rows of the time series", MAX_ROWS),
                       ("solver", "control_step", "control steps", MAX_STEPS),
                       ("solver", "max_step" if adaptive else "step", "steps", MAX_STEPS)],
                 ctx)


def check_counts(cfg: Mapping[str, Any], counts: list[tuple[str | None, str, str, float]],
                 ctx: Context) -> None:
    """The counts ``stop.max_time`` makes of intervals in ``cfg`` within their limits (a
    drive's and a yard's): ``counts`` lists (section or None, key, what is counted, the
    most allowed); an error names the key that sets the count."""
    t_max = cfg["stop"]["max_time"]
    for section, key, what, most in counts:
        interval = cfg[section][key] if section else cfg[key]
        if t_max / interval > most:
            where = ctx.child(section).child(key) if section else ctx.child(key)
            raise where.error(
                f"found {interval:g} s, which over stop.max_time = {t_max:g} s makes "
                f"{'at least ' if key == 'max_step' else ''}{t_max / interval:.3g} {what}; "
                f"expected at least {t_max / most:.3g} s (at most {most:.0e} {what}), or a "
                "shorter stop.max_time")


def scenario_from_table(data: dict[str, Any], ctx: Context,
                        registry: Registry | None = None,
                        plugin_dirs: list[str | Path] = (), *,
                        allow_plugin_dirs: bool = True) -> Scenario:
    """Check a ``[scenario]`` table and build its train and route.

    A table built in code is its caller's own, so its ``plugin_dirs`` may name any folder
    by default; :func:`load_scenario` (a file, perhaps someone else's) refuses folders
    outside the file's folder unless allowed (``allow_plugin_dirs``)."""
    cfg = validate(data, SCENARIO_SCHEMA, ctx)
    all_dirs = resolve_plugin_dirs(cfg, ctx, plugin_dirs, allow_outside=allow_plugin_dirs)
    if registry is None:
        registry = load_registry(all_dirs)
    solver = cfg["solver"]["method"]
    if solver not in registry.solvers:
        raise ctx.child("solver").child("method").error(
            f"found {solver!r}, expected a solver: one of {', '.join(sorted(registry.solvers))}")
    route = Route.from_config(cfg["route"])
    resolve_train(cfg["train"], registry)
    train = Train(cfg["train"], registry, cfg["environment"]["gravity"])

    start = cfg["start"]
    position = start["position"]
    if start["point"] is not None:
        position = route.position_of(start["point"], ctx.child("start").child("point"))
    stop = cfg["stop"]
    stop_position = stop["at_position"]
    if stop["at_point"] is not None:
        stop_position = route.position_of(stop["at_point"], ctx.child("stop").child("at_point"))

    for key, want in (("speeds", train.count), ("gaps", train.count - 1)):
        if start[key] is not None and len(start[key]) != want:
            raise ctx.child("start").child(key).error(
                f"found {len(start[key])} values, expected {want} (one per "
                f"{'vehicle' if key == 'speeds' else 'coupling'})")
    out = ctx.child("output")
    _check_names(cfg["output"]["vehicles"], None, train.count, out.child("vehicles"), "vehicle")
    _check_names(cfg["output"]["couplings"], None, train.count - 1, out.child("couplings"),
                 "coupling")
    plugin_signals = {s for b in train.batches for s in (*b.cls.signals, *b.cls.states)}
    brake_signals = BRAKE_SIGNALS if train.has_air_brake else ()
    _check_names(cfg["output"]["vehicle_signals"],
                 [*VEHICLE_SIGNALS, *brake_signals, *sorted(plugin_signals)],
                 None, out.child("vehicle_signals"), "signal")
    _check_names(cfg["output"]["coupling_signals"], COUPLING_SIGNALS, None,
                 out.child("coupling_signals"), "signal")
    warnings = _signals_lacking(cfg["output"], train, brake_signals, out)
    actions = check_actions(cfg["driver"], train, route, ctx.child("driver"))
    if cfg["dynamics"] == "rigid":  # one body cannot part or stand apart
        for k, a in enumerate(actions):
            if a.uncouple is not None:
                raise ctx.child("driver").child(k).child("uncouple").error(
                    f"found {a.uncouple}, expected no uncoupling in a rigid train "
                    "(dynamics = 'rigid'); use dynamics = 'multibody'")
        if not train.couplings.coupled.all():
            j = int(np.flatnonzero(~train.couplings.coupled)[0])
            raise ctx.child("dynamics").error(
                f"found 'rigid', but coupling {j} of the train is not coupled; expected "
                "'multibody' for a train whose vehicles stand apart")
    check_autodriver(cfg["autodriver"], train, route, ctx.child("autodriver"))
    trace = load_trace(cfg["trace"], train, ctx.child("trace"))
    if trace is not None:
        if cfg["autodriver"]["mode"] != "off":
            raise ctx.child("autodriver").child("mode").error(
                f"found {cfg['autodriver']['mode']!r} with a trace to drive to "
                "(trace.file), expected 'off': one driver at a time")
    _check_counts(cfg, registry.solvers[solver].adaptive, ctx)
    scenario = Scenario(freeze(cfg), ctx.file, route, tuple(actions), position, stop_position,
                        all_dirs, registry, warnings=warnings, trace=trace)
    return scenario


def load_scenario(path: str | Path, registry: Registry | None = None,
                  plugin_dirs: list[str | Path] = (), *,
                  allow_plugin_dirs: bool = False) -> Scenario:
    """Load and check a scenario file (``[scenario]`` table), its train, vehicles and route.

    The file's ``plugin_dirs`` must be folders inside its own folder's tree (a shared
    scenario must not run code from elsewhere on the reader's machine), checked before any
    plugin is imported; ``allow_plugin_dirs=True`` allows any folder (``rrs
    --allow-plugin-dirs``). ``plugin_dirs`` given here are the caller's own: any folder."""
    table, ctx = load_top_table(path, "scenario")
    return scenario_from_table(table, ctx, registry, plugin_dirs,
                               allow_plugin_dirs=allow_plugin_dirs)

