"""Estimates from sensor logs of a drive with known constant accelerations (LevelLoco on
level track without resistance: configs/scenarios/calibration_levels.toml)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rrscore.calibration.estimation import calibrate, estimate, longest_in_order
from rrscore.calibration.kinematics import stopping
from rrscore.calibration.sensors import Hit, RecordedDrive, load_layout, synthetic_log

from .conftest import ACCELERATION, DECELERATION, SPEED_STEP

#: the level changes of the drive (from, to) and whether each finished before the next
#: sensor, 250 m on: by hand from the speeds, rates and distances (see the scenario)
CHANGES = {(4, 6): True, (6, 10): False, (10, 3): False, (3, 8): False, (8, 5): True}


@pytest.fixture(scope="module")
def noisy(levels_run):
    """10 repeats of the drive with 5 ms timing noise, and its calibration."""
    layout = load_layout(levels_run)
    log = synthetic_log([RecordedDrive.from_dir(levels_run)], layout, repeats=10,
                        noise=0.005, seed=12)
    return layout, log, calibrate(log, layout)


def test_velocities_within_1_percent(noisy):
    *_, cal = noisy
    assert sorted(cal.velocity) == [3, 4, 5, 6, 8, 10]
    for level, est in cal.velocity.items():
        assert est.n == 10
        assert est.mean == pytest.approx(level * SPEED_STEP, rel=0.01)
        assert est.std < 0.001 * est.mean  # 5 ms on segments of 12 s and more


def test_accelerations_within_3_percent_in_both_cases(noisy):
    *_, cal = noisy
    assert set(cal.acceleration) == set(CHANGES)
    for (a, b), est in cal.acceleration.items():
        expected = ACCELERATION if b > a else -DECELERATION
        assert est.mean == pytest.approx(expected, rel=0.03)
        assert cal.finished[(a, b)] is CHANGES[(a, b)]
        assert est.n >= 9
    # the start from rest at 110 m to level 4: 8 m/s after 26.7 s and 107 m, before S01
    assert cal.start[4].mean == pytest.approx(ACCELERATION, rel=0.03)
    assert cal.finished[(0, 4)]


def test_stop_distance_and_time_within_3_percent(noisy):
    *_, cal = noisy
    distance, time = stopping(5 * SPEED_STEP, DECELERATION)  # 100 m, 20 s
    assert cal.stop_distance[5].mean == pytest.approx(distance, rel=0.03)
    assert cal.stop_time[5].mean == pytest.approx(time, rel=0.03)
    assert cal.stop_distance[5].n == 10


def _replace_run(log, run, hits):
    others = [h for h in log.hits if h.run != run]
    return dataclasses.replace(log, hits=others + hits)


def test_a_missed_hit_is_flagged_and_the_estimates_stay(noisy):
    layout, log, cal = noisy
    run = log.runs[3]
    hits = [h for h in log.hits if h.run == run and h.sensor != "S08"]
    broken = _replace_run(log, run, hits)
    got = calibrate(broken, layout)
    flagged = [str(f) for f in got.findings if f.run == run]
    assert any("missed hit at S08" in f for f in flagged), got.findings
    # level 10 is steady from S08 on: that run's velocity comes from S09..S10 only
    for level, est in cal.velocity.items():
        assert got.velocity[level].mean == pytest.approx(est.mean, rel=2e-4)
        assert got.velocity[level].mean == pytest.approx(level * SPEED_STEP, rel=0.01)
    for key, est in cal.acceleration.items():
        assert got.acceleration[key].mean == pytest.approx(est.mean, rel=2e-3)


def test_spurious_hits_are_dropped_and_reported(noisy):
    layout, log, cal = noisy
    run = log.runs[0]
    hits = [h for h in log.hits if h.run == run]
    s12 = next(h for h in hits if h.sensor == "S12")
    s08 = next(h for h in hits if h.sensor == "S08")
    # S12 fires twice; S25, far ahead, fires while the train is near S08
    extra = [Hit(run, "S12", s12.time + 3.0), Hit(run, "S25", s08.time + 1.0)]
    got = calibrate(_replace_run(log, run, hits + extra), layout)
    text = " | ".join(str(f) for f in got.findings)
    assert "sensor S12 fired again" in text
    assert "sensor S25 fired out of order" in text
    for level, est in cal.velocity.items():
        assert got.velocity[level].mean == pytest.approx(est.mean, rel=1e-12)


def test_a_wild_value_is_left_out_of_its_estimate():
    values = [("r1", 1.0), ("r2", 1.001), ("r3", 0.999), ("r4", 1.0005), ("r5", 1.5)]
    findings = []
    est = estimate(values, "velocity of level 1", findings)
    assert est.n == 4 and est.mean == pytest.approx(1.000125)
    assert est.excluded == (("r5", 1.5),)
    assert "run r5: velocity of level 1: 1.5 is an outlier" in str(findings[0])


def test_short_move_distance_measured_and_modelled(levels_run, tmp_path):
    # from rest, level 4 (8 m/s) for 10 s, then stop: 0.3 m/s^2 for 10 s is 3 m/s and
    # 15 m, braking from 3 m/s at 0.5 m/s^2 another 9 m: 24 m. The model's figure comes
    # from the start acceleration and stop deceleration measured in the levels drive.
    from rrscore import Drive, load_scenario

    short = load_scenario(levels_run / "scenario.resolved.toml").with_values(
        {"driver": [{"at_time": 0.0, "set": {"level": 4}},
                    {"at_time": 10.0, "set": {"level": 0}}]})
    Drive(short).run(tmp_path / "short")
    layout = load_layout(levels_run)
    drives = [RecordedDrive.from_dir(levels_run), RecordedDrive.from_dir(tmp_path / "short")]
    log = synthetic_log(drives, layout, repeats=5, noise=0.005, seed=4)
    cal = calibrate(log, layout)
    (move,) = cal.short_moves
    assert (move.level, move.duration, move.distance.n) == (4, 10.0, 5)
    assert move.distance.mean == pytest.approx(24.0, rel=0.01)
    assert move.model == pytest.approx(24.0, rel=0.01)
    # the short runs take no part in the other estimates
    assert cal.velocity[4].n == 5 and cal.start[4].n == 5


def _longest_by_pairs(idx: list[int]) -> tuple[list[int], int]:
    """The definition the kernel must meet, comparing every pair of hits: each hit's
    predecessor is the earliest hit of a longest chain with a lower sensor before it."""
    best, prev = [1] * len(idx), [-1] * len(idx)
    for i in range(len(idx)):
        for j in range(i):
            if idx[j] < idx[i] and best[j] + 1 > best[i]:
                best[i], prev[i] = best[j] + 1, j
    end = max(range(len(idx)), key=lambda k: (best[k], -k)) if idx else -1
    return prev, end


@settings(max_examples=200, deadline=None)
@given(idx=st.lists(st.integers(0, 7), max_size=40))
def test_the_longest_in_order_chain_is_the_one_every_pair_gives(idx):
    # spurious hits (a sensor firing twice, out of turn) are whatever this chain leaves
    # out: the per-sensor kernel must pick the very chain, ties to the earliest hits
    prev = np.full(len(idx), -1, dtype=np.int64)
    end = longest_in_order(np.array(idx, dtype=np.int64), 8, prev)
    want_prev, want_end = _longest_by_pairs(idx)
    assert end == want_end
    assert list(prev) == want_prev

    def chain(p, k):
        out = []
        while k >= 0:
            out.append(k)
            k = p[k]
        return out

    assert chain(list(prev), end) == chain(want_prev, want_end)
