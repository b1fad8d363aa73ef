"""Resistance to motion of rail vehicles, as data.

A vehicle config names a running-resistance formula from :data:`FORMULAS` and gives its
coefficients; :func:`running_resistance` turns that into a :class:`RunningResistance`, a plain
quadratic in speed with SI coefficients::

    R(v) = c0 + c1*|v| + c2*v**2        [N, a magnitude; the caller applies it against motion]

Every formula reduces to this shape so the simulation can evaluate whole arrays of vehicles at
every integration stage with three multiply-adds and no per-vehicle branching.

Units
-----
Everything in the code is SI: speed ``v`` in m/s, mass in kg, force in N. Published formulas are
written with ``V`` in km/h (``V = 3.6 * v``) and give the *specific* resistance ``w`` in N/kN,
i.e. newtons per kilonewton of vehicle weight, so ``R = w * m * g / 1000``. ``q0`` is the axle
load in tonnes, ``q0 = m / num_axles / 1000``.

Starting resistance
-------------------
The combination rule used throughout rrscore (see :func:`total_resistance`) is additive::

    R_total(v) = running(v) + starting.force(v)
    starting.force(v) = force0 * max(0, 1 - |v| / v_blend)
    force0 = max(0, w_start * m * g / 1000 - running.c0)

so at standstill the total equals the published starting resistance ``w_start`` exactly (or the
running resistance, if that is larger), the excess falls off linearly, and at and above
``v_blend`` the total is the running resistance alone.

The remaining helpers (curves, grade, wind, tunnels) are small, vectorised, stand-alone
functions; the caller decides how to add them up.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, TypeVar

import numpy as np
from numpy.typing import ArrayLike

from ._formulas import by_name as _formulas
from ._formulas import check_params as _check_params
from ._formulas import finite as _finite
from ._formulas import result as _result
from .units import G

__all__ = [
    "AIR_DENSITY",
    "AREA_LBF_PER_TON_PER_DEGREE",
    "CHORD_HALF_M",
    "DEFAULT_V_BLEND",
    "FORMULAS",
    "G",
    "KMH_PER_MS",
    "LBF_PER_SHORT_TON_IN_N_PER_KN",
    "ResistanceFormula",
    "RunningResistance",
    "StartingResistance",
    "air_drag",
    "air_force",
    "curve_specific",
    "curve_specific_area",
    "grade_force",
    "gravity_force",
    "quadratic_force",
    "running_resistance",
    "specific_to_force",
    "starting_resistance",
    "starting_force",
    "starting_resistance_specific",
    "total_resistance",
    "tunnel_drag_factor",
    "tunnel_factor",
]

_T = TypeVar("_T")


KMH_PER_MS = 3.6
"""km/h per m/s: ``V_kmh = KMH_PER_MS * v``."""

AIR_DENSITY = 1.225
"""ISA sea-level air density [kg/m^3]."""

# 1 lbf = 0.45359237 kg * 9.80665 m/s^2 = 4.4482216152605 N (exact by definition) and a short
# ton-force is 2000 lbf, so "1 lbf per short ton" is the dimensionless ratio 1/2000 exactly:
#   4.4482216152605 N / (907.18474 kg * 9.80665 m/s^2) = 0.0005 N/N = 0.5 N/kN.
LBF_PER_SHORT_TON_IN_N_PER_KN = 1000.0 / 2000.0
"""1 lbf per short ton-force expressed in N/kN (exactly 0.5)."""

AREA_LBF_PER_TON_PER_DEGREE = 0.8
"""AREA curve resistance: 0.8 lbf per short ton per degree of curvature."""

CHORD_HALF_M = 50.0 * 0.3048
"""Half of the 100 ft chord of the chord definition of degree of curvature, in m (15.24 m)."""






def _check_vehicle(mass_kg: float, num_axles: int) -> tuple[float, int]:
    mass = _finite("mass_kg", mass_kg)
    if mass <= 0.0:
        raise ValueError(f"mass_kg must be > 0, got {mass_kg!r}")
    if isinstance(num_axles, bool) or not isinstance(num_axles, numbers.Integral):
        raise ValueError(f"num_axles must be an integer, got {num_axles!r}")
    if num_axles < 1:
        raise ValueError(f"num_axles must be >= 1, got {num_axles!r}")
    return mass, int(num_axles)


def specific_to_force(w: ArrayLike, mass_kg: float, g: float = G) -> float | np.ndarray:
    """Convert a specific resistance ``w`` [N/kN] into a force [N] for a vehicle of ``mass_kg``.

    ``R = w * m * g / 1000``; works on arrays of ``w``.
    """
    return _result(np.asarray(w, dtype=float) * (mass_kg * g / 1000.0))


# --------------------------------------------------------------------------------------------
# Array kernels: the formulas below as the simulation evaluates them, for whole trains at
# once and without checks. The checked functions further down call these, so each piece of
# physics is written once.
# --------------------------------------------------------------------------------------------


def quadratic_force(speed: np.ndarray, c0: np.ndarray, c1: np.ndarray,
                    c2: np.ndarray) -> np.ndarray:
    """Running resistance magnitude ``c0 + c1*speed + c2*speed**2`` [N], ``speed = |v|``."""
    return c0 + speed * (c1 + c2 * speed)


def starting_force(speed: np.ndarray, force0: np.ndarray, v_blend: np.ndarray) -> np.ndarray:
    """Extra starting resistance ``force0 * max(0, 1 - speed/v_blend)`` [N]."""
    return force0 * np.maximum(0.0, 1.0 - speed / v_blend)


def gravity_force(weight: np.ndarray, grade: np.ndarray) -> np.ndarray:
    """Gravity along the track [N] for weights ``m g``: ``-m g sin(atan(grade))``, exactly."""
    return -weight * grade / np.sqrt(1.0 + grade * grade)


def air_force(relative_v: np.ndarray, half_rho_cd_a: np.ndarray) -> np.ndarray:
    """Signed air force ``-0.5 rho CdA u|u|`` [N] at air speed ``u = v - wind``."""
    return -half_rho_cd_a * relative_v * np.abs(relative_v)


# --------------------------------------------------------------------------------------------
# Running resistance
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunningResistance:
    """Running resistance of one vehicle as a quadratic in speed, SI coefficients.

    ``force(v) = c0 + c1*|v| + c2*v**2`` [N] is a magnitude: the caller applies it against the
    direction of motion (and decides what happens at exactly v = 0, where it acts like static
    friction up to ``c0``).

    The coefficients must make ``force(v) >= 0`` for every speed, otherwise "resistance" would
    push the train: ``c0 >= 0``, ``c2 >= 0`` and either ``c1 >= 0`` or ``c1**2 <= 4*c0*c2``.
    """

    c0: float  # N
    c1: float  # N/(m/s)
    c2: float  # N/(m/s)^2

    def __post_init__(self) -> None:
        c0 = _finite("c0", self.c0)
        c1 = _finite("c1", self.c1)
        c2 = _finite("c2", self.c2)
        # Non-negative on |v| >= 0 is exactly: c0 >= 0, c2 >= 0 and, if the linear term is
        # negative, a non-positive discriminant (the minimum of the parabola is not below 0).
        if c0 < 0.0 or c2 < 0.0 or (c1 < 0.0 and c1 * c1 > 4.0 * c0 * c2):
            raise ValueError(
                f"running resistance c0={c0!r}, c1={c1!r}, c2={c2!r} is negative at some speed"
            )
        object.__setattr__(self, "c0", c0)
        object.__setattr__(self, "c1", c1)
        object.__setattr__(self, "c2", c2)

    def force(self, v: ArrayLike) -> float | np.ndarray:
        """Resistance magnitude [N] at speed ``v`` [m/s]; arrays are evaluated elementwise."""
        speed = np.abs(np.asarray(v, dtype=float))
        return _result(quadratic_force(speed, self.c0, self.c1, self.c2))

    def with_aero_factor(self, factor: float) -> RunningResistance:
        """Copy with the v**2 (aerodynamic) coefficient multiplied by ``factor`` (e.g. tunnels).

        The v**2 term of a quadratic fit is conventionally taken as the aerodynamic part, which
        is what a tunnel factor scales; ``c0`` and ``c1`` are unchanged.
        """
        f = _finite("factor", factor)
        if f < 0.0:
            raise ValueError(f"aerodynamic factor must be >= 0, got {factor!r}")
        return RunningResistance(self.c0, self.c1, self.c2 * f)


@dataclass(frozen=True)
class ResistanceFormula:
    """One named running-resistance formula, as data.

    ``kind`` says how it is evaluated:

    * ``"specific"``: ``w = a + b*V + c*V**2 + (d + e*V + f*V**2)/q0`` in N/kN, V in km/h,
      q0 in t. The published Russian formulas are fixed coefficient sets of this shape; a
      formula with ``params`` takes those coefficient names from the vehicle config instead.
    * ``"davis"``: ``R = A + B*v + C*v**2`` in SI, all three from the config.
    * ``"none"``: zero resistance.
    """

    name: str
    kind: Literal["specific", "davis", "none"]
    description: str
    params: tuple[str, ...] = ()
    a: float = 0.0
    b: float = 0.0
    c: float = 0.0
    d: float = 0.0
    e: float = 0.0
    f: float = 0.0




FORMULAS: dict[str, ResistanceFormula] = _formulas(
    ResistanceFormula(
        "freight_4axle_roller",
        "specific",
        "Loaded 4-axle freight car, roller bearings (Russian traction rules): "
        "w = 0.7 + (3 + 0.1V + 0.0025V^2)/q0 [N/kN], V in km/h, q0 axle load in t.",
        a=0.7,
        d=3.0,
        e=0.1,
        f=0.0025,
    ),
    ResistanceFormula(
        "freight_8axle_roller",
        "specific",
        "Loaded 8-axle freight car, roller bearings (Russian traction rules): "
        "w = 0.7 + (6 + 0.038V + 0.0021V^2)/q0 [N/kN], V in km/h, q0 axle load in t.",
        a=0.7,
        d=6.0,
        e=0.038,
        f=0.0021,
    ),
    ResistanceFormula(
        "freight_empty",
        "specific",
        "Empty freight car, axle load q0 <= 6 t (Russian traction rules): "
        "w = 1.0 + 0.044V + 0.00024V^2 [N/kN], V in km/h. The q0 range is not enforced.",
        a=1.0,
        b=0.044,
        c=0.00024,
    ),
    ResistanceFormula(
        "passenger",
        "specific",
        "Passenger car (Russian traction rules): "
        "w = 0.7 + (8 + 0.16V + 0.0023V^2)/q0 [N/kN], V in km/h, q0 axle load in t.",
        a=0.7,
        d=8.0,
        e=0.16,
        f=0.0023,
    ),
    ResistanceFormula(
        "loco_power",
        "specific",
        "Locomotive under power (Russian traction rules): "
        "w = 1.9 + 0.01V + 0.0003V^2 [N/kN], V in km/h.",
        a=1.9,
        b=0.01,
        c=0.0003,
    ),
    ResistanceFormula(
        "loco_coasting",
        "specific",
        "Locomotive coasting / idle, no traction (Russian traction rules): "
        "w = 2.4 + 0.011V + 0.00035V^2 [N/kN], V in km/h.",
        a=2.4,
        b=0.011,
        c=0.00035,
    ),
    ResistanceFormula(
        "davis",
        "davis",
        "Davis form per vehicle in SI: R = A + B*v + C*v^2 with A [N], B [N/(m/s)], "
        "C [N/(m/s)^2], v in m/s (convert published units before use).",
        params=("A", "B", "C"),
    ),
    ResistanceFormula(
        "specific",
        "specific",
        "Any published specific formula w = a + b*V + c*V^2 [N/kN] with V in km/h; "
        "params a [N/kN], b [N/kN per km/h], c [N/kN per (km/h)^2].",
        params=("a", "b", "c"),
    ),
    ResistanceFormula("none", "none", "No running resistance (R = 0)."),
)
"""Registry of running-resistance formulas by name; each entry is a :class:`ResistanceFormula`."""


def _lookup(registry: Mapping[str, _T], kind: str, name: str) -> _T:
    try:
        return registry[name]
    except (KeyError, TypeError):
        allowed = ", ".join(sorted(registry))
        raise ValueError(f"unknown {kind} {name!r}; allowed: {allowed}") from None




def running_resistance(
    formula: str,
    mass_kg: float,
    num_axles: int,
    params: Mapping[str, float] | None = None,
    g: float = G,
) -> RunningResistance:
    """Build the running-resistance quadratic of one vehicle from a named formula.

    Specific formulas (N/kN, V in km/h) convert exactly to SI with ``W = m*g/1000`` and
    ``V = 3.6*v``::

        c0 = W * (a + d/q0)
        c1 = W * 3.6 * (b + e/q0)
        c2 = W * 3.6**2 * (c + f/q0)

    ``params`` must name exactly the formula's parameters (none for the published formulas).
    An unknown formula, or missing/unknown params, raises ValueError naming them and listing
    what is allowed.
    """
    spec = _lookup(FORMULAS, "resistance formula", formula)
    given = _check_params(formula, spec.params, params)
    values = {name: _finite(f"{formula}.{name}", val) for name, val in given.items()}
    mass, axles = _check_vehicle(mass_kg, num_axles)

    if spec.kind == "none":
        return RunningResistance(0.0, 0.0, 0.0)
    if spec.kind == "davis":
        return RunningResistance(values["A"], values["B"], values["C"])

    coef = {k: getattr(spec, k) for k in "abcdef"}
    coef.update(values)  # user coefficients of the generic "specific" formula
    q0 = mass / axles / 1000.0
    weight_kn = mass * g / 1000.0
    return RunningResistance(
        weight_kn * (coef["a"] + coef["d"] / q0),
        weight_kn * KMH_PER_MS * (coef["b"] + coef["e"] / q0),
        weight_kn * KMH_PER_MS**2 * (coef["c"] + coef["f"] / q0),
    )


# --------------------------------------------------------------------------------------------
# Starting resistance
# --------------------------------------------------------------------------------------------

DEFAULT_V_BLEND = 10.0 / KMH_PER_MS
"""Default speed [m/s] (10 km/h) by which the extra starting resistance has blended out."""


def starting_resistance_specific(q0_t: float) -> float:
    """Specific starting resistance [N/kN] of a vehicle on roller bearings: ``28/(q0 + 7)``.

    ``q0_t`` is the axle load in tonnes (Russian traction rules).
    """
    q0 = _finite("q0_t", q0_t)
    if q0 <= 0.0:
        raise ValueError(f"q0_t must be > 0, got {q0_t!r}")
    return 28.0 / (q0 + 7.0)


@dataclass(frozen=True)
class StartingResistance:
    """Extra resistance at start, on top of the running resistance.

    ``force(v) = force0 * max(0, 1 - |v|/v_blend)``: ``force0`` [N] is the excess of the
    published starting resistance over ``running.c0`` (see :func:`starting_resistance`), and
    it falls linearly to zero at ``v_blend`` [m/s].
    """

    force0: float  # N, extra over the running resistance at v = 0
    v_blend: float  # m/s

    def __post_init__(self) -> None:
        force0 = _finite("force0", self.force0)
        v_blend = _finite("v_blend", self.v_blend)
        if force0 < 0.0:
            raise ValueError(f"force0 must be >= 0, got {self.force0!r}")
        if v_blend <= 0.0:
            raise ValueError(f"v_blend must be > 0, got {self.v_blend!r}")
        object.__setattr__(self, "force0", force0)
        object.__setattr__(self, "v_blend", v_blend)

    def force(self, v: ArrayLike) -> float | np.ndarray:
        """Extra starting resistance magnitude [N] at speed ``v`` [m/s]; arrays ok."""
        speed = np.abs(np.asarray(v, dtype=float))
        return _result(starting_force(speed, self.force0, self.v_blend))


def starting_resistance(
    mass_kg: float,
    num_axles: int,
    running: RunningResistance,
    *,
    v_blend: float = DEFAULT_V_BLEND,
    specific: float | None = None,
    g: float = G,
) -> StartingResistance:
    """Starting resistance of one vehicle, as the extra over its running resistance.

    The published starting resistance is ``w_start = 28/(q0 + 7)`` N/kN (roller bearings), or
    ``specific`` [N/kN] if given. It is a *total* at standstill, so the stored extra is
    ``force0 = max(0, w_start*m*g/1000 - running.c0)``; with :func:`total_resistance` the
    vehicle then sees exactly ``max(w_start*m*g/1000, running.c0)`` at v = 0, blending linearly
    into ``running`` by ``v_blend`` (default 10 km/h).
    """
    mass, axles = _check_vehicle(mass_kg, num_axles)
    if specific is None:
        w_start = starting_resistance_specific(mass / axles / 1000.0)
    else:
        w_start = _finite("specific", specific)
        if w_start < 0.0:
            raise ValueError(f"specific starting resistance must be >= 0, got {specific!r}")
    total0 = w_start * mass * g / 1000.0
    return StartingResistance(max(0.0, total0 - running.c0), v_blend)


def total_resistance(
    v: ArrayLike, running: RunningResistance, starting: StartingResistance | None = None
) -> float | np.ndarray:
    """Total resistance magnitude [N]: ``running.force(v) + starting.force(v)``.

    This additive rule is the one rrscore uses: the starting term is built as the excess over
    ``running.c0`` (:func:`starting_resistance`), so the total at v = 0 is the published
    starting resistance and for ``|v| >= v_blend`` it is the running resistance exactly.
    """
    r = np.asarray(running.force(v), dtype=float)
    if starting is not None:
        r = r + np.asarray(starting.force(v), dtype=float)
    return _result(r)


# --------------------------------------------------------------------------------------------
# Curves
# --------------------------------------------------------------------------------------------


def _straight_mask(radius: np.ndarray) -> np.ndarray:
    # Track data commonly signs the radius by curve direction and uses 0 or inf for straight
    # track; both conventions are accepted.
    return (radius == 0.0) | np.isinf(radius)


def curve_specific(radius_m: ArrayLike) -> float | np.ndarray:
    """Specific curve resistance [N/kN] = ``700 / R`` (Russian traction rules), R in m.

    ``R = 0`` or ``inf`` means straight track (0 N/kN); the sign of R (curve direction) is
    ignored. Arrays ok.
    """
    r = np.abs(np.asarray(radius_m, dtype=float))
    straight = _straight_mask(r)
    with np.errstate(divide="ignore"):
        w = np.where(straight, 0.0, 700.0 / np.where(straight, 1.0, r))
    return _result(w)


def curve_specific_area(radius_m: ArrayLike) -> float | np.ndarray:
    """Specific curve resistance [N/kN] after AREA practice: 0.8 lbf per short ton per degree.

    The degree of curvature uses the chord definition (100 ft chord)::

        D = 2 * asin(50 ft / R)   [degrees],  50 ft = 15.24 m

    and 1 lbf per short ton-force is exactly 1/2000 = 0.5 N/kN, so ``w = 0.4 * D`` N/kN.
    ``R = 0`` or ``inf`` means straight; the sign of R is ignored; ``0 < |R| < 15.24 m`` has no
    chord-definition degree and raises ValueError. Arrays ok.
    """
    r = np.abs(np.asarray(radius_m, dtype=float))
    straight = _straight_mask(r)
    if np.any(~straight & ~(r >= CHORD_HALF_M)):
        raise ValueError(
            f"curve radius must be >= {CHORD_HALF_M} m (or 0/inf for straight) for the "
            "chord definition of degree of curvature"
        )
    ratio = np.where(straight, 0.0, CHORD_HALF_M / np.where(straight, 1.0, r))
    degrees = 2.0 * np.degrees(np.arcsin(ratio))
    return _result(AREA_LBF_PER_TON_PER_DEGREE * LBF_PER_SHORT_TON_IN_N_PER_KN * degrees)


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
    return _result(gravity_force(m * g, i))


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
    cd_a = _finite("cd_a", cd_a)
    rho = _finite("rho", rho)
    if cd_a < 0.0 or rho < 0.0:
        raise ValueError(f"cd_a and rho must be >= 0, got cd_a={cd_a!r}, rho={rho!r}")
    rel = np.asarray(v, dtype=float) - np.asarray(wind_v, dtype=float)
    return _result(air_force(rel, 0.5 * rho * cd_a))


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
    k = _finite("k", k)
    if k < 0.0:
        raise ValueError(f"k must be >= 0, got {k!r}")
    b = np.asarray(blockage_ratio, dtype=float)
    if np.any(~((b >= 0.0) & (b < 1.0))):
        raise ValueError("blockage_ratio must be in [0, 1)")
    return _result(1.0 + k * (1.0 / (1.0 - b) ** 2 - 1.0))


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
        f = _finite("factor", factor)
        if f < 0.0:
            raise ValueError(f"tunnel factor must be >= 0, got {factor!r}")
        return f
    return float(tunnel_drag_factor(_finite("blockage_ratio", blockage_ratio), k))
