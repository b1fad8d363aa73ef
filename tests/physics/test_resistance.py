"""Tests for rrscore.physics.resistance and the resistance formulas of rrscore.model.formulas.

Every physics value is the published formula evaluated by hand with literal numbers
(w in N/kN, V in km/h, q0 in t), times m*g/1000 to get newtons, at V = 0, 40 and 80 km/h.
"""

import math

import numpy as np
import pytest

from rrscore.model.formulas import (
    FORMULAS,
    LBF_PER_SHORT_TON_IN_N_PER_KN,
    RunningResistance,
    StartingResistance,
    curve_specific,
    curve_specific_area,
    running_resistance,
    starting_resistance,
    starting_resistance_specific,
)
from rrscore.model.units import G
from rrscore.physics.resistance import (
    air_drag,
    grade_force,
    running_force,
    total_resistance,
    tunnel_drag_factor,
    tunnel_factor,
)

REL = 1e-12
V40 = 40 / 3.6  # m/s
V80 = 80 / 3.6  # m/s


def newtons(w, mass_kg):
    """Specific resistance [N/kN] -> N for the given mass, as the published rules define it."""
    return w * mass_kg * 9.80665 / 1000


def test_gravity_is_standard_gravity():
    assert G == 9.80665


# --- published specific formulas, three speeds each ------------------------------------------


def test_freight_4axle_roller_matches_hand_values():
    # 94 t on 4 axles: q0 = 23.5 t
    r = running_resistance("freight_4axle_roller", 94_000, 4)
    assert running_force(r, 0.0) == pytest.approx(newtons(0.7 + 3 / 23.5, 94_000), rel=REL)
    # V = 40: 0.1*40 = 4, 0.0025*1600 = 4
    assert running_force(r, V40) == pytest.approx(
        newtons(0.7 + (3 + 4 + 4) / 23.5, 94_000), rel=REL)
    # V = 80: 0.1*80 = 8, 0.0025*6400 = 16
    assert running_force(r, V80) == pytest.approx(
        newtons(0.7 + (3 + 8 + 16) / 23.5, 94_000), rel=REL)


def test_freight_4axle_roller_brief_example_at_60_kmh():
    # w = 0.7 + (3 + 6 + 9)/23.5 = 1.465957... N/kN
    r = running_resistance("freight_4axle_roller", 94_000, 4)
    assert running_force(r, 60 / 3.6) == pytest.approx(
        1.4659574468085106 * 94_000 * 9.80665 / 1000, rel=REL)


def test_freight_8axle_roller_matches_hand_values():
    # 188 t on 8 axles: q0 = 23.5 t
    r = running_resistance("freight_8axle_roller", 188_000, 8)
    assert running_force(r, 0.0) == pytest.approx(newtons(0.7 + 6 / 23.5, 188_000), rel=REL)
    # V = 40: 0.038*40 = 1.52, 0.0021*1600 = 3.36
    assert running_force(r, V40) == pytest.approx(
        newtons(0.7 + (6 + 1.52 + 3.36) / 23.5, 188_000), rel=REL)
    # V = 80: 0.038*80 = 3.04, 0.0021*6400 = 13.44
    assert running_force(r, V80) == pytest.approx(
        newtons(0.7 + (6 + 3.04 + 13.44) / 23.5, 188_000), rel=REL)


def test_freight_empty_matches_hand_values():
    # 22 t on 4 axles: q0 = 5.5 t (<= 6 t); the formula does not depend on q0
    r = running_resistance("freight_empty", 22_000, 4)
    assert running_force(r, 0.0) == pytest.approx(newtons(1.0, 22_000), rel=REL)
    # V = 40: 0.044*40 = 1.76, 0.00024*1600 = 0.384
    assert running_force(r, V40) == pytest.approx(newtons(1.0 + 1.76 + 0.384, 22_000), rel=REL)
    # V = 80: 0.044*80 = 3.52, 0.00024*6400 = 1.536
    assert running_force(r, V80) == pytest.approx(newtons(1.0 + 3.52 + 1.536, 22_000), rel=REL)


