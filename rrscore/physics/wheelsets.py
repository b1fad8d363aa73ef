"""Wheelsets: each axle's spin and angle, wheel-rail adhesion, slip and slide.

An axle is in one of two modes:

* rolling (adhered): ``omega = v/r``. The slip velocity is quasi-static and small (the
  creep law's rising branch; reported, not integrated: its time constant is some 50
  microseconds), the axle's inertia ``J/r^2`` adds to its vehicle's effective mass (the
  hump-yard rotating-mass factor), and its drive and brake torques act on the body
  through the rail. Its spin and angle are not integrated: they are read off the body
  where a state is read (:func:`fill_rolling`).
* slipping: ``omega`` is integrated, and the rail force is the creep law at the slip
  velocity ``s = omega r - v``, beyond its peak (gross slip, or slide). A brake on a
  slipping axle is Coulomb-like on ``omega``, its direction held over each step as the
  bodies' resistances are. A wheel its brake has locked is friction at the rail, a
  Coulomb-like magnitude on its vehicle: a vehicle sliding on locked wheels stops, and
  they hold it up to ``psi N``.

An axle starts to slip when the tangential force its torques demand exceeds ``psi N``
(:func:`slip_margin`); it re-adheres when ``|s|`` falls back below the creep peak ``s0``.
Both are events, as is a sliding wheel coming to a stop.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..jit import kernel, law
from .adhesion import creep_ratio_unchecked, psi
from .bodies import BRAKE, DRIVE, SLIP, coulomb

#: Every axle of a train (one entry per axle): its vehicle, radius and inverse, inertia
#: ``J``, ``J/r^2``, the normal force on its rail, its adhesion law (a row of the law
#: table), the creep law's peak slip and kinetic ratio, the rail condition (configs and
#: the driver program) and the rail factor (that times the plugin's adhesion factor); the
#: held torque and brake (train frame); the modes: rolling (1) or slipping (0), and a
#: slipping axle's spin direction held over each step (0: locked); and, for a rolling
#: axle, its angle ``phi_at`` when its body stood at ``x_at`` (its angle is read off the
#: distance run since).
Axles = namedtuple("Axles", ["vehicle", "radius", "inv_radius", "inertia", "mass_equiv",
                             "normal", "law", "creep_slip", "kinetic_ratio",
                             "rail_condition", "rail_factor", "torque", "brake", "rolling",
                             "spin", "phi_at", "x_at"])


@law
def rail_force_needed(v, a, torque, brake_max, r, mass_equiv):  # pragma: no cover
    """The tangential rail force a rolling axle must transmit: its drive torque less its
    brake (against the motion, or at rest holding against the torque up to its
    magnitude) over the radius, less what accelerating its own inertia takes."""
    if v > 0.0:
        brake = brake_max
    elif v < 0.0:
        brake = -brake_max
    else:
        brake = min(max(torque, -brake_max), brake_max)
    return (torque - brake) / r - mass_equiv * a


@kernel(inline=True)
def slip_margin(ax, laws, k, v, a):  # pragma: no cover (compiled)
    """Axle ``k``'s slip margin (rolling, its vehicle at speed ``v`` accelerating at
    ``a``): the adhesion ``psi N`` less the rail force it needs. It starts to slip where
    the margin falls through zero."""
    cap = psi(laws, ax.law[k], v) * ax.rail_factor[k] * ax.normal[k]
    need = rail_force_needed(v, a, ax.torque[k], ax.brake[k], ax.radius[k], ax.mass_equiv[k])
    return cap - abs(need)


@kernel(inline=True)
def contact(ax, laws, k, omega, v):  # pragma: no cover (compiled)
    """A slipping axle's contact: ``(rail, hold)``, the creep law's rail force at its slip
    and, for a locked wheel (spin held at 0), the friction that holds its vehicle (the
    adhesion peak, or the creep law's beyond it), else 0. A slipping axle demands more
    than adhesion gives, so inside the creep peak its contact is saturated (full
    ``psi N``); beyond it, the creep law falls off."""
    x = (omega * ax.radius[k] - v) / ax.creep_slip[k]
    ratio = (1.0 if x > 0.0 else (-1.0 if x < 0.0 else 0.0)) if abs(x) <= 1.0 else \
        creep_ratio_unchecked(x, ax.kinetic_ratio[k])
    cap = psi(laws, ax.law[k], v) * ax.rail_factor[k] * ax.normal[k]
    hold = 0.0
    if ax.spin[k] == 0.0:
        # as a signed force a locked wheel's friction would vanish at v = 0 and flip as v
        # passes zero, so a vehicle pushed against its locked wheels would stop and slide
        # off again at one instant, for ever: it is a magnitude, as a brake is
        hold = cap * (1.0 if abs(x) <= 1.0 else abs(ratio))
    return cap * ratio, hold


@kernel
def slipping_axles(ax, laws, slipping, count, y, dy, somega, sphi, v, force, resist,
                   flows, full):  # pragma: no cover (compiled)
    """The slipping axles (``slipping[:count]``): their rail forces on their vehicles
    (into ``force``, or as a locked wheel's friction into ``resist``), their spins' and
    angles' rates, and, where ``full``, their work (drive, brake, contact)."""
    for c in range(count):
        k = slipping[c]
        i = ax.vehicle[k]
        omega = y[somega + k]
        rail, hold = contact(ax, laws, k, omega, v[i])
        if hold > 0.0:
            resist[i] += hold
        else:
            force[i] += rail
        drive = ax.torque[k] - rail * ax.radius[k]
        direction = ax.spin[k] if ax.spin[k] != 0.0 else omega
        dy[somega + k] = coulomb(drive, ax.brake[k], direction) / ax.inertia[k]
        if full:
            dy[sphi + k] = omega
            braked = drive - coulomb(drive, ax.brake[k], direction)
            flows[DRIVE, i] += ax.torque[k] * omega
            flows[BRAKE, i] += braked * omega
            flows[SLIP, i] += rail * (omega * ax.radius[k] - v[i])


@kernel
def fill_rolling(ax, y, sx, sv, somega, sphi):  # pragma: no cover (compiled)
    """The rolling axles' spins and angles written into ``y``, read off their bodies:
    ``omega = v / r`` and the angle turned since ``x_at`` (rolling without slip)."""
    for k in range(ax.vehicle.size):
        if ax.rolling[k] != 0.0:
            i = ax.vehicle[k]
            y[somega + k] = y[sv + i] * ax.inv_radius[k]
            y[sphi + k] = ax.phi_at[k] + (y[sx + i] - ax.x_at[k]) * ax.inv_radius[k]


def creep_slip_of(ax: Axles, laws: np.ndarray, need: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The rolling axles' creep slip (m/s) where they transmit ``need`` at their vehicles'
    speeds ``v`` (one entry per axle): the creep law's rising branch, inverted."""
    from .adhesion import creep_slip_fraction, psi_many

    cap = psi_many(laws, ax.law, v) * ax.rail_factor * ax.normal
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.clip(np.where(cap > 0, need / cap, 0.0), -1.0, 1.0)
    return creep_slip_fraction(ratio) * ax.creep_slip
