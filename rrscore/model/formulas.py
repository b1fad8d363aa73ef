"""Published formulas as data: resistance, adhesion and curves, and their coefficients.

A vehicle config names a running-resistance formula from :data:`FORMULAS` and an adhesion
formula from :data:`ADHESION_FORMULAS`, and gives their coefficients; this module checks
them and turns them into the numbers the simulation's laws take
(:mod:`rrscore.physics.resistance`, :mod:`rrscore.physics.adhesion`): a running
resistance as a quadratic in speed with SI coefficients, ``R(v) = c0 + c1*|v| +
c2*v**2``, a starting resistance as its excess at standstill, an adhesion law as a row of
numbers.

Units: everything in the code is SI (speed ``v`` in m/s, mass in kg, force in N).
Published formulas are written with ``V`` in km/h (``V = 3.6 * v``) and give the
*specific* resistance ``w`` in N/kN, newtons per kilonewton of vehicle weight, so ``R = w
* m * g / 1000``; ``q0`` is the axle load in tonnes, ``q0 = m / num_axles / 1000``.

Starting resistance is additive (see :func:`rrscore.physics.resistance.total_resistance`)::

    R_total(v) = running(v) + force0 * max(0, 1 - |v| / v_blend)
    force0 = max(0, w_start * m * g / 1000 - running.c0)

so at standstill the total is the published starting resistance exactly (or the running
resistance, if that is larger), and at and above ``v_blend`` the running resistance alone.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import numpy as np
from numpy.typing import ArrayLike

from .units import G

_T = TypeVar("_T")

def result(x: np.ndarray) -> float | np.ndarray:
    """Return a Python float for 0-d results, the array otherwise."""
    return float(x) if np.ndim(x) == 0 else x


def finite(name: str, value: object) -> float:
    """Coerce a config number to float, rejecting bools, non-numbers and non-finite values."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    x = float(value)
    if not math.isfinite(x):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return x


def by_name(*items: Any) -> dict[str, Any]:
    """A registry of formula records, keyed by their ``name``."""
    return {item.name: item for item in items}


def check_params(formula: str, allowed: tuple[str, ...],
                 params: Mapping[str, Any] | None) -> dict[str, Any]:
    """Require exactly the names in ``allowed``; name what is missing or unknown."""
    given = dict(params or {})
    unknown = sorted(set(given) - set(allowed))
    missing = [p for p in allowed if p not in given]
    if unknown or missing:
        problems = []
        if missing:
            problems.append(f"missing {', '.join(missing)}")
        if unknown:
            problems.append(f"unknown {', '.join(map(str, unknown))}")
        expected = ", ".join(allowed) if allowed else "no params"
        raise ValueError(f"formula {formula!r}: {'; '.join(problems)} (expected: {expected})")
    return given


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
    mass = finite("mass_kg", mass_kg)
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
    return result(np.asarray(w, dtype=float) * (mass_kg * g / 1000.0))



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
        c0 = finite("c0", self.c0)
        c1 = finite("c1", self.c1)
        c2 = finite("c2", self.c2)
        # Non-negative on |v| >= 0 is exactly: c0 >= 0, c2 >= 0 and, if the linear term is
        # negative, a non-positive discriminant (the minimum of the parabola is not below 0).
        if c0 < 0.0 or c2 < 0.0 or (c1 < 0.0 and c1 * c1 > 4.0 * c0 * c2):
            raise ValueError(
                f"running resistance c0={c0!r}, c1={c1!r}, c2={c2!r} is negative at some speed"
            )
        object.__setattr__(self, "c0", c0)
        object.__setattr__(self, "c1", c1)
        object.__setattr__(self, "c2", c2)

    def with_aero_factor(self, factor: float) -> RunningResistance:
        """Copy with the v**2 (aerodynamic) coefficient multiplied by ``factor`` (e.g. tunnels).

        The v**2 term of a quadratic fit is conventionally taken as the aerodynamic part, which
        is what a tunnel factor scales; ``c0`` and ``c1`` are unchanged.
        """
        f = finite("factor", factor)
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




FORMULAS: dict[str, ResistanceFormula] = by_name(
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
    given = check_params(formula, spec.params, params)
    values = {name: finite(f"{formula}.{name}", val) for name, val in given.items()}
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
    q0 = finite("q0_t", q0_t)
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
        force0 = finite("force0", self.force0)
        v_blend = finite("v_blend", self.v_blend)
        if force0 < 0.0:
            raise ValueError(f"force0 must be >= 0, got {self.force0!r}")
        if v_blend <= 0.0:
            raise ValueError(f"v_blend must be > 0, got {self.v_blend!r}")
        object.__setattr__(self, "force0", force0)
        object.__setattr__(self, "v_blend", v_blend)


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
        w_start = finite("specific", specific)
        if w_start < 0.0:
            raise ValueError(f"specific starting resistance must be >= 0, got {specific!r}")
    total0 = w_start * mass * g / 1000.0
    return StartingResistance(max(0.0, total0 - running.c0), v_blend)



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
    return result(w)


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
    return result(AREA_LBF_PER_TON_PER_DEGREE * LBF_PER_SHORT_TON_IN_N_PER_KN * degrees)


# --------------------------------------------------------------------------------------------
# Adhesion
# --------------------------------------------------------------------------------------------

DEFAULT_KINETIC_RATIO = 0.7
"""Default sliding fraction of the peak adhesion force of the creep law."""


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




ADHESION_FORMULAS: dict[str, AdhesionFormula] = by_name(
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
    factor = finite("rail condition factor", condition)
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


#: Columns of an adhesion law's row (:func:`adhesion_law`): its kind (0 hyperbolic, 1
#: constant, 2 table), five coefficients, the table's length, then its speeds and values.
LAW_HEAD = 7
HYPERBOLIC, CONSTANT, TABLE = 0, 1, 2


def adhesion_law(formula: str, params: Mapping[str, Any] | None = None) -> np.ndarray:
    """A checked adhesion law as the simulation reads it
    (:func:`rrscore.physics.adhesion.psi`): a row of numbers, ``[kind, a, b, c, d, e, m,
    speeds (m), values (m)]``, the hyperbolic form's coefficients in m/s. An unknown
    formula, or missing or unknown params, raise ValueError naming them."""
    try:
        spec = ADHESION_FORMULAS[formula]
    except (KeyError, TypeError):
        allowed = ", ".join(sorted(ADHESION_FORMULAS))
        raise ValueError(f"unknown adhesion formula {formula!r}; allowed: {allowed}") from None
    given = check_params(formula, spec.params, params)
    if spec.kind == "hyperbolic":
        head = [HYPERBOLIC, spec.a, spec.b, spec.c, spec.d * KMH_PER_MS, spec.e * KMH_PER_MS, 0]
        return np.array(head, dtype=float)
    if spec.kind == "constant":
        value = finite(f"{formula}.psi", given["psi"])
        if value < 0.0:
            raise ValueError(f"formula {formula!r}: psi must be >= 0, got {value!r}")
        return np.array([CONSTANT, value, 0, 0, 0, 0, 0], dtype=float)
    speeds, values = _table(formula, given)
    return np.concatenate([[TABLE, 0, 0, 0, 0, 0, speeds.size], speeds, values])


def law_table(rows: list[np.ndarray]) -> np.ndarray:
    """Several laws (:func:`adhesion_law`) as one table, a row each, padded with zeros."""
    width = max([r.size for r in rows] + [LAW_HEAD])
    table = np.zeros((max(len(rows), 1), width))
    for i, r in enumerate(rows):
        table[i, :r.size] = r
    return table


