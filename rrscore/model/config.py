"""Config files: TOML loading and a small declarative schema.

Every config key is declared once as a :class:`Param` (a leaf), a :class:`Section`
(a nested table) or a :class:`TableList` (an array of tables). :func:`validate`
walks a parsed TOML document against its schema and returns a new dict in which
every default is filled in and every quantity is a float in its SI unit, so the
result can be written back as a "resolved" config that repeats a run exactly.

Errors name the file, the key path, what was found and what was expected.
"""

from __future__ import annotations

import difflib
import math
import os
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import ConfigError, each_error, one_error
from .units import UnitError, dimension_name, parse_quantity


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()
"""Marks a :class:`Param` that has no default."""


@dataclass(frozen=True)
class Param:
    """One config value.

    ``unit`` set: a physical quantity, given as a number in that SI unit or as a
    string with a unit ("90 t"); stored as a float in ``unit``.
    ``kind`` otherwise: ``int``, ``str``, ``bool``, ``float`` (a plain number) or
    ``list`` (of ``item`` values, or of quantities in ``unit`` when both are set).
    """

    unit: str | None = None
    default: Any = REQUIRED
    doc: str = ""
    kind: type = float
    min: float | None = None
    max: float | None = None
    exclusive_min: bool = False
    choices: tuple[Any, ...] | None = None
    item: type | None = None

    def describe(self) -> str:
        """The 'expected ...' part of an error message."""
        if self.unit is not None:
            what = dimension_name(self.unit)
            if what.startswith("quantity"):
                what = f"a {what}"
            else:
                what = f"a {what} (number in {self.unit} or string with a unit)"
        elif self.choices is not None:
            what = "one of " + ", ".join(repr(c) for c in self.choices)
        elif self.kind is list:
            what = f"a list of {self.item.__name__ if self.item else 'values'}"
        else:
            what = {int: "an integer", str: "a string", bool: "true or false", float: "a number"}[
                self.kind
            ]
        bounds = []
        if self.min is not None:
            bounds.append(f"{'>' if self.exclusive_min else '>='} {self.min:g}")
        if self.max is not None:
            bounds.append(f"<= {self.max:g}")
        return what + (" " + " and ".join(bounds) if bounds else "")


@dataclass(frozen=True)
class Section:
    """A nested table. Missing sections are filled in from their defaults."""

    schema: Mapping[str, Any]
    doc: str = ""
    required: bool = False


@dataclass(frozen=True)
class TableList:
    """An array of tables (``[[name]]``), each checked against ``schema``."""

    schema: Mapping[str, Any]
    doc: str = ""
    min_items: int = 0


@dataclass(frozen=True)
class FreeTable:
    """A table whose keys a plugin checks later (for example a vehicle type's parameters)."""

    doc: str = ""


@dataclass(frozen=True)
class Include:
    """A table given inline or as a path (relative to the file that names it) to a TOML file.

    Either way the result is the normalised table; it carries its origin in the
    key ``_source`` (file, key path) so later checks can name where a value
    came from. Keys starting with ``_`` are dropped when configs are written back.
    """

    schema: Mapping[str, Any]
    doc: str = ""
    what: str = "config"
    file_key: str | None = None  # a file holds the table under this top-level key


@dataclass
class Context:
    """Where a value came from: file and key path, for error messages."""

    file: str | None
    path: str = ""
    base_dir: Path = field(default_factory=Path.cwd)

    def child(self, key: str | int) -> Context:
        """The context of ``key`` (a table key or a list index) inside this one."""
        if isinstance(key, int):
            return Context(self.file, f"{self.path}[{key}]", self.base_dir)
        return Context(self.file, f"{self.path}.{key}" if self.path else key, self.base_dir)

    def error(self, message: str) -> ConfigError:
        """A :class:`ConfigError` at this file and key path."""
        return ConfigError(self.file, self.path or None, message)


