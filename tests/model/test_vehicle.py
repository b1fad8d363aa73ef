"""Vehicle plugins (rrscore.model.vehicle): a plugin's own states, written as a ``rates``
function on its record, compiled by numba where it can and run as written where it cannot,
both against the closed form of a first-order lag; and the declarations a vehicle type
is refused for."""

from __future__ import annotations

import math
import re
from types import SimpleNamespace

import numpy as np
import pytest
from conftest import VehiclePlugin, make_scenario

import rrscore
from rrscore import (
    Control,
    Drive,
    Param,
    PluginError,
    Run,
    StateSpec,
    VehicleModel,
    load_registry,
)
from rrscore.model.vehicle import check_vehicle_type

TAU = 40.0  # s, the motor's thermal time constant
T0, T_LOW, T_HIGH = 20.0, 60.0, 90.0  # degC: at the start, set points before and after 30 s


def lag_step(t, dt, veh):  # pragma: no cover (compiled)
    """The set point the motor's temperature lags towards: raised at 30 s."""
    for i in range(veh.count):
        veh.set_point[i] = T_LOW if t < 30.0 else T_HIGH


def lag_rates(t, veh, s, ds):  # pragma: no cover (compiled)
    """First-order lag of the temperature towards the set point with the time constant
    ``tau``: plain loops numba compiles."""
    for i in range(veh.count):
        ds.temperature[i] = (veh.set_point[i] - s.temperature[i]) / veh.tau[i]


def lag_rates_python_only(t, veh, s, ds):
    """The same lag through a Python object numba cannot type: it runs as written."""
    held = SimpleNamespace(set_point=veh.set_point, tau=veh.tau)
    ds.temperature[:] = (held.set_point - s.temperature) / held.tau


class MotorLoco(VehicleModel):
    """A locomotive whose motor temperature lags towards a set point its control step
    moves at 30 s: the probe of plugin-declared states."""

    type_name = "motor_loco"
    params = {"tau": Param("s", TAU, "thermal time constant")}
    fields = {"set_point": "temperature the motor lags towards"}
    states = {"temperature": StateSpec("degC", "motor temperature", atol=1e-9, initial=T0)}
    step = staticmethod(lag_step)
    rates = staticmethod(lag_rates)


class PythonMotorLoco(MotorLoco):
    type_name = "python_motor_loco"
    rates = staticmethod(lag_rates_python_only)


def _scenario(cls: type, max_time: float = 80.0) -> rrscore.Scenario:
    cfg = {"vehicle": {"type": cls.type_name, "empty_mass": "80 t", "length": "18 m",
                       "num_axis": 4}}
    return make_scenario([{"config": cfg}],
                         registry=load_registry(extra=[VehiclePlugin(cls)]),
                         stop={"max_time": max_time}, solver={"control_step": 1.0},
                         output={"sample_interval": 5.0, "vehicles": [0],
                                 "vehicle_signals": ["temperature"]})


def _drive(cls: type, max_time: float = 80.0) -> rrscore.DriveResult:
    return Drive(_scenario(cls, max_time)).run()


def _closed_form(t: np.ndarray) -> np.ndarray:
    # T_LOW + (T0 - T_LOW) e^(-t/tau) up to 30 s, then from T(30) towards T_HIGH
    at_30 = T_LOW + (T0 - T_LOW) * math.exp(-30.0 / TAU)
    return np.where(t <= 30.0, T_LOW + (T0 - T_LOW) * np.exp(-t / TAU),
                    T_HIGH + (at_30 - T_HIGH) * np.exp(-(t - 30.0) / TAU))


@pytest.mark.parametrize("cls, compiled", [(MotorLoco, True), (PythonMotorLoco, False)])
def test_a_plugin_state_follows_its_closed_form_compiled_or_not(cls, compiled):
    adapter = Run(_scenario(cls)).system.adapters[0].rates  # how the engine calls it
    if not rrscore.jit.UNCOMPILED:
        assert adapter.compiled is compiled
        if not compiled:
            assert "TypingError" in adapter.reason
    r = _drive(cls)
    # up to the set point's move the lag follows its exponential to the solver's tolerance
    t = r.series["time_s"]
    before = t <= 30.0
    np.testing.assert_allclose(r.series["v0_temperature"][before], _closed_form(t[before]),
                               rtol=1e-7)


