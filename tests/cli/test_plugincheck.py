"""Checks of plugins: broken declarations are rejected at load with a message naming the
plugin and the problem; what a plugin does wrong when it runs (exceptions, q_r negative or
outputs not finite, signals never written, a coupler law that leaves entries unwritten)
is refused by the engine in a drive and reported by `rrs plugins --check`, which also
says, as `rrs plugins -v` does, which of a plugin's functions numba compiles and why the
others run in Python."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import types

import numpy as np
import pytest
from conftest import car_config, make_scenario

import rrscore
from rrscore import Drive, PluginError, Run, load_registry
from rrscore.cli.main import main
from rrscore.cli.plugincheck import (
    adapters_of,
    check_coupler_model,
    check_vehicle_type,
    coupler_record,
    how_it_runs,
    vehicle_record,
)
from rrscore.jit import UNCOMPILED
from rrscore.run.plugins import class_problems

needs_numba = pytest.mark.skipif(UNCOMPILED, reason="NUMBA_DISABLE_JIT: nothing is compiled")


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


def good_step(t, dt, veh):
    for i in range(veh.count):
        veh.q_a[i, 0] = 1e4 * veh.level[i] + 1e4 * veh.go[i]
        veh.force_N[i] = veh.q_a[i, 0]


class Good(rrscore.VehicleModel):
    type_name = "good"
    keys = {"go": "push while held"}
    key_bindings = {"go": "g"}
    controls = {"level": rrscore.Control("0..1", 0.0, 1.0)}
    signals = {"force_N": "push", "level": "the level"}
    step = staticmethod(good_step)


class UnwrittenSignal(Good):
    type_name = "unwritten_signal"
    signals = {"force_N": "push", "temperature_K": "motor temperature"}


def negative_step(t, dt, veh):
    for i in range(veh.count):
        veh.q_a[i, 0] = 1e4 * veh.level[i]
        veh.q_r[i, 2] = -500.0  # a "brake" that drives
        veh.force_N[i] = veh.q_a[i, 0]


class NegativeQr(Good):
    type_name = "negative_qr"
    step = staticmethod(negative_step)


def nan_step(t, dt, veh):
    for i in range(veh.count):
        veh.q_a[i, 1] = np.nan if veh.go[i] != 0.0 else 0.0  # once the key is pressed
        veh.force_N[i] = veh.q_a[i, 1]


class NanQa(Good):
    type_name = "nan_qa"
    step = staticmethod(nan_step)


def raising_input(veh, i, name, value):
    if name == "go" and value != 0.0:
        raise ValueError("the go key is stuck")


class RaisingInput(Good):
    type_name = "raising_input"
    on_input = staticmethod(raising_input)


class UnknownUnit(Good):
    type_name = "unknown_unit"
    params = {"power": rrscore.Param("horsepowerz", 1e6, "rated power")}


class BadBinding(Good):
    type_name = "bad_binding"
    key_bindings = {"go": "g", "stop": "g"}


def linear_force(d, d_dot, p, s, ds, out):
    for i in range(d.size):
        out[i] = p.k[i] * d[i]


def first_only(d, d_dot, p, s, ds, out):
    out[0] = p.k[0] * d[0]  # the other couplings' entries never written


class Coupler(rrscore.CouplerModel):
    type_name = "c"
    params = {"k": rrscore.Param("N/m", 1e7, "stiffness")}
    force = staticmethod(linear_force)


class FirstOnly(Coupler):
    type_name = "first_only"
    force = staticmethod(first_only)


class OneKink(Coupler):
    type_name = "one_kink"

    def kinks(self):
        return np.zeros(self.count)  # one kink per coupling, but not as a (count, 1) table


def _registry(*classes):
    return load_registry(extra=[plugin_of(*classes)])


def _drive(cls, program=()):
    sc = make_scenario([{"config": car_config(type=cls.type_name)}], registry=_registry(cls),
                       stop={"max_time": 1.0}, driver=list(program))
    return Drive(sc).run()


# -- in a drive -----------------------------------------------------------------------------
def test_a_correct_plugin_passes_every_check():
    assert _drive(Good).summary["stop_reason"] == "max_time"
    check = check_vehicle_type(_registry(Good), "good")
    assert check.ok and check.problems == [] and check.skipped is None


def test_negative_q_r_is_refused_not_made_positive():
    with pytest.raises(PluginError, match=r"vehicle plugin 'negative_qr' \(broken_negative_qr\) "
                                          r"in step\(\) for vehicle 0 .* set a negative q_r "
                                          r"\(resistances are magnitudes\), at t = 0.000 s"):
        _drive(NegativeQr)


def test_a_non_finite_q_a_is_refused_when_it_is_set():
    with pytest.raises(PluginError, match=r"vehicle plugin 'nan_qa' .* in step\(\) .* set a "
                                          r"non-finite q_a, q_r or adhesion factor, at "
                                          r"t = 0.500 s"):
        _drive(NanQa, [{"at_time": 0.5, "press": "go"}])


def test_an_exception_in_on_input_is_named_with_the_plugin_and_the_time():
    with pytest.raises(PluginError, match=r"vehicle plugin 'raising_input' .* in on_input\(\) "
                                          r".* raised ValueError: the go key is stuck, at "
                                          r"t = 0.300 s"):
        _drive(RaisingInput, [{"at_time": 0.3, "press": "go"}])


# -- rrs plugins --check ---------------------------------------------------------------------
def test_check_reports_a_signal_step_never_writes():
    check = check_vehicle_type(_registry(UnwrittenSignal), "unwritten_signal")
    assert check.problems == ["signal 'temperature_K' is declared but step() never wrote "
                              "veh.temperature_K in 1 s of driving"]


def test_check_names_the_negative_q_r_entry():
    problems = check_vehicle_type(_registry(NegativeQr), "negative_qr").problems
    assert "set a negative q_r" in problems[0]
    assert problems[1] == ("q_r[0, 2] (brake torque on axle 2) = -500 is negative: q_r holds "
                           "magnitudes (>= 0) that oppose motion; put driving forces in q_a")


def test_check_presses_each_key_and_names_what_raised_and_what_is_not_finite():
    raising = check_vehicle_type(_registry(RaisingInput), "raising_input").problems
    assert len(raising) == 1 and "in on_input() for vehicle 0" in raising[0]
    assert "raised ValueError: the go key is stuck, at t = 0.250 s" in raising[0]
    nan = check_vehicle_type(_registry(NanQa), "nan_qa").problems
    assert "set a non-finite q_a" in nan[0] and nan[1] == "q_a[0, 1] = nan is not finite"


def test_parameter_with_unknown_unit_is_rejected_at_load():
    with pytest.raises(PluginError, match=r"plugin 'broken_unknown_unit': rrs_vehicle_types: "
                                          r"unknown_unit: parameter 'power' has an unknown unit "
                                          r"'horsepowerz'"):
        _registry(UnknownUnit)


def test_key_bindings_must_name_keys_and_differ():
    assert class_problems(BadBinding) == [
        "key_bindings binds 'stop', which is not one of its keys (go)",
        "key_bindings binds both 'go' and 'stop' to 'g'"]


def test_coupler_parameter_unit_is_checked_too():
    class BadUnit(Coupler):
        params = {"k": rrscore.Param("N/mm^", 1.0, "stiffness")}

    assert class_problems(BadUnit) == [
        "parameter 'k' has an unknown unit 'N/mm^' (expected an SI unit expression such as "
        "'N', 'kg*m^2', 'N/m')"]


def test_coupler_check_passes_a_correct_law_and_catches_entries_left_unwritten():
    assert check_coupler_model(Coupler).ok
    assert check_coupler_model(FirstOnly).problems == [
        "force() left out[1] unwritten or not finite (nan) at d = -0.19 m, d_dot = 0 m/s "
        "(40 of 41 entries)"]


def test_coupler_check_catches_kinks_of_the_wrong_shape():
    assert check_coupler_model(OneKink).problems == [
        "kinks() returned shape (41,) for 41 couplings, expected (41, k)"]


def test_coupler_check_skips_a_model_whose_parameters_need_values():
    table = load_registry().coupler_models["table"]
    check = check_coupler_model(table)
    assert check.skipped == ("not exercised: parameters without a default: deflection, "
                             "loading, unloading")
    assert check.problems == [] and check.runs  # how it runs is still said


BROKEN = '''\
import rrscore


def quiet_step(t, dt, veh):
    for i in range(veh.count):
        veh.q_a[i, 0] = 1e4


class Quiet(rrscore.VehicleModel):
    type_name = "quiet"
    signals = {"hum": "never written"}
    step = staticmethod(quiet_step)


@rrscore.hookimpl
def rrs_vehicle_types():
    return [Quiet]
'''


def test_rrs_plugins_check_reports_each_broken_plugin(tmp_path, capsys):
    (tmp_path / "broken.py").write_text(BROKEN)
    assert main(["plugins", "--check", "--plugins", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "ok    vehicle type simple_loco" in out
    assert ("FAIL  vehicle type quiet  (broken@" in out
            and "signal 'hum' is declared but step() never wrote veh.hum" in out)


def test_rrs_plugins_check_passes_on_the_shipped_plugins(capsys):
    assert main(["plugins", "--check"]) == 0
    out = capsys.readouterr().out
    assert "FAIL" not in out and "ok    coupler model sa3" in out
    assert "skip  coupler model table" in out
    if not UNCOMPILED:  # each function's line, after its plugin's
        assert "ok    vehicle type simple_loco  (vehicles.simple_loco)\n" \
               "      step: compiled by numba\n      rates: compiled by numba\n" \
               "      on_input: compiled by numba\n" in out


# -- compiled or in Python ---------------------------------------------------------------------
def test_adapters_built_from_the_declarations_are_those_a_train_uses():
    reg = load_registry()
    loco, gear = reg.vehicle_types["simple_loco"], reg.coupler_models["spring_damper"]
    sc = make_scenario([{"config": "vehicles/simple_loco.toml"},
                        {"config": car_config(), "count": 2}], registry=reg,
                       coupling={"model": "spring_damper"})
    run = Run(sc)
    b = [batch.cls for batch in run.train.batches].index(loco)
    record = run.train.batches[b].record
    assert vehicle_record(loco).fields == record.fields
    assert adapters_of(loco) == {"step": run.system.adapters[b].step,
                                 "rates": run.system.adapters[b].rates,
                                 "on_input": run.system.adapters[b].input}
    model = run.train.couplings.groups[0][0]
    assert coupler_record(gear).fields == model.record.fields
    assert adapters_of(gear) == {"force": run.system.coupler_adapters[0].force}
    assert adapters_of(rrscore.Tableau) == {}


@needs_numba
def test_the_shipped_plugins_run_compiled():
    reg = load_registry()
    for cls in [*reg.vehicle_types.values(), *reg.coupler_models.values()]:
        for name, adapter in adapters_of(cls).items():
            assert adapter.compiled, f"{cls.type_name}.{name}: {adapter.reason}"
    assert how_it_runs(reg.vehicle_types["level_loco"]) == [
        "step: compiled by numba", "on_input: compiled by numba"]


# A plugin a new user might write: its on_input looks a control up by name, which numba
# cannot compile (getattr with a name known only at run time).
BY_NAME = '''\
import rrscore


def step(t, dt, veh):
    for i in range(veh.count):
        veh.q_a[i, 0] = veh.push[i]


def on_input(veh, i, name, value):
    if name == "more":
        getattr(veh, "push" if value > 0 else name)[i] += 1e4


class ByName(rrscore.VehicleModel):
    type_name = "by_name"
    keys = {"more": "push harder, 10 kN a press"}
    controls = {"push": "body force, N"}
    step = staticmethod(step)
    on_input = staticmethod(on_input)


@rrscore.hookimpl
def rrs_vehicle_types():
    return [ByName]
'''


@needs_numba
def test_a_plugin_numba_cannot_compile_runs_in_python_and_rrs_plugins_v_says_why(tmp_path,
                                                                                  capsys):
    # (written afresh for each run, so numba compiles it from nothing)
    (tmp_path / "by_name.py").write_text(BY_NAME)
    assert main(["plugins", "-v", "--plugins", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    listed = out[out.index("vehicle type by_name"):]
    lines = listed.splitlines()[1:]
    why = ("runs in Python (numba's object mode), as numba cannot compile the plugin's "
           "functions: TypingError: No implementation of function Function(<built-in "
           "function getattr>)")
    assert any(ln.strip().startswith(f"step: {why}") for ln in lines[:8]), listed
    assert any(ln.strip().startswith(f"on_input: {why}") for ln in lines[:8]), listed

    reg = load_registry([tmp_path])
    cls = reg.vehicle_types["by_name"]
    assert not adapters_of(cls)["step"].compiled and "getattr" in adapters_of(cls)["step"].reason
    # ... and it does what it says, in Python: two presses, 20 kN on 100 t (no resistance)
    sc = make_scenario([{"config": car_config(type="by_name", empty_mass="100 t",
                                              payload_mass="0 t", num_axis=2,
                                              wheelset_inertia="1e-6 kg*m^2",
                                              resistance={"formula": "none",
                                                          "starting": False})}],
                       registry=reg, stop={"max_time": 3.0},
                       driver=[{"at_time": 0.0, "press": "more"},
                               {"at_time": 0.0, "release": "more"},
                               {"at_time": 1.0, "press": "more"}])
    result = Drive(sc).run()
    # 10 kN for 1 s, then 20 kN for 2 s: v = (1e4 * 1 + 2e4 * 2) / 1e5
    assert result.summary["final_speed_mps"] == pytest.approx(0.5, rel=1e-6)
    check = check_vehicle_type(reg, "by_name")
    assert check.ok and check.runs[0].startswith(f"step: {why}")


def test_a_plugin_that_compiles_is_said_to(tmp_path, capsys):
    source = BY_NAME.replace('getattr(veh, "push" if value > 0 else name)[i]', "veh.push[i]")
    (tmp_path / "by_index.py").write_text(source.replace("by_name", "by_index"))
    assert main(["plugins", "-v", "--plugins", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    listed = out[out.index("vehicle type by_index"):]
    expected = ("runs in Python (NUMBA_DISABLE_JIT is set: nothing is compiled)"
                if UNCOMPILED else "compiled by numba")
    assert textwrap.indent(f"step: {expected}\non_input: {expected}\n", " " * 6) in listed


HOW_IT_RUNS = """\
import sys

