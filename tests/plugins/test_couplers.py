"""Shipped coupler models, standalone (never through a drive): each model's force law
called from Python on its record, as the engine calls it compiled.

Every expected value is worked out by hand in the test (or by scipy): the friction
draft gears are driven along prescribed deflection histories with
``scipy.integrate.solve_ivp`` and compared with the loading and unloading curves,
the loop areas and the stick transition written out below.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from rrscore.model.config import Context, check_value, validate
from rrscore.model.records import record_type
from rrscore.plugins.couplers import Linear, SA3DraftGear, SpringDamper, TableDraftGear


def law(model, d, d_dot, z=None):
    """``model``'s force law called on its record ``model.p``: the coupler forces and the
    rates of its states (a dict) at deflections ``d``, their rates ``d_dot`` and the
    gear's memory ``z`` (its only state, where it has one). A model of one coupling is
    evaluated at each entry in turn, else there is an entry per coupling."""
    cls = type(model)
    d = np.atleast_1d(np.asarray(d, dtype=float))
    d_dot = np.ascontiguousarray(np.broadcast_to(np.asarray(d_dot, dtype=float), d.shape))
    z = np.zeros(d.size) if z is None else np.broadcast_to(np.asarray(z, dtype=float), d.shape)
    if model.count == 1 and d.size > 1:
        parts = [law(model, d[i:i + 1], d_dot[i:i + 1], z[i:i + 1]) for i in range(d.size)]
        return (np.concatenate([f for f, _ in parts]),
                {k: np.concatenate([r[k] for _, r in parts]) for k in cls.states})
    states = record_type("States", tuple(cls.states))
    s = states(*(np.array(z, dtype=float) for _ in cls.states))
    ds = states(*(np.full(d.size, np.nan) for _ in cls.states))
    out = np.full(d.size, np.nan)
    cls.force(d, d_dot, model.p, s, ds, out)
    return out, {k: getattr(ds, k) for k in cls.states}


def force(model, d, d_dot, z=None):
    """The coupler forces of :func:`law`."""
    return law(model, d, d_dot, z)[0]


def rates(model, d, d_dot, z):
    """The rates of a friction gear's memory, of :func:`law`."""
    return law(model, d, d_dot, z)[1]["gear_force"]


def _sd(**p):
    params = {"stiffness": 2e7, "damping": 1e5, "slack": 0.02, "damping_ramp": 0.001}
    params.update(p)
    return SpringDamper([params])


def test_spring_damper_carries_nothing_inside_the_slack():
    m = _sd()
    d = np.array([-0.01, -0.005, 0.0, 0.005, 0.01])
    np.testing.assert_array_equal(force(m, d, np.full(5, 0.3)), 0.0)


def test_spring_damper_is_linear_beyond_the_slack():
    m = _sd()
    d = np.array([0.015, -0.03])
    np.testing.assert_allclose(force(m, d, np.zeros(2)), [2e7 * 0.005, -2e7 * 0.02])


def test_damper_takes_hold_over_the_ramp_so_force_is_continuous():
    m = _sd()
    # 0.5 mm past the slack: half the damping; 2 mm past: all of it.
    f = force(m, np.array([0.0105, 0.012]), np.array([0.2, 0.2]))
    np.testing.assert_allclose(f, [2e7 * 0.0005 + 0.5 * 1e5 * 0.2, 2e7 * 0.002 + 1e5 * 0.2])


def test_without_slack_it_is_a_plain_spring_damper():
    m = _sd(slack=0.0)
    np.testing.assert_allclose(force(m, np.array([0.0]), np.array([0.1])), [1e4])
    assert np.isnan(m.kinks()).all()  # nothing to locate


def test_spring_damper_free_range_is_the_slack_and_has_no_states():
    m = _sd()
    lo, hi = m.free_range()
    assert (lo[0], hi[0]) == (-0.01, 0.01)
    assert m.p.stiffness[0] == 2e7 and m.p.half[0] == 0.01
    assert SpringDamper.states == {} and law(m, 0.0, 0.0)[1] == {}


