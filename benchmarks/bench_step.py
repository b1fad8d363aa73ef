"""Benchmark: what one solver step of the compiled loop costs, split into its parts.

Runs one case of ``bench_drive.py`` (default ``spring``) whole, then, at the state it
reached at ``--at`` seconds, times in compiled loops of many calls: the right-hand side
and its parts (the coupler forces, the body pass of every vehicle), one Dormand–Prince
step (six right-hand sides, stage sums, error norm, the rolling wheels filled in) and
the event functions after it. Prints a table and, on the last line, JSON with the
drive's ``real_time_factor`` and the factor the step alone allows: the simulated time
over the drive's steps times one step with its events. Run from the repository root:

    python benchmarks/bench_step.py [--case spring] [--at 100]

It is a measurement, not a test: the figures depend on the machine (on a busy one they
swing; the least of several rounds is reported).
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
from rrscore import steploop  # noqa: E402
from rrscore.compiled import body_rates  # noqa: E402
from rrscore.run.drive import Drive  # noqa: E402


@njit  # compiled afresh each run: the loop it times may have changed since
def _rhs_calls(n, t, y, dy, cf, kern, lay, ctable, vs_lay, vs_index, vs_sign, inputs, air,
               bodies, held, frozen, direction, work, _err, _state, _still):  # pragma: no cover
    for _ in range(n):
        steploop._rhs(t, y, dy, cf, kern, lay, ctable, vs_lay, vs_index, vs_sign, inputs,
                      air, bodies, held, frozen, direction, True, work)


@njit  # compiled afresh each run: the loop it times may have changed since
def _coupler_calls(n, y, dy, cf, kern, lay, ctable, work):  # pragma: no cover (compiled)
    for _ in range(n):
        steploop._coupler_forces(y, dy, cf, kern, lay, ctable, work)


@njit  # compiled afresh each run: the loop it times may have changed since
def _body_calls(n, y, cf, dy, bodies, held, frozen, direction, rigid,
                work):  # pragma: no cover (compiled)
    idx, knots, tables, static, axle_vehicle, _, _ = bodies
    for _ in range(n):
        body_rates(y, cf, dy, idx, knots, tables, static, held, frozen, direction,
                   axle_vehicle.size, rigid, work)


@njit  # compiled afresh each run: the loop it times may have changed since
def _step_calls(n, t, y, f, h, R, atol, rtol, weights, live, formed, controlled, ks, ref,
                mag0, cf, counts):  # pragma: no cover (compiled)
    ok = True
    y1 = np.empty(y.size)
    for _ in range(n):  # always from the same state: every call the same step
        ok, _, _, _ = steploop._step(t, y, f, h, t + 1e3, 1e9, atol, rtol, weights, R,
                                     live, formed, controlled, ks, ref, mag0, cf, counts, y1)
    return ok


@njit  # compiled afresh each run: the loop it times may have changed since
def _event_calls(n, y, f, cf, g, lay, frozen, direction, slip, slip_laws, laws_coef,
                 laws_speeds, laws_values, kinks, ctable, break_force,
                 watch):  # pragma: no cover (compiled)
    for _ in range(n):
        steploop._events(y, f, cf, g, lay, frozen, direction, slip, slip_laws, laws_coef,
                         laws_speeds, laws_values, kinks, ctable, break_force, watch)


def case_scenario(case: str, sim_time: float | None) -> rrscore.Scenario:
    """The case's scenario (a train case's, or the shipped scenario it runs) over
    ``sim_time``."""
    spec = bench_drive.CASES[case]
    if "scenario" in spec:
        return bench_drive.shipped_scenario(spec, "rk45", sim_time)
    return bench_drive.case_scenario(case, sim_time)


def drive(case: str, sim_time: float | None) -> Drive:
    """The case's drive, run to ``sim_time``."""
    d = Drive(case_scenario(case, sim_time))
    if d.run_.integrator.loop is None:
        raise SystemExit(f"case {case!r} does not use the compiled loop")
    d.run()
    return d


