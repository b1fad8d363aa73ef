"""The control step's reductions (rrscore.reductions) against numpy's own."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from rrscore.reductions import all_finite, all_set, any_set, extremes, max_abs

# any float, NaN and infinities included, in short arrays like a train's
FLOATS = arrays(np.float64, st.integers(1, 40), elements=st.floats(allow_nan=True,
                                                                   allow_infinity=True))
MATRICES = arrays(np.float64, st.tuples(st.integers(1, 6), st.integers(1, 6)),
                  elements=st.floats(allow_nan=True, allow_infinity=True))


@settings(deadline=None)  # the first call compiles
@given(FLOATS)
def test_any_and_all_answer_as_numpys(a):
    assert any_set(a) == bool(a.any())
    assert all_set(a) == bool(a.all())
    mask = a > 0
    assert any_set(mask) == bool(mask.any())
    assert all_set(mask) == bool(mask.all())


def test_all_of_nothing_is_true_and_any_of_nothing_false():
    assert all_set(np.zeros(0, dtype=bool)) and not any_set(np.zeros(0, dtype=bool))


@settings(deadline=None)  # the first call compiles
@given(MATRICES)
def test_all_finite_answers_as_numpys_on_any_shape(a):
    assert all_finite(a) == bool(np.isfinite(a).all())
    assert all_finite(a.T) == bool(np.isfinite(a).all())  # not contiguous


@settings(deadline=None)  # the first call compiles
@given(FLOATS)
def test_extremes_and_max_abs_are_numpys_and_nan_wins(a):
    lo, hi = extremes(a)
    np.testing.assert_array_equal([lo, hi], [a.min(), a.max()])
    np.testing.assert_array_equal(max_abs(a), np.abs(a).max())
