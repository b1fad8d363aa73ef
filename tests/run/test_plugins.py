"""Plugins from directories (loose files, packages, scenario plugin_dirs, --plugins,
RRS_PLUGIN_PATH), clashes and import failures, and plugins that fail during a drive."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from bad_inputs import LEVEL, LOCO, REPO, toml_path

from rrscore import Drive, PluginError, load_registry, load_scenario
from rrscore.run.plugins import PATH_ENV

PLUGIN = '''\
import math

import rrscore


def step(t, dt, veh):
{failure}    for i in range(veh.count):
        veh.q_a[i, 0] = veh.push[i]
{nan}

class {cls}(rrscore.VehicleModel):
    """Test vehicle {type_name}."""

    type_name = "{type_name}"
    description = "test vehicle {type_name}"
    params = {{"push": rrscore.Param("N", 20e3, "constant body force")}}
    step = staticmethod(step)


@rrscore.hookimpl
def rrs_vehicle_types():
    return [{cls}]
'''

#: What the test vehicle's control step does from t = 1 s on: raise, or set a NaN force.
FAILURES = {
    "value_error": ("if t >= 1.0 - 1e-6:\n    raise ValueError('wheel fell off')", ""),
    "keyboard_interrupt": ("if t >= 1.0 - 1e-6:\n    raise KeyboardInterrupt", ""),
    "system_exit": ("if t >= 1.0 - 1e-6:\n    raise SystemExit(3)", ""),
    "nan": ("", "if t >= 1.0 - 1e-6:\n    for i in range(veh.count):\n"
                "        veh.q_a[i, 0] = math.nan"),
}


def plugin_source(type_name: str, failure: tuple[str, str] = ("", "")) -> str:
    cls = "".join(part.title() for part in type_name.split("_"))
    before, after = (textwrap.indent(f, " " * 4) + "\n" if f else "" for f in failure)
    return PLUGIN.format(cls=cls, type_name=type_name, failure=before, nan=after)


def write_plugin(directory: Path, filename: str, type_name: str,
                 failure: tuple[str, str] = ("", "")) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / filename
    path.write_text(plugin_source(type_name, failure))
    return path


def write_vehicle(path: Path, type_name: str) -> Path:
    path.write_text(f'[vehicle]\ntype = "{type_name}"\nempty_mass = "20 t"\nlength = "15 m"\n'
                    "num_axis = 2\n")
    return path


def write_scenario(path: Path, vehicles: str, extra: str = "", max_time: str = "3 s") -> Path:
    """A scenario on the shipped level route; ``vehicles`` is [[scenario.train.vehicles]] text."""
    path.write_text(
        "[scenario]\n"
        'name = "plugin test"\n'
        f"route = {toml_path(LEVEL)}\n"
        f"{extra}"
        f"[scenario.stop]\nmax_time = \"{max_time}\"\n"
        '[scenario.output]\nsample_interval = "0.25 s"\n'
        f"{vehicles}"
    )
    return path


def loco_and_cars(car_config: str, count: int = 3) -> str:
    """Shipped loco leading ``count`` vehicles of ``car_config`` (a TOML value)."""
    return (f"[[scenario.train.vehicles]]\nconfig = {toml_path(LOCO)}\n"
            f"[[scenario.train.vehicles]]\nconfig = {car_config}\ncount = {count}\n")


def rrs(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k != PATH_ENV}
    return subprocess.run([sys.executable, "-m", "rrscore.cli.main", *map(str, args)], cwd=REPO,
                          env={**base, **(env or {})}, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)


@pytest.fixture(autouse=True)
def no_plugin_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PATH_ENV, raising=False)


# ----------------------------------------------------------- finding plugins


def test_loose_py_file_in_plugin_dir_provides_vehicle_type(tmp_path: Path) -> None:
    path = write_plugin(tmp_path / "plugins", "tram.py", "tram")
    registry = load_registry([tmp_path / "plugins"])
    cls = registry.vehicle_types["tram"]
    assert cls.type_name == "tram"
    info = next(p for p in registry.plugins if "tram" in p.provides.get("vehicle_types", []))
    assert info.source == str(path)
    assert registry.origin[("vehicle_types", "tram")] == info.name
    # The shipped components are still there.
    assert {"simple_loco", "freight_car"} <= set(registry.vehicle_types)


def test_plugin_dir_skips_private_and_non_python_files(tmp_path: Path) -> None:
    d = tmp_path / "plugins"
    write_plugin(d, "_helper.py", "hidden_one")
    write_plugin(d, "notes.txt", "hidden_two")
    (d / "empty_folder").mkdir()
    registry = load_registry([d])
    assert "hidden_one" not in registry.vehicle_types
    assert "hidden_two" not in registry.vehicle_types


def test_package_folder_plugin_with_relative_import_is_found(tmp_path: Path) -> None:
    pkg = tmp_path / "plugins" / "metro"
    pkg.mkdir(parents=True)
    source = plugin_source("metro_car")
    model, hook = source.split("@rrscore.hookimpl")
    (pkg / "model.py").write_text(model)
    (pkg / "__init__.py").write_text("import rrscore\n\nfrom .model import MetroCar\n\n\n"
                                     "@rrscore.hookimpl" + hook)
    registry = load_registry([tmp_path / "plugins"])
    assert registry.vehicle_types["metro_car"].__name__ == "MetroCar"
    info = next(p for p in registry.plugins if p.provides.get("vehicle_types") == ["metro_car"])
    assert info.source == str(pkg)


def test_plugin_dir_from_environment_variable(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    write_plugin(tmp_path / "a", "tram.py", "tram")
    write_plugin(tmp_path / "b", "bus.py", "rail_bus")
    monkeypatch.setenv(PATH_ENV, os.pathsep.join([str(tmp_path / "a"), str(tmp_path / "b")]))
    registry = load_registry()
    assert {"tram", "rail_bus"} <= set(registry.vehicle_types)


def test_cli_plugins_option_lists_dir_plugin_with_its_file_path(tmp_path: Path) -> None:
    path = write_plugin(tmp_path / "plugins", "tram.py", "tram")
    proc = rrs("plugins", "--plugins", tmp_path / "plugins")
    assert proc.returncode == 0, proc.stderr
    assert f"({path})" in proc.stdout
    assert "vehicle type tram: test vehicle tram" in proc.stdout
    assert "vehicle type simple_loco" in proc.stdout

    data = json.loads(rrs("plugins", "--json", "--plugins", tmp_path / "plugins").stdout)
    tram = next(p for p in data if p["provides"].get("vehicle_types") == ["tram"])
    assert tram["source"] == str(path)


def test_scenario_plugin_dirs_relative_to_scenario_file(tmp_path: Path) -> None:
    write_plugin(tmp_path / "my_plugins", "tram.py", "tram")
    write_vehicle(tmp_path / "tram.toml", "tram")
    scenario = write_scenario(tmp_path / "sc.toml", loco_and_cars('"tram.toml"', 1),
                              extra='plugin_dirs = ["my_plugins"]\n', max_time="1 s")
    sc = load_scenario(scenario)
    assert sc.config["plugin_dirs"] == [str((tmp_path / "my_plugins").resolve())]
    assert [b.type_name for b in sc.train.batches] == ["simple_loco", "tram"]
    # The resolved form runs again from anywhere: the plugin dir is absolute there (outside
    # the resolved file's own folder, so allowed explicitly).
    sc.write_resolved(tmp_path / "elsewhere.toml")
    (tmp_path / "sub").mkdir()
    (tmp_path / "elsewhere.toml").rename(tmp_path / "sub" / "resolved.toml")
    again = load_scenario(tmp_path / "sub" / "resolved.toml", allow_plugin_dirs=True)
    assert again.resolved() == sc.resolved()
    result = Drive(again).run()
    assert result.summary["stop_reason"] == "max_time"
    assert result.summary["distance_m"] > 0


def test_cli_validate_and_drive_find_scenario_plugin_dirs(tmp_path: Path) -> None:
    write_plugin(tmp_path / "my_plugins", "tram.py", "tram")
    scenario = write_scenario(
        tmp_path / "sc.toml",
        "[[scenario.train.vehicles]]\nconfig = { vehicle = { type = \"tram\", "
        'empty_mass = "20 t", length = "15 m", num_axis = 2 } }\n',
        extra='plugin_dirs = ["my_plugins"]\n', max_time="1 s")
    proc = rrs("validate", "--allow-plugin-dirs", scenario)  # validate imports only if allowed
    assert proc.returncode == 0, proc.stderr
    assert "ok, scenario 'plugin test': 1 vehicles, 20 t" in proc.stdout
    proc = rrs("drive", scenario, "--out", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    # 20 kN on 20 t, less the starting resistance, for one second.
    assert 0 < summary["final_speed_mps"] < 1.0


def test_same_plugin_dir_named_twice_is_loaded_once(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A scenario's plugin dir also given on the command line or in RRS_PLUGIN_PATH,
    spelled differently (relative, trailing '/..'), is the same plugin, not a clash."""
    d = tmp_path / "plugins"
    write_plugin(d, "tram.py", "tram")
    monkeypatch.chdir(tmp_path)
    (d / "sub").mkdir()
    registry = load_registry([d, "plugins", d / "sub" / ".."])
    assert "tram" in registry.vehicle_types
    assert sum("tram" in p.provides.get("vehicle_types", []) for p in registry.plugins) == 1

    monkeypatch.setenv(PATH_ENV, "plugins")
    write_vehicle(tmp_path / "tram.toml", "tram")
    scenario = write_scenario(tmp_path / "sc.toml", loco_and_cars('"tram.toml"', 1),
                              extra=f"plugin_dirs = [{toml_path(d)}]\n")
    sc = load_scenario(scenario, plugin_dirs=["./plugins"])
    assert sc.train.batches[1].type_name == "tram"


