"""The compiled right-hand side (rrscore.compiled) against the components' own methods.

The components' numpy methods are the reference (``TrainDynamics.rhs_components``); the
compiled pass must give the same derivatives, for every shipped scenario and for states
chosen to reach every branch: vehicles standing, held by friction or moving off, moving
backwards, on grades and in curves, with starting resistance, air drag and wind, and a
vehicle facing backwards.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import CONFIGS, car_config, make_scenario

from rrscore import load_scenario
from rrscore.run.run import Run

SCENARIOS = sorted((CONFIGS / "scenarios").glob("*.toml"))

# The two paths add the same terms in the same order, so they agree to the last bit as a
# rule; the tolerance allows a rounding step where numpy evaluates a sum differently.
RTOL = 1e-13


def _states(dyn, y: np.ndarray, rng: np.random.Generator) -> list[np.ndarray]:
    """``y`` and variants of it: velocities scattered around the train's speed, some
    exactly zero, some negative."""
    out = [y]
    for _ in range(3):
        z = y.copy()
        v = z[dyn.sv]
        v += rng.normal(0.0, 0.3, v.size)
        v[rng.random(v.size) < 0.2] = 0.0
        v[rng.random(v.size) < 0.1] *= -1.0
        out.append(z)
    return out


def _compare(dyn, t: float, y: np.ndarray) -> None:
    assert dyn._use_compiled
    np.testing.assert_allclose(dyn.rhs(t, y), dyn.rhs_components(t, y), rtol=RTOL,
                               atol=1e-300)


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_compiled_pass_gives_the_components_derivatives_on_every_shipped_scenario(path: Path):
    run = Run(load_scenario(path))
    run.advance(5.0)
    dyn, rng = run.dyn, np.random.default_rng(3)
    if not dyn._use_compiled:
        pytest.skip("an axle slips here: the components serve this state")
    for y in _states(dyn, run.solver.y, rng):
        _compare(dyn, run.solver.t, y)


def _mixed_train(**sections):
    """A car with air drag and starting resistance, three plain ones and one reversed, over
    a climb, a curved descent and level track, into a headwind."""
    air = car_config(resistance={"formula": "loco_power", "starting": True,
                                 "air_cd_a": "10 m^2"})
    plain = car_config()
    return make_scenario(
        [{"config": air}, {"config": plain, "count": 3},
         {"config": plain, "orientation": "reversed"}],
        elements=[{"length": "300 m", "grade": "8 permille"},
                  {"length": "400 m", "grade": "-5 permille", "radius": "400 m"},
                  {"length": "2 km"}],
        environment={"wind": "-15 km/h"}, **sections)


def test_compiled_pass_covers_air_wind_grades_curves_and_a_reversed_vehicle():
    run = Run(_mixed_train())
    dyn = run.dyn
    assert dyn.compiled.possible and dyn.bodies._use_air and dyn.bodies._any_starting
    rng = np.random.default_rng(11)
    for lead in (5.0, 320.0, 650.0, 1200.0):  # ends, grade changes, the curve
        y0 = dyn.initial_state(lead, 3.0)
        for y in _states(dyn, y0, rng):
            dyn.start_step(y)  # directions held from this state
            _compare(dyn, 0.0, y)


def test_body_pass_gives_the_same_derivatives_whatever_it_evaluated_before():
    # the pass keeps the knot intervals each vehicle's ends stood in: a train taken to and
    # fro over grade changes and curves, in any order, must give what a fresh one gives
    plain = car_config()
    sc = make_scenario(
        [{"config": plain, "count": 4}, {"config": plain, "orientation": "reversed"}],
        elements=[{"length": "300 m", "grade": "8 permille"},
                  {"length": "40 m", "grade": "-5 permille", "radius": "400 m"},
                  {"length": "20 m", "grade": "3 permille"},
                  {"length": "2 km"}])
    sweep = np.arange(280.0, 430.0, 3.0)  # 3 m a call: fronts and rears cross apart
    leads = [5.0, 1200.0, -50.0, 2500.0, 3000.0, *sweep, *sweep[::-1],
             *np.random.default_rng(5).permutation(sweep)]
    warm = Run(sc).dyn
    for lead in leads:
        y = warm.initial_state(float(lead), 3.0)
        warm.start_step(y)
        fresh = Run(sc).dyn
        fresh.start_step(y)
        assert warm._use_compiled
        np.testing.assert_array_equal(warm.rhs(0.0, y), fresh.rhs(0.0, y))


def test_slipping_axles_and_area_curves_use_the_components():
    area = [{"config": car_config(resistance={"curve": "area"})}]
    sc = make_scenario(area, [{"length": "5 km", "radius": "800 m"}])
    dyn = Run(sc).dyn
    assert not dyn.compiled.possible and not dyn._use_compiled
    # on straight track no curve formula adds anything: the compiled pass serves
    assert Run(make_scenario(area, [{"length": "5 km"}])).dyn._use_compiled
    run = Run(make_scenario([{"config": car_config()}]))
    dyn = run.dyn
    assert dyn._use_compiled
    dyn.wheelsets.rolling[0] = False  # axle 0 slips from now on
    dyn.refresh()
    assert not dyn._use_compiled


def test_compile_time_counts_compiling_and_not_code_already_compiled():
    from numba import njit

    from rrscore.compiled import compile_seconds
    from rrscore.run.drive import Drive

    @njit  # a function of its own: no cache, so numba compiles it here
    def cube(x):
        return x * x * x

    before = compile_seconds()
    assert cube(3.0) == 27.0
    assert compile_seconds() > before

    scenario = make_scenario([{"config": car_config(), "count": 2}], start={"speed": "20 km/h"},
                             stop={"max_time": 2.0})
    Drive(scenario).run()  # whatever it needs is compiled (or loaded) now
    summary = Drive(scenario).run().summary
    assert summary["compile_time_s"] == 0.0  # the same code again: nothing compiled


def test_compile_notice_is_called_once_when_numba_compiles_and_not_for_compiled_code():
    from numba import njit

    from rrscore.compiled import compile_notice

    calls: list[str] = []

    @njit  # functions of their own: no cache, so numba compiles them here
    def square(x):
        return x * x

    @njit
    def twice(x):
        return square(x) + square(x)

    with compile_notice(lambda: calls.append("first")):
        assert twice(3.0) == 18.0  # two functions compiled, one nested in the other
        assert square(2.0) == 4.0
    assert calls == ["first"]
    with compile_notice(lambda: calls.append("second")):
        assert twice(1.0) == 2.0  # compiled already: no notice
    assert calls == ["first"]

    @njit
    def cube(x):
        return x * x * x

    assert cube(2.0) == 8.0  # outside the block: the second notice is gone with it
    assert calls == ["first"]


def test_a_failing_compile_notice_does_not_stop_the_compile():
    from numba import njit

    from rrscore.compiled import compile_notice

    def broken() -> None:
        raise OSError("stderr closed")

    @njit
    def half(x):
        return x / 2

    with compile_notice(broken):
        assert half(3.0) == 1.5


@pytest.mark.parametrize("speed", [3.0, 0.0, -2.0])
def test_a_rigid_train_s_coupler_forces_alone_are_the_body_pass_s_to_the_bit(speed):
    # rigid_pass_forces (the one body's loop, at every step's end) against the rigid
    # body pass that also writes every rate, with air drag, wind, starting resistance, a
    # reversed car, grades and a curve under the train: the same forces, bit for bit,
    # moving either way and standing
    from rrscore.compiled import BODY_WORK_ROWS, body_rates, rigid_pass_forces

    dyn = Run(_mixed_train(dynamics="rigid")).dyn
    b, c = dyn.bodies, dyn.compiled
    for lead in (5.0, 290.0, 320.0, 650.0, 1200.0):
        y = dyn.initial_state(lead, speed)
        rel = y[dyn.sx] - y[dyn.sx][0]
        y[dyn.sx] = y[dyn.sx][0] + rel  # as the one body places its vehicles
        dyn.start_step(y)
        want, got = np.zeros(dyn.n - 1), np.full(dyn.n - 1, np.nan)
        body_rates(y, want, np.zeros_like(y), c._idx, c._knots, c._tables, c._static,
                   b.held, b.frozen, b.direction, 0, True, np.zeros((BODY_WORK_ROWS, dyn.n)))
        rigid_pass_forces(float(y[dyn.sx][0]), float(y[dyn.sv][0]), rel, c._idx, c._knots,
                             c._tables, c._static, b.held, b.frozen, b.direction, got,
                             np.zeros((BODY_WORK_ROWS, dyn.n)))
        assert np.any(want != 0.0)
        np.testing.assert_array_equal(got, want)


def test_a_long_train_s_blocks_on_one_piece_of_route_or_across_knots_give_the_same_rates():
    # 300 cars (4.2 km: a block of 256 vehicles, then 44) over pieces of 3 km, 60 m and
    # 2.5 km: blocks wholly on one piece read it once for all their vehicles, others each
    # vehicle's own cached piece. Against the components (to rounding), and a pass that
    # has stood elsewhere against a fresh one (to the bit), as blocks change between both
    from rrscore.compiled import BODY_BLOCK

    plain = car_config()
    sc = make_scenario([{"config": plain, "count": 300}],
                       elements=[{"length": "3 km", "grade": "4 permille"},
                                 {"length": "60 m", "grade": "-6 permille", "radius": "500 m"},
                                 {"length": "2.5 km", "grade": "-2 permille"},
                                 {"length": "20 km"}])
    warm = Run(sc).dyn
    assert warm.n == 300 > BODY_BLOCK and warm._use_compiled
    leads = [4300.0, 4000.0, 7000.0, 9400.0, 3030.0, 5800.0, 9800.0, 3200.0, 6100.0]
    one_piece = []
    for lead in leads:
        y = warm.initial_state(lead, 3.0)
        x = y[warm.sx]
        half = warm.train.half_length
        rear, front = x - half, x + half
        # which blocks stand on one piece (its knots at 0, 3000, 3060, 5560 m)
        knots = np.array([3000.0, 3060.0, 5560.0])
        one_piece.append([not np.any((rear[b:b + BODY_BLOCK].min() < knots)
                                     & (knots <= front[b:b + BODY_BLOCK].max()))
                          for b in (0, BODY_BLOCK)])
        warm.start_step(y)
        fresh = Run(sc).dyn
        fresh.start_step(y)
        np.testing.assert_array_equal(warm.rhs(0.0, y), fresh.rhs(0.0, y))
        _compare(warm, 0.0, y)
    # every kind of block met: on one piece, across a knot, in both places
    assert {tuple(p) for p in one_piece} >= {(True, True), (False, True), (True, False),
                                             (False, False)}


def test_a_stage_s_body_pass_writes_only_the_rates_it_is_asked_for():
    # ALL_RATES writes every rate; NONZERO_RATES leaves the rates that are zero while every
    # axle rolls (wheels, slip, the air's without drag) as they are; MOTION_RATES also
    # leaves every energy flow: each written rate is the same as ALL_RATES writes
    from rrscore.compiled import (
        ALL_RATES,
        BODY_WORK_ROWS,
        MOTION_RATES,
        NONZERO_RATES,
        body_rates,
    )

    run = Run(make_scenario([{"config": car_config(), "count": 6}],
                            elements=[{"length": "300 m", "grade": "8 permille"},
                                      {"length": "2 km", "radius": "600 m"}]))
    dyn, b, c = run.dyn, run.dyn.bodies, run.dyn.compiled
    assert not b._use_air
    y = dyn.initial_state(250.0, 3.0)
    dyn.start_step(y)
    e = dyn.energy.slices
    zero = np.zeros(dyn.size, dtype=bool)
    for sl in (dyn.sphi, dyn.somega, e["slip"], e["air"]):
        zero[sl] = True
    flows = np.zeros(dyn.size, dtype=bool)
    for sl in (*e.values(), dyn.energy.coupler):
        flows[sl] = True
    cf = dyn.coupler_forces(y)

    def rates(mode):
        dy = np.full(dyn.size, 7.0)  # what is not written stays 7
        body_rates(y, cf, dy, c._idx, c._knots, c._tables, c._static, b.held, b.frozen,
                   b.direction, dyn.na if mode == ALL_RATES else 0, False,
                   np.zeros((BODY_WORK_ROWS, dyn.n)), mode)
        return dy

    every = rates(ALL_RATES)
    body = np.zeros(dyn.size, dtype=bool)
    body[dyn.sx] = body[dyn.sv] = True
    assert np.all(every[zero] == 0.0) and np.any(every[flows & ~zero] != 0.0)
    nonzero = rates(NONZERO_RATES)
    assert np.all(nonzero[zero] == 7.0)
    np.testing.assert_array_equal(nonzero[~zero & (body | flows)],
                                  every[~zero & (body | flows)])
    motion = rates(MOTION_RATES)
    assert np.all(motion[flows | zero] == 7.0)
    np.testing.assert_array_equal(motion[body], every[body])
