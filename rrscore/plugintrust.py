"""Checking a scenario or yard file without importing the plugins its ``plugin_dirs`` name.

Importing a plugin runs its code, and ``rrs validate`` is how one looks at a config
someone else wrote; so unless the user allows it (``--allow-plugin-dirs``,
``allow_plugin_dirs=True``), validation leaves the config's own plugin folders
unimported. Everything that needs none of their plugins is checked as a load checks it;
the vehicle types, coupler models and solver that would come from them are named as not
checked, never passed over in silence. Folders given by the caller (``--plugins DIR``)
and ``RRS_PLUGIN_PATH`` are the user's own choice and are imported.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .model.config import ALLOW_PLUGIN_DIRS, load_top_table, resolve_plugin_dirs, validate
from .model.track import Route
from .model.train import resolve_train
from .run.plugins import load_registry
from .run.scenario import SCENARIO_SCHEMA, Scenario, scenario_from_table
from .yard.eventscenario import yard_from_scenario
from .yard.network import Network
from .yard.yard import YARD_SCHEMA, YardScenario, yard_from_table


@dataclass(frozen=True)
class Check:
    """What checking one config file found: a one-line ``summary`` of it, and what could
    not be checked because its plugins were not imported ("vehicle type 'shunter'")."""

    summary: str
    unchecked: tuple[str, ...] = ()

    def text(self) -> str:
        """The summary, followed by what was not checked and how to check it, if any."""
        if not self.unchecked:
            return self.summary
        return (f"{self.summary}; not checked: {', '.join(self.unchecked)} (from its "
                "plugin_dirs, whose plugins were not imported: check them with "
                f"{ALLOW_PLUGIN_DIRS})")

    def line(self) -> str:
        """The line ``rrs validate`` prints after the file's name: "ok, ..." only for a
        file checked whole, "ok as far as checked, ..." for one checked in part."""
        return f"{'ok as far as checked' if self.unchecked else 'ok'}, {self.text()}"


def scenario_summary(scenario: Scenario) -> str:
    """One line on a checked scenario."""
    train = scenario.train
    return (f"scenario {scenario.config['name']!r}: {train.count} vehicles, "
            f"{train.total_mass / 1000:.0f} t, route {scenario.route.length:.0f} m")


def yard_summary(yard: YardScenario) -> str:
    """One line on a checked yard scenario."""
    return (f"yard scenario {yard.config['name']!r}: {yard.cars.length.size} cars in "
            f"{len(yard.cut_names)} cuts on network {yard.network.name!r}")


def check_without_own_plugins(path: str | Path, kind: str,
                              plugin_dirs: Iterable[str | Path] = ()) -> Check | None:
    """Check a scenario (``kind`` "scenario") or yard ("yard") file without importing the
    plugins of its own ``plugin_dirs`` (``plugin_dirs`` here, the caller's, are
    imported). None for a file that names no plugin folder: load it as usual. A folder
    outside the file's tree is refused as a load refuses it.

    When no vehicle type, coupler model or solver of the file needs its folders, the file
    is checked whole (its plugins are not needed); otherwise the checks that need the
    missing classes (their ``[params]``, driver actions, recorded signals, where the cuts
    stand) are left undone and named in :attr:`Check.unchecked`."""
    table, ctx = load_top_table(path, kind)
    cfg = validate(copy.deepcopy(table), SCENARIO_SCHEMA if kind == "scenario"
                   else YARD_SCHEMA, ctx)
    resolve_plugin_dirs(cfg, ctx)  # a folder outside the file's tree: refused, unimported
    if not cfg["plugin_dirs"]:
        return None
    registry = load_registry(plugin_dirs)
    unchecked: set[str] = set()
    if kind == "scenario":
        if cfg["solver"]["method"] not in registry.solvers:
            unchecked.add(f"solver {cfg['solver']['method']!r}")
        resolve_train(cfg["train"], registry, unchecked)
    else:
        for cut in cfg["cuts"]:
            resolve_train(cut["train"], registry, unchecked)
    table = {**table, "plugin_dirs": []}  # the whole check, with no folder of its own
    if not unchecked and kind == "scenario":
        scenario = scenario_from_table(table, ctx, None, list(plugin_dirs))
        if scenario.config["dynamics"] == "events":  # as rrscore.api.load_scenario checks
            yard_from_scenario(scenario)
        return Check(scenario_summary(scenario))
    if not unchecked:
        return Check(yard_summary(yard_from_table(table, ctx, list(plugin_dirs))))
    if kind == "yard":
        network = Network(cfg["network"])
        cars = sum(e["count"] for cut in cfg["cuts"] for e in cut["train"]["vehicles"])
        return Check(f"yard scenario {cfg['name']!r}: {cars} cars in {len(cfg['cuts'])} "
                     f"cuts on network {network.name!r}", tuple(sorted(unchecked)))
    route = Route.from_config(cfg["route"])
    for section, key in (("start", "point"), ("stop", "at_point")):
        if cfg[section][key] is not None:
            route.position_of(cfg[section][key], ctx.child(section).child(key))
    count = sum(e["count"] for e in cfg["train"]["vehicles"])
    return Check(f"scenario {cfg['name']!r}: {count} vehicles, route {route.length:.0f} m",
                 tuple(sorted(unchecked)))


__all__ = ["Check", "check_without_own_plugins", "scenario_summary", "yard_summary"]
