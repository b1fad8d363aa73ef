"""Brake rigging and shoes: brake cylinder pressure to shoe force, shoe force to brake force.

The cylinder pushes its piston with ``p * A`` less the release spring; the
rigging multiplies that by its lever ratio and efficiency and shares it over the
shoes. Each shoe presses on its wheel with force ``K`` and brakes it with
``phi(K, V) * K``, where the friction coefficient of the shoe falls with the
speed and, for a given material, with the force (the empirical formulas of the
Russian traction rules, ``K`` in tonne-force, ``V`` in km/h):

* cast iron: ``phi = 0.6 (16K + 100)/(80K + 100) * (V + 100)/(5V + 100)``
* composite: ``phi = 0.44 (K + 20)/(4K + 20) * (V + 150)/(2V + 150)``

A shoe (or pad) measured on a test stand may instead be given by a table of its
friction coefficient against speed (shoe type ``table``): linear between the
points, held at the end values beyond them, independent of the force.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..model.units import G

#: One tonne-force, N: the unit of shoe force in the friction formulas.
TONNE_FORCE = 1000.0 * G

#: Shoe materials with a friction formula, by the name vehicle configs use.
SHOE_TYPES = ("cast_iron", "composite")
#: The shoe type whose friction a vehicle config gives as a table against speed.
TABLE = "table"


def shoe_friction(shoe: str, force_n, speed_mps):
    """Friction coefficient of a ``shoe`` ("cast_iron" or "composite") pressed with
    ``force_n`` (N, per shoe) at ``speed_mps`` (m/s, either sign); arrays broadcast."""
    k = np.asarray(force_n, dtype=float) / TONNE_FORCE
    v = np.abs(np.asarray(speed_mps, dtype=float)) * 3.6
    if shoe == "cast_iron":
        return 0.6 * (16.0 * k + 100.0) / (80.0 * k + 100.0) * (v + 100.0) / (5.0 * v + 100.0)
    if shoe == "composite":
        return 0.44 * (k + 20.0) / (4.0 * k + 20.0) * (v + 150.0) / (2.0 * v + 150.0)
    raise ValueError(f"unknown shoe type {shoe!r}, expected one of {', '.join(SHOE_TYPES)}")


def table_friction(speeds_mps, friction, speed_mps):
    """Friction coefficient from a table of ``friction`` at increasing ``speeds_mps``
    (m/s): linear between the points, the end values beyond them; either sign of
    ``speed_mps``."""
    return np.interp(np.abs(np.asarray(speed_mps, dtype=float)), speeds_mps, friction)


def shoe_force(cylinder_pa, piston_area, cylinders, spring_force, ratio, efficiency, shoes):
    """Force of each shoe, N, for cylinder pressure ``cylinder_pa`` (gauge): the piston force
    ``p A`` less the release spring, times ``cylinders``, the rigging ``ratio`` and its
    ``efficiency``, shared over ``shoes``; never negative (below the spring's force the
    shoes stay off the wheels)."""
    piston = np.maximum(np.asarray(cylinder_pa) * piston_area - spring_force, 0.0)
    return piston * cylinders * ratio * efficiency / shoes


def brake_force(shoe_types: np.ndarray, force_n, shoes, speed_mps,
                tables: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]] = ()) -> np.ndarray:
    """Brake force at the rail of each vehicle, N: ``shoes * phi(K, V) * K``, with the
    shoe material of each vehicle in ``shoe_types`` (an array of :data:`SHOE_TYPES`
    indices, or -1 for a table) and, for the table shoes, ``tables``: groups of
    ``(vehicle indices, speeds, friction)``, one per distinct table."""
    force_n = np.asarray(force_n, dtype=float)
    speed_mps = np.asarray(speed_mps, dtype=float)
    phi = np.zeros_like(force_n)
    for i, name in enumerate(SHOE_TYPES):  # a loop over materials, not vehicles
        where = shoe_types == i
        if where.any():
            phi[where] = shoe_friction(name, force_n[where], speed_mps[where])
    for rows, speeds, friction in tables:
        phi[rows] = table_friction(speeds, friction, speed_mps[rows])
    return shoes * phi * force_n
