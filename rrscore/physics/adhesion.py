"""Wheel-rail adhesion: the adhesion coefficient psi(v) and a creep law, as laws.

The tangential force a driven wheelset can put into the rail is ``psi(v) * N`` (``N`` the
wheel-rail normal force). How much of it is transmitted depends on the slip velocity
``s = omega*r - v`` through the creep law (:func:`creep_force_ratio`), 0 at no slip,
exactly 1 (full ``psi * N``) at ``|s| = s0``, and falling towards a sliding fraction
beyond. The formulas are data (:mod:`rrscore.model.formulas`); an adhesion law is a row of
numbers, which :func:`psi` evaluates (published forms use V in km/h; the code takes v in
m/s).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..jit import kernel, law
from ..model.formulas import (
    CONSTANT,
    DEFAULT_KINETIC_RATIO,
    HYPERBOLIC,
    LAW_HEAD,
    adhesion_law,
    finite,
    rail_condition_factor,
    result,
)
from .tables import interp_one


def adhesion_coefficient(
    formula: str,
    v: ArrayLike,
    params: Mapping[str, Any] | None = None,
    *,
    condition: str | float = "dry",
) -> float | np.ndarray:
    """Adhesion coefficient psi at speed ``v`` [m/s] (arrays ok; only ``|v|`` matters).

    Formulas (V = 3.6*|v| in km/h), see :data:`ADHESION_FORMULAS`:

    * ``"curtius_kniffler"``: ``7.5/(V + 44) + 0.161``
    * ``"electric_ac"``: ``0.28 + 4/(50 + 6V) - 0.0006V``
    * ``"electric_dc"``: ``0.28 + 3/(50 + 20V) - 0.0007V``
    * ``"diesel"``: ``0.118 + 5/(27.5 + V)``
    * ``"constant"``: params ``psi``
    * ``"table"``: params ``speeds`` (m/s, strictly increasing) and ``values``; linear
      interpolation, held constant outside.

    The result is clipped at >= 0: the electric forms cross zero only far beyond train speeds
    (about 469 km/h for AC, 401 km/h for DC), where they are meaningless anyway. It is then
    multiplied by ``rail_condition_factor(condition)`` (default ``"dry"`` = 1).

    Unknown formula, missing/unknown params -> ValueError naming them and what is allowed.
    """
    factor = rail_condition_factor(condition)
    row = adhesion_law(formula, params)
    speeds = np.asarray(v, dtype=float)
    psi = psi_many(row[None, :], np.zeros(speeds.size, dtype=np.int64), speeds.ravel())
    return result(psi.reshape(speeds.shape) * factor)


@kernel(inline=True)
def psi(laws, k, v):  # pragma: no cover (compiled)
    """The adhesion coefficient of law ``k`` (a row of ``laws``) at speed ``v`` (m/s)."""
    row = laws[k]
    speed = abs(v)
    kind = row[0]
    if kind == HYPERBOLIC:
        return max(row[1] + row[2] / (row[3] + row[4] * speed) - row[5] * speed, 0.0)
    if kind == CONSTANT:
        return row[1]
    m = int(row[6])
    return interp_one(speed, row[LAW_HEAD:LAW_HEAD + m], row[LAW_HEAD + m:LAW_HEAD + 2 * m])


@kernel(counted=True)
def psi_many(laws, which, v):  # pragma: no cover (compiled)
    """:func:`psi` of law ``which[i]`` at each speed ``v[i]``, as a fresh array."""
    out = np.empty(v.size)
    for i in range(v.size):
        out[i] = psi(laws, which[i], v[i])
    return out


# --------------------------------------------------------------------------------------------
# Creep law
# --------------------------------------------------------------------------------------------


def _check_s0(s0: float) -> float:
    s0 = finite("s0", s0)
    if s0 <= 0.0:
        raise ValueError(f"s0 must be > 0, got {s0!r}")
    return s0


def creep_force_ratio(
    slip_velocity: ArrayLike, s0: float, kinetic_ratio: float = DEFAULT_KINETIC_RATIO
) -> float | np.ndarray:
    """Transmitted tangential force as a fraction of ``psi*N``, from the slip velocity.

    ``slip_velocity`` is ``s = omega*r - v`` [m/s] (positive: the wheel spins faster than it
    rolls, traction), ``s0`` > 0 the slip velocity of peak adhesion, ``kinetic_ratio`` the
    sliding fraction ``k`` in [0, 1]. With ``x = s/s0``::

        f(x) = 2x / (1 + x**2)                                  for |x| <= 1
        f(x) = sign(x) * (1 - (1 - k) * (1 - 2|x|/(1 + x**2)))  for |x| >  1
             = sign(x) * (k + (1 - k) * 2|x|/(1 + x**2))

    so f is odd, 0 at no slip, rises with slope ``2/s0`` (:func:`creep_slope_at_zero`), peaks
    at exactly 1 at ``|s| = s0`` with zero slope from both sides (value and slope continuous;
    the curvature jumps from -1 to -(1 - k) in x), and falls monotonically towards ``k`` as
    ``|s| -> inf``.

    This is an engineering creep law, not a contact-mechanics model. It borrows the shape of
    Polach's simplified method: the ``x/(1 + x**2)`` form of the adhesion-area term for the
    rising (creep) branch, and friction falling with slip velocity to a fraction of its peak
    for the falling (macro-slip) branch, here with an algebraic rather than exponential decay
    so that the peak and its location are exact parameters and the rising branch has a
    closed-form inverse (:func:`creep_slip_for_ratio`). ``s0`` and ``k`` are calibration
    parameters of the vehicle's adhesion behaviour. Vectorised.
    """
    s0 = _check_s0(s0)
    k = finite("kinetic_ratio", kinetic_ratio)
    if not 0.0 <= k <= 1.0:
        raise ValueError(f"kinetic_ratio must be in [0, 1], got {kinetic_ratio!r}")
    return result(creep_ratio_unchecked(np.asarray(slip_velocity, dtype=float) / s0, k))


@law
def creep_ratio_unchecked(x, k):  # pragma: no cover (compiled)
    """:func:`creep_force_ratio` of ``x = s/s0`` without argument checks (the law the
    simulation evaluates); ``k`` the kinetic ratio."""
    ax = abs(x)
    if ax == 0.0:
        return 0.0 * x  # (keeps a NaN's NaN)
    # 2|x|/(1 + x^2) written as 2/(|x| + 1/|x|): no overflow for huge slips; at |x| = 1
    # it is exactly 1
    hump = 2.0 / (ax + 1.0 / ax)
    # beyond the peak, 1 - (1-k)(1-hump), so that it is exactly 1 at |x| = 1 too
    magnitude = hump if ax <= 1.0 else 1.0 - (1.0 - k) * (1.0 - hump)
    return magnitude if x > 0.0 else -magnitude


def creep_slope_at_zero(s0: float) -> float:
    """Slope of :func:`creep_force_ratio` at zero slip: ``2/s0`` [1/(m/s)].

    Independent of the kinetic ratio. Multiplied by ``psi*N`` it is the creep stiffness
    [N/(m/s)] that sets how stiff the wheelset-slip equation is for an explicit solver.
    """
    return 2.0 / _check_s0(s0)


def creep_slip_for_ratio(ratio: ArrayLike, s0: float) -> float | np.ndarray:
    """Slip velocity [m/s] on the rising branch (``|s| <= s0``) where the force ratio is ``ratio``.

    Inverse of :func:`creep_force_ratio` for ``|ratio| <= 1`` (independent of the kinetic
    ratio): solving ``r = 2x/(1 + x**2)`` for ``|x| <= 1`` gives ``x = (1 - sqrt(1 - r**2))/r``,
    evaluated as ``x = r/(1 + sqrt(1 - r**2))`` (no cancellation, no division by zero), and
    ``s = s0*x``. Odd; ``|ratio| > 1`` raises ValueError. Vectorised.
    """
    s0 = _check_s0(s0)
    r = np.asarray(ratio, dtype=float)
    if np.any(~(np.abs(r) <= 1.0)):
        raise ValueError("creep force ratio must satisfy |ratio| <= 1")
    return result(s0 * creep_slip_fraction(r))


@law
def creep_slip_fraction(ratio):  # pragma: no cover (compiled)
    """The rising branch's ``x = s/s0`` at the force ratio ``ratio`` (``|ratio| <= 1``)."""
    return ratio / (1.0 + np.sqrt(1.0 - ratio * ratio))
