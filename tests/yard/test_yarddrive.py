"""A yard drive's run lifecycle (rrscore.yard.yarddrive, on rrscore.run.drive.Lifecycle):
the lifecycle hooks every drive calls, a plugin failing in them named, the no-progress
guard, a full disk as the output writer's failure with every file whole or absent, and a
coupler model raising while the yard is set up named."""

from __future__ import annotations

import csv
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CONFIGS
from run.test_outputs_whole import assert_whole_or_absent

from rrscore.model.errors import PluginError
from rrscore.yard.yard import load_yard
from rrscore.yard.yarddrive import drive_yard

YARDS = CONFIGS / "yards"
BUFFER_STOP = YARDS / "buffer_stop.toml"  # three cars into a buffer stop: 26.6 s, 2 kinds

#: A plugin on every lifecycle hook that counts its calls and adds the counts to the
#: summary (plugins may, before summary.json is written).
COUNTING_PLUGIN = '''
import rrscore


@rrscore.hookimpl
def rrs_drive_start(drive):
    drive.store["counting"] = {"start": 1, "sample": 0, "rows": 0, "event": 0,
                               "columns": list(drive.columns), "kinds": [], "first": None}


@rrscore.hookimpl
def rrs_sample(drive, t, row):
    seen = drive.store["counting"]
    seen["sample"] += 1
    if seen["first"] is None:
        seen["first"] = row


@rrscore.hookimpl
def rrs_sample_rows(drive, t, rows):
    drive.store["counting"]["rows"] += len(rows)


@rrscore.hookimpl
def rrs_event(drive, event):
    drive.store["counting"]["event"] += 1
    drive.store["counting"]["kinds"].append([event.kind, event.where])


@rrscore.hookimpl
def rrs_drive_end(drive, result):
    result.summary["counting"] = drive.store["counting"]
'''


def plugin_dir(tmp_path: Path, name: str, source: str) -> Path:
    directory = tmp_path / "plugins"
    directory.mkdir()
    (directory / f"{name}.py").write_text(source)
    return directory


def rrs(*args: str | Path, limit: int | None = None, cwd: Path | None = None
        ) -> subprocess.CompletedProcess:
    """``rrs`` as a child process, its files limited to ``limit`` bytes each
    (RLIMIT_FSIZE: a write beyond it fails as on a full disk)."""
    def limited() -> None:
        import resource
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    env = {k: v for k, v in os.environ.items() if k != "RRS_PLUGIN_PATH"}
    return subprocess.run([sys.executable, "-m", "rrscore.cli.main", *map(str, args)],
                           env=env, capture_output=True, text=True, timeout=600, cwd=cwd,
                           preexec_fn=limited if limit is not None else None)


def rows(path: Path) -> list[list[str]]:
    return list(csv.reader(path.read_text().splitlines()))[1:]


def test_a_yard_drive_calls_every_lifecycle_hook(tmp_path):
    plugins = plugin_dir(tmp_path, "counting", COUNTING_PLUGIN)
    scenario = load_yard(BUFFER_STOP, plugin_dirs=[plugins])
    result = drive_yard(scenario, tmp_path / "out")
    seen = json.loads((tmp_path / "out" / "summary.json").read_text())["counting"]
    positions = rows(tmp_path / "out" / "positions.csv")  # one cut: a row per sample
    events = rows(tmp_path / "out" / "events.csv")
    assert seen["start"] == 1 and result.summary["counting"] is not None
    assert seen["sample"] == seen["rows"] == len(positions) > 20
    assert seen["event"] == len(events) > 0
    assert [k for k, _ in seen["kinds"]] == [e[1] for e in events]
    assert all(where.startswith("cut 'three cars' vehicle") for _, where in seen["kinds"])
    assert seen["columns"] == ["time_s", "three cars.x_m", "three cars.y_m",
                               "three cars.speed_mps"]
    # the first row: t = 0, the front at x = 450 m on the straight leg, at 2 m/s
    assert seen["first"] == pytest.approx([0.0, float(positions[0][6]),
                                           float(positions[0][7]), 2.0])
    # the train's own output writers are not called for a yard
    assert not (tmp_path / "out" / "timeseries.csv").exists()
    assert not (tmp_path / "out" / "scenario.resolved.toml").exists()


