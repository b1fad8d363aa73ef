"""Components: the parts of a train whose continuous states make up the state vector.

Bodies, wheelsets, couplings and vehicle plugins' own states are components.
Each one

* declares its state blocks (:meth:`Component.declare`, see :mod:`rrscore.state`),
* adds its forces to a shared :class:`Loads` record (:meth:`Component.forces`),
* writes the derivatives of its own blocks (:meth:`Component.rates`),
* lists its events (:meth:`Component.events`) and output signals
  (:meth:`Component.signals`).

The right-hand side calls ``forces`` of every component in order, then the
bodies turn the summed forces into accelerations, then every ``rates`` runs.
Both phases work on whole arrays and have no side effects: the solver may
evaluate trial states and throw them away. Discrete modes (a wheel rolling or
slipping, a coupling coupled or not, the direction friction acts in) are held
by the components and change only at events, between steps.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .state import StateLayout


class Loads:
    """Forces gathered in one right-hand-side evaluation (train frame, per vehicle).

    ``force``: signed forces, N. ``resist``: magnitudes of Coulomb-like
    resistances, N, applied against motion. ``accel``: set by the bodies once
    all forces are in. Components may keep intermediate arrays as attributes
    (``coupler_force``) for their own ``rates`` and signals.
    """

    __slots__ = ("force", "resist", "accel", "coupler_force", "rail", "gravity", "air",
                 "rail_resist", "net")

    def __init__(self, force: np.ndarray, resist: np.ndarray) -> None:
        self.force = force
        self.resist = resist
        self.accel: np.ndarray | None = None
        self.coupler_force: np.ndarray | None = None
        self.rail: tuple[np.ndarray, np.ndarray] | None = None
        self.gravity: np.ndarray | None = None  # gravity along the track, N
        self.air: np.ndarray | None = None  # air force relative to the wind, N
        #: Part of ``resist`` that is locked wheels sliding on the rail, N per vehicle.
        self.rail_resist: np.ndarray | None = None
        #: Net force per vehicle after the Coulomb rule, N (set by a rigid train's bodies).
        self.net: np.ndarray | None = None


@dataclass
class EventBlock:
    """A vector of event functions ``g(t, y, f)`` and what happens when one crosses zero.

    ``direction`` -1: only falling crossings (+ to -) count; 0: both.
    ``action(t, y, idx)`` changes the state (and modes) for the crossing
    components ``idx`` and returns a new ``y``, or ``y`` itself to decline
    (nothing changed); None for events that only end a step (kinks).
    ``condition`` events also fire when ``g < 0`` at a restart (after a control update).
    ``values`` may return None when no component can cross (nothing to watch).
    """

    name: str
    values: Callable[[float, np.ndarray, np.ndarray], np.ndarray | None]
    direction: int
    action: Callable[[float, np.ndarray, np.ndarray], np.ndarray] | None = None
    condition: bool = False


#: A signal: (what it is per: "vehicle" or "coupling", unit, function of (y, loads)).
Signal = tuple[str, str, Callable[[np.ndarray, Loads], np.ndarray]]


class Component:
    """Base of components; every method has a do-nothing default."""

    name = "component"

    def declare(self, layout: StateLayout) -> None:
        """Add this component's state blocks to ``layout`` (and keep their slices)."""

    def initial(self, y: np.ndarray) -> None:
        """Write the component's initial states into ``y`` (bodies are set before)."""

    def forces(self, t: float, y: np.ndarray, loads: Loads) -> None:
        """Add this component's forces to ``loads`` (phase 1 of the right-hand side)."""

    def rates(self, t: float, y: np.ndarray, loads: Loads, dy: np.ndarray) -> None:
        """Write the derivatives of this component's blocks into ``dy`` (phase 2)."""

    def commit(self, y: np.ndarray) -> None:
        """After each accepted step: update held modes that do not change the right-hand
        side (a standing vehicle that has started to move now has a direction)."""

    def events(self) -> list[EventBlock]:
        """This component's events."""
        return []

    def signals(self) -> dict[str, Signal]:
        """Output signals by name."""
        return {}
