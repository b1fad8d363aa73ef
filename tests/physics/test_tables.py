"""Tables (rrscore.physics.tables): the compiled lookup against numpy's own interp."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from rrscore.physics.tables import interp_one


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(0.0, 80.0), min_size=1, max_size=8, unique=True),
       st.lists(st.floats(0.0, 0.5), min_size=8, max_size=8),
       st.floats(-10.0, 100.0))
def test_the_compiled_table_lookup_is_numpys_interp_to_the_bit(speeds, values, x):
    xp = np.sort(np.array(speeds))
    fp = np.array(values[:xp.size])
    for q in (x, *xp, xp[0] - 1.0, xp[-1] + 1.0):  # anywhere, on every knot, outside
        expected = np.interp(q, xp, fp)
        assert interp_one(q, xp, fp) == expected
        assert np.interp(np.array([q] * 9), xp, fp)[0] == expected  # (numpy's own paths)


def test_the_compiled_table_lookup_passes_nan_through():
    assert np.isnan(interp_one(np.nan, np.array([0.0, 10.0]), np.array([0.3, 0.2])))
