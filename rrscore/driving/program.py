"""The driver program of a test drive: key presses, releases and control settings
at given times or positions, applied at the control rate."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..model.config import Context, FreeTable, Param
from ..model.events import Event
from ..model.formulas import RAIL_CONDITIONS, rail_condition_factor
from ..model.track import Route
from ..model.train import Train
from ..model.vehicle import control_of
from .autodriver import AutoDriver

_TRIGGERS = ("at_time", "at_position", "at_point", "at_speed_above", "at_speed_below")

ACTION_SCHEMA = {
    "at_time": Param("s", None, "when: simulated time", min=0.0),
    "at_position": Param("m", None, "when: the train's front passes this position"),
    "at_point": Param(kind=str, default=None, doc="when: the train's front passes a point"),
    "at_speed_above": Param("m/s", None, "when: the lead vehicle's speed reaches this or more",
                            min=0.0),
    "at_speed_below": Param("m/s", None, "when: the lead vehicle's speed falls to this or less",
                            min=0.0),
    "vehicle": Param(kind=int, default=0, doc="which vehicle (train index, 0 = lead)", min=0),
    "all_vehicles": Param(kind=bool, default=False,
                          doc="apply to every vehicle that has the key or control"),
    "press": Param(kind=str, default=None, doc="key to press (held until released)"),
    "release": Param(kind=str, default=None, doc="key to release"),
    "set": FreeTable("controls to set, {name = value}"),
    "ramp_time": Param("s", None, "move the controls in set to their values linearly over "
                       "this time, from where they are", min=0.0, exclusive_min=True),
    "ramp_distance": Param("m", None, "move the controls in set to their values linearly "
                           "over this distance run by the lead vehicle", min=0.0,
                           exclusive_min=True),
    "uncouple": Param(kind=int, default=None, doc="uncouple this coupling (0 = behind the lead)",
                      min=0),
    "rail_condition": Param(kind=str, default=None,
                            doc="rail condition under the whole train from now on (dry, wet, ...)"),
    "autodriver": Param(kind=bool, default=None,
                        doc="switch the built-in driver off (the program takes over the "
                            "controls it set) or back on"),
}


@dataclass(frozen=True)
class Action:
    """One checked driver action (part of a scenario's description: never changed)."""

    time: float | None
    position: float | None
    vehicles: tuple[int, ...]
    press: str | None
    release: str | None
    controls: tuple[tuple[str, float], ...]
    uncouple: int | None = None
    rail_condition: str | None = None
    autodriver: bool | None = None
    speed_above: float | None = None
    speed_below: float | None = None
    ramp_time: float | None = None
    ramp_distance: float | None = None

    def describe(self) -> str:
        """One line for events.csv: who and what."""
        parts = [f"press {self.press}" if self.press else "",
                 f"release {self.release}" if self.release else "",
                 " ".join(f"{k}={v:g}" for k, v in self.controls)
                 + (f" over {self.ramp_time:g} s" if self.ramp_time is not None else "")
                 + (f" over {self.ramp_distance:g} m" if self.ramp_distance is not None
                    else ""),
                 f"uncouple {self.uncouple}" if self.uncouple is not None else "",
                 f"rails {self.rail_condition}" if self.rail_condition else "",
                 "" if self.autodriver is None else
                 f"built-in driver {'on' if self.autodriver else 'off'}"]
        who = (f"vehicle {self.vehicles[0]}" if len(self.vehicles) == 1
               else f"{len(self.vehicles)} vehicles")
        return f"{who}: " + ", ".join(p for p in parts if p)


def _nobody_has(keys: list[str], controls: list[str], train: Train) -> str:
    """The error for an ``all_vehicles`` action no vehicle can take: names what is missing."""
    models = [b.cls for b in train.batches]
    missing = [f"key {k!r}" for k in keys if not any(k in m.keys for m in models)]
    missing += [f"control {n!r}" for n in controls if not any(n in m.controls for m in models)]
    types = ", ".join(f"{m.type_name} (keys: {', '.join(m.keys) or 'none'}; controls: "
                      f"{', '.join(m.controls) or 'none'})" for m in models)
    what = ", ".join(missing) if missing else "every key and control named here together"
    return f"found {what}, which no vehicle of the train has; expected those of {types}"


def check_actions(actions: list[dict[str, Any]], train: Train, route: Route,
                  ctx: Context) -> list[Action]:
    """Turn normalised ``[[scenario.driver]]`` tables into :class:`Action` objects, checking
    that each names one trigger, an existing vehicle, and keys or controls it has."""
    out = []
    for i, a in enumerate(actions):
        c = ctx.child(i)
        triggers = [k for k in _TRIGGERS if a.get(k) is not None]
        if len(triggers) != 1:
            raise c.error(f"found {triggers or 'no trigger'}, expected exactly one of "
                          + ", ".join(_TRIGGERS))
        if a.get("ramp_time") is not None and a.get("ramp_distance") is not None:
            raise c.error("found ramp_time and ramp_distance, expected at most one of them")
        ramp = next((k for k in ("ramp_time", "ramp_distance") if a.get(k) is not None), None)
        if ramp is not None and not a["set"]:
            raise c.child(ramp).error("found a ramp without controls, expected set = "
                                      "{control = value} to ramp to")
        if not (a.get("press") or a.get("release") or a["set"] or a.get("uncouple") is not None
                or a.get("rail_condition") or a.get("autodriver") is not None):
            raise c.error("nothing to do: expected press, release, set, uncouple, "
                          "rail_condition or autodriver")
        if a.get("uncouple") is not None and a["uncouple"] >= train.count - 1:
            raise c.child("uncouple").error(
                f"found {a['uncouple']}, expected a coupling index below {train.count - 1}")
        if a.get("rail_condition") is not None:
            try:
                rail_condition_factor(a["rail_condition"])
            except (KeyError, ValueError):
                raise c.child("rail_condition").error(
                    f"found {a['rail_condition']!r}, expected one of "
                    + ", ".join(RAIL_CONDITIONS)) from None
        if a["vehicle"] >= train.count:
            raise c.child("vehicle").error(
                f"found {a['vehicle']}, expected a vehicle index below {train.count}")
        keys = [k for k in (a.get("press"), a.get("release")) if k is not None]
        if a["all_vehicles"]:
            def fits(m, keys=keys, a=a):
                return all(k in m.keys for k in keys) and all(n in m.controls for n in a["set"])
            vehicles = [i for i in range(train.count)
                        if fits(train.batches[train.batch_of[i]].cls)]
            if not vehicles:
                raise c.error(_nobody_has(keys, list(a["set"]), train))
        else:
            vehicles = [a["vehicle"]]
        model = train.batches[train.batch_of[vehicles[0]]].cls
        for kind in ("press", "release"):
            key = a.get(kind)
            if key is not None and key not in model.keys:
                raise c.child(kind).error(
                    f"found {key!r}, expected a key of {model.type_name}: "
                    + (", ".join(model.keys) or "(it has no keys)"))
        controls = {}
        for name, value in a["set"].items():
            if name not in model.controls:
                raise c.child("set").child(name).error(
                    f"unknown control for {model.type_name}; expected one of: "
                    + (", ".join(model.controls) or "(it has no controls)"))
            if isinstance(value, bool) or not isinstance(value, int | float) \
                    or not math.isfinite(value):
                raise c.child("set").child(name).error(
                    f"found {value!r}, expected a finite number")
            declared = control_of(model, name)
            lo, hi = declared.low, declared.high
            if not lo <= value <= hi:
                raise c.child("set").child(name).error(
                    f"found {value:g}, expected a value from {lo:g} to {hi:g} (the range "
                    f"{model.type_name} declares for {name})")
            controls[name] = float(value)
        position = a.get("at_position")
        if a.get("at_point") is not None:
            position = route.position_of(a["at_point"], c.child("at_point"))
        out.append(Action(a.get("at_time"), position, tuple(vehicles), a.get("press"),
                          a.get("release"), tuple(controls.items()), a.get("uncouple"),
                          a.get("rail_condition"), a.get("autodriver"),
                          a.get("at_speed_above"), a.get("at_speed_below"), a.get("ramp_time"),
                          a.get("ramp_distance")))
    return out


class DriverProgram:
    """Applies due actions to a run's vehicles (through the train system's inputs); which
    actions are done is the run's."""

    def __init__(self, actions: tuple[Action, ...], train: Train, system: Any,
                 autodriver: AutoDriver | None = None) -> None:
        self.actions = actions
        self.train = train
        self.system = system
        self.done = np.zeros(len(actions), dtype=bool)
        #: The built-in driver, if the scenario selects it; it decides before the
        #: program's actions, so an action due at the same time has the last word.
        self.autodriver = autodriver
        #: Ramps under way: (action index, start values per control, start time, start
        #: position of the lead's front).
        self.ramps: list[tuple[int, dict[str, np.ndarray], float, float]] = []

    def drive(self, t: float, front: float, rear: float, speed: float) -> bool:
        """The built-in driver's decision at ``t`` (if it has one); whether it changed any
        control."""
        auto = self.autodriver
        if auto is None:
            return False
        self.system.driver_readings(auto.state, auto.params, t)
        if not auto.update(t, front, rear, speed):
            return False
        for name, level in auto.levels():
            for b in auto.users[name]:
                rows = np.arange(self.train.batches[b].count)
                self.system.set_input(b, rows, name, level, t)
        return True

    def _targets(self, a: Action):
        """(batch index, rows) for each vehicle type an action addresses."""
        tr = self.train
        vehicles = np.array(a.vehicles)
        for b in np.unique(tr.batch_of[vehicles]):
            yield int(b), tr.row_of[vehicles[tr.batch_of[vehicles] == b]]

    def _ramp(self, t: float, lead_front: float) -> bool:
        """Move every ramp under way to where it is due at ``t``; drop finished ones."""
        going = []
        for i, start, t0, x0 in self.ramps:
            a = self.actions[i]
            done = ((t - t0) / a.ramp_time if a.ramp_time is not None
                    else (lead_front - x0) / a.ramp_distance)
            share = min(max(done, 0.0), 1.0)
            for b, rows in self._targets(a):
                for name, value in a.controls:
                    v0 = start[f"{b}:{name}"]
                    self.system.set_input(b, rows, name, v0 + share * (value - v0), t)
            if share < 1.0:
                going.append((i, start, t0, x0))
        self.ramps = going
        return True

    def apply_due(self, t: float, lead_front: float, lead_speed: float = 0.0) -> bool:
        """Apply every action whose time has come, whose position the lead has passed or
        whose speed it has reached, and move ramps on; return whether anything changed."""
        applied = self._ramp(t, lead_front) if self.ramps else False
        system = self.system
        for i, a in enumerate(self.actions):
            if self.done[i]:
                continue
            due = ((a.time is not None and t >= a.time - 1e-9)
                   or (a.position is not None and lead_front >= a.position)
                   or (a.speed_above is not None and abs(lead_speed) >= a.speed_above)
                   or (a.speed_below is not None and abs(lead_speed) <= a.speed_below))
            if not due:
                continue
            self.done[i] = True
            applied = True
            for b, rows in self._targets(a):
                if a.release:
                    system.set_input(b, rows, a.release, 0.0, t)
                if a.press:
                    system.set_input(b, rows, a.press, 1.0, t)
                if a.ramp_time is None and a.ramp_distance is None:
                    for name, value in a.controls:
                        system.set_input(b, rows, name, value, t)
            if a.ramp_time is not None or a.ramp_distance is not None:
                start = {f"{b}:{name}": self.train.batches[b].record.row(name)[rows].copy()
                         for b, rows in self._targets(a) for name, _ in a.controls}
                self.ramps.append((i, start, t, lead_front))
            if a.uncouple is not None:
                system.uncouple(a.uncouple)
            if a.autodriver is not None and self.autodriver is not None:
                self.autodriver.enabled = a.autodriver
            if a.rail_condition is not None:
                system.set_rail_condition(rail_condition_factor(a.rail_condition))
            system.log.append(Event(t, "driver", vehicle=a.vehicles[0]
                                    if len(a.vehicles) == 1 else -1,
                                    coupling=-1 if a.uncouple is None else a.uncouple,
                                    detail=a.describe()))
        return applied

    def keys_held(self) -> bool:
        """Whether a key is held on any vehicle (a ramp of the plugin's under way)."""
        return any(b.record.row(k).any() for b in self.train.batches for k in b.cls.keys)

    @property
    def pending(self) -> int:
        """How many actions have not been applied yet."""
        return int((~self.done).sum())
