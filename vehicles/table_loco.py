"""TableLoco: a locomotive whose tractive and dynamic-brake forces are tables against speed,
as Open Rails describes them (``ORTSMaxTractiveForceCurves``, ``DynamicBrakeForceCurves``);
what ``rrs import openrails`` writes an ``.eng`` as.

A curve is a list of points ``(throttle, speed, force)`` given as three lists of one
entry per point, ``curve_throttle``, ``curve_speed`` and ``curve_force``: the points of
one throttle setting (a notch) follow one another, in increasing speed. At throttle
``l`` and speed ``v`` the force is each notch's curve at ``|v|`` (straight lines between
its points, its first or last force beyond them), interpolated linearly between the two
notches around ``l`` (below the lowest notch, that notch's curve times ``l`` over its
throttle; above the highest, the highest). A locomotive without a curve pulls with
``l * max_force``. Either way ``max_power`` (if above 0) caps the force at ``P / |v|``
(``l * P / |v|`` without a curve, where the throttle scales power as well).

The dynamic brake is the same with ``dynamic_brake_level`` and the ``dynamic_brake_curve_*``
lists (without a curve: ``d * dynamic_brake_force``, capped by ``dynamic_brake_power``),
and nothing below ``dynamic_brake_min_speed``. While it is applied, traction is cut. The
force acts through the driven axles (``drive_axles``, the first ones; 0: all), split
evenly; ``brake_force`` is the locomotive's own brake at full ``brake_level``, on every
axle.
"""

from __future__ import annotations

from rrscore import Control, Param, VehicleModel, hookimpl, kernel, law


@kernel(inline=True)
def points(xs):  # pragma: no cover (compiled)
    """How many points a table row holds (NaN pads the end of a shorter row)."""
    m = xs.size
    while m > 0 and xs[m - 1] != xs[m - 1]:
        m -= 1
    return m


@kernel(inline=True)
def segment_force(speed, vs, fs, start, end):  # pragma: no cover (compiled)
    """The curve through points ``start`` to ``end - 1`` of ``(vs, fs)`` at ``speed``:
    straight lines between them, the end points' forces beyond them."""
    if speed <= vs[start]:
        return fs[start]
    for k in range(start + 1, end):
        if speed <= vs[k]:
            v0, v1 = vs[k - 1], vs[k]
            if v1 <= v0:
                return fs[k]
            return fs[k - 1] + (fs[k] - fs[k - 1]) * (speed - v0) / (v1 - v0)
    return fs[end - 1]


@kernel(inline=True)
def curve_force(level, speed, notches, vs, fs):  # pragma: no cover (compiled)
    """The force of the notched curve ``(notches, vs, fs)`` at throttle ``level`` and
    ``speed`` >= 0 (see the module's docstring); NaN for an empty curve."""
    m = points(notches)
    if m == 0:
        return float("nan")
    below, below_force = -1.0, 0.0  # the highest notch <= level, and its force
    above, above_force = -1.0, 0.0  # the lowest notch >= level
    start = 0
    while start < m:
        end = start + 1
        while end < m and notches[end] == notches[start]:
            end += 1
        notch = notches[start]
        force = segment_force(speed, vs, fs, start, end)
        if notch <= level and (below < 0.0 or notch > below):
            below, below_force = notch, force
        if notch >= level and (above < 0.0 or notch < above):
            above, above_force = notch, force
        start = end
    if below < 0.0:  # under the lowest notch: towards nothing at level 0
        return above_force * level / above if above > 0.0 else above_force
    if above < 0.0 or above == below:
        return below_force
    return below_force + (above_force - below_force) * (level - below) / (above - below)


@law
def power_cap(force, power, speed):  # pragma: no cover (compiled)
    """``force`` capped at ``power / |speed|`` where ``power`` > 0."""
    s = abs(speed)
    if power > 0.0 and s > 0.0:
        return min(force, power / s)
    return force


@law
def ramp(level, up, down, step):  # pragma: no cover (compiled)
    """``level`` moved by ``step`` where the ``up`` key is held and back where ``down`` is,
    kept in [0, 1]."""
    return min(max(level + (up - down) * step, 0.0), 1.0)