def test_passenger_matches_hand_values():
    # 58 t on 4 axles: q0 = 14.5 t
    r = running_resistance("passenger", 58_000, 4)
    assert running_force(r, 0.0) == pytest.approx(newtons(0.7 + 8 / 14.5, 58_000), rel=REL)
    # V = 40: 0.16*40 = 6.4, 0.0023*1600 = 3.68
    assert running_force(r, V40) == pytest.approx(
        newtons(0.7 + (8 + 6.4 + 3.68) / 14.5, 58_000), rel=REL)
    # V = 80: 0.16*80 = 12.8, 0.0023*6400 = 14.72
    assert running_force(r, V80) == pytest.approx(
        newtons(0.7 + (8 + 12.8 + 14.72) / 14.5, 58_000), rel=REL)


def test_loco_power_matches_hand_values():
    r = running_resistance("loco_power", 138_000, 6)
    assert running_force(r, 0.0) == pytest.approx(newtons(1.9, 138_000), rel=REL)
    # V = 40: 0.01*40 = 0.4, 0.0003*1600 = 0.48
    assert running_force(r, V40) == pytest.approx(newtons(1.9 + 0.4 + 0.48, 138_000), rel=REL)
    # V = 80: 0.01*80 = 0.8, 0.0003*6400 = 1.92
    assert running_force(r, V80) == pytest.approx(newtons(1.9 + 0.8 + 1.92, 138_000), rel=REL)


def test_loco_coasting_matches_hand_values():
    r = running_resistance("loco_coasting", 138_000, 6)
    assert running_force(r, 0.0) == pytest.approx(newtons(2.4, 138_000), rel=REL)
    # V = 40: 0.011*40 = 0.44, 0.00035*1600 = 0.56
    assert running_force(r, V40) == pytest.approx(newtons(2.4 + 0.44 + 0.56, 138_000), rel=REL)
    # V = 80: 0.011*80 = 0.88, 0.00035*6400 = 2.24
    assert running_force(r, V80) == pytest.approx(newtons(2.4 + 0.88 + 2.24, 138_000), rel=REL)


def test_specific_formula_matches_hand_values():
    r = running_resistance("specific", 80_000, 4, {"a": 1.2, "b": 0.02, "c": 0.0004})
    assert running_force(r, 0.0) == pytest.approx(newtons(1.2, 80_000), rel=REL)
    # V = 40: 0.02*40 = 0.8, 0.0004*1600 = 0.64
    assert running_force(r, V40) == pytest.approx(newtons(1.2 + 0.8 + 0.64, 80_000), rel=REL)
    # V = 80: 0.02*80 = 1.6, 0.0004*6400 = 2.56
    assert running_force(r, V80) == pytest.approx(newtons(1.2 + 1.6 + 2.56, 80_000), rel=REL)


def test_specific_formula_reproduces_a_published_one():
    generic = running_resistance("specific", 22_000, 4, {"a": 1.0, "b": 0.044, "c": 0.00024})
    published = running_resistance("freight_empty", 22_000, 4)
    want = (published.c0, published.c1, published.c2)
    assert (generic.c0, generic.c1, generic.c2) == pytest.approx(want, rel=REL)


def test_davis_uses_si_coefficients_directly_and_ignores_mass():
    r = running_resistance("davis", 50_000, 4, {"A": 1000.0, "B": 20.0, "C": 5.0})
    assert (r.c0, r.c1, r.c2) == (1000.0, 20.0, 5.0)
    assert running_force(r, 0.0) == pytest.approx(1000.0, rel=REL)
    assert running_force(r, 10.0) == pytest.approx(1000 + 200 + 500, rel=REL)
    assert running_force(r, 20.0) == pytest.approx(1000 + 400 + 2000, rel=REL)
    heavy = running_resistance("davis", 150_000, 8, {"A": 1000.0, "B": 20.0, "C": 5.0})
    assert heavy == r


def test_none_formula_is_zero_at_all_speeds():
    r = running_resistance("none", 80_000, 4)
    assert (r.c0, r.c1, r.c2) == (0.0, 0.0, 0.0)
    assert running_force(r, 0.0) == 0.0
    assert running_force(r, V40) == 0.0
    assert running_force(r, V80) == 0.0


# --- conversion to SI coefficients ----------------------------------------------------------


