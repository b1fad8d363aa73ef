"""Wheelsets: the held rows of the loaded axles, which the slip margins read."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from rrscore.wheelsets import _loaded_rows, loaded_rows_into


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 40), st.integers(0, 2**32 - 1))
def test_loaded_rows_are_the_rolling_axles_with_torque_or_brake_in_axle_order(n, seed):
    # the compiled pass against numpy's selection of the same axles, column by column
    rng = np.random.default_rng(seed)
    rolling = rng.random(n) < 0.8
    torque = np.where(rng.random(n) < 0.5, 0.0, rng.normal(0.0, 1e4, n))
    brake = np.where(rng.random(n) < 0.5, 0.0, rng.random(n) * 1e4)
    vehicle = np.sort(rng.integers(0, 10, n))
    radius, mass_equiv, rail, normal = (rng.random(n) + 0.5 for _ in range(4))
    rows = _loaded_rows(rolling, torque, brake, vehicle, radius, mass_equiv, rail, normal)
    k = np.flatnonzero(rolling & ((torque != 0.0) | (brake != 0.0)))
    expected = np.array([k, vehicle[k], torque[k], brake[k], radius[k], mass_equiv[k],
                         rail[k], normal[k]], dtype=float).reshape(8, k.size)
    np.testing.assert_array_equal(rows, expected)
    # in place, as the compiled loop's control steps take them: every entry written
    into = np.full((8, k.size), 5.0)
    loaded_rows_into(into, rolling, torque, brake, vehicle, radius, mass_equiv, rail, normal)
    np.testing.assert_array_equal(into, expected)
    # room for fewer columns than loaded axles (which the control steps never give it):
    # the count, and nothing written past the room
    if k.size:
        room = np.full((8, k.size + 1), 5.0)
        assert loaded_rows_into(room[:, :k.size - 1], rolling, torque, brake, vehicle, radius,
                                mass_equiv, rail, normal) == k.size
        np.testing.assert_array_equal(room[:, k.size - 1:], 5.0)
