"""report.html (rrscore.report): the data embedded in the page are the run's own CSVs (in
the units the page shows, by the factors stated here), for a drive, a sweep and a yard;
the page fetches nothing; it is written whole; missing or partial outputs give a report
of what exists, or one clear error."""

from __future__ import annotations

import csv
import json
import math
import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import rrscore
from rrscore.model.errors import RrsError
from rrscore.report import page
from rrscore.report.common import thinned
from rrscore.report.page import write_report

from .reportdoc import sources


def read_csv(path: Path) -> dict[str, list[str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    return {name: [r[k] for r in rows[1:]] for k, name in enumerate(rows[0])}


def numbers(column: list[str]) -> np.ndarray:
    return np.array([float(c) if c else math.nan for c in column])


@pytest.fixture(scope="module")
def drive_sources(drive_dir: Path) -> dict:
    return sources((drive_dir / "report.html").read_text(encoding="utf-8"))


def test_a_drives_report_embeds_its_time_series_in_the_units_shown(drive_dir, drive_sources):
    csv_ = {k: numbers(v) for k, v in read_csv(drive_dir / "timeseries.csv").items()}
    ts = drive_sources["timeseries"]
    assert len(csv_["time_s"]) > 30
    np.testing.assert_array_equal(ts["time_s"], csv_["time_s"])
    np.testing.assert_array_equal(ts["speed_kmh"], csv_["speed_mps"] * 3.6)
    np.testing.assert_array_equal(ts["traction_kN"], csv_["traction_force_N"] / 1e3)
    # route km: the front's position on the route's own kilometre posts, from km 10
    np.testing.assert_allclose(ts["km"], 10.0 + csv_["front_m"] / 1e3, rtol=0, atol=1e-12)
    limit = csv_["speed_limit_mps"]
    np.testing.assert_array_equal(ts["limit_kmh"], np.where(np.isfinite(limit), limit * 3.6,
                                                            np.nan))
    assert np.nanmin(ts["limit_kmh"]) == pytest.approx(70.0)  # the curve's limit reached
    for v in (0, 1, 25, 50):  # every recorded pressure (kPa) and brake force (kN)
        for name in ("brake_pipe", "brake_cylinder"):
            np.testing.assert_array_equal(ts[f"v{v}_{name}_kPa"], csv_[f"v{v}_{name}_Pa"] / 1e3)
        np.testing.assert_array_equal(ts[f"v{v}_air_brake_force_kN"],
                                      csv_[f"v{v}_air_brake_force_N"] / 1e3)
    assert ts["v0_brake_pipe_kPa"].min() < 400.0 < ts["v0_brake_pipe_kPa"].max()


def test_a_drives_report_turns_its_km_axis_round_where_the_posts_fall(tmp_path):
    # posts at 10 km falling along the route: the speed and profile panels (one x range)
    # run from high km on the left to low on the right, as the train runs; the panels
    # against time do not turn
    from conftest import falling_posts_drive

    from rrscore.report.drive import drive_parts

    parts, _ = drive_parts(falling_posts_drive(tmp_path / "run"))
    ranges = [p.x_range for p in parts if hasattr(p, "x_range")]
    assert ranges[0].flipped and ranges[1] is ranges[0]
    assert not any(r.flipped for r in ranges[2:])


def test_a_drives_report_embeds_every_couplings_force_as_its_map(drive_dir, drive_sources):
    forces = read_csv(drive_dir / "coupler_forces.csv")
    expected = np.vstack([numbers(forces[f"c{j}_force_N"]) / 1e3 for j in range(50)])
    (image,) = drive_sources["coupler_forces"]["image"]
    assert image.shape == (50, len(forces["time_s"]))
    np.testing.assert_array_equal(image, expected)


def test_a_drives_report_draws_the_routes_profile_under_its_km_posts(drive_sources):
    p = drive_sources["profile"]
    km, grade, curvature = p["km"], p["grade_permille"], p["curvature_per_km"]
    assert km.min() < 11.95 < 12.1 < km.max()  # crosses both changes of grade
    # (each change is drawn as a step: samples 1 µm either side; 1 mm around it left out)
    level, up, down = km < 11.95 - 1e-6, (km > 11.95 + 1e-6) & (km < 12.1 - 1e-6), \
        km > 12.1 + 1e-6
    np.testing.assert_allclose(grade[level], 0.0, atol=1e-9)
    np.testing.assert_allclose(grade[up], 5.0, rtol=1e-9)
    np.testing.assert_allclose(grade[down], -3.0, rtol=1e-9)
    np.testing.assert_allclose(curvature[down], 1000.0 / 600.0, rtol=1e-9)
    np.testing.assert_allclose(curvature[level | up], 0.0, atol=1e-12)
    assert level.sum() > 10 and up.sum() > 10 and down.sum() > 10


def test_a_drives_report_tabulates_its_events_and_summary(drive_dir, drive_sources):
    events = read_csv(drive_dir / "events.csv")
    table = drive_sources["events"]
    assert len(events["time_s"]) >= 2  # the driver's two brake-valve moves at least
    assert table["time_s"] == [float(t) for t in events["time_s"]]
    assert table["event"] == events["event"]
    assert table["detail"] == events["detail"]
    summary = json.loads((drive_dir / "summary.json").read_text())
    shown = dict(zip(drive_sources["summary"]["figure"], drive_sources["summary"]["value"],
                     strict=True))
    assert float(shown["sim_time_s"]) == pytest.approx(summary["sim_time_s"], rel=1e-5)
    assert shown["stop_reason"] == summary["stop_reason"]
    assert drive_sources["couplings"]["coupling"] == [str(c["coupling"])
                                                      for c in summary["couplings"]]


def test_a_drive_written_as_parquet_reports_the_same_data(drive_dir, drive_sources,
                                                         tmp_path):
    scenario = rrscore.load_scenario(drive_dir / "scenario.resolved.toml")
    out = tmp_path / "parquet"
    rrscore.drive(scenario.with_values({"output.format": "parquet"}), out)
    assert not (out / "timeseries.csv").exists() and (out / "timeseries.parquet").is_file()
    write_report(out)
    shown = sources((out / "report.html").read_text(encoding="utf-8"))
    for name in ("timeseries", "coupler_forces", "events"):
        assert shown[name].keys() == drive_sources[name].keys()
        for column, values in drive_sources[name].items():
            if isinstance(values, list) and values and isinstance(values[0], str):
                assert shown[name][column] == values
            else:  # the CSV's 10 significant digits against the Parquet file's every bit
                np.testing.assert_allclose(np.asarray(shown[name][column], dtype=float),
                                           np.asarray(values, dtype=float), rtol=1e-9,
                                           atol=1e-9, err_msg=column)


def test_the_report_fetches_nothing_from_the_network(drive_dir):
    html = (drive_dir / "report.html").read_text(encoding="utf-8")
    tags = re.findall(r"<(?:script|link|img|iframe)\b[^>]*>", html, re.I)
    assert tags  # BokehJS is inline: <script> tags without a source
    remote = [t for t in tags if re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""",
                                           t, re.I)]
    assert remote == []
    assert len(html) > 500_000  # BokehJS itself is in the file


def test_a_report_is_written_whole_or_not_at_all(drive_dir, tmp_path, monkeypatch):
    out = tmp_path / "run"
    shutil.copytree(drive_dir, out)
    (out / "report.html").write_text("the earlier report")
    import bokeh.embed

    def fail(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(bokeh.embed, "file_html", fail)
    with pytest.raises(OSError):
        write_report(out)
    assert (out / "report.html").read_text() == "the earlier report"
    assert [p.name for p in out.iterdir() if p.name.startswith(".")] == []


def test_an_interrupted_drives_report_shows_the_whole_rows_written(drive_dir, tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    lines = (drive_dir / "timeseries.csv").read_text().splitlines(keepends=True)
    # as if killed after 10 rows, the 11th torn; no summary, no coupler forces yet
    (out / "timeseries.csv").write_text("".join(lines[:11]) + lines[11][:20])
    shutil.copy(drive_dir / "scenario.resolved.toml", out)
    html = write_report(out).read_text(encoding="utf-8")
    ts = sources(html)["timeseries"]
    expected = [float(line.split(",")[0]) for line in lines[1:11]]
    np.testing.assert_array_equal(ts["time_s"], expected)
    assert "The drive did not end" in html
    assert "coupler_forces" not in sources(html)


def test_a_directory_with_nothing_usable_is_one_clear_error(tmp_path):
    (tmp_path / "timeseries.csv").write_text("time_s,position_m,speed_mps\n")
    with pytest.raises(RrsError, match="nothing to report: timeseries.csv has no rows"):
        write_report(tmp_path)
    assert not (tmp_path / "report.html").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(RrsError, match="nothing to report: found none of"):
        write_report(empty)


def test_without_bokeh_the_error_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "bokeh", None)  # import bokeh raises ImportError
    with pytest.raises(RrsError, match=r"install the report extra: pip install "
                                       r"'rrscore\[report\]'"):
        write_report(tmp_path)


def test_a_sweeps_report_embeds_its_cases(sweep_dir):
    html = (sweep_dir / "report.html").read_text(encoding="utf-8")
    got = sources(html)["sweep"]
    table = read_csv(sweep_dir / "sweep.csv")
    assert len(table["case"]) == 12
    for column in ("case", "start.speed_si", "stop.max_time_si", "sim_time_s", "distance_m",
                   "max_speed_mps"):
        np.testing.assert_array_equal(got[column], numbers(table[column]))
    for key in ("start.speed", "stop.max_time", "solver.method"):  # as given
        assert got[key] == table[key]
    assert got["solver.method_si"] == table["solver.method"]  # a text: drawn as categories
    kmh = {"0": 0.0, "20 km/h": 20.0, "40 km/h": 40.0}
    np.testing.assert_allclose(got["start.speed_si"] * 3.6,
                               [kmh[v] for v in table["start.speed"]], rtol=1e-12)
    assert sources(html)["cases"] == table  # the table of cases: every cell as written


def test_a_yards_report_embeds_every_cuts_path_and_speed(yard_dir):
    out = yard_dir
    html = (out / "report.html").read_text(encoding="utf-8")
    assert page.kind_of(out) == "yard"
    cuts = sources(html)["cuts"]
    table = read_csv(out / "positions.csv")
    names = list(dict.fromkeys(table["cut"]))
    assert cuts["cut"] == names
    assert len(set(cuts["colour"])) == len(names)
    for k, name in enumerate(names):
        rows = [i for i, c in enumerate(table["cut"]) if c == name]
        for column in ("time_s", "speed_mps", "x_m", "y_m"):
            np.testing.assert_array_equal(cuts[column][k],
                                          numbers([table[column][i] for i in rows]))
    events = read_csv(out / "events.csv")
    assert sources(html)["events"]["kind"] == events["kind"]


@given(n=st.integers(0, 5000), most=st.integers(2, 400))
def test_a_long_csv_is_thinned_evenly_keeping_its_first_and_last_rows(n, most):
    rows = thinned(n, most)
    if n <= most:
        assert rows.tolist() == list(range(n))
        return
    assert rows[0] == 0 and rows[-1] == n - 1
    assert len(rows) <= most
    gaps = np.diff(rows)  # every k-th row (k >= 2), then the last: no gap over k
    assert (gaps[:-1] == gaps[0]).all() and gaps[0] >= 2 and 1 <= gaps[-1] <= gaps[0]


def test_a_time_series_without_a_drives_columns_is_named_not_drawn(tmp_path):
    (tmp_path / "timeseries.csv").write_text("time_s,speed_mps\n0,1\n1,2\n")
    html = write_report(tmp_path).read_text(encoding="utf-8")
    assert "timeseries.csv has no position_m, traction_force_N column" in html
    assert "timeseries" not in sources(html)
