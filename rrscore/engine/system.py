"""What the event loop asks of a system: the contract between the numerics and the physics.

A *system* is a named tuple of arrays (its parameters, held inputs and modes) whose
type says which implementation of each function below serves it; ``fns`` is its
plugins' functions (:func:`rrscore.engine.adapters.function_table`), kept apart because
numba types an argument holding function values slowly. The shipped systems
are the multi-body train (:mod:`rrscore.engine.multibody`), the rigid train taken as
one body (:mod:`rrscore.engine.onebody`) and the air brake's pneumatics
(:mod:`rrscore.engine.airsystem`); each registers its implementations when its module
is imported. The stepper and the event loop (:mod:`rrscore.engine.stepper`,
:mod:`rrscore.engine.loop`) call only these functions, so one loop serves all of them,
compiled once per system type.

Every system tuple also has these fields, read directly by the loop:

* ``live``, ``formed``, ``controlled``: rows ``start, stop`` of state entries: those a
  right-hand side reads (a step's inner stages form only these), those a step changes
  (its end forms these; the others stand, or are read off the rest on demand, as a
  rolling wheel's spin), those under error control (finite ``atol``);
* ``atol``, ``rtol``: the tolerances per entry;
* ``ev_kind``: per event function entry, :data:`KINK` (no action: a step ends on it and
  goes on), :data:`FALLING` or :data:`EITHER` (the loop stops there for Python to act),
  plus :data:`CONDITION` (an action event that also holds where its function is below
  zero at a restart).
"""

from __future__ import annotations

from ..jit import generic, kernel

#: Event kinds (``ev_kind`` entries): a kink of the right-hand side, located and stepped
#: over (either direction); an event with an action, counted where its function falls
#: through zero, or where it crosses either way; a flag: also fires where negative at a
#: restart.
KINK, FALLING, EITHER, CONDITION = 0, 1, 2, 4

rhs = generic("rhs", """rhs(system, fns, t, y, dy, full): the derivative of the state ``y`` at
``t`` into ``dy``: every entry of ``formed`` if ``full``, else those of ``live`` alone (a
stage no later sum reads the others of). It must not change the system.""")

events = generic("events", """events(system, fns, t, y, f, g) -> m: the event functions at
``(t, y)`` with derivative ``f`` into ``g[:m]``; their kinds are ``system.ev_kind[:m]``.""")

kink_bound = generic("kink_bound", """kink_bound(system, fns, t, t_bound, h, y, f, g) -> t: the
end for a step from ``t`` of size ``h`` that would meet a kink: just past the time it is
foreseen to be crossed, else ``t_bound`` (``g``: the event values at the step's start).""")

reference = generic("reference", """reference(system, fns, y, ref): the motion the relative
tolerance is measured from, into ``ref`` (the entries under error control).""")

commit = generic("commit", """commit(system, fns, tab, seg, w): after every step the loop commits (a
:class:`~rrscore.engine.loop.Segment`): the modes that follow the state without an event
(the direction friction acts in), the monitors (the largest coupler forces, the named
points passed: ``tab`` and the loop's work ``w`` for the dense output). It must not
change the right-hand side of a moving vehicle. The loop calls it with the event
functions evaluated at the segment's end last, so what they worked out there is at
hand.""")

control = generic("control", """control(system, fns, st, t, y) -> code: the control step at
``t`` (the plugins' control, the built-in driver, placing the inputs; ``st`` the loop's
state): ``KEPT``, ``CHANGED`` or ``HAND_BACK`` (:mod:`rrscore.engine.loop`).""")

sample = generic("sample", """sample(system, fns, t, y, f, row) -> n: the time series' values
at ``(t, y)`` (``f`` the derivative there) into ``row[:n]``; the system's right-hand side
was evaluated at ``(t, y)`` last, so what it worked out there is at hand.""")


# --------------------------------------------------------------- what many systems do
# Implementations a system registers for what it does not have (no events, no kinks, ...).
@kernel
def no_events(sys, fns, t, y, f, g):  # pragma: no cover (compiled)
    """No event functions."""
    return 0


@kernel
def no_kinks(sys, fns, t, t_bound, h, y, f, g):  # pragma: no cover (compiled)
    """No kinks: every step may go to the bound."""
    return t_bound


@kernel
def no_reference(sys, fns, y, ref):  # pragma: no cover (compiled)
    """Every entry held to absolute tolerances from zero."""
    for i in range(ref.size):
        ref[i] = 0.0


@kernel
def nothing_to_commit(sys, fns, tab, seg, w):  # pragma: no cover (compiled)
    """No modes or monitors to follow between the steps."""
    return


@kernel
def no_control(sys, fns, st, t, y):  # pragma: no cover (compiled)
    """No control steps: inputs unchanged (0, the loop's ``KEPT``)."""
    return 0
