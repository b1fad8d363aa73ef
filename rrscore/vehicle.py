"""The vehicle: what a plugin author subclasses, and the config every vehicle shares.

A vehicle has a body (coordinate ``x``, velocity ``v``) and ``num_axis``
wheelsets (angle, angular velocity ``omega``). Its plugin fills two arrays of
generalized forces, as in RRS:

* ``Q_a`` (active): ``Q_a[:, 0]`` a force on the body, ``Q_a[:, i]`` the
  torque on axle ``i`` from the drive (N, N*m; vehicle frame, + is forward).
* ``Q_r`` (resistive, magnitudes >= 0): ``Q_r[:, 0]`` an extra body
  resistance, ``Q_r[:, i]`` the brake torque on axle ``i``. They always
  oppose motion and never reverse it: a braked vehicle stands still.

Batching: one model object serves *every* vehicle of its type built from the
same vehicle config in a train. Each array has one row per vehicle, so
``step`` is written with numpy and the framework never loops over vehicles.
``step`` runs at the control rate (``scenario.solver.control_step``) and its
outputs are held over the integration steps in between.
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any, ClassVar

import numpy as np

from .airbrake import BRAKE_SCHEMA
from .config import FreeTable, Param, Section
from .state import StateSpec

RESISTANCE_SCHEMA = {
    "formula": Param(
        kind=str,
        default="freight_4axle_roller",
        doc="running-resistance formula (see rrscore.resistance.FORMULAS)",
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
            "elements); see rrscore.resistance.tunnel_drag_factor for an estimate",
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


class VehicleModel:
    """Base class of vehicle plugins. Subclass it, set ``type_name``, and override ``step``.

    Class attributes a plugin declares:

    * ``type_name``: the name vehicle configs use in ``vehicle.type``.
    * ``description``: one line for ``rrs plugins``.
    * ``params``: ``{name: Param}`` for the ``[params]`` table of its configs;
      the values arrive in ``self.p`` as arrays, one entry per vehicle
      (``self.p.F_max``), SI units. Vehicles of one type built from different
      configs share the model, each row with its own values.
    * ``keys``: ``{key: what it does}``; the driver program presses them.
    * ``key_bindings``: ``{key: character}``; the terminal keys ``rrs cab`` binds
      them to (keys without one get digits).
    * ``controls``: ``{name: doc}``; settable by the driver program
      (``set = {name = value}``); each is a per-vehicle array attribute, and a
      set value holds until a key or another action changes it.
    * ``control_ranges``: ``{name: (lowest, highest)}``; the values a control
      takes. A driver program that sets one outside is a config error; a
      control not listed takes any finite value.
    * ``signals``: ``{name: doc}``; arrays the model keeps in ``self.out`` and
      a scenario can record (column ``v{index}_{name}``).
    * ``states``: ``{name: StateSpec}``; continuous states of the vehicle's own
      (a main reservoir's pressure, a motor's temperature), integrated by the
      solver with the train. ``rates`` gives their derivatives; ``self.state``
      holds their values at each ``step``; each is also a signal.
    * ``state_rates``: optional, the derivatives of ``states`` as a plain function
      ``state_rates(t, v, s, inputs, ds)`` that numba can compile (loops and
      arithmetic on arrays, :mod:`math`, most numpy calls; see the README). ``v``
      is ``(n,)`` (vehicle frame); ``s`` and ``ds`` are ``(len(states), n)``, rows in
      the order of ``states``; ``inputs`` is ``(len(rates_inputs), n)``. It writes
      ``ds`` in place and must not keep anything. The framework compiles it once
      (cached on disk); if numba cannot, it runs as written, in Python, with the
      same arrays. A model that gives it need not override ``rates``.
    * ``rates_inputs``: names of the per-vehicle arrays ``state_rates`` reads, rows
      of ``inputs`` in this order: attributes the model keeps (``"compressor_on"``)
      or its params (``"p.leak_tau"``). They are read after every ``step`` and
      held until the next one, as ``Q_a`` is.
    * ``control_step``: a finer control period (s) if the model needs one.
    * ``step_kernel``: optional, ``step`` again as a plain function that numba can
      compile, ``step_kernel(t, dt, x, v, fields, q_a, q_r) -> int``, for the control
      steps where no key is held. The compiled step loop then runs it at control
      times itself, many control steps to one return to Python (between the
      samples of the time series and the driver's actions). ``x`` and ``v`` are
      ``(n,)`` (vehicle frame), ``q_a`` and ``q_r`` the model's ``Q_a`` and ``Q_r``
      as the last step left them (it writes them), ``fields`` the arrays
      ``step_fields`` names, one row each. It returns 0 where it did what ``step``
      does, else non-zero, and ``step`` runs instead (its writes are undone).
      It must compute exactly what ``step`` would, to the bit: a drive is the same
      with and without it (``rrs plugins --check`` compares the two).
    * ``step_fields``: the per-vehicle arrays ``step_kernel`` reads or writes, rows of
      ``fields`` in this order: attributes the model keeps (``"traction_level"``,
      written back after the loop), its params (``"p.F_max"``), its states
      (``"state.main_reservoir"``, read) and its signals (``"out.traction_force_N"``,
      written).
    * ``control_kernel``: optional, ``set_control`` again as a plain function that
      numba can compile, ``control_kernel(control, value, fields) -> int``, for the
      built-in driver's decisions inside the compiled loop: ``control`` is the
      index of the control in ``controls``, ``value`` the level set on every
      vehicle of the batch, ``fields`` as ``step_kernel`` has them. It returns 0
      where it did to ``fields`` what ``set_control`` does to those attributes,
      else non-zero (the decision is then Python's). A model that does not
      override ``set_control`` needs none: the loop sets the control's row of
      ``fields`` itself where it is one of ``step_fields``. Like ``step_kernel``
      it must match ``set_control`` to the bit (``rrs plugins --check`` compares).

    The air brake (``[vehicle.brake]`` in the config, :mod:`rrscore.airbrake`)
    reads two controls by name if the model declares them: ``brake_valve``
    (the driver's brake valve handle, 1 release to 5 emergency) where the config
    has ``driver_valve = true``, and ``independent_brake`` (0 to 1) where it has
    ``independent = true``; a config asking for either on a model without the
    control is a config error. A state named ``main_reservoir`` (Pa, gauge)
    feeds the valve and is drawn down by it. The air brake's torque is added
    to the model's ``Q_r``; the model need not know it is there.

    Attributes the framework provides (``n`` = ``count``, ``k`` = ``num_axis``):

    * ``name`` (str): the first vehicle config's display name, or the type name.
    * ``count`` (int): how many vehicles this object serves.
    * ``num_axis`` (int): wheelsets per vehicle, the same for the whole batch.
    * ``index`` (``(n,)`` int): the vehicles' positions in the train, 0 = lead.
    * ``mass`` (``(n,)``, kg): empty mass plus the payload carried.
    * ``payload_fraction`` (``(n,)``, 1): the share of the payload mass carried.
    * ``wheel_radius`` (``(n,)``, m).
    * ``p`` (namespace of ``(n,)`` arrays, SI units): the ``params``.
    * ``x`` (``(n,)``, m), ``v`` (``(n,)``, m/s, vehicle frame: + is the vehicle's
      own forward), ``omega`` (``(n, k)``, rad/s): the state, set before each ``step``.
    * ``state`` (namespace of ``(n,)`` arrays in each ``StateSpec.unit``): the
      declared ``states``, set before each ``step``.

    Attributes the plugin writes:

    * ``Q_a`` (``(n, k + 1)``; N in column 0, N*m in columns 1..k): the body force
      and the drive torque on each axle (vehicle frame, + is forward).
    * ``Q_r`` (``(n, k + 1)``, same units, >= 0): the extra body resistance and
      the brake torque on each axle, as magnitudes.
    * ``out`` (dict of ``(n,)`` arrays): the declared ``signals``, written at
      every ``step``.
    * ``adhesion_factor`` (``(n, k)``, 1): multiplies the rail condition under
      each axle (sanding raises it); 1 by default.
    """

    type_name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    params: ClassVar[dict[str, Param]] = {}
    keys: ClassVar[dict[str, str]] = {}
    key_bindings: ClassVar[dict[str, str]] = {}
    controls: ClassVar[dict[str, str]] = {}
    control_ranges: ClassVar[dict[str, tuple[float, float]]] = {}
    signals: ClassVar[dict[str, str]] = {}
    states: ClassVar[dict[str, StateSpec]] = {}
    control_step: ClassVar[float | None] = None
    state_rates: ClassVar[Callable[..., None] | None] = None
    rates_inputs: ClassVar[tuple[str, ...]] = ()
    step_kernel: ClassVar[Callable[..., int] | None] = None
    step_fields: ClassVar[tuple[str, ...]] = ()
    control_kernel: ClassVar[Callable[..., int] | None] = None

    def __init__(self, vehicles: list[dict[str, Any]], params: SimpleNamespace,
                 index: np.ndarray, payload_fraction: np.ndarray) -> None:
        self.name = vehicles[0]["name"] or self.type_name
        self.index = np.asarray(index, dtype=int)
        self.count = len(self.index)
        self.num_axis = int(vehicles[0]["num_axis"])
        self.wheel_radius = np.array([v["wheel_diameter"] / 2.0 for v in vehicles])
        self.payload_fraction = np.asarray(payload_fraction, dtype=float)
        self.mass = np.array([v["empty_mass"] for v in vehicles]) + self.payload_fraction * \
            np.array([v["payload_mass"] for v in vehicles])
        self.p = params
        self.Q_a = np.zeros((self.count, self.num_axis + 1))
        self.Q_r = np.zeros((self.count, self.num_axis + 1))
        self.x = np.zeros(self.count)
        self.v = np.zeros(self.count)
        self.omega = np.zeros((self.count, self.num_axis))
        self.state = SimpleNamespace(**{k: np.full(self.count, spec.initial)
                                        for k, spec in self.states.items()})
        #: Multiplies the rail condition under each axle; a plugin raises it while sanding.
        self.adhesion_factor = np.ones((self.count, self.num_axis))
        self.out: dict[str, np.ndarray] = {}
        self._keys_down = {k: np.zeros(self.count, dtype=bool) for k in self.keys}
        self._any_key_down = False

    # -- what plugins override ---------------------------------------------
    def setup(self) -> None:
        """Called once after construction: create per-vehicle state arrays here."""

    def step(self, t: float, dt: float) -> None:
        """Called every control step: set ``Q_a`` and ``Q_r`` from state, keys and time."""

    def on_key(self, key: str, rows: np.ndarray, pressed: bool) -> None:
        """Called when the driver presses or releases ``key`` on vehicles ``rows``."""

    def rates(self, t: float, s: SimpleNamespace) -> dict[str, np.ndarray]:
        """Time derivatives of the declared ``states``, one array per name.

        Called at every integration stage, once for the whole batch: ``s`` has
        the states (``s.pressure``) and the vehicles' velocities ``s.v``
        (vehicle frame), one entry per vehicle. Inputs the model decided at its
        last ``step`` (a compressor switched on) are held. It must not change
        the model (the solver evaluates trial states it may discard).

        The default runs ``state_rates`` as written, with ``rates_inputs`` read now;
        the framework itself calls ``state_rates`` directly, compiled where numba can.
        """
        fn = type(self).state_rates
        if fn is None:
            return {}
        names = list(self.states)
        s_rows = np.array([np.asarray(getattr(s, k), dtype=float) for k in names])
        ds = np.empty_like(s_rows)
        fn(t, np.asarray(s.v, dtype=float), s_rows, self.rates_input_values(), ds)
        return dict(zip(names, ds, strict=True))

    def rates_input_values(self) -> np.ndarray:
        """The arrays ``rates_inputs`` names, as rows of one ``(k, n)`` float array."""
        rows = np.empty((len(self.rates_inputs), self.count))
        for i, name in enumerate(self.rates_inputs):
            owner, attr = (self.p, name[2:]) if name.startswith("p.") else (self, name)
            rows[i] = getattr(owner, attr)
        return rows

    def initial_state(self) -> dict[str, np.ndarray]:
        """The declared states at the start of a drive (default: each spec's ``initial``)."""
        return {k: np.full(self.count, spec.initial) for k, spec in self.states.items()}

    # -- what the framework calls ------------------------------------------
    def key_down(self, key: str) -> np.ndarray:
        """Boolean array: is ``key`` held on each vehicle of the batch."""
        return self._keys_down[key]

    def any_key_down(self) -> bool:
        """Whether any key is held on any vehicle of the batch (most control steps: none,
        and a ``step`` may skip what only keys change)."""
        return self._any_key_down

    def press(self, key: str, rows: np.ndarray, pressed: bool) -> None:
        """Record a key press (``pressed``) or release on the given batch rows."""
        if key not in self._keys_down:
            raise KeyError(key)
        self._keys_down[key][rows] = pressed
        self._any_key_down = any(np.count_nonzero(a) for a in self._keys_down.values())
        self.on_key(key, rows, pressed)

    def set_control(self, name: str, rows: np.ndarray, value: float) -> None:
        """Set control ``name`` on the given batch rows (driver program ``set``)."""
        if name not in self.controls:
            raise KeyError(name)
        getattr(self, name)[rows] = value

    @property
    def traction_force(self) -> np.ndarray:
        """Force the drive puts into the rail, N per vehicle, assuming no slip (vehicle frame)."""
        return self.Q_a[:, 0] + self.Q_a[:, 1:].sum(axis=1) / self.wheel_radius


def check_vehicle_type(cls: type) -> None:
    """Raise TypeError if ``cls`` is not a usable vehicle plugin class."""
    if not (isinstance(cls, type) and issubclass(cls, VehicleModel)):
        raise TypeError(f"{cls!r} is not a subclass of rrscore.VehicleModel")
    if not cls.type_name:
        raise TypeError(f"{cls.__qualname__} has no type_name")
    for name, bounds in cls.control_ranges.items():
        if name not in cls.controls:
            raise TypeError(f"{cls.__qualname__}: control_ranges names {name!r}, which is "
                            "not one of its controls")
        if not (isinstance(bounds, tuple) and len(bounds) == 2 and bounds[0] <= bounds[1]):
            raise TypeError(f"{cls.__qualname__}: control_ranges[{name!r}] is {bounds!r}, "
                            "expected (lowest, highest)")
    for name in cls.controls:
        if name in cls.keys:
            raise TypeError(f"{cls.__qualname__}: {name!r} is both a key and a control")
    for name, spec in cls.states.items():
        if not isinstance(spec, StateSpec):
            raise TypeError(f"{cls.__qualname__}: state {name!r} is not an rrscore.StateSpec")
    if cls.state_rates is not None and not callable(cls.state_rates):
        raise TypeError(f"{cls.__qualname__}: state_rates is {cls.state_rates!r}, expected a "
                        "function (t, v, s, inputs, ds)")
    if cls.state_rates is not None and not cls.states:
        raise TypeError(f"{cls.__qualname__}: state_rates is given but no states are declared")
    for name in cls.rates_inputs:
        if not isinstance(name, str) or (name.startswith("p.") and name[2:] not in cls.params):
            raise TypeError(f"{cls.__qualname__}: rates_inputs names {name!r}, expected an "
                            "attribute of the model or 'p.' and one of its params")
    if cls.step_kernel is not None and not callable(cls.step_kernel):
        raise TypeError(f"{cls.__qualname__}: step_kernel is {cls.step_kernel!r}, expected a "
                        "function (t, dt, x, v, fields, q_a, q_r)")
    if cls.control_kernel is not None and not callable(cls.control_kernel):
        raise TypeError(f"{cls.__qualname__}: control_kernel is {cls.control_kernel!r}, "
                        "expected a function (control, value, fields)")
    known = {"p": cls.params, "state": cls.states, "out": cls.signals}
    for name in cls.step_fields:
        kind, rest = step_field_kind(name) if isinstance(name, str) else ("", "")
        if (kind not in known and kind != "attr") or (kind in known and rest not in known[kind]):
            raise TypeError(f"{cls.__qualname__}: step_fields names {name!r}, expected an "
                            "attribute of the model, or 'p.', 'state.' or 'out.' and one of "
                            "its params, states or signals")


def step_field_kind(name: str) -> tuple[str, str]:
    """A ``step_fields`` entry as ``(kind, name)``: ``"attr"``, ``"p"``, ``"state"`` or
    ``"out"``, and the name within it."""
    kind, _, rest = name.partition(".")
    return (kind, rest) if rest else ("attr", name)