def test_si_coefficients_are_exact_conversion_of_km_h_terms():
    # q0 = 23.5 t, W = m g / 1000 = 94 000 * 9.80665 / 1000 N per (N/kN)
    r = running_resistance("freight_4axle_roller", 94_000, 4)
    weight_kn = 94_000 * 9.80665 / 1000
    assert r.c0 == pytest.approx((0.7 + 3 / 23.5) * weight_kn, rel=REL)
    # 0.1 V / q0 with V = 3.6 v
    assert r.c1 == pytest.approx(0.1 / 23.5 * 3.6 * weight_kn, rel=REL)
    # 0.0025 V^2 / q0 with V^2 = 12.96 v^2
    assert r.c2 == pytest.approx(0.0025 / 23.5 * 12.96 * weight_kn, rel=REL)


def test_loco_power_si_coefficients():
    r = running_resistance("loco_power", 138_000, 6)
    weight_kn = 138_000 * 9.80665 / 1000
    assert r.c0 == pytest.approx(1.9 * weight_kn, rel=REL)
    assert r.c1 == pytest.approx(0.01 * 3.6 * weight_kn, rel=REL)
    assert r.c2 == pytest.approx(0.0003 * 12.96 * weight_kn, rel=REL)


def test_force_is_symmetric_in_direction_of_motion():
    r = running_resistance("passenger", 58_000, 4)
    assert running_force(r, -V80) == running_force(r, V80)


def test_force_works_on_arrays():
    r = running_resistance("loco_power", 138_000, 6)
    v = np.array([0.0, V40, -V80])
    got = running_force(r, v)
    assert isinstance(got, np.ndarray)
    want = [newtons(1.9, 138_000), newtons(2.78, 138_000), newtons(4.62, 138_000)]
    np.testing.assert_allclose(got, want, rtol=REL)


def test_scalar_speed_gives_python_float():
    assert type(running_force(running_resistance("loco_power", 138_000, 6), 1.0)) is float


def test_running_resistance_rejects_coefficients_negative_at_some_speed():
    with pytest.raises(ValueError, match="negative"):
        RunningResistance(-1.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="negative"):
        RunningResistance(1.0, -10.0, 1.0)  # minimum 1 - 25 < 0 at v = 5
    RunningResistance(25.0, -10.0, 1.0)  # minimum exactly 0 at v = 5: allowed


# --- registry and errors ---------------------------------------------------------------------


def test_registry_lists_all_formulas_with_descriptions():
    expected = {
        "freight_4axle_roller",
        "freight_8axle_roller",
        "freight_empty",
        "passenger",
        "loco_power",
        "loco_coasting",
        "davis",
        "specific",
        "none",
    }
    assert set(FORMULAS) == expected
    for name, spec in FORMULAS.items():
        assert spec.name == name
        assert spec.description


def test_registry_holds_published_coefficients_as_data():
    spec = FORMULAS["freight_8axle_roller"]
    assert (spec.a, spec.d, spec.e, spec.f) == (0.7, 6.0, 0.038, 0.0021)
    assert FORMULAS["davis"].params == ("A", "B", "C")


def test_unknown_formula_error_names_it_and_lists_allowed():
    with pytest.raises(ValueError, match="'bogus'") as err:
        running_resistance("bogus", 80_000, 4)
    assert "freight_4axle_roller" in str(err.value) and "davis" in str(err.value)


def test_missing_param_error_names_it_and_lists_expected():
    with pytest.raises(ValueError, match="missing C") as err:
        running_resistance("davis", 80_000, 4, {"A": 1.0, "B": 2.0})
    assert "A, B, C" in str(err.value)


def test_unknown_param_error_names_it():
    with pytest.raises(ValueError, match="unknown q0"):
        running_resistance("freight_4axle_roller", 80_000, 4, {"q0": 20.0})


def test_non_numeric_param_is_rejected():
    with pytest.raises(ValueError, match="davis.A"):
        running_resistance("davis", 80_000, 4, {"A": "1000", "B": 0.0, "C": 0.0})


@pytest.mark.parametrize(("mass", "axles"), [(0.0, 4), (-1.0, 4), (80_000, 0), (80_000, 2.5)])
def test_invalid_vehicle_is_rejected(mass, axles):
    with pytest.raises(ValueError):
        running_resistance("freight_4axle_roller", mass, axles)


# --- starting resistance ---------------------------------------------------------------------


def test_starting_specific_is_28_over_q0_plus_7():
    assert starting_resistance_specific(23.5) == 28 / 30.5
    assert starting_resistance_specific(5.0) == 28 / 12


