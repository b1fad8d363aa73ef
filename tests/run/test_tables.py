"""A drive's tables for analysis (rrscore/run/tables.py): the DataFrames of
``DriveResult.to_pandas()`` hold the CSVs' values, and the Parquet files of
``output.format = "parquet"`` (a drive's, a sweep's) read back to the CSVs' values;
Parquet files are whole or absent; a missing pandas or pyarrow is one line naming the
extra."""

from __future__ import annotations

import csv
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from conftest import CONFIGS

import rrscore
from rrscore.cli.main import main
from rrscore.run import tables
from rrscore.run.sweep import Sweep
from rrscore.run.tables import MissingExtra, ParquetRows, csv_to_parquet

pd = pytest.importorskip("pandas")
pq = pytest.importorskip("pyarrow.parquet")

#: A short stretch of two shipped drives: 50 couplings, and two cars meeting (events).
DRIVES = {"freight_50": ("freight_50.toml", {"stop.max_time": 20}),
          "impact_2ms": ("impact_2ms.toml", {"stop.max_time": 3})}
#: How each table's CSV writes its numbers: the time series and forces to 10 significant
#: digits, an event's time to the microsecond and its value to 6 digits.
SERIES_FORMAT = "{:.10g}"
EVENT_FORMATS = {"time_s": "{:.6f}", "value": "{:.6g}"}


