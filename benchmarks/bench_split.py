"""Benchmark: where a drive's time goes, the compiled step loop against the rest.

Runs one case of ``bench_drive.py`` (default ``spring``) with every call of the
compiled step loop timed, and splits the wall time by stretch of simulated time: in
each stretch, the control steps, the solver steps and right-hand sides, the time in
the loop and the time outside it (Python: plugin steps, held inputs, the driver,
monitors and samples, and any step the Python path takes), per control step. Run
from the repository root:

    python benchmarks/bench_split.py [--case spring] [--stretch 50] [--repeat 3]

With ``--repeat`` the run with the least wall time is reported. Prints a table and, on
the last line, JSON with the ``real_time_factor`` and the stretches. It is a
measurement, not a test: the figures depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_drive  # noqa: E402  (the cases and their scenarios)

from rrscore.run.drive import Drive  # noqa: E402


def timed_run(case: str) -> dict:
    """One drive of ``case`` with the loop's calls timed; the per-call records."""
    drive = Drive(bench_drive.case_scenario(case))
    run = drive.run_
    solver, loop = run.solver, run.integrator.loop
    if loop is None:
        raise SystemExit(f"case {case!r} does not use the compiled loop")
    advance = loop._advance
    calls = []  # per call: simulated time at its start, seconds in it, wall time at its end

    def timed(*args):
        t0 = time.perf_counter()
        out = advance(*args)
        t1 = time.perf_counter()
        calls.append((args[0], t1 - t0, t1, solver.nsteps, solver.nfev))
        return out

    loop._advance = timed
    start = time.perf_counter()
    drive.run()
    wall = time.perf_counter() - start
    loop._advance = advance
    return {"wall": wall, "calls": np.array(calls), "start": start, "sim_time": solver.t,
            "control_steps": run.n_control, "steps": solver.nsteps, "rhs": solver.nfev}


def stretches(rec: dict, width: float) -> list[dict]:
    """The records summed by stretch of simulated time ``width`` long."""
    t_sim, in_loop, end, nsteps, nfev = rec["calls"].T
    # outside the loop: from the end of the call before to the start of this one
    outside = (end - in_loop) - np.concatenate([[rec["start"]], end[:-1]])
    # steps and right-hand sides counted at each call's end (the loop adds them after
    # the call returns, so a call's count shows at the next: shift by one)
    nsteps = np.diff(np.concatenate([[0.0], nsteps, [rec["steps"]]]))[1:]
    nfev = np.diff(np.concatenate([[0.0], nfev, [rec["rhs"]]]))[1:]
    rows = []
    for lo in np.arange(0.0, rec["sim_time"], width):
        m = (t_sim >= lo) & (t_sim < lo + width)
        n = int(m.sum())
        if not n:
            continue
        rows.append({"from_s": float(lo), "to_s": float(lo + width), "loop_calls": n,
                     "steps": int(nsteps[m].sum()), "rhs_evaluations": int(nfev[m].sum()),
                     "loop_s": round(float(in_loop[m].sum()), 4),
                     "python_s": round(float(outside[m].sum()), 4),
                     "loop_us_per_call": round(float(in_loop[m].sum()) / n * 1e6, 1),
                     "python_us_per_call": round(float(outside[m].sum()) / n * 1e6, 1)})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--case", default="spring", choices=bench_drive.train_cases())
    parser.add_argument("--stretch", type=float, default=50.0, help="seconds per stretch")
    parser.add_argument("--repeat", type=int, default=1, help="runs; the fastest reported")
    args = parser.parse_args()
    timed_run(args.case)  # numba's cache loaded (or compiled) before anything is timed
    best = min((timed_run(args.case) for _ in range(args.repeat)), key=lambda r: r["wall"])
    rows = stretches(best, args.stretch)
    loop_s = sum(r["loop_s"] for r in rows)
    print(f"{args.case}: {best['sim_time']:.0f} s simulated in {best['wall']:.2f} s "
          f"(loop {loop_s:.2f} s, Python {best['wall'] - loop_s:.2f} s); "
          f"{best['control_steps']} control steps, {best['steps']} steps, "
          f"{best['rhs']} right-hand sides")
    print(f"{'stretch':>13} {'calls':>6} {'steps':>6} {'RHS':>7} "
          f"{'loop us/call':>13} {'Python us/call':>15}")
    for r in rows:
        print(f"{r['from_s']:5.0f}-{r['to_s']:5.0f} s {r['loop_calls']:6d} {r['steps']:6d} "
              f"{r['rhs_evaluations']:7d} {r['loop_us_per_call']:13.1f} "
              f"{r['python_us_per_call']:15.1f}")
    print(json.dumps({"benchmark": "split", "case": args.case,
                      "wall_time_s": round(best["wall"], 4), "loop_s": round(loop_s, 4),
                      "python_s": round(best["wall"] - loop_s, 4),
                      "control_steps": best["control_steps"], "steps": best["steps"],
                      "rhs_evaluations": best["rhs"], "stretches": rows,
                      "real_time_factor": round(best["sim_time"] / best["wall"], 1),
                      "python": platform.python_version(), "machine": platform.machine()}))


if __name__ == "__main__":
    main()
