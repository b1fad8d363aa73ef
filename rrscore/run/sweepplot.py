"""``sweep.png``: every summary figure of a sweep against each swept parameter, drawn
from ``sweep.csv`` when the sweep ends.

The rows are read once, streaming, in bounded memory whatever the sweep's size: at most
:data:`MAX_POINTS` rows are drawn as points (a uniform sample, the same every time), and
for each distinct value of a parameter (up to :data:`MAX_LEVELS` of them) the mean,
smallest and largest of each figure over every row, not only the sampled ones, are drawn
as a line and a band. Failed cases (``error`` not empty) and empty cells are left out.
"""

from __future__ import annotations

import csv
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .files import save_figure
from .plotting import pyplot

#: The most rows drawn as points (a uniform sample of the rows beyond it).
MAX_POINTS = 5_000
#: The most distinct values of a parameter whose per-value mean and range are drawn; a
#: parameter with more shows its sampled points only.
MAX_LEVELS = 500
#: The most distinct texts a parameter that is not a number may take to be drawn (as
#: categories along the axis); one with more is left out of the plot.
MAX_CATEGORIES = 50


@dataclass
class _Levels:
    """Per distinct value of one parameter: count, sum, smallest and largest of each figure."""

    stats: dict = field(default_factory=dict)
    overflow: bool = False

    def add(self, x: float, ys: Sequence[float]) -> None:
        if self.overflow:
            return
        s = self.stats.get(x)
        if s is None:
            if len(self.stats) >= MAX_LEVELS:
                self.overflow, self.stats = True, {}
                return
            s = self.stats[x] = [np.zeros(len(ys)), np.zeros(len(ys)),
                                 np.full(len(ys), np.inf), np.full(len(ys), -np.inf)]
        y = np.asarray(ys, dtype=float)
        ok = np.isfinite(y)
        s[0] += ok
        s[1] += np.where(ok, y, 0.0)
        s[2] = np.where(ok, np.minimum(s[2], y), s[2])
        s[3] = np.where(ok, np.maximum(s[3], y), s[3])


def _number(text: str) -> float:
    """A cell as a number; NaN where it is empty or not a number."""
    try:
        return float(text)
    except ValueError:
        return math.nan


