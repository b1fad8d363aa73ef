"""Wheelsets: the held rows of the loaded axles, which the slip margins read."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from rrscore.physics.wheelsets import _loaded_rows, loaded_rows_into


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


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 30), st.integers(0, 2**32 - 1), st.booleans())
def test_rolling_axles_take_spin_and_angle_from_their_bodies_and_others_are_left(n, seed,
                                                                                  every):
    # omega = v / r and phi = phi0 + (x - x0) / r for the axles given (every axle, or
    # some), each from its own vehicle; the other entries as they were
    from rrscore.physics.wheelsets import fill_rolling

    rng = np.random.default_rng(seed)
    nv = max(1, n // 4)
    vehicle = np.sort(rng.integers(0, nv, n))
    inv_radius = 1.0 / (rng.random(n) * 0.3 + 0.4)
    sx, sv, sphi, somega = 3, 3 + nv, 3 + 2 * nv, 3 + 2 * nv + n  # blocks after 3 others
    size = somega + n + 2
    y0, y = rng.normal(size=size), rng.normal(size=size)
    axles = np.arange(n) if every else np.flatnonzero(rng.random(n) < 0.6)
    out = y.copy()
    fill_rolling(y0, out, axles, vehicle, inv_radius, sx, sv, sphi, somega)
    expected = y.copy()
    i = vehicle[axles]
    expected[somega + axles] = y[sv + i] * inv_radius[axles]
    expected[sphi + axles] = y0[sphi + axles] + (y[sx + i] - y0[sx + i]) * inv_radius[axles]
    np.testing.assert_array_equal(out, expected)
