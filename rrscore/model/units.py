"""Physical quantities in config files: plain numbers in SI, or strings such as "90 t".

A config value for a quantity is either a number, taken to be in the key's documented SI
unit, or a string "<number> <unit>" such as "90 t", "80 km/h", "-8 permille" or
"50 kN*s/m". :func:`parse_quantity` turns either form into a float in SI and raises
:class:`UnitError`, naming what was found and what was expected, for anything else.

Unit expressions are products and quotients of the symbols in ``_UNITS``, joined by "*",
"·", "-", a space or "/", with exponents written "^2", "**2", "²" or as a trailing
integer ("m2", "s-1"). Everything after the first "/" is in the denominator, so
"J/kg*s" means J/(kg*s) and "m/s/s" means m/s^2; parentheses group as usual.
"""

from __future__ import annotations

import math
import numbers
import re
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["UnitError", "convert", "dimension_name", "parse_quantity"]


class UnitError(ValueError):
    """A value that is not a quantity of the expected dimension.

    ``str(err)`` is a short one-line message such as
    ``found '90 kg/h', expected a mass such as '90 t' or a number in kg``.
    """


Dim = tuple[int, int, int, int, int, int]
"""Exponents of mass, length, time, electric current, temperature and plane angle. (SI
counts the radian as 1; here an angle is its own dimension, so that "2 deg" is never
taken for a grade's "2 permille"-like ratio.)"""

_NONE: Dim = (0, 0, 0, 0, 0, 0)
_MASS: Dim = (1, 0, 0, 0, 0, 0)
_LENGTH: Dim = (0, 1, 0, 0, 0, 0)
_TIME: Dim = (0, 0, 1, 0, 0, 0)
_SPEED: Dim = (0, 1, -1, 0, 0, 0)
_FORCE: Dim = (1, 1, -2, 0, 0, 0)
_PRESSURE: Dim = (1, -1, -2, 0, 0, 0)
_POWER: Dim = (1, 2, -3, 0, 0, 0)
_ENERGY: Dim = (1, 2, -2, 0, 0, 0)
_FREQUENCY: Dim = (0, 0, -1, 0, 0, 0)
_VOLUME: Dim = (0, 3, 0, 0, 0, 0)
_CURRENT: Dim = (0, 0, 0, 1, 0, 0)
_VOLTAGE: Dim = (1, 2, -3, -1, 0, 0)  # W/A
_CHARGE: Dim = (0, 0, 1, 1, 0, 0)  # A*s
_RESISTANCE: Dim = (1, 2, -3, -2, 0, 0)  # V/A
_TEMPERATURE: Dim = (0, 0, 0, 0, 1, 0)
_ANGLE: Dim = (0, 0, 0, 0, 0, 1)

# Exact definitions that the customary units are built from.
_LB = 0.45359237  # kg, international pound
G = 9.80665
"""Standard gravity, m/s^2: the one value rrscore uses for weight, and which defines kgf
and lbf."""
_G0 = G
_LBF = _LB * _G0
_INCH = 0.0254
_FOOT = 0.3048
_MILE = 1609.344
_HOUR = 3600.0
_US_GALLON = 231 * _INCH**3  # m^3 (3.785411784 L)
_ZERO_CELSIUS = 273.15  # K

