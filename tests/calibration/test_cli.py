"""The calibration commands: rrs sensors, calibrate, predict-stop and fit."""

from __future__ import annotations

import pytest

from rrscore.calibration.model import KinematicModel
from rrscore.calibration.sensors import read_log
from rrscore.cli.main import main

from .conftest import CONFIGS, SENSOR_LINE


def test_sensors_calibrate_predict(levels_run, tmp_path, capsys):
    log = tmp_path / "log.csv"
    assert main(["sensors", str(levels_run), "--out", str(log), "--repeats", "4",
                 "--noise", "0.005", "--seed", "3"]) == 0
    assert len(read_log(log).runs) == 4
    model = tmp_path / "model.toml"
    assert main(["calibrate", str(log), "--route", str(SENSOR_LINE), "--out",
                 str(model)]) == 0
    out = capsys.readouterr().out
    assert "change   6 ->  10:" in out and "unfinished" in out
    assert (tmp_path / "model.png").stat().st_size > 0
    m = KinematicModel.read(model)
    assert m.levels[5].velocity == pytest.approx(10.0, rel=0.01)
    assert main(["predict-stop", str(model), "--level", "5", "--target", "3 km",
                 "--position", "S11", "--route", str(SENSOR_LINE)]) == 0
    out = capsys.readouterr().out
    # 10 m/s stops in 100 m (plus up to 0.5 m of command latency in the drive)
    assert "give the stop command with the front at 2899." in out
    assert "after sensor S11 fires" in out


@pytest.mark.parametrize("make, args, message", [
    (lambda p: p.write_text("run,kind,sensor,time_s\na,hit,S77,1\n"),
     ["calibrate", "{f}", "--route", str(SENSOR_LINE), "--out", "{d}/m.toml"],
     "{f}: line 2: sensor: found 'S77', expected a sensor of"),
    (lambda p: p.write_text("x,y\n1,2\n"),
     ["calibrate", "{f}", "--route", str(SENSOR_LINE), "--out", "{d}/m.toml"],
     "{f}: line 1: found columns"),
    (lambda p: p.write_text("time_s,speed_mps\n0,0\n1,1\n"),
     ["fit", str(CONFIGS / "scenarios" / "calibration_coastdown.toml"), "--data", "{f}",
      "--params", "train.vehicles[0].config.params.F_mux", "--out", "{d}/fit"],
     "train.vehicles[0].config.params.F_mux: no such key"),
    (lambda p: p.write_text("[[level]]\nlevel = 1\nvelocity_mps = 2.0\n"),
     ["predict-stop", "{f}", "--level", "1", "--target", "100"],
     "level 1 has no stop distance"),
    # (issue 50: each of these was an internal error, exit 1)
    (lambda p: p.write_bytes(b"\xff\xfe run,kind\n"),
     ["calibrate", "{f}", "--route", str(SENSOR_LINE), "--out", "{d}/m.toml"],
     "{f}: not UTF-8 text (invalid start byte: byte 0xff)"),
    (lambda p: p.write_text("run,kind,sensor,time_s\na,hit,S01," + "9" * 200_000 + "\n"),
     ["calibrate", "{f}", "--route", str(SENSOR_LINE), "--out", "{d}/m.toml"],
     "{f}: not a CSV file rrs reads: field larger than field limit"),
    (lambda p: p.write_bytes(b"time_s,speed_mps\n0,\xff\n"),
     ["fit", str(CONFIGS / "scenarios" / "calibration_coastdown.toml"), "--data", "{f}",
      "--params", "train.vehicles[0].config.params.F_max", "--out", "{d}/fit"],
     "{f}: not UTF-8 text"),
    (lambda p: None, ["sensors", "{d}", "--out", "{d}/log.csv", "--seed", "-1"],
     "--seed: found -1, expected a whole number >= 0"),
    (lambda p: p.write_text("[[level]]\nlevel = 1\nvelocity_mps = 2.0\n"),
     ["predict-stop", "{f}", "--level", "1", "--target", "nan"],
     "--target: found 'nan', expected a position in metres"),
])
def test_bad_inputs_give_one_line_and_status_2(tmp_path, capsys, make, args, message):
    f = tmp_path / "input.csv"
    make(f)
    argv = [a.format(f=f, d=tmp_path) for a in args]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert message.format(f=f) in err


def test_an_output_under_a_file_is_one_line_and_status_2(levels_run, tmp_path, capsys):
    # (issue 50: a NotADirectoryError, reported as an internal error with exit 1)
    (tmp_path / "file").write_text("")
    out = tmp_path / "file" / "log.csv"
    assert main(["sensors", str(levels_run), "--out", str(out)]) == 2
    assert capsys.readouterr().err == f"rrs: error: {out}: Not a directory\n"


