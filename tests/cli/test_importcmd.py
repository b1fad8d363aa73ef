"""``rrs import openrails``: the files it writes, the line of tokens not mapped, and one
error line (exit 2) for a malformed file."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

import pytest

from rrscore import load_scenario, validate_file
from rrscore.cli.main import main

DATA = Path(__file__).resolve().parents[1] / "data" / "openrails"
CON = DATA / "TRAINS" / "CONSISTS" / "rrs_freight.con"
LEVEL = Path(__file__).resolve().parents[2] / "configs" / "routes" / "level_30km.toml"


def test_a_consist_writes_its_vehicles_and_a_train_that_loads(tmp_path, capsys):
    assert main(["import", "openrails", str(CON), "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    written = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.toml"))
    assert written == ["trains/rrs_freight.toml", "vehicles/rrs_coach.toml",
                       "vehicles/rrs_diesel.toml", "vehicles/rrs_electric.toml",
                       "vehicles/rrs_hopper.toml", "vehicles/rrs_tank.toml"]
    assert [ln for ln in out if ln.startswith("not mapped")] == [out[-1]]
    assert "Friction" in out[-1] and "ORTSFreightAnims" in out[-1]
    assert "TrainCfg.MaxVelocity" in out[-1]  # the consist's own tokens as well
    train = tomllib.loads((tmp_path / "trains" / "rrs_freight.toml").read_text())["train"]
    vehicles = train["vehicles"]
    assert train["name"] == "RRS freight"
    # the three hoppers (one written RRS_HOPPER rrs_wagons: found whatever the case) are one
    # entry of three; the electric at the tail is reversed (Flip)
    assert [(v["config"], v.get("count", 1)) for v in vehicles] == [
        ("../vehicles/rrs_diesel.toml", 1), ("../vehicles/rrs_hopper.toml", 3),
        ("../vehicles/rrs_tank.toml", 1), ("../vehicles/rrs_coach.toml", 1),
        ("../vehicles/rrs_electric.toml", 1)]
    assert vehicles[-1]["orientation"] == "reversed"
    assert vehicles[1]["coupling"]["params"]["stiffness"] == 1.5e7  # the hopper's Coupling
    assert "coupling" not in vehicles[2]  # the tank wagon gives none: the train's default
    for written_file in tmp_path.rglob("*.toml"):  # each a config rrs validate accepts
        assert validate_file(written_file).startswith(("vehicle ", "train "))
    scenario = tmp_path / "s.toml"
    scenario.write_text(f'[scenario]\ntrain = "trains/rrs_freight.toml"\nroute = "{LEVEL}"\n'
                        '[scenario.start]\npoint = "start"\n[scenario.stop]\nmax_time = 1\n')
    sc = load_scenario(scenario)
    built = sc.build_train()
    assert built.count == 7
    assert built.mass.sum() == pytest.approx(
        120e3 + 3 * 130 * 2000 * 0.45359237 + 24e3 + 45e3 + 90 * 2240 * 0.45359237)
    assert [b.type_name for b in built.batches] == ["table_loco", "freight_car",
                                                   "freight_car", "table_loco"]


def test_an_engine_writes_one_vehicle_config_listing_what_it_did_not_map(tmp_path, capsys):
    eng = DATA / "TRAINS" / "TRAINSET" / "RRS_Electric" / "rrs_electric.eng"
    assert main(["import", "openrails", str(eng), "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [f"wrote {tmp_path / 'rrs_electric.toml'}",
                   "not mapped (4): Type, Engine.Type, Engine.MaxContinuousForce, "
                   "Engine.MaxVelocity"]
    text = (tmp_path / "rrs_electric.toml").read_text()
    assert "\n# Tokens not mapped: Type, Engine.Type, Engine.MaxContinuousForce, " \
           "Engine.MaxVelocity.\n" in text
    assert "empty_mass = 91444.221792  # Mass ( 90t-uk ), line 8" in text
    cfg = tomllib.loads(text)
    assert cfg["vehicle"]["type"] == "table_loco"


def test_a_consist_without_its_vehicle_file_names_the_con_and_line(tmp_path, capsys):
    trains = tmp_path / "TRAINS"
    shutil.copytree(DATA / "TRAINS", trains)
    (trains / "TRAINSET" / "RRS_Wagons" / "rrs_tank.wag").unlink()
    con = trains / "CONSISTS" / "rrs_freight.con"
    assert main(["import", "openrails", str(con), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"rrs: error: {con}: line 27: WagonData: found no file "
                          "'RRS_Wagons/rrs_tank.wag'")
    assert not (tmp_path / "out").exists()  # nothing written


@pytest.mark.parametrize(("text", "line", "what"), [
    ("Wagon (\n Mass ( 80t )\n Size ( 1 1 10 )\n", 1, "never closed"),
    ("Wagon (\n Mass ( 80x )\n Size ( 1 1 10 ) )", 2, "unknown unit 'x'"),
    ("Wagon (\n Mass ( heavy )\n Size ( 1 1 10 ) )", 2, "found 'heavy', expected a mass"),
])
def test_a_malformed_file_is_one_error_line_and_exit_2(tmp_path, capsys, text, line, what):
    bad = tmp_path / "bad.wag"
    bad.write_text(text)
    assert main(["import", "openrails", str(bad), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"rrs: error: {bad}: line {line}: ")
    assert what in err


def test_a_file_of_another_kind_is_refused(tmp_path, capsys):
    other = tmp_path / "x.s"
    other.write_text("shape")
    assert main(["import", "openrails", str(other)]) == 2
    assert "expected an .eng, .wag or .con file" in capsys.readouterr().err


def test_help_names_the_command_and_its_options(capsys):
    with pytest.raises(SystemExit) as info:
        main(["import", "openrails", "--help"])
    assert info.value.code == 0
    text = capsys.readouterr().out
    assert "--out" in text and "--trainset" in text and "docs/openrails.md" in text