def test_linear_coupler_is_stiffness_times_deflection_plus_damping_times_rate():
    m = Linear([{"stiffness": 1e8, "damping": 1e5}, {"stiffness": 3e7, "damping": 0.0}])
    d, v = np.array([0.002, -0.01]), np.array([-0.3, 0.5])
    np.testing.assert_array_equal(force(m, d, v), [1e8 * 0.002 + 1e5 * -0.3, 3e7 * -0.01])
    assert m.kinks().shape == (2, 0)
    lo, hi = m.free_range()
    np.testing.assert_array_equal(np.concatenate([lo, hi]), 0.0)


# --- friction draft gears ----------------------------------------------------------------

KIP = 4448.2216152605  # N
INCH = 0.0254  # m
KIP_PER_INCH = KIP / INCH  # N/m

# SA-3 defaults, spelled out: every hand formula below uses these names.
SLACK, P, K, STROKE, KS, R, KST, CST = 0.011, 5e3, 2e7, 0.09, 2e8, 0.35, 2e8, 3e6
# The quasi-static law (no stick damper) unless a test adds it: driven at a constant
# rate that reverses at once, a damper would jump by 2 c v at every turn.
SA3 = {"slack": SLACK, "preload": P, "stiffness": K, "stroke": STROKE, "solid_stiffness": KS,
       "unloading_ratio": R, "stick_stiffness": KST, "stick_damping": 0.0}
US_TABLE = {"slack": 0.0, "deflection": [0.75 * INCH, 3 * INCH, 4 * INCH],
            "loading": [200 * KIP, 325 * KIP, 400 * KIP],
            "unloading": [50 * KIP, 100 * KIP, 150 * KIP], "stick_stiffness": KST,
            "stick_damping": 0.0}
SPEED = 0.1  # m/s; the force law has no rate scale, so any speed is quasi-static


def _sa3(**p):
    return SA3DraftGear([{**SA3, **p}])


def _table(**p):
    return TableDraftGear([{**US_TABLE, **p}])


def sa3_loading(e):
    """SA-3 loading curve by hand, engagement ``e`` in m: preload taken up over P/KS."""
    e = np.asarray(e, dtype=float)
    g = np.minimum(e, STROKE)
    return np.minimum(P, KS * g) + K * g


def sa3_unloading(e):
    return R * sa3_loading(e)


def sa3_loop(e_max):
    """Work of one SA-3 cycle from the slack edge to ``e_max`` and back, by hand.

    The area between the curves over [0, e*], e* = min(e_max, stroke) (the elastic
    overtravel gives back what it took), less the corner the stick transition cuts
    off: from L(e*) the force falls at KST until it meets U, whose slope is R*K there,
    so the corner is a triangle of height (1-R) L(e*) and base height / (KST - R*K).
    """
    e = min(e_max, STROKE)
    area = (1 - R) * (P * e - P**2 / (2 * KS) + K * e**2 / 2)
    height = (1 - R) * (P + K * e)
    return area - height**2 / (2 * (KST - R * K)), area


@dataclass
class Leg:
    """One straight leg of a prescribed deflection history, integrated by scipy."""

    start: float
    rate: float
    sol: object

    def gear_force(self, d):
        return self.sol.sol((np.asarray(d) - self.start) / self.rate)[0]


def _drive(model, waypoints, speed=SPEED, z0=0.0):
    """Drive a one-coupling gear through ``waypoints`` (m) at ``speed``, legs of constant
    rate; returns the legs and the work ∫F dd over the whole history.

    The state is the gear force and the work, integrated with RK45 at rtol 1e-10. The
    waypoints include the stroke ends, as the drive ends its steps at kinks.
    """
    z, work = z0, 0.0
    legs = []
    for a, b in zip(waypoints[:-1], waypoints[1:], strict=True):
        rate = np.sign(b - a) * speed

        def rhs(t, y, a=a, rate=rate):
            f, r = law(model, a + rate * t, rate, y[0])
            return [r["gear_force"][0], f[0] * rate]

        sol = solve_ivp(rhs, (0.0, abs(b - a) / speed), [z, work], method="RK45", rtol=1e-10,
                        atol=[1e-6, 1e-9], dense_output=True)
        assert sol.success
        legs.append(Leg(a, rate, sol))
        z, work = sol.y[:, -1]
    return legs, work


