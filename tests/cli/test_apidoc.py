"""The plugin API reference: generated from docstrings, up to date, complete (an
undocumented hook argument, attribute or method fails), and teaching only the one form
of the plugin API."""

from __future__ import annotations

import re
import subprocess
import sys
import types

import numpy as np

import rrscore
from rrscore.cli import apidoc
from rrscore.cli.apidoc import DOC_FILE, generate, hooks, public_members, undocumented
from rrscore.model import hookspecs

#: What the class docstrings of the plugin API do not name yet (rrscore.model.couplers:
#: CouplerModel's ``record``, which the engine reads): listed here so that a new gap, or
#: this one closed, fails the test.
KNOWN_GAPS = ["CouplerModel.record: attribute not named in the class docstring"]


def test_every_hook_attribute_and_method_of_the_plugin_api_is_documented():
    assert undocumented() == KNOWN_GAPS


def test_docs_plugin_api_is_up_to_date():
    assert DOC_FILE.read_text(encoding="utf-8") == generate(), (
        f"docs/plugin-api.md is stale: run `{apidoc.COMMAND}`")


def test_the_command_it_names_writes_the_reference(tmp_path):
    assert apidoc.COMMAND == "python -m rrscore.cli.apidoc --write"
    assert f"Generated from the docstrings by `{apidoc.COMMAND}`" in generate()
    shown = subprocess.run([sys.executable, "-m", "rrscore.cli.apidoc"], capture_output=True,
                           text=True, timeout=300)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == generate()


def test_reference_covers_every_hook_class_and_the_control_step():
    text = generate()
    for f in hooks():
        assert f"### `{f.__name__}(" in text
    assert [f.__name__ for f in hooks()] == [
        "rrs_vehicle_types", "rrs_coupler_models", "rrs_solvers", "rrs_drive_start",
        "rrs_sample", "rrs_sample_rows", "rrs_event", "rrs_drive_end"]
    for cls in apidoc.CLASSES:
        assert f"### `{cls.__module__}.{cls.__name__}`" in text
    assert "### `rrscore.engine.tableau.Tableau`" in text
    assert "## A control step\n\nEach control step: check the stop conditions" in text
    # the plugin's functions, on the record
    assert "* ``step(t, dt, veh)``: the control step" in text
    assert "    force(d, d_dot, p, s, ds, out)" in text
    assert "### `rrscore.law(" in text


def test_the_reference_teaches_only_the_one_form():
    text = generate()
    for old in ("step_kernel", "control_kernel", "force_kernel", "state_rates",
                "set_control", "step_fields", "Q_a", "Q_r", "self.out", "on_key",
                "key_down", "control_ranges", "rrscore.engine.tableau.Solver"):
        assert old not in text, old


def test_plugin_functions_and_declarations_are_the_vehicle_types_attributes():
    attrs, methods = public_members(rrscore.VehicleModel)
    assert {"params", "controls", "keys", "key_bindings", "fields", "signals", "states",
            "step", "rates", "on_input", "initial", "control_step"} <= set(attrs)
    assert methods == []  # a declaration: no methods, no instance
    attrs, methods = public_members(rrscore.CouplerModel)
    assert {"p", "count", "params", "fields", "states", "force"} <= set(attrs)
    assert {"setup", "free_range", "kinks", "initial_state"} <= set(methods)
    assert "_keys_down" not in attrs


def test_an_undocumented_hook_argument_is_reported():
    spec = hookspecs.hookspec

    def rrs_new_hook(drive, speed):
        """Called sometimes. :param drive: the drive."""

    def rrs_silent(drive):
        pass

    module = types.ModuleType("fake_hookspecs")
    module.rrs_new_hook, module.rrs_silent = spec(rrs_new_hook), spec(rrs_silent)
    assert undocumented(module, ()) == [
        "hook rrs_new_hook: argument 'speed' not documented",
        "hook rrs_silent: no docstring", "hook rrs_silent: argument 'drive' not documented"]


def test_an_undocumented_attribute_or_method_is_reported():
    class Model(rrscore.CouplerModel):
        """A model; it documents ``gear`` and ``force(d, d_dot, p, s, ds, out)`` only,
        and of its base's names ``type_name``, ``description``, ``params``, ``fields``,
        ``states``, ``p``, ``count`` and ``record``."""

        gear = 1
        ratio = 2.0

        def __init__(self, *args):
            super().__init__(*args)
            self.torque_map = np.zeros(self.count)

        def shift(self):
            pass

    problems = undocumented(hookspecs, (Model,))
    assert sorted(problems) == ["Model.ratio: attribute not named in the class docstring",
                                "Model.shift: method without a docstring",
                                "Model.torque_map: attribute not named in the class docstring"]

    class Loco(rrscore.VehicleModel):
        """Documents ``type_name`` and ``step(t, dt, veh)`` only."""

    problems = undocumented(hookspecs, (Loco,))
    assert "Loco.on_input: attribute not named in the class docstring" in problems
    assert not any(p.startswith(("Loco.step:", "Loco.type_name:")) for p in problems)


def test_the_reference_names_no_module_or_class_that_is_gone():
    text = generate()
    gone = [name for name in ("rrscore.Solver", "rrscore.pluginmanager", "rrscore.freecars",
                              "rrscore.outputs", "rrscore.lifecycle", "rrscore.apidoc")
            if re.search(rf"{re.escape(name)}\b", text)]
    assert gone == []
