"""Tests for rrscore.physics.adhesion (and the adhesion formulas of rrscore.model.formulas).

Adhesion formulas are evaluated by hand with literal numbers at V = 0, 40 and 80 km/h.
"""

import numpy as np
import pytest

from rrscore.model.formulas import ADHESION_FORMULAS, RAIL_CONDITIONS, rail_condition_factor
from rrscore.physics.adhesion import (
    adhesion_coefficient,
    creep_force_ratio,
    creep_slip_for_ratio,
    creep_slope_at_zero,
)

REL = 1e-12
V40 = 40 / 3.6  # m/s
V80 = 80 / 3.6  # m/s


# --- adhesion formulas, three speeds each -----------------------------------------------------


def test_curtius_kniffler_matches_hand_values():
    assert adhesion_coefficient("curtius_kniffler", 0.0) == pytest.approx(7.5 / 44 + 0.161, rel=REL)
    assert adhesion_coefficient("curtius_kniffler", V40) == pytest.approx(7.5 / 84 + 0.161, rel=REL)
    assert adhesion_coefficient("curtius_kniffler", V80) == pytest.approx(
        7.5 / 124 + 0.161, rel=REL
    )


def test_electric_ac_matches_hand_values():
    # 50 + 6*40 = 290, 0.0006*40 = 0.024; 50 + 6*80 = 530, 0.0006*80 = 0.048
    assert adhesion_coefficient("electric_ac", 0.0) == pytest.approx(0.28 + 4 / 50, rel=REL)
    assert adhesion_coefficient("electric_ac", V40) == pytest.approx(
        0.28 + 4 / 290 - 0.024, rel=REL
    )
    assert adhesion_coefficient("electric_ac", V80) == pytest.approx(
        0.28 + 4 / 530 - 0.048, rel=REL
    )


def test_electric_dc_matches_hand_values():
    # 50 + 20*40 = 850, 0.0007*40 = 0.028; 50 + 20*80 = 1650, 0.0007*80 = 0.056
    assert adhesion_coefficient("electric_dc", 0.0) == pytest.approx(0.28 + 3 / 50, rel=REL)
    assert adhesion_coefficient("electric_dc", V40) == pytest.approx(
        0.28 + 3 / 850 - 0.028, rel=REL
    )
    assert adhesion_coefficient("electric_dc", V80) == pytest.approx(
        0.28 + 3 / 1650 - 0.056, rel=REL
    )


def test_diesel_matches_hand_values():
    assert adhesion_coefficient("diesel", 0.0) == pytest.approx(0.118 + 5 / 27.5, rel=REL)
    assert adhesion_coefficient("diesel", V40) == pytest.approx(0.118 + 5 / 67.5, rel=REL)
    assert adhesion_coefficient("diesel", V80) == pytest.approx(0.118 + 5 / 107.5, rel=REL)


def test_constant_formula():
    assert adhesion_coefficient("constant", 0.0, {"psi": 0.25}) == 0.25
    np.testing.assert_array_equal(
        adhesion_coefficient("constant", np.array([0.0, V40, V80]), {"psi": 0.25}), [0.25] * 3
    )


def test_formulas_use_speed_magnitude_and_work_on_arrays():
    got = adhesion_coefficient("diesel", np.array([0.0, V40, -V80]))
    assert isinstance(got, np.ndarray)
    np.testing.assert_allclose(got, [0.118 + 5 / 27.5, 0.118 + 5 / 67.5, 0.118 + 5 / 107.5], REL)


def test_scalar_speed_gives_python_float():
    assert type(adhesion_coefficient("diesel", 10.0)) is float


def test_electric_forms_clip_at_zero_far_beyond_train_speeds():
    # DC at 500 km/h: 0.28 + 3/10050 - 0.35 < 0 -> clipped to 0
    assert 0.28 + 3 / 10050 - 0.35 < 0
    assert adhesion_coefficient("electric_dc", 500 / 3.6) == 0.0
    # AC at 500 km/h: 0.28 + 4/3050 - 0.3 < 0 -> clipped to 0
    assert adhesion_coefficient("electric_ac", 500 / 3.6) == 0.0
    # still positive at 350 km/h: 0.28 + 3/7050 - 0.245
    assert adhesion_coefficient("electric_dc", 350 / 3.6) == pytest.approx(
        0.28 + 3 / 7050 - 0.245, rel=1e-9
    )


# --- table ------------------------------------------------------------------------------------


