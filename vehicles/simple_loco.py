"""SimpleLoco: the locomotive of the RRS tutorial, as an rrscore plugin.

Traction characteristic F(v) = l * Fc(|v|) with the traction level l in [0, 1]:
below the nominal speed the force falls on a straight line from F_max (the
adhesion limit at standstill) to F_nom; above it the drive is at constant
power, Fc = F_nom * V_nom / |v|. The force is split evenly over the axles as
torque F * (D/2) / num_axis. Keys raise and lower the level at a set rate and
apply a simple locomotive brake.

The dynamic (electric) brake turns the traction motors into generators: with
the dynamic brake level d in [0, 1] the force against the motion is
d * min(F_db, P_db / |v|) * min(1, |v| / v_fade): the force cap F_db (set
below the adhesion limit; demanded beyond it, the axles slide as any braked
axle does) at low speeds, the power the resistor grid takes, P_db, above
F_db's corner speed P_db / F_db, and a fade to nothing below v_fade, where the
motors' field is too weak. It acts through the axles as a negative drive
torque, so the energy account counts it under ``drive`` (negative). While it is
set, traction is cut (the motors cannot drive and brake at once).

It also shows a plugin with a continuous state of its own: the main
reservoir, charged by a compressor through a choke and switched by a governor.
The pressure ``p`` (gauge) is integrated by the solver with the train::

    dp/dt = on * (p_max - p) / tau - p / tau_leak

where ``on`` is the compressor's state, decided by the governor at each control
step (on below ``cut_in``, off above ``cut_out``, unchanged in between).
"""

from __future__ import annotations

import numpy as np

from rrscore import Param, StateSpec, VehicleModel, hookimpl


def traction_characteristic(speed, f_max, f_nom, v_nom):
    """Full-level traction force (N) at ``speed`` (m/s), seed 003's two-part curve."""
    s = np.abs(speed)
    line = f_max + (f_nom - f_max) * s / v_nom
    # The hyperbola only applies from v_nom up, so dividing by at least v_nom changes
    # nothing it returns and never overflows at a crawl.
    hyperbola = f_nom * v_nom / np.maximum(s, v_nom)
    return np.where(s < v_nom, line, hyperbola)


def dynamic_brake_characteristic(speed, f_max, power, v_fade):
    """Full-level dynamic brake force (N, a magnitude) at ``speed`` (m/s): the cap
    ``f_max``, the power limit ``power / |v|`` above the corner speed, and a linear fade
    below ``v_fade`` to nothing at standstill."""
    s = np.abs(speed)
    by_power = power / np.maximum(s, 1e-300)  # s = 0 is caught by the fade
    return np.minimum(f_max, by_power) * np.minimum(1.0, s / v_fade)


def _ramp(level, up, down, step):
    """``level`` moved by ``step`` (per vehicle) where ``up`` is held and back where
    ``down`` is, kept in [0, 1]; ``level`` itself where neither is (most control steps)."""
    # np.count_nonzero: a fifth of the cost of .any() on short arrays, at every control step
    if not (np.count_nonzero(up) or np.count_nonzero(down)):
        return level
    return np.clip(level + (up.astype(float) - down) * step, 0.0, 1.0)


#: Keys that put the driver's brake valve handle in a position.
_VALVE_KEYS = {"valve_release": 1.0, "valve_running": 2.0, "valve_lap": 3.0,
               "valve_service": 4.0, "valve_emergency": 5.0}


def main_reservoir_rates(t, v, s, inputs, ds):
    """d/dt of the main reservoir pressure (row 0 of ``s``): the compressor, while it runs
    (``inputs`` row 0), fills it through a choke towards its maximum pressure (row 1)
    with time constant row 2, and it leaks away with time constant row 3. Plain loops:
    the framework compiles it with numba."""
    for i in range(v.size):
        pressure = s[0, i]
        charge = inputs[0, i] * (inputs[1, i] - pressure) / inputs[2, i]
        ds[0, i] = charge - pressure / inputs[3, i]


# The rows of simple_loco_step's fields (SimpleLoco.step_fields, in this order).
(_TRACTION, _BRAKE, _DYNAMIC, _RELEASING, _COMPRESSOR, _F_MAX, _F_NOM, _V_NOM, _BRAKE_FORCE,
 _BRAKE_RATE, _DB_FORCE, _DB_POWER, _DB_FADE, _CUT_IN, _CUT_OUT, _RADIUS, _RESERVOIR,
 _OUT_FORCE, _OUT_DB_FORCE, _OUT_DB_POWER, _OUT_LEVEL, _OUT_COMPRESSOR) = range(22)


