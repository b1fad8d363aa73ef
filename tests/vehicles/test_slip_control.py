"""Wheel-slip control: the law against hand-worked reductions (cut while an axle slips,
recovery ramp while it rolls), and the shipped diesel on a wet rail holding close to its
adhesion limit, worked by hand from the published Curtius-Kniffler form and the config's
mass, with and without the control."""

from __future__ import annotations

import numpy as np
import pytest

from rrscore.vehicles.slip_control import slip_reduction


@pytest.mark.parametrize(("reduction", "slip", "after"), [
    (0.0, 0.3, 0.1),  # slipping: up by 2/s * 0.05 s
    (0.2, -0.05, 0.3),  # sliding counts as slipping (either sign)
    (0.95, 1.0, 1.0),  # never past the whole torque
    (0.2, 0.0, 0.2 - 0.02 * 0.05),  # rolling: back by 0.02/s * 0.05 s
    (0.0005, 0.0, 0.0),  # never below none
])
def test_slip_cuts_the_torque_fast_and_rolling_gives_it_back_slowly(reduction, slip, after):
    assert slip_reduction(reduction, slip, 2.0, 0.02, 0.05) == pytest.approx(after, abs=1e-15)


def test_a_slip_of_three_steps_takes_fifteen_seconds_of_rolling_to_recover():
    r = 0.0
    for _ in range(3):  # 3 * 0.1 taken off
        r = slip_reduction(r, 0.4, 2.0, 0.02, 0.05)
    assert r == pytest.approx(0.3, abs=1e-15)
    steps = 0
    while r > 0.0:
        r = slip_reduction(r, 0.0, 2.0, 0.02, 0.05)
        steps += 1
    assert steps == pytest.approx(0.3 / (0.02 * 0.05), abs=1)  # 300 steps = 15 s


def test_the_law_broadcasts_over_axles():
    out = slip_reduction(np.array([0.0, 0.5]), np.array([0.2, 0.0]), 2.0, 0.02, 0.05)
    np.testing.assert_allclose(out, [0.1, 0.5 - 0.001], atol=1e-15)