TABLE = {"speeds": [0.0, 10.0, 20.0], "values": [0.35, 0.30, 0.26]}


def test_table_interpolates_linearly():
    assert adhesion_coefficient("table", 5.0, TABLE) == pytest.approx(0.325, rel=REL)
    assert adhesion_coefficient("table", 15.0, TABLE) == pytest.approx(0.28, rel=REL)
    assert adhesion_coefficient("table", 10.0, TABLE) == pytest.approx(0.30, rel=REL)


def test_table_is_held_constant_outside_and_uses_speed_magnitude():
    table = {"speeds": [5.0, 10.0], "values": [0.33, 0.30]}
    assert adhesion_coefficient("table", 0.0, table) == 0.33
    assert adhesion_coefficient("table", 50.0, table) == 0.30
    np.testing.assert_allclose(
        adhesion_coefficient("table", np.array([-7.5, 30.0]), table), [0.315, 0.30], rtol=REL
    )


@pytest.mark.parametrize(
    "table",
    [
        {"speeds": [0.0, 10.0, 10.0], "values": [0.3, 0.3, 0.3]},
        {"speeds": [10.0, 0.0], "values": [0.3, 0.3]},
        {"speeds": [0.0, 10.0], "values": [0.3]},
        {"speeds": [], "values": []},
        {"speeds": [0.0, 10.0], "values": [0.3, -0.1]},
    ],
)
def test_table_rejects_malformed_tables(table):
    with pytest.raises(ValueError, match="'table'"):
        adhesion_coefficient("table", 1.0, table)


# --- registry, errors, rail condition ---------------------------------------------------------


def test_registry_names_and_descriptions():
    assert set(ADHESION_FORMULAS) == {
        "curtius_kniffler",
        "electric_ac",
        "electric_dc",
        "diesel",
        "constant",
        "table",
    }
    for name, spec in ADHESION_FORMULAS.items():
        assert spec.name == name and spec.description
    ac = ADHESION_FORMULAS["electric_ac"]
    assert (ac.a, ac.b, ac.c, ac.d, ac.e) == (0.28, 4.0, 50.0, 6.0, 0.0006)


def test_unknown_formula_error_lists_allowed():
    with pytest.raises(ValueError, match="'bogus'") as err:
        adhesion_coefficient("bogus", 0.0)
    assert "curtius_kniffler" in str(err.value)


def test_missing_and_unknown_params_are_named():
    with pytest.raises(ValueError, match="missing psi"):
        adhesion_coefficient("constant", 0.0, {})
    with pytest.raises(ValueError, match="unknown psi"):
        adhesion_coefficient("diesel", 0.0, {"psi": 0.3})
    with pytest.raises(ValueError, match="missing values"):
        adhesion_coefficient("table", 0.0, {"speeds": [0.0]})


def test_rail_condition_scales_psi():
    wet = RAIL_CONDITIONS["wet"]
    assert 0.6 <= wet <= 0.7
    assert adhesion_coefficient("diesel", V40, condition="wet") == pytest.approx(
        (0.118 + 5 / 67.5) * wet, rel=REL
    )
    assert adhesion_coefficient("constant", 0.0, {"psi": 0.3}, condition=0.5) == 0.15


def test_rail_conditions_are_ordered_sensibly():
    assert RAIL_CONDITIONS["dry"] == 1.0
    assert RAIL_CONDITIONS["sanded"] > 1.0
    assert RAIL_CONDITIONS["leaves"] < RAIL_CONDITIONS["wet"] < 1.0
    assert RAIL_CONDITIONS["greasy"] < RAIL_CONDITIONS["wet"]


def test_unknown_rail_condition_is_rejected():
    with pytest.raises(ValueError, match="'icy'"):
        rail_condition_factor("icy")
    with pytest.raises(ValueError):
        rail_condition_factor(-0.5)


# --- creep law ------------------------------------------------------------------------------


S0 = 0.3  # m/s


def test_creep_ratio_zero_at_no_slip():
    assert creep_force_ratio(0.0, S0) == 0.0


def test_creep_ratio_peak_is_exactly_one_at_s0():
    assert creep_force_ratio(S0, S0) == 1.0
    assert creep_force_ratio(-S0, S0) == -1.0
    for k in (0.0, 0.6, 0.7, 0.8, 1.0):
        assert creep_force_ratio(S0, S0, kinetic_ratio=k) == 1.0


