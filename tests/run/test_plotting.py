"""Colours shared by rrscore's plots (rrscore.run.plotting)."""

from __future__ import annotations

import matplotlib.colors
import pytest

from rrscore.run.plotting import distinct_colours


@pytest.mark.parametrize("n", [0, 1, 18, 19, 60, 500])
def test_distinct_colours_are_distinct_and_never_grey_or_black(n: int) -> None:
    colours = distinct_colours(n)
    assert len(colours) == n and len(set(colours)) == n
    for c in colours:
        r, g, b = matplotlib.colors.to_rgb(c)
        assert max(r, g, b) - min(r, g, b) > 0.1  # not a grey (nor black nor white)
