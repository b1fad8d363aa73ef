"""The plugin API reference (``docs/plugin-api.md``), generated from the docstrings.

``python -m rrscore.cli.apidoc --write`` regenerates the file; the tests check that it is
up to date and that :func:`undocumented` finds nothing: every hook documents each of its
arguments, and every public method and attribute of the plugin base classes is
documented (a method by its docstring, an attribute by name in its class's docstring,
as ``name`` or, for a plugin's function, by its signature ``name(...)``).
"""

from __future__ import annotations

import argparse
import inspect
import re
from pathlib import Path
from types import ModuleType

from ..engine.tableau import Tableau
from ..jit import kernel, law
from ..model import hookspecs
from ..model.config import Param
from ..model.couplers import CouplerModel
from ..model.events import KINDS, Event
from ..model.state import StateSpec
from ..model.vehicle import Control, VehicleModel
from ..run import run

DOC_FILE = Path(__file__).resolve().parents[2] / "docs" / "plugin-api.md"
#: How to regenerate the reference.
COMMAND = "python -m rrscore.cli.apidoc --write"

#: The base classes plugins subclass and the records they receive or give, in reference
#: order.
CLASSES: tuple[type, ...] = (VehicleModel, Control, CouplerModel, Tableau, Param, StateSpec,
                             Event)
#: The decorators that compile a plugin's laws (``rrscore.law``, ``rrscore.kernel``).
FUNCTIONS: tuple = (law, kernel)
#: Classes whose every public attribute and method :func:`undocumented` checks.
PLUGIN_BASES: tuple[type, ...] = (VehicleModel, CouplerModel)


def hooks(module: ModuleType = hookspecs) -> list:
    """The hook specifications declared in ``module``, in source order."""
    marker = f"{hookspecs.PROJECT}_spec"
    found = [f for f in vars(module).values() if inspect.isfunction(f) and hasattr(f, marker)]
    return sorted(found, key=lambda f: f.__code__.co_firstlineno)


def sample_instance(cls: type):
    """An instance of a coupler model class for two couplings (its parameters left
    unset), to find the attributes its constructor sets; None for a vehicle type (a
    declaration, never instantiated) or a model whose constructor needs values."""
    if not issubclass(cls, CouplerModel):
        return None
    try:
        return cls([{k: None for k in cls.params}] * 2)
    except Exception:  # a model whose setup refuses unset parameters
        return None


def public_members(cls: type) -> tuple[list[str], list[str]]:
    """``(attributes, methods)``: the public names of ``cls`` (its own and inherited from
    its plugin base), attributes including those the constructor sets on an instance (of
    a coupler model). A plugin's functions declared on a vehicle type (``step``, ...;
    ``None`` on the base class) are attributes: the plugin sets them."""
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
        instance = sample_instance(cls)
        if instance is not None:
            attrs |= {k for k in vars(instance) if not k.startswith("_")}
    if issubclass(cls, VehicleModel):  # the plugin's functions, given as staticmethods
        for name in ("step", "rates", "on_input", "initial"):
            if name in methods:
                methods.discard(name)
                attrs.add(name)
    return sorted(attrs - methods), sorted(methods)


def _named(name: str, doc: str) -> bool:
    """Whether ``doc`` names ``name``: as ``name``, or with its signature, ``name(...)``
    inline or on a line of its own (a literal block)."""
    return (f"``{name}``" in doc or f"``{name}(" in doc
            or re.search(rf"^\s+{re.escape(name)}\(", doc, re.M) is not None)


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
            if not _named(name, doc):
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


def control_step() -> str:
    """What a control step does, from the run's module docstring (the sentences from
    "Each control step" to the end of their paragraph)."""
    doc = inspect.getdoc(run) or ""
    paragraph = next(p for p in doc.split("\n\n") if "Each control step" in p)
    return " ".join(paragraph[paragraph.index("Each control step"):].split())


def generate() -> str:
    """The reference as Markdown."""
    out = ["# rrscore plugin API reference", "",
           f"Generated from the docstrings by `{COMMAND}`; do not edit.",
           "", "## Hooks", "", inspect.getdoc(hookspecs) or "", ""]
    for f in hooks():
        out += [f"### `{f.__name__}{_signature(f)}`", "", inspect.getdoc(f) or "", ""]
    out += ["## A control step", "", control_step(), ""]
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
    out += ["## Compiling laws", ""]
    for f in FUNCTIONS:
        out += [f"### `rrscore.{f.__name__}{_signature(f)}`", "", inspect.getdoc(f) or "", ""]
    out += ["## Event kinds", "", "| kind | meaning |", "|---|---|"]
    out += [f"| `{k}` | {v} |" for k, v in KINDS.items()]
    return "\n".join(out).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    """Print the reference, or write it to ``docs/plugin-api.md`` with ``--write``."""
    parser = argparse.ArgumentParser(prog="python -m rrscore.cli.apidoc")
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
