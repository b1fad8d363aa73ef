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

from rrscore import Control, Param, StateSpec, VehicleModel, hookimpl, law


@law
def traction_characteristic(speed, f_max, f_nom, v_nom):  # pragma: no cover (compiled)
    """Full-level traction force (N) at ``speed`` (m/s), seed 003's two-part curve."""
    s = abs(speed)
    if s < v_nom:
        return f_max + (f_nom - f_max) * s / v_nom
    return f_nom * v_nom / s


@law
def dynamic_brake_characteristic(speed, f_max, power, v_fade):  # pragma: no cover
    """Full-level dynamic brake force (N, a magnitude) at ``speed`` (m/s): the cap
    ``f_max``, the power limit ``power / |v|`` above the corner speed, and a linear fade
    below ``v_fade`` to nothing at standstill."""
    s = abs(speed)
    if s == 0.0:
        return 0.0
    return min(f_max, power / s) * min(1.0, s / v_fade)


@law
def ramp(level, up, down, step):  # pragma: no cover (compiled)
    """``level`` moved by ``step`` where the ``up`` key is held and back where ``down`` is,
    kept in [0, 1]."""
    return min(max(level + (up - down) * step, 0.0), 1.0)


def step(t, dt, veh):  # pragma: no cover (compiled)
    """The control step: the levels the keys move, traction or the dynamic brake, the
    straight brake, sanding, the compressor's governor."""
    for i in range(veh.count):
        veh.traction_level[i] = ramp(veh.traction_level[i], veh.traction_up[i],
                                     veh.traction_down[i], veh.traction_rate[i] * dt)
        veh.brake_level[i] = ramp(veh.brake_level[i], veh.brake[i], veh.releasing[i],
                                  veh.brake_rate[i] * dt)
        veh.independent_brake[i] = ramp(veh.independent_brake[i], veh.independent_up[i],
                                        veh.independent_down[i], veh.brake_rate[i] * dt)
        veh.dynamic_brake_level[i] = ramp(veh.dynamic_brake_level[i],
                                          veh.dynamic_brake_up[i], veh.dynamic_brake_down[i],
                                          veh.dynamic_brake_rate[i] * dt)
        v = veh.v[i]
        force = veh.traction_level[i] * traction_characteristic(v, veh.F_max[i], veh.F_nom[i],
                                                                veh.V_nom[i])
        dyn = 0.0
        if veh.dynamic_brake_level[i] > 0.0:  # the motors generate: no traction
            force = 0.0
            dyn = veh.dynamic_brake_level[i] * dynamic_brake_characteristic(
                v, veh.dynamic_brake_force[i], veh.dynamic_brake_power[i],
                veh.dynamic_brake_fade_speed[i])
        drive = force - (1.0 if v > 0.0 else (-1.0 if v < 0.0 else 0.0)) * dyn
        k = veh.axles
        for j in range(1, k + 1):
            veh.q_a[i, j] = drive * veh.wheel_radius[i] / k
            veh.q_r[i, j] = veh.brake_level[i] * veh.brake_force[i] * veh.wheel_radius[i] / k
            veh.adhesion[i, j - 1] = veh.sand_factor[i] if veh.sand[i] != 0.0 else 1.0
        pressure = veh.main_reservoir[i]
        if pressure < veh.cut_in[i]:
            veh.compressor_on[i] = 1.0
        elif pressure > veh.cut_out[i]:
            veh.compressor_on[i] = 0.0
        veh.traction_force_N[i] = force
        veh.dynamic_brake_force_N[i] = dyn
        veh.dynamic_brake_power_W[i] = dyn * abs(v)


def rates(t, veh, s, ds):  # pragma: no cover (compiled)
    """The main reservoir: the compressor, while it runs, fills it through a choke towards
    its maximum pressure; it leaks away."""
    for i in range(veh.count):
        p = s.main_reservoir[i]
        charge = veh.compressor_on[i] * (veh.compressor_max[i] - p) / veh.compressor_tau[i]
        ds.main_reservoir[i] = charge - p / veh.leak_tau[i]


def on_input(veh, i, name, value):  # pragma: no cover (compiled)
    """The brake key: held, the level rises; let go, it falls. A brake level set holds.
    The valve keys put the driver's brake valve handle in a position."""
    if name == "brake":
        veh.releasing[i] = 1.0 - value
    elif name == "brake_level":
        veh.releasing[i] = 0.0
    elif value != 0.0:
        if name == "valve_release":
            veh.brake_valve[i] = 1.0
        elif name == "valve_running":
            veh.brake_valve[i] = 2.0
        elif name == "valve_lap":
            veh.brake_valve[i] = 3.0
        elif name == "valve_service":
            veh.brake_valve[i] = 4.0
        elif name == "valve_emergency":
            veh.brake_valve[i] = 5.0


def initial(veh, s):
    """The main reservoir at its initial pressure."""
    s.main_reservoir[:] = veh.reservoir_initial


class SimpleLoco(VehicleModel):
    """Locomotive with the seed-003 traction characteristic, a straight brake, a dynamic
    brake and a main reservoir with a governed compressor."""

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
    # a stroke puts the brake valve handle in its position (held keys ramp the levels)
    notch_keys = ("valve_release", "valve_running", "valve_lap", "valve_service",
                  "valve_emergency")
    controls = {
        "traction_level": Control("traction level, 0..1 (held until changed)", 0.0, 1.0),
        "brake_level": Control("brake level, 0..1 (held until changed)", 0.0, 1.0),
        "dynamic_brake_level": Control("dynamic brake level, 0..1 (held until changed; above "
                                       "0 it cuts traction)", 0.0, 1.0),
        "brake_valve": Control("driver's brake valve handle: 1 release and charging, "
                               "2 running, 3 lap, 4 service, 5 emergency (with an air brake "
                               "whose [vehicle.brake] has driver_valve = true)", 1.0, 5.0,
                               initial=2.0),
        "independent_brake": Control("independent (locomotive air) brake, 0..1 (with "
                                     "[vehicle.brake] independent = true)", 0.0, 1.0),
        "bail_off": Control("1: release the locomotive's cylinders from the train's "
                            "automatic application (with [vehicle.brake] independent = "
                            "true), 0: let them apply with it", 0.0, 1.0),
    }
    fields = {"releasing": "1 while the brake level falls (the brake key let go)",
              "compressor_on": "1 while the compressor runs"}
    signals = {"traction_force_N": "traction force demanded", "traction_level": "traction level",
               "brake_level": "locomotive brake level",
               "compressor_on": "1 while the compressor runs",
               "dynamic_brake_force_N": "dynamic brake force (a magnitude, against the motion)",
               "dynamic_brake_power_W": "power the dynamic brake takes from the train"}
    states = {"main_reservoir": StateSpec("Pa", "main reservoir pressure, gauge", atol=1.0)}
    step = staticmethod(step)
    rates = staticmethod(rates)
    on_input = staticmethod(on_input)
    initial = staticmethod(initial)


@hookimpl
def rrs_vehicle_types():
    """SimpleLoco, for vehicle configs with ``type = "simple_loco"``."""
    return [SimpleLoco]