def test_more_bad_values_are_one_line_errors_naming_file_line_or_option(levels_run, tmp_path,
                                                                        capsys):
    # (issue 50: an OverflowError, a hang, a nan start, a bound blamed on the scenario)
    model = tmp_path / "model.toml"
    model.write_text("[[level]]\nlevel = 1\nvelocity_mps = 2.0\nvelocity_n = -inf\n")
    assert main(["predict-stop", str(model), "--level", "1", "--target", "100"]) == 2
    assert f"{model}: level[0]: cannot convert float infinity to integer" in \
        capsys.readouterr().err
    assert main(["sensors", str(levels_run), "--out", str(tmp_path / "l.csv"),
                 "--repeats", "10000000"]) == 2
    assert "--repeats: found 10000000, expected 1 to 10000" in capsys.readouterr().err
    series = tmp_path / "series.csv"
    series.write_text("time_s,speed_mps\n0,0\n1e12,1\n")
    fit = ["fit", str(CONFIGS / "scenarios" / "calibration_coastdown.toml"), "--data",
           str(series), "--params", "train.vehicles[0].config.params.F_max",
           "--out", str(tmp_path / "fit")]
    assert main(fit) == 2
    assert f"{series}: line 3: found time_s 1e+12" in capsys.readouterr().err
    series.write_text("time_s,speed_mps\n0,0\n1,1\n")
    assert main([*fit, "--initial", "nan"]) == 2
    assert "--initial: found 'nan', expected finite numbers" in capsys.readouterr().err


def test_a_command_level_past_any_number_in_events_csv_names_the_file_and_line(
        levels_run, tmp_path, capsys):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(levels_run, run)
    events = (run / "events.csv").read_text().splitlines()
    k = next(i for i, line in enumerate(events) if "level=" in line)
    events[k] = events[k].replace("level=", "level=1e999 was ", 1)
    (run / "events.csv").write_text("\n".join(events) + "\n")
    assert main(["sensors", str(run), "--out", str(tmp_path / "l.csv")]) == 2
    assert f"{run / 'events.csv'}: line {k + 1}: level: found '1e999', expected a finite " \
        "number" in capsys.readouterr().err


def test_data_past_any_bound_is_the_data_files_one_line_error(tmp_path, capsys):
    # (issue 50: times of 1e300 ran on, a header-only series was a 'zero-size array'
    # internal error, a record too long for the scenario blamed its stop.max_time)
    def error(argv):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "internal error" not in err
        return err

    log = tmp_path / "log.csv"
    log.write_text("run,kind,sensor,time_s,level,position_m\na,hit,S01,1e300,,\n")
    calibrate = ["calibrate", str(log), "--route", str(SENSOR_LINE),
                 "--out", str(tmp_path / "m.toml")]
    assert f"{log}: line 2: time_s: found '1e300', expected a number from -1e+11" in \
        error(calibrate)
    log.write_text("")
    assert f"{log}: empty file, expected a header line" in error(calibrate)
    log.write_text("run,kind,sensor,time_s,level,position_m\na,hit,S01,5,,,7\n")
    assert f"{log}: line 2: found 7 cells, expected at most 6" in error(calibrate)
    (tmp_path / "file").write_text("")
    log.write_text("run,kind,sensor,time_s,level,position_m\na,command,,0,5,100\n"
                   + "".join(f"a,hit,S0{k},{10 * k},,\n" for k in range(1, 6)))
    plot = tmp_path / "file" / "m.png"
    assert error([*calibrate, "--plot", str(plot)]) == f"rrs: error: {plot}: Not a directory\n"

    model = tmp_path / "m.toml"
    assert KinematicModel.read(model).levels  # the model was written before the plot
    assert "--target: found '1e300', expected a position in metres" in error(
        ["predict-stop", str(model), "--level", "5", "--target", "1e300"])

    fit = ["fit", str(CONFIGS / "scenarios" / "calibration_coastdown.toml"), "--params",
           "train.vehicles[0].config.params.F_max", "--out", str(tmp_path / "fit"), "--data"]
    series = tmp_path / "series.csv"
    series.write_text("time_s,speed_mps\n")
    assert f"{series}: no rows after the header" in error([*fit, str(series)])
    series.write_text("time_s,speed_mps\n0,0\n5e8,1\n")
    assert f"{series}: line 3: found time_s 5e+08, speed_mps 1; expected a time from 0 to " \
        "1e+06 s" in error([*fit, str(series)])
    log.write_text("run,kind,sensor,time_s,level,position_m\na,hit,S01,5e9,,\n")
    assert f"{log}: run a: hit of S01 at 5e+09 s; expected times from 0 to" in \
        error([*fit, str(log)])


def test_model_plot_legend_names_every_run_each_in_its_own_colour(levels_run, tmp_path,
                                                                  monkeypatch):
    # Ten runs: the legend once named the first 8.
    import matplotlib.colors

    from rrscore.calibration import plots

    figures = []
    real = plots.save_figure

    def keep(fig, path, **options):
        legend = fig.axes[0].get_legend()
        figures.append(([t.get_text() for t in legend.get_texts()],
                        [matplotlib.colors.to_hex(h.get_color())
                         for h in legend.legend_handles],
                        legend.get_bbox_to_anchor().transformed(
                            fig.axes[0].transAxes.inverted()).x0))
        real(fig, path, **options)

    monkeypatch.setattr(plots, "save_figure", keep)
    log = tmp_path / "log.csv"
    assert main(["sensors", str(levels_run), "--out", str(log), "--repeats", "10",
                 "--seed", "5"]) == 0
    runs = read_log(log).runs
    assert len(runs) == 10
    assert main(["calibrate", str(log), "--route", str(SENSOR_LINE), "--out",
                 str(tmp_path / "model.toml")]) == 0
    [(labels, colours, anchor_x)] = figures
    assert sorted(labels) == sorted(runs)
    assert len(set(colours)) == 10
    assert anchor_x > 1.0  # the legend stands right of the axes, off the data
    assert (tmp_path / "model.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
