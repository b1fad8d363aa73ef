"""Couplers: the coupler-model plugin API and the coupling settings of a train.

Sign conventions (train frame, vehicle 0 leads, +x is the direction of travel): the
deflection ``d`` of coupling ``j`` (between vehicles ``j`` and ``j + 1``) is the change of
the distance between their centres from its nominal value (half lengths added), so
``d > 0`` is stretched; the coupler force ``F > 0`` is tension. Vehicle ``j`` feels
``-F``, vehicle ``j + 1`` feels ``+F``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from .config import FreeTable, Param
from .records import Record
from .state import StateSpec

COUPLING_SCHEMA = {
    "model": Param(kind=str, default="spring_damper", doc="coupler model (see `rrs plugins`)"),
    "params": FreeTable("parameters of the coupler model"),
    "break_force": Param("N", 0.0, "tension at which the coupler breaks; 0 = never", min=0.0),
    "coupling_speed": Param(
        "m/s", 2.0 / 3.6, "highest closing speed at which couplers couple on contact", min=0.0
    ),
}


class CouplerModel:
    """Base class of coupler (draft-gear) models. One object serves a group of couplings.

    A plugin sets ``type_name``, ``description`` and ``params`` (``{name: Param}``; a list
    parameter becomes a table, one row per coupling, padded with NaN), and may declare
    ``fields`` (``{name: doc}``: values of its own per coupling, worked out from the
    parameters once, in :meth:`setup`) and ``states`` (``{name: StateSpec}``: per-coupling
    continuous states, a friction gear's memory). ``p`` is the record: every parameter and
    field by name, one entry per coupling (``p.stiffness[i]``, SI units), ``count`` how
    many couplings it serves.

    Its force law is one plain function, written once, which rrscore compiles with numba
    where it can (and runs in Python otherwise)::

        force(d, d_dot, p, s, ds, out)

    the coupler force of each coupling (tension +) into ``out[i]`` and the derivatives of
    its states into ``ds.NAME[i]``, for deflections ``d`` (m, stretched +), their rates
    ``d_dot`` (m/s) and the states ``s.NAME``. It runs at every stage of every step: it
    must write every entry and change nothing else.
    """

    type_name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    params: ClassVar[dict[str, Param]] = {}
    fields: ClassVar[dict[str, str]] = {}
    states: ClassVar[dict[str, StateSpec]] = {}
    force: ClassVar[Callable[..., Any] | None] = None

    def __init__(self, params: list[dict[str, Any]]) -> None:
        self.count = len(params)
        scalars = [k for k, spec in self.params.items() if spec.kind is not list]
        tables = [k for k, spec in self.params.items() if spec.kind is list]
        widths = {k: max([len(row.get(k) or ()) for row in params] + [1]) for k in tables}
        self.record = Record(f"{type(self).__name__}Params", self.count,
                             [*scalars, *self.fields], [(k, widths[k]) for k in tables],
                             [("count", self.count)])
        for k in scalars:
            values = [row[k] for row in params]
            self.record.row(k)[:] = [np.nan if v is None else float(v) for v in values]
        for k in tables:
            table = self.record.row(k)
            table[:] = np.nan
            for i, row in enumerate(params):
                values = row.get(k) or ()
                table[i, :len(values)] = values
        #: The record: parameters and fields by name, one entry per coupling.
        self.p = self.record.view
        self.setup()

    def setup(self) -> None:
        """Work out the declared ``fields`` from the parameters (once, in Python); raise
        ValueError, naming the parameter, where they cannot be used."""

    def free_range(self) -> tuple[np.ndarray, np.ndarray]:
        """Deflections ``(lo, hi)`` between which the coupler carries no force (the slack)."""
        z = np.zeros(self.count)
        return z, z

    def kinks(self) -> np.ndarray:
        """Deflections where the force law changes piece, shape ``(count, k)`` (NaN: none):
        a step ends exactly where a deflection crosses one, so a slack closing is located
        in time rather than smeared over a step."""
        lo, hi = self.free_range()
        return np.stack([lo, hi], axis=1)

    def initial_state(self, d: np.ndarray) -> dict[str, np.ndarray]:
        """The states at the start of a drive (and when the faces meet again), for
        deflections ``d``."""
        return {name: np.full(self.count, spec.initial) for name, spec in self.states.items()}


def check_coupler_type(cls: type) -> None:
    """Raise TypeError if ``cls`` is not a usable coupler model class."""
    if not (isinstance(cls, type) and issubclass(cls, CouplerModel)):
        raise TypeError(f"{cls!r} is not a subclass of rrscore.CouplerModel")
    if not cls.type_name:
        raise TypeError(f"{cls.__qualname__} has no type_name")
    if cls.force is None or not callable(cls.force):
        raise TypeError(f"{cls.__qualname__} has no force function "
                        "(force(d, d_dot, p, s, ds, out))")
    for name, spec in cls.states.items():
        if not isinstance(spec, StateSpec):
            raise TypeError(f"{cls.__qualname__}: state {name!r} is not an rrscore.StateSpec")
