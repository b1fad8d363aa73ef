"""Load-time checks of the plugin API: each broken plugin is rejected with a message naming
the plugin and the problem, at load, after setup or at its first step; `rrs plugins
--check` runs them on everything installed."""

from __future__ import annotations

import types

import numpy as np
import pytest
from conftest import car_config, make_scenario

import rrscore
from rrscore import Drive, PluginError, load_registry
from rrscore.cli.main import main
from rrscore.cli.plugincheck import check_coupler_model, class_problems


def plugin_of(*classes: type) -> types.ModuleType:
    """A plugin module providing ``classes`` (vehicle types or coupler models)."""
    module = types.ModuleType(f"broken_{classes[0].type_name}")
    vehicles = [c for c in classes if issubclass(c, rrscore.VehicleModel)]
    couplers = [c for c in classes if issubclass(c, rrscore.CouplerModel)]
    if vehicles:
        module.rrs_vehicle_types = rrscore.hookimpl(lambda: vehicles)
    if couplers:
        module.rrs_coupler_models = rrscore.hookimpl(lambda: couplers)
    return module


class Good(rrscore.VehicleModel):
    type_name = "good"
    keys = {"go": "push while held"}
    key_bindings = {"go": "g"}
    controls = {"level": "0..1"}
    signals = {"force_N": "push"}

    def setup(self):
        self.level = np.zeros(self.count)

    def step(self, t, dt):
        self.Q_a[:, 0] = 1e4 * self.level
        self.out["force_N"] = self.Q_a[:, 0].copy()


class NoControlAttribute(Good):
    type_name = "no_control_attribute"

    def setup(self):
        pass


class UnwrittenSignal(Good):
    type_name = "unwritten_signal"
    signals = {"force_N": "push", "temperature_K": "motor temperature"}


class NegativeQr(Good):
    type_name = "negative_qr"

    def step(self, t, dt):
        super().step(t, dt)
        self.Q_r[:, 2] = -500.0  # a "brake" that drives


class ReplacedQa(Good):
    type_name = "replaced_qa"

    def step(self, t, dt):
        super().step(t, dt)
        self.Q_a = np.zeros((self.count, 2))  # one column, where the axles need theirs


class UnknownUnit(Good):
    type_name = "unknown_unit"
    params = {"power": rrscore.Param("horsepowerz", 1e6, "rated power")}


class BadBinding(Good):
    type_name = "bad_binding"
    key_bindings = {"go": "g", "stop": "g"}


def _drive(cls):
    reg = load_registry(extra=[plugin_of(cls)])
    sc = make_scenario([{"config": car_config(type=cls.type_name)}], registry=reg,
                       stop={"max_time": 1.0})
    return Drive(sc).run()


def test_a_correct_plugin_passes_every_check():
    assert _drive(Good).summary["stop_reason"] == "max_time"


def test_declared_control_without_attribute_is_rejected_after_setup():
    with pytest.raises(PluginError, match=r"vehicle plugin 'no_control_attribute' "
                                          r"\(broken_no_control_attribute\) in setup\(\).*"
                                          r"control 'level' is declared but the model has no "
                                          r"attribute 'level'"):
        _drive(NoControlAttribute)


def test_declared_signal_never_written_is_rejected_at_the_first_step():
    with pytest.raises(PluginError, match=r"vehicle plugin 'unwritten_signal' .* in step\(\).*"
                                          r"signal 'temperature_K' is declared but step\(\) "
                                          r"never writes self.out\['temperature_K'\], at t = 0"):
        _drive(UnwrittenSignal)


def test_negative_q_r_is_rejected_not_made_positive():
    with pytest.raises(PluginError, match=r"vehicle plugin 'negative_qr' .* in step\(\).*"
                                          r"Q_r\[0, 2\] \(brake torque on axle 1\) = -500 is "
                                          r"negative"):
        _drive(NegativeQr)


def test_q_a_replaced_by_an_array_of_another_shape_is_named_with_the_shape_expected():
    with pytest.raises(PluginError, match=r"vehicle plugin 'replaced_qa' .* in step\(\).*"
                                          r"Q_a is a float64 array of shape \(1, 2\), "
                                          r"expected a float array of shape \(1, 5\): assign "
                                          r"into it"):
        _drive(ReplacedQa)


def test_parameter_with_unknown_unit_is_rejected_at_load():
    with pytest.raises(PluginError, match=r"plugin 'broken_unknown_unit': rrs_vehicle_types: "
                                          r"unknown_unit: parameter 'power' has an unknown unit "
                                          r"'horsepowerz'"):
        load_registry(extra=[plugin_of(UnknownUnit)])


def test_key_bindings_must_name_keys_and_differ():
    assert class_problems(BadBinding) == [
        "key_bindings binds 'stop', which is not one of its keys (go)",
        "key_bindings binds both 'go' and 'stop' to 'g'"]


def test_coupler_parameter_unit_is_checked_too():
    class Coupler(rrscore.CouplerModel):
        type_name = "c"
        params = {"k": rrscore.Param("N/mm^", 1.0, "stiffness")}

        def force(self, d, d_dot, s):
            return self.p.k * d

    assert class_problems(Coupler) == [
        "parameter 'k' has an unknown unit 'N/mm^' (expected an SI unit expression such as "
        "'N', 'kg*m^2', 'N/m')"]


def test_coupler_check_catches_a_force_law_of_the_wrong_shape():
    class Scalar(rrscore.CouplerModel):
        type_name = "scalar"

        def force(self, d, d_dot, s):
            return 0.0

    assert check_coupler_model(Scalar) == [
        "force() returned shape () for 41 couplings, expected (41,)"]


def test_rrs_plugins_check_reports_each_broken_plugin(tmp_path, capsys):
    (tmp_path / "broken.py").write_text(
        "import numpy as np\nimport rrscore\n\n"
        "class Quiet(rrscore.VehicleModel):\n"
        "    type_name = 'quiet'\n    signals = {'hum': 'never written'}\n\n"
        "@rrscore.hookimpl\ndef rrs_vehicle_types():\n    return [Quiet]\n")
    assert main(["plugins", "--check", "--plugins", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "ok    vehicle type simple_loco" in out
    assert ("FAIL  vehicle type quiet  (broken@" in out
            and "signal 'hum' is declared but step() never writes" in out)


def test_rrs_plugins_check_passes_on_the_shipped_plugins(capsys):
    assert main(["plugins", "--check"]) == 0
    out = capsys.readouterr().out
    assert "FAIL" not in out and "ok    coupler model sa3" in out
