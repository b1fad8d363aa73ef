"""Recorded signals (rrscore.run.signals): a plugin state recorded as a signal is each
vehicle's own, also where two vehicle types declare a state of the same name."""

from __future__ import annotations

import numpy as np
from conftest import VehiclePlugin, make_scenario

from rrscore import Drive, Param, StateSpec, VehicleModel, load_registry


def fill_step(t, dt, veh):  # pragma: no cover (compiled)
    """Nothing to control: the tank fills at its own rate."""


def fill_rates(t, veh, s, ds):  # pragma: no cover (compiled)
    for i in range(veh.count):
        ds.tank[i] = veh.rate[i]


class FillingLoco(VehicleModel):
    """A tank filling at a constant rate (its contents: rate times time)."""

    type_name = "filling_loco"
    params = {"rate": Param("kg/s", 1.0, "filling rate")}
    states = {"tank": StateSpec("kg", "tank contents", atol=float("inf"))}
    signals = {"tank": "tank contents"}
    step = staticmethod(fill_step)
    rates = staticmethod(fill_rates)


class OtherFillingLoco(FillingLoco):
    """Another type with a state of the same name."""

    type_name = "other_filling_loco"


def test_a_state_of_one_name_in_two_vehicle_types_is_recorded_for_each():
    def loco(cls: type, rate: str) -> dict:
        return {"config": {"vehicle": {"type": cls.type_name, "empty_mass": "80 t",
                                       "length": "18 m", "num_axis": 4},
                           "params": {"rate": rate}}}
    registry = load_registry(extra=[VehiclePlugin(FillingLoco, OtherFillingLoco)])
    sc = make_scenario([loco(FillingLoco, "2 kg/s"), loco(OtherFillingLoco, "3 kg/s")],
                       registry=registry, stop={"max_time": 10.0},
                       solver={"control_step": 1.0},
                       output={"sample_interval": 1.0, "vehicles": [0, 1],
                               "vehicle_signals": ["tank"]})
    series = Drive(sc).run().series
    t = series["time_s"]
    np.testing.assert_allclose(series["v0_tank"], 2.0 * t, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(series["v1_tank"], 3.0 * t, rtol=1e-12, atol=1e-12)
