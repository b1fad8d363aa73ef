"""The rules' braking-distance method: how far a train runs from the moment the driver's
valve is put to braking until it stands, worked out without simulating it.

This is the calculation of the Russian traction rules, the independent check the
simulated stops are held against. The stop is split in two:

* **Preparation**: the brakes of the whole train are taken to apply all at once
  after a preparation time ``t_p``, the train running on at its initial speed
  ``V0`` meanwhile: ``S_p = V0 t_p / 3.6`` (km/h, s, m). For an emergency
  application, with ``b_T`` the specific brake force at ``V0`` (N/kN) and ``i``
  the grade (per mille, descents negative)::

      freight, up to 200 axles   t_p = 7 - 10 i / b_T
      freight, 201 to 300 axles  t_p = 10 - 15 i / b_T
      freight, over 300 axles    t_p = 12 - 18 i / b_T
      passenger                  t_p = 4 - 5 i / b_T

  **Which axles are counted: the consist's, not the locomotives'.** The bands are the
  rules' "freight consists of up to 200 axles", "of 201 to 300 axles", "of over 300
  axles" (as the method is quoted: "для грузовых составов длиной до 200 осей ...").
  A consist (состав) is the cars a train's locomotives haul: the Russian railways'
  technical operating rules (ПТЭ, ЦРБ-756 of 26.05.2000, and in the same terms the
  rolling-stock safety regulation, decree No. 524 of 15.07.2010) define a train as a
  formed and coupled consist of cars with one or more working locomotives; the brake
  certificate (ВУ-45) likewise gives a freight train's weight without its locomotive.
  The traction rules' full text is not among the documents this project was made from:
  the bands' wording is as quoted, and the reading rests on that definition.

  So the band counts every vehicle's axles but the working locomotives'
  (:func:`consist_axles`), a locomotive being a vehicle with the driver's brake valve or
  an independent brake (a car has neither): SimpleLoco (8 axles) and 50 four-axle cars
  are a consist of 200 axles, the first band (7 s on level track). A locomotive hauled
  dead, braked as a car, counts with the cars. :attr:`BrakingDistance.axles` says how
  many axles chose the band.

* **Braking**: from ``V0`` down to rest in steps of 10 km/h, each step
  ``4.17 (Vn^2 - Vk^2) / (1000 theta_p phi_kp(Vm) + w_ox(Vm) + i)`` metres, at the
  step's mean speed ``Vm``. ``4.17 = 1000 (1 + gamma) / (2 g 3.6^2)`` with the
  rules' rotating-mass share ``gamma = 0.06``; ``w_ox`` is the train's
  specific running resistance (N/kN), here from the vehicles' configured
  resistance formulas.

The shoes enter through the *calculated* friction coefficient, which depends on
speed only, and the *calculated* shoe force ``K_p``: the actual force ``K``
(tonne-force per shoe) scaled so that ``phi_kp(V) K_p`` is the shoe's friction
force ``phi_k(K, V) K`` of :mod:`rrscore.brakeshoes`::

    cast iron  phi_kp = 0.27 (V + 100)/(5V + 100)   K_p = K (0.6/0.27) (16K + 100)/(80K + 100)
    composite  phi_kp = 0.36 (V + 150)/(2V + 150)   K_p = K (0.44/0.36) (K + 20)/(4K + 20)

The braking ratio ``theta_p`` is the train's sum of ``K_p`` over its weight in
tonne-force; with two shoe materials the brake force is the sum of one such
term per material.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model.formulas import KMH_PER_MS
from . import brakeshoes

#: The rules' share of rotating masses in the train's inertia.
ROTATING_FRACTION = 0.06

#: Calculated friction coefficient (speed in km/h) and calculated shoe force (actual force
#: in tonne-force) of each shoe material.
_CALCULATED = {
    "cast_iron": (lambda v: 0.27 * (v + 100.0) / (5.0 * v + 100.0),
                  lambda k: k * (0.6 / 0.27) * (16.0 * k + 100.0) / (80.0 * k + 100.0)),
    "composite": (lambda v: 0.36 * (v + 150.0) / (2.0 * v + 150.0),
                  lambda k: k * (0.44 / 0.36) * (k + 20.0) / (4.0 * k + 20.0)),
}


def calculated_friction(shoe: str, speed_kmh):
    """The rules' calculated friction coefficient ``phi_kp`` of a ``shoe`` material at
    ``speed_kmh``."""
    return _CALCULATED[_material(shoe)][0](np.asarray(speed_kmh, dtype=float))


def calculated_shoe_force(shoe: str, force_tf):
    """The calculated force ``K_p`` (tonne-force) of a shoe pressed with ``force_tf``."""
    return _CALCULATED[_material(shoe)][1](np.asarray(force_tf, dtype=float))


def _material(shoe: str) -> str:
    if shoe not in _CALCULATED:
        raise ValueError(f"unknown shoe type {shoe!r}, expected one of "
                         f"{', '.join(brakeshoes.SHOE_TYPES)}")
    return shoe


def preparation_time(kind: str, axles: int, grade_permille: float, b_t: float) -> float:
    """Preparation time ``t_p`` (s) of an emergency application: ``kind`` "freight" or
    "passenger", the train's ``axles``, the grade (per mille, descents negative) and the
    specific brake force ``b_t`` at the initial speed (N/kN)."""
    if kind == "passenger":
        a, b = 4.0, 5.0
    elif kind == "freight":
        a, b = (7.0, 10.0) if axles <= 200 else (10.0, 15.0) if axles <= 300 else (12.0, 18.0)
    else:
        raise ValueError(f"unknown train kind {kind!r}, expected 'freight' or 'passenger'")
    return a - b * grade_permille / b_t


@dataclass(frozen=True)
class BrakingDistance:
    """The result of :func:`braking_distance` (SI units, except where a name says)."""

    #: Braking ratio ``theta_p`` of each shoe material in the train.
    braking_ratio: dict[str, float]
    #: Preparation time ``t_p``, s, and the distance run in it, m.
    preparation_time_s: float
    preparation_distance_m: float
    #: Distance from the brakes' (notional) full application to rest, m.
    braking_distance_m: float
    #: Speed steps ``(V_start, V_end)`` in km/h and the distance of each, m.
    steps: tuple[tuple[float, float, float], ...]
    #: The axles that chose the preparation-time band: the consist's, every vehicle's
    #: but the working locomotives' (:func:`consist_axles`).
    axles: int = 0

    @property
    def total_m(self) -> float:
        """Whole stopping distance, m: preparation plus braking."""
        return self.preparation_distance_m + self.braking_distance_m


def braking_ratio(train, pressure_share: float = 1.0) -> dict[str, float]:
    """Braking ratio ``theta_p`` of a :class:`~rrscore.train.Train` per shoe material: the
    calculated shoe forces of every vehicle with a distributor, its cylinders at the
    maximum pressure of its configured mode (times ``pressure_share``: a service
    application's part of it), over the train's weight (both in tonne-force)."""
    total = dict.fromkeys(brakeshoes.SHOE_TYPES, 0.0)
    for i, cfg in enumerate(train.brake_configs):
        if cfg["system"] != "air" or cfg["distributor"] == "none":
            continue
        if cfg["shoe_type"] not in total:
            raise ValueError(f"vehicle {i} has {cfg['shoe_type']!r} shoes; the rules' method "
                             f"covers {' and '.join(brakeshoes.SHOE_TYPES)} shoes only")
        pressure = cfg[f"max_pressure_{cfg['mode']}"] * pressure_share
        area = np.pi * cfg["cylinder_diameter"] ** 2 / 4.0
        force = brakeshoes.shoe_force(pressure, area, cfg["cylinders"], cfg["spring_force"],
                                      cfg["rigging_ratio"], cfg["rigging_efficiency"],
                                      cfg["shoes"])
        k = float(force) / brakeshoes.TONNE_FORCE
        total[cfg["shoe_type"]] += cfg["shoes"] * float(calculated_shoe_force(cfg["shoe_type"], k))
    weight_tf = float(np.sum(train.weight)) / brakeshoes.TONNE_FORCE
    return {shoe: k / weight_tf for shoe, k in total.items() if k > 0.0}


def _specific_resistance(train, speed_kmh: float) -> float:
    """The train's running resistance at ``speed_kmh``, N per kN of its weight."""
    v = speed_kmh / KMH_PER_MS
    force = np.sum(train.c0 + train.c1 * v + train.c2 * v * v)
    return 1000.0 * float(force) / float(np.sum(train.weight))


def braking_distance(train, speed_mps: float, grade_permille: float = 0.0,
                     kind: str | None = None, step_kmh: float = 10.0,
                     rotating_fraction: float = ROTATING_FRACTION,
                     pressure_share: float = 1.0) -> BrakingDistance:
    """Stopping distance of ``train`` (a :class:`~rrscore.train.Train`) braked in
    emergency from ``speed_mps`` on a constant grade, by the rules' method (see the
    module docstring). ``kind`` is "freight" or "passenger"; by default "passenger"
    when every distributor of the train is a passenger one, else "freight". With
    ``pressure_share`` below 1 the cylinders are at that share of their full pressure (a
    service application; the preparation time is the rules' as given)."""
    theta = braking_ratio(train, pressure_share)
    if not theta:
        raise ValueError(f"train {train.name!r} has no air-braked vehicle with a distributor")
    kind = train_kind(train) if kind is None else kind
    v0 = speed_mps * KMH_PER_MS
    axles = consist_axles(train)
    t_p = preparation_time(kind, axles, grade_permille, _brake(theta, v0))
    edges = np.append(np.arange(v0, 0.0, -step_kmh), 0.0)
    steps = tuple((float(vn), float(vk), _step(train, theta, vn, vk, grade_permille,
                                               rotating_fraction))
                  for vn, vk in zip(edges[:-1], edges[1:], strict=True))
    return BrakingDistance(theta, t_p, v0 * t_p / KMH_PER_MS,
                           sum(s[2] for s in steps), steps, axles)


def consist_axles(train) -> int:
    """The axles of a train's consist, the number that chooses the rules' preparation-time
    band: every vehicle's but the working locomotives', a locomotive being a vehicle with
    the driver's brake valve or an independent brake (see the module on which axles are
    counted)."""
    return int(sum(int(n) for n, brake in zip(train.num_axis, train.brake_configs,
                                              strict=True)
                   if not (brake["system"] == "air"
                           and (brake["driver_valve"] or brake["independent"]))))


def train_kind(train) -> str:
    """The rules' kind of a train: "passenger" when every distributor of it is a passenger
    one, else "freight"."""
    kinds = {c["distributor"] for c in train.brake_configs
             if c["system"] == "air" and c["distributor"] != "none"}
    return "passenger" if kinds == {"passenger"} else "freight"


def stopping_distances(train, speeds_mps, pressure_share: float = 1.0,
                       grade_permille: float = 0.0,
                       rotating_fraction: float = ROTATING_FRACTION) -> np.ndarray:
    """The distance (m) in which the train's brakes, their cylinders at ``pressure_share``
    of their full pressure, stop it from each of ``speeds_mps`` (increasing, the first 0)
    on a constant grade: the rules' steps (the module) between consecutive speeds, added
    up, without the preparation. The built-in driver plans its stops on it."""
    theta = braking_ratio(train, pressure_share)
    if not theta:
        raise ValueError(f"train {train.name!r} has no air-braked vehicle with a distributor")
    v = np.asarray(speeds_mps, dtype=float) * KMH_PER_MS
    steps = [_step(train, theta, vn, vk, grade_permille, rotating_fraction)
             for vk, vn in zip(v[:-1], v[1:], strict=True)]
    return np.concatenate([[0.0], np.cumsum(steps)])


def _brake(theta: dict[str, float], v_kmh: float) -> float:
    """The specific brake force at ``v_kmh``, N/kN, of the braking ratios ``theta``."""
    return 1000.0 * sum(t * float(calculated_friction(s, v_kmh)) for s, t in theta.items())


def _step(train, theta: dict[str, float], vn: float, vk: float, grade_permille: float,
          rotating_fraction: float) -> float:
    """The distance (m) of one of the rules' steps, from ``vn`` down to ``vk`` km/h."""
    coefficient = 1000.0 * (1.0 + rotating_fraction) / (2.0 * train.gravity * KMH_PER_MS**2)
    vm = 0.5 * (vn + vk)
    decel = _brake(theta, vm) + _specific_resistance(train, vm) + grade_permille
    if decel <= 0.0:
        raise ValueError(f"the brakes cannot stop the train at {vm:.0f} km/h on "
                         f"{grade_permille} per mille")
    return float(coefficient * (vn * vn - vk * vk) / decel)
