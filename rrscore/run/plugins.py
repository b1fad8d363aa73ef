"""Finding plugins and collecting what they provide into a :class:`Registry`.

Four sources, one mechanism (pluggy):

1. rrscore's own plugins, registered by import (:data:`DEFAULT_PLUGINS`), so
   they are there however rrscore was installed;
2. the ``rrscore`` entry-point group: pip-installed packages;
3. plugin directories named in a scenario (``plugin_dirs``), on the command
   line (``--plugins DIR``) or in the ``RRS_PLUGIN_PATH`` environment variable:
   every ``*.py`` file and every package (folder with ``__init__.py``) in them;
4. objects registered from Python (:func:`load_registry` ``extra=``).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from types import ModuleType
from typing import Any

import pluggy

from ..engine.tableau import check_tableau
from ..model import hookspecs
from ..model.config import Param
from ..model.couplers import check_coupler_type
from ..model.errors import PLUGIN_FAILURES, PluginError
from ..model.units import dimension_name
from ..model.vehicle import VehicleModel, check_vehicle_type

ENTRY_POINT_GROUP = "rrscore"

#: rrscore's own plugins, registered by import before any other (as pytest and llm do).
DEFAULT_PLUGINS = (
    "rrscore.vehicles.simple_loco",
    "rrscore.vehicles.freight_car",
    "rrscore.vehicles.level_loco",
    "rrscore.vehicles.table_loco",
    "rrscore.vehicles.powertrain",
    "rrscore.vehicles.powertrain_outputs",
    "rrscore.plugins.couplers",
    "rrscore.engine.tableau",
    "rrscore.run.outputs.timeseries",
    "rrscore.run.outputs.eventlog",
    "rrscore.run.outputs.plots",
    "rrscore.run.outputs.summary",
)
PATH_ENV = "RRS_PLUGIN_PATH"


@dataclass
class PluginInfo:
    """One loaded plugin: its name, where it came from and what it provides."""

    name: str
    source: str
    provides: dict[str, list[str]] = field(default_factory=dict)
    #: The version of the installed package it comes from (an entry point's), if any.
    version: str | None = None


@dataclass
class Registry:
    """Components by kind and name, collected once from all plugins."""

    vehicle_types: dict[str, type] = field(default_factory=dict)
    coupler_models: dict[str, type] = field(default_factory=dict)
    solvers: dict[str, Any] = field(default_factory=dict)
    plugins: list[PluginInfo] = field(default_factory=list)
    origin: dict[tuple[str, str], str] = field(default_factory=dict)
    #: The plugin manager, for the drive's lifecycle hooks (``hook.rrs_sample(...)``).
    manager: pluggy.PluginManager | None = None

    @property
    def hook(self):
        """The lifecycle hooks to call (``registry.hook.rrs_drive_start(drive=...)``)."""
        return self.manager.hook

    def get(self, kind: str, name: str) -> type:
        """The component ``name`` of ``kind`` ('vehicle_types', ...); KeyError if absent."""
        return getattr(self, kind)[name]


# kind attribute, hook name, name attribute on the class, checker
_KINDS = (
    ("vehicle_types", "rrs_vehicle_types", "type_name", check_vehicle_type),
    ("coupler_models", "rrs_coupler_models", "type_name", check_coupler_type),
    ("solvers", "rrs_solvers", "name", check_tableau),
)


#: Terminal keys ``rrs cab`` keeps for itself, and what they do.
RESERVED_KEYS = {"q": "quit"}


def class_problems(cls: type) -> list[str]:
    """What is wrong with a vehicle or coupler class's declarations (empty if nothing)."""
    problems = []
    for name, spec in (getattr(cls, "params", {}) or {}).items():
        if not isinstance(spec, Param):
            problems.append(f"parameter {name!r} is a {type(spec).__name__}, "
                            "expected an rrscore.Param")
            continue
        if spec.unit is not None:
            try:
                dimension_name(spec.unit)
            except ValueError:
                problems.append(f"parameter {name!r} has an unknown unit {spec.unit!r} "
                                "(expected an SI unit expression such as 'N', 'kg*m^2', 'N/m')")
    if isinstance(cls, type) and issubclass(cls, VehicleModel):
        chars: dict[str, str] = {}
        for key, char in cls.key_bindings.items():
            if key not in cls.keys:
                problems.append(f"key_bindings binds {key!r}, which is not one of its keys "
                                f"({', '.join(cls.keys) or 'none'})")
            if not (isinstance(char, str) and len(char) == 1 and char.isprintable()
                    and char != " "):
                problems.append(f"key_bindings binds {key!r} to {char!r}, expected one "
                                "printable character")
            elif char in RESERVED_KEYS:
                problems.append(f"key_bindings binds {key!r} to {char!r}, which rrs cab keeps "
                                f"to {RESERVED_KEYS[char]}")
            elif char in chars:
                problems.append(f"key_bindings binds both {chars[char]!r} and {key!r} to "
                                f"{char!r}")
            chars.setdefault(char, key)
        for key in cls.notch_keys:
            if key not in cls.keys:
                problems.append(f"notch_keys names {key!r}, which is not one of its keys "
                                f"({', '.join(cls.keys) or 'none'})")
    return problems


