"""Powertrains: a locomotive's power source as states of its own, on TableLoco's curves.

Both locomotives here pull and brake as :mod:`rrscore.vehicles.table_loco` does (its
kernels, not a copy: tractive-force curves per throttle notch, a power cap, a dynamic
brake curve, a locomotive brake); what they add is where the power comes from.

**Diesel-electric** (``diesel_electric``). The throttle moves in ``throttle_notches``
steps (the throttle control or keys move a lever; the curve is taken at the nearest
notch, ``round(throttle * n) / n``; 0: continuous). The engine burns fuel at a rate
read off the fuel map against the power at the rail, ``P = F v`` (the tractive force
times the speed: straight lines between the map's points ``(fuel_map_power,
fuel_map_rate)``, its end rates beyond, the rate at 0 W the idle consumption, also
while coasting or braking). Fuel used (kg) is a state, integrated by the solver with the
train at every stage from the speed there, so it is exact between control steps; the
summary gives it in kg, in litres (``fuel_density``, by default 0.835 kg/L, a typical
EN 590 diesel at 15 °C) and as CO2 (``co2_per_fuel``, by default 3.186 kg of CO2 per kg
of diesel: the IPCC 2006 Guidelines' default emission factor for gas/diesel oil,
74,100 kg CO2/TJ (Vol. 2, Table 1.4), times its net calorific value, 43.0 TJ/Gg
(Table 1.2), i.e. all the carbon oxidised), with the traction energy at the rail.

**Battery-electric** (``battery_electric``). A battery of ``battery_capacity`` whose
state of charge (0..1, a state) falls with the power the motors draw and rises with what
the dynamic brake regenerates. The round-trip efficiency ``eta`` is split evenly between
the two ways, ``e = sqrt(eta)`` each: driving, the battery gives ``P_rail / e``;
regenerating, it takes ``P_rail * e``; the difference is the loss (also a state).
Traction is capped at ``discharge_power_max * e / |v|`` and cut at ``soc_min``; the
dynamic brake at ``charge_power_max / (e |v|)``. The dynamic brake is regeneration only
(no resistor grid): once the state of charge reaches ``soc_max`` its force is 0 until the
charge falls below again (it is checked at each control step, so the charge can pass
``soc_max`` by one control step's charging at most). The summary closes the battery's
account: energy to traction at the rail less regeneration plus losses equals the
energy the battery gave.

The diesel-electric's axles are under a wheel-slip control
(:mod:`rrscore.vehicles.slip_control`, ``slip_control``, on by default): an axle that
slips has its torque cut, given back as it grips; its tractive force signal is the sum
after the cuts.

Each reports its figures in the summary (``vehicle_figures``) through ``report``.
"""

from __future__ import annotations

import math

import numpy as np

from rrscore import Control, Param, StateSpec, VehicleModel, hookimpl, kernel, law

from .slip_control import SLIP_AXLE_FIELDS, SLIP_PARAMS, control_cut, control_slip
from .table_loco import (
    TableLoco,
    apply_forces,
    check_curves,
    dynamic_force,
    move_levels,
    points,
    power_cap,
    segment_force,
    tractive_force,
)

_UNCONTROLLED = math.inf  # the accounts feed nothing back into the motion


@kernel(inline=True)
def fuel_rate(power, map_power, map_rate):  # pragma: no cover (compiled)
    """Fuel mass rate (kg/s) at ``power`` at the rail (W; below 0 counts as 0) from the
    fuel map ``(map_power, map_rate)``: straight lines between its points, its end rates
    beyond them; 0 for an empty map."""
    m = points(map_power)
    if m == 0:
        return 0.0
    return segment_force(max(power, 0.0), map_power, map_rate, 0, m)


@law
def notch_level(throttle, notches):  # pragma: no cover (compiled)
    """The throttle lever's level at the nearest of ``notches`` notches (continuous for
    fewer than 1)."""
    if notches < 1.0:
        return throttle
    return math.floor(throttle * notches + 0.5) / notches


