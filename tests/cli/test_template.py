"""`rrs new`: the generated plugin package installs, passes its own tests (written with
rrscore's fixtures) and is listed by `rrs plugins`; its plugin is written in the one
form of the plugin API, runs compiled, and drives as it does uncompiled."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from rrscore import RrsError
from rrscore.cli.main import main
from rrscore.cli.plugincheck import adapters_of
from rrscore.cli.template import KINDS, names, render
from rrscore.jit import UNCOMPILED

PY = sys.executable
#: Names of the plugin API before the restructuring: a second coding of the plugin's
#: functions (kernels), arrays on the instance, methods on it (a coupler model keeps its
#: record in ``self.p`` and its Python-side methods: setup, free_range, kinks).
OLD_API = ("step_kernel", "step_fields", "control_kernel", "force_kernel", "set_control",
           "state_rates", "control_ranges", "Q_a", "Q_r", "self.out", "on_key", "key_down",
           "def force(self", "def step(self", "def rates(self")
OLD_VEHICLE_API = ("self.p.", "def setup(self")


def _run(*args, cwd=None, env=None):
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=600, env=env)


@pytest.mark.parametrize(("kind", "name", "provides"), [
    ("vehicle", "tmpl_loco", "vehicle_types"),
    ("coupler", "tmpl_coupler", "coupler_models"),
])
def test_generated_package_installs_passes_its_tests_and_is_listed(tmp_path, capsys, kind,
                                                                   name, provides):
    dest = tmp_path / names(name)["dist"]
    assert main(["new", kind, name, "--dir", str(dest)]) == 0
    assert "pip install -e" in capsys.readouterr().out
    dist = names(name)["dist"]
    # installed into a directory of its own, put on the path of the commands that use it:
    # the environment running the suite (and the other tests, maybe in parallel) never
    # sees the package
    site = tmp_path / "site"
    install = _run(PY, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                   "--target", str(site), str(dest))
    assert install.returncode == 0, install.stderr
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(site), *filter(None, [os.environ.get("PYTHONPATH")])])}
    tests = _run(PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=dest, env=env)
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert " passed" in tests.stdout and "failed" not in tests.stdout
    assert "skipped" not in tests.stdout  # (its compiled test skips without numba)
    listed = _run(PY, "-m", "rrscore.cli.main", "plugins", "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    plugin = {p["name"]: p for p in json.loads(listed.stdout)}[name]
    assert plugin["provides"] == {provides: [name]}
    assert f"({dist} 0.1.0)" in plugin["source"]
    verbose = _run(PY, "-m", "rrscore.cli.main", "plugins", "-v", env=env)
    assert verbose.returncode == 0, verbose.stderr
    own = verbose.stdout[verbose.stdout.index(f"{name}  (entry point"):]
    functions = ("step", "on_input") if kind == "vehicle" else ("force",)
    for function in functions:
        assert f"      {function}: compiled by numba\n" in own
    lint = _run(PY, "-m", "ruff", "check", "--isolated", "--select", "E,F,W,I,B,UP",
                "--line-length", "100", ".", cwd=dest)
    assert lint.returncode == 0, lint.stdout
    assert name not in _run(PY, "-m", "rrscore.cli.main", "plugins").stdout


def test_template_documents_params_keys_controls_and_signals(tmp_path):
    files = render("vehicle", "doc_loco", tmp_path / "pkg")
    plugin = next(p for p in files if p.name == "plugin.py").read_text()
    for word in ("params = {", "keys = {", "controls = {", "signals = {", "key_bindings",
                 "def step(t, dt, veh):", "def on_input(veh, i, name, value):",
                 "step = staticmethod(step)", "@rrscore.law"):
        assert word in plugin
    assert "class DocLoco(rrscore.VehicleModel)" in plugin
    assert "rrs_doc_loco/plugin.py" in {f"{p.parent.name}/{p.name}" for p in files}


@pytest.mark.parametrize("kind", KINDS)
def test_the_template_teaches_only_the_one_form(tmp_path, kind):
    for path in render(kind, "one_form", tmp_path / kind):
        text = path.read_text()
        for old in OLD_API + (OLD_VEHICLE_API if kind == "vehicle" else ()):
            assert old not in text, f"{path.name} mentions {old!r}"


@pytest.mark.skipif(UNCOMPILED, reason="NUMBA_DISABLE_JIT: nothing is compiled")
@pytest.mark.parametrize(("kind", "functions"), [("vehicle", {"step", "on_input"}),
                                                 ("coupler", {"force"})])
def test_a_plugin_from_the_template_runs_compiled(tmp_path, monkeypatch, kind, functions):
    name = f"jit_{kind}"
    render(kind, name, tmp_path)  # (a new file: numba compiles it from nothing)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module(f"{names(name)['package']}.plugin")
    cls = getattr(module, names(name)["Class"])
    adapters = adapters_of(cls)
    assert set(adapters) == functions
    for function, adapter in adapters.items():
        assert adapter.compiled, f"{function}: {adapter.reason}"


# A drive of the template's plugin, printed as JSON: run in a subprocess, compiled and with
# NUMBA_DISABLE_JIT=1 (everything, rrscore's engine too, in Python).
DRIVE = textwrap.dedent("""\
    import importlib
    import json
    import sys

    from rrscore import load_registry
    from rrscore.cli.plugincheck import adapters_of, vehicle_config
    from rrscore.jit import UNCOMPILED
    from rrscore.model.config import Context
    from rrscore.run.drive import Drive
    from rrscore.run.scenario import scenario_from_table
    from rrscore.testing import program_actions

    name, package = sys.argv[1], sys.argv[2]
    module = importlib.import_module(package + ".plugin")
    registry = load_registry(extra=[module], use_entry_points=False)
    cls = registry.vehicle_types[name]
    config = vehicle_config(name, {"power": "0.5 MW"}, empty_mass="90 t")
    program = [(0, "press power_up"), (1.5, "release power_up"), (3, "press brake")]
    table = {"train": {"vehicles": [{"config": config}]},
             "route": {"elements": [{"length": "10 km"}]},
             "driver": program_actions(program),
             "stop": {"max_time": "4 s"},
             "output": {"sample_interval": "0.1 s", "vehicles": [0],
                        "vehicle_signals": ["force_N"]}}
    scenario = scenario_from_table(table, Context("<template drive>", "scenario"), registry)
    result = Drive(scenario).run()
    print(json.dumps({
        "uncompiled": UNCOMPILED,
        "compiled": all(a.compiled for a in adapters_of(cls).values()),
        **{k: result.series[k].tolist() for k in ("time_s", "position_m", "v0_force_N")}}))