def _import_path(path: Path) -> ModuleType:
    """Import a loose .py file or a package folder as a uniquely named module: the same
    name in every process (numba's on-disk cache of its compiled functions finds them by
    it)."""
    target = path / "__init__.py" if path.is_dir() else path
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]
    modname = f"rrscore_dirplugin_{digest}_{path.stem}"
    spec = importlib.util.spec_from_file_location(
        modname, target, submodule_search_locations=[str(path)] if path.is_dir() else None
    )
    if spec is None or spec.loader is None:
        raise PluginError(f"plugin {path}: cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[modname] = module
    try:
        spec.loader.exec_module(module)
    except PLUGIN_FAILURES as exc:
        sys.modules.pop(modname, None)
        raise PluginError(f"plugin {path}: import failed: {type(exc).__name__}: {exc}") from exc
    return module


def plugin_dir_modules(directory: Path) -> list[Path]:
    """The plugin files and packages in a plugin directory, in name order."""
    if not directory.is_dir():
        raise PluginError(f"plugin directory {directory}: not found")
    found = []
    for p in sorted(directory.iterdir()):
        if p.name.startswith(("_", ".")):
            continue
        if (p.is_file() and p.suffix == ".py") or (p.is_dir() and (p / "__init__.py").is_file()):
            found.append(p)
    return found


def load_registry(plugin_dirs: Iterable[str | Path] = (), extra: Iterable[Any] = (),
                  use_entry_points: bool = True) -> Registry:
    """Find all plugins, call their hooks once and return the components they provide."""
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    sources: dict[str, str] = {}
    versions: dict[str, str] = {}  # an entry point's package version, by plugin name

    for modname in DEFAULT_PLUGINS:
        module = importlib.import_module(modname)
        name = modname.removeprefix("rrscore.")
        pm.register(module, name=name)
        sources[name] = f"built in: {modname}"

    if use_entry_points:
        for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
            try:
                module = ep.load()
            except PLUGIN_FAILURES as exc:
                raise PluginError(
                    f"plugin {ep.name!r} (entry point {ep.value}): import failed: "
                    f"{type(exc).__name__}: {exc}"
                ) from exc
            if pm.is_registered(module) or pm.get_plugin(ep.name) is not None:
                continue
            pm.register(module, name=ep.name)
            dist = getattr(ep, "dist", None)
            sources[ep.name] = f"entry point {ep.value}" + (
                f" ({dist.name} {dist.version})" if dist is not None else ""
            )
            if dist is not None:
                versions[ep.name] = dist.version

    dirs = [Path(d) for d in plugin_dirs]
    dirs += [Path(d) for d in os.environ.get(PATH_ENV, "").split(os.pathsep) if d]
    seen: set[Path] = set()  # the same directory may be named twice, spelled differently
    for directory in dirs:
        for path in plugin_dir_modules(directory):
            name = f"{path.stem}@{directory}"
            if path.resolve() in seen or pm.get_plugin(name) is not None:
                continue
            seen.add(path.resolve())
            pm.register(_import_path(path), name=name)
            sources[name] = str(path)

    for obj in extra:
        name = getattr(obj, "__name__", None) or repr(obj)
        pm.register(obj, name=name)
        sources[name] = "registered from Python"

    registry = Registry()
    infos = {name: PluginInfo(name, sources.get(name, "?"), version=versions.get(name))
             for name, _ in pm.list_name_plugin()}
    for kind, hook_name, attr, check in _KINDS:
        hook = getattr(pm.hook, hook_name)
        for impl in hook.get_hookimpls():
            plugin_name = impl.plugin_name
            try:
                provided = impl.function() or []
            except PLUGIN_FAILURES as exc:
                raise PluginError(
                    f"plugin {plugin_name!r} ({sources.get(plugin_name, '?')}): hook {hook_name} "
                    f"raised {type(exc).__name__}: {exc}"
                ) from exc
            for cls in provided:
                try:
                    check(cls)
                except TypeError as exc:
                    raise PluginError(f"plugin {plugin_name!r}: {hook_name}: {exc}") from None
                problems = class_problems(cls)
                if problems:
                    raise PluginError(f"plugin {plugin_name!r}: {hook_name}: "
                                      f"{getattr(cls, attr)}: " + "; ".join(problems))
                cname = getattr(cls, attr)
                table = getattr(registry, kind)
                if cname in table and table[cname] is not cls:
                    other = registry.origin[(kind, cname)]
                    raise PluginError(
                        f"plugins {other!r} and {plugin_name!r} both provide {kind[:-1]} {cname!r}"
                    )
                table[cname] = cls
                registry.origin[(kind, cname)] = plugin_name
                infos[plugin_name].provides.setdefault(kind, []).append(cname)
    for name, plugin in pm.list_name_plugin():
        for hook_name in _LIFECYCLE:
            if hasattr(plugin, hook_name):
                infos[name].provides.setdefault("hooks", []).append(hook_name)
    registry.plugins = sorted(infos.values(), key=lambda i: i.name)
    registry.manager = pm
    return registry


_LIFECYCLE = ("rrs_drive_start", "rrs_sample", "rrs_event", "rrs_drive_end")