_UNITS: dict[str, tuple[float, Dim]] = {
    # mass
    "kg": (1.0, _MASS),
    "g": (1e-3, _MASS),
    "t": (1e3, _MASS),
    "tonne": (1e3, _MASS),
    "tonnes": (1e3, _MASS),
    "lb": (_LB, _MASS),
    "lbs": (_LB, _MASS),
    # "ton" is the US short ton of North American car ratings; a metric ton is "t".
    "short_ton": (2000 * _LB, _MASS),
    "short_tons": (2000 * _LB, _MASS),
    "ton": (2000 * _LB, _MASS),
    "tons": (2000 * _LB, _MASS),
    "long_ton": (2240 * _LB, _MASS),
    "long_tons": (2240 * _LB, _MASS),
    # length
    "m": (1.0, _LENGTH),
    "km": (1e3, _LENGTH),
    "cm": (1e-2, _LENGTH),
    "mm": (1e-3, _LENGTH),
    "ft": (_FOOT, _LENGTH),
    "foot": (_FOOT, _LENGTH),
    "feet": (_FOOT, _LENGTH),
    "in": (_INCH, _LENGTH),
    "inch": (_INCH, _LENGTH),
    "inches": (_INCH, _LENGTH),
    "yd": (0.9144, _LENGTH),
    "mi": (_MILE, _LENGTH),
    "mile": (_MILE, _LENGTH),
    "miles": (_MILE, _LENGTH),
    # volume (reservoirs, brake cylinders)
    "L": (1e-3, _VOLUME),
    "l": (1e-3, _VOLUME),
    "litre": (1e-3, _VOLUME),
    "litres": (1e-3, _VOLUME),
    "liter": (1e-3, _VOLUME),
    "liters": (1e-3, _VOLUME),
    "gal": (_US_GALLON, _VOLUME),  # the US gallon, as fuel is rated in North America
    "gallon": (_US_GALLON, _VOLUME),
    "gallons": (_US_GALLON, _VOLUME),
    # time
    "s": (1.0, _TIME),
    "sec": (1.0, _TIME),
    "ms": (1e-3, _TIME),
    "min": (60.0, _TIME),
    "h": (_HOUR, _TIME),
    "hr": (_HOUR, _TIME),
    # speed
    "kmh": (1e3 / _HOUR, _SPEED),
    "kph": (1e3 / _HOUR, _SPEED),
    "mph": (_MILE / _HOUR, _SPEED),
    # force
    "N": (1.0, _FORCE),
    "daN": (10.0, _FORCE),
    "kN": (1e3, _FORCE),
    "MN": (1e6, _FORCE),
    "lbf": (_LBF, _FORCE),
    "kip": (1000 * _LBF, _FORCE),
    "kips": (1000 * _LBF, _FORCE),
    "kgf": (_G0, _FORCE),
    "tf": (1000 * _G0, _FORCE),
    # pressure
    "Pa": (1.0, _PRESSURE),
    "kPa": (1e3, _PRESSURE),
    "hPa": (1e2, _PRESSURE),
    "mbar": (1e2, _PRESSURE),
    "MPa": (1e6, _PRESSURE),
    "GPa": (1e9, _PRESSURE),
    "bar": (1e5, _PRESSURE),
    "psi": (_LBF / _INCH**2, _PRESSURE),
    "atm": (101325.0, _PRESSURE),
    # power
    "W": (1.0, _POWER),
    "kW": (1e3, _POWER),
    "MW": (1e6, _POWER),
    "hp": (550 * _FOOT * _LBF, _POWER),  # mechanical horsepower, 550 ft*lbf/s
    # energy
    "J": (1.0, _ENERGY),
    "kJ": (1e3, _ENERGY),
    "MJ": (1e6, _ENERGY),
    "Wh": (_HOUR, _ENERGY),
    "kWh": (1e3 * _HOUR, _ENERGY),
    "MWh": (1e6 * _HOUR, _ENERGY),
    "GJ": (1e9, _ENERGY),
    # electric: current, voltage, charge (batteries' "Ah"), resistance
    "A": (1.0, _CURRENT),
    "mA": (1e-3, _CURRENT),
    "kA": (1e3, _CURRENT),
    "V": (1.0, _VOLTAGE),
    "mV": (1e-3, _VOLTAGE),
    "kV": (1e3, _VOLTAGE),
    "Ah": (_HOUR, _CHARGE),
    "kAh": (1e3 * _HOUR, _CHARGE),
    "C": (1.0, _CHARGE),
    "ohm": (1.0, _RESISTANCE),
    "Ω": (1.0, _RESISTANCE),
    "mohm": (1e-3, _RESISTANCE),
    "mΩ": (1e-3, _RESISTANCE),
    # temperature: "°C" alone is a temperature (273.15 K at 0 °C, _OFFSETS); inside a
    # compound unit ("J/kg/°C") it is a difference, the size of a kelvin
    "K": (1.0, _TEMPERATURE),
    "°C": (1.0, _TEMPERATURE),
    "℃": (1.0, _TEMPERATURE),
    "degC": (1.0, _TEMPERATURE),
    # plane angle
    "rad": (1.0, _ANGLE),
    "deg": (math.pi / 180.0, _ANGLE),
    "degree": (math.pi / 180.0, _ANGLE),
    "degrees": (math.pi / 180.0, _ANGLE),
    "°": (math.pi / 180.0, _ANGLE),
    "rev": (2.0 * math.pi, _ANGLE),
    "rpm": (2.0 * math.pi / 60.0, (0, 0, -1, 0, 0, 1)),  # a motor's revolutions a minute
    # dimensionless ratios (grades, adhesion, specific resistance via "N/kN")
    "permille": (1e-3, _NONE),
    "per_mille": (1e-3, _NONE),
    "‰": (1e-3, _NONE),
    "%": (1e-2, _NONE),
    "percent": (1e-2, _NONE),
    # frequency
    "Hz": (1.0, _FREQUENCY),
}