def _force_on(model, leg, d):
    d = np.atleast_1d(np.asarray(d, dtype=float))
    z = np.atleast_1d(leg.gear_force(d))
    return np.array([force(model, d[i:i + 1], np.array([leg.rate]), z[i])[0]
                     for i in range(d.size)])


@pytest.mark.parametrize("side", [1, -1], ids=["tension", "compression"])
def test_sa3_sweep_loads_along_loading_and_unloads_along_unloading_after_sticking(side):
    # Tension engages at once from d = 0; compression after the 11 mm gap.
    edge = 0.0 if side == 1 else -SLACK
    e_top = 0.06
    m = _sa3()
    out, back = _drive(m, [edge, edge + side * e_top, edge])[0]
    e_load = np.array([1e-5, 1e-4, 0.01, 0.03, 0.06])  # 1e-5 is on the preload ramp
    np.testing.assert_allclose(_force_on(m, out, edge + side * e_load),
                               side * sa3_loading(e_load), rtol=1e-6)
    # At the turn the wedges stick: the force falls from L at KST while U falls at R*K,
    # so the transition is (L - U) / (KST - R*K) long (about (L - U) / KST = 2.6 mm).
    top = sa3_loading(e_top)
    transition = (1 - R) * top / (KST - R * K)
    e_stick = e_top - np.array([0.1, 0.5, 0.9]) * transition
    np.testing.assert_allclose(_force_on(m, back, edge + side * e_stick),
                               side * (top - KST * (e_top - e_stick)), rtol=1e-6)
    e_slide = np.array([e_top - transition - 1e-4, 0.03, 0.01, 1e-4, 1e-5])
    np.testing.assert_allclose(_force_on(m, back, edge + side * e_slide),
                               side * sa3_unloading(e_slide), rtol=1e-6)
    # back at the slack edge the gear is free again
    assert abs(back.sol.y[0, -1]) < 1e-2


@pytest.mark.parametrize("e_max", [0.03, 0.06, 0.09, 0.1, 0.12])
@pytest.mark.parametrize("side", [1, -1], ids=["tension", "compression"])
def test_sa3_cycle_work_is_the_loop_area_inside_and_past_the_stroke(side, e_max):
    edge = 0.0 if side == 1 else -SLACK
    path = [0.0, e_max, 0.0] if e_max <= STROKE else [0.0, STROKE, e_max, STROKE, 0.0]
    work = _drive(_sa3(), [edge + side * e for e in path])[1]
    hand, area = sa3_loop(e_max)
    # The brief asks for 1 %; the integration is good to far better.
    np.testing.assert_allclose(work, hand, rtol=1e-6)
    np.testing.assert_allclose(_sa3().energy_loop(e_max), [hand], rtol=1e-12)
    np.testing.assert_allclose(_sa3().energy_loop(e_max, stick=False), [area], rtol=1e-12)


def test_sa3_cycle_past_the_stroke_absorbs_what_one_to_the_stroke_end_does():
    # The overtravel is elastic: 10 mm past the stroke adds nothing, where a band kept
    # past the stroke would add (1-R) L(stroke) * 10 mm = 11.7 kJ.
    to_end = _drive(_sa3(), [0.0, STROKE, 0.0])[1]
    past = _drive(_sa3(), [0.0, STROKE, STROKE + 0.01, STROKE, 0.0])[1]
    np.testing.assert_allclose(past, to_end, rtol=1e-8)
    np.testing.assert_allclose(past, sa3_loop(STROKE)[0], rtol=1e-6)
    # the path past the stroke is the solid line, both ways
    legs = _drive(_sa3(), [0.0, STROKE, STROKE + 0.01, STROKE])[0]
    for leg in legs[1:]:
        np.testing.assert_allclose(_force_on(_sa3(), leg, STROKE + 0.005),
                                   sa3_loading(STROKE) + KS * 0.005, rtol=1e-9)


