"""Numbers with Open Rails' unit suffixes (``80t-uk``, ``3000kW``, ``70mph``) in SI.

Open Rails reads a value of a token as a number with an optional unit suffix written
against it (no space). Without a suffix the number is in the token's default unit, which
for the tokens read here is SI (kg, m, m/s, N, W, N/m, N/(m/s), N/(m/s)^2, Pa, kg m^2):
:data:`DIMENSIONS` lists the suffixes each kind of value takes and their factors to SI.
The factors are the exact definitions (a long ton ``t-uk`` is 2240 lb =
1016.0469088 kg, ``lbf`` is 1 lb times standard gravity, ``hp`` the mechanical horse
power of 550 ft lbf/s).
"""

from __future__ import annotations

import math
import re

from .stf import StfError, Word

LB = 0.45359237  # kg
LBF = LB * 9.80665  # N
INCH = 0.0254  # m
FOOT = 0.3048  # m
MPH = 1609.344 / 3600.0  # m/s
HP = 550.0 * FOOT * LBF  # W, 745.69987...
PSI = LBF / INCH**2  # Pa
INHG = 3386.389  # Pa, inch of mercury at 0 degC (as conventional)

_MASS = {"": 1.0, "kg": 1.0, "t": 1000.0, "t-uk": 2240 * LB, "t-us": 2000 * LB, "lb": LB,
         "lbs": LB}
_LENGTH = {"": 1.0, "m": 1.0, "cm": 0.01, "mm": 0.001, "km": 1000.0, "in": INCH,
           "in/2": INCH / 2, "ft": FOOT, "mile": 1609.344}
_SPEED = {"": 1.0, "m/s": 1.0, "mps": 1.0, "mph": MPH, "km/h": 1 / 3.6, "kmh": 1 / 3.6,
          "kph": 1 / 3.6, "kmph": 1 / 3.6}
_FORCE = {"": 1.0, "n": 1.0, "kn": 1000.0, "lbf": LBF, "lb": LBF, "klbf": 1000 * LBF}
_POWER = {"": 1.0, "w": 1.0, "kw": 1000.0, "mw": 1e6, "hp": HP}
_STIFFNESS = {"": 1.0, "n/m": 1.0, "kn/m": 1000.0, "lbf/in": LBF / INCH}
_DAVIS_B = {"": 1.0, "n/m/s": 1.0, "ns/m": 1.0, "n/(m/s)": 1.0, "lbf/mph": LBF / MPH}
_DAVIS_C = {"": 1.0, "n/(m/s)^2": 1.0, "n/m/s^2": 1.0, "ns2/m2": 1.0,
            "lbf/mph^2": LBF / MPH**2}
_PRESSURE = {"": 1.0, "pa": 1.0, "kpa": 1000.0, "bar": 1e5, "psi": PSI, "inhg": INHG}
_INERTIA = {"": 1.0, "kgm^2": 1.0, "kg*m^2": 1.0, "kgm2": 1.0, "lbft^2": LB * FOOT**2}
_NONE = {"": 1.0}

#: Each kind of value: its name in messages, and its suffixes (lower case) with their
#: factors to SI.
DIMENSIONS: dict[str, tuple[str, dict[str, float]]] = {
    "mass": ("a mass", _MASS),
    "length": ("a length", _LENGTH),
    "speed": ("a speed", _SPEED),
    "force": ("a force", _FORCE),
    "power": ("a power", _POWER),
    "stiffness": ("a stiffness", _STIFFNESS),
    "davis_b": ("a force per speed (Davis B)", _DAVIS_B),
    "davis_c": ("a force per speed squared (Davis C)", _DAVIS_C),
    "pressure": ("a pressure", _PRESSURE),
    "inertia": ("a moment of inertia", _INERTIA),
    "number": ("a plain number", _NONE),
    # a table's entries: any of the above (Open Rails' UNITS.Any), each to its SI unit
    "any": ("a number (with any unit)", {k: v for d in (
        _MASS, _LENGTH, _SPEED, _FORCE, _POWER, _STIFFNESS, _DAVIS_B, _DAVIS_C, _PRESSURE,
        _INERTIA) for k, v in d.items() if k not in ("lb",)} | {"lb": LBF}),
}

_NUMBER = re.compile(r"([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)(.*)", re.DOTALL)


def split_number(text: str) -> tuple[float, str] | None:
    """``text`` as (number, suffix), or None if it does not start with a number."""
    m = _NUMBER.fullmatch(text.strip())
    if m is None:
        return None
    return float(m.group(1)), m.group(2).strip()


def to_si(word: Word, dimension: str, file: str, token: str) -> float:
    """The value of ``word`` in SI, read as ``dimension`` (a key of :data:`DIMENSIONS`);
    a word that is not a finite number with one of that dimension's suffixes is a
    :class:`StfError` naming ``token``."""
    what, suffixes = DIMENSIONS[dimension]
    file = word.file or file  # (a word an include brought in: that file's line)
    parsed = split_number(word.text)
    if parsed is None:
        raise StfError(file, word.line, f"{token}: found {word.text!r}, expected {what} "
                                        "(a number, with a unit suffix or none)")
    value, suffix = parsed
    factor = suffixes.get(suffix.lower())
    if factor is None:
        known = ", ".join(sorted(k for k in suffixes if k)) or "none"
        raise StfError(file, word.line, f"{token}: found {word.text!r}, unknown unit "
                                        f"{suffix!r} for {what} (known: {known})")
    out = value * factor
    if not math.isfinite(out):
        raise StfError(file, word.line, f"{token}: found {word.text!r}, expected a finite "
                                        "number")
    return out