# ------------------------------------------------------ plugins that are broken


def test_two_plugins_providing_same_type_name_is_an_error_naming_both(tmp_path: Path) -> None:
    d = tmp_path / "plugins"
    write_plugin(d, "alpha.py", "tram")
    write_plugin(d, "beta.py", "tram")
    with pytest.raises(PluginError) as info:
        load_registry([d])
    message = str(info.value)
    assert "alpha@" in message
    assert "beta@" in message
    assert "'tram'" in message


def test_dir_plugin_clashing_with_shipped_type_is_an_error(tmp_path: Path) -> None:
    write_plugin(tmp_path / "plugins", "my_loco.py", "simple_loco")
    with pytest.raises(PluginError) as info:
        load_registry([tmp_path / "plugins"])
    message = str(info.value)
    assert "'simple_loco'" in message
    assert "my_loco@" in message


def test_plugin_file_that_fails_to_import_names_the_file(tmp_path: Path) -> None:
    d = tmp_path / "plugins"
    d.mkdir()
    (d / "broken.py").write_text("import rrscore\nraise RuntimeError('no such motor')\n")
    with pytest.raises(PluginError) as info:
        load_registry([d])
    message = str(info.value)
    assert str(d / "broken.py") in message
    assert "import failed" in message
    assert "RuntimeError: no such motor" in message
    assert isinstance(info.value.__cause__, RuntimeError)


