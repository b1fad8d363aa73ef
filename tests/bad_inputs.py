"""Bad config files shared by test_config.py (Python API) and test_cli.py (``rrs validate``).

Each builder writes one broken config into a directory and returns a :class:`BadInput`:
the file to check and the fragments its error message must contain (the file name, the
dotted key path, the value found and what was expected).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CONFIGS = REPO / "configs"
LOCO = CONFIGS / "vehicles" / "simple_loco.toml"
CAR = CONFIGS / "vehicles" / "freight_car_4axle.toml"
LOCO_TRAIN = CONFIGS / "trains" / "simple_loco.toml"
LEVEL = CONFIGS / "routes" / "level_30km.toml"


@dataclass
class BadInput:
    path: Path
    fragments: list[str]


def key_paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    """Every key path in a parsed TOML document (tables, lists and leaves): where the
    property tests' mutations may strike."""
    out = []
    if isinstance(node, dict):
        for k, v in node.items():
            out.append((*prefix, k))
            out.extend(key_paths(v, (*prefix, k)))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out.append((*prefix, i))
            out.extend(key_paths(v, (*prefix, i)))
    return out


def toml_path(p: Path) -> str:
    """A path as a TOML basic string."""
    return '"' + p.as_posix().replace("\\", "\\\\").replace('"', '\\"') + '"'


def vehicle_toml(**overrides: str) -> str:
    """A [vehicle] table of a freight car; values are TOML literals, None drops the key."""
    keys = {
        "type": '"freight_car"',
        "empty_mass": '"23 t"',
        "length": '"13.92 m"',
        "num_axis": "4",
    }
    keys.update(overrides)
    return "[vehicle]\n" + "".join(f"{k} = {v}\n" for k, v in keys.items() if v is not None)


def scenario_toml(train: str, route: str, extra: str = "") -> str:
    return f"[scenario]\ntrain = {train}\nroute = {route}\n{extra}"


def unknown_key(d: Path) -> BadInput:
    p = d / "typo_vehicle.toml"
    p.write_text(vehicle_toml(empty_mass=None, empty_mas='"23 t"'))
    return BadInput(p, ["typo_vehicle.toml", "vehicle.empty_mas", "unknown key",
                        "did you mean 'empty_mass'?"])


def wrong_type(d: Path) -> BadInput:
    p = d / "count_train.toml"
    p.write_text(
        "[train]\n"
        f"[[train.vehicles]]\nconfig = {toml_path(LOCO)}\n"
        f'[[train.vehicles]]\nconfig = {toml_path(CAR)}\ncount = "three"\n'
    )
    return BadInput(p, ["count_train.toml", "train.vehicles[1].count", "'three'",
                        "expected an integer"])


def missing_train_file(d: Path) -> BadInput:
    p = d / "lost_train_scenario.toml"
    p.write_text(scenario_toml('"no_such_train.toml"', toml_path(LEVEL)))
    return BadInput(p, ["lost_train_scenario.toml", "scenario.train", "'no_such_train.toml'",
                        "no such train file", str(d / "no_such_train.toml")])


def missing_file(d: Path) -> BadInput:
    p = d / "does_not_exist.toml"
    return BadInput(p, ["does_not_exist.toml", "not found"])


def negative_mass(d: Path) -> BadInput:
    p = d / "negative_vehicle.toml"
    p.write_text(vehicle_toml(empty_mass='"-5 t"'))
    return BadInput(p, ["negative_vehicle.toml", "vehicle.empty_mass", "'-5 t'",
                        "expected a mass", "> 0"])


def unknown_vehicle_type(d: Path) -> BadInput:
    p = d / "diesel_vehicle.toml"
    p.write_text(vehicle_toml(type='"diesel_loco"'))
    return BadInput(p, ["diesel_vehicle.toml", "vehicle.type", "'diesel_loco'",
                        "expected a vehicle type", "freight_car", "simple_loco"])


def unknown_solver(d: Path) -> BadInput:
    p = d / "euler_scenario.toml"
    p.write_text(scenario_toml(toml_path(LOCO_TRAIN), toml_path(LEVEL),
                               '[scenario.solver]\nmethod = "euler"\n'))
    return BadInput(p, ["euler_scenario.toml", "scenario.solver.method", "'euler'",
                        "expected a solver", "rk4", "rk45"])


def wrong_unit(d: Path) -> BadInput:
    p = d / "kg_length_vehicle.toml"
    p.write_text(vehicle_toml(length='"12 kg"'))
    return BadInput(p, ["kg_length_vehicle.toml", "vehicle.length", "'12 kg'",
                        "expected a length"])


def invalid_toml(d: Path) -> BadInput:
    p = d / "broken.toml"
    p.write_text('[vehicle]\ntype = "freight_car"\nempty_mass = "23 t\nlength = "13.92 m"\n')
    return BadInput(p, ["broken.toml", "not valid TOML", "line 3"])


def not_utf8(d: Path) -> BadInput:
    p = d / "latin1_route.toml"
    p.write_bytes('[route]\nname = "Caf\u00e9"\n'.encode("latin-1"))
    return BadInput(p, ["latin1_route.toml", "not valid TOML", "UTF-8"])


