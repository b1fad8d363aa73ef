"""Benchmark: two revisions of rrscore on one case of ``bench_drive.py``, in turns.

On a shared machine a drive's wall time moves by 30 % from one run to the next,
more than most changes move it, so a change is judged here by many short
comparisons rather than one long one. The case runs for revision BEFORE and
for AFTER (default: the working tree) in turns, ``--rounds`` times, the order
swapped every round, each run a fresh process taking the best of ``--repeat``
drives (at least 2: a process's first drive also loads the compiled code). It
prints every round, then the median wall time of each side and the median of
the rounds' ratios after/before with the number of rounds in which AFTER was
faster; the last line is JSON (``real_time_factor``: AFTER's, from its median).
A revision is checked out into a temporary git worktree, removed at the end;
each side runs rrscore and its shipped vehicles and plugins from its own tree;
numba compiles it there in a warm-up run that is not timed. Run from anywhere
in the repository:

    python benchmarks/bench_ab.py BEFORE [--after REV] [--case spring] [--sim-time 120]
                                         [--rounds 12] [--repeat 3]

It is a measurement, not a test. It says nothing about results: check that both
sides take the same steps (printed) or compare their outputs separately.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def git(*args: str) -> str:
    """Output of a git command in this repository (stripped); its message if it fails."""
    done = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout.strip()


def checkout(rev: str, into: Path) -> Path:
    """Revision ``rev`` checked out (detached) at ``into``."""
    git("worktree", "add", "--detach", "--force", str(into), git("rev-parse", "--verify",
                                                                f"{rev}^{{commit}}"))
    return into


# A worktree is not installed: rrscore comes from it by PYTHONPATH, but the editable
# install would still give rrscore.vehicles and rrscore.plugins (the repository's
# vehicles/ and plugins/) from the working tree. This runs a script with those two
# packages taken from the tree given first.
BOOT = """
import importlib.util, os, runpy, sys
tree, script = sys.argv[1], sys.argv[2]
import rrscore
for name in ("vehicles", "plugins"):
    spec = importlib.util.spec_from_file_location(
        "rrscore." + name, os.path.join(tree, name, "__init__.py"),
        submodule_search_locations=[os.path.join(tree, name)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    setattr(rrscore, name, module)
    spec.loader.exec_module(module)
sys.argv = sys.argv[2:]
sys.path.insert(0, os.path.dirname(script))
runpy.run_path(script, run_name="__main__")
"""


def drive(tree: Path, case: str, repeat: int, sim_time: float | None) -> dict:
    """The case's figures from ``tree``'s own ``bench_drive.py``, in a fresh process that
    imports rrscore and the shipped vehicles and plugins from ``tree``."""
    cmd = [sys.executable, "-c", BOOT, str(tree), str(tree / "benchmarks" / "bench_drive.py"),
           "--case", case, "--repeat", str(repeat)]
    if sim_time is not None:
        cmd += ["--sim-time", str(sim_time)]
    # each tree its own generated modules: a revision before rrscore kept them apart by
    # installation would read the other's numba cache index (and fail on its types)
    generated = Path(tempfile.gettempdir()) / "rrs-ab-generated" / hashlib.sha256(
        str(tree).encode()).hexdigest()[:16]
    env = dict(os.environ, RRS_CACHE_DIR=str(generated), PYTHONPATH=os.pathsep.join(
        [str(tree), *filter(None, [os.environ.get("PYTHONPATH")])]))
    done = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{tree}: bench_drive.py --case {case} failed:\n{done.stderr[-2000:]}")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    figures = figures[0] if isinstance(figures, list) else figures
    if not str(figures.get("rrscore", tree)).startswith(str(tree)):
        raise SystemExit(f"{tree}: the drive imported rrscore from {figures['rrscore']}")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("before", help="the revision to compare against (a commit, tag, ...)")
    parser.add_argument("--after", help="the revision compared (default: the working tree)")
    parser.add_argument("--case", default="spring", help="a case of bench_drive.py")
    parser.add_argument("--sim-time", type=float, help="simulated seconds (default: the case's)")
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--repeat", type=int, default=3, help="drives per run (best taken)")
    args = parser.parse_args()
    if args.rounds < 1 or args.repeat < 2:
        # a process's first drive also loads the compiled code from numba's cache
        raise SystemExit("--rounds must be at least 1 and --repeat at least 2")

    with tempfile.TemporaryDirectory(prefix="rrs-ab-") as tmp:
        trees = {"before": checkout(args.before, Path(tmp) / "before")}
        trees["after"] = (checkout(args.after, Path(tmp) / "after") if args.after
                          else ROOT)
        try:
            for tree in trees.values():  # numba compiles each side here, untimed
                drive(tree, args.case, 1, args.sim_time)
            walls: dict[str, list[float]] = {"before": [], "after": []}
            steps: dict[str, set[int]] = {"before": set(), "after": set()}
            sim_time = 0.0
            for r in range(args.rounds):
                order = ("before", "after") if r % 2 == 0 else ("after", "before")
                for side in order:
                    f = drive(trees[side], args.case, args.repeat, args.sim_time)
                    walls[side].append(f["wall_time_s"])
                    steps[side].add(f["steps"])
                    sim_time = f["sim_time_s"]
                b, a = walls["before"][-1], walls["after"][-1]
                print(f"round {r + 1}: before {b:.4f} s, after {a:.4f} s, ratio {a / b:.3f}",
                      flush=True)
        finally:
            for tree in trees.values():
                if tree != ROOT:
                    git("worktree", "remove", "--force", str(tree))

    ratios = [a / b for b, a in zip(walls["before"], walls["after"], strict=True)]
    median = {side: statistics.median(w) for side, w in walls.items()}
    faster = sum(x < 1.0 for x in ratios)
    print(f"{args.case}: before {median['before']:.4f} s, after {median['after']:.4f} s "
          f"(medians of {args.rounds} rounds); after/before {statistics.median(ratios):.3f} "
          f"(median), after faster in {faster} of {args.rounds} rounds; steps "
          f"{sorted(steps['before'])} before, {sorted(steps['after'])} after")
    print(json.dumps({
        "benchmark": "ab", "case": args.case, "before": git("rev-parse", args.before),
        "after": git("rev-parse", args.after) if args.after else "working tree",
        "rounds": args.rounds, "repeat": args.repeat, "sim_time_s": sim_time,
        "before_wall_times_s": walls["before"], "after_wall_times_s": walls["after"],
        "before_median_s": median["before"], "after_median_s": median["after"],
        "ratio_median": statistics.median(ratios), "after_faster_rounds": faster,
        "same_steps": steps["before"] == steps["after"],
        "real_time_factor": sim_time / median["after"],
    }))


if __name__ == "__main__":
    main()
