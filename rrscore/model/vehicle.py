"""The vehicle: what a plugin author declares, and the config every vehicle shares.

A vehicle has a body (position ``x``, velocity ``v``) and ``num_axis`` wheelsets. Its
plugin fills two tables of generalized forces, as in RRS, one row per vehicle:

* ``q_a`` (active): ``q_a[i, 0]`` a force on the body, ``q_a[i, j]`` the torque on axle
  ``j`` from the drive (N, N*m; vehicle frame, + is forward);
* ``q_r`` (resistive, magnitudes >= 0): ``q_r[i, 0]`` an extra body resistance,
  ``q_r[i, j]`` the brake torque on axle ``j``. They always oppose motion and never
  reverse it: a braked vehicle stands still.

A plugin is a :class:`VehicleModel` subclass that declares its values by name and
gives its behaviour as plain functions, written once: ``step`` (the control step),
``rates`` (the derivatives of its states) and, where keys or controls do more than set
a value, ``on_input``. rrscore lays the declared values out as records
(:mod:`rrscore.model.records`), one per vehicle type in a train, and hands each function
the record as a named tuple of arrays, one entry per vehicle: ``veh.F_max[i]``. It
compiles the functions with numba where it can, and runs them in Python otherwise.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from .brake import BRAKE_SCHEMA
from .config import FreeTable, Param, Section
from .state import StateSpec

RESISTANCE_SCHEMA = {
    "formula": Param(
        kind=str,
        default="freight_4axle_roller",
        doc="running-resistance formula (see rrscore.model.formulas.FORMULAS)",
    ),
    "A": Param("N", None, "Davis A term (formula 'davis')"),
    "B": Param("N*s/m", None, "Davis B term (formula 'davis')"),
    "C": Param("N*s^2/m^2", None, "Davis C term (formula 'davis')"),
    "a": Param(kind=float, default=None, doc="constant term, N/kN (formula 'specific')"),
    "b": Param(kind=float, default=None, doc="term in V km/h, N/kN (formula 'specific')"),
    "c": Param(kind=float, default=None, doc="term in V^2, N/kN (formula 'specific')"),
    "curve": Param(
        kind=str, default="russian", choices=("russian", "area"),
        doc="curve resistance: 'russian' 700/R N/kN, or 'area' 0.8 lbf per short ton per "
            "degree of curvature (100 ft chord; every curve of the route must have R >= "
            "15.24 m); either is averaged over the vehicle's length",
    ),
    "air_cd_a": Param(
        "m^2", None,
        "drag area Cd*A for an explicit, signed air force -0.5*rho*CdA*(v - wind)*|v - wind| "
        "added to the running resistance (wind and rho from scenario.environment); none = no "
        "such term. The Russian and Davis formulas already contain still-air drag in their "
        "v^2 term, so use it with a formula without one (e.g. Davis with C = 0) or for wind "
        "studies",
        min=0.0,
    ),
    "tunnel_factor": Param(
        kind=float, default=1.0, min=1.0,
        doc="multiplier on the aerodynamic terms (c2*v^2 and the air_cd_a force) in tunnels, "
            "applied as 1 + (factor - 1) * (fraction of the vehicle's length in tunnel "
            "elements); see rrscore.physics.resistance.tunnel_drag_factor for an estimate",
    ),
    "starting": Param(kind=bool, default=True, doc="add starting resistance at low speed"),
    "starting_specific": Param(
        "1", None, "starting resistance; default 28/(q0 + 7) N/kN (roller bearings)"
    ),
    "starting_speed": Param(
        "m/s", 10 / 3.6, "speed by which starting resistance has blended out", min=0.0,
        exclusive_min=True,
    ),
}

ADHESION_SCHEMA = {
    "formula": Param(kind=str, default="curtius_kniffler", doc="adhesion coefficient psi(V)"),
    "psi": Param(kind=float, default=None, doc="constant psi (formula 'constant')", min=0.0),
    "speeds": Param(kind=list, item=float, default=None, doc="table speeds, m/s (formula 'table')"),
    "values": Param(kind=list, item=float, default=None, doc="table psi values (formula 'table')"),
    "rail_condition": Param(kind=str, default="dry", doc="rail condition factor name"),
    "creep_slip": Param(
        "m/s", 0.1, "slip velocity at which the creep force peaks", min=0.0, exclusive_min=True
    ),
    "kinetic_ratio": Param(
        kind=float, default=0.7, doc="creep force at gross slip / peak", min=0.0, max=1.0
    ),
}

VEHICLE_SCHEMA = {
    "vehicle": Section(
        {
            "type": Param(kind=str, doc="registered vehicle type (see `rrs plugins`)"),
            "name": Param(kind=str, default="", doc="display name"),
            "empty_mass": Param("kg", doc="tare mass", min=0.0, exclusive_min=True, max=1e6),
            "payload_mass": Param("kg", 0.0, "payload when fully loaded", min=0.0, max=1e6),
            "length": Param("m", doc="length over couplers", min=0.0, exclusive_min=True,
                            max=100.0),
            "num_axis": Param(kind=int, doc="number of wheelsets", min=1, max=32),
            "wheel_diameter": Param("m", 1.05, "wheel diameter", min=0.0, exclusive_min=True,
                                    max=3.0),
            "wheelset_inertia": Param("kg*m^2", 100.0, "moment of inertia of one wheelset (a "
                                      "slipping axle's spin is integrated, so it cannot be 0)",
                                      min=0.0, exclusive_min=True, max=1e4),
            "resistance": Section(RESISTANCE_SCHEMA, "running and starting resistance"),
            "adhesion": Section(ADHESION_SCHEMA, "wheel-rail adhesion"),
            "brake": Section(BRAKE_SCHEMA, "air brake equipment (see rrscore.airbrake)"),
        },
        required=True,
    ),
    "params": FreeTable("parameters of the vehicle type, declared by its plugin"),
}

#: The values rrscore keeps in every vehicle record, before the plugin's own: the
#: position and velocity (vehicle frame: + is the vehicle's own forward), mass (empty
#: mass plus the payload carried), the acceleration due to gravity (the scenario's), the
#: wheel radius and one wheelset's moment of inertia, one entry per vehicle.
FRAMEWORK_ROWS = ("x", "v", "mass", "gravity", "wheel_radius", "wheelset_inertia")


@dataclass(frozen=True)
class Control:
    """A control the driver program, the cab and the built-in driver set (``set =
    {name = value}``): a value per vehicle, held until changed.

    :param doc: what it does, for ``rrs plugins -v`` and the cab.
    :param low, high: the values it takes (a driver program outside them is a config
        error); unbounded by default.
    :param initial: its value at the start of a drive.
    """

    doc: str = ""
    low: float = float("-inf")
    high: float = float("inf")
    initial: float = 0.0


class VehicleModel:
    """Base class of vehicle plugins: declarations and functions, no instance state.

    Declarations (class attributes), each name unique across them:

    * ``type_name``: the name vehicle configs use in ``vehicle.type``;
      ``description``: one line for ``rrs plugins``.
    * ``params``: ``{name: Param}``, the ``[params]`` table of its configs, in SI units. A
      list of numbers (``Param("m/s", [], kind=list)``) is a table: ``veh.NAME[i, k]``, a
      row per vehicle, NaN after the end of a list shorter than the longest.
    * ``controls``: ``{name: Control}`` (or a doc string: unbounded, initially 0), set by
      the driver program, the cab and the built-in driver. The built-in driver sets
      those of these names a type declares: ``traction_level``, ``brake_level`` and,
      where it works the train's brakes, ``dynamic_brake_level``, ``brake_valve``,
      ``independent_brake`` and ``bail_off`` ([driving.md](driving.md)).
    * ``keys``: ``{name: doc}``; a key's value is 1 while it is held, else 0.
      ``key_bindings``: ``{key: character}`` for ``rrs cab``. ``notch_keys``: the keys
      each press of which moves a control one notch or position (``on_input`` acts on
      the press): a cab stroke presses and releases them at once, where other keys latch.
    * ``fields``: ``{name: doc}``, values of the model's own that persist from one
      control step to the next (a compressor's governor, a ramp under way), initially 0.
    * ``axle_fields``: ``{name: doc}``, the same per axle, ``veh.NAME[i, j]`` (a
      slip controller's torque reduction on each axle), initially 0.
    * ``signals``: ``{name: doc}``, outputs a scenario can record (column
      ``v{index}_{name}``); a signal named as a control, field or state is that value.
    * ``states``: ``{name: StateSpec}``, continuous states integrated with the train (a
      main reservoir's pressure); ``rates`` gives their derivatives.
    * ``control_step``: a finer control period (s), if the model needs one.

    Functions (plain functions, set with ``staticmethod``; compiled where numba can):

    * ``step(t, dt, veh)``: the control step, every ``dt`` seconds: sets ``veh.q_a``,
      ``veh.q_r``, ``veh.adhesion`` (the factor on the rail condition under each axle, 1
      unless sanding), the signals and the fields, from ``veh.v`` and the rest. ``veh``
      is the record: every declared name, plus ``count`` and ``axles`` (ints), ``x``,
      ``v``, ``mass``, ``gravity``, ``wheel_radius`` and ``wheelset_inertia`` (one entry
      per vehicle; :data:`FRAMEWORK_ROWS`), ``q_a`` and ``q_r``
      (``(count, axles + 1)``), ``adhesion`` and ``axle_slip`` (``(count, axles)``:
      each axle's slip velocity ``omega r - v`` in m/s where it slips, 0 where it rolls,
      filled for types that declare ``axle_fields``, as a per-axle controller does, and
      0 for others, which save the work; :mod:`rrscore.vehicles.slip_control` acts on
      it). The states' rows hold their
      values at ``t``.
    * ``rates(t, veh, s, ds)``: the derivatives of the states, ``ds.NAME[i]``, from their
      values ``s.NAME[i]`` and the record (``veh.v`` is the speed at the stage), at every
      stage of every step: it must write every entry and change nothing else.
    * ``on_input(veh, i, name, value)``: a key pressed (``value`` 1) or released (0), or a
      control set (``veh.NAME[i]`` is ``value`` already), on vehicle ``i``; for what
      more it does (a valve key that moves a handle, a level that stops a ramp).
    * ``initial(veh, s)``: the fields and states at the start, where not 0 or the
      states' ``initial`` (run once, in Python).
    * ``check_params(params)``: the parameters checked together, once, when a config is
      loaded (``params``: the ``[params]`` table in SI units, every default filled in);
      raise ValueError saying what was found and what was expected (lists of unequal
      length, a range upside down), which becomes a config error naming the file.
    * ``report(veh, s)``: the vehicle's figures for the summary at the drive's end (run
      once, in Python): ``{name: value per vehicle}`` from the record and the states'
      final values (fuel used, a battery's state of charge), listed under
      ``vehicle_figures`` in ``summary.json``.
    """

    type_name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    params: ClassVar[dict[str, Param]] = {}
    controls: ClassVar[dict[str, Control | str]] = {}
    keys: ClassVar[dict[str, str]] = {}
    key_bindings: ClassVar[dict[str, str]] = {}
    notch_keys: ClassVar[tuple[str, ...]] = ()
    fields: ClassVar[dict[str, str]] = {}
    axle_fields: ClassVar[dict[str, str]] = {}
    signals: ClassVar[dict[str, str]] = {}
    states: ClassVar[dict[str, StateSpec]] = {}
    control_step: ClassVar[float | None] = None
    step: ClassVar[Callable[..., Any] | None] = None
    rates: ClassVar[Callable[..., Any] | None] = None
    on_input: ClassVar[Callable[..., Any] | None] = None
    initial: ClassVar[Callable[..., Any] | None] = None
    check_params: ClassVar[Callable[..., Any] | None] = None
    report: ClassVar[Callable[..., Any] | None] = None


def control_of(cls: type[VehicleModel], name: str) -> Control:
    """The :class:`Control` declaration of ``cls``'s control ``name``."""
    c = cls.controls[name]
    return c if isinstance(c, Control) else Control(str(c))


def record_rows(cls: type[VehicleModel]) -> list[str]:
    """The rows of a vehicle record of ``cls``, in order: rrscore's, then the params with
    numeric values, the controls, keys, fields, states and signals."""
    numeric = [k for k, p in cls.params.items() if p.kind in (float, int, bool)]
    own = [*cls.controls, *cls.keys, *cls.fields, *cls.states]
    # a signal named as a control, field or state is that row (SimpleLoco's traction_level)
    return [*FRAMEWORK_ROWS, *numeric, *own, *(k for k in cls.signals if k not in own)]


def record_tables(cls: type[VehicleModel]) -> list[str]:
    """The params of ``cls`` with list values (tables, such as a curve's points), in
    order: each is a table of the record, one row per vehicle, as wide as the longest
    vehicle's list, the rest of a shorter row NaN (``veh.curve_speed[i, k]``)."""
    return [k for k, p in cls.params.items() if p.kind is list]


def check_vehicle_type(cls: type) -> None:
    """Raise TypeError if ``cls`` is not a usable vehicle plugin class."""
    if not (isinstance(cls, type) and issubclass(cls, VehicleModel)):
        raise TypeError(f"{cls!r} is not a subclass of rrscore.VehicleModel")
    name = cls.__qualname__
    if not cls.type_name:
        raise TypeError(f"{name} has no type_name")
    reserved = {*FRAMEWORK_ROWS, "count", "axles", "q_a", "q_r", "adhesion", "axle_slip"}
    seen: dict[str, str] = {}
    for kind in ("params", "controls", "keys", "fields", "axle_fields", "states",
                 "signals"):
        for key in getattr(cls, kind):
            if not (isinstance(key, str) and key.isidentifier()) or key.startswith("_"):
                raise TypeError(f"{name}: {kind} names {key!r}, expected a name of letters, "
                                "digits and underscores, not starting with one")
            if key in reserved:
                raise TypeError(f"{name}: {kind} names {key!r}, which rrscore's record "
                                "holds already (" + ", ".join(sorted(reserved)) + ")")
            mirrors = kind == "signals" and seen.get(key) in ("controls", "fields", "states")
            if key in seen and not mirrors:
                raise TypeError(f"{name}: {key!r} is both one of its {seen[key]} and one of "
                                f"its {kind}")
            seen.setdefault(key, kind)
    for key, p in cls.params.items():
        numeric = p.unit is not None or p.item in (float, int)
        if p.kind is list and not numeric:
            raise TypeError(f"{name}: param {key!r} is a list of {p.item!r}, expected a list "
                            "of numbers (a unit, or item=float) to lay out as a table")
    for key, c in cls.controls.items():
        if not isinstance(c, Control | str):
            raise TypeError(f"{name}: control {key!r} is {c!r}, expected an "
                            "rrscore.Control or a doc string")
        c = control_of(cls, key)
        if not c.low <= c.initial <= c.high:
            raise TypeError(f"{name}: control {key!r} starts at {c.initial!r}, outside its "
                            f"range {c.low!r} to {c.high!r}")
    for key, spec in cls.states.items():
        if not isinstance(spec, StateSpec):
            raise TypeError(f"{name}: state {key!r} is not an rrscore.StateSpec")
    if cls.step is None:
        raise TypeError(f"{name} has no step function (step(t, dt, veh))")
    if cls.states and cls.rates is None:
        raise TypeError(f"{name} declares states but no rates function (rates(t, veh, s, ds))")
    for fn in ("step", "rates", "on_input", "initial", "check_params", "report"):
        value = getattr(cls, fn)
        if value is not None and not callable(value):
            raise TypeError(f"{name}: {fn} is {value!r}, expected a function")
    for key in cls.key_bindings:
        if key not in cls.keys:
            raise TypeError(f"{name}: key_bindings names {key!r}, which is not one of its keys")
    for key in cls.notch_keys:
        if key not in cls.keys:
            raise TypeError(f"{name}: notch_keys names {key!r}, which is not one of its keys")