@law
def battery_power(traction, regenerated, round_trip):  # pragma: no cover (compiled)
    """Power the battery gives (W; negative: it charges) for ``traction`` power at the rail
    and ``regenerated`` power from the dynamic brake at the rail, with the round-trip
    efficiency split evenly between discharge and charge (``sqrt(round_trip)`` each)."""
    e = math.sqrt(round_trip)
    return traction / e - regenerated * e


@law
def battery_loss(traction, regenerated, round_trip):  # pragma: no cover (compiled)
    """Power lost between the battery and the rail (W, >= 0 for power of either sign at
    the rail as :func:`battery_power` splits the efficiency)."""
    e = math.sqrt(round_trip)
    return abs(traction) * (1.0 / e - 1.0) + abs(regenerated) * (1.0 - e)


# ----------------------------------------------------------------------- diesel-electric

def diesel_step(t, dt, veh):  # pragma: no cover (compiled)
    """The control step: TableLoco's, with the throttle at its notch and each axle's
    torque under the wheel-slip control; the fuel rate."""
    for i in range(veh.count):
        move_levels(veh, i, dt)
        level = notch_level(veh.throttle[i], veh.throttle_notches[i])
        d = veh.dynamic_brake_level[i]
        if d > 0.0:  # the motors generate: no traction
            apply_forces(veh, i, 0.0, dynamic_force(veh, i, d))
        else:
            apply_forces(veh, i, tractive_force(veh, i, level), 0.0)
        control_slip(veh, i, dt)
        if d <= 0.0 and control_cut(veh, i):  # the force after the cuts
            force = 0.0
            for j in range(veh.axles):
                force += veh.q_a[i, j + 1]
            veh.traction_force_N[i] = force / veh.wheel_radius[i]
        power = veh.traction_force_N[i] * veh.v[i]
        veh.notch[i] = level * veh.throttle_notches[i] if veh.throttle_notches[i] >= 1.0 \
            else level
        veh.rail_power_W[i] = power
        veh.fuel_rate_kgps[i] = fuel_rate(power, veh.fuel_map_power[i], veh.fuel_map_rate[i])


def diesel_rates(t, veh, s, ds):  # pragma: no cover (compiled)
    """Fuel burnt at the map's rate for the power at the rail at this stage's speed, and
    that power's work."""
    for i in range(veh.count):
        power = veh.traction_force_N[i] * veh.v[i]
        ds.fuel_used_kg[i] = fuel_rate(power, veh.fuel_map_power[i], veh.fuel_map_rate[i])
        ds.rail_energy_J[i] = power


def diesel_report(veh, s):
    """Fuel used (kg, L), CO2 (kg) and the traction energy at the rail (J, kWh)."""
    kg = np.asarray(s.fuel_used_kg, dtype=float)
    work = np.asarray(s.rail_energy_J, dtype=float)
    return {"fuel_kg": kg, "fuel_L": 1e3 * kg / veh.fuel_density,
            "co2_kg": kg * veh.co2_per_fuel, "rail_energy_J": work,
            "rail_energy_kWh": work / 3.6e6}


def diesel_check(params):
    """TableLoco's curves, and the fuel map: a rate per power, the powers increasing."""
    check_curves(params)
    power, rate = params["fuel_map_power"], params["fuel_map_rate"]
    if len(power) != len(rate):
        raise ValueError(f"found {len(power)} fuel_map_power and {len(rate)} fuel_map_rate "
                         "entries; expected a rate for each power")
    if any(b <= a for a, b in zip(power[:-1], power[1:], strict=True)):
        raise ValueError(f"found fuel_map_power {list(power)} W; expected powers "
                         "increasing from one point to the next")


