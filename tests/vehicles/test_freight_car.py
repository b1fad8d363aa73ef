"""The freight car's wheel chocks against closed forms (its hand brake is tested through
the shipped run-out scenario)."""

from __future__ import annotations

import numpy as np
import pytest

from rrscore.model.units import G

CAR = {"empty_mass": "23 t", "payload_mass": "69.5 t", "length": "13.92 m", "num_axis": 4,
       "wheel_diameter": "0.957 m", "wheelset_inertia": "96 kg*m^2",
       "resistance": {"formula": "none", "starting": False}}


def _car(rrs_train, grade: str, **params):
    return rrs_train("freight_car", grade=grade, vehicle_table=CAR, **params)


def _masses(drive) -> tuple[float, float]:
    """The car's mass and its mass with the rotating wheelsets, kg."""
    tr = drive.drive.train
    return float(tr.mass[0]), float(tr.mass[0] + tr.axle_mass_equiv.sum())


def test_a_chocked_car_on_20_permille_stays_put_for_an_hour_and_rolls_once_released(
        rrs_train):
    # Chock: 0.2 * m g / 4 = 0.05 m g holds against the pull m g sin(atan 0.02) = 0.02 m g.
    # Released at 3600 s, the car rolls back down: a = g sin(atan 0.02) m / m_eff.
    car = _car(rrs_train, "20 permille")
    r = car.drive([(0, "set chocks=1"), (3600, "set chocks=0")], max_time="3660 s",
                  start={"position": "1 km"}, output={"sample_interval": "60 s"})
    x = r.signal("position_m")
    held = r.time <= 3600.0
    assert np.all(x[held] == x[0])  # not a nanometre
    m, m_eff = _masses(r)
    a = -G * 0.02 / np.sqrt(1 + 0.02**2) * m / m_eff
    assert r.speed_at(3660.0) == pytest.approx(a * 60.0, rel=1e-6)


def test_a_car_running_onto_a_chock_stops_in_v_squared_over_2a_with_its_rotating_masses(
        rrs_train):
    # On level track the skid's friction 0.2 m g / 4 is the only force: the car stops
    # from 3 m/s in v^2 / (2 a), a = 0.05 m g / m_eff, the wheelsets' spin included.
    car = _car(rrs_train, "0 permille")
    r = car.drive([(0, "set chocks=1")], max_time="60 s",
                  start={"position": "1 km", "speed": "3 m/s"},
                  stop={"standstill": True, "standstill_speed": 0.0},
                  output={"sample_interval": "0.5 s"})
    assert r.summary["stop_reason"] == "standstill"
    m, m_eff = _masses(r)
    a = 0.2 * m * G / 4 / m_eff
    assert r.distance_to_stop() == pytest.approx(3.0**2 / (2 * a), rel=5e-3)
    # the skid's work counts with the brakes (Q_r): all the kinetic energy, spin included
    assert r.summary["energy"]["brake_J"] == pytest.approx(0.5 * m_eff * 9.0, rel=1e-4)


def test_a_chock_too_weak_for_the_grade_slides_at_the_difference(rrs_train):
    # chock_friction 0.05: 0.0125 m g against a pull of 0.02 m g: the car slides back,
    # a = (0.0125 - 0.02 / sqrt(1.0004)) g m / m_eff (negative: down the grade, towards -x)
    car = _car(rrs_train, "20 permille", chock_friction=0.05)
    r = car.drive([(0, "set chocks=1")], max_time="30 s", start={"position": "1 km"},
                  output={"sample_interval": "1 s"})
    m, m_eff = _masses(r)
    a = (0.0125 - 0.02 / np.sqrt(1 + 0.02**2)) * G * m / m_eff
    assert r.speed_at(30.0) == pytest.approx(a * 30.0, rel=1e-6)


def test_a_car_with_a_constant_brake_force_stops_in_v_squared_over_2a_with_its_rotating_masses(
        rrs_train):
    # The hand brake's 40 kN at the rail is the only force on level track: from 15 m/s the
    # car stops in v^2 / (2 a), a = F / m_eff with m_eff = m + 4 J / r^2 (the wheelsets
    # slow down with it); without the rotating masses it would stop 1.8 % short.
    car = _car(rrs_train, "0 permille", hand_brake_force="40 kN")
    r = car.drive([(0, "set hand_brake=1")], max_time="120 s",
                  start={"position": "1 km", "speed": "15 m/s"},
                  stop={"standstill": True, "standstill_speed": 0.0},
                  output={"sample_interval": "0.25 s"})
    assert r.summary["stop_reason"] == "standstill"
    m, m_eff = _masses(r)
    assert m_eff == pytest.approx(m + 4 * 96 / 0.4785**2, rel=1e-12)
    a = 40e3 / m_eff
    assert r.distance_to_stop() == pytest.approx(15.0**2 / (2 * a), rel=5e-3)
