"""Fitting a scenario's parameters to a recorded drive by least squares over simulated
drives.

The parameters are key paths of the ``[scenario]`` table, as
:meth:`~rrscore.run.scenario.Scenario.with_values` takes them
(``train.vehicles[0].config.vehicle.resistance.A``,
``train.vehicles[0].config.params.F_max``). Each trial builds a new scenario with
the trial values, which is checked like a file, and runs it to the end of the
record. The data is either a time series (``timeseries.csv`` of a drive, or any
CSV with ``time_s`` and ``speed_mps``): the residuals are the simulated minus
the recorded speed at the recorded times; or a sensor log: the residuals are the
simulated minus the logged passing times of every hit of every run.

The solver is ``scipy.optimize.least_squares`` (trust region reflective) on the
parameters scaled by their starting values, with a forward-difference Jacobian.
The standard errors are those of the linearised problem at the solution,
``sqrt(diag(s^2 (J^T J)^-1))`` with ``s^2`` the residual variance.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import least_squares

from ..model.config import lookup_path
from ..model.errors import ConfigError, RrsError
from ..run.drive import Drive
from ..run.files import save_figure
from ..run.plotting import pyplot
from ..run.scenario import Scenario
from .sensors import (
    LogError,
    RecordedDrive,
    SensorLayout,
    crossings,
    naming,
    open_csv,
    read_log,
    write_whole,
)


@dataclass
class Record:
    """What a fit is fitted to: a speed time series (``times``, ``speed``) or sensor hits
    (``times`` with the ``sensors`` that fired)."""

    kind: str  # "series" or "sensors"
    times: np.ndarray
    speed: np.ndarray | None = None
    sensors: tuple[str, ...] = ()
    source: str = ""

    @property
    def end(self) -> float:
        """The last recorded time, s."""
        return float(np.max(self.times))


def load_record(path: str | Path) -> Record:
    """A drive's output directory, a CSV time series (``time_s``, ``speed_mps``) or a
    sensor log (:mod:`rrscore.calibration.sensors`)."""
    p = Path(path)
    if p.is_dir():
        p = p / "timeseries.csv"
    if not p.is_file():
        raise LogError(f"{path}: not found, expected a drive's output directory, a time "
                       "series CSV or a sensor log")
    with open_csv(p) as fh:
        header = next(csv.reader(fh), [])
    if "kind" in header:
        log = read_log(p)
        hits = sorted(log.hits, key=lambda h: (h.run, h.time))
        if not hits:
            raise LogError(f"{p}: no sensor hits to fit to")
        late = max(hits, key=lambda h: abs(h.time))
        if not 0.0 <= late.time <= SENSOR_FIT_END:
            # the drives fitted to it run past its last hit: a time no drive can reach is
            # the log's fault, not the scenario's stop.max_time
            raise LogError(f"{p}: run {late.run}: hit of {late.sensor} at {late.time:g} s; "
                           f"expected times from 0 to {SENSOR_FIT_END:g} s from the start of "
                           "the drive to fit to")
        return Record("sensors", np.array([h.time for h in hits]), None,
                      tuple(h.sensor for h in hits), str(p))
    if "time_s" not in header or "speed_mps" not in header:
        raise LogError(f"{p}: line 1: found columns {header}, expected time_s and speed_mps "
                       "(a time series) or a sensor log")
    rows = []
    with open_csv(p) as fh:
        reader = csv.DictReader(fh)
        for row in reader:
            try:
                t, v = float(row["time_s"]), float(row["speed_mps"])
            except (TypeError, ValueError):
                raise LogError(f"{p}: line {reader.line_num}: expected numbers in time_s and "
                               "speed_mps") from None
            if not (math.isfinite(v) and 0.0 <= t <= MAX_FIT_TIME):
                # (the drives fitted to it run as long as it: a time past what they can
                # run is the series' fault, not the scenario's stop.max_time)
                raise LogError(f"{p}: line {reader.line_num}: found time_s {t:g}, speed_mps "
                               f"{v:g}; expected a time from 0 to {MAX_FIT_TIME:g} s and a "
                               "finite speed")
            rows.append((t, v))
    if not rows:
        raise LogError(f"{p}: no rows after the header, expected a time series to fit to")
    data = np.array(rows, dtype=float).reshape(-1, 2)
    return Record("series", data[:, 0], data[:, 1], (), str(p))


def _record_end(record: Record) -> float:
    """How long each simulated drive runs: to the end of the record (a slower trial train
    needs longer to pass the last sensor)."""
    return record.end if record.kind == "series" else 1.2 * record.end + 10.0


#: Longest record a fit takes, s (11.6 days): each of its up to 200 trial drives runs as
#: long as the record, holding its time series in memory (a record of 5e8 s, at the
#: 0.5 s a scenario samples, filled 24 GB before the first trial ended).
MAX_FIT_TIME = 1e6
#: Latest sensor hit a fit can use: its drives run to 1.2 times the last hit plus 10 s.
SENSOR_FIT_END = (MAX_FIT_TIME - 10.0) / 1.2


def get_value(scenario: Scenario, path: str) -> float:
    """The number at key path ``path`` of the scenario's resolved config (SI)."""
    try:
        node = lookup_path(scenario.config, path)
    except KeyError:
        raise RrsError(f"{scenario.file or 'scenario'}: {path}: no such key in the "
                       "scenario (give key paths of the [scenario] table, as in "
                       "scenario.resolved.toml, e.g. "
                       "train.vehicles[0].config.params.F_max)") from None
    if isinstance(node, bool) or not isinstance(node, int | float):
        raise RrsError(f"{scenario.file or 'scenario'}: {path}: found {node!r}, expected a "
                       "number to fit")
    return float(node)


