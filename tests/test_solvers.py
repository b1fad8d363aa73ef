"""Solvers against closed-form solutions of small ODEs."""

from __future__ import annotations

import numpy as np
import pytest

from rrscore.solvers import RK4, DormandPrince45


def _run(solver, t_end):
    while solver.t < t_end:
        solver.step(t_end)
    return solver.y


def _oscillator(t, y):
    return np.array([y[1], -y[0]])


def test_rk4_error_falls_with_the_fourth_power_of_the_step():
    errors = []
    for h in (0.04, 0.02):
        y = _run(RK4(_oscillator, 0.0, [1.0, 0.0], step=h), 10.0)
        errors.append(np.hypot(y[0] - np.cos(10.0), y[1] + np.sin(10.0)))
    assert np.log2(errors[0] / errors[1]) == pytest.approx(4.0, abs=0.1)


def test_rk4_lands_exactly_on_the_bound():
    s = RK4(_oscillator, 0.0, [1.0, 0.0], step=0.3)
    _run(s, 1.0)
    assert s.t == 1.0


def test_dormand_prince_meets_its_tolerance_on_an_oscillator():
    s = DormandPrince45(_oscillator, 0.0, [1.0, 0.0], step=0.01, rtol=1e-10, atol=1e-10)
    y = _run(s, 20.0)
    np.testing.assert_allclose(y, [np.cos(20.0), -np.sin(20.0)], atol=1e-8)
    assert s.nsteps < 2000  # it did adapt its step


def test_dormand_prince_is_exact_for_constant_acceleration():
    s = DormandPrince45(lambda t, y: np.array([y[1], -2.0]), 0.0, [0.0, 3.0], step=0.1)
    y = _run(s, 5.0)
    np.testing.assert_allclose(y, [3.0 * 5.0 - 25.0, 3.0 - 10.0], rtol=1e-13)


def test_dense_output_interpolates_inside_the_last_step():
    s = RK4(lambda t, y: -y, 0.0, [1.0], step=0.1)
    s.step(1.0)
    # cubic Hermite error bound h**4/384 * max|d4y/dt4| = 2.6e-7, plus the step's own error
    assert s.dense(0.05)[0] == pytest.approx(np.exp(-0.05), abs=3e-7)


def test_infinite_atol_leaves_a_component_uncontrolled():
    # Component 1 grows fast; with atol = inf it must not force tiny steps.
    fun = lambda t, y: np.array([-y[0], 50.0 * np.cos(50.0 * t)])  # noqa: E731
    free = DormandPrince45(fun, 0.0, [1.0, 0.0], step=0.1, rtol=1e-8,
                           atol=np.array([1e-8, np.inf]))
    tight = DormandPrince45(fun, 0.0, [1.0, 0.0], step=0.1, rtol=1e-8, atol=1e-8)
    _run(free, 2.0)
    _run(tight, 2.0)
    assert free.nsteps < tight.nsteps