class DieselElectric(VehicleModel):
    """Diesel-electric locomotive: TableLoco's curves with throttle notches, and a fuel map
    against the power at the rail (fuel used, litres and CO2 in the summary)."""

    type_name = "diesel_electric"
    description = "tractive-effort curves per notch and a fuel map (fuel used, CO2)"
    params = {
        **TableLoco.params,
        **SLIP_PARAMS,
        "throttle_notches": Param(kind=int, default=8, doc="throttle notches (the curve at "
                                  "the nearest, round(throttle * n) / n); 0: continuous",
                                  min=0),
        "fuel_map_power": Param("W", default=[], kind=list, doc="power at the rail of each "
                                "point of the fuel map, increasing (the first, 0 W, idle)",
                                min=0.0),
        "fuel_map_rate": Param("kg/s", default=[], kind=list, doc="fuel mass rate at each "
                               "point of the fuel map (\"kg/h\" is fine)", min=0.0),
        "fuel_density": Param("kg/m^3", 835.0, "fuel density, for litres (diesel: about "
                              "0.835 kg/L)", min=0.0, exclusive_min=True),
        "co2_per_fuel": Param(kind=float, default=3.186, doc="kg of CO2 per kg of fuel burnt "
                              "(diesel 3.186: IPCC 2006, 74.1 t/TJ at 43.0 MJ/kg)", min=0.0),
    }
    keys = TableLoco.keys
    key_bindings = TableLoco.key_bindings
    controls = {**TableLoco.controls,
                "throttle": Control("throttle lever, 0..1 (held until changed; the curve at "
                                    "its nearest notch)", 0.0, 1.0)}
    axle_fields = SLIP_AXLE_FIELDS
    states = {"fuel_used_kg": StateSpec("kg", "fuel burnt since the start",
                                        atol=_UNCONTROLLED),
              "rail_energy_J": StateSpec("J", "work of the tractive force at the rail since "
                                         "the start", atol=_UNCONTROLLED)}
    signals = {**TableLoco.signals, "notch": "throttle notch in force (the level where "
               "continuous)", "rail_power_W": "tractive power at the rail",
               "fuel_rate_kgps": "fuel mass rate at the control step",
               "fuel_used_kg": "fuel burnt since the start",
               "rail_energy_J": "traction work at the rail since the start"}
    step = staticmethod(diesel_step)
    rates = staticmethod(diesel_rates)
    check_params = staticmethod(diesel_check)
    report = staticmethod(diesel_report)


# ---------------------------------------------------------------------- battery-electric

def battery_step(t, dt, veh):  # pragma: no cover (compiled)
    """The control step: TableLoco's, traction capped by the battery's discharge limit and
    cut when empty, the dynamic brake capped by its charge limit and cut when full."""
    for i in range(veh.count):
        move_levels(veh, i, dt)
        e = math.sqrt(veh.round_trip_efficiency[i])
        soc = veh.state_of_charge[i]
        v = veh.v[i]
        d = veh.dynamic_brake_level[i]
        force, dyn = 0.0, 0.0
        if d > 0.0:  # regeneration only: nothing once the battery is full
            if soc < veh.soc_max[i]:
                dyn = power_cap(dynamic_force(veh, i, d), veh.charge_power_max[i] / e, v)
        elif soc > veh.soc_min[i]:
            force = power_cap(tractive_force(veh, i, veh.throttle[i]),
                              veh.discharge_power_max[i] * e, v)
        apply_forces(veh, i, force, dyn)
        veh.rail_force_N[i] = force - (1.0 if v > 0.0 else (-1.0 if v < 0.0 else 0.0)) * dyn
        power = veh.rail_force_N[i] * v
        veh.rail_power_W[i] = power
        veh.battery_power_W[i] = battery_power(max(power, 0.0), max(-power, 0.0),
                                               veh.round_trip_efficiency[i])


def battery_rates(t, veh, s, ds):  # pragma: no cover (compiled)
    """The state of charge falls with the battery's power at this stage's speed (the power
    at the rail positive: traction; negative: regeneration); the traction work, the
    regenerated work and the losses accumulate."""
    for i in range(veh.count):
        # the force held since the control step, at this stage's speed: a dynamic brake
        # that outlasts the motion (it reverses within a step) draws power, as motoring
        power = veh.rail_force_N[i] * veh.v[i]
        traction = max(power, 0.0)
        regenerated = max(-power, 0.0)
        eta = veh.round_trip_efficiency[i]
        ds.state_of_charge[i] = -battery_power(traction, regenerated, eta) \
            / veh.battery_capacity[i]
        ds.rail_energy_J[i] = traction
        ds.regenerated_J[i] = regenerated
        ds.battery_loss_J[i] = battery_loss(traction, regenerated, eta)


def battery_initial(veh, s):
    """The battery at its initial state of charge."""
    s.state_of_charge[:] = veh.soc_initial


