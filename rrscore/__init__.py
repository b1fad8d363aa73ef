"""rrscore: rail-vehicle physics in Python, with locomotives and cars as plugins.

The public API, in a few lines::

    import rrscore

    result = rrscore.drive("configs/scenarios/simple_loco_level.toml", out="out/level")
    print(result.summary["max_speed_mps"], result.series["speed_mps"][-1])

    scenario = rrscore.load_scenario("configs/scenarios/freight_50.toml")  # check only
    result = rrscore.Drive(scenario).run()                                   # no files

    run = rrscore.Run(scenario)         # step it yourself: the state lives in the run
    run.advance(60.0)
    saved = run.snapshot()              # ... and branch it
    run.advance()
    run.restore(saved)

    sweep = rrscore.Sweep(scenario, {"start.speed": ["0 km/h", "40 km/h"],
                                     "stop.max_time": [60, 120]})
    table = sweep.run(out="out/sweep", workers=2)    # one summary row per case

Yards (:mod:`rrscore.yard.yard`): cuts of cars on a track network with switches, run by
the free-car engine of :mod:`rrscore.yard.freecars`; ``dynamics = "events"`` runs a plain
scenario with that engine too. :func:`drive`, :func:`load_scenario` and
:func:`validate_file` are :mod:`rrscore.api`'s, the one place that decides between the
yard engine and the train engine::

    result = rrscore.drive("configs/yards/hump_20_cuts.toml", out="out/hump")
    print(result.summary["cut_reports"][0]["coupling_speed_mps"])

A :class:`Scenario` is an immutable description (it pickles, and runs the same
any number of times); a :class:`Run` owns every piece of changing state.
``result.to_pandas()`` gives a drive's tables as DataFrames; :class:`VehicleConfig` and
:class:`TrainConfig` build vehicles and trains in code and write them as TOML
(``docs/python-api.md``).

Writing a vehicle plugin: subclass :class:`VehicleModel`, declare its ``params``
(:class:`Param`), ``controls`` (:class:`Control`), ``keys``, ``fields``, ``signals`` and
continuous ``states`` (:class:`StateSpec`) by name, write ``step(t, dt, veh)`` (and
``rates``, ``on_input`` where it needs them) once, as plain loops over the record
``veh`` (``veh.q_a[i, j]``), and return the class from a ``@hookimpl def
rrs_vehicle_types()``: rrscore compiles the functions with numba where it can.
Coupler models subclass :class:`CouplerModel` (hook ``rrs_coupler_models``, one force
law ``force(d, d_dot, p, s, ds, out)``); solvers are :class:`Tableau` objects (hook
``rrs_solvers``); outputs implement the lifecycle hooks ``rrs_drive_start``,
``rrs_sample``, ``rrs_event``, ``rrs_drive_end`` and receive :class:`Event` records.
Every hook is in :mod:`rrscore.model.hookspecs`; :func:`law` and :func:`kernel` compile
a plugin's own laws.

For plugin authors: ``rrs new vehicle NAME`` writes a package to start from;
:mod:`rrscore.testing` is a pytest plugin (fixtures ``rrs_train``, ``rrs_curve``);
``rrs plugins --check`` exercises every plugin against its declarations and ``rrs
plugins -v`` says which of its functions run compiled (:mod:`rrscore.cli.plugincheck`);
``docs/plugin-api.md`` is the API reference, ``docs/architecture.md`` the map of the
code.

Calibration (:mod:`rrscore.calibration`): sensor logs, seed 002's kinematic model
estimated from them, the stop predictor, and least-squares fits of config values to
recorded drives (``rrs sensors``, ``rrs calibrate``, ``rrs predict-stop``, ``rrs fit``).
"""

from .api import drive, load_scenario, validate_file
from .engine.tableau import Tableau
from .jit import kernel, law
from .model.config import Param
from .model.couplers import CouplerModel
from .model.errors import ConfigError, PluginError, RrsError
from .model.events import Event
from .model.hookspecs import hookimpl
from .model.state import StateSpec
from .model.vehicle import Control, VehicleModel
from .run.builders import TrainConfig, TrainVehicle, VehicleConfig
from .run.drive import Drive, DriveResult
from .run.plugins import Registry, load_registry
from .run.run import Run, Snapshot
from .run.scenario import Scenario
from .run.sweep import Sweep, SweepResult

__all__ = [
    "ConfigError",
    "Control",
    "CouplerModel",
    "Drive",
    "DriveResult",
    "Event",
    "Param",
    "PluginError",
    "Registry",
    "RrsError",
    "Run",
    "Scenario",
    "Snapshot",
    "StateSpec",
    "Sweep",
    "SweepResult",
    "Tableau",
    "TrainConfig",
    "TrainVehicle",
    "VehicleConfig",
    "VehicleModel",
    "drive",
    "hookimpl",
    "kernel",
    "law",
    "load_registry",
    "load_scenario",
    "validate_file",
]
__version__ = "0.1.0"
