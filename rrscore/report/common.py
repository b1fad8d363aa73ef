"""What every report shares: Bokeh (an optional extra, imported on use), the run's CSVs
read as they stand (an interrupted run's too), tables, and the HTML written whole."""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..model.errors import RrsError
from ..run.files import write_atomically
from ..run.tables import read_parquet

#: The most rows of a CSV embedded; a longer file is thinned to every k-th row (and its
#: last), so a report of a very long run stays a file a browser opens.
MAX_ROWS = 200_000
#: The most rows of a table (events, sweep cases) shown; the report says when it cut.
MAX_TABLE_ROWS = 5_000
#: Plot sizes, px.
WIDTH, HEIGHT = 1000, 300


def bokeh() -> Any:
    """The ``bokeh`` package, or one clear error naming the extra that installs it."""
    try:
        import bokeh  # noqa: F401  (the submodules are imported where used)
        import bokeh.embed
        import bokeh.layouts
        import bokeh.models
        import bokeh.palettes
        import bokeh.plotting
        import bokeh.resources
    except ImportError:
        raise RrsError("report.html needs Bokeh, which is not installed; install the "
                       "report extra: pip install 'rrscore[report]'") from None
    return bokeh


class Table:
    """A table a run wrote, read as it stands: the header and the whole rows (a CSV row of
    another length, such as one cut short, is left out). Columns whose every cell is a
    number (or empty) are float arrays, the others lists of text; :attr:`text` keeps the
    cells as written of the columns named in ``keep_text``."""

    def __init__(self, path: Path, columns: dict[str, Any],
                 text: dict[str, list[str]] | None = None) -> None:
        self.path = path
        self.header = list(columns)
        self.columns = columns
        self.text = text or {}
        self.rows = len(next(iter(columns.values()))) if columns else 0

    @classmethod
    def from_csv(cls, path: Path, keep_text: Collection[str] = ()) -> Table:
        """The CSV at ``path``."""
        with open(path, newline="", encoding="utf-8") as fh:
            reader = csv.reader(fh)
            header = next(reader, [])
            rows = [r for r in reader if len(r) == len(header)]
        columns: dict[str, Any] = {}
        text: dict[str, list[str]] = {}
        for k, name in enumerate(header):
            cells = [r[k] for r in rows]
            if name in keep_text:
                text[name] = cells
            try:
                columns[name] = np.array([float(c) if c else math.nan for c in cells],
                                         dtype=float)
            except ValueError:
                columns[name] = cells
        return cls(path, columns, text)

    @classmethod
    def from_parquet(cls, path: Path) -> Table:
        """The Parquet file at ``path`` (a drive's, after ``--format parquet``)."""
        columns = {name: values.astype(float) if values.dtype.kind in "fiub"
                   else [str(v) for v in values]
                   for name, values in read_parquet(path).items()}
        return cls(path, columns)

    def __contains__(self, name: str) -> bool:
        return name in self.columns

    def __getitem__(self, name: str) -> Any:
        return self.columns[name]


def header_of(path: Path) -> list[str]:
    """The first row of the CSV at ``path`` (none where it is absent)."""
    if not path.is_file():
        return []
    with open(path, newline="", encoding="utf-8") as fh:
        return next(csv.reader(fh), [])


def read_table(path: Path, keep_text: Collection[str] = ()) -> Table | None:
    """The CSV at ``path`` or, where there is none, the Parquet file of the same name (a
    drive written with ``--format parquet``); None where neither is there or it has no
    row."""
    parquet = path.with_suffix(".parquet")
    if path.is_file():
        table = Table.from_csv(path, keep_text)
    elif parquet.is_file():
        table = Table.from_parquet(parquet)
    else:
        return None
    return table if table.rows else None


def read_json(path: Path) -> dict | None:
    """The JSON file at ``path`` (a summary), or None where it is absent or unreadable."""
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def thinned(n: int, most: int | None = None) -> np.ndarray:
    """The indices of the rows embedded of ``n``: all of them up to ``most`` (default
    :data:`MAX_ROWS`), else every k-th (the least k that keeps at most ``most``) and the
    last."""
    most = MAX_ROWS if most is None else most
    if n <= most:
        return np.arange(n)
    step = math.ceil(n / (most - 1))
    return np.unique(np.concatenate([np.arange(0, n, step), [n - 1]]))


