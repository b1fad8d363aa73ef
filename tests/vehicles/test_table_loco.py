"""TableLoco: its forces from the tables of an imported Open Rails locomotive, worked by
hand, and the balancing speed an imported locomotive reaches on level track against the
one its curve and Davis resistance give, found independently by bisection."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import make_scenario

from rrscore import Drive
from rrscore.interop.openrails import import_file
from rrscore.vehicles.table_loco import TableLoco

DATA = Path(__file__).resolve().parents[1] / "data" / "openrails" / "TRAINS" / "TRAINSET"
DIESEL = DATA / "RRS_Diesel" / "rrs_diesel.eng"
ELECTRIC = DATA / "RRS_Electric" / "rrs_electric.eng"
LBF = 0.45359237 * 9.80665


def _imported(path: Path, tmp_path: Path) -> Path:
    (name, text), = import_file(path).files.items()
    out = tmp_path / name
    out.write_text(text)
    return out


def _record(path: Path, tmp_path: Path):
    sc = make_scenario([{"config": str(_imported(path, tmp_path))}])
    return sc.build_train().batches[0].record.view


@pytest.mark.parametrize(("throttle", "speed", "force"), [
    (1.0, 37.5, 60e3 + (0.0 - 60e3) * (37.5 - 35) / (40 - 35)),  # notch 1, 35..40 m/s: 30 kN
    (1.0, 2.0, 350e3 + (300e3 - 350e3) * 2 / 5),  # 330 kN (P/v = 1100 kN does not bind)
    (1.0, 15.0, 2.2e6 / 15.0),  # the table's 200 kN capped by MaxPower / v = 146.7 kN
    # throttle 0.75 at 25 m/s: halfway between notch 0.5 (45 kN) and notch 1 (110 kN)
    (0.75, 25.0, 0.5 * ((60e3 + 30e3) / 2) + 0.5 * 110e3),
    (0.25, 10.0, 0.5 * 150e3),  # halfway between notch 0 (nothing) and notch 0.5
    (1.0, 60.0, 0.0),  # past the table: its last force
])
def test_tractive_force_is_the_file_s_curve_between_notches_capped_by_power(
        tmp_path, throttle, speed, force):
    veh = _record(DIESEL, tmp_path)
    veh.throttle[:] = throttle
    veh.v[:] = speed
    TableLoco.step(0.0, 0.05, veh)
    assert veh.traction_force_N[0] == pytest.approx(force, rel=1e-12, abs=1e-6)
    radius = 0.5334  # WheelRadius ( 0.5334m ), six driven axles
    np.testing.assert_allclose(veh.q_a[0, 1:], force * radius / 6, rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize(("speed", "force"), [
    (10.0, 0.5 * 60000 * LBF),  # MaxForce ( 60000lbf ) below the power's corner
    (20.0, 0.5 * 4000 * 550 * 0.3048 * LBF / 20.0),  # half of MaxPower ( 4000hp ) / v
])
def test_without_a_curve_the_throttle_scales_max_force_and_power(tmp_path, speed, force):
    veh = _record(ELECTRIC, tmp_path)
    veh.throttle[:] = 0.5
    veh.v[:] = speed
    TableLoco.step(0.0, 0.05, veh)
    # (the written config keeps 12 significant digits of a converted value)
    assert veh.traction_force_N[0] == pytest.approx(force, rel=1e-11)


@pytest.mark.parametrize(("speed", "force"), [
    (10.0, 250e3),  # DynamicBrakeForceCurves, notch 1: 250 kN from 5 to 20 m/s
    (30.0, 250e3 + (100e3 - 250e3) * (30 - 20) / (40 - 20)),  # 175 kN
    (1.0, 0.0),  # below DynamicBrakesMinUsableSpeed ( 5km/h )
])
def test_dynamic_brake_follows_its_curve_and_cuts_traction(tmp_path, speed, force):
    veh = _record(DIESEL, tmp_path)
    veh.throttle[:] = 1.0
    veh.dynamic_brake_level[:] = 1.0
    veh.v[:] = speed
    TableLoco.step(0.0, 0.05, veh)
    assert veh.traction_force_N[0] == 0.0
    assert veh.dynamic_brake_force_N[0] == pytest.approx(force, rel=1e-12)
    assert veh.q_a[0, 1:].sum() == pytest.approx(-force * 0.5334, rel=1e-12)


def test_imported_locomotive_settles_at_the_balancing_speed_of_its_curve_and_davis(tmp_path):
    # The file's numbers, as written (rrs_diesel.eng): notch 1 of ORTSMaxTractiveForceCurves
    # (m/s, N), MaxPower ( 2200kW ), ORTSDavis_A/B/C ( 2800 ) ( 36N/m/s ) ( 9.5 ).
    speeds = [0, 5, 10, 15, 20, 25, 30, 35, 40]
    forces = [350e3, 300e3, 250e3, 200e3, 150e3, 110e3, 80e3, 60e3, 0]

    def net(v):
        traction = min(np.interp(v, speeds, forces), 2200e3 / v)
        return traction - (2800 + 36 * v + 9.5 * v * v)

    lo, hi = 1.0, 40.0
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if net(mid) > 0 else (lo, mid)
    v_eq = (lo + hi) / 2
    # by hand: between 35 and 40 m/s, 60e3 - 12e3 (v - 35) = 2800 + 36 v + 9.5 v^2
    assert v_eq == pytest.approx((-12036 + np.sqrt(12036**2 + 4 * 9.5 * 477200)) / 19,
                                 rel=1e-9)  # 38.43 m/s, 138.4 km/h
    config = _imported(DIESEL, tmp_path)
    sc = make_scenario([{"config": str(config)}], [{"length": "40 km"}],
                       start={"position": "100 m"},
                       driver=[{"at_time": 0.0, "set": {"throttle": 1.0}}],
                       stop={"max_time": 900.0},
                       output={"sample_interval": 10.0, "coupler_forces": False,
                               "plots": False})
    r = Drive(sc).run()
    speed = r.series["speed_mps"]
    # settled: the last minute within 0.01 %, at the balancing speed within 0.5 %
    assert np.ptp(speed[-7:]) < 1e-4 * v_eq
    assert speed[-1] == pytest.approx(v_eq, rel=5e-3)  # the bound asked for
    assert speed[-1] == pytest.approx(v_eq, rel=1e-6)  # (it comes to 2e-14)


def test_vehicles_with_lists_of_different_lengths_share_a_nan_padded_table():
    def loco(speeds, forces):
        return {"config": {"vehicle": {"type": "table_loco", "empty_mass": "80 t",
                                       "length": "18 m", "num_axis": 4},
                           "params": {"curve_throttle": [1.0] * len(speeds),
                                      "curve_speed": speeds, "curve_force": forces}}}

    sc = make_scenario([loco([0.0, 10.0], [100e3, 50e3]),
                        loco([0.0, 10.0, 20.0, 30.0], [200e3, 150e3, 100e3, 80e3])])
    (batch,) = sc.build_train().batches
    veh = batch.record.view
    assert veh.curve_speed.shape == (2, 4)  # as wide as the longer list
    np.testing.assert_array_equal(veh.curve_speed[0, 2:], [np.nan, np.nan])
    np.testing.assert_array_equal(veh.curve_force[1], [200e3, 150e3, 100e3, 80e3])
    veh.throttle[:] = 1.0
    veh.v[:] = 25.0
    TableLoco.step(0.0, 0.05, veh)
    # each its own curve: the first's last force beyond its end, the second's 90 kN
    np.testing.assert_allclose(veh.traction_force_N, [50e3, 90e3], rtol=1e-12)
