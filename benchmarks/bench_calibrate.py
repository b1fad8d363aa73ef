"""Benchmark: ``rrs calibrate`` on sensor logs of 10^4, 10^5 and 10^6 rows.

Each log holds runs of the route ``configs/routes/sensor_line.toml``: a start from rest
at 100 m to level 5 (10 m/s, 0.3 m/s^2), a hit at every sensor with 10 ms of timing
noise (seeded), a stop command at the last sensor and the stop 100 m on. The whole
command is timed (reading the log, estimating, writing the model and the figure), in
this process after one small warm-up call that loads the compiled kernels. Run from the
repository root:

    python benchmarks/bench_calibrate.py [--rows 10000,100000,1000000]

It is a measurement, not a test: the figures depend on the machine and its load. The
last line is JSON with ``seconds`` and ``rows_per_s`` per size (a calibration has no
simulated time, so no real-time factor).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import platform
import tempfile
import time
from pathlib import Path

import numpy as np

from rrscore.calibration.sensors import load_layout
from rrscore.cli.main import main as rrs

ROUTE = Path(__file__).resolve().parents[1] / "configs" / "routes" / "sensor_line.toml"
START, SPEED, ACCELERATION, STOP = 100.0, 10.0, 0.3, 100.0


def write_log(path: Path, rows: int, seed: int = 0) -> None:
    """A log of about ``rows`` rows (whole runs)."""
    layout = load_layout(ROUTE)
    rng = np.random.default_rng(seed)
    ahead = [(n, x) for n, x in zip(layout.names, layout.positions, strict=True) if x > START]
    reach = SPEED * SPEED / (2.0 * ACCELERATION)  # metres to reach the level's speed

    def time_at(x: float) -> float:
        d = x - START
        return (math.sqrt(2.0 * d / ACCELERATION) if d <= reach
                else SPEED / ACCELERATION + (d - reach) / SPEED)

    lines = ["run,kind,sensor,time_s,level,position_m"]
    run = 0
    while len(lines) <= rows:
        run += 1
        noise = rng.normal(0.0, 0.01, len(ahead))
        lines.append(f"r{run},command,,0.000,5,{START:.3f}")
        times = [time_at(x) + e for (_, x), e in zip(ahead, noise, strict=True)]
        lines += [f"r{run},hit,{n},{t:.3f},," for (n, _), t in zip(ahead, times, strict=True)]
        last_name, last_x = ahead[-1]
        lines.append(f"r{run},command,{last_name},{times[-1]:.3f},0,")
        lines.append(f"r{run},stop,,{times[-1] + 2.0 * STOP / SPEED:.3f},,{last_x + STOP:.3f}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def calibrate(log: Path, out: Path) -> float:
    """Wall time of ``rrs calibrate`` on ``log``."""
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        status = rrs(["calibrate", str(log), "--route", str(ROUTE), "--out", str(out)])
    wall = time.perf_counter() - t0
    assert status == 0, f"rrs calibrate exited {status}"
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="10000,100000,1000000",
                        help="log sizes, comma-separated")
    args = parser.parse_args()
    sizes = [int(float(s)) for s in args.rows.split(",")]
    cases = []
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        write_log(d / "warm.csv", 200)
        calibrate(d / "warm.csv", d / "warm.toml")  # loads (or compiles) the kernels
        for n in sizes:
            log = d / f"log{n}.csv"
            write_log(log, n)
            rows = sum(1 for _ in log.open(encoding="utf-8")) - 1
            wall = calibrate(log, d / f"model{n}.toml")
            cases.append({"rows": rows, "seconds": round(wall, 2),
                          "rows_per_s": round(rows / wall)})
            print(f"{rows} rows: {wall:.2f} s ({rows / wall:,.0f} rows/s)", flush=True)
    print(json.dumps({"benchmark": "calibrate", "cases": cases,
                      "python": platform.python_version(), "machine": platform.machine()}))


if __name__ == "__main__":
    main()
