"""Shipped coupler models: force-deflection laws checked point by point."""

from __future__ import annotations

import numpy as np

from rrscore.plugins.couplers import SpringDamper


def _sd(**p):
    params = {"stiffness": 2e7, "damping": 1e5, "slack": 0.02, "damping_ramp": 0.001}
    params.update(p)
    return SpringDamper([params])


def test_spring_damper_carries_nothing_inside_the_slack():
    m = _sd()
    d = np.array([-0.01, -0.005, 0.0, 0.005, 0.01])
    np.testing.assert_array_equal(m.force(d, np.full(5, 0.3)), 0.0)


def test_spring_damper_is_linear_beyond_the_slack():
    m = _sd()
    d = np.array([0.015, -0.03])
    np.testing.assert_allclose(m.force(d, np.zeros(2)), [2e7 * 0.005, -2e7 * 0.02])


def test_damper_takes_hold_over_the_ramp_so_force_is_continuous():
    m = _sd()
    # 0.5 mm past the slack: half the damping; 2 mm past: all of it.
    f = m.force(np.array([0.0105, 0.012]), np.array([0.2, 0.2]))
    np.testing.assert_allclose(f, [2e7 * 0.0005 + 0.5 * 1e5 * 0.2, 2e7 * 0.002 + 1e5 * 0.2])


def test_without_slack_it_is_a_plain_spring_damper():
    m = _sd(slack=0.0)
    np.testing.assert_allclose(m.force(np.array([0.0]), np.array([0.1])), [1e4])
    assert np.isnan(m.kinks()).all()  # nothing to locate


def test_free_range_is_the_slack():
    lo, hi = _sd().free_range()
    assert (lo[0], hi[0]) == (-0.01, 0.01)
