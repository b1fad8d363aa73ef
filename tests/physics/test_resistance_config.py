"""Resistance chosen through vehicle and scenario configs, as the bodies' forces
(rrscore.physics.bodies, through the train's system) apply it.

Every expected value is the published formula worked out by hand with literal numbers:
specific resistance w in N/kN with V in km/h and q0 in t, R = w * m * g / 1000; US units
through the exact definitions 1 lbf = 0.45359237 kg * 9.80665 m/s^2 = 4.4482216152605 N
and 1 mph = 1609.344 m / 3600 s = 0.44704 m/s.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import car_config, make_scenario

from rrscore import ConfigError, Run
from rrscore.engine.train import TrainSystem
from rrscore.model.track import AREA, TUNNEL
from rrscore.physics.route import mean_rate

REL = 1e-12
LBF = 4.4482216152605  # N
MPH = 0.44704  # m/s
CAR_MASS = 92_500.0  # car_config: 23 t tare + 69.5 t payload, fully loaded
RHO = 1.225  # kg/m^3, the default air density


def system_of(sc) -> TrainSystem:
    """The train's system as a run builds it (the scenario's environment)."""
    return Run(sc).system


def forces_at(system: TrainSystem, position: float,
              speed_kmh: float) -> tuple[np.ndarray, np.ndarray]:
    """Signed force and resistance magnitude on each vehicle (before the Coulomb rule),
    the lead centred at ``position``, every vehicle at ``speed_kmh``."""
    y = system.initial_state(position, speed_kmh / 3.6)
    system.derivative(0.0, y, np.empty(system.size))
    scratch = system.sys.scratch
    return scratch.force.copy(), scratch.resist.copy()


def dynamics_at(sc, position: float, speed_kmh: float) -> tuple[np.ndarray, np.ndarray]:
    """:func:`forces_at` of the scenario's train."""
    return forces_at(system_of(sc), position, speed_kmh)


def newtons(w: float, mass: float) -> float:
    """Specific resistance [N/kN] -> N, as the published rules define it."""
    return w * mass * 9.80665 / 1000


# --- published Russian formulas picked in a vehicle config --------------------------------

RUSSIAN = [
    # formula, [vehicle] overrides, payload_fraction, mass kg, w(V, q0) in N/kN
    ("freight_4axle_roller", {}, 1.0, 92_500.0,
     lambda V, q0: 0.7 + (3 + 0.1 * V + 0.0025 * V**2) / q0),
    ("freight_8axle_roller", {"num_axis": 8}, 1.0, 92_500.0,
     lambda V, q0: 0.7 + (6 + 0.038 * V + 0.0021 * V**2) / q0),
    ("freight_empty", {}, 0.0, 23_000.0,
     lambda V, q0: 1.0 + 0.044 * V + 0.00024 * V**2),
    ("passenger", {}, 1.0, 92_500.0,
     lambda V, q0: 0.7 + (8 + 0.16 * V + 0.0023 * V**2) / q0),
    ("loco_power", {}, 1.0, 92_500.0,
     lambda V, q0: 1.9 + 0.01 * V + 0.0003 * V**2),
    ("loco_coasting", {}, 1.0, 92_500.0,
     lambda V, q0: 2.4 + 0.011 * V + 0.00035 * V**2),
]


@pytest.mark.parametrize(("formula", "overrides", "payload", "mass", "w"), RUSSIAN,
                         ids=[r[0] for r in RUSSIAN])
def test_russian_formula_from_config_is_the_resistance_the_dynamics_applies(
        formula, overrides, payload, mass, w):
    cfg = car_config(resistance={"formula": formula, "starting": False}, **overrides)
    axles = overrides.get("num_axis", 4)
    q0 = mass / axles / 1000  # 23.125 t, 11.5625 t (8 axles) or 5.75 t (empty)
    sc = make_scenario([{"config": cfg, "payload_fraction": payload}])
    assert sc.train.mass[0] == mass
    for V in (0.0, 40.0, 80.0):
        _, resist = dynamics_at(sc, 1000.0, V)
        assert resist[0] == pytest.approx(newtons(w(V, q0), mass), rel=REL)


# --- Davis in US units ---------------------------------------------------------------------


def test_davis_in_us_units_from_config_strings_is_the_exact_si_conversion():
    cfg = car_config(resistance={"formula": "davis", "A": "650 lbf", "B": "20 lbf/mph",
                                 "C": "0.07 lbf/mph^2", "starting": False})
    tr = make_scenario([{"config": cfg}]).train
    assert tr.c0[0] == pytest.approx(650 * 4.4482216152605, rel=REL)  # 2891.344 N
    assert tr.c1[0] == pytest.approx(20 * 4.4482216152605 / 0.44704, rel=REL)  # 199.008 N*s/m
    assert tr.c2[0] == pytest.approx(0.07 * 4.4482216152605 / 0.44704**2, rel=REL)


