"""Open Rails (and MSTS) rolling stock into rrscore configs: ``rrs import openrails``.

:func:`import_file` reads an ``.eng`` or ``.wag`` (one vehicle config) or a ``.con`` (a
train config and the vehicle configs it names) and returns the files to write; the
command writes them. The STF reader (:mod:`.stf`) never evaluates anything from a file,
and every malformed file or value is one :class:`~.stf.StfError` naming the file and
line. Which token becomes which key, and each unit conversion: ``docs/openrails.md``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .mapping import ImportedVehicle, read_vehicle
from .stf import Block, StfError, read_file
from .writer import train_toml, vehicle_toml

__all__ = ["ImportResult", "StfError", "import_file", "read_consist", "read_vehicle"]

#: The file kinds an import reads, by extension.
KINDS = (".eng", ".wag", ".con")


@dataclass
class ImportResult:
    """What an import writes: ``files`` (a path relative to the output folder, and its
    text), the train file of a consist (or None), and every token not mapped."""

    files: dict[str, str] = field(default_factory=dict)
    train: str | None = None
    unmapped: list[str] = field(default_factory=list)


def safe_name(stem: str) -> str:
    """``stem`` as a file name without surprises: letters, digits, ``_``, ``-``, ``.``."""
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", stem).strip("._") or "vehicle"
    return name[:100]


def import_file(path: str | Path, trainset: str | Path | None = None) -> ImportResult:
    """Read the ``.eng``, ``.wag`` or ``.con`` at ``path`` into rrscore configs. A consist's
    vehicles are looked for under ``trainset`` (default: the ``TRAINSET`` folder beside the
    ``.con``'s own folder, as in ``TRAINS/CONSISTS`` and ``TRAINS/TRAINSET``, else the
    ``.con``'s folder)."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in KINDS:
        raise StfError(str(path), None, f"found a {suffix or 'file without extension'!r}, "
                                        "expected an .eng, .wag or .con file")
    if suffix != ".con":
        v = read_vehicle(p)
        name = safe_name(p.stem) + ".toml"
        return ImportResult({name: vehicle_toml(v)}, None, list(v.unmapped))
    return _consist(p, trainset)


@dataclass
class ConsistEntry:
    """One vehicle of a consist: its file, whether it is reversed (``Flip``), the line."""

    path: Path
    reversed: bool
    line: int


def read_consist(path: str | Path, trainset: str | Path | None = None
                 ) -> tuple[str, list[ConsistEntry], list[str]]:
    """The name, the vehicles (lead first) and the unmapped tokens of the ``.con`` at
    ``path``; a vehicle file that cannot be found is a :class:`StfError` at its line."""
    p = Path(path)
    file = str(path)
    root = read_file(p)
    train = root.block("Train")
    cfg = train.block("TrainCfg") if train is not None else None
    if cfg is None:
        raise StfError(file, None, "found no 'Train ( TrainCfg ( ... ) )', expected an Open "
                                   "Rails or MSTS consist (.con) file")
    words = [w.text for w in cfg.words()]
    name_block = cfg.block("Name")
    name = (name_block.flat_words()[0].text if name_block and name_block.flat_words()
            else words[0] if words else p.stem)
    folder = _trainset_folder(p, trainset)
    entries, unmapped = [], []
    for item in cfg.items:
        if not isinstance(item, Block):
            continue
        kind = item.name.lower()
        if kind not in ("engine", "wagon"):
            if kind != "name":
                unmapped.append(f"TrainCfg.{item.name}")
            continue
        data = item.block(f"{item.name}Data") or item.block(f"{kind}data")
        names = [w.text for w in data.flat_words()] if data is not None else []
        if len(names) < 1:
            raise StfError(file, item.line, f"{item.name}: found no {item.name}Data ( \"file\" "
                                            "\"folder\" ), expected the vehicle's file and "
                                            "folder")
        ext = ".eng" if kind == "engine" else ".wag"
        parts = [*(names[1:2]), names[0] + ext]
        found = _find(folder, parts)
        if found is None:
            raise StfError(file, data.line, f"{data.name}: found no file "
                                            f"{'/'.join(parts)!r} under {str(folder)!r}, "
                                            "expected the vehicle's file there (give the "
                                            "TRAINSET folder with --trainset)")
        entries.append(ConsistEntry(found, item.block("Flip") is not None, item.line))
    if not entries:
        raise StfError(file, cfg.line, "TrainCfg: found no Engine or Wagon, expected at least "
                                       "one vehicle")
    return name, entries, list(dict.fromkeys(unmapped))


def _trainset_folder(con: Path, given: str | Path | None) -> Path:
    if given is not None:
        return Path(given)
    trains = con.resolve().parent.parent
    beside = _find(trains, ["TRAINSET"])
    return beside if beside is not None and beside.is_dir() else con.resolve().parent


def _find(base: Path, parts: list[str]) -> Path | None:
    """``base`` joined with ``parts``, each matched without regard to case (MSTS content
    comes from Windows, where names are written in any case)."""
    here = base
    for part in parts:
        exact = here / part
        if exact.exists():
            here = exact
            continue
        try:
            match = [c for c in here.iterdir() if c.name.lower() == part.lower()]
        except OSError:
            return None
        if not match:
            return None
        here = match[0]
    return here


def _consist(p: Path, trainset: str | Path | None) -> ImportResult:
    name, entries, unmapped = read_consist(p, trainset)
    result = ImportResult(unmapped=list(unmapped))
    read: dict[Path, tuple[str, ImportedVehicle]] = {}
    taken: set[str] = set()
    for entry in entries:
        if entry.path in read:
            continue
        v = read_vehicle(entry.path)
        stem = safe_name(entry.path.stem)
        file = stem
        k = 2
        while file in taken:  # two vehicles of one name in different folders
            file, k = f"{stem}_{k}", k + 1
        taken.add(file)
        read[entry.path] = (f"vehicles/{file}.toml", v)
        result.files[f"vehicles/{file}.toml"] = vehicle_toml(v)
        result.unmapped += [u for u in v.unmapped if u not in result.unmapped]
    tables: list[dict[str, Any]] = []
    notes = []
    for j, entry in enumerate(entries):
        rel, v = read[entry.path]
        orientation = "reversed" if entry.reversed else "forward"
        last = tables[-1] if tables else None
        same = last is not None and last["config"] == "../" + rel and \
            last.get("orientation", "forward") == orientation
        if same:
            last["count"] = last.get("count", 1) + 1
            continue
        table: dict[str, Any] = {"config": "../" + rel}
        if entry.reversed:
            table["orientation"] = "reversed"
        if j > 0 and v.coupling is not None:
            # a vehicle's Coupling is taken as its coupling to the vehicle ahead
            table["coupling"] = v.coupling
        tables.append(table)
    if not any("coupling" in t for t in tables):
        notes.append("no vehicle gives a Coupling: rrscore's default coupling")
    stem = safe_name(p.stem)
    result.train = f"trains/{stem}.toml"
    result.files[result.train] = train_toml(name, p.name, tables, unmapped, notes)
    return result
