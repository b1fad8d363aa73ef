"""Wheel-rail adhesion: the adhesion coefficient psi(v) and a creep law.

The available tangential force of a driven wheelset is ``psi(v) * N`` (N the wheel-rail normal
force). How much of it is actually transmitted depends on the slip velocity
``s = omega*r - v`` through :func:`creep_force_ratio`, which is 0 at no slip, reaches exactly 1
(full ``psi * N``) at ``|s| = s0`` and falls towards a sliding fraction beyond it.

Adhesion formulas are named data in :data:`ADHESION_FORMULAS`; published ones use V in km/h,
the code takes v in m/s (``V = 3.6*|v|``). All functions are vectorised.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numba import njit
from numpy.typing import ArrayLike

from ._formulas import by_name as _formulas
from ._formulas import check_params as _check_params
from ._formulas import finite as _finite
from ._formulas import result as _result
from .compiled import _interval

__all__ = [
    "ADHESION_FORMULAS",
    "DEFAULT_KINETIC_RATIO",
    "KMH_PER_MS",
    "RAIL_CONDITIONS",
    "AdhesionFormula",
    "adhesion_coefficient",
    "adhesion_law",
    "creep_force_ratio",
    "creep_ratio_unchecked",
    "creep_slip_for_ratio",
    "creep_slope_at_zero",
    "rail_condition_factor",
]

KMH_PER_MS = 3.6
"""km/h per m/s."""

DEFAULT_KINETIC_RATIO = 0.7
"""Default sliding fraction of the peak adhesion force for :func:`creep_force_ratio`."""






# --------------------------------------------------------------------------------------------
# Adhesion coefficient
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AdhesionFormula:
    """One named adhesion-coefficient formula, as data.

    ``kind`` says how it is evaluated:

    * ``"hyperbolic"``: ``psi = a + b/(c + d*V) - e*V`` with V in km/h; every published formula
      here is a fixed coefficient set of this shape.
    * ``"constant"``: ``psi`` from the params.
    * ``"table"``: ``speeds`` [m/s, strictly increasing] and ``values`` from the params, linear
      interpolation in ``|v|``, held constant outside the table.
    """

    name: str
    kind: Literal["hyperbolic", "constant", "table"]
    description: str
    params: tuple[str, ...] = ()
    a: float = 0.0
    b: float = 0.0
    c: float = 1.0
    d: float = 0.0
    e: float = 0.0




ADHESION_FORMULAS: dict[str, AdhesionFormula] = _formulas(
    AdhesionFormula(
        "curtius_kniffler",
        "hyperbolic",
        "Curtius-Kniffler: psi = 7.5/(V + 44) + 0.161, V in km/h.",
        a=0.161,
        b=7.5,
        c=44.0,
        d=1.0,
    ),
    AdhesionFormula(
        "electric_ac",
        "hyperbolic",
        "AC electric locomotives (Russian traction rules): "
        "psi = 0.28 + 4/(50 + 6V) - 0.0006V, V in km/h.",
        a=0.28,
        b=4.0,
        c=50.0,
        d=6.0,
        e=0.0006,
    ),
    AdhesionFormula(
        "electric_dc",
        "hyperbolic",
        "DC electric locomotives (Russian traction rules): "
        "psi = 0.28 + 3/(50 + 20V) - 0.0007V, V in km/h.",
        a=0.28,
        b=3.0,
        c=50.0,
        d=20.0,
        e=0.0007,
    ),
    AdhesionFormula(
        "diesel",
        "hyperbolic",
        "Diesel locomotives (Russian traction rules): psi = 0.118 + 5/(27.5 + V), V in km/h.",
        a=0.118,
        b=5.0,
        c=27.5,
        d=1.0,
    ),
    AdhesionFormula(
        "constant",
        "constant",
        "Constant adhesion coefficient; param psi (>= 0).",
        params=("psi",),
    ),
    AdhesionFormula(
        "table",
        "table",
        "Tabulated psi(|v|): params speeds [m/s, strictly increasing] and values (>= 0); "
        "linear interpolation, held constant outside the table.",
        params=("speeds", "values"),
    ),
)
"""Registry of adhesion formulas by name; each entry is an :class:`AdhesionFormula`."""


RAIL_CONDITIONS: dict[str, float] = {
    "dry": 1.0,
    "wet": 0.65,
    "sanded": 1.25,
    "greasy": 0.4,
    "leaves": 0.3,
}
"""Multipliers on the dry-rail psi(v) for the state of the rail head.