#: Units of temperature whose zero is not absolute zero: a value written with one alone
#: ("20 °C") is this many kelvin above what its factor gives.
_OFFSETS: dict[str, float] = {"°C": _ZERO_CELSIUS, "℃": _ZERO_CELSIUS, "degC": _ZERO_CELSIUS}

# Names that are read in any case ("Tonnes", "MPH", "PSI"). SI symbols stay case-sensitive
# because "mm"/"Mm" and "mN"/"MN" differ by a factor of 10^9.
_ANY_CASE: dict[str, str] = {
    name.lower(): name
    for name in (
        "tonne", "tonnes", "lb", "lbs", "short_ton", "short_tons", "ton", "tons", "long_ton",
        "long_tons", "ft", "foot", "feet", "inch", "inches", "yd", "mi", "mile", "miles",
        "sec", "min", "hr", "kmh", "kph", "mph", "lbf", "kip", "kips", "kgf", "bar", "psi",
        "atm", "hp", "permille", "per_mille", "percent", "Hz", "liter", "liters", "litre",
        "litres", "gal", "gallon", "gallons", "ohm", "degree", "degrees", "rad", "deg", "rev",
        "rpm",
    )
}  # fmt: skip

_FORCE_SYMBOLS = frozenset(name for name, (_, dim) in _UNITS.items() if dim == _FORCE)

_PHRASES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), name)
    for pattern, name in (
        (r"\bshort\s+tons?\b", "short_ton"),
        (r"\blong\s+tons?\b", "long_ton"),
        (r"\bmetric\s+tons?\b", "tonne"),
        (r"\bper\s+mille\b", "per_mille"),
        (r"\bper\s+cent\b", "percent"),
    )
)

_DIMENSION_NAMES: dict[Dim, str] = {
    _MASS: "mass",
    _LENGTH: "length",
    _TIME: "time",
    _SPEED: "speed",
    (0, 1, -2, 0, 0, 0): "acceleration",
    _FORCE: "force",
    _PRESSURE: "pressure",
    (1, 0, -2, 0, 0, 0): "stiffness",
    (1, 0, -1, 0, 0, 0): "damping",
    (1, 2, 0, 0, 0, 0): "moment of inertia",
    _POWER: "power",
    _ENERGY: "energy",  # or torque; see dimension_name()
    (0, 2, 0, 0, 0, 0): "area",
    _VOLUME: "volume",
    _FREQUENCY: "frequency",
    _CURRENT: "current",
    _VOLTAGE: "voltage",
    _CHARGE: "charge",
    _RESISTANCE: "resistance",
    _TEMPERATURE: "temperature",
    _ANGLE: "angle",
    (0, 0, -1, 0, 0, 1): "angular speed",
    _NONE: "ratio",  # or specific resistance; see dimension_name()
}

_EXAMPLES: dict[str, str] = {
    "mass": "90 t",
    "length": "12.5 m",
    "time": "30 s",
    "speed": "80 km/h",
    "acceleration": "0.5 m/s^2",
    "force": "450 kN",
    "pressure": "0.5 MPa",
    "stiffness": "20 MN/m",
    "damping": "50 kN*s/m",
    "moment of inertia": "100 kg*m^2",
    "power": "2 MW",
    "energy": "5 MJ",
    "torque": "20 kN*m",
    "area": "2.5 m^2",
    "volume": "78 L",
    "frequency": "10 Hz",
    "current": "1200 A",
    "voltage": "25 kV",
    "charge": "400 Ah",
    "resistance": "0.5 ohm",
    "temperature": "20 °C",
    "angle": "2.5 deg",
    "angular speed": "100 rad/s",
    "ratio": "8 permille",
    "specific resistance": "5 N/kN",
}