def test_table_sweep_reproduces_the_us_table():
    ctx = Context("test.toml", "train.coupling.params")
    raw = {"deflection": ["0.75 in", "3 in", "4 in"],
           "loading": ["200 kips", "325 kips", "400 kips"],
           "unloading": ["50 kips", "100 kips", "150 kips"]}
    params = validate(raw, TableDraftGear.params, ctx)
    deflection = check_value(raw["deflection"], TableDraftGear.params["deflection"], ctx)
    np.testing.assert_allclose(deflection, np.array([0.75, 3.0, 4.0]) * INCH, rtol=1e-15)
    m = TableDraftGear([params])
    for side in (1, -1):
        out, back = _drive(m, [0.0, side * 5 * INCH, 0.0])[0]
        # through (0, 0) and the points; past 4 in on the last segment's 75 kips/in
        x = np.array([0.5, 0.75, 2.0, 3.0, 4.0, 5.0])
        loading = np.array([200 * 0.5 / 0.75, 200, 200 + 125 * 1.25 / 2.25, 325, 400, 475])
        np.testing.assert_allclose(_force_on(m, out, side * x * INCH), side * loading * KIP,
                                   rtol=1e-6)
        # slope between the table points, in kips/in converted to N/m
        f = _force_on(m, out, side * np.array([0.75, 3.0]) * INCH)
        np.testing.assert_allclose(np.diff(f) / (side * 2.25 * INCH),
                                   [125 / 2.25 * KIP_PER_INCH], rtol=1e-6)
        # unloading from 5 in (200 kips on U, extrapolated at 50 kips/in) after sticking
        transition = (475 - 200) * KIP / (KST - 50 * KIP_PER_INCH)
        assert transition < 0.5 * INCH
        x = np.array([4.0, 3.0, 2.0, 0.75, 0.5])
        unloading = np.array([150, 100, 50 + 50 * 1.25 / 2.25, 50, 50 * 0.5 / 0.75])
        np.testing.assert_allclose(_force_on(m, back, side * x * INCH), side * unloading * KIP,
                                   rtol=1e-6)


# by hand, in kip*in: trapezoids of the gap 0 -> 150 (0.75 in) -> 225 (3 in) -> 237.5,
# the table gear's loop out to 3.5 in and back
TABLE_E_MAX = 3.5 * INCH
TABLE_AREA = (150 / 2 * 0.75 + (150 + 225) / 2 * 2.25 + (225 + 237.5) / 2 * 0.5) * KIP * INCH
# the corner: height 237.5 kips, closing at KST less U's 50 kips/in
TABLE_CORNER = (237.5 * KIP) ** 2 / (2 * (KST - 50 * KIP_PER_INCH))


def test_table_cycle_work_is_the_loop_area_less_the_stick_corner():
    work = _drive(_table(), [0.0, TABLE_E_MAX, 0.0])[1]
    np.testing.assert_allclose(work, TABLE_AREA - TABLE_CORNER, rtol=1e-6)


def test_table_energy_loop_is_the_loop_area_less_the_stick_corner():
    m = _table()
    np.testing.assert_allclose(m.energy_loop(TABLE_E_MAX), [TABLE_AREA - TABLE_CORNER],
                               rtol=1e-12)
    np.testing.assert_allclose(m.energy_loop(TABLE_E_MAX, stick=False), [TABLE_AREA],
                               rtol=1e-12)


def test_friction_gears_carry_nothing_inside_the_slack():
    cases = [(_sa3(), np.array([-SLACK, -0.008, -SLACK / 2, -1e-9, 0.0])),
             (_table(slack=0.02), np.array([-0.01, -0.005, 0.0, 0.003, 0.01]))]
    for m, d in cases:
        for z in (-3e5, 0.0, 1e-3, 2e5):  # whatever the memory holds
            for rate in (-1.0, 0.0, 0.3):
                np.testing.assert_array_equal(force(m, d, np.full(5, rate), np.full(5, z)),
                                              0.0)
                # strictly inside, the element does not move either
                inner = d[1:-1]
                r = rates(m, inner, np.full(3, rate), np.full(3, z))
                np.testing.assert_array_equal(r, 0.0)