def sweep_plot_data(csv_path: str | Path, params: Sequence[str], figures: Sequence[str],
                    seed: int = 0) -> dict:
    """What :func:`sweep_plot` draws, read from ``csv_path`` (``sweep.csv``): for each
    parameter its values as the cases resolved them (the ``KEY_si`` column):

    * ``x[p]`` and ``y[p]`` (``(n, len(figures))``): the sampled rows' points, at most
      :data:`MAX_POINTS`;
    * ``levels[p]``: ``(x, mean, lo, hi)`` arrays over every row, per distinct value of
      ``p`` (None past :data:`MAX_LEVELS` values);
    * ``categories[p]``: for a parameter that is not a number, its texts in order of
      first appearance, ``x`` being their index (None for a number);

    and ``rows`` (the rows read), ``drawn`` (the rows that ran). Parameters that are
    neither (more than :data:`MAX_CATEGORIES` texts) are left out of ``x``."""
    rng = random.Random(seed)
    with open(csv_path, newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        header = next(reader, [])
        col = {name: k for k, name in enumerate(header)}
        pcols = [col[f"{p}_si"] for p in params]
        ycols = [col[f] for f in figures]
        err = col.get("error")
        texts: list[dict[str, int] | None] = [None] * len(params)
        dropped = [False] * len(params)
        levels = [_Levels() for _ in params]
        sample: list[tuple[list[float], list[float]]] = []
        rows = drawn = 0
        for row in reader:
            rows += 1
            if len(row) != len(header) or (err is not None and row[err]):
                continue
            drawn += 1
            ys = [_number(row[c]) for c in ycols]
            xs = []
            for j, c in enumerate(pcols):
                x = _number(row[c])
                if math.isnan(x) and row[c] and not dropped[j]:  # a text: a category
                    cats = texts[j] = texts[j] if texts[j] is not None else {}
                    x = float(cats.setdefault(row[c], len(cats)))
                    if len(cats) > MAX_CATEGORIES:
                        dropped[j] = True
                xs.append(x)
                if not math.isnan(x):
                    levels[j].add(x, ys)
            # reservoir sampling: every row equally likely to be drawn, memory bounded
            if len(sample) < MAX_POINTS:
                sample.append((xs, ys))
            else:
                k = rng.randrange(drawn)
                if k < MAX_POINTS:
                    sample[k] = (xs, ys)
    xs_all = np.array([s[0] for s in sample], dtype=float).reshape(len(sample), len(params))
    ys_all = np.array([s[1] for s in sample], dtype=float).reshape(len(sample), len(figures))
    data: dict = {"rows": rows, "drawn": drawn, "x": {}, "y": {}, "levels": {},
                  "categories": {}}
    for j, p in enumerate(params):
        if dropped[j]:
            continue
        data["x"][p], data["y"][p] = xs_all[:, j], ys_all
        data["categories"][p] = list(texts[j]) if texts[j] is not None else None
        if levels[j].overflow:
            data["levels"][p] = None
            continue
        keys = sorted(levels[j].stats)
        st = [levels[j].stats[k] for k in keys]
        n = np.array([s[0] for s in st]).reshape(len(keys), len(figures))
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.array([s[1] for s in st]).reshape(n.shape) / n
        lo = np.array([s[2] for s in st]).reshape(n.shape)
        hi = np.array([s[3] for s in st]).reshape(n.shape)
        data["levels"][p] = (np.array(keys), mean, np.where(n > 0, lo, np.nan),
                             np.where(n > 0, hi, np.nan))
    return data


def plottable_figures(columns: Sequence[str]) -> list[str]:
    """The summary figures of a sweep's ``columns`` that :func:`sweep_plot` draws: all but
    ``stop_reason`` (a text; sweep.csv holds it for every case)."""
    return [c for c in columns if c not in ("stop_reason", "error")]


def axis_label(key: str, unit: str | None) -> str:
    """A swept key's axis label: with its unit (``unit`` from
    :meth:`~rrscore.run.scenario.Scenario.unit_of`; none for a plain number), or "(SI)"
    where only a plugin knows it (None)."""
    if unit is None:
        return f"{key} (SI)"
    return f"{key} ({unit})" if unit else key


def sweep_plot(csv_path: str | Path, path: str | Path, params: Sequence[str],
               figures: Sequence[str], title: str = "",
               units: Mapping[str, str | None] | None = None) -> Path | None:
    """Draw each of ``figures`` against each of ``params`` (one panel each: rows figures,
    columns parameters; ``units``: each parameter's, see :func:`axis_label`) from
    ``csv_path`` into ``path``, written whole; None (and no file) when no case ran or
    nothing can be drawn."""
    figures = list(figures)
    data = sweep_plot_data(csv_path, params, figures)
    shown = [p for p in params if p in data["x"]]
    if not data["drawn"] or not shown or not figures:
        return None
    plt = pyplot()
    nr, nc = len(figures), len(shown)
    fig, axes = plt.subplots(nr, nc, figsize=(3.6 * nc + 1.0, 2.6 * nr + 0.8), dpi=100,
                             squeeze=False, layout="constrained")
    for c, p in enumerate(shown):
        x, y, lev, cats = data["x"][p], data["y"][p], data["levels"][p], \
            data["categories"][p]
        for r, f in enumerate(figures):
            ax = axes[r][c]
            ax.plot(x, y[:, r], ".", ms=3, alpha=0.35, color="tab:blue",
                    label="cases" + (" (a sample)" if data["drawn"] > MAX_POINTS else ""))
            if lev is not None:
                lx, mean, lo, hi = lev
                ax.fill_between(lx, lo[:, r], hi[:, r], color="tab:orange", alpha=0.2,
                                lw=0, label="range")
                ax.plot(lx, mean[:, r], "-", color="tab:orange", lw=1.2, marker=".",
                        label="mean")
            if cats is not None:
                ax.set_xticks(range(len(cats)), cats, rotation=30, fontsize=7)
            ax.grid(alpha=0.3)
            if r == nr - 1:
                ax.set_xlabel(axis_label(p, (units or {}).get(p)))
            if c == 0:
                ax.set_ylabel(f, fontsize=8)
    handles, labels = axes[0][0].get_legend_handles_labels()
    # One legend for every panel, below them: every entry, none over the data.
    fig.legend(handles, labels, loc="outside lower center", ncol=len(labels), fontsize=8,
               frameon=False)
    fig.suptitle(title or f"sweep: {data['drawn']} of {data['rows']} cases ran", fontsize=10)
    save_figure(fig, path)
    plt.close(fig)
    return Path(path)
