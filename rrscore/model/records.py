"""Records: named per-vehicle (or per-coupling) arrays laid out in one flat buffer.

A plugin declares the values it keeps by name (parameters, controls, keys, its own
fields, states, signals); rrscore lays them out for each vehicle type of a train as
rows of one float buffer, one entry per vehicle (and a few tables, one row per vehicle:
the generalized forces ``q_a`` and ``q_r``). A plugin's function gets them as a named
tuple of arrays, ``veh.F_max[i]``, in Python and in compiled code alike; compiled code
gets the buffer and its layout and unpacks the same tuple (:mod:`rrscore.engine.adapters`).
One buffer per record makes a run's snapshot a copy of a few arrays.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np


@cache
def record_type(name: str, fields: tuple[str, ...]) -> type:
    """The named tuple class of a record with these fields (one class per name and fields,
    so that equal layouts share a type)."""
    return namedtuple(name, fields)


class Record:
    """Named arrays over ``count`` items in one float buffer: ``rows`` (one value per
    item) and ``tables`` (``(name, width)``: a row of ``width`` values per item), after
    the integers ``ints`` (named values held as counts in the layout, such as the number
    of items).

    :attr:`buffer` holds the values, :attr:`layout` where each is (``[count, then
    (offset, width) per field]``, ``width`` 0 for a row), :attr:`view` the named tuple
    of numpy views (the ints as Python ints).
    """

    def __init__(self, name: str, count: int, rows: Sequence[str],
                 tables: Sequence[tuple[str, int]] = (), ints: Sequence[tuple[str, int]] = (),
                 initial: dict[str, float] | None = None) -> None:
        names = [n for n, _ in ints] + list(rows) + [n for n, _ in tables]
        if len(set(names)) != len(names):
            seen = {n for n in names if names.count(n) > 1}
            raise ValueError(f"record {name!r}: {', '.join(sorted(seen))} declared twice")
        self.name, self.count = name, int(count)
        self.rows, self.tables, self.ints = tuple(rows), tuple(tables), tuple(ints)
        size = len(self.rows) * self.count + sum(w for _, w in self.tables) * self.count
        self.buffer = np.zeros(size)
        layout = [self.count]
        offset = 0
        for _ in self.rows:
            layout += [offset, 0]
            offset += self.count
        for _, width in self.tables:
            layout += [offset, int(width)]
            offset += self.count * int(width)
        layout += [value for _, value in self.ints]
        self.layout = np.array(layout, dtype=np.int64)
        self.fields = tuple(names)
        self.type = record_type(name, self.fields)
        self.view = self.unpack(self.buffer)
        for key, value in (initial or {}).items():
            self.row(key)[:] = value

    def unpack(self, buffer: np.ndarray) -> Any:
        """The named tuple of views into ``buffer`` (this record's or a copy of it)."""
        n = self.count
        values: list[Any] = [v for _, v in self.ints]
        at = 1
        for _ in self.rows:
            start = int(self.layout[at])
            values.append(buffer[start:start + n])
            at += 2
        for _, width in self.tables:
            start = int(self.layout[at])
            values.append(buffer[start:start + n * width].reshape(n, width))
            at += 2
        return self.type(*values)

    def __deepcopy__(self, memo: dict) -> Record:
        import copy

        new = object.__new__(Record)
        memo[id(self)] = new
        new.__dict__.update(self.__dict__)
        new.buffer = copy.deepcopy(self.buffer, memo)
        new.view = new.unpack(new.buffer)
        return new

    def row(self, name: str) -> np.ndarray:
        """The row (or table) ``name``, a view."""
        return getattr(self.view, name)

    def index(self, name: str) -> int:
        """Where the row ``name`` starts in the buffer."""
        k = self.rows.index(name)
        return int(self.layout[1 + 2 * k])
