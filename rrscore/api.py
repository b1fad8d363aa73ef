"""The public top-level functions, and the one place that decides between the yard engine
and the train engine.

A file with a ``[yard]`` table (:mod:`rrscore.yard.yard`: cuts of cars on a track
network), and a scenario with ``dynamics = "events"`` (its train and route as a yard of
one track, :mod:`rrscore.yard.eventscenario`), run with the free-car engine
(:mod:`rrscore.yard.yardrun`); every other scenario runs with the train engine
(:class:`rrscore.run.drive.Drive`). :func:`load_drive` makes that decision for a file,
:func:`drive` for a file or a loaded scenario; the command line (``rrs drive``,
``rrs validate``) calls these. The layers below know nothing of each other's engine:
:mod:`rrscore.run` never imports :mod:`rrscore.yard`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .model.config import Context, Include, include, load_toml, validate
from .model.track import ROUTE_SCHEMA, Route
from .model.train import TRAIN_SCHEMA, Train, resolve_train
from .model.vehicle import VEHICLE_SCHEMA
from .plugintrust import Check, check_without_own_plugins, scenario_summary, yard_summary
from .run.drive import Drive, DriveResult, Progress
from .run.plugins import Registry, load_registry
from .run.scenario import Scenario
from .run.scenario import load_scenario as load_train_scenario
from .yard.eventscenario import yard_from_scenario
from .yard.network import load_network
from .yard.yard import YardScenario, is_yard_file, load_yard
from .yard.yarddrive import YardResult, drive_yard

#: What a drive runs: a scenario for the train engine or a yard for the free-car engine.
Drivable = Scenario | YardScenario


def free_car_yard(scenario: Scenario) -> YardScenario | None:
    """The yard a scenario with ``dynamics = "events"`` is driven as by the free-car
    engine (its train and route as a yard of one track,
    :mod:`rrscore.yard.eventscenario`); None for a scenario the train's own dynamics
    drives. A :class:`~rrscore.model.errors.ConfigError` names what the free-car engine
    cannot run."""
    if scenario.config["dynamics"] != "events":
        return None
    return yard_from_scenario(scenario)


def load_scenario(path: str | Path, registry: Registry | None = None,
                  plugin_dirs: list[str | Path] = (), *,
                  allow_plugin_dirs: bool = False) -> Scenario:
    """Load and check a scenario file (``[scenario]`` table), its train, vehicles and
    route (:func:`rrscore.run.scenario.load_scenario`); a scenario with ``dynamics =
    "events"`` is checked as the yard the free-car engine runs (:func:`free_car_yard`),
    so that what that engine cannot run is refused now, naming the key.

    The file's own ``plugin_dirs`` must lie inside its folder's tree, as on the command
    line: a scenario someone shared runs no code from elsewhere on your machine unless
    you say so with ``allow_plugin_dirs=True`` (``rrs --allow-plugin-dirs``). Folders
    you pass in ``plugin_dirs`` are your own choice: any folder."""
    scenario = load_train_scenario(path, registry, plugin_dirs,
                                   allow_plugin_dirs=allow_plugin_dirs)
    free_car_yard(scenario)
    return scenario


def load_drive(path: str | Path, registry: Registry | None = None,
               plugin_dirs: list[str | Path] = (),
               adjust: Callable[[Drivable], Drivable] | None = None, *,
               allow_plugin_dirs: bool = False) -> Drivable:
    """What :func:`drive` runs for a file, checked: the :class:`YardScenario` of a yard
    file (``[yard]``) or of a scenario with ``dynamics = "events"``, else the
    :class:`Scenario` the train engine drives.

    ``adjust``, if given, is called with the loaded scenario (or yard scenario) and
    returns the one to run (the command line's ``--set``, ``--max-time``): it is applied
    before the decision, so it may change ``dynamics``. ``registry`` is the train
    scenario's plugins (a yard file loads its own from its ``plugin_dirs``);
    ``allow_plugin_dirs`` as in :func:`load_scenario`."""
    if is_yard_file(path):
        yard = load_yard(path, plugin_dirs=plugin_dirs, allow_plugin_dirs=allow_plugin_dirs)
        return adjust(yard) if adjust is not None else yard
    scenario = load_train_scenario(path, registry, plugin_dirs,
                                   allow_plugin_dirs=allow_plugin_dirs)
    if adjust is not None:
        scenario = adjust(scenario)
    yard = free_car_yard(scenario)
    return scenario if yard is None else yard


def drive(scenario_or_path: Drivable | str | Path,
          out: str | Path | None = None, progress: Progress | None = None,
          wall_limit: float | None = None, *,
          allow_plugin_dirs: bool = False) -> DriveResult | YardResult:
    """Run a scenario: a :class:`Scenario`, a :class:`YardScenario`, or the path of a
    scenario or yard file.

    With ``out``, writes the outputs there (a train's: ``timeseries.csv``,
    ``summary.json``, ``speed.png``, ``scenario.resolved.toml``, ...). Returns the
    summary and the sampled series (:class:`~rrscore.run.drive.DriveResult`).
    ``progress`` is called as ``progress(fraction_done, t, speed)`` as the drive goes on;
    with ``wall_limit``, the drive stops after that many seconds of wall-clock time.
    ``allow_plugin_dirs`` (for a path) as in :func:`load_scenario`.

    A yard file (``[yard]``, :mod:`rrscore.yard.yard`), and a scenario with ``dynamics =
    "events"`` (run as a yard of one track, :mod:`rrscore.yard.eventscenario`), run with
    the free-car engine: the outputs and the result
    (:class:`~rrscore.yard.yarddrive.YardResult`) are a yard drive's.
    """
    if isinstance(scenario_or_path, YardScenario):
        target: Drivable = scenario_or_path
    elif isinstance(scenario_or_path, Scenario):
        yard = free_car_yard(scenario_or_path)
        target = scenario_or_path if yard is None else yard
    else:
        target = load_drive(scenario_or_path, allow_plugin_dirs=allow_plugin_dirs)
    if isinstance(target, YardScenario):
        return drive_yard(target, out, progress, wall_limit)
    return Drive(target).run(out, progress, wall_limit=wall_limit)


#: The kinds of config file, by their top-level table (a vehicle file's is ``[vehicle]``).
KINDS = ("scenario", "yard", "network", "train", "route", "vehicle")


def validate_file(path: str | Path, plugin_dirs: list[str | Path] = (), *,
                  allow_plugin_dirs: bool = False) -> str:
    """Check any config file (its kind is its top-level table, one of :data:`KINDS`);
    return a one-line summary. A scenario is checked as :func:`load_scenario` checks it
    (with ``dynamics = "events"``, also as the free-car engine's yard).

    A scenario's or yard's own ``plugin_dirs`` are not imported unless
    ``allow_plugin_dirs`` (:mod:`rrscore.plugintrust`): what needs their plugins is left
    unchecked, and the summary then ends "; not checked: vehicle type 'x', ..."."""
    check = check_file(path, plugin_dirs, allow_plugin_dirs=allow_plugin_dirs)
    return check.text()


def check_file(path: str | Path, plugin_dirs: list[str | Path] = (), *,
               allow_plugin_dirs: bool = False) -> Check:
    """:func:`validate_file`'s check, with what was left unchecked apart
    (:class:`~rrscore.plugintrust.Check`; ``rrs validate`` prints its line)."""
    p = Path(path)
    data = load_toml(p, "config")
    full = str(p.resolve())
    ctx = Context(str(path), "", p.resolve().parent)
    kind = next((k for k in KINDS if k in data), None)
    if kind is None:
        raise ctx.error(
            "found top-level keys " + (", ".join(data) or "(none)")
            + f", expected one of the tables [{'], ['.join(KINDS)}]")
    if kind in ("scenario", "yard") and not allow_plugin_dirs:
        partial = check_without_own_plugins(p, kind, plugin_dirs)
        if partial is not None:
            return partial
    if kind == "scenario":
        return Check(scenario_summary(load_scenario(p, plugin_dirs=plugin_dirs,
                                                    allow_plugin_dirs=allow_plugin_dirs)))
    if kind == "yard":
        return Check(yard_summary(load_yard(p, plugin_dirs=plugin_dirs,
                                            allow_plugin_dirs=allow_plugin_dirs)))
    if kind == "network":
        net = load_network(p)
        return Check(f"network {net.name!r}: {len(net.tracks)} tracks, "
                     f"{len(net.switches)} switches, "
                     f"{sum(t.length for t in net.tracks):.0f} m of track")
    registry = load_registry(plugin_dirs)
    if kind == "route":
        route = Route.from_config(include(full, Include(ROUTE_SCHEMA, what="route",
                                                          file_key="route"), ctx))
        return Check(f"route {route.name!r}: {len(route.starts)} elements, "
                     f"{route.length:.0f} m")
    if kind == "train":
        body = include(full, Include(TRAIN_SCHEMA, what="train", file_key="train"), ctx)
        resolve_train(body, registry)
        train = Train(body, registry)
        return Check(f"train {train.name!r}: {train.count} vehicles, "
                     f"{train.total_mass / 1000:.0f} t")
    # a vehicle file: check it the way a train would use it
    vehicle = include(full, Include(VEHICLE_SCHEMA, what="vehicle"), ctx)
    body = {"name": "check", "coupling": validate({}, TRAIN_SCHEMA["coupling"].schema, ctx),
            "vehicles": [{"config": vehicle, "count": 1, "payload_fraction": 1.0,
                          "orientation": "forward", "coupling": {}, "coupled": True,
                          "brake_pipe_connected": True, "open_rear_cock": False}],
            "_source": (str(p), "", str(p.resolve().parent))}
    resolve_train(body, registry)
    train = Train(body, registry)
    name = vehicle["vehicle"]["name"] or train.batches[0].type_name
    return Check(f"vehicle {name!r} ({train.batches[0].type_name})")


__all__ = ["KINDS", "check_file", "drive", "free_car_yard", "load_drive", "load_scenario",
           "validate_file"]
