"""Benchmark: what one step of the event loop costs, split into its parts.

Runs one case of ``bench_drive.py`` (default ``spring``) to ``--at`` seconds, then, at the
state it reached, times in compiled loops of many calls: the train's right-hand side and
its parts (the couplers, the route under every vehicle, the body forces, the
accelerations), one trial step of the scenario's method (its stages and sums), its
error norm, the event functions, a step's commit (monitors) and a control step. Prints a
table and, on the last line, JSON with the drive's ``real_time_factor`` and each part's
time per call. Run from the repository root:

    python benchmarks/bench_step.py [--case spring] [--at 100] [--rounds 5]

It is a measurement, not a test: the figures depend on the machine (on a busy one they
swing; the least of ``--rounds`` rounds is reported).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_drive  # noqa: E402  (the cases and their scenarios)

import rrscore  # noqa: E402
from rrscore.engine import control, loop, multibody, stepper  # noqa: E402
from rrscore.physics import bodies, route  # noqa: E402


@njit
def _rhs(sys, fns, y, dy, n, tab, w, st):  # pragma: no cover (compiled)
    for _ in range(n):
        multibody.rhs(sys, fns, 0.0, y, dy, True)


@njit
def _couplers(sys, fns, y, dy, n, tab, w, st):  # pragma: no cover (compiled)
    for _ in range(n):
        multibody.coupler_forces(sys, fns, y, dy, sys.scratch.cf, True)


@njit
def _route(sys, fns, y, dy, n, tab, w, st):  # pragma: no cover (compiled)
    lay = sys.lay
    x = y[lay.sx:lay.sx + lay.n]
    for _ in range(n):
        route.means_under(sys.track, x, sys.bodies.half, sys.bodies.inv_length, sys.ends,
                          False, sys.scratch.route)


@njit
def _body(sys, fns, y, dy, n, tab, w, st):  # pragma: no cover (compiled)
    lay, s = sys.lay, sys.scratch
    x, v = y[lay.sx:lay.sx + lay.n], y[lay.sv:lay.sv + lay.n]
    flows = dy[lay.senergy:lay.senergy + 6 * lay.n].reshape((6, lay.n))
    for _ in range(n):
        bodies.body_forces(sys.bodies, sys.held, s.cf, sys.track, sys.ends, x, v, False,
                           s.route, s.parts, s.force, s.resist, flows, True)


@njit
def _accelerations(sys, fns, y, dy, n, tab, w, st):  # pragma: no cover (compiled)
    lay, s = sys.lay, sys.scratch
    v = y[lay.sv:lay.sv + lay.n]
    for _ in range(n):
        bodies.accelerations(sys.held, v, s.force, s.resist, dy[lay.sv:lay.sv + lay.n])


@njit
def _attempt(sys, fns, y, dy, n, tab, w, st):  # pragma: no cover (compiled)
    for _ in range(n):
        stepper.attempt(sys, fns, tab, 0.0, y, 0.01, w.ks, w.stage, w.y1)


@njit
def _error(sys, fns, y, dy, n, tab, w, st):  # pragma: no cover (compiled)
    for _ in range(n):
        stepper.trial_error(sys, fns, tab, 0.01, w.ks, y, w.y1, w.scratch)


@njit
def _events(sys, fns, y, dy, n, tab, w, st):  # pragma: no cover (compiled)
    for _ in range(n):
        multibody.events(sys, fns, 0.0, y, dy, w.g1)


@njit
def _commit(sys, fns, y, dy, n, tab, w, st):  # pragma: no cover (compiled)
    seg = loop.Segment(0.0, 0.01, 0.01, True, y, w.y1, w.ks[0], w.ks[tab.stages - 1], w.ks)
    for _ in range(n):
        multibody.commit(sys, fns, tab, seg, w)


@njit
def _control(sys, fns, y, dy, n, tab, w, st):  # pragma: no cover (compiled)
    for _ in range(n):
        control.train_control(sys, fns, st[0], 100.0, y)


PARTS = (("right-hand side", _rhs), ("  couplers", _couplers), ("  route under vehicles", _route),
         ("  body forces (route included)", _body), ("  accelerations", _accelerations),
         ("trial step (all stages)", _attempt), ("error norm", _error), ("events", _events),
         ("commit (monitors)", _commit), ("control step", _control))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--case", default="spring", choices=bench_drive.train_cases())
    parser.add_argument("--at", type=float, default=100.0)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    sc = bench_drive.case_scenario(args.case)
    whole = rrscore.Drive(sc).run().summary
    drive = rrscore.Drive(sc.with_values({"stop.max_time": args.at}))
    drive.run()
    run = drive.run_
    system, tab, w = run.system, run.tab, run.work
    y = w.y.copy()
    dy = np.zeros_like(y)
    multibody.rhs(system.sys, system.fns, 0.0, y, w.ks[0], True)
    clock = run.clock.copy()
    clock[0].control_last = -1  # (a control step hands back at once: its checks timed)
    times = {}
    for name, fn in PARTS:
        fn(system.sys, system.fns, y, dy, 1, tab, w, clock)
        n = 2000
        best = np.inf
        for _ in range(args.rounds):
            t0 = time.perf_counter()
            fn(system.sys, system.fns, y, dy, n, tab, w, clock)
            best = min(best, (time.perf_counter() - t0) / n)
        times[name.strip()] = best
        print(f"{name:32s} {best * 1e9:10.0f} ns")
    print(json.dumps({"benchmark": f"step ({args.case})", "vehicles": whole["vehicles"],
                      "real_time_factor": round(whole["real_time_factor"], 1),
                      "steps": whole["steps"], "rhs_evaluations": whole["rhs_evaluations"],
                      "ns_per_call": {k: round(v * 1e9) for k, v in times.items()},
                      "python": platform.python_version(), "machine": platform.machine()}))


if __name__ == "__main__":
    main()
