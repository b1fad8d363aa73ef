"""Shipped coupler models: force-deflection laws checked point by point."""

from __future__ import annotations

import numpy as np
import pytest

from rrscore.config import Context, check_value, validate
from rrscore.plugins.couplers import Linear, SA3DraftGear, SpringDamper, TableDraftGear


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


# --- friction draft gears, linear coupler ------------------------------------------------

KIP = 4448.2216152605  # N
INCH = 0.0254  # m
# d_dot = ±1 m/s against friction_velocity 0.02 m/s: tanh(±50) is ±1 to within 1e-20
# (in fact it rounds to ±1 exactly), so the sweeps read the bare loading/unloading curves.
FAST = 1.0

SA3 = {"slack": 0.011, "preload": 5e3, "stiffness": 2e7, "stroke": 0.09,
       "solid_stiffness": 2e8, "unloading_ratio": 0.35, "friction_velocity": 0.02}
US_TABLE = {"slack": 0.0, "deflection": [0.75 * INCH, 3 * INCH, 4 * INCH],
            "loading": [200 * KIP, 325 * KIP, 400 * KIP],
            "unloading": [50 * KIP, 100 * KIP, 150 * KIP], "friction_velocity": 0.02}


def _sa3(**p):
    return SA3DraftGear([{**SA3, **p}])


def _table(**p):
    return TableDraftGear([{**US_TABLE, **p}])


def _sweep(model, d_out):
    """Force on the way out (d_dot = +1 m/s) and back (-1 m/s) along ``d_out``, per coupling."""
    out = np.array([model.force(np.full(model.count, d), np.full(model.count, FAST))
                    for d in d_out])
    back = np.array([model.force(np.full(model.count, d), np.full(model.count, -FAST))
                     for d in d_out[::-1]])[::-1]
    return out[:, 0], back[:, 0]


def test_sa3_quasi_static_sweep_follows_loading_out_and_unloading_back():
    # engagement e = d - 5.5 mm; stroke ends at e = 90 mm; solid stop beyond
    e = np.array([1e-4, 0.01, 0.03, 0.06, 0.09, 0.095, 0.1])
    loading = np.array([5e3 + 2e7 * 1e-4, 5e3 + 2e7 * 0.01, 605e3, 5e3 + 2e7 * 0.06, 1805e3,
                        1805e3 + 2e8 * 0.005, 1805e3 + 2e8 * 0.01])
    unloading = np.array([0.35 * (5e3 + 2e7 * 1e-4), 0.35 * (5e3 + 2e7 * 0.01), 0.35 * 605e3,
                          0.35 * (5e3 + 2e7 * 0.06), 0.35 * 1805e3,
                          0.35 * 1805e3 + 2e8 * 0.005, 0.35 * 1805e3 + 2e8 * 0.01])
    m = _sa3()
    out, back = _sweep(m, 0.0055 + e)
    np.testing.assert_allclose(out, loading, rtol=1e-12)
    np.testing.assert_allclose(back, unloading, rtol=1e-12)
    # compression (odd symmetry): growing |d| is d_dot < 0, so the roles of the rates swap
    back_c, out_c = _sweep(m, -(0.0055 + e))
    np.testing.assert_allclose(out_c, -loading, rtol=1e-12)
    np.testing.assert_allclose(back_c, -unloading, rtol=1e-12)


def test_table_quasi_static_sweep_follows_the_table_and_extrapolates_its_last_slope():
    m = _table()
    x = np.array([0.5, 0.75, 2.0, 3.0, 4.0, 5.0]) * INCH
    # by hand: through (0, 0) and the points; past 4 in the last segment's slope
    loading = np.array([200 * 0.5 / 0.75, 200, 200 + 125 * 1.25 / 2.25, 325, 400, 475]) * KIP
    unloading = np.array([50 * 0.5 / 0.75, 50, 50 + 50 * 1.25 / 2.25, 100, 150, 200]) * KIP
    out, back = _sweep(m, x)
    np.testing.assert_allclose(out, loading, rtol=1e-12)
    np.testing.assert_allclose(back, unloading, rtol=1e-12)
    # compression: growing |d| is d_dot < 0
    back_c, out_c = _sweep(m, -x)
    np.testing.assert_allclose(out_c, -loading, rtol=1e-12)
    np.testing.assert_allclose(back_c, -unloading, rtol=1e-12)


def test_friction_gears_carry_nothing_inside_the_slack():
    for m in (_sa3(), _table(slack=0.02)):
        half = m.p["slack"][0] / 2
        d = np.array([-half, -half / 2, 0.0, half / 3, half])
        for rate in (-1.0, 0.0, 0.3):
            np.testing.assert_array_equal(m.force(d, np.full(5, rate)), 0.0)


def test_at_rest_the_friction_gear_force_is_the_mean_of_the_two_curves():
    m = _sa3()
    f = m.force(np.array([0.0355, -0.0355]), np.zeros(2))
    np.testing.assert_allclose(f, np.array([1, -1]) * (605e3 + 0.35 * 605e3) / 2, rtol=1e-12)
    t = _table()
    f = t.force(np.array([3 * INCH]), np.zeros(1))
    np.testing.assert_allclose(f, [(325 + 100) / 2 * KIP], rtol=1e-12)


def test_friction_velocity_blends_loading_and_unloading_by_tanh():
    m = _sa3(friction_velocity=0.05)
    f = m.force(np.array([0.0355]), np.array([0.02]))
    w = (1 + np.tanh(0.02 / 0.05)) / 2
    np.testing.assert_allclose(f, [0.35 * 605e3 + 0.65 * 605e3 * w], rtol=1e-12)