def test_shipped_us_hopper_gives_the_modified_davis_resistance_at_60_mph():
    sc = make_scenario([{"config": "vehicles/us_hopper_davis.toml"}])
    tr = sc.train
    assert tr.mass[0] == pytest.approx(286_000 * 0.45359237, rel=REL)
    assert tr.length[0] == pytest.approx(60 * 0.3048, rel=REL)
    # W = 143 short tons, n = 4: R = 0.6*143 + 20*4 + 0.01*143*V + 0.07*V^2 lbf, V in mph.
    # At 60 mph: 165.8 + 85.8 + 252 = 503.6 lbf (starting resistance has blended out).
    _, resist = dynamics_at(sc, 1000.0, 60 * 1.609344)
    assert resist[0] == pytest.approx(503.6 * LBF, rel=REL)


# --- curve resistance: AREA or 700/R per vehicle --------------------------------------------


def test_area_and_russian_curve_resistance_per_vehicle_fully_inside_a_curve():
    area = car_config(resistance={"curve": "area", "starting": False})
    russian = car_config(resistance={"starting": False})  # curve = "russian" by default
    sc = make_scenario([{"config": area}, {"config": russian}],
                       [{"length": "1 km"}, {"length": "500 m", "radius": "500 m"},
                        {"length": "1 km"}])
    # Both 13.92 m cars lie within 1000..1500 m when the lead is centred at 1250 m.
    _, resist = dynamics_at(sc, 1250.0, 0.0)
    curve = resist - sc.train.c0
    # AREA: D = 2*asin(15.24/500) = 3.49295... degrees; 0.8 lbf/ton/degree = 0.4 N/kN/degree.
    w_area = 0.4 * 2 * math.degrees(math.asin(15.24 / 500))
    w_russian = 700 / 500  # 1.4 N/kN
    assert curve[0] == pytest.approx(newtons(w_area, CAR_MASS), rel=REL)
    assert curve[1] == pytest.approx(newtons(w_russian, CAR_MASS), rel=REL)
    assert curve[0] - curve[1] == pytest.approx(newtons(w_area - w_russian, CAR_MASS), rel=1e-9)


def test_area_curve_resistance_is_refused_on_a_curve_tighter_than_15_24_m():
    elements = [{"length": "1 km"}, {"length": "20 m", "radius": "10 m"}]
    tight_area = make_scenario([{"config": car_config(resistance={"curve": "area"})}], elements)
    with pytest.raises(ValueError, match="too tight for AREA"):
        system_of(tight_area)
    # 700/R is defined there, so a Russian-formula vehicle may use the same route.
    russian = make_scenario([{"config": car_config()}], elements)
    # standing wholly on it: the starting resistance 28/(q0 + 7) N/kN (q0 = 23.125 t) and
    # 700/10 N/kN of curve
    _, resist = dynamics_at(russian, 1010.0, 0.0)
    assert resist[0] == pytest.approx(newtons(28 / 30.125 + 70.0, CAR_MASS), rel=REL)


def test_unknown_curve_formula_is_a_config_error():
    with pytest.raises(ConfigError, match="curve"):
        make_scenario([{"config": car_config(resistance={"curve": "davis"})}])


# --- air resistance with wind ---------------------------------------------------------------

AIR = car_config(resistance={"formula": "loco_power", "starting": False, "air_cd_a": "10 m^2"})


@pytest.mark.parametrize(("wind_kmh", "rel_kmh"), [(-20.0, 100.0), (0.0, 80.0), (20.0, 60.0)],
                         ids=["headwind", "still", "tailwind"])
def test_air_force_with_wind_is_half_rho_cda_times_relative_speed_squared(wind_kmh, rel_kmh):
    sc = make_scenario([{"config": AIR}], environment={"wind": f"{wind_kmh} km/h"})
    system = system_of(sc)
    assert system.sys.bodies.wind[0] == wind_kmh / 3.6
    assert system.sys.bodies.half_rho_cd_a[0] == pytest.approx(0.5 * 1.225 * 10, rel=REL)
    force, resist = forces_at(system, 1000.0, 80.0)
    # Train at 80 km/h in +x; relative air speed 80 - wind: 100, 80 or 60 km/h.
    assert force[0] == pytest.approx(-0.5 * 1.225 * 10 * (rel_kmh / 3.6) ** 2, rel=REL)
    # It comes on top of the running resistance, which the wind does not change.
    assert resist[0] == pytest.approx(newtons(1.9 + 0.8 + 1.92, CAR_MASS), rel=REL)


def test_headwind_adds_and_tailwind_removes_exactly_the_hand_computed_drag():
    system = system_of(make_scenario([{"config": AIR}]))
    still = forces_at(system, 1000.0, 80.0)[0][0]
    system.sys.bodies.wind[:] = -20 / 3.6
    head = forces_at(system, 1000.0, 80.0)[0][0]
    system.sys.bodies.wind[:] = 20 / 3.6
    tail = forces_at(system, 1000.0, 80.0)[0][0]
    # 0.5*1.225*10 = 6.125 kg/m; (100^2 - 80^2)/3.6^2 = 3600/12.96 m^2/s^2, and 80^2 - 60^2 = 2800.
    assert head - still == pytest.approx(-6.125 * 3600 / 12.96, rel=1e-9)
    assert tail - still == pytest.approx(6.125 * 2800 / 12.96, rel=1e-9)


