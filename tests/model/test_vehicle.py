"""Vehicle plugins' own states written as ``state_rates``: compiled by numba where it can,
run as written where it cannot, both against the closed form of a first-order lag."""

from __future__ import annotations

import math
import re
from types import SimpleNamespace

import numpy as np
import pytest
from conftest import VehiclePlugin, make_scenario

import rrscore
from rrscore import Drive, Param, PluginError, StateSpec, VehicleModel, load_registry
from rrscore.compiled import compile_kernel
from rrscore.model.vehicle import check_vehicle_type

TAU = 40.0  # s, the motor's thermal time constant
T0, T_LOW, T_HIGH = 20.0, 60.0, 90.0  # degC: at the start, set points before and after 30 s


def lag_rates(t, v, s, inputs, ds):
    """First-order lag of the temperature (row 0) towards the set point (inputs row 0)
    with the time constant ``p.tau`` (inputs row 1): plain loops numba compiles."""
    for i in range(v.size):
        ds[0, i] = (inputs[0, i] - s[0, i]) / inputs[1, i]


def lag_rates_python_only(t, v, s, inputs, ds):
    """The same lag through a Python object numba cannot type: it runs as written."""
    held = SimpleNamespace(set_point=inputs[0], tau=inputs[1])
    ds[0, :] = (held.set_point - s[0]) / held.tau


class MotorLoco(VehicleModel):
    """A locomotive whose motor temperature lags towards a set point the plugin moves at
    30 s: the probe of plugin-declared states with ``state_rates``."""

    type_name = "motor_loco"
    params = {"tau": Param("s", TAU, "thermal time constant")}
    states = {"temperature": StateSpec("degC", "motor temperature", atol=1e-9, initial=T0)}
    state_rates = staticmethod(lag_rates)
    rates_inputs = ("set_point", "p.tau")

    def setup(self):
        self.set_point = np.full(self.count, T_LOW)

    def step(self, t, dt):
        self.set_point[:] = T_LOW if t < 30.0 else T_HIGH


class PythonMotorLoco(MotorLoco):
    type_name = "python_motor_loco"
    state_rates = staticmethod(lag_rates_python_only)



def _drive(cls: type, max_time: float = 80.0) -> rrscore.DriveResult:
    cfg = {"vehicle": {"type": cls.type_name, "empty_mass": "80 t", "length": "18 m",
                       "num_axis": 4}}
    sc = make_scenario([{"config": cfg}], registry=load_registry(extra=[VehiclePlugin(cls)]),
                       stop={"max_time": max_time}, solver={"control_step": 1.0},
                       output={"sample_interval": 5.0, "vehicles": [0],
                               "vehicle_signals": ["temperature"]})
    return Drive(sc).run()


def _closed_form(t: np.ndarray) -> np.ndarray:
    # T_LOW + (T0 - T_LOW) e^(-t/tau) up to 30 s, then from T(30) towards T_HIGH
    at_30 = T_LOW + (T0 - T_LOW) * math.exp(-30.0 / TAU)
    return np.where(t <= 30.0, T_LOW + (T0 - T_LOW) * np.exp(-t / TAU),
                    T_HIGH + (at_30 - T_HIGH) * np.exp(-(t - 30.0) / TAU))


@pytest.mark.parametrize("cls, compiled", [(MotorLoco, True), (PythonMotorLoco, False)])
def test_a_state_written_as_state_rates_follows_its_closed_form_compiled_or_not(cls, compiled):
    r = _drive(cls)
    kernel = compile_kernel(cls.state_rates)  # what the framework made of the function
    assert kernel.compiled is compiled
    if not compiled:
        assert "TypingError" in kernel.reason
    # the set point moves at a control time (30 s), where the solver restarts: the lag
    # follows the two exponentials to the solver's tolerance
    t = r.series["time_s"]
    np.testing.assert_allclose(r.series["v0_temperature"], _closed_form(t), rtol=1e-7)


def test_the_compiled_and_the_python_path_give_the_same_drive():
    a, b = _drive(MotorLoco), _drive(PythonMotorLoco)
    np.testing.assert_allclose(a.series["v0_temperature"], b.series["v0_temperature"],
                               rtol=1e-13)
    assert a.summary["steps"] == b.summary["steps"]


def test_the_default_rates_runs_state_rates_with_the_inputs_read_now():
    vehicle = {"name": "", "num_axis": 4, "wheel_diameter": 1.0, "empty_mass": 1.0,
               "payload_mass": 0.0}
    m = MotorLoco([vehicle, vehicle], SimpleNamespace(tau=np.full(2, 10.0)), np.arange(2),
                  np.zeros(2))
    m.setup()
    s = SimpleNamespace(temperature=np.array([20.0, 70.0]), v=np.zeros(2))
    # (60 - 20)/10 and (60 - 70)/10
    np.testing.assert_allclose(m.rates(0.0, s)["temperature"], [4.0, -1.0], rtol=1e-15)


class MissingInput(MotorLoco):
    type_name = "missing_input_loco"
    rates_inputs = ("set_point", "no_such_array")


class RaisingRates(MotorLoco):
    type_name = "raising_loco"

    @staticmethod
    def state_rates(t, v, s, inputs, ds):
        raise ValueError("motor model out of range")


def test_a_rates_input_the_model_does_not_have_names_the_plugin_and_the_input():
    with pytest.raises(PluginError, match=r"missing_input_loco.*rates_inputs.*no_such_array"):
        _drive(MissingInput)


def test_state_rates_that_raise_name_the_plugin_the_vehicle_and_the_time():
    with pytest.raises(PluginError, match=r"raising_loco.*state_rates\(\) for vehicle 0.*"
                       r"ValueError: motor model out of range, at t = 0\.000 s"):
        _drive(RaisingRates)


@pytest.mark.parametrize("attrs, words", [
    ({"state_rates": staticmethod(lag_rates), "states": {}}, "no states are declared"),
    ({"state_rates": 3.0}, "expected a function"),
    ({"rates_inputs": ("p.no_such_param",)}, "'p.no_such_param'"),
])
def test_a_vehicle_type_with_bad_state_rates_is_refused(attrs, words):
    bad = type("Bad", (MotorLoco,), {"type_name": "bad", **attrs})
    with pytest.raises(TypeError, match=re.escape(words)):
        check_vehicle_type(bad)


@pytest.mark.parametrize("attrs, words", [
    ({"step_kernel": 3.0}, "step_kernel is 3.0, expected a function"),
    ({"control_kernel": "set"}, "control_kernel is 'set', expected a function"),
    ({"step_fields": ("p.no_such_param",)}, "step_fields names 'p.no_such_param'"),
    ({"step_fields": ("state.pressure",)}, "step_fields names 'state.pressure'"),
    ({"step_fields": ("out.force_N",)}, "step_fields names 'out.force_N'"),
    ({"step_fields": ("q.tau",)}, "step_fields names 'q.tau'"),
    ({"step_fields": (3,)}, "step_fields names 3"),
])
def test_a_vehicle_type_with_a_bad_step_kernel_or_fields_is_refused(attrs, words):
    bad = type("Bad", (MotorLoco,), {"type_name": "bad", **attrs})
    with pytest.raises(TypeError, match=re.escape(words)):
        check_vehicle_type(bad)


def test_step_fields_of_every_kind_are_accepted():
    good = type("Good", (MotorLoco,), {"type_name": "good", "step_fields": (
        "set_point", "p.tau", "state.temperature")})
    check_vehicle_type(good)
