"""Vehicle plugins' summary figures (rrscore.run.figures): ``report(veh, s)`` at the end
of a drive, with each vehicle's final states, listed by its place in the train; a
report that fails is a warning, and the summary is written all the same."""

from __future__ import annotations

import pytest
from conftest import VehiclePlugin, car_config, make_scenario

from rrscore import Drive, Param, StateSpec, VehicleModel, load_registry


def fill_step(t, dt, veh):  # pragma: no cover (compiled)
    """Nothing to control: the tank fills at its own rate."""


def fill_rates(t, veh, s, ds):  # pragma: no cover (compiled)
    for i in range(veh.count):
        ds.tank[i] = veh.rate[i]


def tank_report(veh, s):
    return {"tank_kg": s.tank, "rate_kgps": veh.rate}


class TankLoco(VehicleModel):
    """A locomotive whose tank fills at a constant rate: its level is rate times time."""

    type_name = "tank_loco"
    params = {"rate": Param("kg/s", 1.0, "filling rate")}
    states = {"tank": StateSpec("kg", "tank contents", atol=float("inf"))}
    step = staticmethod(fill_step)
    rates = staticmethod(fill_rates)
    report = staticmethod(tank_report)


def failing_report(veh, s):
    raise ValueError("gauge broken")


class BrokenGauge(TankLoco):
    type_name = "broken_gauge"
    report = staticmethod(failing_report)


def _drive(cls: type) -> dict:
    def loco(rate: str) -> dict:
        return {"config": {"vehicle": {"type": cls.type_name, "empty_mass": "80 t",
                                       "length": "18 m", "num_axis": 4},
                           "params": {"rate": rate}}}
    sc = make_scenario([loco("2 kg/s"), {"config": car_config()}, loco("3 kg/s")],
                       registry=load_registry(extra=[VehiclePlugin(cls)]),
                       stop={"max_time": 10.0}, solver={"control_step": 1.0})
    return Drive(sc).run().summary


def test_each_vehicle_reports_its_final_states_by_its_place_in_the_train():
    summary = _drive(TankLoco)
    assert [(f["vehicle"], f["type"]) for f in summary["vehicle_figures"]] == [
        (0, "tank_loco"), (2, "tank_loco")]
    first, last = summary["vehicle_figures"]
    assert first["tank_kg"] == pytest.approx(2.0 * 10.0, rel=1e-12)
    assert last["tank_kg"] == pytest.approx(3.0 * 10.0, rel=1e-12)
    assert (first["rate_kgps"], last["rate_kgps"]) == (2.0, 3.0)


def test_a_failing_report_is_a_warning_naming_the_plugin_and_the_summary_stands():
    summary = _drive(BrokenGauge)
    assert "vehicle_figures" not in summary
    (warning,) = [w for w in summary["warnings"] if "gauge broken" in w]
    assert "'broken_gauge'" in warning and "report()" in warning
    assert "ValueError" in warning
    assert summary["sim_time_s"] == pytest.approx(10.0)


def test_a_drive_without_reporting_vehicles_has_no_figures():
    sc = make_scenario([{"config": car_config()}], stop={"max_time": 1.0})
    assert "vehicle_figures" not in Drive(sc).run().summary