def test_a_plugin_raising_in_a_yard_drive_is_named_and_the_outputs_are_kept(tmp_path):
    plugins = plugin_dir(tmp_path, "fussy", '''
import rrscore


@rrscore.hookimpl
def rrs_event(drive, event):
    raise ZeroDivisionError("fussy about " + event.kind)
''')
    scenario = load_yard(BUFFER_STOP, plugin_dirs=[plugins])
    with pytest.raises(PluginError) as caught:
        drive_yard(scenario, tmp_path / "api")
    message = str(caught.value)
    assert message.startswith("plugin 'fussy@"), message
    assert "(rrs_event) raised ZeroDivisionError: fussy about buffer stop, at t = 26.516 s" \
        in message
    proc = rrs("drive", BUFFER_STOP, "--out", tmp_path / "out", "--plugins", plugins)
    assert proc.returncode == 1, proc.stderr
    line = proc.stderr.strip()
    assert len(line.splitlines()) == 1 and "Traceback" not in line, line
    assert "plugin 'fussy@" in line and "(rrs_event) raised ZeroDivisionError" in line
    summary = assert_whole_or_absent(tmp_path / "out")
    assert summary is not None and summary["stop_reason"] == "error"
    assert "plugin 'fussy@" in summary["error"]
    for name in ("events.csv", "positions.csv", "plan.png", "yard.resolved.toml"):
        assert (tmp_path / "out" / name).stat().st_size > 0


def test_a_yard_whose_time_stands_still_stops_with_no_progress(tmp_path):
    # 1e-12 s samples over 1 ms are within the row limit (1e9), but below the run's
    # resolution of time (it steps to within 1e-12 s of a target): no step is taken
    scenario = load_yard(BUFFER_STOP).with_values({"stop.max_time": "1 ms",
                                                   "output.sample_interval": "1e-12 s"})
    result = drive_yard(scenario, tmp_path / "api")
    assert result.summary["stop_reason"] == "no progress"
    assert result.summary["error"].startswith("no progress in simulated time at t = 0.000000 s")
    proc = rrs("drive", BUFFER_STOP, "--out", tmp_path / "out", "--set", "stop.max_time='1 ms'",
               "--set", "output.sample_interval='1e-12 s'")
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.startswith("rrs: error: drive ended (no progress): no progress in "
                                  "simulated time"), proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert assert_whole_or_absent(tmp_path / "out")["stop_reason"] == "no progress"


@pytest.mark.skipif(sys.platform == "win32", reason="no RLIMIT_FSIZE (resource is Unix's)")
@pytest.mark.parametrize("limit, failing", [(50, "yard.resolved.toml"),
                                            (5_000, "positions.csv"),
                                            (30_000, "plan.png")])
def test_a_full_disk_in_a_yard_drive_is_the_output_writers_failure(tmp_path, limit, failing):
    # sampled every 0.1 s, the files are: yard.resolved.toml 3.5 kB at the start,
    # events.csv 0.4 kB and positions.csv 20 kB as it runs (handed to the system in
    # batches, the last as the drive ends), summary.json 0.7 kB and plan.png 37 kB at
    # the end; a limit below 50 bytes is an unwritable output directory (the lock file)
    out = tmp_path / "out"
    proc = rrs("drive", BUFFER_STOP, "--out", out, "--set", "output.sample_interval='0.1 s'",
               limit=limit)
    assert proc.returncode == 1, proc.stderr
    line = proc.stderr.strip()
    assert len(line.splitlines()) == 1, line
    assert line.startswith(f"rrs: error: output writer failed: {failing}: File too large, "
                           "at t = "), line
    summary = assert_whole_or_absent(out)
    if limit < 1_000:  # the summary (0.7 kB) does not fit either: absent
        assert summary is None
    else:  # the drive ran to its end; the summary says how it ended
        assert summary is not None and summary["stop_reason"] == "standstill"


