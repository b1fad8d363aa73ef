"""`rrs plot`: runs compared on shared axes, every run in the legend."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest

from rrscore import RrsError
from rrscore.cli.compare import compare_figure, read_csv
from rrscore.cli.main import main


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """SimpleLoco + 3 cars at half and at full traction level."""
    from rrscore.testing import make_train

    base = tmp_path_factory.mktemp("runs")
    train = make_train("simple_loco", cars=3, vehicle_table={"empty_mass": "184 t",
                                                             "num_axis": 8})
    for name, level in (("half", 0.5), ("full", 1.0)):
        train.drive([(0, f"set traction_level={level}")], max_time="20 s", out=base / name,
                    output={"sample_interval": "0.5 s"})
    return base / "half", base / "full"


def legend_texts(ax):
    return [t.get_text() for t in ax.get_legend().get_texts()]


def test_rrs_plot_writes_a_figure_with_both_runs_in_the_legend(two_runs, tmp_path):
    out = tmp_path / "cmp.png"
    assert main(["plot", *map(str, two_runs), "--signals", "speed,traction,coupler",
                 "--out", str(out)]) == 0
    assert out.stat().st_size > 10_000
    fig = compare_figure(two_runs, ["speed", "traction", "coupler"])
    speed, traction, coupler = fig.axes
    assert {"half: speed", "full: speed", "half: limit", "full: limit"} <= set(
        legend_texts(speed))
    # each run's traction, and its recorded brake-force columns dotted (SimpleLoco's
    # dynamic brake force, zero here)
    assert legend_texts(traction) == ["half: traction", "half: v0_dynamic_brake_force_N",
                                      "full: traction", "full: v0_dynamic_brake_force_N"]
    assert {"half: max tension", "full: max tension"} <= set(legend_texts(coupler))
    plt.close(fig)


def test_panels_show_the_data_of_each_run(two_runs):
    fig = compare_figure(two_runs, ["traction", "coupler"], x="distance")
    traction, coupler = fig.axes
    pulls = [ln for ln in traction.get_lines() if ln.get_label().endswith(": traction")]
    for line, run in zip(pulls, two_runs, strict=True):
        series = read_csv(run / "timeseries.csv")
        np.testing.assert_allclose(line.get_ydata(), series["traction_force_N"] / 1e3)
        np.testing.assert_allclose(line.get_xdata(),
                                   (series["position_m"] - series["position_m"][0]) / 1e3)
    # the full-level run pulls harder: its largest tension is the larger
    lines = {ln.get_label(): np.asarray(ln.get_ydata()) for ln in coupler.get_lines()}
    half_max, full_max = lines["half: max tension"].max(), lines["full: max tension"].max()
    assert full_max > half_max > 0
    plt.close(fig)


def test_coupler_map_has_one_panel_per_run(two_runs):
    fig = compare_figure(two_runs, ["speed", "coupler_map"])
    titles = [ax.get_title() for ax in fig.axes]
    assert "half: in-train forces" in titles and "full: in-train forces" in titles
    plt.close(fig)


def test_bad_signal_and_missing_run_are_clear_errors(two_runs, tmp_path):
    with pytest.raises(RrsError, match="found brakes, expected some of speed, traction"):
        compare_figure(two_runs, ["brakes"])
    with pytest.raises(RrsError, match="no timeseries.csv"):
        compare_figure([tmp_path], ["speed"])


def test_coupler_maps_share_one_colour_scale_and_one_colour_bar(two_runs):
    fig = compare_figure(two_runs, ["coupler_map"])
    maps = [ax for ax in fig.axes if ax.get_title().endswith("in-train forces")]
    assert len(maps) == 2
    # The largest force of either run, from the CSVs: the full-level run's.
    largest = max(np.abs(np.column_stack(
        [v for k, v in read_csv(run / "coupler_forces.csv").items() if k.startswith("c")]
    )).max() for run in two_runs) / 1e3
    for ax in maps:
        [mesh] = ax.collections
        assert mesh.norm.vmin == pytest.approx(-largest, rel=1e-12)
        assert mesh.norm.vmax == pytest.approx(largest, rel=1e-12)
    assert len(fig.axes) == 3  # two maps and one colour bar
    plt.close(fig)


def test_each_run_has_its_own_colour_and_the_legend_stands_beside_the_data(tmp_path):
    from rrscore.testing import make_train

    train = make_train("simple_loco", cars=1)
    runs = []
    for k in range(12):  # more than matplotlib's ten-colour cycle
        runs.append(tmp_path / f"r{k:02d}")
        train.drive([(0, f"set traction_level={0.3 + 0.05 * k}")], max_time="2 s",
                    out=runs[-1], output={"sample_interval": "1 s"})
    fig = compare_figure(runs, ["traction"])
    [ax] = fig.axes
    lines = [ln for ln in ax.get_lines() if ln.get_label().endswith(": traction")]
    assert [ln.get_label() for ln in lines] == [f"r{k:02d}: traction" for k in range(12)]
    assert len({ln.get_color() for ln in lines}) == 12
    legend = ax.get_legend()
    assert len(legend.get_texts()) == len(ax.get_lines())  # every line named
    assert legend.get_bbox_to_anchor().transformed(ax.transAxes.inverted()).x0 > 1.0
    plt.close(fig)


def test_route_km_axis_is_each_runs_front_on_its_kilometre_posts(tmp_path):
    from conftest import CONFIGS

    from rrscore import Drive
    from rrscore.model.config import Context
    from rrscore.run.scenario import scenario_from_table

    runs = []
    for name, chainage in (("posted", "10 km"), ("plain", "0 m")):
        table = {"train": {"vehicles": [{"config": "vehicles/simple_loco.toml"}]},
                 "route": {"start_chainage": chainage, "elements": [{"length": "5 km"}]},
                 "start": {"position": "900 m", "speed": 10.0},
                 "stop": {"max_time": 5.0}, "output": {"sample_interval": 1.0}}
        Drive(scenario_from_table(table, Context("<test>", "scenario", CONFIGS))).run(
            tmp_path / name)
        runs.append(tmp_path / name)
    fig = compare_figure(runs, ["speed"], x="km")
    [ax] = fig.axes
    assert ax.get_xlabel() == "route km (train front)"
    speeds = {ln.get_label(): ln.get_xdata() for ln in ax.get_lines()
              if ln.get_label().endswith(": speed")}
    for run, km0 in zip(runs, (10.0, 0.0), strict=True):
        series = read_csv(run / "timeseries.csv")
        np.testing.assert_allclose(speeds[f"{run.name}: speed"],
                                   km0 + series["front_m"] / 1000.0, rtol=1e-12)
    assert speeds["posted: speed"][0] == pytest.approx(10.9, abs=1e-9)
    plt.close(fig)


def test_route_km_axis_on_falling_kilometre_posts_runs_left_to_right(tmp_path):
    from conftest import falling_posts_drive

    fig = compare_figure([falling_posts_drive(tmp_path / "falling")], ["speed"], x="km")
    [ax] = fig.axes
    [line] = [ln for ln in ax.get_lines() if ln.get_label().endswith(": speed")]
    series = read_csv(tmp_path / "falling" / "timeseries.csv")
    np.testing.assert_allclose(line.get_xdata(), 10.0 - series["front_m"] / 1000.0,
                               rtol=1e-12)
    assert ax.xaxis_inverted()
    plt.close(fig)


def test_a_run_written_as_parquet_reads_as_its_csv_twin(tmp_path):
    pytest.importorskip("pyarrow")
    from conftest import CONFIGS

    from rrscore.cli.compare import RunData

    scenario = str(CONFIGS / "scenarios" / "impact_2ms.toml")
    for fmt in ("csv", "parquet"):
        assert main(["drive", scenario, "--out", str(tmp_path / fmt), "--max-time", "2",
                     "--format", fmt]) == 0
    as_csv, as_parquet = RunData(tmp_path / "csv", "csv"), RunData(tmp_path / "parquet", "p")
    for table in ("series", "forces"):
        a, b = getattr(as_csv, table), getattr(as_parquet, table)
        assert list(a) == list(b)
        for name in a:  # (the CSV holds 10 significant digits)
            np.testing.assert_allclose(b[name], a[name], rtol=1e-9, atol=1e-300)
    fig = compare_figure([tmp_path / "csv", tmp_path / "parquet"], ["speed", "coupler"])
    plt.close(fig)