def test_at_a_slack_edge_the_gear_moves_only_when_the_coupling_moves_out_of_the_slack():
    # a gear at its slack edge with nothing in its memory: moving out, it loads along the
    # first slope of its loading curve (the SA-3's preload ramp KS + K, the table's 200 kips
    # over 0.75 in); moving back into the slack, it stays free. It carries nothing there.
    first = 200 * KIP / (0.75 * INCH)
    cases = [(_sa3(), 0.0, 1.0, KS + K), (_sa3(), -SLACK, -1.0, KS + K),
             (_table(slack=0.02), 0.01, 1.0, first), (_table(slack=0.02), -0.01, -1.0, first)]
    for m, edge, side, slope in cases:
        out, back = side * 0.1, -side * 0.1
        assert rates(m, edge, out, 0.0)[0] == pytest.approx(side * slope * 0.1, rel=1e-12)
        assert rates(m, edge, back, 0.0)[0] == 0.0
        assert force(m, edge, out, 0.0)[0] == 0.0 and force(m, edge, back, 0.0)[0] == 0.0


def test_sa3_slack_is_on_the_compression_side():
    m = _sa3()
    lo, hi = m.free_range()
    assert (lo[0], hi[0]) == (-SLACK, 0.0)
    # a gear pressed in from its slack edge starts on its loading curve
    d = np.array([1e-4, -1e-4, -SLACK - 1e-4, -SLACK - 0.2])
    z = np.concatenate([m.initial_state(d[i:i + 1])["gear_force"] for i in range(4)])
    l_1e4 = min(P, KS * 1e-4) + K * 1e-4
    np.testing.assert_allclose(z, [l_1e4, 0.0, -l_1e4, -(P + K * STROKE)], rtol=1e-12)
    f = np.concatenate([force(m, d[i:i + 1], np.zeros(1), z[i]) for i in range(4)])
    np.testing.assert_allclose(f, [l_1e4, 0.0, -l_1e4, -(P + K * STROKE + KS * (0.2 - STROKE))],
                               rtol=1e-12)


def test_friction_gear_force_stays_in_the_band_for_any_memory():
    m = _sa3()
    rng = np.random.default_rng(1)
    e = np.concatenate([[0.0, 1e-6, 2.5e-5, 0.03, STROKE, 0.11], rng.uniform(0, 0.12, 50)])
    for side, edge in ((1, 0.0), (-1, -SLACK)):
        d = edge + side * e
        e = side * (d - edge)  # the engagement of the rounded deflection, by hand
        for z in (-1e7, -4e5, 0.0, 4e5, 1e7, *rng.uniform(-2e6, 2e6, 5)):
            f = side * force(m, d, np.zeros(e.size), np.full(e.size, z))
            over = KS * np.maximum(e - STROKE, 0.0)
            lo, hi = sa3_unloading(e) + over, sa3_loading(e) + over
            assert (f >= lo * (1 - 1e-15)).all() and (f <= hi * (1 + 1e-15)).all()
            # inside the band the force is the memory itself
            inside = (side * z > sa3_unloading(e)) & (side * z < sa3_loading(e))
            np.testing.assert_allclose(f[inside], side * z + over[inside], rtol=1e-15)


def test_friction_gear_force_is_continuous_at_the_slack_edge_and_the_stroke_end():
    m = _sa3()
    f = force(m, np.array([-1e-12, 1e-12]), np.zeros(2), np.full(2, 1e6))
    assert f[0] == 0.0 and 0.0 < f[1] < (KS + K) * 1e-12 * 1.0001
    f = force(m, np.array([STROKE - 1e-12, STROKE + 1e-12]), np.zeros(2), np.full(2, 3e6))
    np.testing.assert_allclose(f, P + K * STROKE, rtol=1e-9)


