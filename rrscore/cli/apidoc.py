"""The plugin API reference (``docs/plugin-api.md``), generated from the docstrings.

``python -m rrscore.apidoc --write`` regenerates the file; the tests check that it is up
to date and that :func:`undocumented` finds nothing: every hook documents each of its
arguments, and every public method and attribute of the plugin base classes is
documented (a method by its docstring, an attribute by name in its class's docstring).
"""

from __future__ import annotations

import argparse
import inspect
import re
from pathlib import Path
from types import ModuleType, SimpleNamespace

import numpy as np

from ..model import hookspecs

from ..run import run
from ..model.config import Param
from ..model.couplers import CouplerModel
from ..model.events import KINDS, Event
from ..engine.tableau import Solver
from ..model.state import StateSpec
from ..model.vehicle import VehicleModel

DOC_FILE = Path(__file__).resolve().parents[1] / "docs" / "plugin-api.md"

#: The base classes plugins subclass and the records they receive, in reference order.
CLASSES: tuple[type, ...] = (VehicleModel, CouplerModel, Solver, Param, StateSpec, Event)
#: Classes whose every public attribute and method :func:`undocumented` checks.
PLUGIN_BASES: tuple[type, ...] = (VehicleModel, CouplerModel)


def hooks(module: ModuleType = hookspecs) -> list:
    """The hook specifications declared in ``module``, in source order."""
    marker = f"{hookspecs.PROJECT}_spec"
    found = [f for f in vars(module).values() if inspect.isfunction(f) and hasattr(f, marker)]
    return sorted(found, key=lambda f: f.__code__.co_firstlineno)


def sample_instance(cls: type):
    """An instance of a plugin base class (or a subclass) for two vehicles or couplings, to
    find the attributes its constructor sets."""
    if issubclass(cls, VehicleModel):
        vehicle = {"name": "", "num_axis": 2, "wheel_diameter": 1.0, "empty_mass": 1.0,
                   "payload_mass": 0.0}
        return cls([vehicle, vehicle], SimpleNamespace(), np.arange(2), np.zeros(2))
    return cls([{}, {}])


def public_members(cls: type) -> tuple[list[str], list[str]]:
    """``(attributes, methods)``: the public names of ``cls`` (its own and inherited from
    its plugin base), attributes including those the constructor sets on an instance."""
    attrs, methods = set(), set()
    for klass in cls.__mro__:
        if klass is object:
            continue
        for name, value in vars(klass).items():
            if name.startswith("_"):
                continue
            if inspect.isfunction(value) or isinstance(value, property | staticmethod
                                                       | classmethod):
                methods.add(name)
            else:
                attrs.add(name)
    if cls in PLUGIN_BASES or issubclass(cls, PLUGIN_BASES):
        attrs |= {k for k in vars(sample_instance(cls)) if not k.startswith("_")}
    return sorted(attrs - methods), sorted(methods)


def undocumented(hook_module: ModuleType = hookspecs,
                 classes: tuple[type, ...] = PLUGIN_BASES) -> list[str]:
    """Every hook without a docstring or with an argument its docstring does not name, and
    every public attribute or method of ``classes`` that is not documented."""
    problems = []
    for f in hooks(hook_module):
        doc = inspect.getdoc(f) or ""
        if not doc:
            problems.append(f"hook {f.__name__}: no docstring")
        for arg in inspect.signature(f).parameters:
            if not re.search(rf"\b{arg}\b", doc):
                problems.append(f"hook {f.__name__}: argument {arg!r} not documented")
    for cls in classes:
        doc = inspect.getdoc(cls) or ""
        attrs, methods = public_members(cls)
        for name in attrs:
            if f"``{name}``" not in doc:
                problems.append(f"{cls.__name__}.{name}: attribute not named in the class "
                                "docstring")
        for name in methods:
            if not inspect.getdoc(getattr(cls, name)):
                problems.append(f"{cls.__name__}.{name}: method without a docstring")
    return problems


def _signature(f) -> str:
    try:
        return str(inspect.signature(f, eval_str=True))
    except (NameError, TypeError, ValueError):  # an annotation that names a type-only import
        return str(inspect.signature(f)).replace("'", "")


def _control_step() -> str:
    doc = inspect.getdoc(run) or ""
    return next(p for p in doc.split("\n\n") if p.startswith("Each control step"))


def generate() -> str:
    """The reference as Markdown."""
    out = ["# rrscore plugin API reference", "",
           "Generated from the docstrings by `python -m rrscore.apidoc --write`; do not edit.",
           "", "## Hooks", "", inspect.getdoc(hookspecs) or "", ""]
    for f in hooks():
        out += [f"### `{f.__name__}{_signature(f)}`", "", inspect.getdoc(f) or "", ""]
    out += ["## A control step", "", _control_step(), ""]
    out += ["## Classes", ""]
    for cls in CLASSES:
        out += [f"### `{cls.__module__}.{cls.__name__}`", "",
                inspect.getdoc(cls) or "", ""]
        _, methods = public_members(cls)
        for name in methods:
            member = getattr(cls, name)
            sig = "" if isinstance(inspect.getattr_static(cls, name), property) else \
                _signature(member)
            out += [f"- `{name}{sig}`: " + (inspect.getdoc(member) or "").replace("\n", " ")]
        out.append("")
    out += ["## Event kinds", "", "| kind | meaning |", "|---|---|"]
    out += [f"| `{k}` | {v} |" for k, v in KINDS.items()]
    return "\n".join(out).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    """Print the reference, or write it to ``docs/plugin-api.md`` with ``--write``."""
    parser = argparse.ArgumentParser(prog="python -m rrscore.apidoc")
    parser.add_argument("--write", action="store_true", help=f"write {DOC_FILE}")
    args = parser.parse_args(argv)
    text = generate()
    if args.write:
        DOC_FILE.parent.mkdir(exist_ok=True)
        DOC_FILE.write_text(text, encoding="utf-8")
    else:
        print(text, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