@kernel(inline=True)
def tractive_force(veh, i, level):  # pragma: no cover (compiled)
    """Vehicle ``i``'s tractive force (N) at throttle ``level`` and its speed: its curve, or
    ``level * max_force`` without one, capped by ``max_power`` (see the module's
    docstring)."""
    v = veh.v[i]
    force = curve_force(level, abs(v), veh.curve_throttle[i], veh.curve_speed[i],
                        veh.curve_force[i])
    if force != force:  # no curve: the throttle scales force and power alike
        return level * power_cap(veh.max_force[i], veh.max_power[i], v)
    return power_cap(max(force, 0.0), veh.max_power[i], v)


@kernel(inline=True)
def dynamic_force(veh, i, level):  # pragma: no cover (compiled)
    """Vehicle ``i``'s dynamic brake force (N, a magnitude) at dynamic brake ``level`` and
    its speed: its curve, or ``level * dynamic_brake_force`` without one, capped by
    ``dynamic_brake_power``; nothing below ``dynamic_brake_min_speed`` or at level 0."""
    v = veh.v[i]
    s = abs(v)
    if level <= 0.0 or s < veh.dynamic_brake_min_speed[i]:
        return 0.0
    dyn = curve_force(level, s, veh.dynamic_brake_curve_level[i],
                      veh.dynamic_brake_curve_speed[i], veh.dynamic_brake_curve_force[i])
    if dyn != dyn:
        return level * power_cap(veh.dynamic_brake_force[i], veh.dynamic_brake_power[i], v)
    return power_cap(max(dyn, 0.0), veh.dynamic_brake_power[i], v)


@kernel(inline=True)
def move_levels(veh, i, dt):  # pragma: no cover (compiled)
    """Vehicle ``i``'s throttle, dynamic brake and brake levels moved by the keys held
    over a control step ``dt``."""
    rate = veh.level_rate[i] * dt
    veh.throttle[i] = ramp(veh.throttle[i], veh.throttle_up[i], veh.throttle_down[i], rate)
    veh.dynamic_brake_level[i] = ramp(veh.dynamic_brake_level[i], veh.dynamic_brake_up[i],
                                      veh.dynamic_brake_down[i], rate)
    veh.brake_level[i] = ramp(veh.brake_level[i], veh.brake_up[i], veh.brake_down[i], rate)


@kernel(inline=True)
def apply_forces(veh, i, force, dyn):  # pragma: no cover (compiled)
    """Traction ``force`` and dynamic brake ``dyn`` (a magnitude, against the motion) on
    vehicle ``i``'s driven axles, its brake on every axle, and the force signals."""
    v = veh.v[i]
    drive = force - (1.0 if v > 0.0 else (-1.0 if v < 0.0 else 0.0)) * dyn
    k = veh.axles
    driven = k if veh.drive_axles[i] < 1.0 else min(int(veh.drive_axles[i]), k)
    for j in range(1, k + 1):
        veh.q_a[i, j] = drive * veh.wheel_radius[i] / driven if j <= driven else 0.0
        veh.q_r[i, j] = veh.brake_level[i] * veh.brake_force[i] * veh.wheel_radius[i] / k
    veh.traction_force_N[i] = force
    veh.dynamic_brake_force_N[i] = dyn


def step(t, dt, veh):  # pragma: no cover (compiled)
    """The control step: the levels the keys move, traction or the dynamic brake from the
    tables, the locomotive brake."""
    for i in range(veh.count):
        move_levels(veh, i, dt)
        d = veh.dynamic_brake_level[i]
        if d > 0.0:  # the motors generate: no traction
            apply_forces(veh, i, 0.0, dynamic_force(veh, i, d))
        else:
            apply_forces(veh, i, tractive_force(veh, i, veh.throttle[i]), 0.0)


#: The lists that give a curve point by point, each group as long as each other.
CURVES = (("curve_throttle", "curve_speed", "curve_force"),
          ("dynamic_brake_curve_level", "dynamic_brake_curve_speed",
           "dynamic_brake_curve_force"))