def _trapezoid(y, x):
    integrate = getattr(np, "trapezoid", None) or np.trapz  # numpy < 2 has only trapz
    return integrate(y, x)


def test_sa3_energy_loop_is_the_area_between_the_curves():
    m = _sa3()
    P, k, r, s, ks = 5e3, 2e7, 0.35, 0.09, 2e8
    ramp = (1 - r) * P * (P / ks) / 2  # the preload takes hold over P/ks: half a rectangle less
    for e_max, hand in [(0.03, (1 - r) * (P * 0.03 + k * 0.03**2 / 2) - ramp),
                        (0.09, (1 - r) * (P * s + k * s**2 / 2) - ramp),
                        # past the stroke the band stays at its end-of-stroke width
                        (0.1, (1 - r) * (P * s + k * s**2 / 2) + (1 - r) * (P + k * s) * 0.01
                         - ramp)]:
        np.testing.assert_allclose(m.energy_loop(e_max), [hand], rtol=1e-12)
        e = np.linspace(0.0, e_max, 200_001)
        preload = np.minimum(P, ks * e)
        gap = (preload + k * np.minimum(e, s) + ks * np.maximum(e - s, 0)) \
            - (r * (preload + k * np.minimum(e, s)) + ks * np.maximum(e - s, 0))
        np.testing.assert_allclose(m.energy_loop(e_max), [_trapezoid(gap, e)], rtol=1e-9)


def test_table_energy_loop_is_the_area_between_the_curves():
    m = _table()
    e_max = 3.5 * INCH
    # by hand, in kip*in: trapezoids of the gap 0 -> 150 (0.75 in) -> 225 (3 in) -> 237.5
    hand = (150 / 2 * 0.75 + (150 + 225) / 2 * 2.25 + (225 + 237.5) / 2 * 0.5) * KIP * INCH
    np.testing.assert_allclose(m.energy_loop(e_max), [hand], rtol=1e-12)
    e = np.linspace(0.0, e_max, 200_001)
    x = np.array([0, 0.75, 3, 4]) * INCH
    gap = np.interp(e, x, np.array([0, 200, 325, 400]) * KIP) \
        - np.interp(e, x, np.array([0, 50, 100, 150]) * KIP)
    np.testing.assert_allclose(m.energy_loop(e_max), [_trapezoid(gap, e)], rtol=1e-9)


def test_table_given_in_us_units_reproduces_the_forces_in_newtons():
    ctx = Context("test.toml", "train.coupling.params")
    raw = {"deflection": ["0.75 in", "3 in", "4 in"],
           "loading": ["200 kips", "325 kips", "400 kips"],
           "unloading": ["60 kips", "100 kips", "150 kips"]}
    params = validate(raw, TableDraftGear.params, ctx)
    deflection = check_value(raw["deflection"], TableDraftGear.params["deflection"], ctx)
    np.testing.assert_allclose(deflection, np.array([0.75, 3.0, 4.0]) * 0.0254, rtol=1e-15)
    m = TableDraftGear([params])
    d = np.array([0.75, 3.0, 4.0]) * 0.0254
    f = m.force(d, np.full(3, FAST))
    np.testing.assert_allclose(f, np.array([200, 325, 400]) * 4448.2216152605, rtol=1e-12)


def test_table_couplings_with_different_tables_each_follow_their_own():
    short = {**US_TABLE, "deflection": [0.05], "loading": [1e6], "unloading": [2e5],
             "slack": 0.01}
    m = TableDraftGear([US_TABLE, short, US_TABLE])
    d = np.array([3 * INCH, 0.005 + 0.025, -4 * INCH])
    f = m.force(d, np.array([FAST, FAST, -FAST]))
    np.testing.assert_allclose(f, [325 * KIP, 5e5, -400 * KIP], rtol=1e-12)
    k = m.kinks()
    assert k.shape == (3, 2 + 2 * 3)
    assert np.isnan(k[1]).sum() == 2 * 2  # the one-point table pads its missing breakpoints


def test_sa3_kinks_are_slack_edges_and_stroke_ends_and_free_range_is_the_slack():
    m = _sa3()
    np.testing.assert_allclose(np.sort(m.kinks()[0]), [-0.0955, -0.0055, 0.0055, 0.0955])
    lo, hi = m.free_range()
    assert (lo[0], hi[0]) == (-0.0055, 0.0055)


def test_linear_coupler_is_stiffness_times_deflection_plus_damping_times_rate():
    m = Linear([{"stiffness": 1e8, "damping": 1e5}, {"stiffness": 3e7, "damping": 0.0}])
    d, v = np.array([0.002, -0.01]), np.array([-0.3, 0.5])
    np.testing.assert_array_equal(m.force(d, v), [1e8 * 0.002 + 1e5 * -0.3, 3e7 * -0.01])
    assert m.kinks().shape == (2, 0)
    lo, hi = m.free_range()
    np.testing.assert_array_equal(np.concatenate([lo, hi]), 0.0)


@pytest.mark.parametrize(("change", "name"), [
    ({"deflection": [0.0762, 0.01905, 0.1016]}, "'deflection'"),
    ({"deflection": [0.0, 0.0762, 0.1016]}, "'deflection'"),
    ({"unloading": [50 * KIP, 400 * KIP, 150 * KIP]}, "'unloading'"),
    ({"loading": [200 * KIP, 325 * KIP]}, "'loading'"),
    # steeper last unloading segment: would cross above loading past the table
    ({"unloading": [50 * KIP, 100 * KIP, 390 * KIP]}, "'unloading'"),
])
def test_bad_table_raises_value_error_naming_the_parameter(change, name):
    with pytest.raises(ValueError, match=name):
        _table(**change)
