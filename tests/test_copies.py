"""rrscore.copies: the loops compiled code copies arrays with, in place of slice
assignment."""

import numpy as np

from rrscore.copies import copy_into, copy_rows


def test_copy_into_a_row_of_a_buffer_writes_through_and_leaves_the_other_rows():
    buf = np.zeros((3, 4))
    copy_into(buf[1], np.array([1.0, -2.0, np.nan, np.inf]))
    np.testing.assert_array_equal(buf[1], [1.0, -2.0, np.nan, np.inf])
    assert not buf[0].any() and not buf[2].any()


def test_copy_into_copies_flags():
    dst = np.zeros(3, dtype=np.bool_)
    copy_into(dst, np.array([True, False, True]))
    assert dst.tolist() == [True, False, True]


def test_copy_rows_gives_what_slice_assignment_gives():
    src = np.arange(12.0).reshape(3, 4) * 0.1
    dst, expected = np.empty((3, 4)), np.empty((3, 4))
    copy_rows(dst, src)
    expected[:, :] = src
    np.testing.assert_array_equal(dst, expected)
