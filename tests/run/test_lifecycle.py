"""The lifecycle hooks as a drive calls them: pluggy's order and arguments, and a plugin
that raises named while the other plugins keep what the drive wrote."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import CONFIGS, make_scenario

import rrscore
from rrscore import Drive
from rrscore.model.errors import OutputError, PluginError
from rrscore.run.plugins import load_registry
from rrscore.run.scenario import load_scenario

LOCO = {"config": "vehicles/simple_loco.toml"}
FULL = [{"at_time": 0.0, "set": {"traction_level": 1.0}}]


class Hooks:
    """A plugin object named ``name`` whose hook implementations are given as methods."""

    def __init__(self, name: str, **hooks) -> None:
        self.__name__ = name
        for hook, function in hooks.items():
            setattr(self, hook, rrscore.hookimpl(function))


def drive_with(*plugins: Hooks, max_time: float = 6.0) -> Drive:
    registry = load_registry(extra=plugins, use_entry_points=False)
    return Drive(make_scenario([LOCO], registry=registry, driver=FULL,
                               stop={"max_time": max_time}))


def raise_from(t0: float, exc: BaseException):
    def rrs_sample(t):  # takes only the argument it names, as pluggy allows
        if t >= t0:
            raise exc
    return rrs_sample


def test_a_plugin_raising_in_rrs_sample_is_named_and_the_drive_keeps_what_it_wrote(
        tmp_path: Path) -> None:
    d = drive_with(Hooks("bad_sampler", rrs_sample=raise_from(3.0, ValueError("oops"))))
    with pytest.raises(PluginError) as info:
        d.run(tmp_path)
    assert str(info.value) == ("plugin 'bad_sampler' (rrs_sample) raised ValueError: oops, "
                               "at t = 3.000 s")
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["stop_reason"] == "error"
    assert summary["error"] == str(info.value)
    # the other writers got every row up to the failing one, that one too, and no row
    # twice; then the state where the run stands (the loop may have gone past 3 s)
    with open(tmp_path / "timeseries.csv", newline="") as fh:
        times = [float(r["time_s"]) for r in csv.DictReader(fh)]
    assert times[:4] == [0.0, 1.0, 2.0, 3.0]
    assert times[4:] == ([] if summary["sim_time_s"] == 3.0 else [summary["sim_time_s"]])
    assert 3.0 <= summary["sim_time_s"] < 4.0


def test_a_plugin_that_raised_gets_no_more_rows_but_still_the_end_of_the_drive() -> None:
    seen: list[float] = []
    ended: list[str] = []

    def rrs_sample(t):
        seen.append(t)
        if t >= 2.0:
            raise ValueError("no")

    d = drive_with(Hooks("flaky", rrs_sample=rrs_sample,
                         rrs_drive_end=lambda result: ended.append(result.summary["stop_reason"])))
    with pytest.raises(PluginError, match="'flaky'"):
        d.run()
    assert seen == [0.0, 1.0, 2.0]
    assert ended == ["error"]


def test_every_plugin_gets_the_end_of_the_drive_when_one_fails_there(tmp_path: Path) -> None:
    ended: list[str] = []

    def failing_end(drive):
        raise RuntimeError("cannot close")

    d = drive_with(Hooks("first", rrs_drive_end=lambda drive: ended.append("first")),
                   Hooks("second", rrs_drive_end=failing_end),
                   Hooks("third", rrs_drive_end=lambda drive: ended.append("third")))
    with pytest.raises(PluginError) as info:
        d.run(tmp_path)
    assert str(info.value) == ("plugin 'second' (rrs_drive_end) raised RuntimeError: "
                               "cannot close, at t = 6.000 s")
    assert info.value.during_drive  # the CLI's exit status 1: the drive ran
    assert sorted(ended) == ["first", "third"]
    assert json.loads((tmp_path / "summary.json").read_text())["stop_reason"] == "max_time"


def test_hooks_are_called_in_pluggys_order_with_the_arguments_each_names() -> None:
    calls: list[tuple] = []
    plugins = [Hooks(f"p{i}", rrs_event=lambda event, i=i: calls.append((i, "event", event.t)),
                     rrs_sample=lambda drive, row, t, i=i: calls.append((i, "row", t, row[0])))
               for i in range(3)]
    d = drive_with(*plugins, max_time=1.0)
    d.run()
    drive_calls = list(calls)
    # pluggy itself, on the same registry: the last registered first
    calls.clear()
    hook = d.scenario.registry.hook
    hook.rrs_sample(drive=d, t=0.0, row=[0.0])
    hook.rrs_event(drive=d, event=d.events[0])
    assert [c[0] for c in calls] == [2, 1, 0, 2, 1, 0]
    assert [c[0] for c in drive_calls] == [2, 1, 0] * (len(drive_calls) // 3)
    rows = [c[2:] for c in drive_calls if c[1] == "row"]
    assert rows == [(0.0, 0.0)] * 3 + [(1.0, 1.0)] * 3
    assert [c[2] for c in drive_calls if c[1] == "event"] == [e.t for e in d.events for _ in "abc"]


def test_a_hook_wrapper_is_honoured_and_the_plugin_that_raised_is_found() -> None:
    wrapped: list[float] = []

    class Wrapper:
        __name__ = "wrapper"

        @rrscore.hookimpl(wrapper=True)
        def rrs_sample(self, t):
            wrapped.append(t)
            return (yield)

    d = drive_with(Wrapper(), Hooks("bad", rrs_sample=raise_from(2.0, KeyError("k"))))
    with pytest.raises(PluginError) as info:
        d.run()
    assert str(info.value) == "plugin 'bad' (rrs_sample) raised KeyError: 'k', at t = 2.000 s"
    # the rows before, the failing one, and the final row without the plugin that raised
    end = d.run_.t
    assert wrapped == [0.0, 1.0, 2.0] + ([end] if end > 2.0 else [])


def test_an_interruption_in_a_hook_ends_the_drive_as_interrupted(tmp_path: Path) -> None:
    pressed: list[float] = []

    def rrs_sample(t):  # Ctrl-C pressed while this plugin runs, once
        if t >= 2.0 and not pressed:
            pressed.append(t)
            raise KeyboardInterrupt

    d = drive_with(Hooks("slow_writer", rrs_sample=rrs_sample))
    with pytest.raises(KeyboardInterrupt):
        d.run(tmp_path)
    assert json.loads((tmp_path / "summary.json").read_text())["stop_reason"] == "interrupted"


def test_an_oserror_in_a_hook_is_an_output_writer_failure() -> None:
    def rrs_event(event):
        raise PermissionError(13, "Permission denied", "/nowhere/log.csv")

    d = drive_with(Hooks("logger", rrs_event=rrs_event))
    with pytest.raises(OutputError) as info:
        d.run()
    assert str(info.value) == ("output writer failed: /nowhere/log.csv: Permission denied, "
                               "at t = 0.000 s")


def test_rrs_drive_names_a_failing_plugin_without_a_traceback(tmp_path: Path) -> None:
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "bad_sampler.py").write_text(
        "import rrscore\n\n@rrscore.hookimpl\ndef rrs_sample(t):\n"
        "    if t >= 3.0:\n        raise ValueError('oops')\n")
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "rrscore.cli.main", "drive",
         str(CONFIGS / "scenarios" / "simple_loco_level.toml"), "--out", str(out),
         "--max-time", "10", "--plugins", str(plugins)],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert (f"plugin 'bad_sampler@{plugins}' (rrs_sample) raised ValueError: oops, "
            "at t = 3.000 s") in proc.stderr
    assert json.loads((out / "summary.json").read_text())["stop_reason"] == "error"


def test_rows_come_to_rrs_sample_rows_in_blocks_that_make_up_the_time_series(
        tmp_path) -> None:
    blocks: list[tuple] = []

    def rrs_sample_rows(drive, t, rows):
        blocks.append((t.copy(), rows.copy(), drive.sample_states().copy(),
                       drive.sample_coupler_forces().copy()))

    # the rigid train of the shipped scenario: a control step's samples in the loop
    registry = load_registry(extra=[Hooks("blocks", rrs_sample_rows=rrs_sample_rows)],
                             use_entry_points=False)
    scenario = load_scenario(CONFIGS / "scenarios" / "rigid_40km.toml", registry)
    d = Drive(scenario.with_values({"stop.max_time": "300 s"}))
    result = d.run()
    system = d.run_.system
    rows = np.concatenate([b[1] for b in blocks])
    series = np.column_stack([result.series[c] for c in d.columns])
    np.testing.assert_array_equal(rows, series)
    np.testing.assert_array_equal(np.concatenate([b[0] for b in blocks]), series[:, 0])
    # the compiled loop hands its rows on together, far fewer blocks than rows
    assert len(blocks) < len(rows) / 5, (len(blocks), len(rows))
    # each block's states are the states at its rows: the lead's position and speed
    for t, block, states, _ in blocks:
        assert states.shape == (len(t), system.size)
        np.testing.assert_array_equal(states[:, system.layout["body.x"].start], block[:, 1])
        np.testing.assert_array_equal(states[:, system.layout["body.v"].start], block[:, 2])
    # the coupling forces a plugin reads at the rows are those a drive writes there (a
    # rigid train works them out only where someone reads them)
    forces = np.concatenate([b[3] for b in blocks])
    assert forces.shape == (len(rows), system.lay.nc)
    assert np.all(forces[:, 0] > 0.0) and forces[0, 0] > 4e5  # (the locomotives pull)
    Drive(load_scenario(CONFIGS / "scenarios" / "rigid_40km.toml").with_values(
        {"stop.max_time": "300 s", "output.plots": False})).run(tmp_path)
    written = np.genfromtxt(tmp_path / "coupler_forces.csv", delimiter=",", skip_header=1)
    np.testing.assert_array_equal(written[:, 0], series[:, 0])
    np.testing.assert_allclose(written[:, 1:], forces, rtol=1e-9)  # (as the CSV rounds)


def test_rrs_sample_sees_each_row_of_a_block_with_its_state() -> None:
    single: list[tuple] = []
    blocks: list[np.ndarray] = []

    def rrs_sample(drive, t, row):
        single.append((t, list(row), drive.sample_state.copy()))

    def rrs_sample_rows(drive, rows):
        blocks.append(rows.copy())

    d = drive_with(Hooks("both", rrs_sample=rrs_sample, rrs_sample_rows=rrs_sample_rows),
                   max_time=60.0)
    d.run()
    rows = np.concatenate(blocks)
    assert [s[1] for s in single] == rows.tolist()
    assert [s[0] for s in single] == rows[:, 0].tolist()
    sx = d.run_.system.layout["body.x"].start
    assert [s[2][sx] for s in single] == rows[:, 1].tolist()


def test_a_plugin_raising_in_rrs_sample_rows_is_named_and_the_timeseries_is_kept(
        tmp_path: Path) -> None:
    def rrs_sample_rows(t):
        if t[-1] >= 3.0:
            raise ValueError("full")

    d = drive_with(Hooks("bad_block", rrs_sample_rows=rrs_sample_rows))
    with pytest.raises(PluginError) as info:
        d.run(tmp_path)
    assert "plugin 'bad_block' (rrs_sample_rows) raised ValueError: full" in str(info.value)
    with open(tmp_path / "timeseries.csv", newline="") as fh:
        times = [float(r["time_s"]) for r in csv.DictReader(fh)]
    assert times[:4] == [0.0, 1.0, 2.0, 3.0]  # the writers had the block it failed on