sys.path.insert(0, sys.argv[1])
import by_name_pkg.plugin as plugin  # a module name that stays the same

from rrscore.cli.plugincheck import how_it_runs

print("\\n".join(how_it_runs(plugin.ByName)))
"""


@needs_numba
def test_editing_one_function_of_a_plugin_leaves_it_compiled(tmp_path):
    package = tmp_path / "by_name_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    compiles = BY_NAME.replace('getattr(veh, "push" if value > 0 else name)[i]',
                               "veh.push[i]")
    script = tmp_path / "how.py"
    script.write_text(HOW_IT_RUNS)
    # rrscore's generated adapters in a cache of their own: compiled afresh, as a plugin's
    # new source is
    env = {**os.environ, "RRS_CACHE_DIR": str(tmp_path / "cache")}
    said = []
    for source in (compiles, compiles.replace("+= 1e4", "+= 2e4")):  # on_input edited
        (package / "plugin.py").write_text(source)
        done = subprocess.run([sys.executable, str(script), str(tmp_path)],
                              capture_output=True, text=True, timeout=600, env=env)
        assert done.returncode == 0, done.stderr
        said.append(done.stdout)
    assert said[0] == "step: compiled by numba\non_input: compiled by numba\n"
    assert said[1] == said[0], said[1]
