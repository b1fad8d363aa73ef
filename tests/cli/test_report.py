"""``rrs report`` and ``--report`` (rrscore.cli.report): the report written after a drive,
a yard drive and a sweep, and their failures, each one line with its exit status."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import CONFIGS

from rrscore.cli.main import main

LEVEL = CONFIGS / "scenarios" / "simple_loco_level.toml"


def test_drive_with_report_writes_it_after_the_outputs(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["drive", str(LEVEL), "--out", str(out), "--max-time", "5", "--report"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == f"report in {out / 'report.html'}"
    assert (out / "report.html").stat().st_size > 500_000  # BokehJS inline
    assert "timeseries" in (out / "report.html").read_text(encoding="utf-8")


def test_a_yard_drive_with_report_writes_it(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["drive", str(CONFIGS / "yards" / "buffer_stop.toml"), "--out", str(out),
                 "--report"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"report in {out / 'report.html'}"
    assert "cuts" in (out / "report.html").read_text(encoding="utf-8")


def test_sweep_with_report_writes_it(tmp_path, capsys):
    assert main(["sweep", str(LEVEL), "--param", "stop.max_time=2,4", "--out", str(tmp_path),
                 "--report"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == \
        f"report in {tmp_path / 'report.html'}"
    assert (tmp_path / "report.html").is_file()


def test_report_of_a_drives_directory(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["drive", str(LEVEL), "--out", str(out), "--max-time", "5"]) == 0
    assert not (out / "report.html").exists()
    capsys.readouterr()
    assert main(["report", str(out)]) == 0
    assert capsys.readouterr().out == f"report in {out / 'report.html'}\n"


@pytest.mark.parametrize("make", ["missing", "empty"])
def test_report_of_a_directory_without_outputs_is_one_line(tmp_path, capsys, make):
    target = tmp_path / "nothing"
    if make == "empty":
        target.mkdir()
    assert main(["report", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"rrs: error: {target}: ")
    assert not (target / "report.html").exists()


def test_without_bokeh_report_is_refused_before_any_drive(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "bokeh", None)  # import bokeh raises ImportError
    out = tmp_path / "out"
    assert main(["drive", str(LEVEL), "--out", str(out), "--report"]) == 2
    err = capsys.readouterr().err
    assert err == ("rrs: error: report.html needs Bokeh, which is not installed; install "
                   "the report extra: pip install 'rrscore[report]'\n")
    assert not Path(out).exists()  # refused before the drive began
    assert main(["report", str(tmp_path)]) == 2
    assert "pip install 'rrscore[report]'" in capsys.readouterr().err


def test_a_drive_interrupted_with_report_gets_the_report_of_what_it_wrote(tmp_path):
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "rrscore.cli.main", "drive",
         str(CONFIGS / "scenarios" / "freight_50.toml"), "--out", str(out), "--report",
         "--set", "output.sample_interval='0.05 s'"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    series = out / "timeseries.csv"
    deadline = time.monotonic() + 240  # the first drive of an install compiles
    while time.monotonic() < deadline and proc.poll() is None:
        if series.is_file() and series.stat().st_size > 100_000:
            break
        time.sleep(0.1)
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert stderr.splitlines()[-1] == "rrs: interrupted; results so far were kept (SIGINT)"
    assert f"report in {out / 'report.html'}" in stdout.splitlines()
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "timeseries" in html