def test_at_rest_the_state_holds_and_the_force_stays_where_it_was():
    m = _sa3()
    d = np.full(3, 0.03)
    lo, hi = sa3_unloading(0.03), sa3_loading(0.03)  # 211.75 kN, 605 kN
    z = np.array([hi, (lo + hi) / 2, lo])
    np.testing.assert_array_equal(rates(m, d, np.zeros(3), z), 0.0)
    np.testing.assert_allclose(force(m, d, np.zeros(3), z), z, rtol=1e-15)
    # loaded to 30 mm and held: the force stays on the loading curve (memory), where a
    # history-free law at rest would give the mean of the curves, 408.4 kN
    out = _drive(m, [0.0, 0.03])[0][0]
    held = solve_ivp(lambda t, y: rates(m, d[:1], np.zeros(1), y),
                     (0.0, 60.0), out.sol.y[:1, -1], rtol=1e-10, atol=1e-6)
    f = force(m, d[:1], np.zeros(1), held.y[0, -1])
    np.testing.assert_allclose(f, [hi], rtol=1e-9)
    assert abs(f[0] - (lo + hi) / 2) > 1e5


def test_table_rounding_of_a_parallel_last_segment_is_accepted():
    ctx = Context("test.toml", "train.coupling.params")
    raw = {"deflection": ["0.75 in", "3 in", "4 in"],
           "loading": ["200 kips", "325 kips", "400 kips"],
           "unloading": ["60 kips", "150 kips", "225 kips"]}
    params = validate(raw, TableDraftGear.params, ctx)
    lo, un = params["loading"], params["unloading"]
    # both last segments rise 75 kips; after conversion unloading's is a rounding steeper
    np.testing.assert_allclose(un[-1] - un[-2], 75 * KIP, rtol=1e-12)
    np.testing.assert_allclose(lo[-1] - lo[-2], 75 * KIP, rtol=1e-12)
    m = TableDraftGear([params])
    # far past the table the band is still 175 kips wide and ordered
    d = np.full(2, 40 * INCH)
    f = force(m, d, np.zeros(2), [1e9, -1e9])
    np.testing.assert_allclose(f, np.array([400 + 75 * 36, 225 + 75 * 36]) * KIP, rtol=1e-9)


@pytest.mark.parametrize(("change", "name"), [
    ({"deflection": [0.0762, 0.01905, 0.1016]}, "'deflection'"),
    ({"deflection": [0.0, 0.0762, 0.1016]}, "'deflection'"),
    ({"unloading": [50 * KIP, 400 * KIP, 150 * KIP]}, "'unloading'"),
    ({"loading": [200 * KIP, 325 * KIP]}, "'loading'"),
    ({"loading": [200 * KIP, -325 * KIP, 400 * KIP]}, "'loading'"),
    ({"deflection": [], "loading": [], "unloading": []}, "'deflection'"),
    # steeper last unloading segment: would cross above loading past the table
    ({"unloading": [50 * KIP, 100 * KIP, 390 * KIP]}, "'unloading'"),
])
def test_bad_table_raises_value_error_naming_the_parameter(change, name):
    with pytest.raises(ValueError, match=name):
        _table(**change)


def test_table_couplings_with_different_tables_each_follow_their_own():
    short = {**US_TABLE, "deflection": [0.05], "loading": [1e6], "unloading": [2e5],
             "slack": 0.01}
    m = TableDraftGear([US_TABLE, short, US_TABLE])
    assert m.p.slack.tolist() == [0.0, 0.01, 0.0]
    d = np.array([3 * INCH, 0.005 + 0.025, -4 * INCH])
    z = np.array([325 * KIP, 5e5, -400 * KIP])  # on the loading curves, by hand
    np.testing.assert_allclose(force(m, d, np.zeros(3), z), z, rtol=1e-12)
    # sticking: every gear at the stick stiffness; sliding: each along its own segment
    r = rates(m, d, np.array([0.1, 0.1, -0.1]), z / 2)
    np.testing.assert_allclose(r, [KST * 0.1, KST * 0.1, -KST * 0.1], rtol=1e-12)
    r = rates(m, d, np.array([0.1, 0.1, -0.1]), z)
    np.testing.assert_allclose(r, [75 * KIP_PER_INCH * 0.1, 1e6 / 0.05 * 0.1,
                                   -75 * KIP_PER_INCH * 0.1], rtol=1e-12)
    k = m.kinks()
    assert k.shape == (3, 2 + 2 * 3)
    assert np.isnan(k[1]).sum() == 2 * 2  # the one-point table pads its missing breakpoints


