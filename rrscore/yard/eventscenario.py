"""A train scenario run by the free-car engine: ``dynamics = "events"``.

Seed 001's event-driven engine (:mod:`rrscore.yard.freecars`) runs cars that roll free: no
traction, no driver, no brakes applied. A scenario of that kind (cars running into
standing ones, a cut rolling out on a grade) can choose it instead of the continuous
core with ``dynamics = "events"``. It is then run as a yard (:mod:`rrscore.yard.yard`) with
one track: the scenario's route, its named points, and a buffer stop at each end. The
train is split into cuts where its vehicles stand uncoupled (a cut is named after the
vehicles it holds, ``vehicles 0-2``), each laid where the continuous core lays it (the
start position, slack and gaps) and started at its speed.

What the engine does not model is refused, naming the key: a driver program, the
built-in driver, wind, a stop other than by time or standstill, gaps inside a coupled
cut, different speeds inside one, a vertical profile given by points, and a train that
does not fit between the route's ends.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..model.config import Context, strip_private, thaw
from ..run.scenario import SCENARIO_SCHEMA, Scenario
from .network import MAX_TRACK
from .yard import MAX_CUT_SPEED, YardScenario, yard_from_table

#: The scenario's stop keys the yard engine has no counterpart for, with their "off"
#: values (the schema's defaults).
_UNSUPPORTED_STOPS = {k: SCENARIO_SCHEMA["stop"].schema[k].default
                      for k in ("max_distance", "at_position", "at_point")}


def yard_from_scenario(scenario: Scenario) -> YardScenario:
    """The yard that runs ``scenario`` (a scenario with ``dynamics = "events"``) with the
    free-car engine; a :class:`~rrscore.model.errors.ConfigError` names what it cannot run."""
    cfg = thaw(scenario.config)
    base = Path(scenario.file).resolve().parent if scenario.file else Path.cwd()
    ctx = Context(scenario.file, "scenario", base)
    _refuse_what_it_cannot_run(cfg, ctx)
    train = scenario.build_train()
    route = cfg["route"]
    length = float(sum(e["length"] for e in route["elements"]))
    if length > MAX_TRACK:
        raise ctx.child("route").error(
            f"found a route of {length:g} m, expected at most {MAX_TRACK:g} m for the "
            "free-car engine (dynamics = 'events')")

    # where the continuous core lays the vehicles (its initial state), centre by centre
    start = cfg["start"]
    gaps = np.zeros(train.count - 1) if start["gaps"] is None else np.array(start["gaps"])
    spacing = train.couplings.start_spacing(start["slack"], gaps)
    centre = (scenario.start_position - 0.5 * train.length[0]
              - np.concatenate([[0.0], np.cumsum(spacing)]))
    speeds = (np.full(train.count, start["speed"]) if start["speeds"] is None
              else np.array(start["speeds"], dtype=float))
    coupled = train.couplings.coupled
    track = route["name"] or "route"
    cuts = []
    first = 0
    for last in [*np.flatnonzero(~coupled), train.count - 1]:
        members = range(first, int(last) + 1)
        for j in members[:-1]:  # joints inside the cut: as laid, with no extra gap
            if gaps[j] != 0.0:
                raise ctx.child("start").child("gaps").child(j).error(
                    f"found {gaps[j]:g} m at a coupled joint, expected 0 (a coupled pair "
                    "stands within its slack in the free-car engine)")
        if np.ptp(speeds[first:last + 1]) > 0.0:
            raise ctx.child("start").child("speeds").error(
                f"found different speeds for vehicles {first} to {last}, which are coupled; "
                "expected one speed per coupled cut in the free-car engine")
        if abs(speeds[first]) > MAX_CUT_SPEED:
            raise ctx.child("start").child("speed").error(
                f"found {speeds[first]:g} m/s, expected at most {MAX_CUT_SPEED:g} m/s "
                "either way in the free-car engine")
        vehicles = []
        for i in members:
            entry = cfg["train"]["vehicles"][int(train.entry_of[i])]
            vehicles.append({**entry, "count": 1, "coupled": True})
        name = f"vehicle {first}" if first == last else f"vehicles {first}-{last}"
        cuts.append({"name": name, "track": track,
                     "front": float(centre[first] + 0.5 * train.length[first]),
                     "speed": float(speeds[first]), "slack": start["slack"],
                     "train": {"name": name, "coupling": cfg["train"]["coupling"],
                               "vehicles": vehicles}})
        first = int(last) + 1
    if centre[-1] - 0.5 * train.length[-1] < 0.0 or scenario.start_position > length:
        raise ctx.child("start").child("position").error(
            f"found the train from {centre[-1] - 0.5 * train.length[-1]:.2f} m to "
            f"{scenario.start_position:.2f} m, expected it between the route's ends "
            f"(0 to {length:g} m), where the free-car engine puts buffer stops")
    points = [{"name": p["name"], "track": track, "offset": p["position"]}
              for p in route["points"] if 0.0 <= p["position"] <= length]
    table = {
        "name": cfg["name"], "plugin_dirs": cfg["plugin_dirs"], "cuts": cuts,
        "network": {"name": track, "points": points,
                    "tracks": [{"name": track, "length": length, "start": [0.0, 0.0],
                                "heading": 0.0, "elements": route["elements"]}]},
        "gravity": cfg["environment"]["gravity"],
        "stop": {k: cfg["stop"][k] for k in ("max_time", "standstill", "standstill_speed")},
        "output": {"sample_interval": cfg["output"]["sample_interval"],
                   "plot": cfg["output"]["plots"]},
    }
    return yard_from_table(strip_private(table), ctx, scenario.plugin_dirs)


def _refuse_what_it_cannot_run(cfg: dict, ctx: Context) -> None:
    """ConfigError for the first key the free-car engine has no counterpart for."""
    why = "; the free-car engine (dynamics = 'events') runs cars rolling free"
    if cfg["driver"]:
        raise ctx.child("driver").error(f"found {len(cfg['driver'])} driver actions, "
                                        f"expected none{why}")
    if cfg["autodriver"]["mode"] != "off":
        raise ctx.child("autodriver").child("mode").error(
            f"found {cfg['autodriver']['mode']!r}, expected 'off'{why}")
    if cfg["trace"]["file"] is not None:
        raise ctx.child("trace").child("file").error(
            f"found {cfg['trace']['file']!r}, expected none{why}")
    if cfg["environment"]["wind"] != 0.0:
        raise ctx.child("environment").child("wind").error(
            f"found {cfg['environment']['wind']:g} m/s, expected 0{why}, without air drag "
            "relative to the wind")
    for key, off in _UNSUPPORTED_STOPS.items():
        if cfg["stop"][key] != off:
            raise ctx.child("stop").child(key).error(
                f"found {cfg['stop'][key]!r}, expected it left out: the free-car engine "
                "stops at stop.max_time or, with stop.standstill, when all stand")
    if cfg["output"]["format"] != "csv":
        raise ctx.child("output").child("format").error(
            f"found {cfg['output']['format']!r}, expected 'csv'{why}, and writes its tables "
            "as CSV only")
    profile = cfg["route"].get("profile")
    if profile and profile.get("points"):
        raise ctx.child("route").child("profile").error(
            "found a vertical profile by points, expected the grades on the route's "
            "elements for the free-car engine (dynamics = 'events')")


__all__ = ["yard_from_scenario"]
