"""Wheel-slip control: a building block any locomotive plugin can use.

A real locomotive's slip control watches each axle and, when one spins (its wheels turn
faster than they roll, past the creep peak), takes torque off that axle's motor, then
gives it back gradually as the axle grips again. Here each axle carries a torque
reduction ``r`` (0: the full command, an axle field), and at every control step of
length ``dt``:

* an axle that slips (its ``axle_slip`` not 0: the engine reports the slip velocity of
  an axle past the creep peak, 0 for one that rolls) has ``r`` raised by
  ``slip_cut_rate * dt``;
* an axle that rolls has ``r`` lowered by ``slip_recovery * dt``, to 0 at least;

and the axle's torque is the plugin's command times ``1 - r`` (``r`` kept in [0, 1]).
The cut is fast and the recovery slow, so an axle on a poor rail spends little time
slipping and pulls close to its adhesion limit, the torque searching just under it.
Where no axle slips ``r`` stays 0 and the torques are the plugin's, unchanged.

A plugin uses it with :data:`SLIP_PARAMS` in its ``params``, :data:`SLIP_AXLE_FIELDS` in
its ``axle_fields``, and :func:`control_slip` after it has set ``q_a`` in its step.
"""

from __future__ import annotations

from rrscore import Param, kernel, law

#: The slip controller's parameters, for a plugin's ``params``.
SLIP_PARAMS = {
    "slip_control": Param(kind=bool, default=True, doc="wheel-slip control: take torque "
                          "off an axle while it slips, give it back as it grips"),
    "slip_cut_rate": Param("1/s", 0.5, "fraction of an axle's torque command taken off "
                           "per second while it slips", min=0.0),
    "slip_recovery": Param("1/s", 0.02, "fraction of an axle's torque command given back "
                           "per second while it rolls", min=0.0),
}

#: The slip controller's per-axle state, for a plugin's ``axle_fields``.
SLIP_AXLE_FIELDS = {"slip_reduction": "fraction of the axle's torque command the wheel-slip "
                                      "control takes off, 0..1"}


@law
def slip_reduction(reduction, slip, cut_rate, recovery, dt):  # pragma: no cover (compiled)
    """An axle's torque reduction (0..1) after a control step of ``dt``: raised by
    ``cut_rate * dt`` where it slips (``slip``, its slip velocity, not 0), lowered by
    ``recovery * dt`` where it rolls, kept in [0, 1]."""
    if slip != 0.0:
        return min(reduction + cut_rate * dt, 1.0)
    return max(reduction - recovery * dt, 0.0)


@kernel(inline=True)
def control_slip(veh, i, dt):  # pragma: no cover (compiled)
    """Vehicle ``i``'s axle torques ``q_a`` reduced by each axle's slip control (after
    the plugin has set them): the reductions moved by :func:`slip_reduction`, nothing
    where ``slip_control`` is off."""
    if veh.slip_control[i] == 0.0:
        return
    for j in range(veh.axles):
        r = slip_reduction(veh.slip_reduction[i, j], veh.axle_slip[i, j],
                           veh.slip_cut_rate[i], veh.slip_recovery[i], dt)
        veh.slip_reduction[i, j] = r
        veh.q_a[i, j + 1] *= 1.0 - r


@kernel(inline=True)
def control_cut(veh, i):  # pragma: no cover (compiled)
    """Whether the slip control takes torque off any of vehicle ``i``'s axles now."""
    for j in range(veh.axles):
        if veh.slip_reduction[i, j] > 0.0:
            return True
    return False
