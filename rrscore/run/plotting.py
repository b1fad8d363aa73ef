"""What every plot of rrscore shares: headless matplotlib and colours that tell apart
any number of things (cuts in a yard's plan, runs of a calibration or a comparison)."""

from __future__ import annotations

from typing import Any

import numpy as np

#: tab10 and tab20's light shades without their greys (tracks and grids are grey) and
#: without black (kept for what must stand apart, such as a yard's locomotives).
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#bcbd22", "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5",
           "#c49c94", "#f7b6d2", "#dbdb8d", "#9edae5")


def pyplot() -> Any:
    """matplotlib.pyplot on the Agg backend: no display needed (imported on use, as
    matplotlib costs start-up time every command would pay)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def distinct_colours(n: int) -> list[str]:
    """``n`` distinct colours (hex), none grey or black: :data:`PALETTE`'s, or for more
    than it has, ``n`` hues round the colour wheel by golden-ratio steps (all distinct, and
    neighbours in order far apart in hue), at two brightnesses in turn."""
    if n <= len(PALETTE):
        return list(PALETTE[:n])
    import matplotlib.colors

    k = np.arange(n)
    hsv = np.stack([(k * 0.6180339887498949) % 1.0, np.full(n, 0.85),
                    np.where(k % 2, 0.65, 0.95)], axis=1)
    return [matplotlib.colors.to_hex(c) for c in matplotlib.colors.hsv_to_rgb(hsv)]