def with_params(scenario: Scenario, names: list[str], values: np.ndarray,
                end: float | None = None) -> Scenario:
    """A new scenario with the parameters set (and to stop at ``end`` s, if given)."""
    changes: dict[str, Any] = dict(zip(names, (float(v) for v in values), strict=True))
    if end is not None:
        changes["stop.max_time"] = end
    try:
        return scenario.with_values(changes)
    except KeyError as exc:
        raise RrsError(f"{scenario.file or 'scenario'}: {exc.args[0]}") from None


def simulate(scenario: Scenario, record: Record, names: list[str],
             values: np.ndarray) -> np.ndarray:
    """What the scenario with these parameter values gives at the record's points:
    speeds at its times, or passing times of its sensors."""
    end = _record_end(record)
    result = Drive(with_params(scenario, names, values, end), keep_coupler_forces=False).run()
    s = result.series
    if record.kind == "series":
        return np.interp(record.times, s["time_s"], s["speed_mps"])
    layout = SensorLayout(tuple(scenario.route.points), tuple(scenario.route.points.values()))
    drive = RecordedDrive(s["time_s"], s["front_m"], s["speed_mps"], [])
    passed = dict(crossings(drive, layout))
    return np.array([passed.get(n, np.nan) for n in record.sensors])


@dataclass
class FitResult:
    """A fit: the parameter ``names``, ``initial`` and fitted ``values`` (SI), their
    ``std_errors``, the ``residuals`` at the solution, how many simulated drives it took
    (``nfev``, the Jacobian's included) and how the solver ended."""

    names: list[str]
    initial: np.ndarray
    values: np.ndarray
    std_errors: np.ndarray
    residuals: np.ndarray
    kind: str
    nfev: int
    success: bool
    message: str
    scenario: Scenario | None = field(default=None, repr=False)

    @property
    def rms(self) -> float:
        """Root mean square of the residuals (m/s for a series, s for sensor times)."""
        return float(np.sqrt(np.mean(self.residuals ** 2)))

    def summary(self) -> dict[str, Any]:
        """The fit as JSON-ready data."""
        unit = "m/s" if self.kind == "series" else "s"
        return {
            "parameters": [{"key": n, "initial": float(i), "fitted": float(v),
                            "std_error": float(e),
                            "relative_std_error": float(e / abs(v)) if v else math.inf}
                           for n, i, v, e in zip(self.names, self.initial, self.values,
                                                 self.std_errors, strict=True)],
            "residuals": {"kind": self.kind, "unit": unit, "count": int(self.residuals.size),
                          "rms": self.rms, "max_abs": float(np.max(np.abs(self.residuals)))},
            "solver": {"simulated_drives": self.nfev, "success": self.success,
                       "message": self.message},
        }


