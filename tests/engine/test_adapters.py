"""The adapters rrscore generates for plugins (rrscore/engine/adapters.py): an adapter's
name changes with any code its plugin's functions can reach, so numba's cache, which
keys a compiled function by its own file, never runs a plugin's old helper."""

from __future__ import annotations

import importlib
import sys

import pytest

from rrscore.engine.adapters import source_behind

HELPER = '''
from rrscore import kernel


@kernel(inline=True)
def pull(level, force):
    return level * force
'''

PLUGIN = '''
import numpy as np

import {package}.helper as helper_module
from {package}.helper import pull


def step(t, dt, veh):
    for i in range(veh.count):
        veh.q_a[i, 1] = pull(veh.level[i], veh.force[i]) + np.sqrt(helper_module.ONE)


def alone(t, dt, veh):
    return 0
'''


@pytest.fixture
def plugin_package(tmp_path, monkeypatch):
    """A plugin package on the path (its step calls a kernel of another module), and a
    function that edits its helper module and imports both again."""
    package = f"adapterplugin_{tmp_path.name.replace('-', '_')}"
    root = tmp_path / package
    root.mkdir()
    (root / "__init__.py").write_text("")
    (root / "helper.py").write_text(HELPER + "\nONE = 1.0\n")
    (root / "plugin.py").write_text(PLUGIN.format(package=package))
    monkeypatch.syspath_prepend(str(tmp_path))

    def load(helper_text: str | None = None):
        if helper_text is not None:
            (root / "helper.py").write_text(helper_text)
        for name in [n for n in sys.modules if n.startswith(package)]:
            del sys.modules[name]
        importlib.invalidate_caches()
        return importlib.import_module(f"{package}.plugin")

    yield load
    for name in [n for n in sys.modules if n.startswith(package)]:
        del sys.modules[name]


def test_an_adapters_source_hash_follows_the_helpers_its_plugin_calls(plugin_package):
    plugin = plugin_package()
    before = source_behind([plugin.step])
    assert "def pull(level, force)" in before and "def step(t, dt, veh)" in before
    assert source_behind([plugin.step]) == before  # the same code: the same adapter
    edited = source_behind([plugin_package(HELPER.replace("level * force",
                                                          "0.5 * level * force")
                                           + "\nONE = 1.0\n").step])
    assert edited != before
    # a module the step reaches through an attribute counts too
    constant = plugin_package(HELPER + "\nONE = 2.0\n")
    assert source_behind([constant.step]) not in (before, edited)


def test_numpy_and_the_standard_library_are_not_hashed_into_an_adapter(plugin_package):
    plugin = plugin_package()
    behind = source_behind([plugin.step])
    assert "numpy" not in [part for part in behind.split("\0")[::2]]
    assert set(behind.split("\0")[::2]) == {plugin.__name__, plugin.__name__.replace(
        ".plugin", ".helper")}
