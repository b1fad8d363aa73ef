"""Code a config did not ask for (issue 50, item 5): a scenario's or yard's plugin_dirs
outside its own folder's tree are refused before anything is imported unless allowed, and
``rrs validate`` imports no config's plugin folder unless allowed, naming what it left
unchecked. A marker plugin writes a file when imported, so "nothing was imported" is seen.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from bad_inputs import LEVEL, LOCO, REPO, toml_path

from rrscore import ConfigError, load_scenario, validate_file
from rrscore.api import load_drive
from rrscore.cli.main import build_parser
from rrscore.run.plugins import PATH_ENV
from rrscore.yard.yard import load_yard

MARKER_PLUGIN = '''\
from pathlib import Path

import rrscore

Path({marker!r}).write_text("imported")


def step(t, dt, veh):
    for i in range(veh.count):
        veh.q_a[i, 0] = 0.0


class MarkerCar(rrscore.VehicleModel):
    """A car whose plugin leaves a mark when imported."""

    type_name = "marker_car"
    description = "car whose module writes a marker file on import"
    params = {{"hand_brake_force": rrscore.Param("N", 0.0, "hand brake")}}
    step = staticmethod(step)


@rrscore.hookimpl
def rrs_vehicle_types():
    return [MarkerCar]
'''

CAR = '{ vehicle = { type = "marker_car", empty_mass = "20 t", length = "15 m", num_axis = 2 } }'


@pytest.fixture(autouse=True)
def no_plugin_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PATH_ENV, raising=False)


def marker_plugin(folder: Path, marker: Path) -> Path:
    """A plugin folder whose one module writes ``marker`` when imported."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "marker.py").write_text(MARKER_PLUGIN.format(marker=str(marker)))
    return folder


def scenario_file(path: Path, plugin_dir: str, extra: str = "", car: str = CAR) -> Path:
    """A loco and a car (of the marker plugin's type, by default) on the level route, its
    ``plugin_dirs`` naming ``plugin_dir`` as written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f'[scenario]\nname = "shared"\nplugin_dirs = [{plugin_dir!r}]\n'
        f"route = {toml_path(LEVEL)}\n{extra}"
        '[scenario.stop]\nmax_time = "1 s"\n'
        f"[[scenario.train.vehicles]]\nconfig = {toml_path(LOCO)}\n"
        f"[[scenario.train.vehicles]]\nconfig = {car}\n")
    return path


def yard_file(path: Path, plugin_dir: str) -> Path:
    """The shipped junction network with one cut of two marker cars."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f'[yard]\nname = "shared yard"\nplugin_dirs = [{plugin_dir!r}]\n'
        f"network = {toml_path(REPO / 'configs/networks/junction.toml')}\n"
        '[yard.stop]\nmax_time = "10 s"\n'
        '[[yard.cuts]]\nname = "two"\ntrack = "straight"\nfront = "150 m"\n'
        f'speed = "1 m/s"\ntrain = {{ vehicles = [{{ config = {CAR}, count = 2 }}] }}\n')
    return path


def rrs(*args: str | Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != PATH_ENV}
    return subprocess.run([sys.executable, "-m", "rrscore.cli.main", *map(str, args)], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)


def escapes(tmp_path: Path) -> dict[str, str]:
    """Ways a scenario in tmp_path/share names tmp_path/elsewhere/plugins."""
    outside = tmp_path / "elsewhere" / "plugins"
    (tmp_path / "share").mkdir(exist_ok=True)
    link = tmp_path / "share" / "link"
    if not link.exists():
        link.symlink_to(outside, target_is_directory=True)
    return {"dotdot": "../elsewhere/plugins", "absolute": str(outside),
            "inside_then_up": "link/../../elsewhere/plugins", "symlink": "link"}


# ------------------------------------------------- plugin_dirs outside the tree


@pytest.mark.parametrize("how", ["dotdot", "absolute", "inside_then_up", "symlink"])
def test_scenario_plugin_dir_outside_its_tree_is_refused_before_any_import(
        tmp_path: Path, how: str) -> None:
    marker = tmp_path / "IMPORTED"
    marker_plugin(tmp_path / "elsewhere" / "plugins", marker)
    written = escapes(tmp_path)[how]
    path = scenario_file(tmp_path / "share" / "sc.toml", written)
    with pytest.raises(ConfigError) as err:
        load_scenario(path)
    found = str((tmp_path / "elsewhere" / "plugins").resolve())
    assert err.value.file == str(path)
    assert err.value.key == "scenario.plugin_dirs[0]"
    assert f"found {written!r}, the folder {found!r}" in err.value.message
    assert (f"expected a folder inside {str((tmp_path / 'share').resolve())!r}, or pass "
            "--allow-plugin-dirs") in err.value.message
    assert not marker.exists()


