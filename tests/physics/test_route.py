"""The route under a vehicle: means over its length against the elevation profile's own
differences (np.interp on the knots), whichever way the vehicles lie on the pieces."""

import numpy as np
import pytest

from rrscore.model.track import track_of
from rrscore.physics.route import means_under

# a profile of three pieces between knots: 0 m at 0, up 10 m by 1 km, level to 2 km,
# down 4 m by 2.5 km; the curve column a made-up cumulative 700/R (N/kN times m)
KNOTS = np.array([0.0, 1000.0, 2000.0, 2500.0])
ELEV = np.array([0.0, 10.0, 10.0, 6.0])
CURVE = np.array([0.0, 0.0, 700.0, 700.0])


def track():
    columns = np.vstack([ELEV, CURVE, np.zeros(4), np.zeros(4)])
    return track_of(KNOTS, columns)


def expected(x, half):
    """Each vehicle's mean grade and curve resistance: the columns' differences over its
    length, the columns linear between knots (constant beyond them)."""
    front, rear = x + half, x - half
    grade = (np.interp(front, KNOTS, ELEV) - np.interp(rear, KNOTS, ELEV)) / (2 * half)
    curve = (np.interp(front, KNOTS, CURVE) - np.interp(rear, KNOTS, CURVE)) / (2 * half)
    return grade, curve


@pytest.mark.parametrize("lead", [
    500.0,     # every vehicle on one piece
    1100.0,    # the train across one knot (some vehicles straddling it)
    2100.0,    # across two knots: the pieces are walked
    3000.0,    # the lead past the last knot
])
@pytest.mark.parametrize("order", ["train", "reversed"])
def test_means_under_vehicles_are_the_profiles_differences_over_their_lengths(lead, order):
    n = 40
    half = np.full(n, 7.5)
    x = lead - 15.5 * np.arange(n)
    if order == "reversed":  # the vehicles listed rear first: no order is assumed
        x = x[::-1].copy()
    ends = np.zeros((2, n), dtype=np.int64)
    out = np.zeros((4, n))
    means_under(track(), x, half, 1.0 / (2 * half), ends, False, out)
    grade, curve = expected(x, half)
    np.testing.assert_allclose(out[0], grade, rtol=0, atol=1e-12)
    np.testing.assert_allclose(out[1], curve, rtol=0, atol=1e-12)
    t = track()
    for i in range(n):  # the pieces kept for the next call hold the ends
        assert t.lo[ends[0, i]] <= x[i] + half[i] < t.hi[ends[0, i]]
        assert t.lo[ends[1, i]] <= x[i] - half[i] < t.hi[ends[1, i]]


def test_means_under_the_walk_agrees_bitwise_with_one_or_two_pieces():
    # the same vehicles once as a train over three pieces (each end walked to its piece)
    # and once each alone (on one piece or two: taken by comparison with the knot)
    n = 80
    half = np.full(n, 7.0)
    x = 2100.0 - 14.5 * np.arange(n)
    inv = 1.0 / (2 * half)
    together = np.zeros((4, n))
    means_under(track(), x, half, inv, np.zeros((2, n), dtype=np.int64), False, together)
    for i in range(n):
        alone = np.zeros((4, 1))
        means_under(track(), x[i:i + 1], half[i:i + 1], inv[i:i + 1],
                    np.zeros((2, 1), dtype=np.int64), False, alone)
        assert alone[0, 0] == together[0, i] and alone[1, 0] == together[1, i]


def test_means_under_no_vehicles_is_nothing():
    out = np.zeros((4, 0))
    means_under(track(), np.zeros(0), np.zeros(0), np.zeros(0),
                np.zeros((2, 0), dtype=np.int64), False, out)
    assert out.shape == (4, 0)
