"""The driver program of a test drive: key presses, releases and control settings
at given times or positions, applied at the control rate."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .config import Context, FreeTable, Param
from .errors import plugin_call
from .track import Route
from .train import Train

ACTION_SCHEMA = {
    "at_time": Param("s", None, "when: simulated time", min=0.0),
    "at_position": Param("m", None, "when: the lead vehicle's front passes this position"),
    "at_point": Param(kind=str, default=None, doc="when: the lead vehicle's front passes a point"),
    "vehicle": Param(kind=int, default=0, doc="which vehicle (train index, 0 = lead)", min=0),
    "press": Param(kind=str, default=None, doc="key to press (held until released)"),
    "release": Param(kind=str, default=None, doc="key to release"),
    "set": FreeTable("controls to set, {name = value}"),
}


@dataclass
class Action:
    """One checked driver action."""

    time: float | None
    position: float | None
    vehicle: int
    press: str | None
    release: str | None
    controls: dict[str, float]
    done: bool = False

    def describe(self) -> str:
        parts = [f"press {self.press}" if self.press else "",
                 f"release {self.release}" if self.release else "",
                 " ".join(f"{k}={v:g}" for k, v in self.controls.items())]
        return f"vehicle {self.vehicle}: " + ", ".join(p for p in parts if p)


def check_actions(actions: list[dict[str, Any]], train: Train, route: Route,
                  ctx: Context) -> list[Action]:
    """Turn normalised ``[[scenario.driver]]`` tables into :class:`Action` objects, checking
    that each names one trigger, an existing vehicle, and keys or controls it has."""
    out = []
    for i, a in enumerate(actions):
        c = ctx.child(i)
        triggers = [k for k in ("at_time", "at_position", "at_point") if a.get(k) is not None]
        if len(triggers) != 1:
            raise c.error(f"found {triggers or 'no trigger'}, expected exactly one of "
                          "at_time, at_position, at_point")
        if not (a.get("press") or a.get("release") or a["set"]):
            raise c.error("nothing to do: expected press, release or set")
        if a["vehicle"] >= train.count:
            raise c.child("vehicle").error(
                f"found {a['vehicle']}, expected a vehicle index below {train.count}")
        model = train.batches[train.batch_of[a["vehicle"]]].model
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
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise c.child("set").child(name).error(f"found {value!r}, expected a number")
            controls[name] = float(value)
        position = a.get("at_position")
        if a.get("at_point") is not None:
            if a["at_point"] not in route.points:
                raise c.child("at_point").error(
                    f"found {a['at_point']!r}, expected a point of the route: "
                    + (", ".join(route.points) or "(the route has none)"))
            position = route.points[a["at_point"]]
        out.append(Action(a.get("at_time"), position, a["vehicle"], a.get("press"),
                          a.get("release"), controls))
    return out


class DriverProgram:
    """Applies due actions to the train's vehicle models."""

    def __init__(self, actions: list[Action], train: Train) -> None:
        self.actions = actions
        self.train = train
        self.log: list[tuple[float, str]] = []

    def apply_due(self, t: float, lead_front: float) -> None:
        """Apply every action whose time has come or whose position the lead has passed."""
        for a in self.actions:
            if a.done:
                continue
            due = (a.time is not None and t >= a.time - 1e-9) or (
                a.position is not None and lead_front >= a.position)
            if not due:
                continue
            a.done = True
            tr = self.train
            batch = tr.batches[tr.batch_of[a.vehicle]]
            model = batch.model
            rows = np.array([tr.row_of[a.vehicle]])
            with plugin_call(batch.describe("on_key"), t):
                if a.release:
                    model.press(a.release, rows, False)
                if a.press:
                    model.press(a.press, rows, True)
            with plugin_call(batch.describe("set_control"), t):
                for name, value in a.controls.items():
                    model.set_control(name, rows, value)
            self.log.append((t, a.describe()))

    @property
    def pending(self) -> int:
        """How many actions have not been applied yet."""
        return sum(not a.done for a in self.actions)