def check_curves(params):
    """Each curve's lists are of one length (a point is an entry in each)."""
    for names in CURVES:
        lengths = [len(params[name]) for name in names]
        if len(set(lengths)) > 1:
            found = ", ".join(f"{n} {k}" for n, k in zip(names, lengths, strict=True))
            raise ValueError(f"found lists of {found} entries; expected as many in each "
                             "(one per point of the curve)")


class TableLoco(VehicleModel):
    """Locomotive with tractive-force and dynamic-brake curves against speed (tables, as
    Open Rails gives them), a power limit and a locomotive brake."""

    type_name = "table_loco"
    description = "tractive and dynamic-brake force tables against speed (Open Rails import)"
    params = {
        "max_force": Param("N", 0.0, "tractive force at full throttle where no curve is "
                           "given", min=0.0),
        "max_power": Param("W", 0.0, "power at the rail at most (0: no limit)", min=0.0),
        "curve_throttle": Param(kind=list, item=float, default=[], doc="throttle (0..1) of "
                                "each point of the tractive-force curve; a notch's points "
                                "follow one another", min=0.0, max=1.0),
        "curve_speed": Param("m/s", default=[], kind=list, doc="speed of each point, "
                             "increasing within a notch", min=0.0),
        "curve_force": Param("N", default=[], kind=list, doc="tractive force of each point",
                             min=0.0),
        "dynamic_brake_force": Param("N", 0.0, "dynamic brake force at full level where no "
                                     "curve is given", min=0.0),
        "dynamic_brake_power": Param("W", 0.0, "power the dynamic brake takes at most (0: "
                                     "no limit)", min=0.0),
        "dynamic_brake_min_speed": Param("m/s", 0.0, "below this speed the dynamic brake "
                                         "gives nothing", min=0.0),
        "dynamic_brake_curve_level": Param(kind=list, item=float, default=[], doc="dynamic "
                                           "brake level (0..1) of each point of its curve",
                                           min=0.0, max=1.0),
        "dynamic_brake_curve_speed": Param("m/s", default=[], kind=list, doc="speed of each "
                                           "point of the dynamic brake curve", min=0.0),
        "dynamic_brake_curve_force": Param("N", default=[], kind=list, doc="dynamic brake "
                                           "force of each point", min=0.0),
        "drive_axles": Param(kind=int, default=0, doc="driven axles, the first ones (0: all)",
                             min=0),
        "brake_force": Param("N", 0.0, "locomotive brake force at full brake level", min=0.0),
        "level_rate": Param("1/s", 0.5, "level change per second of key hold", min=0.0),
    }
    keys = {
        "throttle_up": "raise the throttle while held",
        "throttle_down": "lower the throttle while held",
        "dynamic_brake_up": "raise the dynamic brake while held (cuts traction)",
        "dynamic_brake_down": "lower the dynamic brake while held",
        "brake_up": "raise the locomotive brake while held",
        "brake_down": "lower the locomotive brake while held",
    }
    key_bindings = {"throttle_up": "w", "throttle_down": "s", "dynamic_brake_up": "e",
                    "dynamic_brake_down": "x", "brake_up": "b", "brake_down": "n"}
    controls = {
        "throttle": Control("throttle, 0..1 (held until changed)", 0.0, 1.0),
        "dynamic_brake_level": Control("dynamic brake level, 0..1 (held until changed; above "
                                       "0 it cuts traction)", 0.0, 1.0),
        "brake_level": Control("locomotive brake level, 0..1 (held until changed)", 0.0, 1.0),
    }
    signals = {"traction_force_N": "tractive force", "throttle": "throttle",
               "dynamic_brake_force_N": "dynamic brake force (a magnitude, against the "
                                        "motion)"}
    step = staticmethod(step)
    check_params = staticmethod(check_curves)


@hookimpl
def rrs_vehicle_types():
    """TableLoco, for vehicle configs with ``type = "table_loco"``."""
    return [TableLoco]
