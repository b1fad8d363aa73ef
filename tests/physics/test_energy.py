"""The energy account against closed forms, and its balance on every shipped scenario."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import CONFIGS, G, car_config, make_scenario, shipped_drive

from rrscore import Drive
from rrscore.physics.energy import balance, kinetic_energy

M, M_ROT = 92_500.0, 4 * 96.0 / 0.4785**2  # the default loaded car and its axles' J/r^2
FREE = {"formula": "none", "starting": False}


def test_kinetic_energy_counts_each_vehicles_body_and_the_spin_of_its_own_axles():
    # vehicle 0 (80 t, 10 m/s) has axles 0 and 1 rolling at v/r; vehicle 1 (50 t, -4 m/s)
    # has axle 2, locked: 1/2 m v^2 + 1/2 J omega^2 per axle, by hand
    mass, v = np.array([80e3, 50e3]), np.array([10.0, -4.0])
    inertia, omega = np.array([100.0, 100.0, 150.0]), np.array([10 / 0.5, 10 / 0.5, 0.0])
    got = kinetic_energy(mass, v, inertia, omega, np.array([0, 0, 1]))
    np.testing.assert_allclose(got, [0.5 * 80e3 * 100 + 2 * 0.5 * 100 * 400, 0.5 * 50e3 * 16],
                               rtol=1e-15)


def test_the_balance_is_energy_in_less_energy_out_less_the_kinetic_change():
    flows = {"drive": 5e6, "brake": 1e6, "resistance": 5e5, "gravity": -2e5, "air": -1e5,
             "slip": 5e4, "coupler": 1.5e5}
    # 5 - 1 - 0.5 - 0.2 - 0.1 - 0.05 - 0.15 = 3.0 MJ in; 2.9 MJ gone into motion
    assert balance(flows, 2.9e6) == pytest.approx(1e5, rel=1e-12)


def test_a_braked_car_dissipates_its_kinetic_energy_in_the_brakes():
    # a free car at 10 m/s with its hand brake on stops; the brakes take 1/2 (m + J/r^2) v^2
    car = car_config(resistance=FREE)
    sc = make_scenario([{"config": car}], start={"position": "1 km", "speed": 10.0},
                       driver=[{"at_time": 0.0, "set": {"hand_brake": 1.0}}],
                       stop={"max_time": 60.0, "standstill": True})
    e = Drive(sc).run().summary["energy"]
    assert e["brake_J"] == pytest.approx(0.5 * (M + M_ROT) * 100.0, rel=1e-6)
    assert e["kinetic_change_J"] == pytest.approx(-0.5 * (M + M_ROT) * 100.0, rel=1e-9)
    assert e["drive_J"] == e["resistance_J"] == e["gravity_J"] == 0.0


def test_gravity_works_m_g_times_the_fall_and_the_train_balance_closes():
    # two coupled free cars rolling 200 m down 10 per mille: gravity does m g h on each
    # (sin(atan(i)) per metre run), the couplings give back what they took
    car = car_config(resistance=FREE)
    sc = make_scenario([{"config": car, "count": 2}],
                       elements=[{"length": "5 km", "grade": "-10 permille"}],
                       start={"position": "1 km", "speed": 2.0},
                       stop={"max_distance": "200 m"}, output={"sample_interval": 1.0})
    r = Drive(sc).run()
    e, s = r.summary["energy"], r.summary
    run = s["distance_m"]
    assert e["gravity_J"] == pytest.approx(2 * M * G * run * 0.01 / math.sqrt(1.0001), rel=1e-4)
    assert abs(e["balance_error_J"]) <= 1e-6 * e["gravity_J"]


def test_energy_columns_are_cumulative_per_vehicle():
    sc = make_scenario([{"config": "vehicles/simple_loco.toml"}],
                       driver=[{"at_time": 0.0, "set": {"traction_level": 1.0}}],
                       start={"position": "1 km"}, stop={"max_time": 20.0},
                       output={"sample_interval": 1.0, "vehicles": [0],
                               "vehicle_signals": ["energy_drive_J", "energy_kinetic_J"]})
    r = Drive(sc).run()
    drive = r.series["v0_energy_drive_J"]
    assert drive[0] == 0.0 and (np.diff(drive) > 0).all()
    assert drive[-1] == pytest.approx(r.summary["energy_per_vehicle"]["drive_J"][0])


@pytest.mark.parametrize("path", sorted((CONFIGS / "scenarios").glob("*.toml")),
                         ids=lambda p: p.stem)
def test_energy_balance_closes_on_every_shipped_scenario(path):
    # energy in less energy out equals the change of kinetic energy, within 0.1 % of the
    # largest flow (in practice to 1e-6: the flows are integrated with the motion)
    e = shipped_drive(path.stem).summary["energy"]
    flows = [abs(v) for k, v in e.items() if k not in ("balance_error_J",)]
    assert abs(e["balance_error_J"]) <= 1e-3 * max(flows)


def test_an_account_that_misses_by_more_than_a_thousandth_of_its_largest_flow_warns():
    from rrscore.physics.energy import BALANCE_TOLERANCE, balance_warning

    flows = {"drive_J": 10e6, "brake_J": 1e6, "coupler_J": 0.5e6, "kinetic_change_J": 8.5e6}
    assert balance_warning({**flows, "balance_error_J": 0.99 * BALANCE_TOLERANCE * 10e6}) \
        is None
    message = balance_warning({**flows, "balance_error_J": -2e5})
    assert message.startswith("the energy account misses by -2e+05 J, 2 % of its largest flow")
    assert balance_warning({**flows, "balance_error_J": float("nan")}) is not None
