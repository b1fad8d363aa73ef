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

import numpy as np

from ..jit import kernel, law
from ..model.brake import SHOE_TYPES, TABLE
from ..model.units import G
from .tables import interp_one

__all__ = ["SHOE_TYPES", "TABLE", "TONNE_FORCE", "brake_force", "shoe_force", "shoe_friction",
           "table_friction"]

#: One tonne-force, N: the unit of shoe force in the friction formulas.
TONNE_FORCE = 1000.0 * G
#: Shoe materials by their index in :data:`SHOE_TYPES` (-1: a table).
CAST_IRON, COMPOSITE = 0, 1


@law
def formula_friction(material, force, speed):  # pragma: no cover (compiled)
    """Friction coefficient of a shoe of ``material`` (:data:`CAST_IRON` or
    :data:`COMPOSITE`) pressed with ``force`` (N) at ``speed`` (m/s, either sign): the
    rules' formulas."""
    k = force / TONNE_FORCE
    v = abs(speed) * 3.6
    if material == CAST_IRON:
        return 0.6 * (16.0 * k + 100.0) / (80.0 * k + 100.0) * (v + 100.0) / (5.0 * v + 100.0)
    return 0.44 * (k + 20.0) / (4.0 * k + 20.0) * (v + 150.0) / (2.0 * v + 150.0)


@law
def shoe_force(cylinder_pa, piston_area, cylinders, spring_force, ratio, efficiency,
               shoes):  # pragma: no cover (compiled)
    """Force of each shoe, N, for cylinder pressure ``cylinder_pa`` (gauge): the piston
    force ``p A`` less the release spring, times ``cylinders``, the rigging ``ratio`` and
    its ``efficiency``, shared over ``shoes``; never negative (below the spring's force
    the shoes stay off the wheels)."""
    piston = max(cylinder_pa * piston_area - spring_force, 0.0)
    return piston * cylinders * ratio * efficiency / shoes


@kernel(inline=True)
def shoe_brake_force(material, force, shoes, speed, table):  # pragma: no cover (compiled)
    """Brake force at the rail of a vehicle, N: ``shoes * phi(K, V) * K`` for ``shoes``
    shoes pressed with ``force`` each at ``speed``; ``phi`` the formula of ``material``,
    or for ``material`` -1 the table ``table`` (speeds, then friction values: two rows,
    NaN padding the end)."""
    if material >= 0:
        return shoes * formula_friction(material, force, speed) * force
    m = table.shape[1]
    while m > 0 and table[0, m - 1] != table[0, m - 1]:
        m -= 1
    return shoes * interp_one(abs(speed), table[0, :m], table[1, :m]) * force


def shoe_friction(shoe: str, force_n, speed_mps):
    """Friction coefficient of a ``shoe`` ("cast_iron" or "composite") pressed with
    ``force_n`` (N, per shoe) at ``speed_mps`` (m/s, either sign); arrays broadcast."""
    if shoe not in SHOE_TYPES:
        raise ValueError(f"unknown shoe type {shoe!r}, expected one of "
                         f"{', '.join(SHOE_TYPES)}")
    return formula_friction(float(SHOE_TYPES.index(shoe)), force_n, speed_mps)


@kernel(counted=True)
def _table_friction(speeds, friction, speed):  # pragma: no cover (compiled)
    out = np.empty(speed.size)
    for i in range(speed.size):
        out[i] = interp_one(abs(speed[i]), speeds, friction)
    return out


def table_friction(speeds_mps, friction, speed_mps):
    """Friction coefficient from a table of ``friction`` at increasing ``speeds_mps``
    (m/s): linear between the points, the end values beyond them; either sign of
    ``speed_mps``."""
    v = np.asarray(speed_mps, dtype=float)
    out = _table_friction(np.asarray(speeds_mps, dtype=float), np.asarray(friction, dtype=float),
                          np.ascontiguousarray(v.ravel()))
    return out.reshape(v.shape) if v.ndim else float(out[0])


def brake_force(materials, force_n, shoes, speed_mps, tables=None) -> np.ndarray:
    """Brake force at the rail of each vehicle, N: ``shoes * phi(K, V) * K``, with each
    vehicle's shoe material in ``materials`` (a :data:`SHOE_TYPES` index, or -1 for a
    table) and, for table shoes, its table in ``tables[i]`` (2 rows: speeds, friction)."""
    materials = np.asarray(materials)
    force_n, shoes, speed_mps = np.broadcast_arrays(
        np.asarray(force_n, dtype=float), np.asarray(shoes, dtype=float),
        np.asarray(speed_mps, dtype=float))
    out = np.zeros(force_n.shape)
    for i in range(out.size):
        table = np.zeros((2, 1)) if tables is None or tables[i] is None else np.asarray(
            tables[i], dtype=float)
        out.flat[i] = _one_brake_force(int(materials.flat[i]), float(force_n.flat[i]),
                                       float(shoes.flat[i]), float(speed_mps.flat[i]), table)
    return out


@kernel
def _one_brake_force(material, force, shoes, speed, table):  # pragma: no cover (compiled)
    return shoe_brake_force(material, force, shoes, speed, table)