def path_problem(path: str | Path) -> str | None:
    """Why ``path`` cannot name a file to read (a NUL byte, a name too long, a symlink
    loop, ...), or None if the operating system accepts it."""
    text = str(path)
    if "\0" in text:
        return "a path cannot contain a NUL byte"
    try:
        Path(text).resolve()
        os.stat(text)
    except FileNotFoundError:
        return None  # a plain missing file: reported by the caller, in its own words
    except RuntimeError:  # pathlib's report of a symlink loop (Python 3.11, 3.12)
        return "a symlink loop"
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def resolve_path(base: Path, value: str, ctx: Context) -> Path:
    """``value`` (a path relative to ``base``) made absolute; a path the operating system
    refuses is a :class:`ConfigError` at ``ctx``."""
    problem = path_problem(base / value)
    if problem is not None:
        raise ctx.error(f"found {value!r}, expected a usable path ({problem})")
    return (base / value).resolve()


#: The command-line option that lets a config's ``plugin_dirs`` name folders outside its
#: own folder's tree (and lets ``rrs validate`` import a config's plugins at all).
ALLOW_PLUGIN_DIRS = "--allow-plugin-dirs"


def resolve_plugin_dirs(cfg: dict[str, Any], ctx: Context,
                        extra: Iterable[str | Path] = (),
                        allow_outside: bool = False) -> tuple[str, ...]:
    """Resolve a checked table's ``plugin_dirs`` from its file's folder (in place), and
    return them followed by ``extra`` (from the command line), each once.

    A folder outside the tree of the file's folder (after symlinks and ``..``) is a
    :class:`ConfigError` unless ``allow_outside``: a shared config file must not run code
    from wherever it likes (see :data:`ALLOW_PLUGIN_DIRS`). Checked before any import."""
    base = ctx.base_dir.resolve()
    dirs = []
    for i, d in enumerate(cfg["plugin_dirs"]):
        key = ctx.child("plugin_dirs").child(i)
        found = resolve_path(ctx.base_dir, d, key)
        if not allow_outside and not found.is_relative_to(base):
            raise key.error(f"found {d!r}, the folder {str(found)!r}; expected a folder "
                            f"inside {str(base)!r}, or pass {ALLOW_PLUGIN_DIRS}")
        dirs.append(str(found))
    cfg["plugin_dirs"] = dirs
    return tuple(dict.fromkeys([*dirs, *(str(Path(d).resolve()) for d in extra)]))


def load_toml(path: str | Path, what: str = "config") -> dict[str, Any]:
    """Read a TOML file; a missing file or a syntax error is a :class:`ConfigError`."""
    p = Path(path)
    problem = path_problem(p)
    if problem is not None:
        raise ConfigError(repr(str(path)) if "\0" in str(path) else str(path), None,
                          f"cannot be read: {problem}")
    if not p.is_file():
        raise ConfigError(str(path), None, f"{what} file not found")
    try:
        with p.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(str(path), None, f"not valid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(str(path), None, f"not valid TOML: not UTF-8 text "
                          f"(byte 0x{exc.object[exc.start]:02x} at offset {exc.start})") from None
    except OSError as exc:
        raise ConfigError(str(path), None, f"cannot be read: {exc.strerror}") from None


def load_top_table(path: str | Path, key: str) -> tuple[dict[str, Any], Context]:
    """Read a file that holds exactly one top-level table ``[key]``; return the table and
    its context (relative paths inside it resolve from the file's folder)."""
    p = Path(path)
    data = load_toml(p, key)
    ctx = Context(str(path), "", p.resolve().parent)
    for k in data:
        if k != key:
            raise ctx.child(k).error(f"unknown key (allowed here: {key})")
    if not isinstance(data.get(key), dict):
        raise ctx.child(key).error(f"missing table [{key}]")
    return data[key], ctx.child(key)


def _found(value: Any) -> str:
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)