def test_creep_ratio_hand_values_on_both_branches():
    # x = 0.5: 2*0.5/(1 + 0.25) = 0.8
    assert creep_force_ratio(0.5 * S0, S0) == pytest.approx(0.8, rel=REL)
    # x = 2, k = 0.7: 0.7 + 0.3 * 2*2/(1 + 4) = 0.7 + 0.24 = 0.94
    assert creep_force_ratio(2 * S0, S0, kinetic_ratio=0.7) == pytest.approx(0.94, rel=REL)
    # x = 3, k = 0.6: 0.6 + 0.4 * 6/10 = 0.84
    assert creep_force_ratio(3 * S0, S0, kinetic_ratio=0.6) == pytest.approx(0.84, rel=REL)


def test_creep_ratio_is_odd():
    s = np.linspace(0.0, 20 * S0, 401)
    np.testing.assert_array_equal(creep_force_ratio(-s, S0), -creep_force_ratio(s, S0))


def test_creep_slope_at_zero_is_two_over_s0():
    assert creep_slope_at_zero(S0) == pytest.approx(2 / 0.3, rel=REL)
    eps = 1e-7 * S0
    assert creep_force_ratio(eps, S0) / eps == pytest.approx(2 / S0, rel=1e-12)


def test_creep_ratio_value_and_slope_continuous_at_peak():
    h = 1e-6 * S0
    left = creep_force_ratio(S0 - h, S0, kinetic_ratio=0.6)
    right = creep_force_ratio(S0 + h, S0, kinetic_ratio=0.6)
    # both sides within O(h^2) of the peak value 1 (slope zero on each side)
    assert abs(left - 1.0) < 1e-10 and abs(right - 1.0) < 1e-10
    slope_left = (1.0 - left) / h
    slope_right = (right - 1.0) / h
    assert abs(slope_left) < 1e-4 and abs(slope_right) < 1e-4


def test_creep_ratio_tends_to_kinetic_ratio():
    assert creep_force_ratio(1e6 * S0, S0, kinetic_ratio=0.7) == pytest.approx(0.7, abs=1e-6)
    assert creep_force_ratio(-1e12 * S0, S0, kinetic_ratio=0.65) == pytest.approx(-0.65, abs=1e-12)
    assert creep_force_ratio(np.inf, S0, kinetic_ratio=0.7) == 0.7


def test_creep_ratio_shape_rises_then_falls_monotonically():
    rising = creep_force_ratio(np.linspace(0.0, S0, 200), S0)
    falling = creep_force_ratio(np.linspace(S0, 50 * S0, 200), S0, kinetic_ratio=0.7)
    assert np.all(np.diff(rising) > 0)
    assert np.all(np.diff(falling) < 0)
    assert np.all(falling > 0.7)


def test_creep_inverse_hand_values():
    # r = 0.8: x = 0.8/(1 + sqrt(1 - 0.64)) = 0.8/1.6 = 0.5
    assert creep_slip_for_ratio(0.8, S0) == pytest.approx(0.5 * S0, rel=REL)
    assert creep_slip_for_ratio(1.0, S0) == S0
    assert creep_slip_for_ratio(-1.0, S0) == -S0
    assert creep_slip_for_ratio(0.0, S0) == 0.0


def test_creep_inverse_round_trips_and_is_odd():
    r = np.linspace(-1.0, 1.0, 201)
    s = creep_slip_for_ratio(r, S0)
    assert np.all(np.abs(s) <= S0)
    np.testing.assert_allclose(creep_force_ratio(s, S0), r, rtol=REL, atol=1e-15)
    np.testing.assert_array_equal(creep_slip_for_ratio(-r, S0), -s)
    # the other way, away from the flat peak where the inverse is ill-conditioned
    s = np.linspace(-0.9 * S0, 0.9 * S0, 181)
    np.testing.assert_allclose(
        creep_slip_for_ratio(creep_force_ratio(s, S0), S0), s, rtol=1e-12, atol=1e-15
    )


def test_creep_inverse_rejects_ratio_above_one():
    with pytest.raises(ValueError, match="ratio"):
        creep_slip_for_ratio(1.01, S0)


@pytest.mark.parametrize(("s0", "k"), [(0.0, 0.7), (-0.1, 0.7), (0.3, -0.1), (0.3, 1.1)])
def test_creep_rejects_bad_parameters(s0, k):
    with pytest.raises(ValueError):
        creep_force_ratio(0.1, s0, kinetic_ratio=k)
