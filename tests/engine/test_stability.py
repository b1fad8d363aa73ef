"""The fastest mode of a train on its couplings, against the closed form of two bodies on
a spring and damper, and the refusal of a fixed step beyond the method's limit."""

from __future__ import annotations

import math

import pytest
from conftest import CONFIGS, car_config, make_scenario

from rrscore import ConfigError, Drive
from rrscore.engine.stability import coupling_slopes, fastest_mode
from rrscore.engine.tableau import CLASSICAL
from rrscore.run.scenario import load_scenario

K, C = 20e6, 200e3  # N/m, N*s/m
SPRING = {"model": "spring_damper",
          "params": {"stiffness": f"{K} N/m", "damping": f"{C} N*s/m", "slack": "0 mm"}}


def two_cars(**solver):
    return make_scenario([{"config": car_config()}, {"config": car_config()}],
                         coupling=SPRING, solver=solver, stop={"max_time": 2.0})


def test_the_probe_finds_a_spring_damper_s_stiffness_and_damping():
    system = Drive(two_cars()).run_.system
    (model, _), adapter = system.train.couplings.groups[0], system.coupler_adapters[0]
    k, c = coupling_slopes(model, adapter)
    assert k == pytest.approx([K], rel=1e-6)
    assert c == pytest.approx([C], rel=1e-6)


def test_the_estimate_bounds_the_two_body_mode_within_a_factor_of_two():
    system = Drive(two_cars()).run_.system
    rate, where = fastest_mode(system)
    m = system.train.mass
    # two bodies on a spring and damper: lambda^2 + (c / mu) lambda + k / mu = 0
    mu = m[0] * m[1] / (m[0] + m[1])
    a, b = C / mu, K / mu
    root = complex(a * a - 4 * b) ** 0.5
    exact = max(abs((-a + root) / 2), abs((-a - root) / 2))
    assert exact <= rate <= 2 * exact
    assert "20 MN/m" in where and "200 kN*s/m" in where


def test_a_fixed_step_beyond_the_limit_is_refused_naming_the_key_and_the_limit():
    rate, _ = fastest_mode(Drive(two_cars()).run_.system)
    limit = CLASSICAL.stability_radius() / rate
    Drive(two_cars(method="rk4", step=0.99 * limit)).run()
    with pytest.raises(ConfigError) as info:
        Drive(two_cars(method="rk4", step=1.01 * limit))
    message = str(info.value)
    assert "scenario.solver.step: found" in message
    assert f"beyond {limit:.3g} s" in message


def test_the_sa3_run_out_with_rk4_at_ten_milliseconds_is_refused_before_it_runs():
    # (the run-out's empty-gear SA-3 train at 0.05 s missed its energy account by 96 %)
    scenario = load_scenario(CONFIGS / "scenarios" / "runout_100.toml").with_values(
        {"solver.method": "rk4", "solver.step": "0.05 s"})
    with pytest.raises(ConfigError) as info:
        Drive(scenario)
    assert "runout_100.toml: scenario.solver.step: found 0.05 s" in str(info.value)
    assert math.isfinite(float(str(info.value).split("beyond ")[1].split(" s")[0]))
