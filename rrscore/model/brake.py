"""The air brake's configuration: the ``[vehicle.brake]`` table and its checks.

What each key means is told in :mod:`rrscore.physics.airbrake`, which models the brake
pipe, the driver's brake valve, the distributors and the cylinders from it.
"""

from __future__ import annotations

from .config import Context, Param, Section

#: Shoe materials with a friction formula, by the name vehicle configs use.
SHOE_TYPES = ("cast_iron", "composite")
#: The shoe type whose friction a vehicle config gives as a table against speed.
TABLE = "table"

DISTRIBUTORS = ("none", "freight", "passenger")
MODES = ("empty", "medium", "loaded")
#: Per distributor type: default (application_time, release_time), s.
TIMES = {"freight": (20.0, 45.0), "passenger": (6.0, 15.0)}

BRAKE_SCHEMA = {
    "system": Param(kind=str, default="none", choices=("none", "air"),
                    doc="'air': the vehicle carries the brake pipe (and what follows); "
                        "'none': no air brake equipment"),
    # -- brake pipe
    "pipe_length": Param("m", None, "brake pipe length on the vehicle; default its length",
                         min=0.0, exclusive_min=True),
    "pipe_diameter": Param("m", 0.032, "brake pipe bore", min=0.0, exclusive_min=True),
    "hose_length": Param("m", 0.6, "length of the hose (with its angle cock) at each end",
                         min=0.0),
    "hose_diameter": Param("m", 0.035, "hose bore", min=0.0, exclusive_min=True),
    "extra_volume": Param("m^3", 0.003, "volumes open to the pipe: branch pipe, dirt "
                          "collector, distributor passages", min=0.0),
    "pipe_friction": Param(kind=float, default=0.025, doc="Darcy friction factor of the "
                           "pipe and hoses (turbulent flow)", min=0.0),
    "leak_area": Param("m^2", 0.0, "equivalent hole through which the vehicle's pipe leaks",
                       min=0.0),
    # -- distributor (control valve)
    "distributor": Param(kind=str, default="none", choices=DISTRIBUTORS,
                         doc="distributor type, or 'none'"),
    "mode": Param(kind=str, default="loaded", choices=MODES, doc="load mode"),
    "release": Param(kind=str, default="direct", choices=("direct", "graduated"),
                     doc="'direct' (flat): a small pipe rise releases fully; 'graduated' "
                         "(mountain): the cylinder follows the pipe back up"),
    "max_pressure_empty": Param("Pa", 0.16e6, "cylinder pressure of a full application, "
                                "empty mode", min=0.0),
    "max_pressure_medium": Param("Pa", 0.30e6, "same, medium mode", min=0.0),
    "max_pressure_loaded": Param("Pa", 0.40e6, "same, loaded mode", min=0.0),
    "full_service_reduction": Param("Pa", 0.15e6, "pipe reduction that gives the full "
                                    "cylinder pressure", min=0.0, exclusive_min=True),
    "dead_band": Param("Pa", 0.01e6, "pipe reduction the distributor ignores (slow leaks)",
                       min=0.0),
    "release_step": Param("Pa", 0.015e6, "pipe rise that releases a direct-release "
                          "distributor", min=0.0, exclusive_min=True),
    "application_time": Param("s", None, "time to fill the cylinder to its maximum; default "
                              "20 s freight, 6 s passenger", min=0.0, exclusive_min=True),
    "release_time": Param("s", None, "time to empty it from its maximum; default 45 s "
                          "freight, 15 s passenger", min=0.0, exclusive_min=True),
    "aux_volume": Param("m^3", 0.078, "auxiliary reservoir volume", min=0.0,
                        exclusive_min=True),
    "charging_choke": Param("m", 0.002, "bore of the choke charging the auxiliary reservoir",
                            min=0.0, exclusive_min=True),
    "working_chamber_time": Param("s", 5.0, "time constant of the working chamber's charging",
                                  min=0.0, exclusive_min=True),
    "emergency": Param(kind=bool, default=True, doc="the distributor vents the pipe in an "
                       "emergency (quick action)"),
    "quick_action_time": Param("s", 1.0, "time constant of the quick-action chamber's choke",
                               min=0.0, exclusive_min=True),
    "emergency_threshold": Param("Pa", 0.05e6, "lag of the pipe behind the quick-action "
                                 "chamber that opens the emergency vent", min=0.0,
                                 exclusive_min=True),
    "emergency_vent": Param("m", 0.02, "bore of the emergency vent", min=0.0,
                            exclusive_min=True),
    "vent_hold_time": Param("s", 20.0, "time constant of the quick-action chamber while the "
                            "emergency vent is open (it holds the vent open)", min=0.0,
                            exclusive_min=True),
    # -- brake cylinders and rigging
    "cylinders": Param(kind=int, default=1, doc="brake cylinders (equal) on the vehicle",
                       min=0),
    "cylinder_diameter": Param("m", 0.356, "brake cylinder piston diameter", min=0.0,
                               exclusive_min=True),
    "cylinder_volume": Param("m^3", 0.014, "volume of one cylinder at working stroke",
                             min=0.0, exclusive_min=True),
    "spring_force": Param("N", 1.5e3, "release spring force at working stroke, per cylinder",
                          min=0.0),
    "rigging_ratio": Param(kind=float, default=8.0, doc="lever ratio of the rigging", min=0.0),
    "rigging_efficiency": Param(kind=float, default=0.9, doc="efficiency of the rigging",
                                min=0.0, max=1.0),
    "shoes": Param(kind=int, default=8, doc="brake shoes on the vehicle", min=1),
    "shoe_type": Param(kind=str, default="cast_iron",
                       choices=(*SHOE_TYPES, TABLE),
                       doc="shoe material (the rules' friction formula), or 'table' for "
                           "friction_table"),
    "friction_table": Section({
        "speeds": Param("m/s", [], "speeds of the table's points, increasing (a list, e.g. "
                       "[\"0 km/h\", \"40 km/h\"])", kind=list, min=0.0),
        "friction": Param(kind=list, item=float, default=[],
                          doc="shoe friction coefficient at each speed"),
    }, doc="shoe friction against speed for shoe_type = 'table': linear between the points, "
           "the end values beyond them, independent of the shoe force"),
    # -- locomotive: driver's brake valve and independent brake
    "driver_valve": Param(kind=bool, default=False, doc="a driver's brake valve feeds the "
                          "pipe here (the vehicle model's brake_valve control works it)"),
    "running_pressure": Param("Pa", 0.5e6, "pipe pressure in running position", min=0.0),
    "service_rate": Param("Pa/s", 0.02e6, "equalizing reservoir fall in service position",
                          min=0.0, exclusive_min=True),
    "charging_rate": Param("Pa/s", 0.1e6, "equalizing reservoir rise in release and running "
                           "position", min=0.0, exclusive_min=True),
    "relay_port": Param("m", 0.016, "bore of the relay valve's feed and exhaust port", min=0.0,
                        exclusive_min=True),
    "charging_port": Param("m", 0.025, "bore of the feed port in release and charging "
                           "position", min=0.0, exclusive_min=True),
    "emergency_port": Param("m", 0.025, "bore of the valve's emergency vent", min=0.0,
                            exclusive_min=True),
    "supply_pressure": Param("Pa", 0.8e6, "main reservoir pressure when the vehicle model "
                             "has no main_reservoir state", min=0.0),
    "main_reservoir_volume": Param("m^3", 1.0, "main reservoir volume (the feed draws it "
                                   "down)", min=0.0, exclusive_min=True),
    "independent": Param(kind=bool, default=False, doc="an independent (locomotive) brake "
                         "fills the cylinders from the main reservoir (the vehicle model's "
                         "independent_brake control, 0..1)"),
    "independent_pressure": Param("Pa", 0.4e6, "cylinder pressure of a full independent "
                                  "application", min=0.0),
    "independent_application_time": Param(
        "s", 5.0, "time for the independent brake to fill the cylinders from empty to "
        "independent_pressure (a steady rate); 0: they fill at once, at the control step "
        "the independent_brake control rises", min=0.0),
    "independent_release_time": Param(
        "s", 5.0, "time for the independent brake to empty the cylinders from "
        "independent_pressure; 0: at once", min=0.0),
}
"""The ``[vehicle.brake]`` table of a vehicle config."""


def check_brake(brake: dict, ctx: Context) -> None:
    """Checks across the keys of one vehicle's ``[vehicle.brake]`` table (``ctx`` its
    place in the config), beyond what the schema checks key by key."""
    table = brake["friction_table"]
    speeds, friction = table["speeds"], table["friction"]
    where = ctx.child("friction_table")
    if brake["shoe_type"] != TABLE:
        if speeds or friction:
            raise where.error(f"found a friction table, but shoe_type is "
                              f"{brake['shoe_type']!r}; expected shoe_type = 'table' to use it")
        return
    if len(speeds) < 2 or len(friction) != len(speeds):
        raise where.error(f"found {len(speeds)} speeds and {len(friction)} friction values, "
                          f"expected two or more of each, as many of one as of the other")
    if any(b <= a for a, b in zip(speeds, speeds[1:], strict=False)):
        raise where.child("speeds").error(
            f"found {[round(v * 3.6, 3) for v in speeds]} km/h, expected increasing speeds")
    for i, mu in enumerate(friction):
        if not 0.0 < mu <= 1.0:
            raise where.child("friction").child(i).error(
                f"found {mu!r}, expected a friction coefficient > 0 and <= 1")