_NUMBER = re.compile(r"\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*(.*?)\s*", re.DOTALL)
_TOKEN = re.compile(
    r"(?P<space>\s*)(?:(?P<name>°[CF]|[A-Za-z_Ω℃]+|%|‰|°)|(?P<int>[+-]?\d+)"
    r"|(?P<op>[*/^()]|-(?=[A-Za-z])))"
)
_SUPERSCRIPT = re.compile("[⁺⁻]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+")
_SUPERSCRIPT_TO_ASCII = str.maketrans("⁺⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "+-0123456789")


@dataclass(frozen=True)
class _Unit:
    factor: float  # value in SI of one of this unit
    dim: Dim
    symbols: frozenset[str]  # table names used: a force tells torque from energy

    def times(self, other: _Unit, power: int) -> _Unit:
        """``self * other**power``."""
        # Dividing rather than multiplying by a reciprocal keeps "kN/mm" and the like exact.
        scale = other.factor ** abs(power)
        factor = self.factor * scale if power >= 0 else self.factor / scale
        dim = tuple(a + power * b for a, b in zip(self.dim, other.dim, strict=True))
        return _Unit(factor, dim, self.symbols | other.symbols)  # type: ignore[arg-type]


_ONE = _Unit(1.0, _NONE, frozenset())


def _shown(value: object) -> str:
    """repr() cut to a length that keeps messages short; repr also escapes newlines."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


class _BadUnit(Exception):
    """A unit expression that cannot be read; str() is the reason, for messages."""


class _BadSyntax(Exception):
    """Raised inside the parser; turned into _BadUnit quoting the whole expression."""


@dataclass(frozen=True)
class _Token:
    kind: str  # "name", "int" or "op"
    text: str
    spaced: bool  # whitespace before it, which stops "m 2" reading as m^2


def _tokenize(text: str) -> list[_Token]:
    tokens = []
    pos = 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            if text[pos:].strip():
                raise _BadSyntax
            break
        kind = match.lastgroup
        assert kind is not None
        token = match.group(kind)
        if token == "-":  # "kN-m", "ft-lbf"
            token = "*"
        tokens.append(_Token(kind, token, bool(match.group("space"))))
        pos = match.end()
    return tokens


def _lookup(name: str) -> _Unit:
    canonical = name if name in _UNITS else _ANY_CASE.get(name.lower())
    if canonical is None and name.startswith("K") and "k" + name[1:] in _UNITS:
        canonical = "k" + name[1:]  # "KN", "KW": no unit here starts with a capital K
    if canonical is None:
        guess = next((known for known in _UNITS if known.lower() == name.lower()), None)
        hint = f" (did you mean '{guess}'?)" if guess else ""
        raise _BadUnit(f"unknown unit {_shown(name)}{hint}")
    factor, dim = _UNITS[canonical]
    return _Unit(factor, dim, frozenset({canonical}))


class _Parser:
    """Recursive descent over: product := factor (("*" | "/" | nothing) factor)*;
    factor := (name | "1" | "(" product ")") [("^" int | "^(" int ")" | attached int)]."""

    def __init__(self, text: str) -> None:
        self.tokens = _tokenize(text)
        self.pos = 0

    def parse(self) -> _Unit:
        unit = self._product()
        if self.pos != len(self.tokens):
            raise _BadSyntax
        return unit

    def _peek(self) -> _Token | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def _next(self) -> _Token:
        token = self._peek()
        if token is None:
            raise _BadSyntax
        self.pos += 1
        return token

    def _product(self) -> _Unit:
        base, power = self._factor()
        unit = _ONE.times(base, power)
        denominator = False
        while (token := self._peek()) is not None and token.text != ")":
            if token.text in ("*", "/"):
                self.pos += 1
                denominator = denominator or token.text == "/"
            base, power = self._factor()
            unit = unit.times(base, -power if denominator else power)
        return unit

    def _factor(self) -> tuple[_Unit, int]:
        token = self._next()
        if token.kind == "name":
            base = _lookup(token.text)
        elif token.text == "1":
            base = _ONE
        elif token.text == "(":
            base = self._product()
            if self._next().text != ")":
                raise _BadSyntax
        else:
            raise _BadSyntax
        after = self._peek()
        if after is not None and after.text == "^":
            self.pos += 1
            return base, self._exponent()
        if after is not None and after.kind == "int" and not after.spaced and token.kind != "int":
            self.pos += 1
            return base, int(after.text)
        return base, 1

    def _exponent(self) -> int:
        token = self._next()
        if token.kind == "int":
            return int(token.text)
        if token.text == "(":
            inner = self._next()
            if inner.kind != "int" or self._next().text != ")":
                raise _BadSyntax
            return int(inner.text)
        raise _BadSyntax


def _normalise(text: str) -> str:
    text = text.strip()
    for pattern, name in _PHRASES:
        text = pattern.sub(name, text)
    text = text.replace("**", "^").replace("·", "*").replace("⋅", "*")
    return _SUPERSCRIPT.sub(lambda m: "^" + m.group().translate(_SUPERSCRIPT_TO_ASCII), text)


@lru_cache(maxsize=512)
def _parse_unit(text: str) -> _Unit:
    """Parse a unit expression; raises _BadUnit."""
    try:
        return _Parser(_normalise(text)).parse()
    except _BadSyntax:
        raise _BadUnit(f"cannot read unit {_shown(text.strip())}") from None


def _offset(text: str) -> float:
    """Kelvin above its factor's scale of a unit written alone ("°C": 273.15), else 0:
    a temperature in °C, not a difference of one."""
    return _OFFSETS.get(_normalise(text), 0.0)


def _target(si_unit: str) -> _Unit:
    """Parse the unit a caller asks for; a bad one is a programming error, not a UnitError."""
    if not isinstance(si_unit, str):
        raise TypeError(f"si_unit must be a str, not {type(si_unit).__name__}")
    try:
        return _parse_unit(si_unit)
    except _BadUnit as exc:
        raise ValueError(f"invalid unit expression {si_unit!r}: {exc}") from None


def dimension_name(si_unit: str) -> str:
    """Human name of the dimension of ``si_unit``, such as 'mass' for "kg" or 'damping' for
    "N*s/m".

    Names: 'mass', 'length', 'speed', 'force', 'pressure', 'time', 'acceleration',
    'stiffness', 'damping', 'moment of inertia', 'power', 'torque', 'energy', 'area', 'volume',
    'frequency', 'ratio', 'specific resistance', or 'quantity in <si_unit>' if none fits.
    Torque and energy share a dimension, as do ratio and specific resistance; a unit written
    with a force ("N*m", "N/kN") is taken to be torque or specific resistance.
    """
    unit = _target(si_unit)
    uses_force = bool(unit.symbols & _FORCE_SYMBOLS)
    if unit.dim == _ENERGY and uses_force:
        return "torque"
    if unit.dim == _NONE and uses_force:
        return "specific resistance"
    return _DIMENSION_NAMES.get(unit.dim, f"quantity in {si_unit}")


def _expected(si_unit: str) -> str:
    name = dimension_name(si_unit)
    example = _EXAMPLES.get(name, f"1.5 {si_unit}")
    article = "an" if name[0] in "aeiou" else "a"
    number = "a plain number" if si_unit.strip() == "1" else f"a number in {si_unit}"
    return f"{article} {name} such as '{example}' or {number}"


def _error(value: object, si_unit: str, reason: str = "") -> UnitError:
    if reason:
        return UnitError(f"found {_shown(value)}: {reason}; expected {_expected(si_unit)}")
    return UnitError(f"found {_shown(value)}, expected {_expected(si_unit)}")


def parse_quantity(value: object, si_unit: str) -> float:
    """Return ``value`` converted to ``si_unit``, a unit expression such as "kg", "m/s",
    "N/m", "kg*m^2" or "1" (dimensionless).

    - An int or float (not a bool) is taken to be in ``si_unit`` already.
    - A string "<number> <unit>" ("90 t", "90t", "-8 permille", "1.5e3 kN", "80 km/h") is
      converted; its unit must have the dimension of ``si_unit``. A string holding only a
      number ("12") is refused as ambiguous.
    - Anything else, and NaN or infinite values, raise :class:`UnitError`.

    Raises ValueError (not UnitError) if ``si_unit`` itself cannot be read.
    """
    target = _target(si_unit)
    if isinstance(value, str):
        match = _NUMBER.fullmatch(value)
        if match is None:
            raise _error(value, si_unit)
        number_text, unit_text = match.groups()
        if not unit_text:
            raise _error(value, si_unit, "a number in quotes needs a unit")
        try:
            unit = _parse_unit(unit_text)
        except _BadUnit as exc:
            raise _error(value, si_unit, str(exc)) from None
        if unit.dim != target.dim:
            raise _error(value, si_unit)
        result = ((float(number_text) * unit.factor + _offset(unit_text) - _offset(si_unit))
                  / target.factor)
    elif isinstance(value, numbers.Real) and not isinstance(value, bool):
        try:
            result = float(value)
        except (OverflowError, ValueError):
            raise _error(value, si_unit, "not a finite number") from None
    else:
        raise _error(value, si_unit)
    if not math.isfinite(result):
        raise _error(value, si_unit, "not a finite number")
    return result


def convert(value: float, from_unit: str, to_unit: str) -> float:
    """Convert ``value`` from ``from_unit`` to ``to_unit``, e.g. ``convert(60, "mph", "km/h")``.

    Raises :class:`UnitError` if either unit cannot be read or their dimensions differ.
    """
    try:
        source = _parse_unit(from_unit)
        dest = _parse_unit(to_unit)
    except _BadUnit as exc:
        raise UnitError(str(exc)) from None
    if source.dim != dest.dim:
        raise UnitError(
            f"cannot convert {_shown(from_unit)} ({dimension_name(from_unit)}) "
            f"to {_shown(to_unit)} ({dimension_name(to_unit)})"
        )
    return ((float(value) * source.factor + _offset(from_unit) - _offset(to_unit))
            / dest.factor)