def simple_loco_step(t, dt, x, v, f, q_a, q_r):
    """:meth:`SimpleLoco.step` where no key is held, vehicle by vehicle, for the compiled
    loop: the same arithmetic in the same order, so the same values to the bit. Plain
    loops: the framework compiles it with numba."""
    n, k = v.size, q_a.shape[1] - 1
    releasing = False  # the brake level falls (the brake key let go): step's _ramps
    dynamic = False  # the dynamic brake is set on some vehicle: step's other branch
    for i in range(n):
        releasing = releasing or f[_RELEASING, i] != 0.0
        dynamic = dynamic or f[_DYNAMIC, i] != 0.0
    for i in range(n):
        if releasing:
            level = f[_BRAKE, i] + (0.0 - f[_RELEASING, i]) * (f[_BRAKE_RATE, i] * dt)
            f[_BRAKE, i] = min(max(level, 0.0), 1.0)
        s = abs(v[i])
        f_max, f_nom, v_nom = f[_F_MAX, i], f[_F_NOM, i], f[_V_NOM, i]
        if s < v_nom:
            full = f_max + (f_nom - f_max) * s / v_nom
        else:
            full = f_nom * v_nom / max(s, v_nom)
        force = f[_TRACTION, i] * full
        db = 0.0
        drive = force
        if dynamic:
            if f[_DYNAMIC, i] > 0.0:
                force = 0.0
            by_power = f[_DB_POWER, i] / max(s, 1e-300)
            db = f[_DYNAMIC, i] * (min(f[_DB_FORCE, i], by_power) * min(1.0, s / f[_DB_FADE, i]))
            sign = 1.0 if v[i] > 0.0 else (-1.0 if v[i] < 0.0 else 0.0)
            drive = force - sign * db
        torque = drive * f[_RADIUS, i] / k
        brake = f[_BRAKE, i] * f[_BRAKE_FORCE, i] * f[_RADIUS, i] / k
        for j in range(1, k + 1):
            q_a[i, j] = torque
            q_r[i, j] = brake
        pressure = f[_RESERVOIR, i]
        if pressure < f[_CUT_IN, i]:
            f[_COMPRESSOR, i] = 1.0
        elif pressure > f[_CUT_OUT, i]:
            f[_COMPRESSOR, i] = 0.0
        f[_OUT_FORCE, i] = force
        f[_OUT_DB_FORCE, i] = db
        f[_OUT_DB_POWER, i] = db * s
        f[_OUT_LEVEL, i] = f[_TRACTION, i]
        f[_OUT_COMPRESSOR, i] = f[_COMPRESSOR, i]
    return 0


def simple_loco_control(control, value, f):
    """:meth:`SimpleLoco.set_control` on every vehicle, for the compiled loop: ``control``
    indexes ``SimpleLoco.controls``. The brake valve and the independent brake are not
    among ``step_fields``: declined (1), Python sets them. Plain code: the framework
    compiles it with numba."""
    n = f.shape[1]
    if control == 0:  # traction_level
        for i in range(n):
            f[_TRACTION, i] = value
    elif control == 1:  # brake_level: a set level holds until changed
        for i in range(n):
            f[_BRAKE, i] = value
            f[_RELEASING, i] = 0.0
    elif control == 2:  # dynamic_brake_level
        for i in range(n):
            f[_DYNAMIC, i] = value
    else:
        return 1
    return 0


