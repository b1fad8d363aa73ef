"""Wheelsets (rrscore.physics.wheelsets): the rail force a rolling axle needs, its slip
margin, a slipping axle's contact and spin, and the rolling axles' spins and angles read
off their bodies, each against the formula worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rrscore.model.formulas import adhesion_law, law_table
from rrscore.physics.adhesion import creep_force_ratio
from rrscore.physics.bodies import BRAKE, DRIVE, SLIP
from rrscore.physics.wheelsets import (
    Axles,
    contact,
    creep_slip_of,
    fill_rolling,
    rail_force_needed,
    slip_margin,
    slipping_axles,
)

REL = 1e-12
R, J = 0.525, 200.0  # wheel radius (m) and one wheelset's inertia (kg m^2)
NORMAL = 115e3  # N on the rail under one axle
S0, K = 0.1, 0.7  # creep peak slip (m/s) and kinetic ratio
#: Adhesion laws: a constant 0.3, and Curtius-Kniffler 7.5/(V + 44) + 0.161 (V in km/h).
LAWS = law_table([adhesion_law("constant", {"psi": 0.3}), adhesion_law("curtius_kniffler")])


def axles(n=1, vehicle=None, law=0, torque=0.0, brake=0.0, rolling=1.0, spin=0.0,
          rail_factor=1.0):
    """``n`` axles of equal wheelsets (one vehicle each unless ``vehicle`` says)."""
    full = lambda value: np.full(n, float(value))  # noqa: E731
    vehicle = np.arange(n) if vehicle is None else np.asarray(vehicle)
    return Axles(vehicle.astype(np.int64), full(R), full(1 / R), full(J), full(J / R**2),
                 full(NORMAL), np.full(n, law, dtype=np.int64), full(S0), full(K), full(1.0),
                 full(rail_factor), full(torque), full(brake), full(rolling), full(spin),
                 full(0.0), full(0.0))


# --- a rolling axle ------------------------------------------------------------------------


def test_the_rail_force_a_rolling_axle_needs_is_drive_less_brake_over_r_less_its_inertia():
    # 30 kN m of drive, 10 kN m of brake, accelerating at 0.2 m/s^2: the brake acts against
    # the motion, and the wheelset's own J/r^2 takes its share of the acceleration
    m_eq = J / R**2
    assert rail_force_needed(5.0, 0.2, 30e3, 10e3, R, m_eq) == pytest.approx(
        (30e3 - 10e3) / R - m_eq * 0.2, rel=REL)
    assert rail_force_needed(-5.0, 0.2, 30e3, 10e3, R, m_eq) == pytest.approx(
        (30e3 + 10e3) / R - m_eq * 0.2, rel=REL)


def test_at_rest_the_brake_holds_the_drive_up_to_its_own_torque():
    # a brake stronger than the drive holds it all; a weaker one only its own torque
    assert rail_force_needed(0.0, 0.0, 8e3, 10e3, R, 0.0) == 0.0
    assert rail_force_needed(0.0, 0.0, -8e3, 10e3, R, 0.0) == 0.0
    assert rail_force_needed(0.0, 0.0, 30e3, 10e3, R, 0.0) == pytest.approx(20e3 / R, rel=REL)
    assert rail_force_needed(0.0, 0.0, -30e3, 10e3, R, 0.0) == pytest.approx(-20e3 / R, rel=REL)


def test_the_slip_margin_is_adhesion_less_the_rail_force_needed():
    # psi N = 0.3 * 115 kN = 34.5 kN against 20 kN m / 0.525 m = 38.1 kN: it slips
    ax = axles(torque=20e3)
    assert slip_margin(ax, LAWS, 0, 3.0, 0.0) == pytest.approx(0.3 * NORMAL - 20e3 / R, rel=REL)
    # Curtius-Kniffler at 36 km/h (10 m/s): psi = 7.5/80 + 0.161, scaled by the rail factor
    # (wet rail, sanding) and the margin the same whichever way the force acts
    ax = axles(law=1, torque=-15e3, rail_factor=0.65)
    psi = 7.5 / 80 + 0.161
    assert slip_margin(ax, LAWS, 0, 10.0, 0.0) == pytest.approx(
        psi * 0.65 * NORMAL - 15e3 / R, rel=REL)


def test_the_creep_slip_of_rolling_axles_transmits_what_they_need():
    # the rising branch inverted: the creep law at that slip gives the rail force back
    need = np.array([0.0, 10e3, -20e3, 0.3 * NORMAL, 50e3])  # the last beyond adhesion
    ax = axles(5)
    slip = creep_slip_of(ax, LAWS, need, np.full(5, 10.0))
    ratio = creep_force_ratio(slip, S0, K)
    np.testing.assert_allclose(ratio[:4] * 0.3 * NORMAL, need[:4], rtol=1e-12, atol=1e-9)
    assert slip[3] == pytest.approx(S0, rel=REL) and slip[4] == pytest.approx(S0, rel=REL)
    # by hand at a ratio 0.8 of adhesion: x = 0.8/(1 + sqrt(1 - 0.64)) = 0.5
    half = creep_slip_of(axles(), LAWS, np.array([0.8 * 0.3 * NORMAL]), np.array([0.0]))
    assert half[0] == pytest.approx(0.5 * S0, rel=REL)


# --- a slipping axle -------------------------------------------------------------------------


def test_a_slipping_axle_inside_the_creep_peak_transmits_all_the_adhesion():
    # slip 0.05 m/s < s0: saturated, psi N in the direction of the slip
    ax = axles(rolling=0.0, spin=1.0)
    v = 10.0
    rail, hold = contact(ax, LAWS, 0, (v + 0.05) / R, v)
    assert rail == pytest.approx(0.3 * NORMAL, rel=REL) and hold == 0.0
    rail, hold = contact(ax, LAWS, 0, (v - 0.05) / R, v)
    assert rail == pytest.approx(-0.3 * NORMAL, rel=REL)


def test_beyond_the_creep_peak_the_contact_falls_along_the_creep_law():
    # slip 2 s0, k = 0.7: 0.7 + 0.3 * 2*2/(1 + 4) = 0.94 of psi N
    ax = axles(rolling=0.0, spin=1.0)
    rail, hold = contact(ax, LAWS, 0, (10.0 + 2 * S0) / R, 10.0)
    assert rail == pytest.approx(0.94 * 0.3 * NORMAL, rel=REL) and hold == 0.0


def test_a_locked_wheel_is_friction_on_its_vehicle_at_the_sliding_fraction():
    # spin held at 0, the vehicle at 10 m/s: slip -10 m/s = -100 s0, so the wheel drags
    # with k + (1 - k) * 2*100/(1 + 100^2) of psi N, a magnitude, whichever way it slides
    ax = axles(rolling=0.0, spin=0.0)
    rail, hold = contact(ax, LAWS, 0, 0.0, 10.0)
    expected = (K + (1 - K) * 200 / 10001) * 0.3 * NORMAL
    assert hold == pytest.approx(expected, rel=REL)
    assert rail == pytest.approx(-expected, rel=REL)
    assert contact(ax, LAWS, 0, 0.0, -10.0)[1] == pytest.approx(expected, rel=REL)
    # a locked wheel on a vehicle that has stopped holds it with all of psi N
    assert contact(ax, LAWS, 0, 0.0, 0.0)[1] == pytest.approx(0.3 * NORMAL, rel=REL)


def test_a_slipping_axle_spins_up_by_its_drive_less_the_rail_force_and_brake_over_j():
    # two slipping axles on two vehicles: one driven (spinning forward past the peak), one
    # braked and sliding (spinning slower than it rolls); the rail forces go to their bodies
    ax = axles(2, rolling=0.0, spin=1.0)._replace(torque=np.array([40e3, 0.0]),
                                                  brake=np.array([0.0, 15e3]))
    v = np.array([10.0, 10.0])
    somega, sphi = 0, 2
    omega = np.array([(10.0 + 3 * S0) / R, (10.0 - 3 * S0) / R])
    y = np.concatenate([omega, [0.0, 0.0]])
    dy = np.zeros(4)
    force, resist = np.zeros(2), np.zeros(2)
    flows = np.zeros((6, 2))
    slipping_axles(ax, LAWS, np.array([0, 1]), 2, y, dy, somega, sphi, v, force, resist,
                   flows, True)
    ratio = K + (1 - K) * 6 / 10  # |x| = 3: 2*3/(1 + 9)
    rail = np.array([1.0, -1.0]) * ratio * 0.3 * NORMAL
    np.testing.assert_allclose(force, rail, rtol=REL)
    np.testing.assert_array_equal(resist, 0.0)
    # drive 40 kN m less the rail's torque; the brake opposes the (forward) spin
    np.testing.assert_allclose(dy[:2], [(40e3 - rail[0] * R) / J,
                                        (0.0 - rail[1] * R - 15e3) / J], rtol=REL)
    np.testing.assert_allclose(dy[2:], omega, rtol=REL)  # the angles turn at the spins
    # the work: the drive's torque times the spin, the brake's, the contact's at the slip
    np.testing.assert_allclose(flows[DRIVE], [40e3 * omega[0], 0.0], rtol=REL)
    np.testing.assert_allclose(flows[BRAKE], [0.0, 15e3 * omega[1]], rtol=REL)
    np.testing.assert_allclose(flows[SLIP], rail * np.array([3 * S0, -3 * S0]), rtol=REL)


# --- rolling axles' spins and angles ---------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 30), st.integers(0, 2**32 - 1))
def test_rolling_axles_take_spin_and_angle_from_their_bodies_and_slipping_ones_are_left(n,
                                                                                       seed):
    # omega = v / r and phi = phi_at + (x - x_at) / r for the rolling axles, each from its
    # own vehicle; a slipping axle's entries as they were
    rng = np.random.default_rng(seed)
    nv = max(1, n // 4)
    vehicle = np.sort(rng.integers(0, nv, n))
    radius = rng.random(n) * 0.3 + 0.4
    rolling = (rng.random(n) < 0.6).astype(float)
    phi_at, x_at = rng.normal(size=n), rng.normal(size=n)
    ax = axles(n, vehicle=vehicle)._replace(radius=radius, inv_radius=1.0 / radius,
                                            rolling=rolling, phi_at=phi_at, x_at=x_at)
    sx, sv, somega, sphi = 3, 3 + nv, 3 + 2 * nv, 3 + 2 * nv + n  # blocks after 3 others
    y = rng.normal(size=sphi + n + 2)
    out = y.copy()
    fill_rolling(ax, out, sx, sv, somega, sphi)
    expected = y.copy()
    k = np.flatnonzero(rolling)
    i = vehicle[k]
    expected[somega + k] = y[sv + i] / radius[k]
    expected[sphi + k] = phi_at[k] + (y[sx + i] - x_at[k]) / radius[k]
    np.testing.assert_allclose(out, expected, rtol=1e-15, atol=1e-15)
    np.testing.assert_array_equal(np.delete(out, np.concatenate([somega + k, sphi + k])),
                                  np.delete(y, np.concatenate([somega + k, sphi + k])))
