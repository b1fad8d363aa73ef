"""Runge-Kutta methods as tableaus, stepped by the one loop: order conditions, convergence,
error control, dense output and event location, against closed forms and scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from rrscore import Tableau
from rrscore.engine import loop
from rrscore.engine.linear import integrate, linear
from rrscore.engine.tableau import BOGACKI_SHAMPINE, CLASSICAL, DORMAND_PRINCE, rrs_solvers

OMEGA = 2.0
OSCILLATOR = [[0.0, 1.0], [-OMEGA**2, 0.0]]


def _trees(b, a, c):
    """The order conditions of an explicit Runge-Kutta method up to order 5, as
    ``(order, value, required)`` (Butcher's rooted trees)."""
    ac = a @ c
    ac2 = a @ c**2
    aac = a @ ac
    return [
        (1, b.sum(), 1.0),
        (2, b @ c, 1 / 2),
        (3, b @ c**2, 1 / 3), (3, b @ ac, 1 / 6),
        (4, b @ c**3, 1 / 4), (4, b @ (c * ac), 1 / 8), (4, b @ ac2, 1 / 12),
        (4, b @ aac, 1 / 24),
        (5, b @ c**4, 1 / 5), (5, b @ (c**2 * ac), 1 / 10), (5, b @ ac**2, 1 / 20),
        (5, b @ (c * ac2), 1 / 15), (5, b @ (c * aac), 1 / 30), (5, b @ (a @ c**3), 1 / 20),
        (5, b @ (a @ (c * ac)), 1 / 40), (5, b @ (a @ ac2), 1 / 60),
        (5, b @ (a @ aac), 1 / 120),
    ]


@pytest.mark.parametrize("tableau", rrs_solvers(), ids=lambda t: t.name)
def test_every_shipped_method_meets_the_order_conditions_of_its_order(tableau):
    k = tableau.coefficients()
    np.testing.assert_allclose(k.a.sum(axis=1), k.c, atol=1e-15)
    for order, value, required in _trees(k.b, k.a, k.c):
        if order <= tableau.order:
            assert value == pytest.approx(required, rel=1e-13), f"order {order}"
    if tableau.adaptive:  # the embedded solution has the order of the error estimate
        b_hat = k.b - k.e
        for order, value, required in _trees(b_hat, k.a, k.c):
            if order <= tableau.error_order:
                assert value == pytest.approx(required, rel=1e-13), f"embedded order {order}"
        assert any(abs(v - r) > 1e-9 for o, v, r in _trees(b_hat, k.a, k.c)
                   if o == tableau.error_order + 1)


@pytest.mark.parametrize("theta", [0.1, 0.37, 0.5, 0.9, 1.0])
def test_dormand_prince_continuous_extension_meets_the_order_conditions_to_four(theta):
    k = DORMAND_PRINCE.coefficients()
    powers = np.array([theta ** (p + 1) for p in range(k.dense.shape[1])])
    w = k.dense @ powers  # each stage's weight at fraction theta
    c, a = k.c, k.a
    conditions = [(w.sum(), theta), (w @ c, theta**2 / 2), (w @ c**2, theta**3 / 3),
                  (w @ (a @ c), theta**3 / 6), (w @ c**3, theta**4 / 4),
                  (w @ (c * (a @ c)), theta**4 / 8), (w @ (a @ c**2), theta**4 / 12),
                  (w @ (a @ (a @ c)), theta**4 / 24)]
    for value, required in conditions:
        assert value == pytest.approx(required, rel=1e-12, abs=1e-15)
    if theta == 1.0:
        np.testing.assert_allclose(w, k.b, atol=1e-14)


def _oscillator_error(tableau, h, t_end=2.0):
    code, t, y, _, _ = integrate(linear(OSCILLATOR), tableau, [1.0, 0.0], t_end, h=h)
    assert code == loop.DONE and t == t_end
    return abs(y[0] - math.cos(OMEGA * t_end))


def test_rk4_error_falls_with_the_fourth_power_of_the_step():
    coarse, fine = _oscillator_error(CLASSICAL, 0.02), _oscillator_error(CLASSICAL, 0.01)
    assert coarse / fine == pytest.approx(16.0, rel=0.05)


def test_a_fixed_step_method_lands_exactly_on_the_end():
    code, t, _, clock, _ = integrate(linear(OSCILLATOR), CLASSICAL, [1.0, 0.0], 1.0, h=0.3)
    assert code == loop.DONE and t == 1.0
    assert clock[0].steps == 4  # 0.3, 0.6, 0.9, then the 0.1 left


def test_a_method_a_plugin_gives_as_a_tableau_runs_with_its_own_order():
    fixed = Tableau("heun", a=((), (1.0,)), b=(0.5, 0.5), order=2)
    assert _oscillator_error(fixed, 0.01) / _oscillator_error(fixed, 0.005) == \
        pytest.approx(4.0, rel=0.05)
    heun = Tableau("heun_euler", a=((), (1.0,)), b=(0.5, 0.5), b_hat=(1.0, 0.0),
                   error_order=1, order=2)
    for tol in (1e-5, 1e-7):
        code, _, y, _, _ = integrate(linear(OSCILLATOR, atol=tol), heun, [1.0, 0.0], 2.0)
        assert code == loop.DONE and abs(y[0] - math.cos(2 * OMEGA)) < 30 * tol


@pytest.mark.parametrize("tableau", [DORMAND_PRINCE, BOGACKI_SHAMPINE], ids=lambda t: t.name)
@pytest.mark.parametrize("tol", [1e-4, 1e-7, 1e-10])
def test_an_adaptive_method_holds_the_oscillator_to_its_tolerance(tableau, tol):
    code, t, y, clock, _ = integrate(linear(OSCILLATOR, atol=tol), tableau, [1.0, 0.0], 10.0)
    assert code == loop.DONE and t == 10.0
    exact = [math.cos(OMEGA * t), -OMEGA * math.sin(OMEGA * t)]
    # each step's local error is held to tol, and the oscillator neither damps nor
    # amplifies an error: the global error is at most their sum
    steps = int(clock[0].steps)
    assert np.max(np.abs(y - exact)) <= steps * tol
    assert clock[0].rejected < steps


def test_dormand_prince_agrees_with_scipys_on_a_coupled_system():
    a = [[-0.5, 2.0, 0.0], [-2.0, -0.1, 1.0], [0.0, -1.0, -0.3]]
    b = [0.1, 0.0, -0.2]
    code, t, y, _, _ = integrate(linear(a, b, atol=1e-10), DORMAND_PRINCE, [1.0, 0.0, 0.5],
                                 5.0)
    ref = solve_ivp(lambda t, y: np.asarray(a) @ y + b, (0.0, 5.0), [1.0, 0.0, 0.5],
                    method="DOP853", rtol=1e-13, atol=1e-14)
    assert code == loop.DONE
    np.testing.assert_allclose(y, ref.y[:, -1], atol=1e-8)


def test_dormand_prince_is_exact_for_constant_acceleration():
    accel = 0.37
    code, t, y, _, _ = integrate(linear([[0.0, 1.0], [0.0, 0.0]], [0.0, accel], atol=1e-6),
                                 DORMAND_PRINCE, [5.0, 2.0], 100.0)
    assert code == loop.DONE
    assert y[0] == pytest.approx(5.0 + 2.0 * t + 0.5 * accel * t * t, rel=1e-14)
    assert y[1] == pytest.approx(2.0 + accel * t, rel=1e-14)


def test_dense_output_is_exact_for_a_quartic_between_the_steps():
    # y' = t^3: y = t^4 / 4; the continuous extension is of order four
    sys = linear([[0.0]], poly=[[0.0, 0.0, 0.0, 1.0]], atol=1e-3)
    code, _, y, clock, samples = integrate(sys, DORMAND_PRINCE, [0.0], 3.0, sample_dt=0.013)
    assert code == loop.DONE and clock[0].steps < samples.shape[0]
    np.testing.assert_allclose(samples[:, 1], samples[:, 0] ** 4 / 4, rtol=1e-12, atol=1e-14)


def test_dense_output_holds_the_oscillator_between_the_steps_to_the_tolerance():
    sys = linear(OSCILLATOR, atol=1e-8)
    code, _, _, clock, samples = integrate(sys, DORMAND_PRINCE, [1.0, 0.0], 5.0,
                                           sample_dt=0.01)
    assert code == loop.DONE and samples.shape[0] == 501 and clock[0].steps < 200
    np.testing.assert_allclose(samples[:, 1], np.cos(OMEGA * samples[:, 0]), atol=1e-7)


def test_a_component_with_infinite_tolerance_does_not_set_the_steps():
    alone = integrate(linear(OSCILLATOR, atol=1e-8), DORMAND_PRINCE, [1.0, 0.0], 5.0)
    # a third component, driven hard by the first, integrated but not error-controlled
    a = [[0.0, 1.0, 0.0], [-OMEGA**2, 0.0, 0.0], [1e4, 0.0, 0.0]]
    both = integrate(linear(a, atol=[1e-8, 1e-8, np.inf]), DORMAND_PRINCE, [1.0, 0.0, 0.0],
                     5.0)
    controlled = integrate(linear(a, atol=1e-8), DORMAND_PRINCE, [1.0, 0.0, 0.0], 5.0)
    assert both[3][0].steps == alone[3][0].steps
    assert controlled[3][0].steps > alone[3][0].steps


def test_the_max_norm_holds_the_one_hard_component_of_many_to_its_tolerance():
    m = 200
    a = np.zeros((m, m))
    a[0, 1], a[1, 0] = 1.0, -100.0  # one fast oscillator among slow decays
    for i in range(2, m):
        a[i, i] = -0.01
    y0 = np.ones(m)
    y0[1] = 0.0
    code, t, y, _, _ = integrate(linear(a, atol=1e-9), DORMAND_PRINCE, y0, 3.0)
    assert code == loop.DONE
    assert abs(y[0] - math.cos(10.0 * t)) < 1e-7


def test_a_state_that_stops_being_finite_fails_the_step_keeping_the_last_good_state():
    # y' = 800 y overflows at t = 0.887 s
    code, t, y, clock, _ = integrate(linear([[800.0]], atol=1e-6, rtol=1e-6), DORMAND_PRINCE,
                                     [1.0], 10.0, h=0.01)
    assert code == loop.FAILED and 0.8 < t < 0.9
    assert np.isfinite(y).all() and y[0] == pytest.approx(math.exp(800.0 * t), rel=1e-3)


def test_a_fixed_step_that_stops_being_finite_fails_keeping_the_last_good_state():
    code, t, y, _, _ = integrate(linear([[800.0]]), CLASSICAL, [1.0], 10.0, h=0.05)
    assert code == loop.FAILED and 0.0 < t < 10.0 and np.isfinite(y).all()


@pytest.mark.parametrize("tableau", [DORMAND_PRINCE, BOGACKI_SHAMPINE, CLASSICAL],
                         ids=lambda t: t.name)
def test_an_event_is_located_where_the_closed_form_puts_it(tableau):
    # x = cos(2 t) falls through 0.3 at acos(0.3) / 2
    sys = linear(OSCILLATOR, atol=1e-9, event=(0, 0.3))
    code, t, y, _, _ = integrate(sys, tableau, [1.0, 0.0], 10.0, h=0.01)
    assert code == loop.EVENT
    assert t == pytest.approx(math.acos(0.3) / OMEGA, abs=1e-8)
    assert y[0] <= 0.3 + 1e-8


def test_the_stability_function_is_the_methods_published_polynomial():
    # explicit RK4: the Taylor polynomial of exp to degree 4; Bogacki-Shampine: to degree 3
    # (its fourth stage has weight 0 in b: it serves the error estimate alone)
    for z in (0.3 - 0.2j, -2.0 + 1.0j, 1.5j, -2.5):
        assert CLASSICAL.stability(z) == pytest.approx(
            1 + z + z**2 / 2 + z**3 / 6 + z**4 / 24, rel=1e-13)
        assert BOGACKI_SHAMPINE.stability(z) == pytest.approx(
            1 + z + z**2 / 2 + z**3 / 6, rel=1e-13)


def test_the_stability_radius_is_the_half_disc_the_region_holds():
    r = CLASSICAL.stability_radius()
    # RK4's region reaches 2 sqrt 2 on the imaginary axis and 2.785 on the real one
    # (Hairer & Wanner): the half-disc within both is smaller, and held to 1e-3
    assert 2.5 < r < 2 * math.sqrt(2)
    edge = np.exp(1j * np.linspace(np.pi / 2, np.pi, 721))
    assert np.all(np.abs(CLASSICAL.stability(r * edge)) <= 1 + 1e-12)
    assert np.any(np.abs(CLASSICAL.stability((r + 2e-3) * edge)) > 1)
    # Bogacki-Shampine's region reaches sqrt 3 on the imaginary axis, and that is its radius
    assert BOGACKI_SHAMPINE.stability_radius() == pytest.approx(math.sqrt(3), abs=1e-3)