def test_plugin_file_with_syntax_error_names_the_file(tmp_path: Path) -> None:
    d = tmp_path / "plugins"
    d.mkdir()
    (d / "typo.py").write_text("def rrs_vehicle_types(:\n")
    with pytest.raises(PluginError, match=r"typo\.py: import failed: SyntaxError"):
        load_registry([d])


def test_cli_reports_plugin_import_failure_without_traceback(tmp_path: Path) -> None:
    d = tmp_path / "plugins"
    d.mkdir()
    (d / "broken.py").write_text("raise ImportError('needs libfoo')\n")
    proc = rrs("plugins", "--plugins", d)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert f"plugin {d / 'broken.py'}: import failed: ImportError: needs libfoo" in proc.stderr


def test_hook_returning_non_vehicle_class_is_an_error(tmp_path: Path) -> None:
    d = tmp_path / "plugins"
    d.mkdir()
    (d / "odd.py").write_text("import rrscore\n\n\n@rrscore.hookimpl\n"
                              "def rrs_vehicle_types():\n    return [dict]\n")
    with pytest.raises(PluginError, match="odd@.*not a subclass of rrscore.VehicleModel"):
        load_registry([d])


# ------------------------------------------------------- failures during a drive


def failing_scenario(tmp_path: Path, failure: str) -> Path:
    """Loco + three cars of a plugin type that fails at t = 1 s; the cars' config is a file."""
    write_plugin(tmp_path / "plugins", "flaky.py", "flaky_car", FAILURES[failure])
    write_vehicle(tmp_path / "flaky_car.toml", "flaky_car")
    return write_scenario(tmp_path / "flaky_scenario.toml", loco_and_cars('"flaky_car.toml"'),
                          extra='plugin_dirs = ["plugins"]\n')


