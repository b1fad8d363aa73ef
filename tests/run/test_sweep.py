"""Sweeps: the same table on 1 worker, 2 workers and a Dask cluster; rows equal to single
drives; grid and zip; bad keys refused up front; failing cases kept as rows."""

from __future__ import annotations

import csv
import json
import sys
import threading
from pathlib import Path

import pytest
from conftest import CONFIGS

import rrscore
from rrscore.cli.main import main
from rrscore.model.errors import ConfigError, RrsError
from rrscore.run import sweep as sweep_module
from rrscore.run.sweep import DEFAULT_COLUMNS, Sweep, _context, parse_values, sweep

SCENARIO = CONFIGS / "scenarios" / "simple_loco_level.toml"
PARAMS = {"start.speed": ["0 km/h", "20 km/h", 10.0], "stop.max_time": [2, "3 s"]}


@pytest.fixture(scope="module")
def scenario() -> rrscore.Scenario:
    return rrscore.load_scenario(SCENARIO)


@pytest.fixture(scope="module")
def serial(scenario, tmp_path_factory) -> rrscore.SweepResult:
    return Sweep(scenario, PARAMS).run(out=tmp_path_factory.mktemp("serial"))


def read_csv(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def test_grid_runs_every_combination_in_case_order_last_key_fastest(serial) -> None:
    assert [r["case"] for r in serial.rows] == list(range(6))
    assert [(r["start.speed"], r["stop.max_time"]) for r in serial.rows] == [
        ("0 km/h", 2), ("0 km/h", "3 s"), ("20 km/h", 2), ("20 km/h", "3 s"),
        (10.0, 2), (10.0, "3 s")]
    assert all(r["error"] == "" and r["stop_reason"] == "max_time" for r in serial.rows)


def test_parameters_appear_as_given_and_in_si(serial) -> None:
    assert [r["start.speed_si"] for r in serial.rows[::2]] == [0.0, 20 / 3.6, 10.0]
    assert [r["stop.max_time_si"] for r in serial.rows[:2]] == [2.0, 3.0]
    assert [r["sim_time_s"] for r in serial.rows[:2]] == [2.0, 3.0]


def test_rows_equal_independent_single_drives(scenario, serial) -> None:
    for row in serial.rows:
        values = {k: row[k] for k in PARAMS}
        summary = rrscore.Drive(scenario.with_values(values)).run().summary
        assert {c: row[c] for c in DEFAULT_COLUMNS} == {c: summary[c] for c in DEFAULT_COLUMNS}


def test_two_workers_give_the_same_table_and_files_as_one(scenario, serial,
                                                           tmp_path: Path) -> None:
    two = Sweep(scenario, PARAMS).run(out=tmp_path, workers=2)
    assert two.columns == serial.columns
    assert two.rows == serial.rows
    assert read_csv(tmp_path / "sweep.csv") == read_csv(serial.out_dir / "sweep.csv")
    doc = json.loads((tmp_path / "sweep.json").read_text())
    assert doc["runner"] == "2 local workers" and doc["cases"] == 6 and doc["done"] == 6
    assert two.cpu_time_s > 0 and "_cpu_s" not in two.rows[0]  # measured in the workers


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers fork on Linux only")
def test_workers_fork_from_this_process_only_where_that_is_safe(
        scenario, serial, monkeypatch) -> None:
    if threading.active_count() != 1:  # left running by another test: a fork is unsafe
        pytest.skip(f"{threading.active_count() - 1} other threads running in this process")
    assert _context().get_start_method() == "fork"
    # with another thread running (a Jupyter kernel has several), they start fresh from
    # a fork server: the same table
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert _context().get_start_method() in ("forkserver", "spawn")
        assert Sweep(scenario, PARAMS).run(workers=2).rows == serial.rows
    finally:
        release.set()
        other.join()
    # with a GUI toolkit loaded (plot windows may be open), likewise
    monkeypatch.setitem(sys.modules, "tkinter", sys.modules.get("tkinter") or object())
    assert _context().get_start_method() in ("forkserver", "spawn")


def test_dask_cluster_gives_the_same_table_as_one_worker(scenario, serial) -> None:
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        result = Sweep(scenario, PARAMS).run(scheduler=cluster.scheduler_address)
    assert result.runner == "dask"
    assert result.rows == serial.rows


def test_dask_hands_out_cases_as_rows_are_written_and_stops_when_interrupted(
        scenario, serial, monkeypatch) -> None:
    distributed = pytest.importorskip("dask.distributed")
    import rrscore.run.sweep as sweep_module

    monkeypatch.setattr(sweep_module, "WINDOW_PER_WORKER", 1)  # 4 cases in flight at most
    params = {"stop.max_time": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}
    seen = []

    def stop_at_case_6(row: dict) -> None:
        seen.append(row["case"])
        if row["case"] == 6:
            raise KeyboardInterrupt

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        result = Sweep(scenario, PARAMS).run(scheduler=client)
        assert result.rows == serial.rows  # the window refilled as rows were written
        stopped = Sweep(scenario, params).run(scheduler=client, on_row=stop_at_case_6)
        assert stopped.interrupted and seen[:7] == list(range(7))
        assert stopped.done <= 6 + 4  # none handed out after the interruption
        # nothing left running or queued on the cluster (the scenario and the last case
        # are finished futures, held by the interruption's traceback)
        assert all(f.status == "finished" for f in client.futures.values())


def test_zip_runs_the_ith_values_together(scenario) -> None:
    result = sweep(scenario, {"start.speed": ["0 km/h", "20 km/h"], "stop.max_time": [2, 3]},
                   mode="zip", columns=["sim_time_s", "energy.drive_J"])
    assert len(result.rows) == 2  # grid of the same lists: 4
    assert len(Sweep(scenario, {"start.speed": [0, 1], "stop.max_time": [2, 3]}).cases()) == 4
    assert [(r["start.speed_si"], r["sim_time_s"]) for r in result.rows] == [
        (0.0, 2.0), (20 / 3.6, 3.0)]
    assert all(r["energy.drive_J"] > 0 for r in result.rows)


def test_zip_with_lists_of_different_lengths_is_a_config_error(scenario) -> None:
    with pytest.raises(ConfigError, match=r"start.speed: 2, stop.max_time: 3"):
        Sweep(scenario, {"start.speed": [0, 1], "stop.max_time": [1, 2, 3]}, mode="zip")


@pytest.mark.parametrize("key", ["stop.max_tme", "train.vehicles[3].count", "start.speed.x"])
def test_bad_key_is_a_config_error_naming_the_key_before_anything_runs(scenario,
                                                                       key: str) -> None:
    with pytest.raises(ConfigError) as info:
        Sweep(scenario, {"stop.max_time": [2], key: [1]})
    assert key.split(".")[-1] in str(info.value)
    assert str(SCENARIO) in str(info.value)


def test_bad_value_is_a_config_error_naming_the_key(scenario) -> None:
    with pytest.raises(ConfigError, match=r"scenario\.start\.speed: found 'fast'"):
        Sweep(scenario, {"start.speed": ["10 km/h", "fast"]})


def test_a_bad_value_past_those_checked_first_fails_its_own_case(scenario, monkeypatch):
    # a key's first VALUES_CHECKED_FIRST distinct values are checked before any case (a
    # zip of 10^6 distinct values spent an hour there); a later bad one is its row's error
    monkeypatch.setattr(sweep_module, "VALUES_CHECKED_FIRST", 3)
    with pytest.raises(ConfigError, match=r"scenario\.stop\.max_time: found 'long'"):
        Sweep(scenario, {"stop.max_time": [1, 2, "long", 3]}, mode="zip")
    result = sweep(scenario, {"stop.max_time": [1, 2, 1, 3, "long"]}, mode="zip")
    assert [r["stop_reason"] for r in result.rows] == ["max_time"] * 4 + ["error"]
    assert "stop.max_time: found 'long'" in result.rows[4]["error"]


def test_unknown_summary_column_is_an_error_listing_the_figures(scenario) -> None:
    with pytest.raises(RrsError, match=r"'top_speed'.*max_speed_mps"):
        Sweep(scenario, {"stop.max_time": [2]}, columns=["top_speed"])


def test_failing_case_is_a_row_with_its_error_and_the_sweep_goes_on(scenario) -> None:
    # two locomotives but one start speed: each value is valid alone, the pair is not
    result = sweep(scenario, {"train.vehicles[0].count": [1, 2, 1],
                              "start.speeds": [[0.0], [0.0], [0.0]],
                              "stop.max_time": [2, 2, 2]}, mode="zip")
    failed = result.rows[1]
    assert failed["stop_reason"] == "error"
    assert "start.speeds" in failed["error"] and "expected 2" in failed["error"]
    assert failed["sim_time_s"] is None
    assert [r["stop_reason"] for r in (result.rows[0], result.rows[2])] == ["max_time"] * 2
    assert result.failed == [failed]


def test_a_sweep_not_keeping_its_rows_counts_its_failures_and_names_where_rows_are(
        scenario, tmp_path: Path) -> None:
    # (sweep.json held every row, which a sweep of a million cases cannot keep)
    params = {"train.vehicles[0].count": [1, 2, 2, 1], "start.speeds": [[0.0]] * 4,
              "stop.max_time": [2] * 4}  # cases 1 and 2 fail: two locomotives, one speed
    result = Sweep(scenario, params, mode="zip").run(out=tmp_path, keep_rows=False)
    assert (result.cases, result.done, result.failures) == (4, 4, 2)
    assert [r["case"] for r in result.first_failures] == [1, 2]
    with pytest.raises(RrsError, match=r"not kept in memory.*sweep\.csv"):
        _ = result.rows
    doc = json.loads((tmp_path / "sweep.json").read_text())
    assert "rows" not in doc and doc["rows_file"] == "sweep.csv"
    assert (doc["cases"], doc["done"], doc["failures"]) == (4, 4, 2)
    assert [r["case"] for r in doc["first_failures"]] == [1, 2]
    assert [r["error"] for r in doc["first_failures"]] == [
        r[-1] for r in read_csv(tmp_path / "sweep.csv")[2:4]]
    kept = Sweep(scenario, params, mode="zip").run()  # small: kept by default
    assert [r["case"] for r in kept.failed] == [1, 2] and len(kept.rows) == 4


@pytest.mark.parametrize("workers", [0, -1, 257, 2.5, True, "2"])
def test_a_bad_worker_count_is_an_error_before_anything_runs(scenario, tmp_path: Path,
                                                             workers) -> None:
    with pytest.raises(RrsError, match=r"workers: found .*, expected a whole number from 1"):
        Sweep(scenario, {"stop.max_time": [1]}).run(out=tmp_path / "o", workers=workers)
    assert not (tmp_path / "o").exists()


def test_interrupted_sweep_keeps_the_finished_rows(scenario, tmp_path: Path) -> None:
    def stop_after_two(row: dict) -> None:
        if row["case"] == 1:
            raise KeyboardInterrupt

    result = Sweep(scenario, {"stop.max_time": [1, 2, 3]}).run(out=tmp_path,
                                                              on_row=stop_after_two)
    assert result.interrupted
    rows = read_csv(tmp_path / "sweep.csv")
    assert [r[0] for r in rows[1:]] == ["0", "1"]
    assert json.loads((tmp_path / "sweep.json").read_text())["interrupted"] is True


def test_cli_values_are_toml_literals_or_quantities() -> None:
    assert parse_values("10, 0.5,true,\"x\", 40 km/h") == [10, 0.5, True, "x", "40 km/h"]


def test_cli_sweep_writes_table_and_each_run(tmp_path: Path, capsys) -> None:
    out = tmp_path / "sw"
    code = main(["sweep", str(SCENARIO), "--param", "start.speed=0,20 km/h",
                 "--param", "stop.max_time=2", "--columns", "sim_time_s,energy.drive_J",
                 "--save-runs", "--out", str(out)])
    assert code == 0
    rows = read_csv(out / "sweep.csv")
    assert rows[0] == ["case", "start.speed", "start.speed_si", "stop.max_time",
                       "stop.max_time_si", "sim_time_s", "energy.drive_J", "stop_reason",
                       "error"]
    assert [r[1] for r in rows[1:]] == ["0", "20 km/h"]
    assert float(rows[2][2]) == pytest.approx(20 / 3.6, rel=1e-15)
    assert (out / "runs" / "case_0001" / "summary.json").is_file()
    assert "2 of 2 cases done" in capsys.readouterr().out


@pytest.mark.parametrize("args, message", [
    (["--param", "stop.max_time"], "expected KEY=V1,V2"),
    (["--param", "stop.max_time=,"], "found no values"),
    (["--param", "stop.max_time=1", "--workers", "0"], "--workers: found 0"),
    (["--param", "stop.max_time=1", "--param", "stop.max_time=2"], "given twice"),
    (["--param", "stop.max_time=1", "--workers", "2", "--scheduler", "tcp://x:1"],
     "give one"),
    (["--param", "stop.max_time=1,2", "--param", "start.speed=1", "--zip"],
     "different numbers of values"),
])
def test_cli_bad_input_is_one_line_exit_2(tmp_path: Path, capsys, args, message) -> None:
    assert main(["sweep", str(SCENARIO), *args, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_scheduler_without_dask_is_a_one_line_error_naming_the_extra(tmp_path: Path, capsys,
                                                                     monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "dask.distributed", None)  # not importable
    code = main(["sweep", str(SCENARIO), "--param", "stop.max_time=1",
                 "--scheduler", "tcp://127.0.0.1:1", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2 and "rrscore[dask]" in err and err.count("\n") == 1
    assert not (tmp_path / "o").exists()  # refused before anything was written


def test_a_second_sweep_into_the_same_output_is_refused(scenario, tmp_path: Path) -> None:
    # (two sweeps into one --out both exited 0, leaving NUL bytes in sweep.csv)
    out = tmp_path / "sw"
    seen = []

    def second_sweep_meanwhile(row: dict) -> None:
        if not seen:
            with pytest.raises(RrsError, match="in use by another running drive or sweep"):
                Sweep(scenario, {"stop.max_time": [1]}).run(out=out)
        seen.append(row["case"])

    Sweep(scenario, {"stop.max_time": [1, 2]}).run(out=out, on_row=second_sweep_meanwhile)
    assert seen == [0, 1]
    rows = read_csv(out / "sweep.csv")
    assert [r[0] for r in rows[1:]] == ["0", "1"]
    assert json.loads((out / "sweep.json").read_text())["done"] == 2
    assert not (out / ".rrs-drive.lock").exists()


def test_an_output_that_cannot_be_written_is_one_line_exit_2(tmp_path: Path, capsys) -> None:
    # (a read-only --out was an internal error, exit 1; a directory under a file is
    # unwritable for root too)
    (tmp_path / "file").write_text("")
    assert main(["sweep", str(SCENARIO), "--param", "stop.max_time=1",
                 "--out", str(tmp_path / "file" / "sw")]) == 2
    err = capsys.readouterr().err
    assert "cannot write there: Not a directory" in err and err.count("\n") == 1


def test_sigterm_ends_a_sweep_with_143_keeping_the_finished_rows(tmp_path: Path) -> None:
    import signal
    import subprocess
    import time

    out = tmp_path / "sw"
    proc = subprocess.Popen(
        [sys.executable, "-m", "rrscore.cli.main", "sweep", str(SCENARIO), "--param",
         "stop.max_time=" + ",".join(["60"] * 400), "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    end = time.monotonic() + 120
    while time.monotonic() < end:  # until a few rows are written
        if (out / "sweep.csv").is_file() and (out / "sweep.csv").read_text().count("\n") > 3:
            break
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err
    assert "interrupted; results so far were kept (SIGTERM)" in err
    rows = read_csv(out / "sweep.csv")
    assert 3 <= len(rows) - 1 < 400
    doc = json.loads((out / "sweep.json").read_text())
    assert doc["interrupted"] is True and doc["done"] == len(rows) - 1


def big_sweep_args(third: int) -> list[str]:
    """``--param`` options for 100 x 100 x ``third`` cases of a 0.2 s to 0.21 s drive."""
    return ["--param", "start.speed=" + ",".join(f"{v / 10:g}" for v in range(100)),
            "--param", "stop.max_time=" + ",".join(f"{0.2 + i * 1e-4:.4f}" for i in range(100)),
            "--param", "output.sample_interval="
            + ",".join(f"{0.5 + i * 0.01:.2f}" for i in range(third))]


def interrupt_big_sweep(out: Path, third: int, workers: int, sig: int,
                        rows: int = 20) -> tuple[int, str, float, float]:
    """Start ``rrs sweep`` of 10^4 x ``third`` cases, send ``sig`` once ``sweep.csv`` has
    ``rows`` rows; its exit status, stderr, seconds from the signal to its end, and its
    peak resident memory in MB (its workers' included)."""
    import os
    import subprocess
    import time

    err_path = out.parent / f"{out.name}.err"
    with open(err_path, "w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "rrscore.cli.main", "sweep", str(SCENARIO),
             *big_sweep_args(third), "--workers", str(workers), "--out", str(out)],
            stdout=subprocess.DEVNULL, stderr=err, stdin=subprocess.DEVNULL, cwd=out.parent)
    end = time.monotonic() + 180
    while time.monotonic() < end and proc.poll() is None:
        csv_file = out / "sweep.csv"
        if csv_file.is_file() and csv_file.read_bytes().count(b"\n") > rows:
            break
        time.sleep(0.05)
    assert proc.poll() is None, err_path.read_text()  # still running: a big sweep
    proc.send_signal(sig)
    signalled = time.monotonic()
    while True:  # (wait4 for the child's peak memory; a hang guard, not a speed test)
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() - signalled > 60:
            proc.kill()
            proc.wait()
            pytest.fail(f"the sweep did not end within 60 s of signal {sig}")
        time.sleep(0.05)
    proc.returncode = os.waitstatus_to_exitcode(status)  # (reaped here, not by Popen)
    return (proc.returncode, err_path.read_text(), time.monotonic() - signalled,
            usage.ru_maxrss / 1024)


@pytest.mark.parametrize("sig, status, workers", [("SIGINT", 130, 1), ("SIGTERM", 143, 2)])
def test_a_million_case_sweep_writes_at_once_and_a_signal_ends_it_keeping_whole_rows(
        tmp_path: Path, sig: str, status: int, workers: int) -> None:
    # (a 10^6-case sweep on two workers wrote no row in 60 s, used 2.6 GB and ignored
    # Ctrl-C once)
    import signal

    out = tmp_path / "sw"
    code, err, _, _ = interrupt_big_sweep(out, 100, workers, getattr(signal, sig))
    assert code == status, err
    assert err.strip() == f"rrs: interrupted; results so far were kept ({sig})", err
    data = (out / "sweep.csv").read_bytes()
    assert data.endswith(b"\n")
    rows = read_csv(out / "sweep.csv")
    assert all(len(r) == len(rows[0]) for r in rows)  # whole rows only
    cases = [int(r[0]) for r in rows[1:]]
    assert cases[0] == 0 and cases == sorted(set(cases))  # case order, none twice
    doc = json.loads((out / "sweep.json").read_text())
    assert doc["cases"] == 10**6 and doc["interrupted"] is True
    assert doc["done"] == len(cases) < 10**6 and doc["rows_file"] == "sweep.csv"
    assert "rows" not in doc  # (a million rows are sweep.csv's, not sweep.json's)


def test_a_sweeps_memory_does_not_grow_with_its_number_of_cases(tmp_path: Path) -> None:
    # both interrupted after their first rows: a sweep of 10^6 cases takes no more memory
    # than one of 10^4 (the cases' list and a future per case took gigabytes)
    import signal

    small = interrupt_big_sweep(tmp_path / "small", 1, 2, signal.SIGTERM)
    big = interrupt_big_sweep(tmp_path / "big", 100, 2, signal.SIGTERM)
    assert small[0] == big[0] == 143, (small[1], big[1])
    assert big[3] < small[3] + 50, (small[3], big[3])  # MB


def test_a_signal_lost_in_a_compile_ends_the_sweep_as_interrupted(tmp_path, monkeypatch):
    # a signal met while numba compiled surfaces as another error, the interruption noted
    # (rrs ends it as that interruption): sweep.json must say interrupted too
    from rrscore.model.errors import clear_interruptions, note_interruption
    from rrscore.run import sweep as sweep_module

    real = sweep_module.run_case

    def lost_signal(scenario, values, columns, out):
        if values.get("stop.max_time") == 3:
            note_interruption(KeyboardInterrupt())
            raise KeyError("(float64, float64)")
        return real(scenario, values, columns, out)

    monkeypatch.setattr(sweep_module, "run_case", lost_signal)
    scenario = rrscore.load_scenario(CONFIGS / "scenarios" / "simple_loco_level.toml")
    try:
        result = Sweep(scenario.with_values({"output.plots": False}),
                       {"stop.max_time": [1, 2, 3, 4]}).run(tmp_path / "sw", 1)
    finally:
        clear_interruptions()
    assert result.interrupted and result.done == 2
    assert json.loads((tmp_path / "sw" / "sweep.json").read_text())["interrupted"] is True
