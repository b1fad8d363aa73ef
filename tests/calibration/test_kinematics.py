"""Seed 002's kinematic model on hand-worked numbers."""

from __future__ import annotations

import math

import pytest

from rrscore.calibration.kinematics import (
    short_move,
    steady_velocity,
    stop_deceleration,
    stopping,
    transition,
)


def test_steady_velocity_is_distance_over_time():
    assert steady_velocity(250.0, 20.0) == 12.5
    with pytest.raises(ValueError):
        steady_velocity(250.0, 0.0)


def test_speeding_up_finished_before_the_second_sensor():
    # 2 -> 4 m/s at 0.5 m/s^2 takes t1 = 4 s over d1 = va t1 = 3 * 4 = 12 m; the rest of
    # d = 20 m, d2 = 8 m at 4 m/s, takes t2 = 2 s; so the sensors are t = 6 s apart.
    # d / t = 3.33 > va = 3: finished. t1 = (d - v2 t) / (va - v2) = (20 - 24) / (3 - 4) = 4.
    tr = transition(d=20.0, t=6.0, v1=2.0, v2=4.0)
    assert tr.finished
    assert tr.t1 == pytest.approx(4.0, rel=1e-12)
    assert tr.d1 == pytest.approx(12.0, rel=1e-12)
    assert tr.t2 == pytest.approx(2.0, rel=1e-12)
    assert tr.d2 == pytest.approx(8.0, rel=1e-12)
    assert tr.acceleration == pytest.approx(0.5, rel=1e-12)
    assert tr.end_speed == 4.0


def test_speeding_up_not_finished_at_the_second_sensor():
    # from 2 m/s at 0.5 m/s^2 for t = 2 s: d = 2*2 + 0.5*0.5*4 = 5 m, speed then 3 m/s,
    # short of v2 = 4. d / t = 2.5 < va = 3: not finished. vs = 2.5, vr = 2*2.5 - 2 = 3,
    # a = (3 - 2) / 2 = 0.5.
    tr = transition(d=5.0, t=2.0, v1=2.0, v2=4.0)
    assert not tr.finished
    assert tr.end_speed == pytest.approx(3.0, rel=1e-12)
    assert tr.acceleration == pytest.approx(0.5, rel=1e-12)
    assert (tr.d1, tr.t1, tr.d2, tr.t2) == (5.0, 2.0, 0.0, 0.0)


def test_slowing_down_finished_before_the_second_sensor():
    # 4 -> 2 m/s at -0.5 m/s^2: t1 = 4 s, d1 = 3 * 4 = 12 m, then d2 = 4 m at 2 m/s in
    # t2 = 2 s: d = 16 m, t = 6 s; d / t = 2.67 < va = 3, which for slowing is "finished".
    tr = transition(d=16.0, t=6.0, v1=4.0, v2=2.0)
    assert tr.finished
    assert (tr.t1, tr.d1, tr.t2, tr.d2) == pytest.approx((4.0, 12.0, 2.0, 4.0), rel=1e-12)
    assert tr.acceleration == pytest.approx(-0.5, rel=1e-12)


def test_slowing_down_not_finished_at_the_second_sensor():
    # from 10 m/s at -0.5 m/s^2 for 4 s: d = 40 - 4 = 36 m, speed 8 m/s, short of v2 = 4.
    tr = transition(d=36.0, t=4.0, v1=10.0, v2=4.0)
    assert not tr.finished
    assert tr.end_speed == pytest.approx(8.0, rel=1e-12)
    assert tr.acceleration == pytest.approx(-0.5, rel=1e-12)


def test_a_change_without_a_change_of_velocity_is_refused():
    with pytest.raises(ValueError):
        transition(10.0, 1.0, 3.0, 3.0)


def test_stopping_distance_and_time_at_constant_deceleration():
    # 20 m/s at 0.5 m/s^2: 400 / 1 = 400 m in 40 s; and back from the distance
    assert stopping(20.0, 0.5) == (400.0, 40.0)
    assert stop_deceleration(20.0, 400.0) == 0.5


def test_short_move_distance():
    # 0.3 m/s^2 for 10 s (3 m/s, 15 m; the top speed 8 m/s is not reached), then stop at
    # 0.5 m/s^2: 9 m. 24 m in all.
    assert short_move(0.3, 10.0, 0.5, 8.0) == pytest.approx(24.0, rel=1e-12)
    # long enough to reach 6 m/s after 20 s (60 m), 5 s steady (30 m), stop 36 m
    assert short_move(0.3, 25.0, 0.5, 6.0) == pytest.approx(126.0, rel=1e-12)
    assert math.isfinite(short_move(1.0, 0.0, 1.0, 1.0))
