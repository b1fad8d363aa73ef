"""The ``rrs`` command: validate, plugins and drive (run as a subprocess; in this process
where it checks many files one by one)."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from bad_inputs import CASES, CONFIGS, LEVEL, LOCO_TRAIN, REPO, scenario_toml, toml_path

SHIPPED_CONFIGS = sorted(CONFIGS.rglob("*.toml"))
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
SUMMARY_KEYS = {"sim_time_s", "distance_m", "max_speed_mps", "final_speed_mps",
                "max_coupler_tension_N", "max_coupler_compression_N", "wall_time_s", "steps",
                "stop_reason"}


def rrs(*args: str | Path, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    """Run ``python -m rrscore.cli ARGS``; stdin, stdout and stderr are not terminals."""
    env = {k: v for k, v in os.environ.items() if k != "RRS_PLUGIN_PATH"}
    return subprocess.run(
        [sys.executable, "-m", "rrscore.cli.main", *map(str, args)],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=120,
        stdin=subprocess.DEVNULL,
    )


# -------------------------------------------------------------------- validate


def test_shipped_configs_exist() -> None:
    kinds = {p.parent.name for p in SHIPPED_CONFIGS}
    assert kinds == {"networks", "routes", "scenarios", "trains", "vehicles", "yards"}


@pytest.fixture
def in_process(monkeypatch: pytest.MonkeyPatch):
    """``rrs ARGS`` called in this process (``rrscore.cli.main.main``): a subprocess per
    file would cost a second or two each; the subprocess tests cover the command itself."""
    from rrscore.cli.main import main

    monkeypatch.delenv("RRS_PLUGIN_PATH", raising=False)
    return lambda *args: main([str(a) for a in args])


@pytest.mark.parametrize("path", SHIPPED_CONFIGS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_validate_shipped_config_exits_0_and_says_ok(path: Path, in_process, capsys) -> None:
    code = in_process("validate", path)
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.startswith(f"{path}: ok, ")
    assert err == ""


def test_validate_several_files_prints_one_ok_line_each() -> None:
    proc = rrs("validate", *SHIPPED_CONFIGS)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == len(SHIPPED_CONFIGS)
    for line, path in zip(lines, SHIPPED_CONFIGS, strict=True):
        assert line.startswith(f"{path}: ok, ")


@pytest.mark.parametrize("case", sorted(CASES))
def test_validate_bad_input_exits_2_with_one_message_and_no_traceback(
        tmp_path: Path, case: str, in_process, capsys) -> None:
    bad = CASES[case](tmp_path)
    code = in_process("validate", bad.path)
    out, err = capsys.readouterr()
    assert code == 2
    assert "Traceback" not in err
    assert out == ""
    message = err.strip()
    assert message.startswith("rrs: error: ")
    assert len(message.splitlines()) == 1, message
    for fragment in bad.fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"


def test_validate_nonexistent_path_exits_2_naming_the_path(tmp_path: Path) -> None:
    proc = rrs("validate", tmp_path / "nowhere" / "x.toml")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert f"{tmp_path / 'nowhere' / 'x.toml'}: config file not found" in proc.stderr


def test_drive_nonexistent_scenario_exits_2_without_traceback(tmp_path: Path) -> None:
    proc = rrs("drive", tmp_path / "none.toml", "--out", tmp_path / "out")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "none.toml: scenario file not found" in proc.stderr


def test_drive_bad_scenario_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    bad = CASES["unknown_solver"](tmp_path)
    proc = rrs("drive", bad.path, "--out", tmp_path / "out")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "scenario.solver.method: found 'euler'" in proc.stderr
    assert not (tmp_path / "out").exists()


# --------------------------------------------------------------------- plugins


def test_plugins_lists_shipped_components_and_their_source() -> None:
    proc = rrs("plugins")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for line in ("vehicle type simple_loco:", "vehicle type freight_car:",
                 "coupler model spring_damper:", "solver rk4:", "solver rk45:"):
        assert line in out
    for module in ("rrscore.vehicles.simple_loco", "rrscore.vehicles.freight_car",
                   "rrscore.plugins.couplers", "rrscore.engine.tableau"):
        assert f"(built in: {module})" in out


def test_plugins_verbose_lists_params_and_keys() -> None:
    proc = rrs("plugins", "-v")
    assert proc.returncode == 0, proc.stderr
    assert "params.F_max [N] = 450000.0" in proc.stdout
    assert "key traction_up (w):" in proc.stdout  # with its rrs cab binding
    assert "control hand_brake:" in proc.stdout
    assert "state main_reservoir [Pa]:" in proc.stdout
    assert "rates: compiled by numba" in proc.stdout  # SimpleLoco's reservoir


def test_plugins_verbose_lists_the_keys_every_vehicle_config_has() -> None:
    proc = rrs("plugins", "-v")
    assert proc.returncode == 0, proc.stderr
    assert "vehicle.empty_mass [kg]" in proc.stdout
    assert "vehicle.brake.shoe_type = 'cast_iron'" in proc.stdout
    assert "vehicle.brake.friction_table.speeds [m/s] = []" in proc.stdout


def test_plugins_json_parses_and_names_what_each_plugin_provides() -> None:
    proc = rrs("plugins", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    by_name = {p["name"]: p for p in data}
    assert by_name["vehicles.simple_loco"]["provides"] == {"vehicle_types": ["simple_loco"]}
    assert by_name["vehicles.freight_car"]["provides"] == {"vehicle_types": ["freight_car"]}
    assert "spring_damper" in by_name["plugins.couplers"]["provides"]["coupler_models"]
    assert sorted(by_name["engine.tableau"]["provides"]["solvers"]) == ["rk23", "rk4", "rk45"]
    assert by_name["run.outputs.summary"]["provides"] == {"hooks": ["rrs_drive_start",
                                                                "rrs_drive_end"]}
    for p in data:
        assert p["source"].startswith("built in: rrscore.")


def test_plugins_with_missing_plugin_dir_exits_2(tmp_path: Path) -> None:
    proc = rrs("plugins", "--plugins", tmp_path / "nope")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert f"plugin directory {tmp_path / 'nope'}: not found" in proc.stderr


# ----------------------------------------------------------------------- drive


@pytest.fixture(scope="module")
def short_drive(tmp_path_factory: pytest.TempPathFactory):
    """`rrs drive` of a 5 s scenario with the shipped loco, written into a temp dir."""
    d = tmp_path_factory.mktemp("drive")
    scenario = d / "short.toml"
    scenario.write_text(scenario_toml(
        toml_path(LOCO_TRAIN), toml_path(LEVEL),
        'name = "short"\n'
        '[scenario.start]\npoint = "start"\n'
        '[[scenario.driver]]\nat_time = "0 s"\npress = "traction_up"\n'
        '[scenario.stop]\nmax_time = "5 s"\n'
        '[scenario.output]\nsample_interval = "0.5 s"\nvehicles = [0]\n',
    ))
    out = d / "out"
    proc = rrs("drive", scenario, "--out", out)
    assert proc.returncode == 0, proc.stderr
    return out, proc


def test_drive_prints_summary_line_and_no_progress_bar_when_not_a_terminal(short_drive) -> None:
    _, proc = short_drive
    assert proc.stdout.startswith("short: max_time after 5.0 s simulated")
    assert "\r" not in proc.stderr
    assert "\r" not in proc.stdout
    assert proc.stderr == ""


def test_a_drive_that_exceeds_its_speed_limit_says_so_in_its_one_line_result(
        tmp_path: Path) -> None:
    # Started at 60 km/h under a 40 km/h limit, coasting for 5 s: 20 km/h over at once.
    route = tmp_path / "limited.toml"
    route.write_text('[route]\nname = "limited"\n[[route.elements]]\nlength = "5 km"\n'
                     'speed_limit = "40 km/h"\n')
    scenario = tmp_path / "fast.toml"
    scenario.write_text(scenario_toml(
        toml_path(LOCO_TRAIN), toml_path(route),
        'name = "fast"\n[scenario.start]\nposition = "1 km"\nspeed = "60 km/h"\n'
        '[scenario.stop]\nmax_time = "5 s"\n[scenario.output]\nplots = false\n'))
    proc = rrs("drive", scenario, "--out", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    assert "; speed limit exceeded once, up to 20.0 km/h over (see summary.json)" \
        in proc.stdout
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    (one,) = summary["speed_limit_exceedances"]
    assert one["end"] == "under way" and one["limit_kmh"] == pytest.approx(40.0)


def test_drive_writes_timeseries_csv_with_time_first(short_drive) -> None:
    out, _ = short_drive
    with open(out / "timeseries.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    header = rows[0]
    assert header[0] == "time_s"
    for column in ("position_m", "speed_mps", "accel_mps2", "traction_force_N",
                   "v0_speed_mps"):
        assert column in header
    data = [[float(v) for v in row] for row in rows[1:]]
    times = [row[0] for row in data]
    assert times[0] == 0.0
    assert times[-1] == pytest.approx(5.0)
    assert len(data) == 11  # every 0.5 s from 0 to 5 s
    assert all(len(row) == len(header) for row in data)
    speed = header.index("speed_mps")
    assert data[-1][speed] > data[0][speed] == 0.0  # traction moved it


def test_drive_writes_summary_json(short_drive) -> None:
    out, _ = short_drive
    summary = json.loads((out / "summary.json").read_text())
    assert SUMMARY_KEYS <= set(summary)
    assert summary["stop_reason"] == "max_time"
    assert summary["sim_time_s"] == pytest.approx(5.0)
    assert summary["distance_m"] > 0
    assert summary["max_speed_mps"] >= summary["final_speed_mps"] > 0
    assert summary["steps"] > 0
    assert summary["max_coupler_tension_N"] == 0.0  # a single vehicle has no couplers
    assert "error" not in summary


def test_drive_writes_speed_png(short_drive) -> None:
    out, _ = short_drive
    assert (out / "speed.png").read_bytes()[:8] == PNG_MAGIC


def test_drive_writes_resolved_scenario_that_reproduces_the_drive(short_drive,
                                                                  tmp_path: Path) -> None:
    out, _ = short_drive
    resolved = out / "scenario.resolved.toml"
    assert resolved.is_file()
    proc = rrs("drive", resolved, "--out", tmp_path / "again")
    assert proc.returncode == 0, proc.stderr
    first = json.loads((out / "summary.json").read_text())
    second = json.loads((tmp_path / "again" / "summary.json").read_text())
    assert second["distance_m"] == pytest.approx(first["distance_m"], rel=1e-9, abs=0.0)
    assert second["steps"] == first["steps"]
    assert (tmp_path / "again" / "scenario.resolved.toml").read_text() == resolved.read_text()


# ----------------------------------------------------------------- yards, free cars


def test_drive_runs_a_yard_file_and_lists_its_outputs(tmp_path: Path) -> None:
    proc = rrs("drive", CONFIGS / "yards" / "buffer_stop.toml", "--out", tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "events: " in proc.stdout and "buffer stop" in proc.stdout
    assert f"outputs in {tmp_path}/: events.csv, plan.png, positions.csv, summary.json, " \
           "yard.resolved.toml" in proc.stdout
    assert (tmp_path / "plan.png").read_bytes().startswith(PNG_MAGIC)


@pytest.mark.parametrize("restitution", ["0.1", "0.134", "0.2"])
def test_drive_runs_the_buffer_stop_yard_to_rest_at_any_dull_restitution(
        restitution: str, tmp_path: Path, in_process, capsys) -> None:
    # the three cars strike the stop buffer to buffer: their bounces off the stop and off
    # each other shrink without end at one instant (this stopped the drive with "impacts
    # at t = 26.516 s do not settle"); they settle into resting contact and the drive
    # ends at standstill with the cut against the stop (the straight leg's end, 200 m)
    code = in_process("drive", CONFIGS / "yards" / "buffer_stop.toml", "--set",
                      f"restitution={restitution}", "--out", tmp_path)
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads((tmp_path / "summary.json").read_text())["stop_reason"] == "standstill"
    last = list(csv.DictReader((tmp_path / "positions.csv").open()))[-1]
    assert float(last["speed_mps"]) == 0.0 and float(last["front_offset_m"]) == 200.0
    details = [r["detail"] for r in csv.DictReader((tmp_path / "events.csv").open())
               if r["kind"] == "buffer stop"]
    assert details[0].startswith("at 1.771 m/s") and "stays against it" in details[-1]


def test_drive_sets_a_key_of_a_yard_file_and_refuses_a_solver(tmp_path: Path) -> None:
    proc = rrs("drive", CONFIGS / "yards" / "buffer_stop.toml", "--set", "stop.max_time=3",
               "--out", tmp_path / "short")
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "short" / "summary.json").read_text())["sim_time_s"] == 3.0
    proc = rrs("drive", CONFIGS / "yards" / "buffer_stop.toml", "--solver", "rk4",
               "--out", tmp_path / "out")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "--solver: found a solver for a yard scenario" in proc.stderr


def test_drive_runs_a_scenario_with_the_free_car_engine_when_dynamics_is_events(
        tmp_path: Path) -> None:
    proc = rrs("drive", CONFIGS / "scenarios" / "impact_1ms.toml", "--set",
               "dynamics=events", "--out", tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "2 cars in 2 cuts, events: 1 coupled" in proc.stdout
    rows = list(csv.DictReader((tmp_path / "events.csv").open()))
    assert [(r["kind"], r["cut"], r["other_cut"]) for r in rows] == [
        ("coupled", "vehicle 0", "vehicle 1")]


def test_drive_refuses_a_solver_for_the_free_car_engine(tmp_path: Path) -> None:
    proc = rrs("drive", CONFIGS / "scenarios" / "impact_1ms.toml", "--set",
               "dynamics=events", "--solver", "rk4", "--out", tmp_path / "out")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "--solver: found a solver for a scenario with dynamics 'events'" in proc.stderr


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_compile_notice_is_one_line_on_a_terminal_and_nothing_elsewhere() -> None:
    from rrscore.cli.main import CompileNotice

    tty, pipe = _Terminal(), io.StringIO()
    CompileNotice(tty)()
    CompileNotice(pipe)()
    assert tty.getvalue() == f"\r{CompileNotice.TEXT}\n"
    assert pipe.getvalue() == ""


def test_a_drive_that_compiles_shows_the_notice_once_on_a_terminal(tmp_path: Path,
                                                                  monkeypatch) -> None:
    from numba import njit

    import rrscore.cli.main as cli

    class CompilingDrive(cli.Drive):
        def run(self, *args, **kwargs):
            @njit  # a function of its own: numba compiles it during the drive
            def double(x):
                return 2.0 * x

            assert double(1.0) == 2.0
            return super().run(*args, **kwargs)

    scenario = tmp_path / "short.toml"
    scenario.write_text(scenario_toml(toml_path(LOCO_TRAIN), toml_path(LEVEL),
                                      '[scenario.stop]\nmax_time = "2 s"\n'))
    monkeypatch.setattr(cli, "Drive", CompilingDrive)
    monkeypatch.setattr(sys, "stderr", _Terminal())
    assert cli.main(["drive", str(scenario), "--out", str(tmp_path / "out")]) == 0
    assert sys.stderr.getvalue().count(cli.CompileNotice.TEXT) == 1
