"""Resistance to motion: the laws the simulation evaluates, and checked helpers.

The running resistance of a vehicle is a quadratic in speed, ``R(v) = c0 + c1*|v| +
c2*v**2`` [N, a magnitude: it acts against the motion], its coefficients from a published
formula (:mod:`rrscore.model.formulas`); the starting resistance its excess at standstill,
blending out by ``v_blend``; gravity ``-m g sin(atan(grade))`` along the grade; the air
``-rho CdA u|u| / 2`` at the air speed ``u``. Each law is written once: the simulation calls
them with numbers, the helpers below (and anyone) with arrays.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..jit import law
from ..model.formulas import (
    AIR_DENSITY,
    RunningResistance,
    StartingResistance,
    finite,
    result,
)
from ..model.units import G

# --------------------------------------------------------------------------------------------
# The laws, as the simulation evaluates them (compiled; arrays broadcast from Python). The
# checked functions further down call them, so each piece of physics is written once.
# --------------------------------------------------------------------------------------------


@law
def quadratic_force(speed, c0, c1, c2):  # pragma: no cover (compiled)
    """Running resistance magnitude ``c0 + c1*speed + c2*speed**2`` [N], ``speed = |v|``."""
    return c0 + speed * (c1 + c2 * speed)


@law
def starting_force(speed, force0, v_blend):  # pragma: no cover (compiled)
    """Extra starting resistance ``force0 * max(0, 1 - speed/v_blend)`` [N] (``v_blend``
    > 0; written without a branch, so that a loop over vehicles vectorizes)."""
    return force0 * max(1.0 - speed / v_blend, 0.0)


@law
def gravity_force(weight, grade):  # pragma: no cover (compiled)
    """Gravity along the track [N] for weights ``m g``: ``-m g sin(atan(grade))``, exactly."""
    return -weight * grade / np.sqrt(1.0 + grade * grade)


@law
def air_force(relative_v, half_rho_cd_a):  # pragma: no cover (compiled)
    """Signed air force ``-0.5 rho CdA u|u|`` [N] at air speed ``u = v - wind``."""
    return -half_rho_cd_a * relative_v * abs(relative_v)


def running_force(running: RunningResistance, v: ArrayLike) -> float | np.ndarray:
    """A running resistance's magnitude [N] at speed ``v`` [m/s]; arrays ok."""
    speed = np.abs(np.asarray(v, dtype=float))
    return result(quadratic_force(speed, running.c0, running.c1, running.c2))


def total_resistance(
    v: ArrayLike, running: RunningResistance, starting: StartingResistance | None = None
) -> float | np.ndarray:
    """Total resistance magnitude [N]: the running resistance plus the starting one's excess
    (:func:`rrscore.model.formulas.starting_resistance`), so the total at v = 0 is the
    published starting resistance and for ``|v| >= v_blend`` the running resistance."""
    speed = np.abs(np.asarray(v, dtype=float))
    r = quadratic_force(speed, running.c0, running.c1, running.c2)
    if starting is not None:
        r = r + starting_force(speed, starting.force0, starting.v_blend)
    return result(r)


# --------------------------------------------------------------------------------------------
# Grade, wind, tunnels
# --------------------------------------------------------------------------------------------


def grade_force(mass_kg: ArrayLike, grade_ratio: ArrayLike, g: float = G) -> float | np.ndarray:
    """Gravity force along the track [N], signed in +x: ``-m * g * sin(atan(grade))``.

    ``grade_ratio`` is rise over run (8 permille = 0.008), positive uphill in +x, so an uphill
    grade gives a negative force. Exact: ``sin(atan(i)) = i / sqrt(1 + i**2)``. Arrays ok.
    """
    m = np.asarray(mass_kg, dtype=float)
    i = np.asarray(grade_ratio, dtype=float)
    return result(gravity_force(m * g, i))


def air_drag(
    v: ArrayLike, wind_v: ArrayLike = 0.0, *, cd_a: float, rho: float = AIR_DENSITY
) -> float | np.ndarray:
    """Aerodynamic force along the track [N], signed in +x, with wind.

    ``F = -0.5 * rho * cd_a * (v - w) * |v - w|`` where ``w = wind_v`` is the wind speed along
    the track (positive = blowing towards +x, a tailwind for a train moving in +x), ``cd_a``
    the drag area [m^2] and ``rho`` the air density [kg/m^3].

    The v**2 term of a running-resistance formula already contains still-air drag; to add only
    the effect of wind use ``air_drag(v, w, ...) - air_drag(v, 0, ...)``.
    """
    cd_a = finite("cd_a", cd_a)
    rho = finite("rho", rho)
    if cd_a < 0.0 or rho < 0.0:
        raise ValueError(f"cd_a and rho must be >= 0, got cd_a={cd_a!r}, rho={rho!r}")
    rel = np.asarray(v, dtype=float) - np.asarray(wind_v, dtype=float)
    return result(air_force(rel, 0.5 * rho * cd_a))


def tunnel_drag_factor(blockage_ratio: ArrayLike, k: float = 1.0) -> float | np.ndarray:
    """Multiplier on the aerodynamic (v**2) running resistance inside a tunnel.

    ``Tf = 1 + k * (1/(1 - B)**2 - 1) = 1 + k * B*(2 - B)/(1 - B)**2``,
    ``B`` = train cross-section / tunnel cross-section, ``0 <= B < 1``.

    This is an engineering approximation, not a published standard: with ``k = 1`` it is the
    one-dimensional continuity estimate in which all displaced air flows back through the
    annulus, so the air speed relative to the train rises by ``1/(1 - B)`` and drag by its
    square (B = 0.2 gives 1.5625). That overestimates short trains in long tunnels, which push
    air ahead of them; ``k`` (>= 0) calibrates against measurements, and a config can give the
    factor directly instead (:func:`tunnel_factor`).
    """
    k = finite("k", k)
    if k < 0.0:
        raise ValueError(f"k must be >= 0, got {k!r}")
    b = np.asarray(blockage_ratio, dtype=float)
    if np.any(~((b >= 0.0) & (b < 1.0))):
        raise ValueError("blockage_ratio must be in [0, 1)")
    return result(1.0 + k * (1.0 / (1.0 - b) ** 2 - 1.0))


def tunnel_factor(
    *, factor: float | None = None, blockage_ratio: float | None = None, k: float = 1.0
) -> float:
    """Tunnel factor from a config: either ``factor`` directly or from ``blockage_ratio``.

    Exactly one of the two must be given; ``k`` is passed to :func:`tunnel_drag_factor`.
    Apply the result with :meth:`RunningResistance.with_aero_factor`.
    """
    if (factor is None) == (blockage_ratio is None):
        raise ValueError("give exactly one of factor or blockage_ratio")
    if factor is not None:
        f = finite("factor", factor)
        if f < 0.0:
            raise ValueError(f"tunnel factor must be >= 0, got {factor!r}")
        return f
    return float(tunnel_drag_factor(finite("blockage_ratio", blockage_ratio), k))
