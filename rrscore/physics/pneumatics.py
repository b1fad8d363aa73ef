"""Air: the gas laws and flows the air brake is built from.

Pressures in the brake states are gauge (Pa above the atmosphere), as brake
gauges show them; flows use absolute pressures. Air is an ideal gas at one
temperature. A volume ``V`` receiving the mass flow ``m_dot`` changes pressure
at ``dp/dt = n R T m_dot / V``: reservoirs and cylinders fill slowly enough to
stay at the temperature around them (``n = 1``), while the pressure waves in
the brake pipe are too quick for heat to flow (``n = GAMMA``).

Flow through a valve port or a hole is that of a nozzle: proportional to the
upstream pressure while it is choked (downstream below :data:`CRITICAL` times
upstream), falling on an ellipse to nothing as the pressures meet, with the
last part (pressure ratio above 1 - :data:`LINEAR`) made linear so the flow has
a finite slope at equal pressures, as an integrator needs.
"""

from __future__ import annotations

import math

import numpy as np

from ..jit import law

#: Atmospheric pressure, Pa.
ATMOSPHERE = 101325.0
#: Specific gas constant of dry air, J/(kg K).
R_AIR = 287.05
#: Ratio of specific heats of air.
GAMMA = 1.4
#: Air temperature of the model, K (20 degrees C).
TEMPERATURE = 293.15
#: Dynamic viscosity of air at that temperature, Pa s.
VISCOSITY = 1.81e-5
#: Pressure ratio below which a port is choked.
CRITICAL = (2.0 / (GAMMA + 1.0)) ** (GAMMA / (GAMMA - 1.0))
#: Pressure ratio distance from 1 over which the flow is taken as linear.
LINEAR = 1e-3

#: Choked mass flow per unit area and unit upstream pressure, s/m: sqrt(gamma / (R T))
#: * (2 / (gamma + 1)) ** ((gamma + 1) / (2 (gamma - 1))).
_CHOKED = math.sqrt(GAMMA / (R_AIR * TEMPERATURE)) * (2.0 / (GAMMA + 1.0)) ** (
    (GAMMA + 1.0) / (2.0 * (GAMMA - 1.0)))
_LIN_VALUE = math.sqrt(1.0 - ((1.0 - LINEAR - CRITICAL) / (1.0 - CRITICAL)) ** 2)


#: Discharge coefficient of a port (the vena contracta of a sharp-edged orifice).
DISCHARGE = 0.8


@law
def port_flow(p_from, p_to, area):  # pragma: no cover (compiled)
    """Mass flow, kg/s, through a port of ``area`` (m^2) from gauge pressure ``p_from`` to
    ``p_to`` (Pa); negative when the air flows the other way."""
    a = p_from + ATMOSPHERE
    b = p_to + ATMOSPHERE
    if area == 0.0 or a == b:
        return 0.0
    up, down, sign = (a, b, 1.0) if a > b else (b, a, -1.0)
    ratio = down / up
    if ratio > 1.0 - LINEAR:
        shape = _LIN_VALUE * (1.0 - ratio) / LINEAR
    elif ratio <= CRITICAL:
        shape = 1.0
    else:
        x = (ratio - CRITICAL) / (1.0 - CRITICAL)
        shape = math.sqrt(1.0 - x * x)
    return sign * DISCHARGE * area * _CHOKED * up * shape


def pressure_rate(mass_flow, volume, exponent: float = 1.0):
    """``dp/dt``, Pa/s, of a ``volume`` (m^3) that receives ``mass_flow`` (kg/s)."""
    return exponent * R_AIR * TEMPERATURE * mass_flow / volume


def circle_area(diameter):
    """Area of a circular bore, m^2."""
    return np.pi * np.asarray(diameter, dtype=float) ** 2 / 4.0


def wave_speed(length, inertance, volume, exponent: float = GAMMA) -> float:
    """Speed, m/s, at which a pressure change runs along a pipe built of equal pieces of
    ``length`` (m), each with flow ``inertance`` (sum of length / bore area over the path
    the air takes through it, 1/m) and ``volume`` (m^3): one piece per
    ``sqrt(inertance * volume / (n R T))`` seconds. A plain pipe gives the speed of
    sound; hoses of a narrower bore and volumes hung on the pipe slow the wave."""
    return float(length / np.sqrt(inertance * volume / (exponent * R_AIR * TEMPERATURE)))
