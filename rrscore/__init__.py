"""rrscore: rail-vehicle physics in Python, with locomotives and cars as plugins.

The public API, in a few lines::

    import rrscore

    result = rrscore.drive("configs/scenarios/simple_loco_level.toml", out="out/level")
    print(result.summary["max_speed_mps"], result.series["speed_mps"][-1])

    scenario = rrscore.load_scenario("configs/scenarios/freight_50.toml")  # check only
    result = rrscore.Drive(scenario).run()                                   # no files

Writing a vehicle plugin: subclass :class:`VehicleModel`, declare ``params``
with :class:`Param`, fill ``Q_a``/``Q_r`` in ``step``, and return the class from
a ``@hookimpl def rrs_vehicle_types()``. Coupler models subclass
:class:`CouplerModel` (hook ``rrs_coupler_models``); solvers subclass
:class:`Solver` (hook ``rrs_solvers``). Every hook is in :mod:`rrscore.hookspecs`.
"""

from .config import Param
from .couplers import CouplerModel
from .errors import ConfigError, PluginError, RrsError
from .hookspecs import hookimpl
from .pluginmanager import Registry, load_registry
from .scenario import Scenario, load_scenario, validate_file
from .simulation import Drive, DriveResult, drive
from .solvers import Solver
from .vehicle import VehicleModel

__all__ = [
    "ConfigError",
    "CouplerModel",
    "Drive",
    "DriveResult",
    "Param",
    "PluginError",
    "Registry",
    "RrsError",
    "Scenario",
    "Solver",
    "VehicleModel",
    "drive",
    "hookimpl",
    "load_registry",
    "load_scenario",
    "validate_file",
]
__version__ = "0.1.0"
