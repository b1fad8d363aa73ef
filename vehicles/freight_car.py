"""Freight car: no traction; main resistance from its config (Russian rules by axle load),
a hand brake and wheel chocks that the driver program can set."""

from __future__ import annotations

from rrscore import Control, Param, VehicleModel, hookimpl


def step(t, dt, veh):  # pragma: no cover (compiled)
    """The hand brake's torque on every axle, and a chock's friction on the body."""
    k = veh.axles
    for i in range(veh.count):
        torque = min(max(veh.hand_brake[i], 0.0), 1.0) * veh.hand_brake_force[i] \
            * veh.wheel_radius[i]
        for j in range(1, k + 1):
            veh.q_r[i, j] = torque / k
        axle_load = veh.mass[i] * veh.gravity[i] / k
        veh.q_r[i, 0] = (1.0 if veh.chocks[i] > 0.0 else 0.0) * veh.chock_friction[i] * axle_load


class FreightCar(VehicleModel):
    """Unpowered freight car with a hand (parking) brake and wheel chocks.

    A wheel chock (a skid under one wheelset) holds a standing car against any push up
    to the friction it gives, and a car that runs onto it slides the skid along the rail
    at that friction: ``chock_friction`` times the load on one axle, ``m g /
    num_axis``, opposing the motion (a Coulomb resistance on the body, like the hand
    brake). The chocked wheelset is still taken as rolling with the others; its spin
    energy, ``J/r^2`` against the car's mass (0.4 % for a loaded four-axle car), goes
    into the skid's work as the car stops.
    """

    type_name = "freight_car"
    description = "unpowered freight car with a hand brake and wheel chocks"
    params = {
        "hand_brake_force": Param("N", 60e3, "brake force at the rail with the hand brake on",
                                  min=0.0),
        "chock_friction": Param(default=0.2, doc="friction of a wheel chock (skid) sliding "
                                "on the rail, times the load of one axle", min=0.0),
    }
    controls = {"hand_brake": Control("hand brake application, 0 (off) .. 1 (on)", 0.0, 1.0),
                "chocks": Control("wheel chocks under the car: 0 (none) or 1 (one wheelset)",
                                  0.0, 1.0)}
    step = staticmethod(step)


@hookimpl
def rrs_vehicle_types():
    """The freight car, for vehicle configs with ``type = "freight_car"``."""
    return [FreightCar]
