"""The brake applications of a drive, for its summary: when each began and how it ended,
the stopping distance and time, the largest in-train forces during it, and the braking
energy by kind.

An application begins at the control step at which a driver's brake valve is put in
service or emergency, or a coupling parts and tears the brake hoses (an emergency). It
ends when the whole train stands (``stopped``: its stopping distance and time are the
lead vehicle's from the beginning) or when every valve is back in release or running
(``released``, with the speed then). Ends are found on the committed segments of the
solution, so a stop is timed by the bodies' own stop events, not by the control rate.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ..compiled import dot
from ..physics.airbrake import EMERGENCY, RUNNING, SERVICE

#: Vehicle model signal read as the dynamic brake's force (SimpleLoco's name for it).
DYNAMIC_BRAKE_SIGNAL = "dynamic_brake_force_N"


class BrakeApplications:
    """Watches a run's air brake; :meth:`report` lists its applications."""

    def __init__(self, dyn, standstill_speed: float) -> None:
        self.dyn, self.train = dyn, dyn.train
        self.standstill = standstill_speed
        self.applications: list[dict[str, Any]] = []
        self.current: dict[str, Any] | None = None
        #: Work of the air brake and of the dynamic brakes so far, J.
        self.air_work = 0.0
        self.dynamic_work = 0.0
        self._dynamic = np.zeros(self.train.count)  # dynamic brake force held, N

    def _front(self, y: np.ndarray) -> float:
        return float(y[self.dyn.sx][0] + self.train.half_length[0])

    def control(self, t: float, y: np.ndarray) -> None:
        """At a control step, after the air brake has read the handles."""
        ab = self.dyn.airbrake
        positions = ab.position
        emergency = bool((positions == EMERGENCY).any() or ab.torn.any()
                         or (ab.hoses & ~self.dyn.couplings.coupled).any())
        applying = emergency or bool((positions == SERVICE).any())
        for b in self.train.batches:
            force = b.model.out.get(DYNAMIC_BRAKE_SIGNAL)
            if force is not None:
                self._dynamic[b.model.index] = np.abs(force)
        cur = self.current
        if cur is None:
            if applying and np.abs(y[self.dyn.sv]).max() > self.standstill:
                self.current = {
                    "kind": "emergency" if emergency else "service",
                    "start_time_s": t, "start_position_m": self._front(y),
                    "start_speed_mps": float(y[self.dyn.sv][0]),
                    "max_coupler_tension_N": 0.0, "max_coupler_tension_coupling": -1,
                    "max_coupler_compression_N": 0.0, "max_coupler_compression_coupling": -1,
                }
            return
        if emergency:
            cur["kind"] = "emergency"
        if positions.size and (positions <= RUNNING).all() and not emergency:
            self._end(t, y, "released")

    def segment(self, seg, forces: np.ndarray | None) -> None:
        """A committed segment ``[t0, t1]`` of the solution and the coupler forces at its
        end: energy, in-train forces and the end of an application by a stop."""
        self._take(np.array([seg.t0, seg.t1]), np.stack([seg.y0, seg.y1]),
                   None if forces is None else forces[None, :])

    def steps(self, steps) -> None:
        """Steps of the compiled loop (:class:`~rrscore.steploop.Steps`), all at once."""
        self._take(steps.t, steps.y, steps.coupler_forces)

    def _take(self, t: np.ndarray, y: np.ndarray, forces: np.ndarray | None) -> None:
        """Steps between the times ``t`` (k + 1), the states ``y`` at them (rows) and the
        coupler forces at each step's end (k rows)."""
        v = np.abs(y[:, self.dyn.sv])
        # the forces are held over a step; v is smooth in it: work at the mean speed
        self.air_work, self.dynamic_work = _works(self.air_work, self.dynamic_work, t, v,
                                                  self.dyn.airbrake.force, self._dynamic)
        cur = self.current
        if cur is None:
            return
        stops = np.flatnonzero(v[1:].max(axis=1) <= self.standstill)
        last = int(stops[0]) if stops.size else t.size - 2  # the application's last step
        if forces is not None and forces.size:
            # the first step, then the first coupling, to reach each extreme
            f = forces[:last + 1]
            j = int(f.argmax())
            if f.flat[j] > cur["max_coupler_tension_N"]:
                cur["max_coupler_tension_N"] = float(f.flat[j])
                cur["max_coupler_tension_coupling"] = j % f.shape[1]
            j = int(f.argmin())
            if -f.flat[j] > cur["max_coupler_compression_N"]:
                cur["max_coupler_compression_N"] = float(-f.flat[j])
                cur["max_coupler_compression_coupling"] = j % f.shape[1]
        if stops.size:
            self._end(float(t[last + 1]), y[last + 1], "stopped")

    def _end(self, t: float, y: np.ndarray, how: str) -> None:
        cur = self.current
        assert cur is not None
        cur |= {"end": how, "end_time_s": t, "end_speed_mps": float(y[self.dyn.sv][0]),
                "time_s": t - cur["start_time_s"],
                "distance_m": self._front(y) - cur["start_position_m"]}
        self.applications.append(cur)
        self.current = None

    def report(self, t: float, y: np.ndarray) -> list[dict[str, Any]]:
        """Every application so far; one under way is listed with ``end`` "under way"."""
        out = list(self.applications)
        if self.current is not None:
            cur = dict(self.current)
            cur |= {"end": "under way", "end_time_s": t,
                    "end_speed_mps": float(y[self.dyn.sv][0]),
                    "time_s": t - cur["start_time_s"],
                    "distance_m": self._front(y) - cur["start_position_m"]}
            out.append(cur)
        return out


@njit(cache=True)
def _works(air, dynamic, t, v, air_force, dynamic_force):  # pragma: no cover (compiled)
    """The air and dynamic brakes' work, added to ``air`` and ``dynamic``, over the steps
    between the times ``t`` with the speeds ``v`` (rows) at them."""
    mean = np.empty(v.shape[1])
    for j in range(t.size - 1):
        dt = t[j + 1] - t[j]
        for i in range(mean.size):
            mean[i] = 0.5 * (v[j, i] + v[j + 1, i])
        air += dot(air_force, mean) * dt
        dynamic += dot(dynamic_force, mean) * dt
    return air, dynamic