def test_table_gears_pressed_in_from_their_slack_edges_start_on_their_loading_curves():
    short = {**US_TABLE, "deflection": [0.05], "loading": [1e6], "unloading": [2e5],
             "slack": 0.01}
    m = TableDraftGear([US_TABLE, short, US_TABLE])
    d = np.array([3 * INCH, 0.005 + 0.025, -4 * INCH])
    np.testing.assert_allclose(m.initial_state(d)["gear_force"], [325 * KIP, 5e5, -400 * KIP],
                               rtol=1e-12)


def test_sa3_kinks_are_slack_edges_and_stroke_ends_on_both_sides():
    np.testing.assert_allclose(np.sort(_sa3().kinks()[0]),
                               [-SLACK - STROKE, -SLACK, 0.0, STROKE])
    k = _sa3(slack=0.0).kinks()[0]  # one edge, listed once
    assert np.isnan(k).sum() == 1
    np.testing.assert_allclose(np.sort(k[np.isfinite(k)]), [-STROKE, 0.0, STROKE])


def test_friction_gears_have_a_stick_stiffness_and_no_friction_velocity():
    for cls in (SA3DraftGear, TableDraftGear):
        assert "friction_velocity" not in cls.params
        assert cls.params["stick_stiffness"].default == KST
        assert cls.params["stick_damping"].default == CST
        assert set(cls.states) == {"gear_force"} and cls.states["gear_force"].unit == "N"


def test_rates_are_finite_at_every_state():
    rng = np.random.default_rng(7)
    for m, kinks in ((_sa3(), [-SLACK - STROKE, -SLACK, 0.0, STROKE, P / KS]),
                     (_sa3(solid_stiffness=0.0), [0.0, STROKE]),
                     (_sa3(preload=0.0, slack=0.0), [0.0, STROKE]),
                     (_table(), [0.0, 0.75 * INCH, 3 * INCH, -4 * INCH])):
        d = np.concatenate([kinks, rng.uniform(-0.15, 0.15, 200)])
        n = d.size
        for rate in (-0.5, 0.0, 0.5):
            for z in (np.zeros(n), rng.uniform(-3e6, 3e6, n), np.full(n, 1e12)):
                r = rates(m, d, np.full(n, rate), z)
                f = force(m, d, np.full(n, rate), z)
                assert np.isfinite(r).all() and np.isfinite(f).all()
                assert (np.abs(r) <= (KS + K) * 0.5 * (1 + 1e-12)).all()


MASS = 92.5e3  # kg, a loaded four-axle car


def _two_cars_rhs(m, y):
    """Two cars joined by one SA-3 gear: y = (x0, v0, x1, v1, gear_force); nominal 0."""
    f, r = law(m, y[0] - y[2], y[1] - y[3], y[4])
    return np.array([y[1], -f[0] / MASS, y[3], f[0] / MASS, r["gear_force"][0]])


def _jacobian(m, y):
    steps = np.array([1e-9, 1e-6, 1e-9, 1e-6, 1e-3])  # m, m/s, m, m/s, N
    cols = [(_two_cars_rhs(m, y + h * np.eye(5)[i]) - _two_cars_rhs(m, y - h * np.eye(5)[i]))
            / (2 * h) for i, h in enumerate(steps)]
    return np.stack(cols, axis=1)


E_MID = 0.03
L_MID, U_MID = P + K * E_MID, R * (P + K * E_MID)
L_RAMP = KS * 1e-5 + K * 1e-5  # on the preload ramp, 10 micrometres in
# (deflection, deflection rate, gear force, stiffness and damping that set the fastest
# mode by hand). Each point lies inside one smooth piece of the law, so the differences
# see that piece: a sliding gear's memory sits 100 N past its curve, where integration
# leaves it; a sticking one moves slowly enough that its damper keeps inside the band.
OPERATING_POINTS = {
    "sticking out": (E_MID, 0.01, (L_MID + U_MID) / 2, KST, CST),
    "sticking back": (E_MID, -0.01, (L_MID + U_MID) / 2, KST, CST),
    "at rest": (E_MID, 0.0, (L_MID + U_MID) / 2, KST, CST),
    "sliding along loading": (E_MID, 0.1, L_MID + 100, K, 0.0),
    "sliding along unloading": (E_MID, -0.1, U_MID - 100, R * K, 0.0),
    "preload ramp": (1e-5, 0.1, L_RAMP + 1, KS + K, 0.0),
    "preload ramp sticking": (1e-5, -1e-5, 0.6 * L_RAMP, KS + K, CST),
    "solid": (STROKE + 0.005, 0.1, P + K * STROKE, KS, 0.0),
    "compression sticking": (-SLACK - E_MID, -0.01, -(L_MID + U_MID) / 2, KST, CST),
    "compression sliding": (-SLACK - E_MID, -0.1, -L_MID - 100, K, 0.0),
}


