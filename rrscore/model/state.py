"""The state vector, assembled from blocks that components declare.

A component (bodies, wheelsets, couplings, a vehicle plugin's reservoir, a
coupler model's friction memory) declares each continuous state it owns as a
:class:`StateSpec`: a unit, a doc string and the absolute error tolerance the
solver should hold it to. The :class:`StateLayout` lays the blocks end to end
in one flat vector, so the solver sees a plain array while every component
reads and writes its own blocks by name, as whole arrays.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class StateSpec:
    """One continuous state, per vehicle, per axle or per coupling of its owner.

    :param unit: SI unit of the state ("m", "m/s", "Pa", "N", ...).
    :param doc: what it is, for ``rrs plugins -v`` and the README.
    :param atol: absolute error tolerance the solver holds it to, in ``unit``
        (``inf`` leaves it uncontrolled: a state that feeds nothing back).
    :param initial: value at the start of a drive, unless the owner sets one.
    """

    unit: str
    doc: str = ""
    atol: float = 1e-6
    initial: float = 0.0


@dataclass(frozen=True)
class Block:
    """A named slice of the state vector: ``size`` values of one :class:`StateSpec`."""

    name: str
    spec: StateSpec
    size: int
    start: int = 0

    @property
    def slice(self) -> slice:
        """Where the block sits in the state vector."""
        return slice(self.start, self.start + self.size)


@dataclass
class StateLayout:
    """Blocks laid end to end: names to slices, and per-entry tolerances."""

    blocks: dict[str, Block] = field(default_factory=dict)
    size: int = 0

    def add(self, name: str, spec: StateSpec, size: int) -> slice:
        """Append a block of ``size`` values and return its slice."""
        if name in self.blocks:
            raise ValueError(f"state block {name!r} declared twice")
        block = Block(name, spec, int(size), self.size)
        self.blocks[name] = block
        self.size += block.size
        return block.slice

    def __getitem__(self, name: str) -> slice:
        return self.blocks[name].slice

    def __contains__(self, name: str) -> bool:
        return name in self.blocks

    def atol(self) -> np.ndarray:
        """Absolute tolerance of every entry, from the blocks' specs."""
        out = np.empty(self.size)
        for b in self.blocks.values():
            out[b.slice] = b.spec.atol
        return out

    def initial(self) -> np.ndarray:
        """Every entry at its spec's initial value."""
        out = np.empty(self.size)
        for b in self.blocks.values():
            out[b.slice] = b.spec.initial
        return out


def entry_ranges(mask: np.ndarray) -> np.ndarray:
    """The runs of True in ``mask`` (one flag per entry of a state) as rows ``start, stop``:
    how compiled code walks a part of the state without an index per entry."""
    edges = np.flatnonzero(np.diff(np.concatenate(([0], mask.astype(np.int8), [0]))))
    return np.ascontiguousarray(edges.reshape(-1, 2), dtype=np.int64)