def read_timeseries(path: Path) -> tuple[list[str], list[list[float]]]:
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    return rows[0], [[float(v) for v in row] for row in rows[1:]]


def test_plugin_exception_in_step_is_plugin_error_naming_type_vehicles_source_time(
        tmp_path: Path) -> None:
    sc = load_scenario(failing_scenario(tmp_path, "value_error"))
    with pytest.raises(PluginError) as info:
        Drive(sc).run()
    message = str(info.value)
    assert "vehicle plugin 'flaky_car'" in message
    assert "flaky@" in message  # the plugin that provides the type
    assert "ValueError: wheel fell off" in message
    assert "vehicles 1-3" in message
    assert "flaky_car.toml" in message  # the vehicle config the vehicles come from
    assert "t = 1.000 s" in message
    assert isinstance(info.value.__cause__, ValueError)


def test_plugin_error_keeps_timeseries_and_writes_summary_with_error(tmp_path: Path) -> None:
    sc = load_scenario(failing_scenario(tmp_path, "value_error"))
    out = tmp_path / "out"
    with pytest.raises(PluginError) as info:
        Drive(sc).run(out)
    header, rows = read_timeseries(out / "timeseries.csv")
    assert header[0] == "time_s"
    times = [row[0] for row in rows]
    assert times == pytest.approx([0.0, 0.25, 0.5, 0.75, 1.0])
    summary = json.loads((out / "summary.json").read_text())
    assert summary["stop_reason"] == "error"
    assert summary["error"] == str(info.value)
    assert summary["sim_time_s"] == pytest.approx(1.0)
    assert (out / "scenario.resolved.toml").is_file()
    assert (out / "speed.png").read_bytes()[:4] == b"\x89PNG"


def test_cli_drive_with_failing_plugin_exits_1_and_keeps_outputs(tmp_path: Path) -> None:
    scenario = failing_scenario(tmp_path, "value_error")
    proc = rrs("drive", scenario, "--out", tmp_path / "out")
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert "vehicle plugin 'flaky_car'" in proc.stderr
    assert "t = 1.000 s" in proc.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["stop_reason"] == "error"
    _, rows = read_timeseries(tmp_path / "out" / "timeseries.csv")
    assert len(rows) == 5


def test_a_plugin_calling_sys_exit_is_a_plugin_error_and_the_outputs_are_kept(
        tmp_path: Path) -> None:
    proc = rrs("drive", failing_scenario(tmp_path, "system_exit"), "--out", tmp_path / "out")
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "vehicle plugin 'flaky_car'" in proc.stderr and "SystemExit" in proc.stderr
    assert "t = 1.000 s" in proc.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["stop_reason"] == "error" and "SystemExit" in summary["error"]
    _, rows = read_timeseries(tmp_path / "out" / "timeseries.csv")
    assert len(rows) == 5


def test_keyboard_interrupt_in_plugin_is_reraised_and_results_are_kept(tmp_path: Path) -> None:
    sc = load_scenario(failing_scenario(tmp_path, "keyboard_interrupt"))
    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):
        Drive(sc).run(out)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["stop_reason"] == "interrupted"
    assert "error" not in summary
    assert summary["sim_time_s"] == pytest.approx(1.0)
    _, rows = read_timeseries(out / "timeseries.csv")
    assert len(rows) == 5
    assert rows[-1][0] == pytest.approx(1.0)


