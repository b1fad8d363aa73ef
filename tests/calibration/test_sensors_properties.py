"""Property-based attacks on the calibration commands' data files (hypothesis): a sensor
log, a drive's events and time series, and a series to fit to, corrupted at random
(bad encodings, missing and extra columns, cells that are not numbers, not finite or
huge, duplicated and shuffled rows, empty and header-only files, unknown sensors),
never give a traceback, an internal error or a hang: ``rrs calibrate`` and
``rrs sensors`` either run or fail with one line, exit 2, naming the file.

Set ``RRS_PROPERTY_SCALE`` (say 20) for a longer, nightly run.
"""

from __future__ import annotations

import os
from datetime import timedelta

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from rrscore.calibration.fit import MAX_FIT_TIME, load_record
from rrscore.calibration.sensors import LogError
from rrscore.cli.main import main

from .conftest import SENSOR_LINE

SCALE = max(1, int(os.environ.get("RRS_PROPERTY_SCALE", "1")))
#: A command slower than this is taken for a hang (the first compiles kernels, once).
HANG = timedelta(seconds=60)

#: Cells that are wrong somewhere: not numbers, not finite, huge, empty, odd text.
BAD_CELLS = st.one_of(
    st.sampled_from(["", " ", "nan", "inf", "-inf", "1e300", "-1e300", "1e999", "abc",
                     "S999", "12 m", "0x10", "1,5", "\"", "🚂", "-1", "1e11", "1e12",
                     "x" * 200_000]),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(max_size=8),
)


def _log_text() -> str:
    """A small valid sensor log of sensor_line's first sensors: two runs, a start at a
    known position, hits at 10 m/s, a stop command at a sensor and the stop."""
    rows = ["run,kind,sensor,time_s,level,position_m"]
    for run in ("a", "b"):
        rows.append(f"{run},command,,0.0,5,100.0")
        for k, name in enumerate(["S01", "S02", "S03", "S04", "S05", "S06"]):
            rows.append(f"{run},hit,{name},{20.0 + 25.0 * k:.3f},,")
        rows.append(f"{run},command,S06,145.0,0,")
        rows.append(f"{run},stop,,165.0,,1450.0")
    return "\n".join(rows) + "\n"


def _events_text() -> str:
    return ("time_s,event,where,value,detail\n"
            "0.0,driver,vehicle 0,nan,vehicle 0: level=5\n"
            "100.0,driver,vehicle 0,nan,vehicle 0: level=0\n")


def _series_text() -> str:
    rows = ["time_s,front_m,speed_mps"]
    rows += [f"{0.5 * k:.1f},{100.0 + 5.0 * k:.1f},10.0" for k in range(400)]
    return "\n".join(rows) + "\n"


@st.composite
def corrupted(draw, text: str) -> bytes:
    """``text`` with one to three random corruptions, as bytes."""
    lines = text.splitlines()
    for _ in range(draw(st.integers(1, 3))):
        how = draw(st.sampled_from(["cell", "drop column", "extra cell", "duplicate",
                                    "shuffle", "empty", "header only", "drop header",
                                    "truncate", "blank line"]))
        event(how)
        if not lines:
            break
        k = draw(st.integers(0, len(lines) - 1))
        cells = lines[k].split(",")
        if how == "cell":
            cells[draw(st.integers(0, len(cells) - 1))] = draw(BAD_CELLS)
            lines[k] = ",".join(cells)
        elif how == "drop column":
            c = draw(st.integers(0, len(cells) - 1))
            lines = [",".join(r.split(",")[:c] + r.split(",")[c + 1:]) for r in lines]
        elif how == "extra cell":
            lines[k] = lines[k] + "," + draw(BAD_CELLS)
        elif how == "duplicate":
            lines = lines[:k + 1] + [lines[k]] * draw(st.integers(1, 3)) + lines[k + 1:]
        elif how == "shuffle":
            lines = lines[:1] + draw(st.permutations(lines[1:]))
        elif how == "empty":
            lines = []
        elif how == "header only":
            lines = lines[:1]
        elif how == "drop header":
            lines = lines[1:]
        elif how == "truncate":
            lines = lines[:k]
        else:
            lines.insert(k, "")
    data = ("\n".join(lines) + ("\n" if lines else "")).encode("utf-8", "surrogatepass")
    if draw(st.booleans()) and data:
        event("bad encoding")
        at = draw(st.integers(0, len(data) - 1))
        data = data[:at] + draw(st.sampled_from([b"\xff", b"\xc3", b"\x80\x80", b"\x00",
                                                  b"\xed\xa0\x80"])) + data[at:]
    return data


def _one_line_or_done(capsys, status: int, name: str) -> None:
    """The command ran (0), or failed with one line naming ``name``, exit 2."""
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err, err
    if status != 0:
        event(f"exit {status}")
        lines = err.strip().splitlines()
        assert status == 2, err
        assert len(lines) == 1 and lines[0].startswith("rrs: error: "), err
        assert name in lines[0], err


@settings(max_examples=60 * SCALE, deadline=HANG,
          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                 HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=corrupted(_log_text()))
def test_a_malformed_sensor_log_is_one_line_naming_it_never_a_traceback(tmp_path, capsys,
                                                                           data):
    log = tmp_path / "corrupt_log.csv"
    log.write_bytes(data)
    status = main(["calibrate", str(log), "--route", str(SENSOR_LINE),
                   "--out", str(tmp_path / "model.toml")])
    _one_line_or_done(capsys, status, "corrupt_log.csv")


@settings(max_examples=40 * SCALE, deadline=HANG,
          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                 HealthCheck.too_slow, HealthCheck.data_too_large])
@given(which=st.sampled_from(["events.csv", "timeseries.csv"]), data=st.data())
def test_a_malformed_drive_output_is_one_line_naming_it_never_a_traceback(tmp_path, capsys,
                                                                          which, data):
    # a drive's output directory as ``rrs sensors`` reads it, one of its files corrupted
    run_dir = tmp_path / "drive"
    run_dir.mkdir(exist_ok=True)
    files = {"timeseries.csv": _series_text(), "events.csv": _events_text()}
    for name, text in files.items():
        (run_dir / name).write_text(text, encoding="utf-8")
    (run_dir / which).write_bytes(data.draw(corrupted(files[which])))
    status = main(["sensors", str(run_dir), "--route", str(SENSOR_LINE), "--out",
                   str(run_dir / "log.csv"), "--repeats", "2", "--noise", "0.01"])
    _one_line_or_done(capsys, status, which)


@settings(max_examples=60 * SCALE, deadline=HANG,
          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                 HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=corrupted("time_s,speed_mps\n" + "".join(f"{k:.1f},{0.1 * k:.2f}\n"
                                                      for k in range(30))))
def test_a_malformed_series_to_fit_is_named_or_read_within_bounds(tmp_path, data):
    # (fitting runs drives: the record is where bad data must stop, before any of them)
    series = tmp_path / "corrupt_series.csv"
    series.write_bytes(data)
    try:
        record = load_record(series)
    except LogError as exc:
        assert "corrupt_series.csv" in str(exc)
        assert "\n" not in str(exc).strip()
        return
    assert record.times.size > 0
    assert all(0.0 <= t <= MAX_FIT_TIME for t in record.times)
    if record.speed is not None:
        assert all(abs(v) < float("inf") for v in record.speed)
