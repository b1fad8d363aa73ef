"""``rrs schema KIND``: the JSON Schema of a config file kind, for editors.

Made from the declarations the validator checks files against (see
:mod:`rrscore.model.json_schema`), with each loaded plugin's ``[params]``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..model.couplers import COUPLING_SCHEMA
from ..model.errors import OutputError
from ..model.json_schema import document, params_rules
from ..model.track import ROUTE_SCHEMA
from ..model.train import TRAIN_SCHEMA
from ..model.vehicle import VEHICLE_SCHEMA
from ..run.files import write_atomically
from ..run.plugins import load_registry
from ..run.scenario import SCENARIO_SCHEMA
from ..yard.network import NETWORK_SCHEMA
from ..yard.yard import YARD_SCHEMA

#: Each config kind: its declaration and the top-level table its files hold it under
#: (a vehicle file has [vehicle] and [params] at the top).
KINDS: dict[str, tuple[Any, str | None]] = {
    "vehicle": (VEHICLE_SCHEMA, None),
    "train": (TRAIN_SCHEMA, "train"),
    "route": (ROUTE_SCHEMA, "route"),
    "scenario": (SCENARIO_SCHEMA, "scenario"),
    "network": (NETWORK_SCHEMA, "network"),
    "yard": (YARD_SCHEMA, "yard"),
}


def config_schema(kind: str, plugin_dirs: Iterable[str | Path] = ()) -> dict[str, Any]:
    """The JSON Schema document of config files of ``kind`` (one of :data:`KINDS`), with
    the ``[params]`` of every vehicle type and coupler model of the registry."""
    schema, file_key = KINDS[kind]
    reg = load_registry(plugin_dirs)
    rules = {
        id(VEHICLE_SCHEMA): params_rules(
            "vehicle.type", {n: getattr(c, "params", {}) or {} for n, c in
                             reg.vehicle_types.items()}),
        id(COUPLING_SCHEMA): params_rules(
            "model", {n: getattr(c, "params", {}) or {} for n, c in reg.coupler_models.items()},
            default=COUPLING_SCHEMA["model"].default),
    }
    return document(schema, f"rrscore {kind} config", file_key, rules)


def run(kind: str, out: str | None, plugin_dirs: Iterable[str | Path] = ()) -> int:
    """Print the schema of ``kind``, or write it to the file ``out``."""
    text = json.dumps(config_schema(kind, plugin_dirs), indent=2, allow_nan=False) + "\n"
    if out is None:
        print(text, end="")
        return 0
    try:
        write_atomically(Path(out), text)
    except OSError as exc:
        raise OutputError(f"cannot write {out!r}: {exc.strerror or exc}") from None
    print(f"wrote {out}")
    return 0
