"""Yard scenarios: cuts of cars on a track network, moved by locomotives, winches and
gravity, switches set for each cut's destination (the ``[yard]`` table of a scenario
file; ``rrs drive`` runs it with :mod:`rrscore.yard.yardrun`).

A **cut** is a train table (the same vehicle configs and coupling settings as a
train's) standing on one track: where its front is, which way it faces, its speed,
which of its vehicles have their hand brake on or a wheel chock under them, and the
track it should end on (``destination``: the yard sets the switches on its way, one
after the other, as each comes free). A **move** is a locomotive or winch in a cut that
drives towards a speed with a force up to its limit, from a time until a point or a
time, then brakes and holds. **Actions** throw switches or work hand brakes at set
times. Retarders on the network slow cuts down to an exit speed; an exit speed left out
is chosen per cut by the energy-height rule, so that the cut reaches the cars standing
on its destination track at ``coupling_target``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..model.config import (
    Context,
    Include,
    Param,
    Section,
    TableList,
    freeze,
    load_toml,
    load_top_table,
    resolve_plugin_dirs,
    set_path,
    strip_private,
    thaw,
    validate,
)
from ..model.errors import plugin_call
from ..model.train import TRAIN_SCHEMA, Train, resolve_train
from ..model.units import G
from ..run.plugins import Registry, load_registry
from ..run.scenario import MAX_ROWS, MAX_STEPS, MAX_TIME, check_counts
from .network import NETWORK_SCHEMA, Network
from .yardrun import YardRun

#: Fastest start speed of a cut, m/s (the free-car engine also runs trains' scenarios).
MAX_CUT_SPEED = 100.0

CUT_SCHEMA = {
    "name": Param(kind=str, doc="cut name (unique in the yard)"),
    "train": Include(TRAIN_SCHEMA, "the cut's vehicles, front first: a path to a train "
                     "file or an inline table", "train", file_key="train"),
    "track": Param(kind=str, doc="track the cut's front stands on"),
    "front": Param("m", doc="offset of the cut's front from the track's start", min=0.0),
    "facing": Param(kind=str, default="end", choices=("end", "start"),
                    doc="the track end the cut's front faces"),
    "speed": Param("m/s", 0.0, "speed at the start, + towards the cut's front",
                   min=-MAX_CUT_SPEED, max=MAX_CUT_SPEED),
    "slack": Param(kind=str, default="bunched", choices=("bunched", "neutral", "stretched"),
                   doc="the couplers' slack inside the cut at the start: 'bunched' (the "
                       "cars pushed together, as a cut pushed to the hump stands), "
                       "'neutral' (in the middle) or 'stretched'"),
    "destination": Param(kind=str, default=None,
                         doc="track to route the cut to: the yard throws each switch on "
                             "its way as soon as no car stands on it"),
    "hand_brakes": Param(kind=list, item=int, default=[],
                         doc="vehicles (0 = the cut's front one) with the hand brake on"),
    "chocks": Param(kind=list, item=int, default=[],
                    doc="vehicles with a wheel chock under one wheelset"),
}

MOVE_SCHEMA = {
    "cut": Param(kind=str, doc="cut the locomotive or winch acts on"),
    "vehicle": Param(kind=int, default=0, min=0, doc="vehicle of the cut it pulls or "
                     "pushes (a locomotive: itself)"),
    "kind": Param(kind=str, default="locomotive", choices=("locomotive", "winch"),
                  doc="what moves the cut (for the event log)"),
    "speed": Param("m/s", doc="speed it drives towards, + towards the cut's front",
                   min=-10.0, max=10.0),
    "max_force": Param("N", doc="largest force it gives", min=0.0, exclusive_min=True),
    "brake_force": Param("N", None, "largest braking force, and the force that holds the "
                         "cut when it is done (default: max_force)", min=0.0),
    "start": Param("s", 0.0, "when it starts", min=0.0),
    "until_point": Param(kind=str, default=None, doc="it stops when its vehicle's centre "
                         "passes this named point of the network"),
    "until_time": Param("s", None, "it stops at this time", min=0.0),
    "until_coupled": Param(kind=bool, default=False, doc="it stops when its cut couples to "
                           "another cut"),
    "response_time": Param("s", 2.0, "time constant of its speed control", min=0.0,
                           exclusive_min=True),
}

ACTION_SCHEMA = {
    "at": Param("s", doc="simulated time of the action", min=0.0),
    "switch": Param(kind=str, default=None, doc="switch to throw (refused, and logged, "
                    "while a car stands on its panel)"),
    "position": Param(kind=str, default=None, choices=("normal", "reverse"),
                      doc="position to throw the switch to"),
    "cut": Param(kind=str, default=None, doc="cut whose hand brakes to work"),
    "hand_brakes": Param(kind=bool, default=None, doc="true: on, false: off (every vehicle "
                         "of the cut that has one)"),
}

YARD_SCHEMA = {
    "name": Param(kind=str, default="yard", doc="scenario name"),
    "network": Include(NETWORK_SCHEMA, "the track network: a path to a network file or an "
                       "inline table", "network", file_key="network"),
    "plugin_dirs": Param(kind=list, item=str, default=[],
                         doc="plugin directories, relative to this file"),
    "cuts": TableList(CUT_SCHEMA, "cuts of cars and locomotives", min_items=1),
    "moves": TableList(MOVE_SCHEMA, "locomotives and winches moving cuts"),
    "actions": TableList(ACTION_SCHEMA, "switch throws and hand brakes at set times"),
    "step": Param("s", 0.1, "forces (grade, resistance, brakes, retarders, locomotives) are "
                  "renewed every step and held between; events inside a step are exact",
                  min=1e-3, max=1.0),
    "restitution": Param(kind=float, default=0.0, min=0.0, max=1.0,
                         doc="share of the closing speed cars part with after an impact "
                             "that does not couple (0: they stay together)"),
    "run_through": Param(kind=str, default="stop", choices=("stop", "force"),
                         doc="a trailing move through a switch set against it: 'stop' ends "
                             "the drive there, 'force' forces the switch over (damaged) "
                             "and runs on (but ends the drive if a car stands across "
                             "the points)"),
    "side_collision": Param(kind=str, default="stop", choices=("stop", "continue"),
                            doc="cars on different lines coming too close (at a fouling "
                                "point, on close tracks): 'stop' ends the drive, "
                                "'continue' only logs it"),
    "clearance_width": Param("m", 3.2, "width of the cars' clearance envelope: cars on "
                             "different lines closer than this collide, a car closer than "
                             "half of it to another track's centre line fouls it",
                             min=0.0, exclusive_min=True, max=10.0),
    "coupling_target": Param("m/s", 1.2, "speed at which retarders without an exit speed "
                             "aim cuts at the cars on their destination track", min=0.0,
                             max=5.0),
    "gravity": Param("m/s^2", G, "acceleration due to gravity", min=9.7, max=9.9),
    "stop": Section({
        "max_time": Param("s", 3600.0, "stop after this simulated time", min=0.0,
                          exclusive_min=True, max=MAX_TIME),
        "standstill": Param(kind=bool, default=True, doc="stop when every move is done and "
                            "every car stands still"),
        "standstill_speed": Param("m/s", 0.01, "speed below which a car counts as standing",
                                  min=0.0),
    }),
    "output": Section({
        "sample_interval": Param("s", 1.0, "time between rows of positions.csv", min=0.0,
                                 exclusive_min=True),
        "plot": Param(kind=bool, default=True, doc="write plan.png, the network and the "
                      "cars where the drive ended"),
    }),
}
"""The ``[yard]`` table of a yard scenario file."""


@dataclass(frozen=True)
class Cars:
    """Every car of a yard in one set of arrays, cut after cut, each cut front first."""

    cut: np.ndarray  # cut index of each car
    index: np.ndarray  # vehicle index within its cut (0 = front)
    length: np.ndarray  # over the couplers pushed together (the cut's slack closed), m
    mass: np.ndarray  # effective mass (rotating wheelsets included), kg
    weight: np.ndarray  # N
    c: tuple[np.ndarray, np.ndarray, np.ndarray]  # running resistance c0 + c1 v + c2 v^2
    start: tuple[np.ndarray, np.ndarray]  # starting resistance force, speed it fades by
    hand_brake_force: np.ndarray  # N, 0 = none
    chock_force: np.ndarray  # N a chock holds (it slides at that), 0 = no chock possible
    slack: np.ndarray  # the cut's coupler slack, m
    coupling_speed: np.ndarray  # the cut's coupling speed, m/s
    inner_slack: dict[int, float] = field(default_factory=dict)  # car -> slack to the next
    inner_speed: dict[int, float] = field(default_factory=dict)
    inner_coupled: dict[int, bool] = field(default_factory=dict)


@dataclass(frozen=True)
class YardScenario:
    """A checked yard scenario: an immutable description (a run keeps its own state)."""

    config: Mapping[str, Any]
    file: str | None
    network: Network
    cars: Cars
    cut_names: tuple[str, ...]
    plugin_dirs: tuple[str, ...] = ()
    #: The plugins (those the drive's lifecycle hooks call among them); None after
    #: unpickling (a drive loads them again from ``plugin_dirs``).
    registry: Registry | None = field(default=None, compare=False, repr=False)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "registry": None}  # plugin modules do not travel

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def resolved(self) -> dict[str, Any]:
        """The whole scenario, defaults filled in, SI units."""
        return {"yard": strip_private(thaw(self.config))}

    def with_values(self, values: Mapping[str, Any]) -> YardScenario:
        """A new scenario with some keys of the ``[yard]`` table changed (dotted paths,
        values with units as in a file), checked like a file; this one is left as it is."""
        table = strip_private(thaw(self.config))
        for path, value in values.items():
            set_path(table, path, value)
        ctx = Context(self.file or "<yard>", "yard", Path.cwd())
        return yard_from_table(table, ctx, self.plugin_dirs)


def _cars(cuts: list[dict], trains: list[Train], registry: Registry) -> Cars:
    parts: dict[str, list] = {k: [] for k in ("cut", "index", "length", "mass", "weight",
                                             "c0", "c1", "c2", "s0", "ss", "hb", "chock",
                                             "slack", "cs")}
    inner_slack, inner_speed, inner_coupled = {}, {}, {}
    base = 0
    for k, (cut, train) in enumerate(zip(cuts, trains, strict=True)):
        n = train.count
        equiv = np.bincount(train.axle_vehicle, train.axle_mass_equiv, n)
        parts["cut"].append(np.full(n, k))
        parts["index"].append(np.arange(n))
        parts["mass"].append(train.mass + equiv)
        parts["weight"].append(train.weight)
        parts["c0"].append(train.c0)
        parts["c1"].append(train.c1)
        parts["c2"].append(train.c2)
        parts["s0"].append(train.start0)
        parts["ss"].append(train.start_speed)
        hb, chock = np.zeros(n), np.zeros(n)
        for i in range(n):
            params = cut["train"]["vehicles"][train.entry_of[i]]["config"]["params"]
            hb[i] = params.get("hand_brake_force", 0.0)
            mu = params.get("chock_friction", 0.0)
            chock[i] = mu * train.weight[i] / train.num_axis[i]  # one axle's load
        parts["hb"].append(hb)
        parts["chock"].append(chock)
        setting = cut["train"]["coupling"]
        origin = registry.origin.get(("coupler_models", setting["model"]), "")
        with plugin_call(f"coupler model {setting['model']!r} ({origin}) in free_range(), "
                         f"for cut {cut['name']!r}"):
            model = registry.coupler_models[setting["model"]]([setting["params"]])
            lo, hi = model.free_range()
        # cars touch where the continuous core's couplers close their slack: at the
        # nominal spacing plus lo (lo <= 0: the slack on the compression side)
        parts["length"].append(train.length + float(lo[0]))
        parts["slack"].append(np.full(n, float(hi[0] - lo[0])))
        parts["cs"].append(np.full(n, setting["coupling_speed"]))
        cp = train.couplings
        lo, hi = cp.free_range()
        for j in range(n - 1):  # vehicle j + 1 behind vehicle j
            inner_slack[base + j] = float(hi[j] - lo[j])
            inner_speed[base + j] = float(cp.coupling_speed[j])
            inner_coupled[base + j] = bool(cp.coupled[j])
        base += n
    cat = {k: np.concatenate(v) for k, v in parts.items()}
    return Cars(cat["cut"], cat["index"], cat["length"], cat["mass"], cat["weight"],
                (cat["c0"], cat["c1"], cat["c2"]), (cat["s0"], cat["ss"]), cat["hb"],
                cat["chock"], cat["slack"], cat["cs"], inner_slack, inner_speed, inner_coupled)


def yard_from_table(data: dict[str, Any], ctx: Context,
                    plugin_dirs: list[str | Path] = (), *,
                    allow_plugin_dirs: bool = True) -> YardScenario:
    """Check a ``[yard]`` table: its network, cuts, moves and actions. Its ``plugin_dirs``
    may name any folder unless ``allow_plugin_dirs`` is false (then only folders inside
    the tree of the table's file's folder, as :func:`load_yard` asks by default)."""
    cfg = validate(data, YARD_SCHEMA, ctx)
    # limits before the run, as for a train's drive: rows of positions.csv and steps
    check_counts(cfg, [("output", "sample_interval", "rows of positions.csv", MAX_ROWS),
                       (None, "step", "steps", MAX_STEPS)], ctx)
    all_dirs = resolve_plugin_dirs(cfg, ctx, plugin_dirs, allow_outside=allow_plugin_dirs)
    registry = load_registry(all_dirs)
    network = Network(cfg["network"])
    names: dict[str, int] = {}
    trains = []
    for k, cut in enumerate(cfg["cuts"]):
        c = ctx.child("cuts").child(k)
        if cut["name"] in names:
            raise c.child("name").error(f"found {cut['name']!r} again, expected a name no "
                                        "other cut has")
        names[cut["name"]] = k
        for key in ("track", "destination"):
            if cut[key] is not None and cut[key] not in network.track_index:
                raise c.child(key).error(f"found {cut[key]!r}, expected a track of the "
                                         f"network ({', '.join(network.track_index)})")
        track = network.tracks[network.track_index[cut["track"]]]
        if cut["front"] > track.length:
            raise c.child("front").error(f"found {cut['front']:g} m, expected at most the "
                                         f"length of track {track.name!r} ({track.length:g} m)")
        resolve_train(cut["train"], registry)
        train = Train(cut["train"], registry, cfg["gravity"])
        for key in ("hand_brakes", "chocks"):
            for i, v in enumerate(cut[key]):
                if not 0 <= v < train.count:
                    raise c.child(key).child(i).error(
                        f"found {v}, expected a vehicle of the cut, 0 to {train.count - 1}")
                param = "hand_brake_force" if key == "hand_brakes" else "chock_friction"
                params = cut["train"]["vehicles"][train.entry_of[v]]["config"]["params"]
                if param not in params:
                    raise c.child(key).child(i).error(
                        f"found vehicle {v}, whose type has no {param!r}; expected a "
                        f"vehicle with {'a hand brake' if key == 'hand_brakes' else 'chocks'}")
        trains.append(train)
    for k, move in enumerate(cfg["moves"]):
        c = ctx.child("moves").child(k)
        if move["cut"] not in names:
            raise c.child("cut").error(f"found {move['cut']!r}, expected a cut of the yard "
                                       f"({', '.join(names)})")
        count = trains[names[move["cut"]]].count
        if move["vehicle"] >= count:
            raise c.child("vehicle").error(f"found {move['vehicle']}, expected a vehicle of "
                                           f"the cut, 0 to {count - 1}")
        if move["until_point"] is not None and move["until_point"] not in network.points:
            raise c.child("until_point").error(
                f"found {move['until_point']!r}, expected a named point of the network "
                f"({', '.join(network.points) or 'none'})")
    for k, action in enumerate(cfg["actions"]):
        c = ctx.child("actions").child(k)
        if action["switch"] is not None:
            if action["switch"] not in network.switch_index:
                raise c.child("switch").error(
                    f"found {action['switch']!r}, expected a switch of the network "
                    f"({', '.join(network.switch_index) or 'none'})")
            if action["position"] is None:
                raise c.child("position").error("missing, expected 'normal' or 'reverse' "
                                                "for the switch")
        elif action["cut"] is not None:
            if action["cut"] not in names:
                raise c.child("cut").error(f"found {action['cut']!r}, expected a cut of the "
                                           "yard")
            if action["hand_brakes"] is None:
                raise c.child("hand_brakes").error("missing, expected true or false")
        else:
            raise c.error("found neither switch nor cut, expected an action on one of them")
    cars = _cars(cfg["cuts"], trains, registry)
    scenario = YardScenario(freeze(cfg), ctx.file, network, cars, tuple(names), all_dirs,
                            registry)
    try:  # the run checks where the cuts stand and their routes
        YardRun(scenario)
    except ValueError as exc:
        raise ctx.child("cuts").error(f"{exc}; expected cuts that fit on the tracks, "
                                      "apart from each other, with a way to their "
                                      "destination") from None
    return scenario


def load_yard(path: str | Path, plugin_dirs: list[str | Path] = (), *,
              allow_plugin_dirs: bool = False) -> YardScenario:
    """Load and check a yard scenario file (a ``[yard]`` table). Its ``plugin_dirs`` must
    be folders inside its own folder's tree unless ``allow_plugin_dirs`` (as
    :func:`rrscore.run.scenario.load_scenario`)."""
    table, ctx = load_top_table(path, "yard")
    return yard_from_table(table, ctx, plugin_dirs, allow_plugin_dirs=allow_plugin_dirs)


def is_yard_file(path: str | Path) -> bool:
    """Whether a scenario file holds a ``[yard]`` table (read it with :func:`load_yard`)."""
    try:
        return "yard" in load_toml(path, "scenario")
    except Exception:  # the regular loader reports what is wrong with the file
        return False


__all__ = ["YARD_SCHEMA", "YardScenario", "load_yard", "yard_from_table", "is_yard_file"]
