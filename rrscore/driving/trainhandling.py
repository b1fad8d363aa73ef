"""How the built-in driver works a train's brakes: the dynamic brake first, then the air
brake in graduated service applications, watching the reservoirs' recharge.

The driver's speed law (:func:`rrscore.driving.autodriver.decide`) asks for a command
``u`` from -1 (all the braking there is) to 1 (full traction). With ``brakes = "train"``
this module turns a braking command into what a driver does with the handles:

* **The dynamic brake first.** Where a locomotive has one (a ``dynamic_brake_level``
  control), the first :data:`DYNAMIC_SHARE` of the braking command is the dynamic brake
  alone, rising to its full level; the air brake takes only what is asked beyond it.
  Holding a limit on direct-release brakes (not braking down a falling target), the
  dynamic brake stays full while the air is applied, until the train is down to its
  release speed: the air then has that much less to do.
* **Graduated service applications.** The air brake's part sets the brake pipe
  reduction the driver wants, from the smallest that applies the brakes everywhere
  (``min_reduction``) to the full service reduction. The first application is the
  smallest; further reductions follow in steps of :data:`STEP` to twice that, each after
  the brakes have had ``settle`` seconds to act on the last, while the train is no
  nearer its target speed than at the last change or is above a falling target. The
  driver's brake valve is put to service until the equalizing reservoir has fallen by
  the reduction, then to lap (the pipe held there); the driver comes back to the handle
  when the reservoir is due to get there, not a whole decision interval later.
* **Release.** Distributors that release step by step (``release = "graduated"``) are
  released step by step: the reservoir is raised by :data:`STEP` at a time. Distributors
  that release directly (a small rise releases them fully) are released only when no
  braking is asked for and the train is :data:`RELEASE_BAND` below its target, and then
  fully, in release and charging position until the reservoirs have recharged. Where the
  train comes back over its target before they have (a long descent), the driver
  releases lower from then on, the band doubling up to :data:`MAX_RELEASE_BAND`: the
  train then takes longer to run back up to its target, and the reservoirs have that
  time to recharge.
* **Never out of air.** After a release the driver does not apply the air brake again
  until every auxiliary reservoir of the train is back at the pressure a full service
  application needs (``full_service_aux``: the pressure from which filling an empty
  cylinder to its full service pressure leaves the reservoir at that pressure); the
  dynamic brake holds the train meanwhile, where there is one. Only a train running
  :data:`RUNAWAY` above its target gets the smallest application before that.
* **Bail-off.** With ``bail_off`` (the default) it bails off the locomotives' brakes
  while the train's air brake is applied (a ``bail_off`` control): their wheels and
  reservoirs are spared, and the cars and the dynamic brake do the braking.
* **At a stop** it holds the train with a full service application and the independent
  brake, where the locomotive has one.

It is the same function compiled (in the event loop's control steps) and run by Python
(the run's own control steps); :data:`~rrscore.engine.adapters.DRIVER_STATE` holds what it
sets and reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numba import njit

from ..physics.airbrake import LAP, RELEASE, RUNNING, SERVICE
from ..physics.brakingdistance import (
    consist_axles,
    preparation_time,
    stopping_distances,
    train_kind,
)

#: The part of the braking command the dynamic brake takes alone (it is at its full
#: level there); the air brake takes the rest.
DYNAMIC_SHARE = 0.5
#: The smallest change of the brake pipe reduction the driver makes, Pa.
STEP = 10e3
#: Direct-release distributors are released once the train is this far below its
#: target speed (and no braking is asked for), m/s, at first; the band doubles, up to
#: :data:`MAX_RELEASE_BAND`, each time the train comes back over its target before the
#: reservoirs have recharged.
RELEASE_BAND = 1.0
MAX_RELEASE_BAND = 4.0
#: This far above its target speed the train gets the air brake before its reservoirs
#: have recharged, m/s.
RUNAWAY = 0.5
#: The equalizing reservoir within this of the pressure aimed at is there: lap, Pa.
AIM_BAND = 2e3
#: The handle is watched at least this often while the reservoir moves to its aim, s.
WATCH_INTERVAL = 0.05


@njit(cache=True)
def wanted_reduction(u, params):  # pragma: no cover (compiled)
    """The dynamic brake level and the brake pipe reduction (Pa, 0: none) the command ``u``
    asks for (see the module)."""
    p = params[0]
    demand = -u if u < 0.0 else 0.0
    if p.has_dynamic != 0.0:
        dynamic = min(demand / DYNAMIC_SHARE, 1.0)
        air = max(demand - DYNAMIC_SHARE, 0.0) / (1.0 - DYNAMIC_SHARE)
    else:
        dynamic, air = 0.0, demand
    if air <= 0.0:
        return dynamic, 0.0
    return dynamic, p.min_reduction + air * (p.full_reduction - p.min_reduction)


@njit(cache=True)
def next_reduction(want, t, speed, state, params):  # pragma: no cover (compiled)
    """The reduction the driver holds after this decision (``want`` the one the command
    asks for, ``speed`` the lead's): applications, graduated steps and releases as the
    module tells, from the one it holds."""
    s, p = state[0], params[0]
    held = s.reduction
    if t - s.air_changed < p.settle - 1e-9:
        return held  # the brakes are still answering the last change
    if held == 0.0:
        # (not recharged yet: only once the train runs away from its target)
        recharged = s.aux_low >= p.full_service_aux
        if not (want > 0.0 and speed > s.target + (0.0 if recharged else RUNAWAY)):
            return 0.0
        if not recharged:
            # back over the target before the reservoirs recharged: from now on it brakes
            # the train lower before releasing, which leaves them longer to recharge
            s.release_band = min(2.0 * s.release_band, MAX_RELEASE_BAND)
        return p.min_reduction
    # a further application while the train is not coming back to its target, or is
    # above a target that falls (a braking curve)
    gap = speed - s.target
    if want >= held + STEP and (gap >= s.air_gap or (gap > 0.0 and s.target < s.air_target)):
        return min(want, held + 2.0 * STEP, p.full_reduction)
    if p.graduated != 0.0:
        if want <= held - STEP:
            return held - STEP if held - STEP >= p.min_reduction else 0.0
    elif speed < s.target - s.release_band and want == 0.0:
        return 0.0  # direct release: all or nothing, once well below the target
    return held


@njit(cache=True)
def valve_position(state, params):  # pragma: no cover (compiled)
    """The handle position that brings the equalizing reservoir to the held reduction,
    and when to look at it again (inf: not before the next decision)."""
    s, p = state[0], params[0]
    if s.reduction == 0.0:
        charging = s.equalizing < p.running - AIM_BAND or s.aux_low < p.full_service_aux
        return (RELEASE if charging else RUNNING), 1e300
    aim = p.running - s.reduction
    gap = s.equalizing - aim
    if gap > AIM_BAND:
        return SERVICE, max(gap / p.service_rate, WATCH_INTERVAL)
    if gap < -AIM_BAND and p.graduated != 0.0:
        return RUNNING, max(-gap / p.charging_rate, WATCH_INTERVAL)
    return LAP, 1e300


@njit(cache=True)
def work_brakes(u, t, speed, state, params):  # pragma: no cover (compiled)
    """Set the levels for the command ``u`` at ``t`` (traction, dynamic brake, brake valve
    handle, independent brake, bail-off) in the state, the lead at ``speed``; returns
    whether any changed."""
    s = state[0]
    before = (s.command, s.dynamic, s.valve, s.independent, s.bail)
    if s.stopped != 0.0:  # hold the train where it stands
        dynamic, s.independent = 0.0, 1.0
        s.command = 0.0
        if s.reduction < params[0].full_reduction:
            s.reduction, s.air_changed = params[0].full_reduction, t
    else:
        dynamic, want = wanted_reduction(u, params)
        held = next_reduction(want, t, speed, state, params)
        if held != s.reduction:
            s.reduction, s.air_changed = held, t
            s.air_gap, s.air_target = max(speed - s.target, 0.0), s.target
        p = params[0]
        if (p.has_dynamic != 0.0 and p.graduated == 0.0 and s.reduction > 0.0
                and s.target >= s.air_target and speed > s.target - s.release_band):
            # holding a limit on direct-release brakes: the dynamic brake stays on with
            # the air, which then has less to do before the train is down to its release
            dynamic = 1.0
        # (no traction against the air brake)
        s.command = u if u > 0.0 and s.reduction == 0.0 else 0.0
        s.independent = 0.0
    # (at a stop the locomotive's brakes help hold the train)
    bail = params[0].bail_off != 0.0 and s.reduction > 0.0 and s.stopped == 0.0
    s.bail = 1.0 if bail else 0.0
    s.dynamic = dynamic
    return handle(t, state, params) or before != (s.command, s.dynamic, s.valve,
                                                  s.independent, s.bail)


@njit(cache=True)
def handle(t, state, params):  # pragma: no cover (compiled)
    """Put the brake valve handle where the held reduction wants it; come back to it when
    the equalizing reservoir is due at its aim. Returns whether the handle moved."""
    s = state[0]
    position, look = valve_position(state, params)
    if look < 1e299:
        s.next = min(s.next, t + look)
    moved = position != s.valve
    s.valve = position
    return moved


# ----------------------------------------------------------------- what the driver knows
def has_driver_valve(train: Any) -> bool:
    """Whether a vehicle of the train carries a driver's brake valve."""
    return any(c["system"] == "air" and c["driver_valve"] for c in train.brake_configs)


def works_train_brakes(brakes: str, train: Any) -> bool:
    """Whether the driver works the train's brakes (``brakes`` the autodriver's key):
    ``"auto"`` does where the train has a driver's brake valve and vehicles with a
    distributor that carry none (air-braked cars)."""
    if brakes != "auto":
        return brakes == "train"
    cars = any(c["system"] == "air" and c["distributor"] != "none" and not c["driver_valve"]
               for c in train.brake_configs)
    return cars and has_driver_valve(train)


def has_dynamic_brake(train: Any) -> bool:
    """Whether a vehicle of the train has a dynamic brake: a ``dynamic_brake_level``
    control and, where its type declares a ``dynamic_brake_force``, one above zero."""
    for batch in train.batches:
        if "dynamic_brake_level" not in batch.cls.controls:
            continue
        if "dynamic_brake_force" not in batch.cls.params:
            return True
        if np.any(batch.record.row("dynamic_brake_force") > 0.0):
            return True
    return False


def full_service_aux(cfg: Mapping[str, Any]) -> float:
    """The auxiliary reservoir pressure (Pa, gauge) a full service application needs of a
    distributor ``cfg`` (its ``[vehicle.brake]``): filling its empty cylinders (volume
    ``V_c``) to the full pressure ``p_max`` takes ``p_max V_c / V_a`` from the reservoir
    (``V_a``; the air's temperature held), which must be left at ``p_max`` at least:
    ``p_max (1 + V_c / V_a)``."""
    p_max = cfg[f"max_pressure_{cfg['mode']}"]
    return p_max * (1.0 + cfg["cylinders"] * cfg["cylinder_volume"] / cfg["aux_volume"])


def brake_knowledge(cfg: Mapping[str, Any], train: Any) -> dict[str, float]:
    """What the driver knows of the train's brakes (fields of
    :data:`~rrscore.engine.adapters.DRIVER_PARAMS`), from the autodriver's ``cfg`` and the
    vehicles' ``[vehicle.brake]`` tables."""
    valve = next(c for c in train.brake_configs if c["system"] == "air" and c["driver_valve"])
    dists = [c for c in train.brake_configs
             if c["system"] == "air" and c["distributor"] != "none"]
    running = valve["running_pressure"]
    full = max(c["full_service_reduction"] for c in dists)
    # (never above what the running pressure can recharge to: the release memory's band)
    need = min(max(full_service_aux(c) for c in dists), running - min(
        c["dead_band"] for c in dists))
    return {"train_brakes": 1.0, "has_dynamic": float(has_dynamic_brake(train)),
            "running": running, "min_reduction": min(cfg["min_reduction"], full),
            "full_reduction": full, "full_service_aux": need,
            "graduated": float(all(c["release"] == "graduated" for c in dists)),
            "settle": cfg["brake_settle_time"], "service_rate": valve["service_rate"],
            "charging_rate": valve["charging_rate"], "bail_off": float(cfg["bail_off"]),
            "preparation": preparation_time(train_kind(train), consist_axles(train), 0.0,
                                            1.0)}


def stopping_curve(train: Any, share: float, top_speed: float) -> np.ndarray:
    """The driver's stopping curve: rows speed (0 to ``top_speed`` in steps of 0.25 m/s)
    and the distance in which the air brake at ``share`` of its full force stops the train
    from it on the level, by the rules' method
    (:func:`~rrscore.physics.brakingdistance.stopping_distances`)."""
    speeds = np.arange(0.0, top_speed + 0.25, 0.25)
    return np.vstack([speeds, stopping_distances(train, speeds, share)])
