"""Couplings between neighbouring vehicles: the coupler-model plugin API and coupling state.

Sign conventions (train frame, vehicle 0 leads, +x is the direction of travel):
the deflection ``d`` of coupling ``j`` (between vehicles ``j`` and ``j + 1``) is
the change of the distance between their centres from its nominal value (half
lengths added), so ``d > 0`` is stretched; the coupler force ``F > 0`` is
tension. Vehicle ``j`` feels ``-F``, vehicle ``j + 1`` feels ``+F``.

A coupler model serves every coupling that uses it, with parameter arrays, so
the force of the whole train is a handful of numpy operations.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from .config import FreeTable, Param

COUPLING_SCHEMA = {
    "model": Param(kind=str, default="spring_damper", doc="coupler model (see `rrs plugins`)"),
    "params": FreeTable("parameters of the coupler model"),
    "break_force": Param("N", 0.0, "tension at which the coupler breaks; 0 = never", min=0.0),
    "coupling_speed": Param(
        "m/s", 2.0 / 3.6, "highest closing speed at which couplers couple on contact", min=0.0
    ),
}


class CouplerModel:
    """Base class of coupler (draft-gear) models. One instance serves many couplings.

    Plugins set ``type_name``, ``params`` (``{name: Param}``) and implement
    ``force``. Parameters arrive as arrays in ``self.p`` (one entry per coupling).
    """

    type_name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    params: ClassVar[dict[str, Param]] = {}

    def __init__(self, params: list[dict[str, Any]]) -> None:
        self.count = len(params)
        self.p = {k: np.array([p[k] for p in params]) for k in self.params}
        self.setup()

    def setup(self) -> None:
        """Called once after the parameter arrays are built."""

    def force(self, d: np.ndarray, d_dot: np.ndarray) -> np.ndarray:
        """Coupler force (tension +) for deflections ``d`` and their rates ``d_dot``."""
        raise NotImplementedError

    def free_range(self) -> tuple[np.ndarray, np.ndarray]:
        """Deflections ``(lo, hi)`` between which the coupler carries no force (the slack)."""
        z = np.zeros(self.count)
        return z, z

    def kinks(self) -> np.ndarray:
        """Deflections where the force law changes piece, shape ``(count, k)``.

        The integrator ends a step exactly where a deflection crosses one, so a
        slack closing is located in time rather than smeared over a step.
        """
        lo, hi = self.free_range()
        return np.stack([lo, hi], axis=1)


def check_coupler_type(cls: type) -> None:
    """Raise TypeError if ``cls`` is not a usable coupler model class."""
    if not (isinstance(cls, type) and issubclass(cls, CouplerModel)):
        raise TypeError(f"{cls!r} is not a subclass of rrscore.CouplerModel")
    if not cls.type_name:
        raise TypeError(f"{cls.__qualname__} has no type_name")


class Couplings:
    """All couplings of a train: models, deflection geometry and coupled/broken state."""

    def __init__(self, models: list[tuple[CouplerModel, np.ndarray]], nominal: np.ndarray,
                 break_force: np.ndarray, coupling_speed: np.ndarray,
                 coupled: np.ndarray | None = None) -> None:
        self.groups = models  # (model, coupling indices)
        self.count = len(nominal)
        self.nominal = nominal  # nominal centre distance, m
        self.break_force = np.where(break_force > 0, break_force, np.inf)
        self.coupling_speed = coupling_speed
        self.coupled = (np.ones(self.count, dtype=bool) if coupled is None
                        else np.array(coupled, dtype=bool))
        # One model serving every coupling in order: skip the index gather.
        self._single = len(models) == 1 and np.array_equal(models[0][1], np.arange(self.count))
        kinks = [np.zeros((self.count, 0))]
        for model, idx in models:
            k = model.kinks()
            block = np.full((self.count, k.shape[1]), np.nan)
            block[idx] = k
            kinks.append(block)
        self.kink_table = np.concatenate(kinks, axis=1)

    def deflection(self, x: np.ndarray) -> np.ndarray:
        """Deflection of every coupling from the body positions ``x``."""
        return x[:-1] - x[1:] - self.nominal

    def force(self, d: np.ndarray, d_dot: np.ndarray) -> np.ndarray:
        """Coupler forces (tension +). Uncoupled couplers only push."""
        if self._single:
            f = self.groups[0][0].force(d, d_dot)
        else:
            f = np.empty(self.count)
            for model, idx in self.groups:
                f[idx] = model.force(d[idx], d_dot[idx])
        if not self.all_coupled:
            f = np.where(self.coupled, f, np.minimum(f, 0.0))
        return f

    @property
    def all_coupled(self) -> bool:
        """True while no coupling has been uncoupled (the common, cheaper case)."""
        return bool(self.coupled.all())

    def free_range(self) -> tuple[np.ndarray, np.ndarray]:
        """Slack range ``(lo, hi)`` of every coupling."""
        lo = np.zeros(self.count)
        hi = np.zeros(self.count)
        for model, idx in self.groups:
            lo[idx], hi[idx] = model.free_range()
        return lo, hi