@pytest.mark.parametrize("cls", [MotorLoco, PythonMotorLoco])
def test_a_plugin_state_follows_its_closed_form_after_a_control_step_moves_its_set_point(cls):
    # the set point moves at a control time (30 s), where the solver restarts: the lag
    # follows the second exponential to the solver's tolerance
    run = Run(_scenario(cls))
    for t in (31.0, 35.0, 60.0, 80.0):
        run.advance(t)
        assert run.t == t
        np.testing.assert_allclose(run.state_of(f"{cls.type_name}.temperature"),
                                   _closed_form(np.array([t])), rtol=1e-7)


def test_the_compiled_and_the_python_path_give_the_same_drive():
    a, b = _drive(MotorLoco), _drive(PythonMotorLoco)
    np.testing.assert_allclose(a.series["v0_temperature"], b.series["v0_temperature"],
                               rtol=1e-13)
    assert a.summary["steps"] == b.summary["steps"]


def test_the_rates_function_called_on_the_record_gives_the_lag_by_hand():
    # the plugin's function from Python, on the record the train built for it
    train = _scenario(MotorLoco).build_train()
    veh = train.batches[0].record.view
    veh.set_point[:] = T_LOW
    s = SimpleNamespace(temperature=np.array([70.0]))
    ds = SimpleNamespace(temperature=np.zeros(1))
    MotorLoco.rates(0.0, veh, s, ds)
    assert veh.tau[0] == TAU
    assert ds.temperature[0] == pytest.approx((60.0 - 70.0) / 40.0, rel=1e-15)


def raising_rates(t, veh, s, ds):  # pragma: no cover (compiled)
    raise ValueError("motor model out of range")


class RaisingRates(MotorLoco):
    type_name = "raising_loco"
    rates = staticmethod(raising_rates)


def test_rates_that_raise_name_the_plugin_the_vehicle_and_the_time():
    with pytest.raises(PluginError, match=r"raising_loco.*rates\(\) for vehicle 0.*"
                       r"ValueError: motor model out of range, at t = 0\.000 s"):
        _drive(RaisingRates)


# --- declarations --------------------------------------------------------------------------


@pytest.mark.parametrize("attrs, words", [
    ({"rates": None}, "declares states but no rates function"),
    ({"rates": 3.0}, "rates is 3.0, expected a function"),
    ({"report": "fuel"}, "report is 'fuel', expected a function"),
    ({"check_params": 1}, "check_params is 1, expected a function"),
    ({"step": None}, "has no step function"),
    ({"states": {"temperature": 3.0}}, "state 'temperature' is not an rrscore.StateSpec"),
    ({"params": {"mass": Param("kg", 1.0, "")}}, "params names 'mass', which rrscore's record"),
    ({"fields": {"tau": "again"}}, "'tau' is both one of its params and one of its fields"),
    ({"fields": {"_hidden": ""}}, "fields names '_hidden', expected a name of letters"),
    ({"controls": {"level": 3.0}}, "control 'level' is 3.0, expected an rrscore.Control"),
    ({"controls": {"level": Control("", 0.0, 1.0, initial=2.0)}},
     "control 'level' starts at 2.0, outside its range 0.0 to 1.0"),
    ({"key_bindings": {"horn": "h"}}, "key_bindings names 'horn', which is not one of its keys"),
    ({"params": {"names": Param(kind=list, item=str, default=[])}},
     "param 'names' is a list of <class 'str'>, expected a list of numbers"),
])
def test_a_vehicle_type_with_bad_declarations_is_refused(attrs, words):
    bad = type("Bad", (MotorLoco,), {"type_name": "bad", **attrs})
    with pytest.raises(TypeError, match=re.escape(words)):
        check_vehicle_type(bad)


def test_a_signal_may_mirror_a_field_control_or_state():
    good = type("Good", (MotorLoco,), {
        "type_name": "good", "controls": {"level": Control("", 0.0, 1.0)},
        "signals": {"set_point": "", "level": "", "temperature": "", "power_W": ""}})
    check_vehicle_type(good)