def test_total_at_standstill_is_published_starting_resistance():
    # q0 = 23.5 t: w_start = 28/(23.5 + 7) = 0.918... N/kN > running w0 = 0.7 + 3/23.5 = 0.827...
    run = running_resistance("freight_4axle_roller", 94_000, 4)
    start = starting_resistance(94_000, 4, run)
    assert total_resistance(0.0, run, start) == pytest.approx(newtons(28 / 30.5, 94_000), rel=REL)
    assert start.force0 == pytest.approx(newtons(28 / 30.5 - (0.7 + 3 / 23.5), 94_000), rel=REL)


def test_total_equals_running_at_and_above_v_blend():
    run = running_resistance("freight_4axle_roller", 94_000, 4)
    start = starting_resistance(94_000, 4, run)
    assert start.v_blend == 10 / 3.6
    for v in (10 / 3.6, 15 / 3.6, V80, -V40):
        assert total_resistance(v, run, start) == running_force(run, v)


def test_starting_excess_blends_linearly():
    run = running_resistance("freight_4axle_roller", 94_000, 4)
    start = starting_resistance(94_000, 4, run)
    extra = newtons(28 / 30.5 - (0.7 + 3 / 23.5), 94_000)
    v = 5 / 3.6  # half of v_blend
    assert total_resistance(v, run, start) == pytest.approx(
        running_force(run, v) + 0.5 * extra, rel=REL)


def test_starting_specific_override_and_custom_blend():
    run = running_resistance("freight_4axle_roller", 94_000, 4)
    start = starting_resistance(94_000, 4, run, v_blend=2.0, specific=1.5)
    assert total_resistance(0.0, run, start) == pytest.approx(newtons(1.5, 94_000), rel=REL)
    assert total_resistance(2.0, run, start) == running_force(run, 2.0)


def test_no_starting_excess_when_running_resistance_is_larger():
    # loco coasting w0 = 2.4 N/kN > 28/(23 + 7) = 0.933 N/kN for 138 t on 6 axles
    run = running_resistance("loco_coasting", 138_000, 6)
    start = starting_resistance(138_000, 6, run)
    assert start.force0 == 0.0
    assert total_resistance(0.0, run, start) == running_force(run, 0.0)


def test_total_resistance_works_on_arrays():
    run = running_resistance("freight_4axle_roller", 94_000, 4)
    start = starting_resistance(94_000, 4, run)
    v = np.array([0.0, 5 / 3.6, 20 / 3.6])
    got = total_resistance(v, run, start)
    want = [running_force(run, 0.0) + start.force0,
            running_force(run, 5 / 3.6) + 0.5 * start.force0, running_force(run, v[2])]
    np.testing.assert_allclose(got, want, rtol=REL)
    np.testing.assert_array_equal(total_resistance(v, run), running_force(run, v))


def test_starting_resistance_rejects_bad_blend_speed():
    with pytest.raises(ValueError, match="v_blend"):
        StartingResistance(100.0, 0.0)


# --- curves ------------------------------------------------------------------------------------


def test_curve_700_over_r():
    assert curve_specific(350.0) == pytest.approx(2.0, rel=REL)  # 700/350
    assert curve_specific(1000.0) == pytest.approx(0.7, rel=REL)  # 700/1000


def test_curve_straight_track_and_sign_of_radius():
    assert curve_specific(math.inf) == 0.0
    assert curve_specific(0.0) == 0.0
    assert curve_specific(-350.0) == pytest.approx(2.0, rel=REL)


def test_curve_works_on_arrays():
    got = curve_specific(np.array([350.0, 0.0, np.inf, 700.0]))
    np.testing.assert_allclose(got, [2.0, 0.0, 0.0, 1.0], rtol=REL)


def test_lbf_per_short_ton_conversion_is_half_n_per_kn():
    # 1 lbf / (2000 lb * g) = 4.4482216152605 N / (907.18474 kg * 9.80665 m/s^2), in N/kN
    factor = 4.4482216152605 / (907.18474 * 9.80665) * 1000
    assert factor == pytest.approx(0.5, rel=REL)
    assert LBF_PER_SHORT_TON_IN_N_PER_KN == pytest.approx(factor, rel=REL)


