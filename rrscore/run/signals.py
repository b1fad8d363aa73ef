"""The signals a scenario records per vehicle and per coupling (``output.vehicle_signals``,
``output.coupling_signals``), at a sample's state.

Per vehicle: its position, speed and acceleration, the drive force demanded of it, the
largest slip of its axles, its energy flows and kinetic energy, the plugin's signals and
states, and the air brake's pressures and force where it has the part (NaN elsewhere).
Per coupling: its force, deflection, whether it is coupled, and the work taken up by it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..physics.energy import ENERGY_SIGNALS
from ..physics.wheelsets import creep_slip_of, rail_force_needed

#: Every vehicle has these signals (the plugin's own are added per type).
VEHICLE_SIGNALS = ("position_m", "speed_mps", "accel_mps2", "traction_force_N",
                   "max_slip_mps", *ENERGY_SIGNALS)
#: The air brake's signals, NaN on vehicles without the part.
BRAKE_SIGNALS = ("brake_pipe_Pa", "brake_cylinder_Pa", "aux_reservoir_Pa",
                 "equalizing_reservoir_Pa", "air_brake_force_N")
COUPLING_SIGNALS = ("force_N", "deflection_m", "coupled", "energy_J")


def vehicle_signal(run: Any, name: str, t: float, y: np.ndarray, f: np.ndarray) -> np.ndarray:
    """Signal ``name`` of every vehicle at ``(t, y)`` (derivative ``f``), NaN where a
    vehicle has no such signal."""
    system, tr = run.system, run.train
    lay = system.lay
    n = lay.n
    if name == "position_m":
        return y[lay.sx:lay.sx + n].copy()
    if name == "speed_mps":
        return y[lay.sv:lay.sv + n].copy()
    if name == "accel_mps2":
        return f[lay.sv:lay.sv + n].copy()
    if name == "traction_force_N":
        return system.traction_force()
    if name == "max_slip_mps":
        return _max_slip(run, y, f)
    if name == "energy_kinetic_J":
        return system.kinetic(y)
    if name.startswith("energy_"):
        return y[system.energy_slices[name[len("energy_"):-len("_J")]]].copy()
    if name in BRAKE_SIGNALS:
        air = system.air
        return air.signal(name, t) if air.on else np.full(n, np.nan)
    col = np.full(n, np.nan)
    for b_i, b in enumerate(tr.batches):  # a state from the state (its record row is
        if name in b.cls.states:             # the last step's), each batch's own block
            col[b.index] = y[system.state_slice(b_i, name)]
        elif name in b.record.fields:
            col[b.index] = b.record.row(name)
    return col


def _max_slip(run: Any, y: np.ndarray, f: np.ndarray) -> np.ndarray:
    """Each vehicle's largest axle slip ``|omega r - v|``, a rolling axle's its creep slip."""
    system, tr = run.system, run.train
    lay, ax = system.lay, system.sys.axles
    y = system.full_state(y)
    v = y[lay.sv + ax.vehicle]
    a = f[lay.sv + ax.vehicle]
    slip = y[lay.somega:lay.somega + lay.na] * ax.radius - v
    need = rail_force_needed(v, a, ax.torque, ax.brake, ax.radius, ax.mass_equiv)
    creep = creep_slip_of(ax, system.sys.laws, need, v)
    slip = np.abs(np.where(ax.rolling != 0.0, creep, slip))
    out = np.zeros(tr.count)
    np.maximum.at(out, tr.axle_vehicle, slip)
    return out


def coupling_signal(run: Any, name: str, y: np.ndarray) -> np.ndarray:
    """Signal ``name`` of every coupling at ``y``."""
    system = run.system
    lay = system.lay
    if name == "force_N":
        return system.coupler_forces(y)
    if name == "deflection_m":
        x = y[lay.sx:lay.sx + lay.n]
        return x[:-1] - x[1:] - system.sys.couplings.nominal
    if name == "coupled":
        return system.sys.couplings.coupled.copy()
    return y[system.coupler_work].copy()


#: The signals a sample's state and derivative give, whenever they are read: the others
#: (the drive force, slip, plugins' and the air brake's signals) are read at the sample's
#: control step, before the next one changes them.
STATE_SIGNALS = frozenset({"position_m", "speed_mps", "accel_mps2", *ENERGY_SIGNALS,
                           "deflection_m", "coupled", "energy_J"})


def from_state_alone(run: Any) -> bool:
    """Whether every signal the scenario records comes from a sample's state and derivative
    (:data:`STATE_SIGNALS`; a coupling's force too, but a rigid train's, which its
    inputs give). The run then takes its rows in blocks, else at every control step."""
    out = run.scenario.config["output"]
    wanted = set(out["vehicle_signals"]) if out["vehicles"] else set()
    if run.system.rigid and wanted & set(ENERGY_SIGNALS):
        return False  # (as one body, a rigid train's flows are closed at control steps)
    if out["couplings"]:
        wanted |= set(out["coupling_signals"])
        if "force_N" in wanted and not run.system.rigid:
            wanted.discard("force_N")
    return wanted <= STATE_SIGNALS


def signal_values(run: Any, t: float, y: np.ndarray,
                  f: np.ndarray | None = None) -> list[float]:
    """The recorded vehicles' signals then the recorded couplings', as :attr:`Run.columns`
    lists them (vehicle by vehicle, coupling by coupling); ``f`` the derivative at ``y``
    (of its ``live`` entries; None: taken now)."""
    out = run.scenario.config["output"]
    if f is None:
        f = np.empty(run.system.size)
        run.system.derivative(t, y, f)
    values: list[float] = []
    if out["vehicles"]:
        chosen = np.asarray(out["vehicles"], dtype=int)
        table = np.column_stack([vehicle_signal(run, s, t, y, f)[chosen]
                                 for s in out["vehicle_signals"]])
        values += table.ravel().tolist()
    if out["couplings"]:
        chosen = np.asarray(out["couplings"], dtype=int)
        table = np.column_stack([coupling_signal(run, s, y)[chosen]
                                 for s in out["coupling_signals"]])
        values += table.ravel().tolist()
    return values
