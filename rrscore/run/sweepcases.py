"""The cases of a sweep, made one at a time: case ``i``'s values come from ``i`` alone (a
grid's by counting in mixed radix, a zip's by position), so a sweep of a million cases
never holds them all, a worker given only ``i`` makes the same case, and the table is
the same whichever way the sweep runs."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, overload

MODES = ("grid", "zip")
"""How a sweep combines its parameters' values (see :class:`Cases`)."""

MAX_CASES = 10**9
"""The most cases a sweep may have: at a few milliseconds a case, a billion is months of
one processor's time (and weeks of a hundred's); a grid past it is a mistake, refused
before anything runs."""


class Cases(Sequence[dict[str, Any]]):
    """The values of every case of a sweep, in case order, each made when asked for.

    ``params`` maps keys to lists of values. ``mode`` "grid": every combination (the
    Cartesian product, the last key varying fastest); "zip": the i-th values of every key
    together (the lists of equal length, checked by the sweep)."""

    def __init__(self, params: Mapping[str, Sequence[Any]], mode: str = "grid") -> None:
        self.keys = list(params)
        self._values = [list(v) for v in params.values()]
        self.mode = mode
        if mode == "zip":
            self._n = min((len(v) for v in self._values), default=0)
        else:
            self._n = math.prod(len(v) for v in self._values) if self._values else 0

    @property
    def count(self) -> int:
        """How many cases (an int of any size: ``len`` fails past ``sys.maxsize``)."""
        return self._n

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, i: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, i: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, i: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._n))]
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError(f"case {i}: the sweep has {self._n} cases")
        if self.mode == "zip":
            picked = [v[i] for v in self._values]
        else:  # the index in mixed radix, the last key's digit the lowest
            picked = []
            for values in reversed(self._values):
                i, digit = divmod(i, len(values))
                picked.append(values[digit])
            picked.reverse()
        return dict(zip(self.keys, picked, strict=True))

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for i in range(self._n):
            yield self[i]

    def __repr__(self) -> str:
        return f"Cases({self._n} cases, {self.mode} of {', '.join(self.keys)})"
