"""``rrs new vehicle NAME`` / ``rrs new coupler NAME``: a plugin package to start from.

The package is pip-installable (``pyproject.toml`` with the ``rrscore`` entry point), holds
the plugin module with its parameters, keys, controls and signals documented, configs,
a README, and tests written with rrscore's pytest fixtures (:mod:`rrscore.testing`) that
pass as generated. The plugin is written in the one form of the plugin API: declarations
and plain functions on the record, which numba compiles (a generated test says so). The
files are package data under ``rrscore/cli/templates/<kind>/``;
``$name``, ``$Class``, ``$package`` and ``$dist`` in them (and ``__package__`` in paths)
are filled in.
"""

from __future__ import annotations

import re
from importlib.resources import files
from pathlib import Path
from string import Template

from ..model.errors import RrsError

KINDS = ("vehicle", "coupler")
_NAME = re.compile(r"[a-z][a-z0-9_]*")


def names(name: str) -> dict[str, str]:
    """The spellings of a plugin name: ``$name`` (``my_loco``, the type name), ``$Class``
    (``MyLoco``), ``$package`` (``rrs_my_loco``) and ``$dist`` (``rrs-my-loco``)."""
    if not _NAME.fullmatch(name):
        raise RrsError(f"plugin name {name!r}: expected lower-case letters, digits and _ , "
                       "starting with a letter (it becomes the type name and a module name)")
    return {"name": name, "Class": "".join(p.title() for p in name.split("_") if p),
            "package": f"rrs_{name}", "dist": f"rrs-{name.replace('_', '-')}"}


def render(kind: str, name: str, dest: str | Path) -> list[Path]:
    """Write the ``kind`` template for ``name`` into the new directory ``dest`` and return
    the files written. Refuses to write into an existing non-empty directory."""
    if kind not in KINDS:
        raise RrsError(f"template {kind!r}: expected one of {', '.join(KINDS)}")
    values = names(name)
    dest = Path(dest)
    if dest.exists() and any(dest.iterdir()):
        raise RrsError(f"{dest}: exists and is not empty; choose a new directory")
    root = files("rrscore.cli") / "templates" / kind
    written = []
    for source, rel in _walk(root, ""):
        target = dest / rel.replace("__package__", values["package"]).removesuffix(".tmpl")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(Template(source.read_text(encoding="utf-8")).substitute(values),
                          encoding="utf-8")
        written.append(target)
    return written


def _walk(node, prefix: str):
    for child in sorted(node.iterdir(), key=lambda c: c.name):
        rel = f"{prefix}{child.name}"
        if child.is_dir():
            if child.name != "__pycache__":
                yield from _walk(child, rel + "/")
        elif child.name.endswith(".tmpl"):
            yield child, rel
