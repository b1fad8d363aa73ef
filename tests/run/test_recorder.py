"""The recorder: rows kept in memory as float blocks and written to CSV as they come."""

from __future__ import annotations

import csv
import tracemalloc

import numpy as np
import pytest

from rrscore.run.recorder import CouplingMonitor, Recorder


def test_the_series_holds_every_row_across_blocks_in_order(tmp_path):
    rec = Recorder(["t", "a", "b"], tmp_path / "s.csv")
    rec._block_rows = 16  # several blocks for a few rows
    rows = [[i * 0.5, i, -i] for i in range(50)]
    for row in rows:
        rec.record(row)
    rec.close()
    series = rec.series()
    assert len(rec) == 50
    assert np.array_equal(series["t"], np.arange(50) * 0.5)
    assert np.array_equal(series["b"], -np.arange(50.0))
    with open(tmp_path / "s.csv") as fh:
        written = list(csv.reader(fh))
    assert written[0] == ["t", "a", "b"] and len(written) == 51
    assert [float(v) for v in written[-1]] == rows[-1]


def test_an_empty_recorder_gives_empty_columns():
    series = Recorder(["t", "x"]).series()
    assert list(series) == ["t", "x"] and series["t"].shape == (0,)


def test_a_series_taken_while_recording_is_a_copy():
    rec = Recorder(["t"])
    rec.record([1.0])
    first = rec.series()["t"]
    rec.record([2.0])
    assert first.tolist() == [1.0] and rec.series()["t"].tolist() == [1.0, 2.0]


def test_a_row_of_the_wrong_length_is_refused():
    rec = Recorder(["t", "x"])
    with pytest.raises(ValueError):
        rec.record([1.0, 2.0, 3.0])


def test_kept_rows_cost_about_eight_bytes_a_value():
    # 10,000 values a row (a long train's per-vehicle signal), 200 rows: 16 MB as floats
    columns = [f"v{i}" for i in range(10_000)]
    base = np.arange(10_000, dtype=float)
    tracemalloc.start()
    rec = Recorder(columns)
    for k in range(200):
        rec.record((base + k).tolist())  # a new row each time, as a drive samples them
    used, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert used < 1.1 * 8 * 10_000 * 200 + Recorder.BLOCK_BYTES


def test_the_monitor_keeps_each_couplings_extremes_with_the_first_step_to_reach_them():
    # forces rounded to a few values, so that extremes tie and the first must win; the
    # answer is taken per coupling with numpy (argmax gives the first of equal values)
    rng = np.random.default_rng(7)
    k, nc = 40, 5
    t = np.cumsum(rng.uniform(0.01, 0.02, k))
    position = rng.normal(size=(k, nc)) * 100.0
    force = np.round(rng.normal(size=(k, nc)) * 3.0) * 1e4
    mon = CouplingMonitor(nc)
    mon.update_many(t[:15], position[:15], force[:15])  # in batches and one by one
    for j in range(15, 20):
        mon.update(t[j], position[j], force[j])
    mon.update_many(t[20:], position[20:], force[20:])
    cols = np.arange(nc)
    for name, f in (("tension", force), ("compression", -force)):
        first = f.argmax(axis=0)
        assert (f.max(axis=0) > 0).all()  # each coupling sees both (else the start holds)
        np.testing.assert_array_equal(getattr(mon, name), f.max(axis=0))
        np.testing.assert_array_equal(getattr(mon, f"{name}_time"), t[first])
        np.testing.assert_array_equal(getattr(mon, f"{name}_position"), position[first, cols])
    ties = [(f == f.max(axis=0)).sum(axis=0) for f in (force, -force)]
    assert max(int(n.max()) for n in ties) > 1  # a tie was met, so "first" was tested


def test_no_write_of_a_line_file_crosses_a_page_boundary_but_one_of_a_single_row(tmp_path):
    # a killed process's write can stop between pages (Linux checks for a fatal signal
    # there): whole rows are safe only where no call crosses a page boundary mid-row
    from rrscore.run.recorder import LineFile

    lf = LineFile(tmp_path / "t.csv", ["a", "b"])
    calls = []
    real = lf._fh.write

    def spy(data):
        calls.append((lf._offset, bytes(data)))
        return real(data)

    lf._fh.write = spy
    rng = np.random.default_rng(3)
    rows = [[f"{v:.10g}" for v in rng.normal(size=rng.integers(1, 400))] for _ in range(700)]
    for row in rows:
        lf.write(row)
    lf.close()
    lines = (tmp_path / "t.csv").read_text().splitlines()
    assert lines[1:] == [",".join(r) for r in rows]  # everything, in order
    assert len(calls) > 10
    for start, data in calls:
        assert data.endswith(b"\n")  # whole rows only
        crosses = start // 4096 != (start + len(data) - 1) // 4096
        assert not crosses or data.count(b"\n") == 1, (start, len(data))


def test_rows_queued_when_an_interruption_stops_a_flush_are_written_at_close(tmp_path):
    # a signal's KeyboardInterrupt raised in the middle of a flush (here: at its third
    # write, the page boundaries making several): the rows not yet written stay queued
    # and close() writes them, each once
    from rrscore.run.recorder import LineFile

    lf = LineFile(tmp_path / "t.csv", ["t", "x"])
    for i in range(600):
        lf.write([i, "y" * 40])
    calls = []
    real = lf._write

    def interrupted(data):
        calls.append(len(data))
        if len(calls) == 3:
            raise KeyboardInterrupt
        real(data)

    lf._write = interrupted
    with pytest.raises(KeyboardInterrupt):
        lf.flush()
    lf._write = real
    lf.close()
    rows = list(csv.reader((tmp_path / "t.csv").read_text().splitlines()))
    assert [int(r[0]) for r in rows[1:]] == list(range(600))