def flatten(doc: Mapping[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    """A summary's scalar values as (dotted key, text) pairs; lists of records (per
    coupling, per cut) are left to tables of their own."""
    items: list[tuple[str, str]] = []
    for key, value in doc.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            items += flatten(value, f"{name}.")
        elif isinstance(value, list) and value and isinstance(value[0], Mapping):
            continue
        elif isinstance(value, float):
            items.append((name, f"{value:.6g}"))
        elif isinstance(value, list):
            items.append((name, ", ".join(str(v) for v in value)))
        else:
            items.append((name, str(value)))
    return items


def data_table(columns: Mapping[str, Sequence[Any]], name: str, height: int = 280) -> Any:
    """A Bokeh table of ``columns`` (title: values), its source named ``name``."""
    bk = bokeh()
    models = bk.models
    data = {k: list(v) for k, v in columns.items()}
    source = models.ColumnDataSource(data, name=name)
    cols = [models.TableColumn(field=k, title=k) for k in columns]
    return models.DataTable(source=source, columns=cols, height=height,
                            sizing_mode="stretch_width", index_position=None,
                            reorderable=False)


def records_table(records: Sequence[Mapping[str, Any]], name: str) -> Any:
    """A table of a summary's list of records (per coupling, per cut): a column per key,
    nested values as text."""
    keys: list[str] = []
    for r in records:
        keys += [k for k in r if k not in keys]
    cols = {k: [_text(r.get(k, "")) for r in records] for k in keys}
    return data_table(cols, name, height=min(40 + 25 * len(records), 320))


def _text(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, Mapping | list):
        return json.dumps(value, default=str)
    return str(value)


def summary_table(summary: Mapping[str, Any]) -> Any:
    """The summary's scalar figures, a row each."""
    items = flatten(summary)
    return data_table({"figure": [k for k, _ in items], "value": [v for _, v in items]},
                      "summary", height=min(40 + 25 * len(items), 420))


def events_table(events: Table) -> tuple[Any, str]:
    """``events.csv`` as a table (its first :data:`MAX_TABLE_ROWS` rows) and a note of how
    many it shows."""
    n = min(events.rows, MAX_TABLE_ROWS)
    cols = {}
    for k in events.header:
        col = events[k]
        cols[k] = [_cell(v) for v in col[:n]]
    note = f"{events.rows} events" + (f", the first {n} shown" if n < events.rows else "")
    return data_table(cols, "events", height=min(40 + 25 * n, 400)), note


def _cell(value: Any) -> Any:
    """A table cell: text as it is, a number as a number (NaN as empty)."""
    if isinstance(value, str):
        return value
    return "" if math.isnan(value) else float(value)


def heading(text: str, level: int = 2) -> Any:
    """A heading (escaped text) for the report's column."""
    import html

    return bokeh().models.Div(text=f"<h{level}>{html.escape(text)}</h{level}>",
                              sizing_mode="stretch_width")


def note(text: str) -> Any:
    """A line of text under a heading."""
    import html

    return bokeh().models.Div(text=f"<p>{html.escape(text)}</p>", sizing_mode="stretch_width")


def legend_outside(fig: Any) -> None:
    """Put the figure's legend beside the plot (never over the data); a click on an entry
    hides its line."""
    if fig.legend:
        legend = fig.legend[0]
        legend.click_policy = "hide"
        fig.add_layout(legend, "right")


def write_html(parts: Sequence[Any], path: Path, title: str) -> Path:
    """The report's parts, one under another, as one HTML file with BokehJS inline (opening
    it fetches nothing), written whole to ``path``."""
    bk = bokeh()
    layout = bk.layouts.column(list(parts), sizing_mode="stretch_width")
    html = bk.embed.file_html(layout, bk.resources.INLINE, title)
    write_atomically(path, html)
    return path