def test_tailwind_faster_than_the_train_pushes_it():
    sc = make_scenario([{"config": AIR}],
                       environment={"wind": "100 km/h", "air_density": "1.2 kg/m^3"})
    force, _ = dynamics_at(sc, 1000.0, 40.0)
    # v - w = -60 km/h: F = +0.5*1.2*10*(60/3.6)^2 = 1666.67 N, forward.
    assert force[0] == pytest.approx(0.5 * 1.2 * 10 * (60 / 3.6) ** 2, rel=REL)
    assert force[0] > 0


def test_environment_defaults_are_still_air_at_sea_level_density_and_standard_gravity():
    sc = make_scenario([{"config": car_config()}])
    assert sc.config["environment"] == {"wind": 0.0, "air_density": 1.225, "gravity": 9.80665}
    res = sc.config["train"]["vehicles"][0]["config"]["vehicle"]["resistance"]
    assert (res["curve"], res["air_cd_a"], res["tunnel_factor"]) == ("russian", None, 1.0)


# --- tunnels --------------------------------------------------------------------------------

TUNNEL_ROUTE = [{"length": "1 km"}, {"length": "1 km", "tunnel": True}, {"length": "1 km"}]
TUNNEL_CAR = car_config(resistance={"formula": "loco_power", "starting": False,
                                    "air_cd_a": "8 m^2", "tunnel_factor": 1.5})


@pytest.mark.parametrize(("position", "fraction"), [(500.0, 0.0), (1000.0, 0.5), (1500.0, 1.0)],
                         ids=["outside", "half_inside", "inside"])
def test_tunnel_factor_scales_the_aerodynamic_terms_by_the_share_inside(position, fraction):
    sc = make_scenario([{"config": TUNNEL_CAR}], TUNNEL_ROUTE)
    force, resist = dynamics_at(sc, position, 80.0)
    factor = 1 + (1.5 - 1) * fraction  # 1, 1.25 (half inside), 1.5
    # loco_power at 80 km/h: 1.9 + 0.01*80 = 2.7 N/kN, aerodynamic 0.0003*6400 = 1.92 N/kN.
    assert resist[0] == pytest.approx(newtons(2.7 + 1.92 * factor, CAR_MASS), rel=REL)
    assert force[0] == pytest.approx(-0.5 * 1.225 * 8 * (80 / 3.6) ** 2 * factor, rel=REL)


def test_without_a_tunnel_or_without_a_factor_the_open_air_drag_acts():
    # a tunnel car on a route without tunnels, and a car without a factor in a tunnel
    # (loco_power without an explicit air force: its v^2 term alone, 1.92 N/kN at 80 km/h)
    no_tunnel = make_scenario([{"config": TUNNEL_CAR}])
    force, resist = dynamics_at(no_tunnel, 1500.0, 80.0)
    assert resist[0] == pytest.approx(newtons(2.7 + 1.92, CAR_MASS), rel=REL)
    assert force[0] == pytest.approx(-0.5 * 1.225 * 8 * (80 / 3.6) ** 2, rel=REL)
    plain = car_config(resistance={"formula": "loco_power", "starting": False})
    no_factor = make_scenario([{"config": plain}], TUNNEL_ROUTE)
    force, resist = dynamics_at(no_factor, 1500.0, 80.0)
    assert resist[0] == pytest.approx(newtons(2.7 + 1.92, CAR_MASS), rel=REL)
    assert force[0] == 0.0


def test_tunnel_factor_below_one_is_a_config_error():
    with pytest.raises(ConfigError, match="tunnel_factor"):
        make_scenario([{"config": car_config(resistance={"tunnel_factor": 0.9})}])


def test_route_tunnel_fraction_and_area_curve_means_are_exact():
    route = make_scenario([{"config": car_config()}],
                          [{"length": "1 km"}, {"length": "1 km", "tunnel": True,
                                                "radius": "500 m"}]).route
    x, h = np.array([990.0, 1000.0, 1004.0, 1500.0]), np.array([10.0, 10.0, 10.0, 10.0])
    np.testing.assert_allclose(mean_rate(route.track, TUNNEL, x, h), [0.0, 0.5, 0.7, 1.0],
                               rtol=1e-12, atol=1e-15)
    w = 0.4 * 2 * math.degrees(math.asin(15.24 / 500))
    np.testing.assert_allclose(mean_rate(route.track, AREA, x, h), [0.0, 0.5 * w, 0.7 * w, w],
                               rtol=1e-12, atol=1e-15)