def test_a_coupler_model_raising_as_a_yard_is_set_up_is_named(tmp_path):
    plugins = plugin_dir(tmp_path, "brittle", '''
import rrscore
from rrscore.plugins.couplers import Linear


class Brittle(Linear):
    type_name = "brittle"
    description = "a linear coupler whose free range cannot be had"

    def free_range(self):
        return 1 / 0


@rrscore.hookimpl
def rrs_coupler_models():
    return [Brittle]
''')
    yard = tmp_path / "yard.toml"
    yard.write_text(BUFFER_STOP.read_text().replace(
        '"../networks/junction.toml"', repr(str(CONFIGS / "networks" / "junction.toml")))
        .replace('"../vehicles/', f'"{CONFIGS}/vehicles/')
        .replace("train = { vehicles", 'train = { coupling = { model = "brittle" }, vehicles'))
    proc = rrs("drive", yard, "--out", tmp_path / "out", "--plugins", plugins)
    assert proc.returncode == 2, proc.stderr
    line = proc.stderr.strip()
    assert len(line.splitlines()) == 1 and "Traceback" not in line, line
    assert "coupler model 'brittle' (brittle@" in line
    assert "in free_range(), for cut 'three cars' raised ZeroDivisionError: division by " \
        "zero, during set-up" in line


def test_a_yard_drive_asking_for_endless_rows_is_refused_before_it_runs(tmp_path):
    # it ran on at t = 0 (130,875 rows in 6 s) until killed
    proc = rrs("drive", BUFFER_STOP, "--out", tmp_path / "out",
               "--set", "output.sample_interval='1e-300 s'")
    assert proc.returncode == 2, proc.stderr
    line = proc.stderr.strip()
    assert len(line.splitlines()) == 1 and "Traceback" not in line, line
    assert "buffer_stop.toml: yard.output.sample_interval: found 1e-300 s, which over " \
        "stop.max_time = 300 s makes 3e+302 rows of positions.csv" in line
    assert not (tmp_path / "out").exists()


def test_a_signal_while_a_yards_outputs_are_written_waits_for_them(tmp_path):
    # the plugin's rrs_drive_end comes before the summary and the plan are written
    plugins = plugin_dir(tmp_path, "signaller", '''
import os
import signal

import rrscore


@rrscore.hookimpl
def rrs_drive_end(drive, result):
    os.kill(os.getpid(), signal.SIGTERM)
''')
    proc = rrs("drive", BUFFER_STOP, "--out", tmp_path / "out", "--plugins", plugins)
    assert proc.returncode == 143, proc.stderr
    assert "interrupted; results so far were kept (SIGTERM)" in proc.stderr
    summary = assert_whole_or_absent(tmp_path / "out")
    assert summary is not None and summary["stop_reason"] == "standstill"
    assert (tmp_path / "out" / "plan.png").stat().st_size > 0


def test_a_yard_scenario_pickles_without_its_plugins_and_drives_the_same():
    scenario = load_yard(BUFFER_STOP)
    copy = pickle.loads(pickle.dumps(scenario))
    assert copy.registry is None  # (plugin modules do not travel: loaded again)
    ours, theirs = drive_yard(scenario, None).summary, drive_yard(copy, None).summary
    for key in ("stop_reason", "sim_time_s", "events", "max_speed_mps", "cut_reports"):
        assert theirs[key] == ours[key]


def test_plan_legend_names_every_cut_each_in_its_own_colour() -> None:
    # The hump: 20 cuts, the hump engine and 3 standing cuts, 24 in all (the plan once
    # reused tab20's colours from the 21st); the engine is the one black cut, labelled so.
    from rrscore.yard.yarddrive import LOCOMOTIVE_COLOUR, plan_legend

    sc = load_yard(YARDS / "hump_20_cuts.toml")
    legend = plan_legend(sc)
    labels = [label for label, _ in legend]
    assert labels == [f"{n} (locomotive)" if n == "hump engine" else n
                      for n in sc.cut_names]
    assert len(sc.cut_names) == 24
    colours = [c for _, c in legend]
    assert len(set(colours)) == len(colours)
    assert [c for _, c in legend if c == LOCOMOTIVE_COLOUR] == [LOCOMOTIVE_COLOUR]
