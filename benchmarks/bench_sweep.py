"""Benchmark: a sweep of 64 short drives on 1 and 2 local workers, and on a local Dask
cluster of 2 worker processes when dask.distributed is installed.

The sweep: SimpleLoco on level track (``simple_loco_level``), a grid of 8 start speeds
(0 to 70 km/h) by 8 maximum tractive efforts (360 to 500 kN), 60 simulated seconds
each. Checks that every runner gives the same table, then prints the wall times, the
speed-up of 2 workers over 1 and, on the last line, JSON with ``real_time_factor``
(simulated seconds of all drives per wall second of the 2-worker run). Run from the
repository root:

    python benchmarks/bench_sweep.py [--max-time 60] [--repeat 3] [--no-dask]

It is a measurement, not a test: the figures depend on the machine and its load. The
speed-up can only approach 2 when two cores are free, so the benchmark also measures
how many cores two busy-loop processes get, before and after the sweeps
(``cores_free_before``, ``cores_free_after``). Each local runner runs the sweep
``--repeat`` times (default 3), the two alternating so that a busy spell of the machine
falls on both: ``speedup_2_workers`` is the best 1-worker wall time over the best
2-worker one, as ``bench_drive.py`` keeps the best of its repeats, and
``speedup_2_workers_median`` the same of the medians.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path

import rrscore
from rrscore.run.sweep import Sweep

SCENARIO = Path(__file__).resolve().parents[1] / "configs" / "scenarios" / "simple_loco_level.toml"


def make_sweep(max_time: float) -> Sweep:
    """The 8 x 8 grid of start speed and maximum tractive effort."""
    scenario = rrscore.load_scenario(SCENARIO).with_values({"stop.max_time": max_time})
    return Sweep(scenario, {
        "start.speed": [f"{v} km/h" for v in range(0, 80, 10)],
        "train.vehicles[0].config.params.F_max": [f"{f} kN" for f in range(360, 520, 20)],
    })


def timed(sweep: Sweep, **run) -> tuple[float, list[dict], float]:
    """Wall time, rows and the processor time of the cases (summed over workers)."""
    t0 = time.perf_counter()
    result = sweep.run(**run)
    return time.perf_counter() - t0, result.rows, result.cpu_time_s


def _busy(n: int) -> float:
    t0 = time.perf_counter()
    x = 0
    for i in range(n):
        x += i % 7
    return time.perf_counter() - t0


def machine_parallelism(n: int = 20_000_000) -> float:
    """How many cores the machine gives two processes now: twice the time of one busy
    loop alone over the time of two at once (2.0 on two free cores)."""
    from concurrent.futures import ProcessPoolExecutor

    from rrscore.run.sweep import _context

    with ProcessPoolExecutor(2, mp_context=_context()) as pool:
        list(pool.map(_busy, [1000, 1000]))  # start both workers first
        alone = pool.submit(_busy, n).result()
        t0 = time.perf_counter()
        list(pool.map(_busy, [n, n]))
        both = time.perf_counter() - t0
    return 2.0 * alone / both


def load() -> float:
    """The machine's 1-minute load average: other work competing for the cores."""
    return os.getloadavg()[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--max-time", type=float, default=60.0, help="simulated s per drive")
    parser.add_argument("--repeat", type=int, default=3,
                        help="runs of each local runner (best and median reported)")
    parser.add_argument("--no-dask", action="store_true", help="skip the Dask cluster")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error(f"--repeat: found {args.repeat}, expected 1 or more")

    sweep = make_sweep(args.max_time)
    n = len(sweep.cases())
    load_before = load()
    cores_before = machine_parallelism()
    print(f"the machine gives 2 processes {cores_before:.2f} cores (busy-loop check)",
          flush=True)
    # numba's first use in a process (about 0.7 s) out of the 1-worker time: forked
    # workers start with it done
    rrscore.Drive(sweep.scenario).run()
    runs: dict[int, list[tuple[float, list[dict], float]]] = {1: [], 2: []}
    for _ in range(args.repeat):  # alternating: a busy spell of the machine hits both
        for workers in (1, 2):
            runs[workers].append(timed(sweep, workers=workers))
    rows_1 = runs[1][0][1]
    assert not any(r["error"] for r in rows_1), [r["error"] for r in rows_1 if r["error"]]
    assert all(rows == rows_1 for w in runs for _, rows, _ in runs[w]), \
        "the runs gave different tables"
    walls = {w: sorted(wall for wall, _, _ in runs[w]) for w in runs}
    wall_1, wall_2 = walls[1][0], walls[2][0]
    median_1, median_2 = statistics.median(walls[1]), statistics.median(walls[2])
    cpu_1 = min(runs[1], key=lambda r: r[0])[2]  # (the best run's)
    cpu_2 = min(runs[2], key=lambda r: r[0])[2]
    sim_total = sum(r["sim_time_s"] for r in rows_1)
    print(f"{n} drives, {sim_total:.0f} s simulated; 1 worker: {wall_1:.2f} s wall (best of "
          f"{args.repeat}; median {median_1:.2f} s), {cpu_1:.2f} s CPU (load average before: "
          f"{load_before:.2f})", flush=True)
    print(f"2 workers: {wall_2:.2f} s wall (median {median_2:.2f} s), {cpu_2:.2f} s CPU in "
          f"the workers, speed-up {wall_1 / wall_2:.2f} (of the medians "
          f"{median_1 / median_2:.2f}); the tables are identical", flush=True)

    wall_dask = cpu_dask = dask_startup = wall_dask_warm = cpu_dask_warm = None
    if not args.no_dask:
        try:
            from dask.distributed import LocalCluster
        except ImportError:
            print("dask.distributed not installed: no Dask run (pip install 'rrscore[dask]')")
        else:
            t0 = time.perf_counter()
            with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                              dashboard_address=None) as cluster:
                dask_startup = time.perf_counter() - t0
                wall_dask, rows_d, cpu_dask = timed(sweep, scheduler=cluster.scheduler_address)
                # again, on workers that have imported rrscore and used numba (a
                # long-lived cluster's state after its first sweep)
                wall_dask_warm, rows_w, cpu_dask_warm = timed(
                    sweep, scheduler=cluster.scheduler_address)
            assert rows_d == rows_1 and rows_w == rows_1, "the Dask cluster gave a different table"
            print(f"Dask, 2 worker processes: {wall_dask:.2f} s wall "
                  f"(cluster start {dask_startup:.2f} s, not counted), {cpu_dask:.2f} s CPU, "
                  f"speed-up {wall_1 / wall_dask:.2f}; again on the same workers: "
                  f"{wall_dask_warm:.2f} s wall, {cpu_dask_warm:.2f} s CPU, speed-up "
                  f"{wall_1 / wall_dask_warm:.2f}", flush=True)

    cores_after = machine_parallelism()
    print(f"the machine gives 2 processes {cores_after:.2f} cores (busy-loop check, after)")
    print(json.dumps({
        "case": "sweep", "drives": n, "sim_time_total_s": sim_total,
        "real_time_factor": sim_total / wall_2,
        "real_time_factor_1_worker": sim_total / wall_1,
        "wall_1": wall_1, "wall_2": wall_2, "speedup_2_workers": wall_1 / wall_2,
        "repeat": args.repeat, "walls_1": walls[1], "walls_2": walls[2],
        "speedup_2_workers_median": median_1 / median_2,
        "wall_dask": wall_dask, "speedup_dask": wall_1 / wall_dask if wall_dask else None,
        "dask_cluster_start_s": dask_startup, "tables_identical": True,
        "wall_dask_warm": wall_dask_warm,
        "speedup_dask_warm": wall_1 / wall_dask_warm if wall_dask_warm else None,
        "cpu_dask_warm": cpu_dask_warm,
        "cpu_1": cpu_1, "cpu_2": cpu_2, "cpu_dask": cpu_dask,
        "load_average_before": load_before, "load_average_after": load(),
        "cores_free_before": cores_before, "cores_free_after": cores_after,
        "cpus": os.cpu_count(), "python": platform.python_version(),
    }))


if __name__ == "__main__":
    main()