Typical engineering values for rough planning, not normative: wet rail loses roughly a third of
the dry adhesion, sanding recovers and slightly exceeds it, and greasy rail or crushed leaves
(the "low adhesion" autumn case) can leave a third or less. Calibrate per route where it matters.
"""


def rail_condition_factor(condition: str | float) -> float:
    """Multiplier for a rail condition: a name from :data:`RAIL_CONDITIONS` or a number >= 0."""
    if isinstance(condition, str):
        try:
            return RAIL_CONDITIONS[condition]
        except KeyError:
            allowed = ", ".join(sorted(RAIL_CONDITIONS))
            raise ValueError(
                f"unknown rail condition {condition!r}; allowed: {allowed} or a number"
            ) from None
    factor = _finite("rail condition factor", condition)
    if factor < 0.0:
        raise ValueError(f"rail condition factor must be >= 0, got {condition!r}")
    return factor




def _table(formula: str, given: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    speeds = np.asarray(given["speeds"], dtype=float)
    values = np.asarray(given["values"], dtype=float)
    if speeds.ndim != 1 or speeds.shape != values.shape or speeds.size == 0:
        raise ValueError(f"formula {formula!r}: speeds and values must be equal-length 1-d lists")
    if not (np.all(np.isfinite(speeds)) and np.all(np.isfinite(values))):
        raise ValueError(f"formula {formula!r}: speeds and values must be finite")
    if np.any(np.diff(speeds) <= 0.0):
        raise ValueError(f"formula {formula!r}: speeds must be strictly increasing")
    if np.any(values < 0.0):
        raise ValueError(f"formula {formula!r}: values must be >= 0")
    return speeds, values


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
    psi = adhesion_law(formula, params)(np.asarray(v, dtype=float))
    return _result(psi * factor)


def adhesion_law(
    formula: str, params: Mapping[str, Any] | None = None
) -> Callable[[np.ndarray], np.ndarray]:
    """A checked, fast ``psi(v)`` for arrays of speeds [m/s]: the formula and params are
    validated once, here, so the returned function can run in the integrator's hot path.
    Same formulas and errors as :func:`adhesion_coefficient` (without the rail factor)."""
    try:
        spec = ADHESION_FORMULAS[formula]
    except (KeyError, TypeError):
        allowed = ", ".join(sorted(ADHESION_FORMULAS))
        raise ValueError(f"unknown adhesion formula {formula!r}; allowed: {allowed}") from None
    given = _check_params(formula, spec.params, params)

    if spec.kind == "hyperbolic":
        a, b, c, d, e = spec.a, spec.b, spec.c, spec.d * KMH_PER_MS, spec.e * KMH_PER_MS

        def psi(v: np.ndarray) -> np.ndarray:
            speed = np.abs(v)
            return np.maximum(a + b / (c + d * speed) - e * speed, 0.0)

        psi.compiled = (0, [a, b, c, d, e], np.zeros(0), np.zeros(0))  # type: ignore[attr-defined]

    elif spec.kind == "constant":
        value = _finite(f"{formula}.psi", given["psi"])
        if value < 0.0:
            raise ValueError(f"formula {formula!r}: psi must be >= 0, got {value!r}")

        def psi(v: np.ndarray) -> np.ndarray:
            return np.full(np.shape(v), value)

        psi.compiled = (1, [value, 0.0, 0.0, 0.0, 0.0], np.zeros(0), np.zeros(0))  # type: ignore[attr-defined]

    else:
        speeds, values = _table(formula, given)

        def psi(v: np.ndarray) -> np.ndarray:
            return np.interp(np.abs(v), speeds, values)  # holds the end values outside

        psi.compiled = (2, [0.0] * 5, np.asarray(speeds, dtype=float),  # type: ignore[attr-defined]
                        np.asarray(values, dtype=float))

    return psi


@njit(cache=True)
def interp_one(x, xp, fp):  # pragma: no cover (compiled)
    """``np.interp(x, xp, fp)`` for one ``x`` in a table of strictly increasing finite
    ``xp``, in numpy's arithmetic (the same slope, the same fallbacks), for the table
    law in compiled code: numba's own ``np.interp`` took about 2 s of a first run's
    compile time."""
    if x != x:
        return x
    j = _interval(x, xp, np.int64(0))  # (typed: the body pass's own compiled _interval)
    if j == -1:
        return fp[0]
    if j == xp.size - 1 or xp[j] == x:
        return fp[j]
    slope = (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j])
    value = slope * (x - xp[j]) + fp[j]
    if value != value:  # numpy's fallback where the slope overflows
        value = slope * (x - xp[j + 1]) + fp[j + 1]
        if value != value and fp[j] == fp[j + 1]:
            value = fp[j]
    return value


# --------------------------------------------------------------------------------------------
# Creep law
# --------------------------------------------------------------------------------------------


def _check_s0(s0: float) -> float:
    s0 = _finite("s0", s0)
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
    k = _finite("kinetic_ratio", kinetic_ratio)
    if not 0.0 <= k <= 1.0:
        raise ValueError(f"kinetic_ratio must be in [0, 1], got {kinetic_ratio!r}")
    return _result(creep_ratio_unchecked(np.asarray(slip_velocity, dtype=float) / s0, k))


def creep_ratio_unchecked(x: np.ndarray, k: float | np.ndarray) -> np.ndarray:
    """:func:`creep_force_ratio` of ``x = s/s0`` without argument checks, for the hot path.

    ``k`` may be an array (one kinetic ratio per axle).
    """
    ax = np.abs(x)
    # 2|x|/(1 + x^2) written as 2/(|x| + 1/|x|): no overflow for huge slips, and 1/0 -> inf
    # gives exactly 0 at x = 0; at |x| = 1 it is exactly 1.
    with np.errstate(divide="ignore"):
        hump = 2.0 / (ax + 1.0 / ax)
    # Beyond the peak, written as 1 - (1-k)(1-hump) so that it is exactly 1 at |x| = 1 too.
    magnitude = np.where(ax <= 1.0, hump, 1.0 - (1.0 - k) * (1.0 - hump))
    return np.sign(x) * magnitude


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
    return _result(s0 * r / (1.0 + np.sqrt(1.0 - r * r)))
