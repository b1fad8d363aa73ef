"""The drive's plots (rrscore.run.outputs.plots): the data each one draws, and that each
is written whole. Plots are images; what goes into them is what these tests check."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import CONFIGS

from rrscore import Drive
from rrscore.model.config import Context, validate
from rrscore.model.track import ROUTE_SCHEMA, Route
from rrscore.run.outputs import plots
from rrscore.run.scenario import scenario_from_table

ELEMENTS = [{"length": "1 km", "grade": "5 permille"},
            {"length": "1 km", "grade": "-3 permille", "radius": "600 m"},
            {"length": "2 km"}]


def _route(**extra) -> Route:
    return Route.from_config(validate({"elements": ELEMENTS, **extra}, ROUTE_SCHEMA,
                                      Context("t")))


def _series(x: np.ndarray) -> dict[str, np.ndarray]:
    n = x.size
    return {"time_s": np.arange(n, dtype=float), "position_m": x,
            "speed_mps": np.full(n, 10.0), "traction_force_N": np.full(n, 5e4),
            "speed_limit_mps": np.full(n, np.inf)}


def test_speed_plot_x_is_route_km_from_the_routes_kilometre_posts() -> None:
    # Posts start at 10 km and the train starts 900 m in: a point 100 m in is km 10.1,
    # and the first sample is km 10.9, not 0 (distance from the start).
    route = _route(start_chainage="10 km")
    data = plots.speed_plot_data(_series(np.array([900.0, 1000.0, 1100.0])), route)
    np.testing.assert_allclose(data["km"], [10.9, 11.0, 11.1], atol=1e-12)
    assert plots.speed_plot_data(_series(np.array([100.0])), route)["km"][0] == \
        pytest.approx(10.1, abs=1e-12)
    assert data["limit_kmh"] is None  # no limits anywhere: no limit line, no legend entry


def test_speed_plot_profile_is_the_routes_grade_and_curvature_over_the_run() -> None:
    route = _route(start_chainage="10 km")
    data = plots.speed_plot_data(_series(np.linspace(500.0, 2500.0, 41)), route)
    km = data["profile_km"]
    assert km[0] == pytest.approx(10.5) and km[-1] == pytest.approx(12.5)
    x = km * 1000.0 - 10000.0
    # Each element's grade (per mille) and curvature (1000/R) by hand, at every sample
    # not within a micrometre of a boundary.
    grade = np.select([x < 1000.0, x < 2000.0], [5.0, -3.0], 0.0)
    curv = np.where((x >= 1000.0) & (x < 2000.0), 1000.0 / 600.0, 0.0)
    away = np.min(np.abs(x[:, None] - np.array([1000.0, 2000.0])), axis=1) > 1e-3
    np.testing.assert_allclose(data["grade_permille"][away], grade[away], atol=1e-9)
    np.testing.assert_allclose(data["curvature_per_km"][away], curv[away], atol=1e-9)
    # The element boundaries are among the samples, so a change of grade is a step.
    assert np.isclose(x, 1000.0).any() and np.isclose(x, 2000.0).any()


def test_speed_plot_on_falling_kilometre_posts_still_runs_left_to_right(
        tmp_path: Path, monkeypatch) -> None:
    # posts at 10 km, falling: the train runs from km 9.1 to 8.9, drawn on an x axis
    # turned round (left to right as it runs); rising posts leave it as it is
    turned = []
    real = plots.save_figure

    def keep(fig, path, **options):
        turned.append([ax.xaxis_inverted() for ax in fig.axes])
        real(fig, path, **options)

    monkeypatch.setattr(plots, "save_figure", keep)
    x = np.array([900.0, 1000.0, 1100.0])
    falling = _route(start_chainage="10 km", chainage_direction="decreasing")
    np.testing.assert_allclose(plots.speed_plot_data(_series(x), falling)["km"],
                               [9.1, 9.0, 8.9], atol=1e-12)
    plots.speed_plot(_series(x), tmp_path / "falling.png", "t", falling)
    plots.speed_plot(_series(x), tmp_path / "rising.png", "t", _route())
    assert all(turned[0]) and not any(turned[1])


def test_speed_plot_and_force_envelope_are_written_whole(tmp_path: Path) -> None:
    route = _route()
    plots.speed_plot(_series(np.linspace(0.0, 3000.0, 50)), tmp_path / "speed.png", "t",
                     route)
    couplings = [{"coupling": j, "max_tension_N": 1e5 * (j + 1), "max_compression_N": 5e4,
                  "max_tension_time_s": 10.0 * j, "max_compression_time_s": 3.0}
                 for j in range(4)]
    plots.force_envelope_plot(couplings, tmp_path / "force_envelope.png", "t")
    for name in ("speed.png", "force_envelope.png"):
        data = (tmp_path / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and data.rstrip().endswith(b"IEND\xaeB`\x82")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["force_envelope.png", "speed.png"]


def test_force_envelope_says_when_each_peak_happened() -> None:
    couplings = [{"coupling": j, "max_tension_N": 2e5, "max_compression_N": 1e5,
                  "max_tension_time_s": 12.5 + j, "max_compression_time_s": 40.0 - j}
                 for j in range(3)]
    data = plots.force_envelope_data(couplings)
    assert data["tension_time_s"].tolist() == [12.5, 13.5, 14.5]
    assert data["compression_time_s"].tolist() == [40.0, 39.0, 38.0]
    assert data["tension_kN"].tolist() == [200.0] * 3
    assert data["compression_kN"].tolist() == [-100.0] * 3  # drawn below the axis


def test_a_drive_draws_speed_against_its_routes_km_posts(tmp_path: Path, monkeypatch) -> None:
    seen = []
    real = plots.speed_plot_data

    def spy(series, route=None):
        seen.append(data := real(series, route))
        return data

    monkeypatch.setattr(plots, "speed_plot_data", spy)
    table = {"train": {"vehicles": [{"config": "vehicles/freight_car_4axle.toml",
                                     "count": 2}]},
             "route": {"start_chainage": "10 km", "elements": ELEMENTS},
             "start": {"position": "900 m", "speed": 10.0},
             "stop": {"max_time": 10.0}, "output": {"sample_interval": 1.0}}
    sc = scenario_from_table(table, Context("<test>", "scenario", CONFIGS))
    result = Drive(sc).run(tmp_path / "out")
    assert len(seen) == 1
    # The train's front: where it started, 900 m in, is km 10.9.
    np.testing.assert_allclose(seen[0]["km"], 10.0 + result.series["front_m"] / 1000.0)
    assert seen[0]["km"][0] == pytest.approx(10.9, abs=1e-9)
    assert (tmp_path / "out" / "speed.png").stat().st_size > 1000
    assert (tmp_path / "out" / "force_envelope.png").stat().st_size > 1000