def test_cli_drive_interrupted_exits_130_and_says_results_were_kept(tmp_path: Path) -> None:
    scenario = failing_scenario(tmp_path, "keyboard_interrupt")
    proc = rrs("drive", scenario, "--out", tmp_path / "out")
    assert proc.returncode == 130
    assert "Traceback" not in proc.stderr
    assert "interrupted; results so far were kept" in proc.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["stop_reason"] == "interrupted"


def test_plugin_setting_nan_force_is_plugin_error(tmp_path: Path) -> None:
    sc = load_scenario(failing_scenario(tmp_path, "nan"))
    out = tmp_path / "out"
    with pytest.raises(PluginError) as info:
        Drive(sc).run(out)
    message = str(info.value)
    assert "vehicle plugin 'flaky_car'" in message
    assert "set a non-finite q_a, q_r or adhesion factor" in message
    assert "vehicles 1-3" in message
    assert "flaky_car.toml" in message
    assert "t = 1.000 s" in message
    assert json.loads((out / "summary.json").read_text())["stop_reason"] == "error"


def test_readme_output_plugin_adds_a_file_and_a_summary_key(tmp_path: Path) -> None:
    readme = (REPO / "README.md").read_text()
    part = readme[readme.index("**Outputs of your own.**"):]
    code = part[part.index("```python") + len("```python"):]
    code = code[:code.index("```")]
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "distance.py").write_text(code)
    scenario = write_scenario(tmp_path / "scenario.toml", f"[[scenario.train.vehicles]]\n"
                              f"config = {toml_path(LOCO)}\n",
                              extra='[[scenario.driver]]\nat_time = 0.0\n'
                                    'set = { traction_level = 1.0 }\n')
    r = Drive(load_scenario(scenario, plugin_dirs=[plugins])).run(tmp_path / "out")
    assert r.summary["distance_km"] == pytest.approx(r.summary["distance_m"] / 1000)
    text = (tmp_path / "out" / "distance.txt").read_text()
    assert text == f"{r.summary['distance_m']:.1f} m\n"
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["distance_km"] == pytest.approx(r.summary["distance_km"])


def test_builtin_plugins_are_there_without_entry_points() -> None:
    reg = load_registry(use_entry_points=False)
    assert {"simple_loco", "freight_car"} <= set(reg.vehicle_types)
    assert {"spring_damper", "sa3", "table", "linear"} <= set(reg.coupler_models)
    assert {"rk4", "rk45", "rk23"} <= set(reg.solvers)


BRITTLE_COUPLER = '''
import rrscore
from rrscore.plugins.couplers import Linear


def brittle(d, d_dot, p, s, ds, out):
    p.calls[0] += 1.0  # a count kept in the record, so that it counts compiled too
    if p.calls[0] >= 3000.0:
        raise ZeroDivisionError("brittle coupler snapped")
    for i in range(d.size):
        out[i] = p.stiffness[i] * d[i] + p.damping[i] * d_dot[i]


class Brittle(Linear):
    type_name = "brittle"
    description = "a linear coupler whose force law raises from its 3000th call on"
    fields = {"calls": "calls of the force law so far (in the first coupling's entry)"}
    force = staticmethod(brittle)


@rrscore.hookimpl
def rrs_coupler_models():
    return [Brittle]
'''


def _drive_with_coupler(tmp_path: Path, name: str, source: str, rest: str):
    """``rrs drive`` of a scenario on the level route whose couplings use the coupler
    model ``name`` from a plugin file with ``source``; ``rest``: the scenario's other
    tables."""
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / f"{name}.py").write_text(source)
    scenario = tmp_path / f"{name}_scenario.toml"
    scenario.write_text(
        '[scenario]\nplugin_dirs = ["plugins"]\n'
        f"route = {toml_path(LEVEL)}\n"
        f'[scenario.train.coupling]\nmodel = "{name}"\n' + rest)
    return rrs("drive", scenario, "--out", tmp_path / "out")