def test_scenario_plugin_dir_outside_its_tree_loads_when_allowed(tmp_path: Path) -> None:
    marker = tmp_path / "IMPORTED"
    marker_plugin(tmp_path / "elsewhere" / "plugins", marker)
    path = scenario_file(tmp_path / "share" / "sc.toml", "../elsewhere/plugins")
    scenario = load_scenario(path, allow_plugin_dirs=True)
    assert [b.type_name for b in scenario.train.batches] == ["simple_loco", "marker_car"]
    assert marker.exists()


def test_a_dotdot_that_stays_inside_the_tree_is_not_an_escape(tmp_path: Path) -> None:
    marker = tmp_path / "IMPORTED"
    marker_plugin(tmp_path / "share" / "plugins", marker)
    (tmp_path / "share" / "sub").mkdir()
    path = scenario_file(tmp_path / "share" / "sc.toml", "sub/../plugins")
    assert load_scenario(path).train.batches[1].type_name == "marker_car"
    assert marker.exists()


def test_plugin_dirs_given_by_the_caller_may_be_anywhere(tmp_path: Path) -> None:
    marker = tmp_path / "IMPORTED"
    plugins = marker_plugin(tmp_path / "elsewhere" / "plugins", marker)
    path = scenario_file(tmp_path / "share" / "sc.toml", ".")  # its own folder: inside
    assert load_scenario(path, plugin_dirs=[plugins]).train.batches[1].type_name == "marker_car"


def test_yard_plugin_dir_outside_its_tree_is_refused_unless_allowed(tmp_path: Path) -> None:
    marker = tmp_path / "IMPORTED"
    marker_plugin(tmp_path / "elsewhere" / "plugins", marker)
    path = yard_file(tmp_path / "share" / "yard.toml", "../elsewhere/plugins")
    for load in (load_yard, load_drive):
        with pytest.raises(ConfigError) as err:
            load(path)
        assert err.value.key == "yard.plugin_dirs[0]"
        assert "or pass --allow-plugin-dirs" in err.value.message
    assert not marker.exists()
    assert load_yard(path, allow_plugin_dirs=True).cars.length.size == 2
    assert marker.exists()


def test_rrs_drive_refuses_an_outside_plugin_dir_in_one_line_with_exit_2(tmp_path: Path) -> None:
    marker = tmp_path / "IMPORTED"
    marker_plugin(tmp_path / "elsewhere" / "plugins", marker)
    path = scenario_file(tmp_path / "share" / "sc.toml", "../elsewhere/plugins")
    for command in (("drive", path, "--out", tmp_path / "out"), ("validate", path),
                    ("sweep", path, "--param", "stop.max_time=1", "--out", tmp_path / "sw")):
        proc = rrs(*command)
        assert proc.returncode == 2, (command, proc.stderr)
        assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
        assert proc.stderr.startswith(f"rrs: error: {path}: scenario.plugin_dirs[0]: found "
                                      "'../elsewhere/plugins'")
        assert proc.stderr.rstrip().endswith("or pass --allow-plugin-dirs")
        assert not marker.exists()
    proc = rrs("validate", "--allow-plugin-dirs", path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"{path}: ok, scenario 'shared': 2 vehicles")
    assert marker.exists()


def test_rrs_drive_runs_an_outside_plugin_dir_when_allowed(tmp_path: Path) -> None:
    marker = tmp_path / "IMPORTED"
    marker_plugin(tmp_path / "elsewhere" / "plugins", marker)
    path = scenario_file(tmp_path / "share" / "sc.toml", "../elsewhere/plugins")
    proc = rrs("drive", path, "--out", tmp_path / "out", "--allow-plugin-dirs")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "out" / "summary.json").is_file()
    assert marker.exists()


def test_every_command_that_loads_a_scenario_has_the_allow_option() -> None:
    parser = build_parser()
    loads = {"drive": ["s.toml", "--out", "o"], "validate": ["s.toml"],
             "cab": ["s.toml", "--out", "o"],
             "sweep": ["s.toml", "--param", "a=1", "--out", "o"],
             "fit": ["s.toml", "--data", "d", "--params", "p", "--out", "o"]}
    for command, args in loads.items():
        assert parser.parse_args([command, *args]).allow_plugin_dirs is False
        assert parser.parse_args([command, *args, "--allow-plugin-dirs"]).allow_plugin_dirs


# ------------------------------------------------ rrs validate imports nothing