def check_value(value: Any, param: Param, ctx: Context) -> Any:
    """Check and normalise one leaf value."""
    expected = param.describe()
    if param.kind is list and param.unit is not None:
        if not isinstance(value, list):
            raise ctx.error(f"found {_found(value)}, expected a list of {expected}")
        item = Param(param.unit, min=param.min, max=param.max, exclusive_min=param.exclusive_min)
        return [check_value(v, item, ctx.child(i)) for i, v in enumerate(value)]
    if param.unit is not None:
        try:
            out: Any = parse_quantity(value, param.unit)
        except UnitError as exc:
            raise ctx.error(str(exc)) from None
    elif param.kind is bool:
        if not isinstance(value, bool):
            raise ctx.error(f"found {_found(value)}, expected {expected}")
        out = value
    elif param.kind is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ctx.error(f"found {_found(value)}, expected {expected}")
        out = value
    elif param.kind is float:
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if not number or not math.isfinite(value):
            raise ctx.error(f"found {_found(value)}, expected {expected}")
        out = float(value)
    elif param.kind is str:
        if not isinstance(value, str):
            raise ctx.error(f"found {_found(value)}, expected {expected}")
        out = value
    elif param.kind is list:
        if not isinstance(value, list):
            raise ctx.error(f"found {_found(value)}, expected {expected}")
        # a list of lists is a list of lists of numbers (points [[x, y], ...])
        item = Param(kind=param.item or str, item=float if param.item is list else None)
        out = [check_value(v, item, ctx.child(i)) for i, v in enumerate(value)]
    else:  # pragma: no cover - schema author error
        raise TypeError(f"unsupported kind {param.kind}")

    if param.choices is not None and out not in param.choices:
        hint = difflib.get_close_matches(str(out), [str(c) for c in param.choices], n=1)
        extra = f" (did you mean {hint[0]!r}?)" if hint else ""
        raise ctx.error(f"found {_found(value)}, expected {expected}{extra}")
    if isinstance(out, int | float) and not isinstance(out, bool):
        too_low = param.min is not None and (
            out <= param.min if param.exclusive_min else out < param.min
        )
        too_high = param.max is not None and out > param.max
        if too_low or too_high:
            raise ctx.error(f"found {_found(value)}, expected {expected}")
    return out


def validate(data: Any, schema: Mapping[str, Any], ctx: Context) -> dict[str, Any]:
    """Check ``data`` (a parsed TOML table) against ``schema``; return it normalised.

    Unknown keys, wrong types, bad units and values out of range raise
    :class:`ConfigError`. Missing keys take their defaults; a missing key
    without a default is an error.
    """
    if not isinstance(data, dict):
        raise ctx.error(f"found {_found(data)}, expected a table")
    # Every error of the table, not only the first: a file with three mistakes takes one
    # run. An unknown key that looks like a missing one ("lenght") is one mistake: the
    # missing key is not reported as well.
    errors: list[ConfigError] = []
    hinted = set()
    for key in (k for k in data if k not in schema):
        hint = difflib.get_close_matches(key, list(schema), n=1)
        hinted.update(h for h in hint if h not in data)
        extra = f"; did you mean {hint[0]!r}?" if hint else ""
        allowed = ", ".join(schema)
        errors.append(ctx.child(key).error(f"unknown key{extra} (allowed here: {allowed})"))

    out: dict[str, Any] = {}
    for key, spec in schema.items():
        if key in hinted:
            continue  # (reported as the unknown key it was mistyped as)
        try:
            out[key] = _checked(data, key, spec, ctx.child(key))
        except ConfigError as exc:
            errors.extend(each_error(exc))
    if errors:
        raise one_error(errors)
    return out


def _checked(data: dict[str, Any], key: str, spec: Any, sub: Context) -> Any:
    """The checked, normalised value of ``key`` of the table ``data``."""
    present = key in data
    if isinstance(spec, Param):
        if present:
            return check_value(data[key], spec, sub)
        if spec.default is REQUIRED:
            raise sub.error(f"missing, expected {spec.describe()}")
        return spec.default  # None for optional keys; dropped when written
    if isinstance(spec, Section):
        if not present and spec.required:
            raise sub.error("missing table")
        return validate(data.get(key, {}), spec.schema, sub)
    if isinstance(spec, TableList):
        items = data.get(key, [])
        if not isinstance(items, list):
            raise sub.error(f"found {_found(items)}, expected an array of tables ([[{key}]])")
        if len(items) < spec.min_items:
            raise sub.error(f"found {len(items)} entries, expected at least {spec.min_items}")
        out, errors = [], []
        for i, it in enumerate(items):
            try:
                out.append(validate(it, spec.schema, sub.child(i)))
            except ConfigError as exc:
                errors.extend(each_error(exc))
        if errors:
            raise one_error(errors)
        return out
    if isinstance(spec, Include):
        if not present:
            raise sub.error(f"missing, expected a path to a {spec.what} file or a table")
        return include(data[key], spec, sub)
    if isinstance(spec, FreeTable):
        value = data.get(key, {})
        if not isinstance(value, dict):
            raise sub.error(f"found {_found(value)}, expected a table")
        return dict(value)
    raise TypeError(f"bad schema entry for {key!r}: {spec!r}")  # pragma: no cover


