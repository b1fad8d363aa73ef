"""Benchmark: how a big sweep starts and how much memory it takes. Runs ``rrs sweep``
on ``simple_loco_level`` (0.2 simulated seconds a case) over a grid of N cases (100
start speeds by 100 maximum times by N/10^4 sample intervals) in a child process,
measures the wall time until ``sweep.csv`` has its first row, lets it write ``--rows``
rows, sends SIGINT and prints
JSON: the time to the first row, the child's peak resident memory (``ru_maxrss``,
including its workers), its exit status and how long it took to end after the signal.
Run from the repository root (the ``rrscore`` imported is the one on PYTHONPATH):

    python benchmarks/bench_sweep_stream.py [--cases 100000] [--workers 1] [--rows 20]

It is a measurement, not a test: the figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCENARIO = Path(__file__).resolve().parents[1] / "configs" / "scenarios" / "simple_loco_level.toml"


def rows_in(path: Path) -> int:
    """Whole rows of a CSV written so far (its header not counted)."""
    try:
        return max(0, path.read_bytes().count(b"\n") - 1)
    except FileNotFoundError:
        return 0


def measure(cases: int, workers: int, rows: int, limit: float) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "sw"
        speeds = ",".join(f"{v / 10:g}" for v in range(100))
        times = ",".join(f"{0.2 + i * 1e-4:.4f}" for i in range(100))
        samples = ",".join(f"{0.5 + i * 0.01:.2f}" for i in range(max(1, cases // 10**4)))
        cmd = [sys.executable, "-m", "rrscore.cli.main", "sweep", str(SCENARIO),
               "--param", f"start.speed={speeds}", "--param", f"stop.max_time={times}",
               "--param", f"output.sample_interval={samples}",
               "--workers", str(workers), "--out", str(out)]
        t0 = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL, text=True)
        first = None
        while time.monotonic() - t0 < limit and proc.poll() is None:
            n = rows_in(out / "sweep.csv")
            if n and first is None:
                first = time.monotonic() - t0
            if n >= rows:
                break
            time.sleep(0.02)
        t_signal = time.monotonic()
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
        ended = time.monotonic() - t_signal
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return {"cases": cases, "workers": workers, "time_to_first_row_s": first,
                "rows_when_signalled": rows_in(out / "sweep.csv"),
                "exit_status": proc.returncode, "end_after_signal_s": round(ended, 2),
                "peak_rss_MB_children": usage.ru_maxrss / 1024,
                "stderr_last_line": err.strip().splitlines()[-1] if err.strip() else ""}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", type=int, default=100_000)
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--rows", type=int, default=20, help="rows to wait for before SIGINT")
    p.add_argument("--limit", type=float, default=120.0, help="seconds to wait at most")
    a = p.parse_args()
    print(json.dumps(measure(a.cases, a.workers, a.rows, a.limit)))


if __name__ == "__main__":
    main()
