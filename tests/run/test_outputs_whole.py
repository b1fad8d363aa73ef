"""Every output of a drive is whole or absent, whatever ends it: a file size limit reached
at any point (as a full disk would be), a signal while the end-of-drive outputs are
written (it waits for them; a second cuts them off), a signal at a random moment."""

from __future__ import annotations

import csv
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import CONFIGS

DEMO = CONFIGS / "scenarios" / "freight_50.toml"
#: The demo's first ten minutes, sampled every 0.1 s: about 6,000 rows, 1 MB of CSV.
SHORT = ("--max-time", "10 min", "--set", "output.sample_interval='0.1 s'")


def rrs_drive(out: Path, *extra: str, limit: int | None = None,
              start: bool = False) -> subprocess.CompletedProcess | subprocess.Popen:
    """``rrs drive`` of the demo into ``out`` as a child process, its files limited to
    ``limit`` bytes each (RLIMIT_FSIZE: a write beyond it fails as on a full disk)."""
    def limited() -> None:
        import resource
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    env = {k: v for k, v in os.environ.items() if k != "RRS_PLUGIN_PATH"}
    args = [sys.executable, "-m", "rrscore.cli.main", "drive", str(DEMO), "--out", str(out),
            *SHORT, *extra]
    if start:
        return subprocess.Popen(args, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=600,
                          preexec_fn=limited if limit is not None else None)


def assert_whole_or_absent(out: Path) -> dict | None:
    """Every file in ``out`` whole: CSVs in whole rows of their header's width (or empty),
    images not empty, no temporary file left; returns the summary (None: absent)."""
    if not out.exists():
        return None
    for path in out.iterdir():
        assert not path.name.endswith(".tmp"), f"{path.name} left behind"
        data = path.read_bytes()
        if path.suffix == ".csv":
            if not data:
                continue
            text = data.decode("utf-8")
            assert text.endswith("\n"), f"{path.name} ends in a torn row"
            rows = list(csv.reader(text.splitlines()))
            for row in rows[1:]:
                assert len(row) == len(rows[0]), f"{path.name}: a row of {len(row)} values"
        elif path.suffix == ".png":
            assert data[:8] == b"\x89PNG\r\n\x1a\n" and data.endswith(b"IEND\xaeB`\x82"), \
                f"{path.name} is not a whole image"
    summary = out / "summary.json"
    return json.loads(summary.read_text()) if summary.exists() else None


@pytest.mark.skipif(sys.platform == "win32", reason="no RLIMIT_FSIZE (resource is Unix's)")
def test_a_file_size_limit_at_any_point_leaves_every_output_whole_or_absent(tmp_path):
    # limits from a few hundred bytes (the resolved scenario, the headers) to past the
    # whole time series, some of them random
    rng = random.Random(50)
    limits = [5, 300, 3_000, 30_000, 300_000, 3_000_000,
              *(int(10 ** rng.uniform(2.5, 6.3)) for _ in range(3))]
    # compiled and cached first, without a limit (numba's cache is a file too)
    assert rrs_drive(tmp_path / "unlimited").returncode == 0
    for k, limit in enumerate(limits):
        out = tmp_path / f"out{k}"
        proc = rrs_drive(out, limit=limit)
        assert "Traceback" not in proc.stderr
        assert proc.returncode in (0, 1, 2), (limit, proc.stderr)
        if proc.returncode:
            assert "rrs: error: output" in proc.stderr, (limit, proc.stderr)
        summary = assert_whole_or_absent(out)
        if proc.returncode == 0:
            assert summary is not None and summary["stop_reason"] == "max_time"


def plugin_signalling_at_the_end(directory: Path, signals: int) -> Path:
    """A plugin that sends its own process ``signals`` SIGTERMs in ``rrs_drive_end``, before
    rrscore's plots and summary are written (plugins are called last registered first)."""
    directory.mkdir()
    (directory / "signaller.py").write_text(
        "import os\nimport signal\n\nimport rrscore\n\n\n@rrscore.hookimpl\n"
        "def rrs_drive_end(drive, result):\n"
        f"    for _ in range({signals}):\n"
        "        os.kill(os.getpid(), signal.SIGTERM)\n")
    return directory


def test_a_signal_while_the_outputs_are_written_waits_for_them(tmp_path):
    plugins = plugin_signalling_at_the_end(tmp_path / "plugins", 1)
    proc = rrs_drive(tmp_path / "out", "--plugins", str(plugins))
    assert proc.returncode == 143, proc.stderr
    assert "interrupted; results so far were kept (SIGTERM)" in proc.stderr
    summary = assert_whole_or_absent(tmp_path / "out")
    assert summary is not None and summary["stop_reason"] == "max_time"
    for name in ("speed.png", "force_envelope.png", "timeseries.csv", "events.csv"):
        assert (tmp_path / "out" / name).stat().st_size > 0
    rows = (tmp_path / "out" / "timeseries.csv").read_text().count("\n")
    assert rows == 6002  # the header and a row every 0.1 s from 0 to 600 s


def test_a_second_signal_cuts_the_outputs_off_leaving_each_whole_or_absent(tmp_path):
    plugins = plugin_signalling_at_the_end(tmp_path / "plugins", 2)
    proc = rrs_drive(tmp_path / "out", "--plugins", str(plugins))
    assert proc.returncode == 143, proc.stderr
    assert "Traceback" not in proc.stderr
    assert assert_whole_or_absent(tmp_path / "out") is None  # cut off before the summary
    assert not (tmp_path / "out" / "speed.png").exists()
    # the time series was closed first of the end-of-drive outputs: every row is there
    assert (tmp_path / "out" / "timeseries.csv").read_text().count("\n") == 6002


def test_a_signal_at_a_random_moment_leaves_every_output_whole_or_absent(tmp_path):
    rng = random.Random(143)
    for k in range(6):
        out = tmp_path / f"out{k}"
        proc = rrs_drive(out, start=True)
        time.sleep(rng.uniform(0.5, 6.0))  # from start-up to after the end, on most machines
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=300)
        assert "Traceback" not in err
        # 143: the signal ended the drive or waited for its outputs; 0: done before it;
        # -15: it came before rrs set its handlers (nothing written) or after (all done)
        assert proc.returncode in (0, 143, -signal.SIGTERM), err
        summary = assert_whole_or_absent(out)
        if proc.returncode == 0 or (proc.returncode < 0 and out.exists()):
            assert summary is not None and summary["stop_reason"] == "max_time"
        if proc.returncode == 143 and (out / "scenario.resolved.toml").exists():
            assert summary is not None  # (a drive ended by a signal still writes one)
