"""The plugin API reference: generated from docstrings, up to date, and complete (an
undocumented hook argument, attribute or method fails)."""

from __future__ import annotations

import types

import numpy as np

import rrscore
from rrscore import apidoc, hookspecs
from rrscore.cli.apidoc import DOC_FILE, generate, hooks, public_members, undocumented


def test_every_hook_attribute_and_method_of_the_plugin_api_is_documented():
    assert undocumented() == []


def test_docs_plugin_api_is_up_to_date():
    assert DOC_FILE.read_text(encoding="utf-8") == generate(), (
        "docs/plugin-api.md is stale: run `python -m rrscore.apidoc --write`")


def test_reference_covers_every_hook_class_and_the_control_step():
    text = generate()
    for f in hooks():
        assert f"### `{f.__name__}(" in text
    assert [f.__name__ for f in hooks()] == [
        "rrs_vehicle_types", "rrs_coupler_models", "rrs_solvers", "rrs_drive_start",
        "rrs_sample", "rrs_sample_rows", "rrs_event", "rrs_drive_end"]
    for cls in apidoc.CLASSES:
        assert f"### `{cls.__module__}.{cls.__name__}`" in text
    assert "## A control step\n\nEach control step: check the stop conditions" in text
    assert "``Q_a`` (``(n, k + 1)``; N in column 0, N*m in columns 1..k)" in text


def test_instance_attributes_set_by_the_constructor_are_found():
    attrs, methods = public_members(rrscore.VehicleModel)
    assert {"Q_a", "Q_r", "omega", "adhesion_factor", "out", "mass", "keys"} <= set(attrs)
    assert {"step", "setup", "traction_force"} <= set(methods)
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
    class Model(rrscore.VehicleModel):
        """A model; it documents ``gear`` only."""

        gear = 1
        ratio = 2.0

        def __init__(self, *args):
            super().__init__(*args)
            self.torque_map = np.zeros(self.count)

        def shift(self):
            pass

    problems = undocumented(hookspecs, (Model,))
    assert "Model.ratio: attribute not named in the class docstring" in problems
    assert "Model.torque_map: attribute not named in the class docstring" in problems
    assert "Model.shift: method without a docstring" in problems
    assert not any("Model.gear" in p for p in problems)
