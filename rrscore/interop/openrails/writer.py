"""The rrscore configs an import writes: TOML text, every value SI, each with a comment
naming the Open Rails token (and line) it came from, and the tokens not mapped listed at
the top."""

from __future__ import annotations

import textwrap
from typing import Any

import tomli_w

from .mapping import ImportedVehicle

_VEHICLE_KEYS = ("type", "name", "empty_mass", "length", "num_axis", "wheel_diameter",
                 "wheelset_inertia")


def toml_value(value: Any) -> str:
    """``value`` written as a TOML value on one line: a float (to 12 significant digits,
    so that a converted unit shows no rounding noise), an int, a string, a list, an inline
    table."""
    if isinstance(value, float):
        return repr(float(f"{value:.12g}"))
    if isinstance(value, bool | int | str):
        return tomli_w.dumps({"v": value}).split("=", 1)[1].strip()
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"cannot write {value!r} as TOML")


def _comment_block(text: str) -> list[str]:
    return ["# " + line for line in textwrap.wrap(text, 86, break_on_hyphens=False)]


def header(source: str, unmapped: list[str], notes: list[str]) -> list[str]:
    """The comment lines at the top of a written file: where it came from, the tokens not
    mapped, and what the import assumed."""
    lines = [f"# Imported from {source} by `rrs import openrails` (Open Rails / MSTS). Values "
             "are SI;", "# the comment after each names the token it came from."]
    lines += _comment_block("Tokens not mapped: " + (", ".join(unmapped) if unmapped else
                                                     "none") + ".")
    for note in notes:
        lines += _comment_block("Note: " + note + ".")
    return lines


def vehicle_toml(v: ImportedVehicle) -> str:
    """The vehicle config of ``v``, as text."""
    lines = header(v.path.name, v.unmapped, v.notes)
    if v.coupling is not None:
        lines += _comment_block(f"Its coupler ({v.sources['coupling']}), as a train's "
                                "[train.coupling] or a vehicle entry's coupling: "
                                f"{toml_value(v.coupling)}")
    src = v.sources

    def line(key: str, value: Any, path: str) -> str:
        text = f"{key} = {toml_value(value)}"
        comment = f"  # {src[path]}" if path in src else ""
        if isinstance(value, list) and len(text) > 88:  # a long list: a line per 8 values
            rows = [", ".join(toml_value(x) for x in value[k:k + 8])
                    for k in range(0, len(value), 8)]
            return f"{key} = [{comment}\n    " + ",\n    ".join(rows) + ",\n]"
        return text + comment

    lines += ["", "[vehicle]"]
    lines += [line(k, v.vehicle[k], f"vehicle.{k}") for k in _VEHICLE_KEYS if k in v.vehicle]
    lines += ["", "[vehicle.resistance]"]
    lines += [line(k, value, f"vehicle.resistance.{k}")
              for k, value in v.vehicle["resistance"].items()]
    lines += ["", "[params]"]
    lines += [line(k, value, f"params.{k}") for k, value in v.params.items()]
    return "\n".join(lines) + "\n"


def train_toml(name: str, source: str, entries: list[dict[str, Any]], unmapped: list[str],
               notes: list[str]) -> str:
    """The train config of a consist, as text: ``entries`` are its ``[[train.vehicles]]``
    tables."""
    lines = header(source, unmapped, notes)
    lines += ["", "[train]", f"name = {toml_value(name)}"]
    for entry in entries:
        lines += ["", "[[train.vehicles]]"]
        lines += [f"{k} = {toml_value(v)}" for k, v in entry.items()]
    return "\n".join(lines) + "\n"