def test_area_curve_five_degrees():
    # D = 5 deg (chord def.): R = 50 ft / sin(2.5 deg), 50 ft = 15.24 m.
    # 0.8 lb/ton/deg * 5 deg = 4 lb/ton = 4 * 0.5 N/kN = 2.0 N/kN
    radius = 15.24 / math.sin(math.radians(2.5))
    expected = 0.8 * 5 * 4.4482216152605 / (907.18474 * 9.80665) * 1000
    assert curve_specific_area(radius) == pytest.approx(expected, rel=REL)
    assert curve_specific_area(radius) == pytest.approx(2.0, rel=REL)


def test_area_curve_arrays_straight_and_too_tight():
    one_degree = 15.24 / math.sin(math.radians(0.5))
    got = curve_specific_area(np.array([one_degree, 0.0, np.inf, -one_degree]))
    np.testing.assert_allclose(got, [0.4, 0.0, 0.0, 0.4], rtol=REL)
    with pytest.raises(ValueError, match="15.24"):
        curve_specific_area(10.0)


# --- grade, wind, tunnels -----------------------------------------------------------------


def test_grade_force_uphill_is_negative_and_exact():
    # 1000 t on 8 permille: -m g sin(atan(0.008)) = -m g * 0.008/sqrt(1 + 0.000064)
    got = grade_force(1_000_000, 0.008)
    assert got == pytest.approx(-1_000_000 * 9.80665 * 0.008 / math.sqrt(1.000064), rel=REL)
    assert got == pytest.approx(-1_000_000 * 9.80665 * math.sin(math.atan(0.008)), rel=REL)


def test_grade_force_downhill_positive_and_arrays():
    got = grade_force(1_000_000, np.array([-0.008, 0.0, 0.008]))
    assert got[0] > 0 and got[1] == 0.0 and got[2] == -got[0]


def test_air_drag_still_air_tailwind_and_headwind():
    # 0.5 * 1.225 * 10 m^2 * (relative speed)^2
    assert air_drag(30.0, 0.0, cd_a=10.0) == pytest.approx(-0.5 * 1.225 * 10 * 900, rel=REL)
    assert air_drag(30.0, 10.0, cd_a=10.0) == pytest.approx(-0.5 * 1.225 * 10 * 400, rel=REL)
    assert air_drag(30.0, -10.0, cd_a=10.0) == pytest.approx(-0.5 * 1.225 * 10 * 1600, rel=REL)


def test_air_drag_opposes_relative_air_motion():
    assert air_drag(-30.0, 0.0, cd_a=10.0) == pytest.approx(5512.5, rel=REL)
    assert air_drag(0.0, 10.0, cd_a=10.0) == pytest.approx(0.5 * 1.225 * 10 * 100, rel=REL)
    assert air_drag(10.0, 10.0, cd_a=10.0) == 0.0
    got = air_drag(np.array([30.0, -30.0]), 0.0, cd_a=10.0, rho=1.0)
    np.testing.assert_allclose(got, [-4500.0, 4500.0], rtol=REL)


def test_tunnel_drag_factor_continuity_estimate():
    assert tunnel_drag_factor(0.0) == 1.0
    assert tunnel_drag_factor(0.2) == pytest.approx(1 / 0.8**2, rel=REL)  # 1.5625
    assert tunnel_drag_factor(0.2, k=0.5) == pytest.approx(1 + 0.5 * 0.5625, rel=REL)
    np.testing.assert_allclose(tunnel_drag_factor(np.array([0.0, 0.5])), [1.0, 4.0], rtol=REL)


@pytest.mark.parametrize("blockage", [-0.1, 1.0, 1.5])
def test_tunnel_drag_factor_rejects_impossible_blockage(blockage):
    with pytest.raises(ValueError, match="blockage_ratio"):
        tunnel_drag_factor(blockage)


def test_tunnel_factor_from_config_direct_or_blockage():
    assert tunnel_factor(factor=1.8) == 1.8
    assert tunnel_factor(blockage_ratio=0.2) == pytest.approx(1.5625, rel=REL)
    with pytest.raises(ValueError, match="exactly one"):
        tunnel_factor(factor=1.8, blockage_ratio=0.2)
    with pytest.raises(ValueError, match="exactly one"):
        tunnel_factor()


def test_aero_factor_scales_only_the_v_squared_term():
    r = running_resistance("passenger", 58_000, 4)
    t = r.with_aero_factor(1.5625)
    assert (t.c0, t.c1) == (r.c0, r.c1)
    assert t.c2 == pytest.approx(1.5625 * r.c2, rel=REL)