def test_coupler_model_raising_in_force_ends_the_drive_with_one_line_and_all_outputs(
        tmp_path: Path) -> None:
    proc = _drive_with_coupler(
        tmp_path, "brittle", BRITTLE_COUPLER,
        f"[[scenario.train.vehicles]]\nconfig = {toml_path(LOCO)}\n"
        f"[[scenario.train.vehicles]]\nconfig = {toml_path(LOCO)}\ncount = 2\n"
        '[[scenario.driver]]\nat_time = 0\nset = { traction_level = 1.0 }\n'
        '[scenario.output]\nsample_interval = "0.05 s"\n'
        '[scenario.stop]\nmax_time = "60 s"\n')
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    line = proc.stderr.strip()
    assert len(line.splitlines()) == 1, line
    assert "coupler model 'brittle' (brittle@" in line
    # it raised on every call from then on: for coupling 0 alone, the first tried
    assert "in force() for coupling 0 raised" in line
    assert "ZeroDivisionError: brittle coupler snapped" in line
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["stop_reason"] == "error"
    assert f"at t = {summary['sim_time_s']:.3f} s" in line
    assert summary["sim_time_s"] > 0.0
    assert (tmp_path / "out" / "events.csv").is_file()
    assert (tmp_path / "out" / "speed.png").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "out" / "force_envelope.png").read_bytes()[:4] == b"\x89PNG"


PICKY_COUPLER = '''
import rrscore
from rrscore.plugins.couplers import Linear


def picky(d, d_dot, p, s, ds, out):
    for i in range(d.size):
        if abs(d[i]) > 0.02:
            raise ValueError("picky coupler overstretched")
        out[i] = p.stiffness[i] * d[i] + p.damping[i] * d_dot[i]


class Picky(Linear):
    type_name = "picky"
    description = "a linear coupler whose force law raises beyond 2 cm of deflection"
    force = staticmethod(picky)


@rrscore.hookimpl
def rrs_coupler_models():
    return [Picky]
'''


def test_a_coupler_model_raising_for_one_coupling_is_reported_for_that_coupling(
        tmp_path: Path) -> None:
    # one model object serves all three couplings; only the middle one starts 5 cm apart
    proc = _drive_with_coupler(
        tmp_path, "picky", PICKY_COUPLER,
        f"[[scenario.train.vehicles]]\nconfig = {toml_path(LOCO)}\ncount = 4\n"
        '[scenario.start]\ngaps = ["0 m", "5 cm", "0 m"]\n'
        '[scenario.stop]\nmax_time = "10 s"\n')
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "coupler model 'picky' (picky@" in proc.stderr
    assert "in force() for coupling 1 raised ValueError: picky coupler overstretched, " \
        "at t = 0.000 s" in proc.stderr


SNAPPY_COUPLER = BRITTLE_COUPLER.replace(
    "    p.calls[0] += 1.0  # a count kept in the record, so that it counts compiled too\n"
    "    if p.calls[0] >= 3000.0:\n", "    if d[0] > 0.25:\n").replace(
    '"brittle"', '"snappy"').replace("brittle coupler snapped", "snappy coupler snapped")


def test_a_coupler_model_raising_when_probed_for_a_fixed_step_is_named(tmp_path: Path) -> None:
    # rk4's step limit probes each force law 0.3 m beyond its free range, before the drive
    proc = _drive_with_coupler(
        tmp_path, "snappy", SNAPPY_COUPLER,
        f"[[scenario.train.vehicles]]\nconfig = {toml_path(LOCO)}\ncount = 2\n"
        '[scenario.solver]\nmethod = "rk4"\nstep = "1 ms"\n'
        '[scenario.stop]\nmax_time = "1 s"\n')
    assert proc.returncode == 2, proc.stderr
    line = proc.stderr.strip()
    assert len(line.splitlines()) == 1 and "Traceback" not in line, line
    assert "coupler model 'snappy' in force(), probed for the fixed step's limit raised " \
        "ZeroDivisionError: snappy coupler snapped" in line
