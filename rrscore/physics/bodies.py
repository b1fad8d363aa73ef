"""Vehicle bodies: the forces on each body as a whole, and its motion under them.

``M_i a_i = F_i - R_i d_i``: ``F`` collects the signed forces (the plugin's held body force
and drive through rolling axles, gravity along the grade, air with wind, the couplers,
slipping wheels' rail forces), ``R >= 0`` the Coulomb-like resistances (running, curve and
starting resistance, brakes and the plugin's ``q_r``, locked wheels), acting against the
direction of motion ``d_i``. Resistances never reverse motion:

* The direction a resistance acts in is a mode held over each step: the sign of the
  velocity at the step's start. The right-hand side is smooth within a step, even one
  that would carry ``v`` through zero; that crossing is an event (``standstill``) where
  ``v`` is set to exactly 0. (Taking the sign of ``v`` at every stage instead lets the
  resistance flip between the stages of one step, and a fixed step then misses the stop.)
* At exactly ``v = 0`` the resistance holds the vehicle while ``|F| <= R`` (static
  friction) and only the excess moves it.

A vehicle whose resistance vanishes at standstill (no constant term, no brake) has no
such jump, and takes the sign of ``v`` at every stage.

A rigid train moves as one body, as point-mass simulators treat it: its vehicles'
forces, resistances and effective masses are summed, the Coulomb rule applies to the
sums (a train held by the brakes of a few cars stands still as a whole), every vehicle
takes the one acceleration, and the couplers carry what that takes.

The work of every force is integrated with the motion (:mod:`rrscore.physics.energy`):
the flows per vehicle are written here, where the forces are.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..jit import kernel, law
from .resistance import air_force, gravity_force, quadratic_force, starting_force
from .route import means_under

#: What a vehicle's body is, for the forces on it (one entry per vehicle): half its
#: length, mass (kg, its payload in), weight (N), weight in kN (the unit of specific
#: resistances), the running resistance's ``c0``, ``c1``, ``c2``, the starting
#: resistance's extra force and the speed by which it has blended out, ``rho Cd A / 2``
#: of an explicit air force, the wind along the track, the excess of its tunnel factor
#: over 1, 1 where its curve resistance is AREA's (else 700/R), and the inverse of its
#: length.
Bodies = namedtuple("Bodies", ["half", "mass", "weight", "weight_kn", "c0", "c1", "c2", "start0",
                               "start_speed", "half_rho_cd_a", "wind", "tunnel_excess",
                               "area", "inv_length"])

#: What is held over a control step, per vehicle: the signed force of its plugin and its
#: loaded rolling axles (train frame), the resistances its brakes and plugin hold, the
#: same with the running resistance's ``c0``, its effective mass (the rolling axles'
#: ``J/r^2`` added) and its inverse; whether friction can hold it at standstill, and the
#: direction friction acts in, held over each step (``frozen``: held, else the sign of
#: the speed at each stage).
Held = namedtuple("Held", ["force", "resist", "base", "mass", "inv_mass", "friction",
                           "direction", "frozen"])

#: Rows of a body pass's ``flows`` (J/s per vehicle): the work of the drive, the
#: brakes, the resistances, gravity and the air, and the slipping wheels' contact.
DRIVE, BRAKE, RESISTANCE, GRAVITY, AIR, SLIP = range(6)
#: Their names, in that order (the energy account's).
ENERGY_FLOWS = ("drive", "brake", "resistance", "gravity", "air", "slip")


@law
def coulomb(force, resist, direction):  # pragma: no cover (compiled)
    """Net force when a resistance of magnitude ``resist`` opposes the motion
    ``direction`` (a direction or a speed; 0 at rest): moving, ``force - resist *
    sign``; at rest the resistance cancels the force up to its magnitude (static
    friction), so only the excess is left."""
    if direction > 0.0:
        return force - resist
    if direction < 0.0:
        return force + resist
    return force - min(max(force, -resist), resist)


@law
def coulomb_share(direction, force, resist):  # pragma: no cover (compiled)
    """How much of a rigid train's summed resistance opposes its summed force: all of it
    against the motion ``direction``, and, standing, what holds the force, up to all."""
    if direction > 0.0:
        return 1.0
    if direction < 0.0:
        return -1.0
    if resist > 0.0:
        return min(max(force / resist, -1.0), 1.0)
    return 0.0


@kernel
def body_forces(b, held, cf, track, ends, x, v, extra, route, parts, force, resist, flows,
                full):  # pragma: no cover (compiled)
    """Every vehicle's forces but its slipping axles': the held force and resistance (its
    plugin's, its rolling axles' drive and brakes), its couplers' (``cf``, tension +, a
    coupling a vehicle fewer than vehicles: zeros for a rigid train, whose bodies do not
    feel them), gravity, air, running, curve and starting resistance, into the signed
    ``force`` and the magnitudes ``resist``; their work into ``flows`` where ``full``
    (the slipping axles' contact none). ``route`` (4, n): room for the route's means
    under each vehicle (:func:`~rrscore.physics.route.means_under`, its extra rows where
    ``extra``: AREA curves and tunnels); ``parts`` (3, n): room for each vehicle's
    gravity, air force and running resistance."""
    means_under(track, x, b.half, b.inv_length, ends, extra, route)
    n = x.size
    gravity, air, running = parts[0], parts[1], parts[2]
    # loops that each read a few arrays: LLVM runs a loop on vectors only where it can
    # check its arrays apart, and gives up where there are many ("extra" is taken out
    # of them)
    for i in range(n):
        gravity[i] = gravity_force(b.weight[i], route[0, i])
    for i in range(n):
        aero = 1.0 + b.tunnel_excess[i] * route[3, i] if extra else 1.0
        air[i] = air_force(v[i] - b.wind[i], b.half_rho_cd_a[i] * aero)  # (0 without drag)
    for i in range(n):
        aero = 1.0 + b.tunnel_excess[i] * route[3, i] if extra else 1.0
        running[i] = quadratic_force(abs(v[i]), b.c0[i], b.c1[i], b.c2[i] * aero)
    for i in range(n):
        curve = route[2, i] if extra and b.area[i] != 0.0 else route[1, i]
        running[i] = running[i] + curve * b.weight_kn[i]
    for i in range(n):
        running[i] = running[i] + starting_force(abs(v[i]), b.start0[i], b.start_speed[i])
    for i in range(n):
        force[i] = held.force[i] + gravity[i] + air[i]
    for i in range(n):
        resist[i] = held.resist[i] + running[i]
    if full:
        for i in range(n):
            flows[DRIVE, i] = held.force[i] * v[i]
            flows[BRAKE, i] = held.resist[i] * abs(v[i])
        for i in range(n):
            flows[GRAVITY, i] = gravity[i] * v[i]
            flows[AIR, i] = air[i] * v[i]
        for i in range(n):
            flows[RESISTANCE, i] = running[i] * abs(v[i])
            flows[SLIP, i] = 0.0
    # each coupling pulls back on the vehicle ahead and on the one behind (written per
    # vehicle, in the order of a loop over the couplings, so that it runs on vectors)
    if n > 1:
        force[0] -= cf[0]
        for i in range(1, n - 1):
            force[i] = (force[i] + cf[i - 1]) - cf[i]
        force[n - 1] += cf[n - 2]


@kernel
def accelerations(held, v, force, resist, accel):  # pragma: no cover (compiled)
    """Each vehicle's acceleration from its summed ``force`` and ``resist`` (the Coulomb
    rule against the held direction, or the speed's sign)."""
    for i in range(v.size):
        d = held.direction[i] if held.frozen[i] else v[i]
        accel[i] = coulomb(force[i], resist[i], d) * held.inv_mass[i]


@kernel
def rigid_accelerations(held, v, force, resist, accel, carried):  # pragma: no cover
    """A rigid train's one acceleration (into every entry of ``accel``): the Coulomb rule on
    the sums of ``force`` and ``resist`` (the lead's held direction, or its speed's sign),
    each vehicle's share of the resistance in proportion to its own. ``carried``: the
    coupler forces that acceleration takes (tension +): coupling ``j`` pulls back on
    vehicles ``0..j`` as much as their net force exceeds what their own mass needs."""
    n = v.size
    total_force = total_resist = total_mass = 0.0
    for i in range(n):
        total_force += force[i]
        total_resist += resist[i]
        total_mass += held.mass[i]
    d = held.direction[0] if held.frozen[0] else v[0]
    share = coulomb_share(d, total_force, total_resist)
    total_net = 0.0
    for i in range(n):
        force[i] -= resist[i] * share  # now each vehicle's net force
        total_net += force[i]
    # held by friction, the train stands exactly: the nets summed leave a rounding
    # residue, which would move it a hair within a step, its later stages then take the
    # full resistance against that hair, and the standstill event fires every step
    a = 0.0 if d == 0.0 and abs(total_force) <= total_resist else total_net / total_mass
    joint_forces(force, held.mass, a, carried)
    for i in range(n):
        accel[i] = a


@kernel
def joint_forces(net, mass, accel, out):  # pragma: no cover (compiled)
    """The joint forces (tension +) that make every body of a rigid group (in order along
    the track, the first ahead) take the acceleration ``accel`` under its ``net`` force:
    joint ``j`` pulls back on bodies ``0..j`` as much as their net force exceeds what
    their own acceleration needs. ``out`` has a joint fewer than there are bodies."""
    run = 0.0
    for i in range(out.size):
        run += net[i] - mass[i] * accel
        out[i] = run


@kernel
def hold_friction(held, start0, rigid):  # pragma: no cover (compiled)
    """Which vehicles friction can hold at standstill, from their held resistance with
    ``c0`` and their starting resistance: all of a rigid train if any."""
    n = held.friction.size
    holding = 0.0
    for i in range(n):  # (summed, not or-ed: a loop on vectors)
        held.friction[i] = 1.0 if held.base[i] + start0[i] > 0.0 else 0.0
        holding += held.friction[i]
    if rigid and holding > 0.0:
        for i in range(n):
            held.friction[i] = 1.0


@kernel
def hold_directions(held, v):  # pragma: no cover (compiled)
    """The direction friction acts in, held from the speeds ``v`` for the coming steps
    (vehicles that friction can hold, and that move)."""
    for i in range(v.size):
        s = v[i]
        held.direction[i] = 1.0 if s > 0.0 else (-1.0 if s < 0.0 else 0.0)
        held.frozen[i] = 1.0 if held.friction[i] != 0.0 and held.direction[i] != 0.0 else 0.0


@kernel
def standstill(held, v, g):  # pragma: no cover (compiled)
    """The standstill events into ``g``: ``v * direction`` of each vehicle friction holds to
    a direction (it falls through zero as the vehicle stops), 1 elsewhere."""
    for i in range(v.size):
        g[i] = v[i] * held.direction[i] if held.frozen[i] != 0.0 else 1.0


def held_arrays(n: int) -> Held:
    """A fresh :class:`Held` for ``n`` vehicles: nothing applied, unit masses."""
    return Held(np.zeros(n), np.zeros(n), np.zeros(n), np.ones(n), np.ones(n), np.zeros(n),
                np.zeros(n), np.zeros(n))