def battery_report(veh, s):
    """The state of charge at the end, the battery's energy account and its balance."""
    soc = np.asarray(s.state_of_charge, dtype=float)
    given = (np.asarray(veh.soc_initial) - soc) * veh.battery_capacity
    work, regen, loss = (np.asarray(x, dtype=float) for x in
                         (s.rail_energy_J, s.regenerated_J, s.battery_loss_J))
    return {"state_of_charge_start": veh.soc_initial, "state_of_charge_end": soc,
            "battery_energy_given_J": given, "rail_energy_J": work, "regenerated_J": regen,
            "battery_loss_J": loss, "battery_balance_error_J": given - (work - regen + loss)}


def battery_check(params):
    """TableLoco's curves, and the window of charge: soc_min below soc_max."""
    check_curves(params)
    if params["soc_min"] >= params["soc_max"]:
        raise ValueError(f"found soc_min {params['soc_min']:g} and soc_max "
                         f"{params['soc_max']:g}; expected soc_min below soc_max")


class BatteryElectric(VehicleModel):
    """Battery-electric locomotive: TableLoco's curves, a battery with a state of charge,
    charge and discharge power limits and a round-trip efficiency, and regenerative
    braking through the dynamic brake up to the battery's charge limit."""

    type_name = "battery_electric"
    description = "tractive-effort curves on a battery: state of charge, regenerative brake"
    params = {
        **TableLoco.params,
        "battery_capacity": Param("J", 3.6e9, "usable energy of the battery at full charge "
                                  "(\"1000 kWh\")", min=0.0, exclusive_min=True),
        "soc_initial": Param(kind=float, default=0.8, doc="state of charge at the start, "
                             "0..1", min=0.0, max=1.0),
        "soc_max": Param(kind=float, default=0.95, doc="charge limit: no regeneration from "
                         "here", min=0.0, max=1.0),
        "soc_min": Param(kind=float, default=0.1, doc="discharge limit: no traction from "
                         "here", min=0.0, max=1.0),
        "charge_power_max": Param("W", 2e6, "power the battery takes at most",
                                  min=0.0, exclusive_min=True),
        "discharge_power_max": Param("W", 3e6, "power the battery gives at most",
                                     min=0.0, exclusive_min=True),
        "round_trip_efficiency": Param(kind=float, default=0.9, doc="energy back at the rail "
                                       "per unit put in at the rail, split evenly between "
                                       "charge and discharge", min=0.0, max=1.0,
                                       exclusive_min=True),
    }
    keys = TableLoco.keys
    key_bindings = TableLoco.key_bindings
    controls = {**TableLoco.controls,
                "dynamic_brake_level": Control("regenerative (dynamic) brake level, 0..1 "
                                               "(held until changed; above 0 it cuts "
                                               "traction; nothing while the battery is "
                                               "full)", 0.0, 1.0)}
    states = {"state_of_charge": StateSpec("1", "battery state of charge, 0..1",
                                           atol=_UNCONTROLLED),
              "rail_energy_J": StateSpec("J", "work of the tractive force at the rail",
                                         atol=_UNCONTROLLED),
              "regenerated_J": StateSpec("J", "work of the dynamic brake at the rail "
                                         "(regenerated)", atol=_UNCONTROLLED),
              "battery_loss_J": StateSpec("J", "losses between battery and rail",
                                          atol=_UNCONTROLLED)}
    fields = {"rail_force_N": "force at the rail along the track: traction less the "
                              "dynamic brake against the motion"}
    signals = {**TableLoco.signals, "state_of_charge": "battery state of charge, 0..1",
               "battery_power_W": "power the battery gives (negative: takes) at the "
                                  "control step",
               "rail_power_W": "power at the rail at the control step (negative: "
                               "regenerating)",
               "rail_energy_J": "traction work at the rail since the start",
               "regenerated_J": "regenerated work at the rail since the start"}
    step = staticmethod(battery_step)
    rates = staticmethod(battery_rates)
    initial = staticmethod(battery_initial)
    check_params = staticmethod(battery_check)
    report = staticmethod(battery_report)


@hookimpl
def rrs_vehicle_types():
    """The diesel-electric and battery-electric locomotives."""
    return [DieselElectric, BatteryElectric]