def fit(scenario: Scenario, record: Record, names: list[str],
        initial: list[float] | None = None, diff_step: float = 1e-4,
        max_evaluations: int = 200) -> FitResult:
    """Fit the parameters ``names`` of ``scenario`` to ``record`` (see the module doc),
    starting from the scenario's own values or ``initial``."""
    if not names:
        raise RrsError("no parameters to fit: give key paths with --params")
    x0 = np.array(initial if initial is not None else [get_value(scenario, n) for n in names],
                  dtype=float)
    scale = np.where(x0 != 0, np.abs(x0), 1.0)
    drives = [0]
    try:  # the scenario as the first trial runs it: a limit the record's length breaks
        with_params(scenario, names, x0, _record_end(record))
    except ConfigError as exc:
        if exc.key is None or not exc.key.endswith(("stop.max_time", "sample_interval")):
            raise
        # (each trial drive runs as long as the record: its length is what breaks it)
        raise LogError(f"{record.source}: the record runs to {record.end:g} s, longer than "
                       f"the scenario can simulate: {exc}") from None

    def residuals(z: np.ndarray) -> np.ndarray:
        drives[0] += 1
        r = simulate(scenario, record, names, z * scale) - (
            record.speed if record.kind == "series" else record.times)
        # a sensor the simulated train never reached: a large, smooth penalty
        return np.where(np.isfinite(r), r, 1e3)

    sol = least_squares(residuals, x0 / scale, diff_step=diff_step, method="trf",
                        max_nfev=max_evaluations, x_scale=1.0)
    values = sol.x * scale
    m, n = sol.fun.size, len(names)
    jac = sol.jac
    dof = max(m - n, 1)
    s2 = 2.0 * sol.cost / dof
    try:
        cov = np.linalg.inv(jac.T @ jac) * s2
        errors = np.sqrt(np.clip(np.diag(cov), 0.0, None)) * scale
    except np.linalg.LinAlgError:
        errors = np.full(n, np.inf)
    fitted = with_params(scenario, names, values)
    return FitResult(list(names), x0, values, errors, sol.fun, record.kind, drives[0],
                     bool(sol.success), str(sol.message), fitted)


def write_fit(result: FitResult, record: Record, out: str | Path) -> list[Path]:
    """Write ``fit.json``, the fitted scenario (``scenario.fitted.toml``, runnable with
    ``rrs drive``) and ``fit.png`` (record against fitted simulation, and residuals)."""
    d = Path(out)
    d.mkdir(parents=True, exist_ok=True)
    files = [d / "fit.json", d / "scenario.fitted.toml", d / "fit.png"]
    write_whole(files[0], json.dumps({"data": record.source, **result.summary()},
                                          indent=2) + "\n")
    result.scenario.write_resolved(files[1])
    _plot(result, record, files[2])
    return files


def _plot(result: FitResult, record: Record, path: Path) -> None:
    plt = pyplot()
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 6), sharex=True,
                                      gridspec_kw={"height_ratios": [3, 1]})
    if record.kind == "series":
        top.plot(record.times, record.speed, ".", ms=3, label="recorded")
        top.plot(record.times, record.speed + result.residuals, "-", label="fitted model")
        top.set_ylabel("speed, m/s")
        bottom.set_ylabel("residual, m/s")
    else:
        layout_pos = result.scenario.route.points
        x = [layout_pos[s] for s in record.sensors]
        top.plot(record.times, x, ".", ms=4, label="sensor hits")
        top.plot(record.times + result.residuals, x, "x", ms=4, label="fitted model")
        top.set_ylabel("position, m")
        bottom.set_ylabel("residual, s")
    bottom.plot(record.times, result.residuals, ".", ms=3)
    bottom.axhline(0.0, color="0.5", lw=0.8)
    bottom.set_xlabel("time, s")
    # Above the axes, in one row: never over the data.
    top.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, fontsize=8,
               frameon=False)
    top.set_title("fit: " + ", ".join(n.rsplit(".", 1)[-1] for n in result.names), pad=22)
    fig.tight_layout()
    with naming(path):
        save_figure(fig, path, dpi=100)
    plt.close(fig)
