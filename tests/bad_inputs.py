"""Bad config files shared by test_config.py (Python API) and test_cli.py (``rrs validate``).

Each builder writes one broken config into a directory and returns a :class:`BadInput`:
the file to check and the fragments its error message must contain (the file name, the
dotted key path, the value found and what was expected).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

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
}