def read_csv(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def assert_table_is_the_csv(frame, path: Path, formats: dict[str, str] | None = None) -> None:
    """Every value of ``frame``, written as the CSV writes it, is the CSV's text, column
    by column and row by row (same header, same number of rows)."""
    rows = read_csv(path)
    assert list(frame.columns) == rows[0]
    assert len(frame) == len(rows) - 1
    for i, name in enumerate(rows[0]):
        fmt = (formats or {}).get(name, SERIES_FORMAT if formats is None else None)
        cells = [r[i] for r in rows[1:]]
        values = frame[name].tolist()
        if fmt is None:  # text as it is
            assert values == cells, name
        else:
            assert [fmt.format(v) for v in values] == cells, name


def scenario_of(name: str, **output) -> rrscore.Scenario:
    file, values = DRIVES[name]
    values = {**values, **{f"output.{k}": v for k, v in output.items()}}
    return rrscore.load_scenario(CONFIGS / "scenarios" / file).with_values(values)


@pytest.fixture(scope="module", params=sorted(DRIVES))
def drives(request, tmp_path_factory):
    """The drive written as CSV and as Parquet: (its CSV result, the Parquet result)."""
    name = request.param
    out = tmp_path_factory.mktemp(name)
    as_csv = rrscore.drive(scenario_of(name), out=out / "csv")
    as_parquet = rrscore.drive(scenario_of(name, format="parquet"), out=out / "parquet")
    return as_csv, as_parquet


def test_frames_hold_the_csvs_values(drives) -> None:
    result = drives[0]
    frames = result.to_pandas()
    assert_table_is_the_csv(frames.timeseries, result.out_dir / "timeseries.csv")
    assert_table_is_the_csv(frames.coupler_forces, result.out_dir / "coupler_forces.csv")
    assert_table_is_the_csv(frames.events, result.out_dir / "events.csv", EVENT_FORMATS)


def test_the_impact_has_events_and_every_coupling_a_force_column(drives) -> None:
    # (so that the comparisons above compare something)
    frames = drives[0].to_pandas()
    couplings = drives[0].summary["couplings"]
    assert list(frames.coupler_forces.columns[1:]) == \
        [f"c{j}_force_N" for j in range(len(couplings))]
    if drives[0].summary["scenario"].startswith("impact"):
        assert len(frames.events) > 0


def test_coupler_force_frame_peaks_are_within_the_summarys_envelope(drives) -> None:
    # the envelope is over every solver step, the frame over the samples: never beyond it
    forces = drives[0].to_pandas().coupler_forces
    for c in drives[0].summary["couplings"]:
        column = forces[f"c{c['coupling']}_force_N"]
        assert column.max() <= c["max_tension_N"] * (1 + 1e-12) + 1e-9
        assert -column.min() <= c["max_compression_N"] * (1 + 1e-12) + 1e-9


def test_parquet_files_read_back_to_the_csvs(drives) -> None:
    as_csv, as_parquet = drives
    for name in ("timeseries", "coupler_forces", "events"):
        assert not (as_parquet.out_dir / f"{name}.csv").exists()
        frame = pd.read_parquet(as_parquet.out_dir / f"{name}.parquet")
        assert_table_is_the_csv(frame, as_csv.out_dir / f"{name}.csv",
                                EVENT_FORMATS if name == "events" else None)


def test_parquet_holds_the_results_values_to_the_bit(drives) -> None:
    result = drives[1]
    frames = result.to_pandas()
    for name in ("timeseries", "coupler_forces", "events"):
        pd.testing.assert_frame_equal(pd.read_parquet(result.out_dir / f"{name}.parquet"),
                                      getattr(frames, name), check_dtype=False)


def test_one_vehicle_has_no_coupler_force_table() -> None:
    scenario = rrscore.load_scenario(CONFIGS / "scenarios" / "simple_loco_level.toml")
    result = rrscore.drive(scenario.with_values({"stop.max_time": 2}))
    assert result.coupler_forces is None and result.to_pandas().coupler_forces is None


def test_without_coupler_forces_output_the_drive_keeps_none() -> None:
    result = rrscore.drive(scenario_of("impact_2ms", coupler_forces=False))
    assert result.coupler_forces is None


def test_a_drive_not_keeping_its_coupler_forces_still_writes_them(tmp_path: Path) -> None:
    kept = rrscore.drive(scenario_of("freight_50"), out=tmp_path / "kept")
    lean = rrscore.Drive(scenario_of("freight_50"), keep_coupler_forces=False).run(
        tmp_path / "lean")
    assert lean.coupler_forces is None and kept.coupler_forces is not None
    assert (tmp_path / "lean" / "coupler_forces.csv").read_bytes() == \
        (tmp_path / "kept" / "coupler_forces.csv").read_bytes()
    np.testing.assert_array_equal(lean.series["front_m"], kept.series["front_m"])


def test_sweep_parquet_reads_back_to_sweep_csv(tmp_path: Path) -> None:
    scenario = rrscore.load_scenario(CONFIGS / "scenarios" / "simple_loco_level.toml")
    scenario = scenario.with_values({"output.format": "parquet", "output.plots": False})
    # two locomotives but one start speed: that case fails, a row of nulls and an error
    # among the others; lists (JSON in the CSV) and quantities as parameters
    Sweep(scenario, {"train.vehicles[0].count": [1, 2, 1],
                     "start.speeds": [[0.0], [0.0], ["20 km/h"]],
                     "stop.max_time": [2, "3 s", 2]}, mode="zip").run(out=tmp_path)
    rows = read_csv(tmp_path / "sweep.csv")
    table = pq.read_table(tmp_path / "sweep.parquet")
    assert table.column_names == rows[0]
    assert table.schema.field("case").type == "int64"
    assert table.schema.field("sim_time_s").type == "double"
    assert [[_as_csv(v) for v in row.values()] for row in table.to_pylist()] == rows[1:]
    assert any(r[-1] for r in rows[1:])  # (the failed case is there)


def _as_csv(value) -> str:
    """A value as Python's csv module writes it (a float as its repr, None empty)."""
    return "" if value is None else str(value)


def test_csv_to_parquet_types_a_column_by_all_its_cells(tmp_path: Path, monkeypatch) -> None:
    # numbers in the first batches and a string in the last: a column of strings
    monkeypatch.setattr(tables, "CSV_BATCH_ROWS", 3)
    rows = [["a", "b", "c", "d"]] + [[str(i), f"{i / 3!r}", "", str(i)] for i in range(7)]
    rows[-1][3] = "x"
    rows[2][1] = ""
    with open(tmp_path / "t.csv", "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)
    csv_to_parquet(tmp_path / "t.csv", tmp_path / "t.parquet")
    table = pq.read_table(tmp_path / "t.parquet")
    assert [str(table.schema.field(c).type) for c in "abcd"] == \
        ["int64", "double", "string", "string"]
    assert table.column("b").to_pylist()[1] is None  # an empty number is null
    assert table.column("c").to_pylist() == [""] * 7  # an empty string is ""
    assert [[_as_csv(v) for v in r.values()] for r in table.to_pylist()] == \
        [[c for c in r] for r in rows[1:]]


def test_parquet_rows_are_whole_or_absent(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "t.parquet"
    monkeypatch.setattr(tables, "ROW_GROUP_VALUES", 2048)  # several row groups
    writer = ParquetRows(path, ["time_s", "x_m"])
    data = np.column_stack([np.arange(5000.0), np.sqrt(np.arange(5000.0))])
    for block in np.array_split(data, 7):
        writer.record_many(block)
    assert not path.exists()  # nothing in place until it is complete
    writer.close()
    writer.close()
    assert pq.ParquetFile(path).metadata.num_row_groups > 1
    np.testing.assert_array_equal(pq.read_table(path).to_pandas().to_numpy(), data)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.parquet"]

    failing = ParquetRows(tmp_path / "f.parquet", ["time_s"])
    failing.record_many(np.zeros((3, 1)))

    def full_disk(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(tables.os, "fsync", full_disk)
    with pytest.raises(OSError):
        failing.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.parquet"]


def test_an_interrupted_drive_ends_its_parquet_files_with_the_rows_so_far(tmp_path):
    seen = []

    def progress(fraction, t, speed):
        seen.append(t)
        if t >= 5.0 and fraction < 1.0:
            raise KeyboardInterrupt

    scenario = scenario_of("freight_50", format="parquet")
    with pytest.raises(KeyboardInterrupt):
        rrscore.Drive(scenario).run(tmp_path, progress=progress, chunk=1.0)
    series = pd.read_parquet(tmp_path / "timeseries.parquet")
    assert 5.0 <= series["time_s"].iloc[-1] < 20.0
    forces = pd.read_parquet(tmp_path / "coupler_forces.parquet")
    assert len(forces) == len(series)
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_missing_pandas_is_one_line_naming_the_extra(monkeypatch) -> None:
    result = rrscore.drive(scenario_of("impact_2ms"))
    monkeypatch.setitem(sys.modules, "pandas", None)  # (import pandas now fails)
    with pytest.raises(MissingExtra) as info:
        result.to_pandas()
    message = str(info.value)
    assert "\n" not in message and "pip install 'rrscore[analysis]'" in message
    assert isinstance(info.value, ImportError)


def test_cli_format_parquet_without_pyarrow_is_one_line_exit_2(tmp_path, monkeypatch,
                                                                capsys) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    scenario = str(CONFIGS / "scenarios" / "impact_2ms.toml")
    assert main(["drive", scenario, "--out", str(tmp_path / "d"), "--format", "parquet"]) == 2
    assert main(["sweep", scenario, "--param", "stop.max_time=1", "--out",
                 str(tmp_path / "s"), "--format", "parquet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all("rrscore[analysis]" in line for line in err)
    assert not (tmp_path / "d").exists() and not (tmp_path / "s").exists()


def test_cli_drive_and_sweep_write_parquet(tmp_path, capsys) -> None:
    scenario = str(CONFIGS / "scenarios" / "impact_2ms.toml")
    assert main(["drive", scenario, "--out", str(tmp_path / "d"), "--max-time", "1",
                 "--format", "parquet"]) == 0
    assert {"timeseries.parquet", "coupler_forces.parquet", "events.parquet"} <= \
        {p.name for p in (tmp_path / "d").iterdir()}
    assert main(["sweep", scenario, "--param", "stop.max_time=1,2", "--out",
                 str(tmp_path / "s"), "--format", "parquet"]) == 0
    assert pq.read_table(tmp_path / "s" / "sweep.parquet").num_rows == 2
    assert "sweep.parquet" in capsys.readouterr().out


def test_cli_yard_refuses_parquet_in_one_line(tmp_path, capsys) -> None:
    yard = str(CONFIGS / "yards" / "hump_20_cuts.toml")
    assert main(["drive", yard, "--out", str(tmp_path / "y"), "--format", "parquet"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "--format" in err and "CSV only" in err


def test_events_dynamics_refuses_parquet_naming_the_key() -> None:
    scenario = scenario_of("impact_2ms", format="parquet")
    with pytest.raises(rrscore.ConfigError) as info:
        rrscore.drive(scenario.with_values({"dynamics": "events"}))
    assert "output.format" in str(info.value)


def test_a_parquet_table_failing_at_the_end_leaves_the_others_whole_and_no_temporary(
        tmp_path, monkeypatch) -> None:
    real_replace = tables.os.replace
    failed = []

    def replace(src, dst):  # the time series is not put in place (a full disk)
        if Path(dst).name == "timeseries.parquet":
            failed.append(dst)
            raise OSError(28, "No space left on device")
        return real_replace(src, dst)

    monkeypatch.setattr(tables.os, "replace", replace)
    with pytest.raises(rrscore.RrsError):
        rrscore.drive(scenario_of("impact_2ms", format="parquet"), out=tmp_path)
    names = {p.name for p in tmp_path.iterdir()}
    assert not [n for n in names if n.endswith(".tmp")]
    assert failed and "timeseries.parquet" not in names
    # the coupler forces closed all the same, the events and the summary written after
    assert {"coupler_forces.parquet", "events.parquet", "summary.json"} <= names
    assert pq.read_table(tmp_path / "coupler_forces.parquet").num_rows > 0
    assert pq.read_table(tmp_path / "events.parquet").num_rows > 0


def test_a_broken_install_is_one_line_naming_the_extra(monkeypatch) -> None:
    def broken(name):  # pyarrow built for another numpy: a message of several lines
        raise ImportError("pyarrow requires NumPy 2.0 or newer, found 1.26.4\nmore detail")

    monkeypatch.setattr(tables, "importlib", SimpleNamespace(import_module=broken))
    with pytest.raises(MissingExtra) as info:
        tables.optional("pyarrow.parquet", "Parquet output")
    assert str(info.value) == (
        "Parquet output needs pyarrow, which fails to import (pyarrow requires NumPy 2.0 or "
        "newer, found 1.26.4); install the analysis extra: pip install 'rrscore[analysis]'")