def nul_in_path(d: Path) -> BadInput:
    p = d / "nul_scenario.toml"
    p.write_text(scenario_toml('"train\\u0000.toml"', toml_path(LEVEL)))
    return BadInput(p, ["nul_scenario.toml", "scenario.train", "NUL byte"])


def symlink_loop(d: Path) -> BadInput:
    (d / "loop_a.toml").symlink_to(d / "loop_b.toml")
    (d / "loop_b.toml").symlink_to(d / "loop_a.toml")
    p = d / "loop_scenario.toml"
    p.write_text(scenario_toml('"loop_a.toml"', toml_path(LEVEL)))
    return BadInput(p, ["loop_scenario.toml", "scenario.train", "'loop_a.toml'",
                        "symlink loop"])


def name_too_long(d: Path) -> BadInput:
    p = d / "long_name_scenario.toml"
    p.write_text(scenario_toml(f'"{"t" * 300}.toml"', toml_path(LEVEL)))
    return BadInput(p, ["long_name_scenario.toml", "scenario.train", "too long"])


def table_unloading_above_loading(d: Path) -> BadInput:
    p = d / "table_train.toml"
    p.write_text(
        "[train]\n[train.coupling]\nmodel = \"table\"\n"
        'params = { deflection = ["0.75 in", "3 in", "4 in"], '
        'loading = ["200 kips", "325 kips", "400 kips"], '
        'unloading = ["260 kips", "150 kips", "225 kips"] }\n'
        f"[[train.vehicles]]\nconfig = {toml_path(LOCO)}\n"
        f"[[train.vehicles]]\nconfig = {toml_path(CAR)}\n")
    return BadInput(p, ["table_train.toml", "train.coupling.params", "'unloading'",
                        "exceeds 'loading'"])


def _huge(d: Path, name: str, extra: str, fragments: list[str], route: str | None = None,
          train: str | None = None):
    p = d / name
    p.write_text(scenario_toml(train or toml_path(LOCO_TRAIN), route or toml_path(LEVEL),
                               extra))
    return BadInput(p, [name, *fragments])


def huge_grade(d: Path) -> BadInput:
    return _huge(d, "steep_scenario.toml", "", [
        "scenario.route.elements[0].grade", "'1e308 permille'", "<= 0.25"],
        route='{ elements = [{ length = "1 km", grade = "1e308 permille" }] }')


def huge_inertia(d: Path) -> BadInput:
    p = d / "heavy_axle_vehicle.toml"
    p.write_text(vehicle_toml(wheelset_inertia='"1e308 kg*m^2"'))
    return BadInput(p, ["heavy_axle_vehicle.toml", "vehicle.wheelset_inertia",
                        "'1e308 kg*m^2'", "expected a moment of inertia"])


def huge_speed(d: Path) -> BadInput:
    return _huge(d, "fast_scenario.toml", '[scenario.start]\nspeed = "1e308 km/h"\n', [
        "scenario.start.speed", "'1e308 km/h'", "expected a speed", "<= 200"])


def nan_control(d: Path) -> BadInput:
    return _huge(d, "nan_scenario.toml",
                 '[[scenario.driver]]\nat_time = 0\nset = { traction_level = nan }\n',
                 ["scenario.driver[0].set.traction_level", "nan", "expected a finite number"])


def huge_count(d: Path) -> BadInput:
    p = d / "long_train.toml"
    p.write_text(f"[train]\n[[train.vehicles]]\nconfig = {toml_path(CAR)}\ncount = 1000000000\n")
    return BadInput(p, ["long_train.toml", "train.vehicles[0].count", "1000000000",
                        "<= 20000"])


def signal_of_another_type(d: Path) -> BadInput:
    train = CONFIGS / "trains" / "freight_50.toml"
    return _huge(d, "signal_scenario.toml",
                 '[scenario.output]\nvehicles = [3, 7]\n'
                 'vehicle_signals = ["speed_mps", "traction_level"]\n',
                 ["scenario.output.vehicle_signals[1]", "'traction_level'",
                  "no recorded vehicle has such a signal"], train=toml_path(train))


def all_vehicles_unknown_control(d: Path) -> BadInput:
    return _huge(d, "all_vehicles_scenario.toml",
                 '[[scenario.driver]]\nat_time = 0\nall_vehicles = true\n'
                 'set = { tracton_level = 1 }\n',
                 ["scenario.driver[0]", "control 'tracton_level'", "no vehicle of the train",
                  "controls: traction_level, brake_level"])


CASES: dict[str, Callable[[Path], BadInput]] = {
    "unknown_key": unknown_key,
    "wrong_type": wrong_type,
    "missing_train_file": missing_train_file,
    "missing_file": missing_file,
    "negative_mass": negative_mass,
    "unknown_vehicle_type": unknown_vehicle_type,
    "unknown_solver": unknown_solver,
    "wrong_unit": wrong_unit,
    "invalid_toml": invalid_toml,
    "not_utf8": not_utf8,
    "nul_in_path": nul_in_path,
    "symlink_loop": symlink_loop,
    "name_too_long": name_too_long,
    "table_unloading_above_loading": table_unloading_above_loading,
    "huge_grade": huge_grade,
    "huge_inertia": huge_inertia,
    "huge_speed": huge_speed,
    "nan_control": nan_control,
    "huge_count": huge_count,
    "signal_of_another_type": signal_of_another_type,
    "all_vehicles_unknown_control": all_vehicles_unknown_control,
}