def _dopri5_amplification(z: complex) -> float:
    """|R(z)| of Dormand-Prince 5(4): the Taylor polynomial of degree 5 plus z**6 / 600."""
    return abs(sum(z**j / math.factorial(j) for j in range(6)) + z**6 / 600)


@pytest.mark.parametrize("point", list(OPERATING_POINTS))
def test_two_car_system_is_stable_for_a_20_ms_explicit_step(point):
    d, d_dot, z, k_hand, c_hand = OPERATING_POINTS[point]
    jac = _jacobian(_sa3(stick_damping=CST), np.array([d, d_dot, 0.0, 0.0, z]))
    # no term like (L - U) / friction_velocity: force and rate are bounded by a stiffness
    assert np.abs(jac[3, [0, 2]]).max() * MASS <= (KS + K) * 1.001  # dF/dd
    assert np.abs(jac[4, [1, 3]]).max() <= (KS + K) * 1.001  # d(rate)/d(d_dot)
    assert np.abs(jac[4, 4]) < 1e-6 and np.abs(jac[4, [0, 2]]).max() < 1.0
    # damping only while the gear sticks, by the stick damper
    np.testing.assert_allclose(np.abs(jac[3, 1]) * MASS, c_hand, atol=1.0)
    # the relative motion of the two masses: (m/2) s^2 + c s + k = 0
    hand = np.roots([MASS / 2, c_hand, k_hand])
    lam = np.linalg.eigvals(jac)
    fastest = lam[np.argmax(np.abs(lam))]
    np.testing.assert_allclose(abs(fastest), np.abs(hand).max(), rtol=1e-3)
    np.testing.assert_allclose(fastest.real, hand.real.min(), rtol=1e-3, atol=1e-3)
    growth = max(_dopri5_amplification(0.02 * x) for x in lam)
    if c_hand > 0:  # a sticking gear: a 20 ms Dormand-Prince step is stable on every mode
        assert growth <= 1.0
    else:
        # A sliding or solid gear is undamped: Dormand-Prince is stable on the imaginary
        # axis only up to |h lambda| = 0.997, so 20 ms steps grow such a mode slightly
        # (0.14 % a step on the preload ramp) and the error control shortens them. Slides
        # last only while the load grows, so the steps are mostly those of a stuck gear.
        assert growth <= 1.002 and 0.02 * np.abs(lam).max() < 1.4


def test_spring_damper_gives_each_coupling_of_a_group_its_own_parameters():
    # one model serving four couplings, each with its own stiffness and slack, gives each
    # the force it gives alone
    params = [{"stiffness": 2e7 * (1 + k), "damping": 1e5, "slack": 0.02 * (k % 2),
               "damping_ramp": 0.001} for k in range(4)]
    m = SpringDamper(params)
    d = np.array([0.0105, -0.012, 0.03, 0.0])
    d_dot = np.array([0.2, -0.1, 0.3, 0.1])
    whole = force(m, d, d_dot)
    expected = [2e7 * 0.0105 + 1e5 * 0.2,            # no slack: plain spring-damper
                -4e7 * 0.002 - 1e5 * 0.1,            # 2 mm past a 10 mm half slack
                6e7 * 0.03 + 1e5 * 0.3,
                0.0]                                 # inside the slack
    np.testing.assert_allclose(whole, expected, rtol=1e-15)
    for j in range(4):
        one = force(SpringDamper([params[j]]), d[j:j + 1], d_dot[j:j + 1])
        assert one[0] == whole[j]
