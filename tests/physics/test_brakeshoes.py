"""Shoe friction and rigging against the formulas evaluated by hand."""

from __future__ import annotations

import numpy as np
import pytest

from rrscore.physics.brakeshoes import brake_force, shoe_force, shoe_friction, table_friction

TF = 9806.65  # N per tonne-force


@pytest.mark.parametrize("k_tf, v_kmh, expected", [
    # 0.6 (16K + 100)/(80K + 100) * (V + 100)/(5V + 100), by hand
    (2.0, 0.0, 0.6 * 132 / 260 * 100 / 100),      # 0.304615...
    (2.0, 40.0, 0.6 * 132 / 260 * 140 / 300),     # 0.142154...
    (2.0, 100.0, 0.6 * 132 / 260 * 200 / 600),    # 0.101538...
    (4.0, 0.0, 0.6 * 164 / 420),                  # 0.234286...
    (4.0, 40.0, 0.6 * 164 / 420 * 140 / 300),
    (4.0, 100.0, 0.6 * 164 / 420 * 200 / 600),
])
def test_cast_iron_shoe_friction_is_the_rules_formula(k_tf, v_kmh, expected):
    assert shoe_friction("cast_iron", k_tf * TF, v_kmh / 3.6) == pytest.approx(expected,
                                                                              rel=1e-12)


@pytest.mark.parametrize("k_tf, v_kmh, expected", [
    # 0.44 (K + 20)/(4K + 20) * (V + 150)/(2V + 150), by hand
    (1.0, 0.0, 0.44 * 21 / 24),                   # 0.385
    (1.0, 40.0, 0.44 * 21 / 24 * 190 / 230),
    (1.0, 100.0, 0.44 * 21 / 24 * 250 / 350),
    (2.5, 0.0, 0.44 * 22.5 / 30),                 # 0.33
    (2.5, 40.0, 0.44 * 22.5 / 30 * 190 / 230),
    (2.5, 100.0, 0.44 * 22.5 / 30 * 250 / 350),
])
def test_composite_shoe_friction_is_the_rules_formula(k_tf, v_kmh, expected):
    assert shoe_friction("composite", k_tf * TF, v_kmh / 3.6) == pytest.approx(expected,
                                                                              rel=1e-12)


def test_friction_does_not_depend_on_the_direction_of_travel():
    assert shoe_friction("cast_iron", 3e4, -10.0) == shoe_friction("cast_iron", 3e4, 10.0)


def test_an_unknown_shoe_names_the_known_ones():
    with pytest.raises(ValueError, match="cast_iron, composite"):
        shoe_friction("wood", 1e4, 1.0)


def test_shoe_force_is_piston_force_less_spring_through_the_rigging():
    # 0.4 MPa on a 356 mm piston: 0.4e6 * pi * 0.178^2 = 39.8 kN; less 1.5 kN of spring,
    # times ratio 8 and efficiency 0.9, over 8 shoes.
    area = np.pi * 0.356**2 / 4
    expected = (0.4e6 * area - 1.5e3) * 8 * 0.9 / 8
    assert shoe_force(0.4e6, area, 1, 1.5e3, 8.0, 0.9, 8) == pytest.approx(expected, rel=1e-12)
    assert expected == pytest.approx(34.47e3, rel=1e-3)
    # below the spring's force the shoes stay off
    assert shoe_force(1e4, area, 1, 1.5e3, 8.0, 0.9, 8) == 0.0


def test_brake_force_sums_the_shoes_of_each_material():
    k = np.array([3 * TF, 1.5 * TF])
    f = brake_force(np.array([0, 1]), k, np.array([8.0, 16.0]), np.array([20 / 3.6, 0.0]))
    assert f[0] == pytest.approx(8 * 3 * TF * 0.6 * 148 / 340 * 120 / 200, rel=1e-12)
    assert f[1] == pytest.approx(16 * 1.5 * TF * 0.44 * 21.5 / 26, rel=1e-12)


def test_a_friction_table_is_linear_between_points_and_held_beyond_them():
    speeds = np.array([0.0, 40.0, 100.0]) / 3.6
    friction = np.array([0.40, 0.30, 0.20])
    # 20 km/h: halfway from 0.40 to 0.30; 70 km/h: halfway from 0.30 to 0.20
    got = table_friction(speeds, friction, np.array([20.0, -70.0, 120.0, 0.0]) / 3.6)
    assert got == pytest.approx([0.35, 0.25, 0.20, 0.40], rel=1e-12)


def test_brake_force_takes_table_shoes_from_their_table():
    # each vehicle's own table: speeds (m/s), then friction; None for a formula shoe
    k = np.array([2 * TF, 2 * TF, 2 * TF])
    table = np.array([[0.0, 10.0], [0.3, 0.1]])
    f = brake_force(np.array([0, -1, -1]), k, np.array([8.0, 4.0, 4.0]),
                    np.array([0.0, 5.0, 20.0]), [None, table, table])
    assert f[0] == pytest.approx(8 * 2 * TF * 0.6 * 132 / 260, rel=1e-12)  # cast iron at rest
    assert f[1] == pytest.approx(4 * 2 * TF * 0.2, rel=1e-12)  # halfway along the table
    assert f[2] == pytest.approx(4 * 2 * TF * 0.1, rel=1e-12)  # beyond its end


def test_a_friction_table_padded_with_nan_ends_at_its_last_point():
    # the train keeps its vehicles' tables in one array, the shorter ones padded with NaN:
    # the padding is not part of the table, which is held at its last point beyond it
    padded = np.array([[0.0, 10.0, np.nan, np.nan], [0.3, 0.1, np.nan, np.nan]])
    f = brake_force(np.array([-1, -1]), np.array([2 * TF, 2 * TF]), np.array([4.0, 4.0]),
                    np.array([5.0, 30.0]), [padded, padded])
    assert f[0] == pytest.approx(4 * 2 * TF * 0.2, rel=1e-12)
    assert f[1] == pytest.approx(4 * 2 * TF * 0.1, rel=1e-12)