class SimpleLoco(VehicleModel):
    """Locomotive with the seed-003 traction characteristic, a straight brake and a main
    reservoir with a governed compressor."""

    type_name = "simple_loco"
    description = "RRS tutorial locomotive: linear + constant-power traction, key-driven"
    params = {
        "F_max": Param("N", 450e3, "traction force at standstill", min=0.0),
        "F_nom": Param("N", 350e3, "traction force at the nominal speed", min=0.0),
        "V_nom": Param("m/s", 80 / 3.6, "nominal speed", min=0.0, exclusive_min=True),
        "traction_rate": Param("1/s", 0.5, "traction level change per second of key hold", min=0),
        "brake_force": Param("N", 300e3, "locomotive brake force at full application", min=0.0),
        "brake_rate": Param("1/s", 1.0, "brake level change per second of key hold or release",
                            min=0.0),
        "sand_factor": Param(kind=float, default=1.25, doc="adhesion gain while sanding", min=0),
        "reservoir_initial": Param("Pa", 0.8e6, "main reservoir pressure (gauge) at the start",
                                   min=0.0),
        "compressor_max": Param("Pa", 1.0e6, "pressure the compressor charges towards",
                                min=0.0, exclusive_min=True),
        "compressor_tau": Param("s", 60.0, "time constant of charging through the choke",
                                min=0.0, exclusive_min=True),
        "leak_tau": Param("s", 3600.0, "time constant of the reservoir's leak", min=0.0,
                          exclusive_min=True),
        "cut_in": Param("Pa", 0.75e6, "governor: compressor on below this pressure", min=0.0),
        "cut_out": Param("Pa", 0.9e6, "governor: compressor off above this pressure", min=0.0),
        "dynamic_brake_force": Param("N", 250e3, "dynamic brake force at full level, below "
                                     "the corner speed (keep it under the adhesion limit)",
                                     min=0.0),
        "dynamic_brake_power": Param("W", 4e6, "power the dynamic brake takes at most "
                                     "(resistor grid or regeneration)", min=0.0),
        "dynamic_brake_fade_speed": Param("m/s", 10 / 3.6, "below this speed the dynamic "
                                          "brake force falls linearly to nothing", min=0.0,
                                          exclusive_min=True),
        "dynamic_brake_rate": Param("1/s", 0.5, "dynamic brake level change per second of "
                                    "key hold", min=0.0),
    }
    keys = {
        "traction_up": "raise the traction level while held",
        "traction_down": "lower the traction level while held",
        "brake": "raise the locomotive brake level while held; release to let it off",
        "sand": "sand the rails in front of the wheels while held",
        "dynamic_brake_up": "raise the dynamic brake level while held (cuts traction)",
        "dynamic_brake_down": "lower the dynamic brake level while held",
        "valve_release": "driver's brake valve to 1, release and charging",
        "valve_running": "driver's brake valve to 2, running",
        "valve_lap": "driver's brake valve to 3, lap",
        "valve_service": "driver's brake valve to 4, service",
        "valve_emergency": "driver's brake valve to 5, emergency",
        "independent_up": "raise the independent brake while held",
        "independent_down": "lower the independent brake while held",
    }
    key_bindings = {"traction_up": "w", "traction_down": "s", "brake": "b", "sand": "d",
                    "dynamic_brake_up": "e", "dynamic_brake_down": "x", "valve_release": "1",
                    "valve_running": "2", "valve_lap": "3", "valve_service": "4",
                    "valve_emergency": "5", "independent_up": "i", "independent_down": "k"}
    controls = {"traction_level": "traction level, 0..1 (held until changed)",
                "brake_level": "brake level, 0..1 (held until changed)",
                "dynamic_brake_level": "dynamic brake level, 0..1 (held until changed; "
                                       "above 0 it cuts traction)",
                "brake_valve": "driver's brake valve handle: 1 release and charging, "
                               "2 running, 3 lap, 4 service, 5 emergency (with an air brake "
                               "whose [vehicle.brake] has driver_valve = true)",
                "independent_brake": "independent (locomotive air) brake, 0..1 (with "
                                     "[vehicle.brake] independent = true)"}
    control_ranges = {"traction_level": (0.0, 1.0), "brake_level": (0.0, 1.0),
                      "dynamic_brake_level": (0.0, 1.0), "brake_valve": (1.0, 5.0),
                      "independent_brake": (0.0, 1.0)}
    signals = {"traction_force_N": "traction force demanded", "traction_level": "traction level",
               "compressor_on": "1 while the compressor runs",
               "dynamic_brake_force_N": "dynamic brake force (a magnitude, against the motion)",
               "dynamic_brake_power_W": "power the dynamic brake takes from the train"}
    states = {"main_reservoir": StateSpec("Pa", "main reservoir pressure, gauge", atol=1.0)}

    def setup(self) -> None:
        self.traction_level = np.zeros(self.count)
        self.brake_level = np.zeros(self.count)
        self.dynamic_brake_level = np.zeros(self.count)
        self.releasing = np.zeros(self.count, dtype=bool)  # brake key let go: level falls
        self.compressor_on = np.zeros(self.count)
        self.brake_valve = np.full(self.count, 2.0)  # running
        self.independent_brake = np.zeros(self.count)

    def initial_state(self) -> dict[str, np.ndarray]:
        return {"main_reservoir": np.array(self.p.reservoir_initial, dtype=float)}

    def on_key(self, key: str, rows: np.ndarray, pressed: bool) -> None:
        if key == "brake":
            self.releasing[rows] = not pressed
        elif key in _VALVE_KEYS and pressed:
            self.brake_valve[rows] = _VALVE_KEYS[key]

    def set_control(self, name: str, rows: np.ndarray, value: float) -> None:
        super().set_control(name, rows, value)
        if name == "brake_level":
            self.releasing[rows] = False  # a set level holds until changed

    def step(self, t: float, dt: float) -> None:
        p = self.p
        keys = self.any_key_down()
        if keys or np.count_nonzero(self.releasing):  # most control steps: no key held
            self._ramps(dt)

        force = self.traction_level * traction_characteristic(self.v, p.F_max, p.F_nom,
                                                              p.V_nom)
        if np.count_nonzero(self.dynamic_brake_level):
            braking = self.dynamic_brake_level > 0.0  # the motors generate: no traction
            force = np.where(braking, 0.0, force)
            dyn = self.dynamic_brake_level * dynamic_brake_characteristic(
                self.v, p.dynamic_brake_force, p.dynamic_brake_power,
                p.dynamic_brake_fade_speed)
            drive = force - np.sign(self.v) * dyn  # the dynamic brake opposes the motion
        else:
            dyn, drive = np.zeros(self.count), force
        self.Q_a[:, 1:] = (drive * self.wheel_radius / self.num_axis)[:, None]
        self.Q_r[:, 1:] = (self.brake_level * p.brake_force * self.wheel_radius
                           / self.num_axis)[:, None]
        if keys:
            sanding = self.key_down("sand")[:, None]
            self.adhesion_factor[:] = np.where(sanding, p.sand_factor[:, None], 1.0)
        else:
            self.adhesion_factor[:] = 1.0

        pressure = self.state.main_reservoir
        self.compressor_on = np.where(pressure < p.cut_in, 1.0,
                                      np.where(pressure > p.cut_out, 0.0, self.compressor_on))
        self.out["traction_force_N"] = force
        self.out["dynamic_brake_force_N"] = dyn
        self.out["dynamic_brake_power_W"] = dyn * np.abs(self.v)
        self.out["traction_level"] = self.traction_level
        self.out["compressor_on"] = self.compressor_on

    def _ramps(self, dt: float) -> None:
        """Move the levels the keys hold up or down (the brake level also falls while
        ``releasing``)."""
        p = self.p
        self.traction_level = _ramp(self.traction_level, self.key_down("traction_up"),
                                    self.key_down("traction_down"), p.traction_rate * dt)
        self.brake_level = _ramp(self.brake_level, self.key_down("brake"), self.releasing,
                                 p.brake_rate * dt)
        self.independent_brake = _ramp(self.independent_brake,
                                       self.key_down("independent_up"),
                                       self.key_down("independent_down"), p.brake_rate * dt)
        self.dynamic_brake_level = _ramp(self.dynamic_brake_level,
                                         self.key_down("dynamic_brake_up"),
                                         self.key_down("dynamic_brake_down"),
                                         p.dynamic_brake_rate * dt)

    # the main reservoir's rate, compiled by the framework (see main_reservoir_rates)
    state_rates = staticmethod(main_reservoir_rates)
    rates_inputs = ("compressor_on", "p.compressor_max", "p.compressor_tau", "p.leak_tau")
    # step where no key is held, compiled and run inside the step loop by the framework
    step_kernel = staticmethod(simple_loco_step)
    step_fields = ("traction_level", "brake_level", "dynamic_brake_level", "releasing",
                   "compressor_on", "p.F_max", "p.F_nom", "p.V_nom", "p.brake_force",
                   "p.brake_rate", "p.dynamic_brake_force", "p.dynamic_brake_power",
                   "p.dynamic_brake_fade_speed", "p.cut_in", "p.cut_out", "wheel_radius",
                   "state.main_reservoir", "out.traction_force_N", "out.dynamic_brake_force_N",
                   "out.dynamic_brake_power_W", "out.traction_level", "out.compressor_on")
    # set_control for the built-in driver's decisions inside the step loop
    control_kernel = staticmethod(simple_loco_control)


@hookimpl
def rrs_vehicle_types():
    """SimpleLoco, for vehicle configs with ``type = "simple_loco"``."""
    return [SimpleLoco]