""")


def _template_drive(tmp_path, name: str, uncompiled: bool) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(tmp_path), *filter(None, [os.environ.get("PYTHONPATH")])])}
    env.pop("NUMBA_DISABLE_JIT", None)
    if uncompiled:
        env["NUMBA_DISABLE_JIT"] = "1"
    done = _run(PY, str(tmp_path / "drive.py"), name, names(name)["package"], env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_template_plugin_drives_the_same_compiled_and_uncompiled(tmp_path):
    # the power key held for 1.5 s (traction level 0.75, past the corner speed power /
    # max_force = 2 m/s onto the constant-power curve), then the brake key with traction on
    name = "same_loco"
    render("vehicle", name, tmp_path)
    (tmp_path / "drive.py").write_text(DRIVE)
    compiled = _template_drive(tmp_path, name, uncompiled=False)
    python = _template_drive(tmp_path, name, uncompiled=True)
    assert not compiled["uncompiled"] and compiled["compiled"]  # the plugin's code compiled
    assert python["uncompiled"]
    np.testing.assert_allclose(compiled["time_s"], python["time_s"], rtol=0, atol=1e-9)
    assert len(compiled["time_s"]) == 41
    force = np.array(compiled["v0_force_N"])
    assert force.max() > 150e3 and force[-1] > 0  # both regimes of the curve, and braking
    np.testing.assert_allclose(compiled["position_m"], python["position_m"], rtol=0, atol=1e-3)
    np.testing.assert_allclose(compiled["v0_force_N"], python["v0_force_N"], rtol=5e-3)
    assert np.ptp(compiled["position_m"]) > 5.0  # it moved


def test_bad_names_and_non_empty_directories_are_refused(tmp_path):
    with pytest.raises(RrsError, match="expected lower-case letters"):
        render("vehicle", "My-Loco", tmp_path / "a")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "x").write_text("")
    with pytest.raises(RrsError, match="exists and is not empty"):
        render("vehicle", "ok_name", tmp_path / "b")