def timings(d: Drive, calls: int, rounds: int) -> dict[str, float]:
    """Microseconds per call of each part at the drive's state (least of ``rounds``)."""
    run = d.run_
    loop, s, dyn = run.integrator.loop, run.solver, run.integrator.loop.dyn
    b, w = dyn.bodies, dyn.wheelsets
    y = s.y.copy()
    # (after the one body's loop the solver keeps no derivative: it is taken when needed)
    f = (s.f if s.f is not None else loop.rhs(s.t, s.y)).copy()
    n = y.size
    cf = np.empty(max(dyn.n - 1, 0))
    dy = np.empty(n)
    frozen, direction = b.frozen.copy(), b.direction.copy()
    # the loop's whole layout (the step reads the vehicles' count in it, the right-hand
    # side its first six entries), with the slip margins watched as the loop sets them
    lay = loop._lay.copy()
    slip = w.loaded_rows
    lay[7] = slip.shape[1] > 0
    work = steploop.rhs_work(dyn.n, max(dyn.n - 1, 0), loop._mr_index.size)
    R = (loop._kernels, lay, loop._ctable, loop._vs_lay, loop._vs_index, loop._vs_sign,
         loop._inputs, loop._air(), loop._bodies, b.held, frozen, direction, work,
         np.zeros(n), np.empty(n), loop._still)
    atol, rtol = loop.tolerances()
    g = np.empty(lay[6] + lay[8] + max(dyn.n - 1, 0) * (loop._kinks.shape[1] + 1))
    h = min(s.h, s.max_step)
    parts = {
        "right-hand side": lambda k: _rhs_calls(k, s.t, y, dy, cf, *R),
        "  coupler forces": lambda k: _coupler_calls(k, y, dy, cf, loop._kernels, lay,
                                                     loop._ctable, work),
        "  body pass": lambda k: _body_calls(k, y, cf, dy, loop._bodies, b.held, frozen,
                                             direction, bool(dyn.rigid), work),
        "step (6 right-hand sides)": lambda k: _step_calls(
            k, s.t, y, f, h, R, atol, rtol, dyn._mean_weights, loop._live, loop._formed,
            loop._controlled, np.zeros((7, n)), np.zeros(n), np.empty(n), cf,
            np.zeros(4, dtype=np.int64)),
        "events": lambda k: _event_calls(
            k, y, f, cf, g, lay, frozen, direction, slip, w.loaded_law, loop._laws_coef,
            loop._laws_speeds, loop._laws_values, loop._kinks, loop._ctable,
            loop._break_force, loop._watch),
    }
    for fn in parts.values():
        fn(1)  # compiled (or loaded from numba's cache) before it is timed
    best = {name: np.inf for name in parts}
    for _ in range(rounds):  # interleaved, so a slow spell of the machine hits every part
        for name, fn in parts.items():
            start = time.perf_counter()
            fn(calls)
            best[name] = min(best[name], (time.perf_counter() - start) / calls * 1e6)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--case", default="spring", choices=sorted(bench_drive.CASES))
    parser.add_argument("--at", type=float, default=100.0,
                        help="simulated seconds: the state the parts are timed at")
    parser.add_argument("--calls", type=int, default=20000, help="calls per round")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    drive(args.case, 1.0)  # numba's cache loaded before the drive is timed
    start = time.perf_counter()
    whole = drive(args.case, None)
    sim_time = whole.run_.solver.t  # (a shipped scenario may stop before its max_time)
    wall = time.perf_counter() - start
    at = drive(args.case, args.at)
    us = timings(at, args.calls, args.rounds)
    dyn = at.run_.integrator.loop.dyn
    steps, rhs = whole.run_.solver.nsteps, whole.run_.solver.nfev
    step = us["step (6 right-hand sides)"]
    per_step = step + us["events"]
    overhead = step - 6 * us["right-hand side"]
    print(f"{args.case}: {dyn.n} vehicles, state of {dyn.size} entries; the drive: "
          f"{sim_time:.0f} s simulated in {wall:.2f} s, {steps} steps, {rhs} right-hand "
          f"sides")
    for name, value in us.items():
        print(f"{name:>28} {value:9.2f} us")
    print(f"{'step less its 6 RHS':>28} {overhead:9.2f} us")
    bound = sim_time / (steps * per_step * 1e-6)
    print(f"the drive's steps at {per_step:.1f} us each (step and events): "
          f"{steps * per_step * 1e-6:.2f} s, {bound:.0f}x real time at most")
    print(json.dumps({"benchmark": "step", "case": args.case, "vehicles": dyn.n,
                      "state_size": dyn.size, "at_s": args.at, "steps": steps,
                      "rhs_evaluations": rhs, "wall_time_s": round(wall, 4),
                      "parts_us": {k.strip(): round(v, 3) for k, v in us.items()},
                      "step_overhead_us": round(overhead, 3),
                      "step_bound_real_time_factor": round(bound, 1),
                      "real_time_factor": round(sim_time / wall, 1),
                      "python": platform.python_version(), "machine": platform.machine()}))


if __name__ == "__main__":
    main()