def include(value: Any, spec: Include, ctx: Context) -> dict[str, Any]:
    """Resolve an :class:`Include` value: load the file it names, or take the inline table."""
    if isinstance(value, str):
        path = resolve_path(ctx.base_dir, value, ctx)
        if not path.is_file():
            raise ctx.error(f"found {value!r}, but no such {spec.what} file: {str(path)!r}")
        shown = os.path.relpath(path)
        shown = str(path) if shown.startswith("..") else shown
        data = load_toml(path, spec.what)
        sub = Context(shown, "", path.parent)
        if spec.file_key is not None and spec.file_key not in data:
            # (another kind of file: a yard naming itself as its network, for one)
            tables = ", ".join(f"[{k}]" for k in data if isinstance(data[k], dict))
            raise ctx.error(f"found {value!r}, {'a file with ' + tables if tables else 'a file'}"
                            f"{' (this file itself)' if _same_file(path, ctx) else ''} and "
                            f"no [{spec.file_key}] table; expected a {spec.what} file")
        if spec.file_key is not None:
            data = validate(data, {spec.file_key: FreeTable()}, sub)[spec.file_key]
            if not data:
                raise sub.child(spec.file_key).error("missing table")
            sub = sub.child(spec.file_key)
    elif isinstance(value, dict):
        data, sub = value, ctx
    else:
        raise ctx.error(f"found {_found(value)}, expected a path to a {spec.what} file or a table")
    out = validate(data, spec.schema, sub)
    out["_source"] = (sub.file, sub.path, str(sub.base_dir))
    return out


def _same_file(path: Path, ctx: Context) -> bool:
    """Whether ``path`` is the file ``ctx`` is in (its name as shown: from the current
    directory, or absolute)."""
    try:
        return path.samefile(ctx.file)
    except (OSError, TypeError):
        return False


def strip_private(data: Any) -> Any:
    """A copy of ``data`` without keys starting with '_' and without None values (for TOML)."""
    if isinstance(data, dict):
        return {
            k: strip_private(v)
            for k, v in data.items()
            if not str(k).startswith("_") and v is not None
        }
    if isinstance(data, list):
        return [strip_private(v) for v in data]
    return data


def source_context(table: dict[str, Any], key: str) -> Context:
    """The :class:`Context` of ``key`` inside a table produced by :func:`include`."""
    file, path, base = table["_source"]
    return Context(file, path, Path(base)).child(key)


def describe_schema(schema: Mapping[str, Any], prefix: str = "") -> list[str]:
    """One line per key: path, unit or kind, default and doc. Used by ``rrs plugins``."""
    lines = []
    for key, spec in schema.items():
        path = f"{prefix}.{key}" if prefix else key
        if isinstance(spec, Param):
            unit = f" [{spec.unit}]" if spec.unit else ""
            default = "" if spec.default is REQUIRED else f" = {spec.default!r}"
            lines.append(f"{path}{unit}{default}  {spec.doc}".rstrip())
        elif isinstance(spec, Section):
            lines.extend(describe_schema(spec.schema, path))
        elif isinstance(spec, TableList):
            lines.extend(describe_schema(spec.schema, f"{path}[]"))
        else:
            lines.append(f"{path}  {spec.doc}".rstrip())
    return lines