def test_validate_imports_no_plugin_dir_of_the_scenario_and_names_what_it_left(
        tmp_path: Path) -> None:
    marker = tmp_path / "IMPORTED"
    marker_plugin(tmp_path / "plugins", marker)
    path = scenario_file(tmp_path / "sc.toml", "plugins")
    proc = rrs("validate", path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (
        f"{path}: ok as far as checked, scenario 'shared': 2 vehicles, route 30000 m; not "
        "checked: vehicle type 'marker_car' (from its plugin_dirs, whose plugins were not "
        "imported: check them with --allow-plugin-dirs)\n")
    assert not marker.exists()
    assert "not checked: vehicle type 'marker_car'" in validate_file(path)
    assert not marker.exists()

    proc = rrs("validate", "--allow-plugin-dirs", path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"{path}: ok, scenario 'shared': 2 vehicles, ")
    assert marker.exists()


def test_validate_imports_a_folder_the_user_names_with_plugins(tmp_path: Path) -> None:
    marker = tmp_path / "IMPORTED"
    marker_plugin(tmp_path / "plugins", marker)
    path = scenario_file(tmp_path / "sc.toml", "plugins")
    proc = rrs("validate", "--plugins", tmp_path / "plugins", path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"{path}: ok, scenario 'shared': 2 vehicles, ")
    assert marker.exists()


def test_validate_without_the_plugins_still_finds_what_needs_none_of_them(
        tmp_path: Path) -> None:
    marker = tmp_path / "IMPORTED"
    marker_plugin(tmp_path / "plugins", marker)
    bad_point = scenario_file(tmp_path / "a.toml", "plugins",
                              extra='[scenario.start]\npoint = "nowhere"\n')
    with pytest.raises(ConfigError) as err:
        validate_file(bad_point)
    assert err.value.key == "scenario.start.point"
    bad_formula = scenario_file(
        tmp_path / "b.toml", "plugins",
        car='{ vehicle = { type = "marker_car", empty_mass = "20 t", length = "15 m", '
            'num_axis = 2, resistance = { formula = "no_such" } } }')
    with pytest.raises(ConfigError) as err:
        validate_file(bad_formula)
    assert err.value.key == "scenario.train.vehicles[1].config.vehicle.resistance.formula"
    assert not marker.exists()


def test_validate_checks_whole_a_scenario_that_needs_none_of_its_plugins(
        tmp_path: Path) -> None:
    marker = tmp_path / "IMPORTED"
    marker_plugin(tmp_path / "plugins", marker)
    path = scenario_file(tmp_path / "sc.toml", "plugins", car=toml_path(LOCO))
    proc = rrs("validate", path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"{path}: ok, scenario 'shared': 2 vehicles, ")
    assert not marker.exists()


def test_validate_imports_no_plugin_dir_of_a_yard(tmp_path: Path) -> None:
    marker = tmp_path / "IMPORTED"
    marker_plugin(tmp_path / "plugins", marker)
    path = yard_file(tmp_path / "yard.toml", "plugins")
    assert validate_file(path) == (
        "yard scenario 'shared yard': 2 cars in 1 cuts on network 'junction'; not checked: "
        "vehicle type 'marker_car' (from its plugin_dirs, whose plugins were not imported: "
        "check them with --allow-plugin-dirs)")
    assert not marker.exists()
    assert validate_file(path, allow_plugin_dirs=True) == (
        "yard scenario 'shared yard': 2 cars in 1 cuts on network 'junction'")
    assert marker.exists()


def test_validate_names_a_coupler_model_and_solver_it_could_not_check(tmp_path: Path) -> None:
    marker = tmp_path / "IMPORTED"
    marker_plugin(tmp_path / "plugins", marker)
    path = scenario_file(tmp_path / "sc.toml", "plugins", car=toml_path(LOCO),
                         extra='[scenario.solver]\nmethod = "their_solver"\n'
                               '[scenario.train.coupling]\nmodel = "their_gear"\n')
    assert validate_file(path).endswith(
        "; not checked: coupler model 'their_gear', solver 'their_solver' (from its "
        "plugin_dirs, whose plugins were not imported: check them with --allow-plugin-dirs)")
    assert not marker.exists()
    with pytest.raises(ConfigError) as err:  # imported, the folder has no such solver
        validate_file(path, allow_plugin_dirs=True)
    assert err.value.key == "scenario.solver.method"


def test_rrs_validate_and_drive_refuse_a_yard_with_an_outside_plugin_dir(tmp_path: Path) -> None:
    marker = tmp_path / "IMPORTED"
    marker_plugin(tmp_path / "elsewhere" / "plugins", marker)
    path = yard_file(tmp_path / "share" / "yard.toml", "../elsewhere/plugins")
    for command in (("validate", path), ("drive", path, "--out", tmp_path / "out")):
        proc = rrs(*command)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.startswith(f"rrs: error: {path}: yard.plugin_dirs[0]: found ")
        assert proc.stderr.count("\n") == 1
    assert not marker.exists()
    proc = rrs("validate", "--allow-plugin-dirs", path)
    assert proc.stdout == f"{path}: ok, yard scenario 'shared yard': 2 cars in 1 cuts on " \
                          "network 'junction'\n", proc.stderr
    assert marker.exists()
