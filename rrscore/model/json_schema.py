"""JSON Schema (draft 2020-12) documents made from the config declarations.

The same :class:`~rrscore.model.config.Param`, ``Section``, ``TableList``, ``FreeTable``
and ``Include`` declarations that :func:`~rrscore.model.config.validate` checks a file
against are turned into JSON Schema here, so an editor (taplo, Even Better TOML) checks
and completes the keys the validator accepts, and the two cannot drift.

What JSON Schema cannot say is left to the validator: a quantity is "a number in its SI
unit or a string with a unit" (the unit is in the description; the string is not parsed),
and a number's bounds apply to plain numbers only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from .config import REQUIRED, FreeTable, Include, Param, Section, TableList

DRAFT = "https://json-schema.org/draft/2020-12/schema"

_KINDS = {int: "integer", str: "string", bool: "boolean", float: "number"}


def _bounds(param: Param) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if param.min is not None and math.isfinite(param.min):
        out["exclusiveMinimum" if param.exclusive_min else "minimum"] = param.min
    if param.max is not None and math.isfinite(param.max):
        out["maximum"] = param.max
    return out


def _quantity(param: Param) -> dict[str, Any]:
    return {"type": ["number", "string"], **_bounds(param)}


def param_schema(param: Param) -> dict[str, Any]:
    """The JSON Schema of one leaf value (what :func:`~rrscore.model.config.check_value`
    accepts)."""
    if param.kind is list and param.unit is not None:
        out: dict[str, Any] = {"type": "array", "items": _quantity(param)}
    elif param.unit is not None:
        out = _quantity(param)
    elif param.kind is list:
        if param.item is list:  # points [[x, y], ...]
            items: dict[str, Any] = {"type": "array", "items": {"type": "number"}}
        else:
            items = {"type": _KINDS[param.item or str]}
        out = {"type": "array", "items": items}
    else:
        out = {"type": _KINDS[param.kind], **_bounds(param)}
    if param.choices is not None:
        out["enum"] = list(param.choices)
    doc = param.doc
    if param.unit is not None:
        doc = f"{doc} [{param.unit}: {param.describe()}]".strip()
    if doc:
        out["description"] = doc
    default = param.default
    if isinstance(default, tuple):
        default = list(default)
    if default is not REQUIRED and default is not None and _is_json(default):
        out["default"] = default
    return out


def _is_json(value: Any) -> bool:
    """Whether ``value`` is strict JSON (no infinity or NaN, which TOML has and JSON not)."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_is_json(v) for v in value)
    return isinstance(value, str | int | bool | dict)


def table_schema(schema: Mapping[str, Any], doc: str = "",
                 defs: dict[str, Any] | None = None,
                 rules: Mapping[int, list[dict[str, Any]]] | None = None) -> dict[str, Any]:
    """The JSON Schema of a table checked by :func:`~rrscore.model.config.validate`:
    its keys, which of them are required, and no others (the validator refuses unknown
    keys). ``defs`` collects the tables an ``Include`` names (as ``$defs``); ``rules``
    adds an ``allOf`` to the table made from a declaration (keyed by the declaration's
    ``id``): the rules of :func:`params_rules` for a plugin's ``[params]``."""
    defs = {} if defs is None else defs
    rules = rules or {}
    props: dict[str, Any] = {}
    required = []
    for key, spec in schema.items():
        if isinstance(spec, Param):
            props[key] = param_schema(spec)
            if spec.default is REQUIRED:
                required.append(key)
        elif isinstance(spec, Section):
            props[key] = table_schema(spec.schema, spec.doc, defs, rules)
            if spec.required:
                required.append(key)
        elif isinstance(spec, TableList):
            props[key] = {"type": "array", "items": table_schema(spec.schema, "", defs, rules)}
            if spec.min_items:
                props[key]["minItems"] = spec.min_items
            if spec.doc:
                props[key]["description"] = spec.doc
        elif isinstance(spec, Include):
            name = spec.what
            if name not in defs:
                defs[name] = {}  # (a placeholder: a table that includes itself stops here)
                defs[name] = table_schema(spec.schema, "", defs, rules)
            props[key] = {"oneOf": [{"type": "string", "description": f"path to a {name} "
                                     "file, relative to this file"},
                                    {"$ref": f"#/$defs/{name}"}]}
            if spec.doc:
                props[key]["description"] = spec.doc
            required.append(key)
        elif isinstance(spec, FreeTable):
            props[key] = {"type": "object"}
            if spec.doc:
                props[key]["description"] = spec.doc
        else:  # pragma: no cover - schema author error
            raise TypeError(f"bad schema entry for {key!r}: {spec!r}")
    out: dict[str, Any] = {"type": "object", "properties": props,
                           "additionalProperties": False}
    if required:
        out["required"] = required
    if id(schema) in rules:
        out["allOf"] = rules[id(schema)]
    if doc:
        out["description"] = doc
    return out


def document(schema: Mapping[str, Any], title: str, file_key: str | None = None,
             rules: Mapping[int, list[dict[str, Any]]] | None = None) -> dict[str, Any]:
    """A whole JSON Schema document for a config file checked against ``schema``, held
    under the top-level table ``file_key`` (``[scenario]``) or at the top (a vehicle)."""
    defs: dict[str, Any] = {}
    body = table_schema(schema, "", defs, rules)
    if file_key is not None:
        body = {"type": "object", "properties": {file_key: body}, "required": [file_key],
                "additionalProperties": False}
    out = {"$schema": DRAFT, "title": title, **body}
    if defs:
        out["$defs"] = defs
    return out


def params_rules(key: str, types: Mapping[str, Mapping[str, Any]],
                 default: str | None = None) -> list[dict[str, Any]]:
    """``if KEY is NAME then [params] is NAME's params`` for each plugin type (``key``
    ``vehicle.type`` of a vehicle file, ``model`` of a coupling), so a plugin's
    parameters are checked too; ``default`` is the type a table without ``key`` has."""
    out = []
    for name, params in sorted(types.items()):
        then = table_schema(params, f"parameters of {name}")
        rule: dict[str, Any] = {"const": name}
        for part in reversed(key.split(".")):  # "vehicle.type": the type inside [vehicle]
            rule = {"properties": {part: rule}}
            if name != default:
                rule["required"] = [part]
        need = {"required": ["params"]} if then.get("required") else {}
        out.append({"if": rule, "then": {"properties": {"params": then}, **need}})
    return out