class FrozenDict(dict):
    """A dict that refuses changes: a checked config is a description, never a run's state."""

    def _refuse(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("a checked config is read-only; copy it to change it")

    __setitem__ = __delitem__ = _refuse
    clear = pop = popitem = setdefault = update = __ior__ = _refuse  # type: ignore[assignment]

    def __reduce__(self):
        return (FrozenDict, (dict(self),))

    def __deepcopy__(self, memo: dict) -> FrozenDict:
        return self  # immutable all the way down: sharing is safe


class FrozenList(list):
    """A list that refuses changes (see :class:`FrozenDict`)."""

    def _refuse(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("a checked config is read-only; copy it to change it")

    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse  # type: ignore[assignment]
    append = extend = insert = pop = remove = clear = sort = reverse = _refuse  # type: ignore

    def __reduce__(self):
        return (FrozenList, (list(self),))

    def __deepcopy__(self, memo: dict) -> FrozenList:
        return self


def freeze(data: Any) -> Any:
    """A read-only copy of a checked config: dicts and lists become :class:`FrozenDict` and
    :class:`FrozenList`, all the way down; tables shared by several keys stay shared."""
    memo: dict[int, Any] = {}

    def walk(x: Any) -> Any:
        if id(x) in memo:
            return memo[id(x)]
        if isinstance(x, dict):
            out: Any = FrozenDict({k: walk(v) for k, v in x.items()})
        elif isinstance(x, list):
            out = FrozenList(walk(v) for v in x)
        else:
            return x
        memo[id(x)] = out
        return out

    return walk(data)


def thaw(data: Any) -> Any:
    """A plain, mutable deep copy of a (frozen) config."""
    if isinstance(data, dict):
        return {k: thaw(v) for k, v in data.items()}
    if isinstance(data, list):
        return [thaw(v) for v in data]
    return data


def path_parts(path: str) -> list[str]:
    """The keys and list indices of a key path ``a.b[2].c`` (or ``a.b.2.c``), in order:
    ``["a", "b", "2", "c"]``."""
    return path.replace("]", "").replace("[", ".").split(".")


def lookup_path(node: Any, path: str) -> Any:
    """The value at key path ``a.b[2].c`` (or ``a.b.2.c``) of nested tables and lists;
    KeyError naming the path if there is none."""
    for part in path_parts(path):
        try:
            node = node[int(part)] if part.isdigit() else node[part]
        except (KeyError, IndexError, TypeError, ValueError):
            raise KeyError(path) from None
    return node


def param_at(schema: Mapping[str, Any], path: str) -> Param | FreeTable | None:
    """What a key path ``a.b[2].c`` (or ``a.b.2.c``) of a table checked against
    ``schema`` names: its :class:`Param` (through sections, included tables and lists of
    tables), the :class:`FreeTable` the path goes into (a plugin's parameters: only the
    plugin knows them), or None where the schema has no such key."""
    node: Any = Section(schema)
    for part in path_parts(path):
        if isinstance(node, TableList):
            node = Section(node.schema) if part.isdigit() else None
        elif isinstance(node, Section | Include):
            node = node.schema.get(part)
        elif isinstance(node, FreeTable):
            return node
        else:
            return None
        if node is None:
            return None
    return node if isinstance(node, Param | FreeTable) else None


def set_path(table: dict[str, Any], path: str, value: Any) -> None:
    """Set the value at key path ``a.b[2].c`` (or ``a.b.2.c``) of nested tables and lists,
    in place (``Scenario.with_values``, ``YardScenario.with_values``, the command line's
    ``--set``): an existing key or list item, or a new key of an existing table; KeyError
    naming the path if the table or list it goes into is not there."""
    node: Any = table
    parts = path_parts(path)
    for i, part in enumerate(parts):
        key: Any = int(part) if part.isdigit() else part
        last = i == len(parts) - 1
        try:
            if last:
                if isinstance(node, dict) or (isinstance(node, list) and key < len(node)):
                    node[key] = value
                else:
                    raise KeyError(key)
            else:
                node = node[key]
        except (KeyError, IndexError, TypeError):
            raise KeyError(f"scenario has no key {path!r}") from None


def stack_params(rows: list[Mapping[str, Any]], schema: Mapping[str, Param]):
    """Checked parameter tables of several vehicles (or couplings) as one namespace of
    arrays, one entry per row: ``p.F_max[i]``. List-valued parameters (tables) become
    object arrays of tuples, so rows may differ in length."""
    from types import SimpleNamespace

    import numpy as np

    out = {}
    for key, spec in schema.items():
        values = [row[key] for row in rows]
        if isinstance(spec, Param) and spec.kind is list:
            column = np.empty(len(values), dtype=object)
            for i, v in enumerate(values):
                column[i] = None if v is None else tuple(v)
            out[key] = column
        elif any(v is None for v in values):
            out[key] = np.array(values, dtype=object)
        else:
            out[key] = np.array(values)
    return SimpleNamespace(**out)
