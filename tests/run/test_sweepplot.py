"""``sweep.png`` (rrscore.run.sweepplot): the points, per-value means and ranges it draws,
read from sweep.csv in bounded memory, and the file written whole by a sweep."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from conftest import CONFIGS

import rrscore
from rrscore.run import sweepplot
from rrscore.run.sweep import Sweep
from rrscore.run.sweepplot import plottable_figures, sweep_plot, sweep_plot_data

HEADER = ["case", "a", "a_si", "b", "b_si", "y", "z", "stop_reason", "error"]


def write_sweep(path: Path, rows: list[list]) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(HEADER)
        w.writerows(rows)
    return path


def test_points_means_and_ranges_are_those_of_the_cases_that_ran(tmp_path: Path) -> None:
    rows = [[0, "1 km", 1000.0, "x", "x", 2.0, 10.0, "max_time", ""],
            [1, "1 km", 1000.0, "w", "w", 4.0, "", "max_time", ""],
            [2, "2 km", 2000.0, "x", "x", 7.0, 30.0, "max_time", ""],
            [3, "2 km", 2000.0, "w", "w", 99.0, 99.0, "error", "boom"]]  # failed: left out
    data = sweep_plot_data(write_sweep(tmp_path / "sweep.csv", rows), ["a", "b"], ["y", "z"])
    assert data["rows"] == 4 and data["drawn"] == 3
    np.testing.assert_array_equal(data["x"]["a"], [1000.0, 1000.0, 2000.0])
    np.testing.assert_array_equal(data["y"]["a"], [[2.0, 10.0], [4.0, np.nan], [7.0, 30.0]])
    lx, mean, lo, hi = data["levels"]["a"]
    np.testing.assert_array_equal(lx, [1000.0, 2000.0])
    np.testing.assert_array_equal(mean, [[3.0, 10.0], [7.0, 30.0]])  # the empty cell left out
    np.testing.assert_array_equal(lo, [[2.0, 10.0], [7.0, 30.0]])
    np.testing.assert_array_equal(hi, [[4.0, 10.0], [7.0, 30.0]])
    # A parameter that is a text: categories in order of first appearance.
    assert data["categories"]["b"] == ["x", "w"] and data["categories"]["a"] is None
    np.testing.assert_array_equal(data["x"]["b"], [0.0, 1.0, 0.0])
    np.testing.assert_array_equal(data["levels"]["b"][1], [[4.5, 20.0], [4.0, np.nan]])


def test_a_big_sweep_draws_a_bounded_sample_but_means_over_every_row(
        tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(sweepplot, "MAX_POINTS", 50)
    n = 2000
    rows = [[i, i % 4, float(i % 4), "x", "x", float(i), 0.0, "max_time", ""]
            for i in range(n)]
    data = sweep_plot_data(write_sweep(tmp_path / "sweep.csv", rows), ["a"], ["y"])
    x, y = data["x"]["a"], data["y"]["a"][:, 0]
    assert x.size == 50 and np.unique(y).size == 50  # 50 distinct rows
    np.testing.assert_array_equal(x, y % 4)  # each point a real row
    assert y.max() > n / 2  # from all through the file, not its head
    lx, mean, lo, hi = data["levels"]["a"]
    # Over every row: value k holds k, k + 4, ..., k + 1996: mean k + 998.
    np.testing.assert_array_equal(lx, [0.0, 1.0, 2.0, 3.0])
    np.testing.assert_allclose(mean[:, 0], [998.0, 999.0, 1000.0, 1001.0], rtol=1e-15)
    np.testing.assert_array_equal(lo[:, 0], [0.0, 1.0, 2.0, 3.0])
    np.testing.assert_array_equal(hi[:, 0], [1996.0, 1997.0, 1998.0, 1999.0])


def test_a_parameter_of_too_many_values_draws_points_without_means(tmp_path: Path,
                                                                   monkeypatch) -> None:
    monkeypatch.setattr(sweepplot, "MAX_LEVELS", 3)
    rows = [[i, i, float(i), "x", "x", 1.0, 1.0, "max_time", ""] for i in range(5)]
    data = sweep_plot_data(write_sweep(tmp_path / "sweep.csv", rows), ["a"], ["y"])
    assert data["levels"]["a"] is None and data["x"]["a"].size == 5


def test_nothing_is_drawn_when_no_case_ran(tmp_path: Path) -> None:
    csv_path = write_sweep(tmp_path / "sweep.csv",
                           [[0, 1, 1.0, "x", "x", "", "", "error", "bad"]])
    assert sweep_plot(csv_path, tmp_path / "sweep.png", ["a"], ["y"]) is None
    assert not (tmp_path / "sweep.png").exists()


def test_stop_reason_is_not_a_figure_to_draw() -> None:
    assert plottable_figures(["sim_time_s", "stop_reason", "energy.drive_J"]) == [
        "sim_time_s", "energy.drive_J"]


def test_a_sweep_writes_sweep_png_whole_unless_its_scenario_says_no_plots(
        tmp_path: Path) -> None:
    scenario = rrscore.load_scenario(CONFIGS / "scenarios" / "simple_loco_level.toml")
    params = {"start.speed": ["0 km/h", "20 km/h"], "stop.max_time": [2, 3]}
    Sweep(scenario, params).run(out=tmp_path / "on")
    data = (tmp_path / "on" / "sweep.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data.endswith(b"IEND\xaeB`\x82")
    assert sorted(p.name for p in (tmp_path / "on").iterdir()
                  if not p.name.startswith(".")) == ["sweep.csv", "sweep.json", "sweep.png"]
    Sweep(scenario.with_values({"output.plots": False}), params).run(out=tmp_path / "off")
    assert not (tmp_path / "off" / "sweep.png").exists()


@pytest.mark.parametrize("figures", [["y"], ["y", "z"]])
def test_sweep_plot_has_one_panel_per_figure_and_parameter(tmp_path: Path, figures,
                                                           monkeypatch) -> None:
    shapes = []
    real = sweepplot.save_figure

    def keep(fig, path, **options):
        shapes.append(len(fig.axes))
        real(fig, path, **options)

    monkeypatch.setattr(sweepplot, "save_figure", keep)
    rows = [[i, i, float(i), "x", "x", 1.0, 2.0, "max_time", ""] for i in range(3)]
    csv_path = write_sweep(tmp_path / "sweep.csv", rows)
    sweep_plot(csv_path, tmp_path / "sweep.png", ["a", "b"], figures)
    assert shapes == [2 * len(figures)]


def test_the_axes_name_each_swept_key_s_unit(tmp_path: Path, monkeypatch) -> None:
    # units from the schema (start.speed in m/s), a plain number (count: none) and a
    # vehicle type's parameter (SimpleLoco's F_max, N), in sweep.json and on the axes
    labels = []
    real = sweepplot.save_figure

    def keep(fig, path, **options):
        labels.extend(ax.get_xlabel() for ax in fig.axes)
        real(fig, path, **options)

    monkeypatch.setattr(sweepplot, "save_figure", keep)
    scenario = rrscore.load_scenario(CONFIGS / "scenarios" / "simple_loco_level.toml")
    params = {"start.speed": ["0 km/h", "20 km/h"], "stop.max_time": [2, 3],
              "train.vehicles[0].config.params.F_max": ["300 kN", "350 kN"],
              "train.vehicles[0].count": [1, 1]}
    Sweep(scenario, params, mode="zip").run(out=tmp_path)
    units = json.loads((tmp_path / "sweep.json").read_text())["units"]
    assert units == {"start.speed": "m/s", "stop.max_time": "s",
                     "train.vehicles[0].config.params.F_max": "N",
                     "train.vehicles[0].count": ""}
    assert set(labels) - {""} == {"start.speed (m/s)", "stop.max_time (s)",
                                  "train.vehicles[0].config.params.F_max (N)",
                                  "train.vehicles[0].count"}


def test_a_key_only_a_plugin_knows_keeps_the_si_label() -> None:
    assert sweepplot.axis_label("train.coupling.params.stiffness", None) == \
        "train.coupling.params.stiffness (SI)"
