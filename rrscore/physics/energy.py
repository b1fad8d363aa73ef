"""Energy: the work of every force, integrated with the motion, and the kinetic energy.

Each flow is a state of its own (per vehicle, and the coupler work per coupling),
integrated from the same forces the motion uses, outside the error control (they feed
nothing back). Positive values are energy:

* ``drive``: put in by traction (taken out by a dynamic brake: negative), the rolling
  axles' torques and body forces times the speed, a slipping axle's torque times its spin;
* ``brake``: dissipated by friction brakes (shoes, discs, the plugins' ``q_r``);
* ``resistance``: dissipated by running, curve and starting resistance;
* ``gravity``: the work of gravity (the fall of potential energy);
* ``air``: the work of the air force with wind;
* ``slip``: dissipated in the wheel-rail contact of slipping axles;
* ``coupler``: taken up by each coupling (stored in its springs, dissipated in its gear).

The flows are written where the forces are (:mod:`rrscore.physics.bodies`,
:mod:`rrscore.physics.wheelsets`), so that the balance ``drive - brake - resistance +
gravity + air - slip - coupler = change of kinetic energy`` holds to the solver's
accuracy, the kinetic energy including the rotating masses (every axle's ``J omega^2 / 2``).
"""

from __future__ import annotations

import numpy as np

from ..jit import law
from .bodies import ENERGY_FLOWS

#: The energy signals of every vehicle: each flow's cumulative work and the kinetic energy.
ENERGY_SIGNALS = tuple(f"energy_{f}_J" for f in (*ENERGY_FLOWS, "kinetic"))


@law
def kinetic(mass, v):  # pragma: no cover (compiled)
    """Kinetic energy ``m v^2 / 2`` of a body (or ``J omega^2 / 2`` of a wheelset), J."""
    return 0.5 * mass * v * v


def kinetic_energy(mass: np.ndarray, v: np.ndarray, axle_inertia: np.ndarray,
                   omega: np.ndarray, axle_vehicle: np.ndarray) -> np.ndarray:
    """Each vehicle's kinetic energy with its axles' rotation, J."""
    spin = np.bincount(axle_vehicle, kinetic(axle_inertia, omega), mass.size)
    return kinetic(mass, v) + spin


def balance(totals: dict[str, float], kinetic_change: float) -> float:
    """The energy account's balance error, J: energy in less energy out less the change of
    kinetic energy (``totals``: the train's flows by name, :data:`~rrscore.physics.
    bodies.ENERGY_FLOWS` and ``coupler``)."""
    sources = (totals["drive"] - totals["brake"] - totals["resistance"] + totals["gravity"]
               + totals["air"] - totals["slip"] - totals["coupler"])
    return sources - kinetic_change


#: The balance error beyond which the account does not close: this fraction of the
#: largest flow. The solver's tolerances keep it far below (1e-6 and less on the shipped
#: drives); beyond it the motion itself is in doubt (a fixed step too long for the
#: train's stiffest coupler, for one).
BALANCE_TOLERANCE = 1e-3
#: A balance error this small (J) is nothing, however small the flows (a drive that
#: hardly moves: its flows are rounding).
BALANCE_FLOOR = 1e-6


def balance_warning(energy: dict[str, float]) -> str | None:
    """A warning where the energy account (the summary's ``energy``) misses by more than
    :data:`BALANCE_TOLERANCE` of its largest flow (and :data:`BALANCE_FLOOR`); None where
    it closes."""
    largest = max(abs(v) for k, v in energy.items() if k != "balance_error_J")
    error = energy["balance_error_J"]
    if abs(error) <= max(BALANCE_TOLERANCE * largest, BALANCE_FLOOR):  # (a NaN warns)
        return None
    share = abs(error) / largest if largest > 0 else np.inf
    return (f"the energy account misses by {error:.4g} J, {100 * share:.3g} % of its "
            f"largest flow (more than {100 * BALANCE_TOLERANCE:g} %): the motion is not "
            "to be trusted; a fixed step too long for the train (solver.step) or "
            "tolerances too loose (solver.rtol) do this")
