"""The headless test drive: the loop that runs a scenario and writes its outputs.

Each control step: sample outputs, check stop conditions, apply the driver
program, call every vehicle model's ``step`` once (one call per batch), gather
their ``Q_a``/``Q_r``, then let the integrator advance the train to the next
control time, locating events on the way.

Outputs in ``out`` (when given): ``scenario.resolved.toml`` first, then
``timeseries.csv`` row by row, then ``summary.json`` and ``speed.png`` at the
end, also when the drive is interrupted or a plugin fails.
"""

from __future__ import annotations

import csv
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .driver import DriverProgram
from .dynamics import TrainDynamics
from .errors import PluginError, RrsError, plugin_call
from .integrator import Integrator
from .plots import force_envelope_plot, speed_plot
from .recorder import CouplingMonitor, Recorder
from .scenario import Scenario, load_scenario

Progress = Callable[[float, float, float], None]
"""Called as ``progress(fraction_done, t, lead_speed)`` once per control step."""


@dataclass
class DriveResult:
    """What a drive returns: the summary, the sampled time series and where files went."""

    summary: dict[str, Any]
    series: dict[str, np.ndarray]
    out_dir: Path | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class Drive:
    """One run of a scenario. Most users call :func:`drive` instead."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        cfg = scenario.config
        self.train = tr = scenario.train
        self.dyn = dyn = TrainDynamics(tr, scenario.route)
        dyn.wind = cfg["environment"]["wind"]
        dyn.air_density = cfg["environment"]["air_density"]
        start = cfg["start"]
        speed = start["speed"] if start["speeds"] is None else np.array(start["speeds"])
        y0 = dyn.initial_state(scenario.start_position, speed, start["slack"], start["gaps"])
        sol = cfg["solver"]
        atol = np.empty(dyn.size)
        rtol = np.zeros(dyn.size)
        atol[dyn.sx] = sol["position_tol"]
        atol[dyn.sv] = sol["atol"]
        atol[dyn.sphi] = np.inf  # wheel angles do not feed back; leave them uncontrolled
        atol[dyn.somega] = sol["atol"] / tr.axle_radius
        rtol[dyn.sv] = sol["rtol"]
        rtol[dyn.somega] = sol["rtol"]
        solver_cls = scenario.registry.solvers[sol["method"]]
        self.solver = solver_cls(dyn.rhs, 0.0, y0, step=sol["step"], rtol=rtol, atol=atol,
                                 max_step=sol["max_step"])
        self.integrator = Integrator(self.solver, dyn, on_step=self._on_step)
        steps = [sol["control_step"]] + [
            b.model.control_step for b in tr.batches if b.model.control_step
        ]
        self.control_step = min(steps)
        self.driver = DriverProgram(scenario.actions, tr, dyn)
        self.columns = self._columns()
        self.monitor = CouplingMonitor(tr.count - 1)
        self.max_speed = abs(float(y0[dyn.sv][0]))
        self.moved = False

    # ----------------------------------------------------------------- outputs
    def _columns(self) -> list[str]:
        out = self.scenario.config["output"]
        cols = ["time_s", "position_m", "speed_mps", "accel_mps2", "traction_force_N",
                "speed_limit_mps"]
        cols += [f"v{i}_{s}" for i in out["vehicles"] for s in out["vehicle_signals"]]
        cols += [f"c{j}_{s}" for j in out["couplings"] for s in out["coupling_signals"]]
        return cols

    def _row(self, t: float, y: np.ndarray, f: np.ndarray) -> list[float]:
        dyn, tr = self.dyn, self.train
        out = self.scenario.config["output"]
        x, v, a = y[dyn.sx], y[dyn.sv], f[dyn.sv]
        drive = dyn.body_force + np.bincount(tr.axle_vehicle, dyn.axle_torque / tr.axle_radius,
                                             tr.count)
        row = [t, x[0], v[0], a[0], float(drive.sum()),
               self.scenario.route.speed_limit(x[0] + tr.half_length[0])]
        if out["vehicles"]:
            slip = np.abs(dyn.slip_velocity(y, f))
            max_slip = np.zeros(tr.count)
            np.maximum.at(max_slip, tr.axle_vehicle, slip)
            builtin = {"position_m": x, "speed_mps": v, "accel_mps2": a,
                       "traction_force_N": drive, "max_slip_mps": max_slip}
            for i in out["vehicles"]:
                model = tr.batches[tr.batch_of[i]].model
                for s in out["vehicle_signals"]:
                    if s in builtin:
                        row.append(float(builtin[s][i]))
                    elif s in model.out:
                        row.append(float(model.out[s][tr.row_of[i]]))
                    else:
                        row.append(math.nan)
        if out["couplings"]:
            d = tr.couplings.deflection(x)
            force = tr.couplings.force(d, v[:-1] - v[1:])
            signals = {"force_N": force, "deflection_m": d,
                       "coupled": tr.couplings.coupled.astype(float),
                       "energy_J": self.monitor.work}
            for j in out["couplings"]:
                for s in out["coupling_signals"]:
                    row.append(float(signals[s][j]))
        return row

    def _on_step(self, t: float, y: np.ndarray) -> None:
        dyn, tr = self.dyn, self.train
        if tr.count > 1:
            x = y[dyn.sx]
            self.monitor.update(t, x[:-1] - tr.half_length[:-1], tr.couplings.deflection(x),
                                dyn.last_coupler_force)
        self.max_speed = max(self.max_speed, abs(float(y[dyn.sv][0])))

    # -------------------------------------------------------------------- loop
    def _stop_reason(self, t: float, y: np.ndarray, x0: float) -> str | None:
        sc, dyn, tr = self.scenario, self.dyn, self.train
        stop = sc.config["stop"]
        x = y[dyn.sx]
        front = x[0] + tr.half_length[0]
        speed = np.abs(y[dyn.sv])
        self.moved = self.moved or bool(speed.max() > stop["standstill_speed"])
        if t >= stop["max_time"] - 1e-9:
            return "max_time"
        if stop["max_distance"] > 0 and abs(x[0] - x0) >= stop["max_distance"]:
            return "max_distance"
        if sc.stop_position is not None and front >= sc.stop_position:
            return "at_position"
        if front >= sc.route.length:
            return "end_of_route"
        if stop["standstill"] and self.moved and speed.max() <= stop["standstill_speed"]:
            return "standstill"
        return None

    def _step_models(self, t: float, y: np.ndarray) -> bool:
        dyn, tr = self.dyn, self.train
        x, v, omega = y[dyn.sx], y[dyn.sv], y[dyn.somega]
        for b in tr.batches:
            m = b.model
            sign = tr.orientation[m.index]
            m.x = x[m.index].copy()
            m.v = v[m.index] * sign
            m.omega = omega[b.axles] * sign[:, None]
            with plugin_call(b.describe("step"), t):
                m.step(t, self.control_step)
            if not (np.isfinite(m.Q_a).all() and np.isfinite(m.Q_r).all()):
                raise PluginError(f"{b.describe('step')} set a non-finite Q_a or Q_r, "
                                  f"at t = {t:.3f} s")
        return dyn.set_inputs()

    def run(self, out: str | Path | None = None, progress: Progress | None = None) -> DriveResult:
        """Run to a stop condition; write outputs to ``out`` if given."""
        sc = self.scenario
        out_dir = Path(out) if out is not None else None
        if out_dir is not None:
            if out_dir.exists() and not out_dir.is_dir():
                raise RrsError(f"output directory {out_dir}: exists and is not a directory")
            out_dir.mkdir(parents=True, exist_ok=True)
            sc.write_resolved(out_dir / "scenario.resolved.toml")
        rec = Recorder(self.columns, out_dir / "timeseries.csv" if out_dir else None)
        s, dyn, tr = self.solver, self.dyn, self.train
        forces_rec = None
        if sc.config["output"]["coupler_forces"] and tr.count > 1:
            forces_rec = Recorder(["time_s"] + [f"c{j}_force_N" for j in range(tr.count - 1)],
                                  out_dir / "coupler_forces.csv" if out_dir else None)
        x0 = float(s.y[dyn.sx][0])
        sample = sc.config["output"]["sample_interval"]
        max_time = sc.config["stop"]["max_time"]
        next_sample = 0.0
        reason = "error"
        error: BaseException | None = None
        wall0 = time.perf_counter()
        try:
            n_control = 0  # control times are n * control_step: no drift from summing
            next_control = 0.0
            while True:
                t, y = s.t, s.y
                if t >= next_sample - 1e-9:
                    f = s.f if s.f is not None else dyn.rhs(t, y)
                    rec.record(self._row(t, y, f))
                    if forces_rec is not None:
                        x, v = y[dyn.sx], y[dyn.sv]
                        forces_rec.record([t, *tr.couplings.force(tr.couplings.deflection(x),
                                                                  v[:-1] - v[1:])])
                    next_sample = sample * (math.floor(t / sample + 1e-9) + 1)
                stop = self._stop_reason(t, y, x0)
                if stop:
                    reason = stop
                    if rec.rows and rec.rows[-1][0] != t:
                        rec.record(self._row(t, y, s.f if s.f is not None else dyn.rhs(t, y)))
                    break
                if t >= next_control - 1e-9:
                    acted = self.driver.apply_due(t, float(y[dyn.sx][0] + tr.half_length[0]))
                    changed = self._step_models(t, y)
                    if changed or acted or n_control == 0:
                        self.integrator.restart(t, y)  # inputs jumped: a new start
                    n_control += 1
                    next_control = n_control * self.control_step
                    if progress is not None:
                        progress(t / max_time, t, float(y[dyn.sv][0]))
                # samples between control times are integration stops, not restarts
                self.integrator.advance(min(next_control, next_sample, max_time))
        except KeyboardInterrupt as exc:
            reason, error = "interrupted", exc
        except (RrsError, FloatingPointError) as exc:
            reason, error = "error", exc
        finally:
            rec.close()
            if forces_rec is not None:
                forces_rec.close()
        wall = time.perf_counter() - wall0
        summary = self._summary(x0, reason, wall, error)
        series = rec.series()
        if out_dir is not None:
            (out_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
            self._write_events(out_dir / "events.csv")
            if sc.config["output"]["plots"] and len(rec.rows) > 1:
                speed_plot(series, out_dir / "speed.png", sc.config["name"])
                if tr.count > 1:
                    force_envelope_plot(summary["couplings"], out_dir / "force_envelope.png",
                                        f"{sc.config['name']}: in-train force envelope")
        result = DriveResult(summary, series, out_dir)
        if forces_rec is not None:
            result.extra["coupler_forces"] = forces_rec.series()
        result.extra["events"] = self.event_log()
        if error is not None:
            if isinstance(error, FloatingPointError):
                raise RrsError(f"integration failed: {error}") from error
            raise error
        return result

    def event_log(self) -> list[tuple[float, str, str, str]]:
        """Physical events and driver actions in time order: (t, event, what, detail)."""
        tr = self.train
        rows = []
        for t, kind, i, detail in self.dyn.log:
            if kind in ("slip", "slide", "re-adhesion", "wheel locked"):
                v = int(tr.axle_vehicle[i])
                what = f"vehicle {v} axle {i - int(np.flatnonzero(tr.axle_vehicle == v)[0])}"
            else:
                what = f"coupling {i}"
            rows.append((t, kind, what, detail))
        rows += [(t, "driver", "", text) for t, text in self.driver.log]
        return sorted(rows, key=lambda r: r[0])

    def _write_events(self, path: Path) -> None:
        with open(path, "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(["time_s", "event", "where", "detail"])
            for t, kind, what, detail in self.event_log():
                w.writerow([_fmt(t), kind, what, detail])

    def _summary(self, x0: float, reason: str, wall: float,
                 error: BaseException | None) -> dict[str, Any]:
        s, dyn, tr = self.solver, self.dyn, self.train
        y = s.y
        sim = s.t
        mon = self.monitor
        jt = int(mon.tension.argmax()) if mon.tension.size else -1
        jc = int(mon.compression.argmax()) if mon.compression.size else -1
        tension = (float(mon.tension[jt]), jt, float(mon.tension_time[jt])) if jt >= 0 \
            else (0.0, -1, 0.0)
        compression = (float(mon.compression[jc]), jc, float(mon.compression_time[jc])) \
            if jc >= 0 else (0.0, -1, 0.0)
        kinds = [e[1] for e in dyn.log]
        summary = {
            "scenario": self.scenario.config["name"],
            "sim_time_s": sim,
            "distance_m": float(y[dyn.sx][0] - x0),
            "max_speed_mps": self.max_speed,
            "final_speed_mps": float(y[dyn.sv][0]),
            "max_coupler_tension_N": tension[0],
            "max_coupler_tension_coupling": tension[1],
            "max_coupler_tension_time_s": tension[2],
            "max_coupler_compression_N": compression[0],
            "max_coupler_compression_coupling": compression[1],
            "max_coupler_compression_time_s": compression[2],
            "wall_time_s": wall,
            "real_time_factor": sim / wall if wall > 0 else math.inf,
            "steps": s.nsteps,
            "rejected_steps": s.nrejected,
            "rhs_evaluations": s.nfev,
            "events": self.integrator.event_counts,
            "solver": self.scenario.config["solver"]["method"],
            "vehicles": tr.count,
            "train_mass_kg": tr.total_mass,
            "slip_events": kinds.count("slip"),
            "slide_events": kinds.count("slide"),
            "coupler_breaks": kinds.count("coupler break"),
            "couplings_made": kinds.count("coupled"),
            "draft_gear_energy_J": float(mon.work.sum()),
            "stop_reason": reason,
            "couplings": mon.summary(),
        }
        if error is not None and not isinstance(error, KeyboardInterrupt):
            summary["error"] = str(error)
        return summary


def _fmt(value: float) -> str:
    return f"{value:.6f}"


def drive(scenario: Scenario | str | Path, out: str | Path | None = None,
          progress: Progress | None = None) -> DriveResult:
    """Run a scenario (a :class:`Scenario` or the path of a scenario file).

    With ``out``, writes ``timeseries.csv``, ``summary.json``, ``speed.png`` and
    ``scenario.resolved.toml`` there. Returns the summary and the sampled series.
    """
    if not isinstance(scenario, Scenario):
        scenario = load_scenario(scenario)
    return Drive(scenario).run(out, progress)
