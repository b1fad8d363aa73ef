"""The event loop: steps, error control, dense output, events, control steps, samples.

:func:`advance` integrates a system (:mod:`rrscore.engine.system`) from the time in its
loop state towards ``t_end``, compiled once per system type, and returns to Python only
where Python has something to do. The code it returns says what:

* :data:`DONE`: ``t_end`` reached;
* :data:`CONTROL`: a control time the loop may not take itself (past ``control_last``, or
  its control step handed it back: a stop condition or a driver's action may be due);
  nothing of it is done;
* :data:`EVENT`: an event with an action happened at ``t`` (the loop ended the step
  there); its entries are ``hits[:hit_count]``, the first the one located;
* :data:`CONDITION`: at a restart, condition events hold (an axle driven beyond
  adhesion); their entries likewise;
* :data:`SAMPLES`: the sample buffer is full, or samples were taken and the run wants
  them before the next control step (``python_rows``);
* :data:`FAILED`: a step failed (its size fell below :data:`~rrscore.engine.stepper.
  MIN_STEP` of the time, or its state stopped being finite), or a control step could
  not carry a part of the system on (the air brake's steps failed); the state stands at
  the last good point;
* :data:`STALLED`: no progress in simulated time.

**Events** are located in time on the dense output: after every step the event functions
are compared at both ends; where one crossed, the earliest crossing is found by the
Illinois method and the step is taken again to end there. Kinks of the right-hand side
(a coupler's slack edges) have no action: a step ends on them and the loop goes on. It
also foresees them (:func:`~rrscore.engine.system.kink_bound`), and a step whose only
crossings are kinks in its last :data:`KINK_END` stands as it is. Discontinuities
therefore fall on step boundaries, and the right-hand side is smooth within every step:
the modes that make it jump (friction's direction, rolling or slipping, coupled or not)
change only there.

**Control steps** fall at ``k * control_dt``; the loop takes those up to ``control_last``
itself (:func:`~rrscore.engine.system.control`), and every step ends at the next one.
**Samples** fall at ``k * sample_dt``: each is a row of the system's values
(:func:`~rrscore.engine.system.sample`) and, where the run keeps them, the state's
``formed`` entries, from the dense output or, at a control time, after the control step.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..jit import kernel
from .stepper import MIN_STEP, attempt, copy_ranges, dense_state, step_factor, trial_error
from .system import CONDITION as IS_CONDITION
from .system import FALLING, KINK, commit, control, events, kink_bound, rhs, sample

DONE, CONTROL, EVENT, CONDITION, SAMPLES, FAILED, STALLED = range(7)
#: What :func:`~rrscore.engine.system.control` returns: inputs unchanged, changed (the loop
#: restarts), handed back to Python with nothing done, or failed (done, but a part of the
#: system could not be carried on: the loop returns :data:`FAILED`).
KEPT, CHANGED, HAND_BACK, BROKE = 0, 1, 2, 3

#: Relative precision of event times (fraction of the step in which they fall).
EVENT_RTOL = 1e-7
#: An event function this close to zero, relative to its change over the step that crossed
#: it, is on its surface: acted on now even if the dense output left it a hair before.
ON_SURFACE = 1e-4
#: A step whose only crossings are kinks, all in its last this fraction, stands as it is.
KINK_END = 0.01
#: Iterations of the Illinois method at most.
ILLINOIS_ITERATIONS = 60
#: A drive is stuck when this many passes in a row leave the time where it was, or when
#: this many steps in a row cover less than :data:`MIN_PROGRESS` seconds.
MAX_PASSES_AT_ONE_INSTANT = 500
STALL_WINDOW = 20000
MIN_PROGRESS = 1e-3

#: The loop's scalars, one record (a ``np.recarray`` of one row): the time and the next
#: step's size (or the fixed step); where to stop; the control and sample clocks (index of
#: the next time; the last control index the loop takes itself, -1: none; samples recorded
#: in this call; whether they go to Python before the next control step); whether the
#: derivative at ``t`` is known (else the loop restarts there); the counts; the stall
#: watch; an event the run declined at a step's start (its time and entry: the loop then
#: takes the step whole); whether kinks an event left on their surface are marked in
#: ``landed``; the code and hits of the last call.
LOOP_STATE = np.dtype([
    ("t", "f8"), ("h", "f8"), ("t_end", "f8"), ("max_step", "f8"),
    ("control_dt", "f8"), ("control_next", "i8"), ("control_last", "i8"),
    ("sample_dt", "f8"), ("sample_next", "i8"), ("samples", "i8"), ("python_rows", "i8"),
    ("known", "i8"), ("steps", "i8"), ("rejected", "i8"), ("rhs_count", "i8"),
    ("kinks", "i8"), ("window_t", "f8"), ("window_steps", "i8"), ("passes", "i8"),
    ("declined_t", "f8"), ("declined_entry", "i8"), ("landed", "i8"),
    ("status", "i8"), ("hit_count", "i8"),
])

#: The loop's buffers (:func:`work_for`): the state and its derivative (what the run
#: reads), a trial step's end, the ends of a step taken again, the stages of a step and of
#: a step taken again, a stage's state, the error's scratch rows, the event values at the
#: state, after a step and while locating, the kinks left on their surface (+1 or -1: the
#: side they are taken to be on), the entries hit, a weight per stage, the samples' rows,
#: states and derivatives (of the ``live`` entries).
Work = namedtuple("Work", ["y", "f", "y1", "ya", "yb", "ks", "ks2", "stage", "scratch",
                           "g0", "g1", "g2", "landed", "hits", "weights", "rows", "states",
                           "rates"])

#: A stretch of the solution the loop commits: from ``(t0, y0, f0)`` to ``(t1, y1, f1)``,
#: ``h`` the size of the step it came from, ``ks`` its stages (the method's dense output
#: where it is ``whole``; else the cubic Hermite between the ends).
Segment = namedtuple("Segment", ["t0", "t1", "h", "whole", "y0", "y1", "f0", "f1", "ks"])


def loop_state() -> np.recarray:
    """A fresh loop state: time 0, no control or sample clock, nothing known."""
    st = np.zeros(1, dtype=LOOP_STATE).view(np.recarray)
    st[0].h = 0.01
    st[0].max_step = np.inf
    st[0].control_last = -1
    st[0].declined_t = -1.0
    st[0].declined_entry = -1
    return st


def work_for(size: int, stages: int, events: int, rows: int, columns: int,
             state_rows: int) -> Work:
    """Buffers for a state of ``size`` entries, a method of ``stages``, ``events`` event
    functions at most, and ``rows`` sample rows of ``columns`` values (of them,
    ``state_rows`` keep the state too: 0 where the run wants no states)."""
    m = max(events, 1)
    return Work(np.zeros(size), np.zeros(size), np.zeros(size), np.zeros(size),
                np.zeros(size), np.zeros((stages, size)), np.zeros((stages, size)),
                np.zeros(size), np.zeros((3, size)), np.zeros(m), np.zeros(m), np.zeros(m),
                np.zeros(m, dtype=np.int64), np.zeros(m, dtype=np.int64), np.zeros(stages),
                np.zeros((max(rows, 1), columns)), np.zeros((state_rows, size)),
                np.zeros((state_rows, size)))


# ----------------------------------------------------------------------------- events
@kernel
def crossed(kind, a, b):  # pragma: no cover (compiled)
    """Whether an event function of ``kind`` crossed zero from ``a`` to ``b`` (without
    branches, so that a loop asking it of many runs on vectors)."""
    down = (a > 0.0) & (b < 0.0)
    up = (a < 0.0) & (b > 0.0) & ((kind & 3) != FALLING)
    return down | up


@kernel
def any_crossed(kinds, g0, g1, m, actions_only):  # pragma: no cover (compiled)
    """Whether any of the first ``m`` entries crossed (of the action kinds alone, where
    ``actions_only``): counted, a loop on vectors (as a rule nothing crossed in a step)."""
    every = not actions_only
    count = 0
    for i in range(m):
        count += crossed(kinds[i], g0[i], g1[i]) & (every | ((kinds[i] & 3) != KINK))
    return count > 0


@kernel
def events_at(system, fns, tab, t, seg, w, out):  # pragma: no cover (compiled)
    """The event values at ``t`` within ``seg`` into ``out``: the state on the dense output
    (its ``live`` entries, what event functions read), its derivative linear between the
    segment's ends (as the accelerations a slip margin reads)."""
    dense_state(tab, t, seg.t0, seg.h, seg.y0, seg.y1, seg.f0, seg.f1, seg.ks, seg.whole,
                system.live, w.weights, w.stage)
    frac = (t - seg.t0) / (seg.t1 - seg.t0)
    f = w.scratch[2]
    for r in range(system.live.shape[0]):
        lo, hi = system.live[r, 0], system.live[r, 1]
        a, b, out_f = seg.f0[lo:hi], seg.f1[lo:hi], f[lo:hi]
        for c in range(hi - lo):
            out_f[c] = (1.0 - frac) * a[c] + frac * b[c]
    return events(system, fns, t, w.stage, f, out)


@kernel
def illinois(system, fns, tab, seg, w, j, lo, hi, g_lo, g_hi):  # pragma: no cover (compiled)
    """The bracket ``(lo, hi)`` around the sign change of entry ``j`` shrunk by the
    Illinois method (regula falsi whose end kept twice running has its value halved)
    until it is :data:`EVENT_RTOL` of the step."""
    sign0 = g_lo > 0.0
    tol = EVENT_RTOL * max(hi - lo, 1e-300)
    side = 0
    for _ in range(ILLINOIS_ITERATIONS):
        if hi - lo <= tol or g_hi == g_lo:
            break
        c = hi - g_hi * (hi - lo) / (g_hi - g_lo)
        if not lo < c < hi:
            c = 0.5 * (lo + hi)
        events_at(system, fns, tab, c, seg, w, w.g2)
        gc = w.g2[j]
        if (gc > 0.0) == sign0 and gc != 0.0:  # not crossed yet: the root is in (c, hi]
            lo, g_lo = c, gc
            if side == -1:
                g_hi *= 0.5
            side = -1
        else:
            hi, g_hi = c, gc
            if side == 1:
                g_lo *= 0.5
            side = 1
    return lo, hi


@kernel
def locate(system, fns, tab, seg, w, m):  # pragma: no cover (compiled)
    """The earliest crossing in ``seg`` among the entries that crossed (``w.g0`` before,
    ``w.g1`` after): ``(t, entry)``, ``t`` the upper end of the final bracket (the crossing
    has happened there). The entry with the earliest linear estimate is refined first; if
    another has crossed before the bracket's lower end, that one is refined instead."""
    kinds = system.ev_kind
    best, j = np.inf, 0
    for i in range(m):
        if crossed(kinds[i], w.g0[i], w.g1[i]):
            est = seg.t0 + (seg.t1 - seg.t0) * w.g0[i] / (w.g0[i] - w.g1[i])
            if est < best:
                best, j = est, i
    lo, hi, g_hi = seg.t0, seg.t1, w.g1[j]
    for _ in range(4):  # rarely more than one round
        lo, hi = illinois(system, fns, tab, seg, w, j, lo, hi, w.g0[j], g_hi)
        if lo <= seg.t0:
            break
        events_at(system, fns, tab, lo, seg, w, w.g2)
        earlier = -1
        for i in range(m):
            if earlier < 0 and crossed(kinds[i], w.g0[i], w.g1[i]) \
                    and crossed(kinds[i], w.g0[i], w.g2[i]):
                earlier = i
        if earlier < 0:
            break
        j, g_hi = earlier, w.g2[earlier]
        lo, hi = seg.t0, lo
    return hi, j


@kernel
def settle(system, fns, seg, w, m, j, near_start, st):  # pragma: no cover (compiled)
    """After a step that ended on crossings (or stands over kinks): which entries happened
    at its end. Kinks are counted (``st.kinks``); those on their surface but not through
    it are marked in ``w.landed``, to be taken as beyond it. The action entries go to
    ``w.hits`` (their count is returned). ``w.g0`` becomes the values at the new state."""
    kinds = system.ev_kind
    m_now = events(system, fns, seg.t1, seg.y1, seg.f1, w.g2)
    n = 0
    for i in range(m):
        if not crossed(kinds[i], w.g0[i], w.g1[i]):
            continue
        through = crossed(kinds[i], w.g0[i], w.g2[i])
        on = through or abs(w.g2[i]) <= ON_SURFACE * abs(w.g0[i] - w.g1[i])
        if (near_start and i == j) or on:
            if (kinds[i] & 3) == KINK:
                st.kinks += 1
                if not through:
                    w.landed[i] = 1 if w.g1[i] > 0.0 else -1
                    st.landed = 1
            else:
                w.hits[n] = i
                n += 1
    for i in range(m_now):
        w.g0[i] = w.g2[i]
    put_beyond(w, st, m_now)
    return n


@kernel
def put_beyond(w, st, m):  # pragma: no cover (compiled)
    """Kinks marked as landed on their surface taken as beyond it (so that the next step
    does not find the same crossing again), then unmarked."""
    if not st.landed:
        return
    for i in range(m):
        side = w.landed[i]
        if side != 0:
            w.g0[i] = side * max(abs(w.g0[i]), 1e-300)
            w.landed[i] = 0
    st.landed = 0


@kernel
def hits_at_start(system, fns, t, y, f, w, m, j):  # pragma: no cover (compiled)
    """The action entries that happen at the step's start itself: ``j`` (located there)
    and those on their surface there."""
    kinds = system.ev_kind
    events(system, fns, t, y, f, w.g2)
    w.hits[0] = j
    n = 1
    for i in range(m):
        if i == j or (kinds[i] & 3) == KINK or not crossed(kinds[i], w.g0[i], w.g1[i]):
            continue
        if abs(w.g2[i]) <= ON_SURFACE * abs(w.g0[i] - w.g1[i]):
            w.hits[n] = i
            n += 1
    return n


# ---------------------------------------------------------------------------- samples
#: How :func:`record` takes its sample: on the step's dense output, at the segment's end
#: (after a control step), or there with the system's right-hand side evaluated there
#: last (a restart just now).
DENSE, AT_END, AT_END_EVALUATED = 0, 1, 2


@kernel
def record(system, fns, tab, t, seg, st, w, how):  # pragma: no cover (compiled)
    """The sample at ``t`` into the next row of ``w.rows`` (and of ``w.states`` and
    ``w.rates``): the state there (``how``: :data:`DENSE` ...) and its derivative, from
    which the system forms its row, its right-hand side evaluated there last."""
    r = st.samples
    if how != DENSE:
        y, f = seg.y1, seg.f1
        if how == AT_END:  # (evaluated all the same: see system.sample)
            rhs(system, fns, t, y, w.scratch[2], False)
            st.rhs_count += 1
    else:
        dense_state(tab, t, seg.t0, seg.h, seg.y0, seg.y1, seg.f0, seg.f1, seg.ks,
                    seg.whole, system.formed, w.weights, w.stage)
        y, f = w.stage, w.scratch[2]
        rhs(system, fns, t, y, f, False)
        st.rhs_count += 1
    sample(system, fns, t, y, f, w.rows[r])
    if w.states.shape[0] > 0:
        copy_ranges(w.states[r], y, system.formed)
        copy_ranges(w.rates[r], f, system.live)
    st.samples = r + 1
    st.sample_next += 1


@kernel
def samples_in(system, fns, tab, seg, st, w):  # pragma: no cover (compiled)
    """The samples due within ``seg`` (before its end less 1e-12 s: one at its end is
    taken where the run stands there, after the control step)."""
    if st.sample_dt > 0.0:
        while st.sample_next * st.sample_dt < seg.t1 - 1e-12:
            record(system, fns, tab, st.sample_next * st.sample_dt, seg, st, w, DENSE)


@kernel
def sample_room(st, w):  # pragma: no cover (compiled)
    """How far the next step may go for the sample buffer to hold every sample it takes
    (``inf`` without samples; 0 or less: the buffer must be handed over first)."""
    if st.sample_dt <= 0.0:
        return np.inf
    return (w.rows.shape[0] - st.samples - 2) * st.sample_dt


# ------------------------------------------------------------------------------ steps
@kernel
def step_to(system, fns, tab, st, w, t, y, t_bound, ks, out):  # pragma: no cover (compiled)
    """One accepted step from ``(t, y)``, whose derivative is ``ks[0]``, not past
    ``t_bound``: its end into ``out``, the derivative there into ``ks[-1]`` (taken once
    accepted, for a method that is not FSAL). Returns ``(ok, t1, h)``, ``h`` the size of
    the step taken; ``st.h`` becomes the next one's. Not ok: the step size fell below
    :data:`~rrscore.engine.stepper.MIN_STEP` of the time (or a fixed step's state is not
    finite)."""
    s = tab.stages
    h = min(st.h, st.max_step) if tab.adaptive else st.h
    rejected = False
    while True:
        last = t + h >= t_bound
        if last:
            h = t_bound - t
        finite = attempt(system, fns, tab, t, y, h, ks, w.stage, out)
        st.rhs_count += s - 1
        if not tab.adaptive:
            if not finite:
                return False, t, h
            break
        norm = np.inf
        if finite:
            ok, norm = trial_error(system, fns, tab, h, ks, y, out, w.scratch)
            if not ok:
                norm = np.inf
        if norm <= 1.0:
            if not last:
                st.h = min(h * step_factor(norm, rejected, tab.error_order), st.max_step)
            break
        st.rejected += 1
        rejected = True
        # a trial that is not finite is taken again with half the step
        h *= 0.5 if norm == np.inf else step_factor(norm, rejected, tab.error_order)
        if h < MIN_STEP * max(1.0, abs(t)):
            return False, t, h
    t1 = t_bound if last else t + h
    if not tab.fsal:
        rhs(system, fns, t1, out, ks[s - 1], True)
        st.rhs_count += 1
    return True, t1, h


@kernel
def retake(system, fns, tab, st, w, seg, t_star):  # pragma: no cover (compiled)
    """``seg``'s step taken again from its start to end at ``t_star``, as a rule in one step
    (a step shorter than one just accepted nearly always is): the new segment, whole where
    it is one step, else the cubic Hermite between its ends."""
    s = tab.stages
    ks = w.ks2
    copy_ranges(ks[0], seg.f0, system.formed)
    ta, ya, out = seg.t0, seg.y0, w.ya
    count, h = 0, 0.0
    while ta < t_star:
        ok, tb, h = step_to(system, fns, tab, st, w, ta, ya, t_star, ks, out)
        if not ok:
            return False, seg
        count += 1
        ta = tb
        if ta < t_star:  # another step to go, from this one's end
            copy_ranges(ks[0], ks[s - 1], system.formed)
            ya, out = out, (w.yb if out is w.ya else w.ya)
    return True, Segment(seg.t0, ta, h if count == 1 else ta - seg.t0, count == 1,
                         seg.y0, out, seg.f0, ks[s - 1], ks)


@kernel
def take_step(system, fns, tab, st, w, t, t_target):  # pragma: no cover (compiled)
    """One step from the state towards ``t_target`` with its events: the step committed,
    its samples recorded, the state moved on; returns the loop's code for the run
    (:data:`EVENT`, :data:`FAILED`) or -1 to go on."""
    s = tab.stages
    y, f, ks = w.y, w.f, w.ks
    copy_ranges(ks[0], f, system.formed)
    t_bound = t_target
    if tab.adaptive:
        t_bound = kink_bound(system, fns, t, t_target, min(st.h, st.max_step), y, f, w.g0)
    h_before = st.h
    ok, t1, h = step_to(system, fns, tab, st, w, t, y, t_bound, ks, w.y1)
    if not ok:
        st.h = h_before
        return FAILED
    m = events(system, fns, t1, w.y1, ks[s - 1], w.g1)
    seg = Segment(t, t1, h, True, y, w.y1, ks[0], ks[s - 1], ks)
    n = 0
    if any_crossed(system.ev_kind, w.g0, w.g1, m, False):
        t_star, j = locate(system, fns, tab, seg, w, m)
        kinds = system.ev_kind
        near_start = t_star - t <= EVENT_RTOL * max(1.0, abs(t))
        near_end = (not any_crossed(kinds, w.g0, w.g1, m, True)
                    and t1 - t_star <= KINK_END * (t1 - t))
        declined = st.declined_t == t and st.declined_entry == j
        if near_start and (kinds[j] & 3) != KINK and not declined:
            # the crossing is at the step's start: act there, not a step late
            st.hit_count = hits_at_start(system, fns, t, y, f, w, m, j)
            return EVENT
        if t_star < t1 and not near_start and not near_end:
            ok, seg = retake(system, fns, tab, st, w, seg, t_star)
            if not ok:
                return FAILED
        n = settle(system, fns, seg, w, m, j, near_start, st)
    else:
        for i in range(m):
            w.g0[i] = w.g1[i]
    st.steps += 1
    commit(system, fns, tab, seg, w)
    samples_in(system, fns, tab, seg, st, w)
    copy_ranges(w.y, seg.y1, system.formed)
    copy_ranges(w.f, seg.f1, system.formed)
    st.t = seg.t1
    if n > 0:
        st.hit_count = n
        return EVENT
    return -1


# ------------------------------------------------------------------------------- loop
@kernel
def start(system, fns, st, w):  # pragma: no cover (compiled)
    """A restart at the state (new inputs or modes): the derivative there and the event
    values; the condition events that hold go to ``w.hits`` (their count returned)."""
    t, y = st.t, w.y
    rhs(system, fns, t, y, w.f, True)
    st.rhs_count += 1
    st.known = 1
    m = events(system, fns, t, y, w.f, w.g0)
    n = 0
    for i in range(m):
        if (system.ev_kind[i] & IS_CONDITION) and w.g0[i] < 0.0:
            w.hits[n] = i
            n += 1
    put_beyond(w, st, m)
    return n


@kernel
def stalled(st, t, t_prev):  # pragma: no cover (compiled)
    """Count a pass of the loop at ``t``; whether the run has stopped making progress:
    passes at one instant, or steps covering next to no time."""
    st.passes = st.passes + 1 if t == t_prev else 0
    if t > st.window_t + MIN_PROGRESS:
        st.window_t = t
        st.window_steps = 0
    st.window_steps += 1
    return st.passes >= MAX_PASSES_AT_ONE_INSTANT or st.window_steps >= STALL_WINDOW


@kernel
def advance(system, fns, tab, state, w):  # pragma: no cover (compiled)
    """Integrate ``system`` from ``state.t`` towards ``state.t_end`` (see the module); the
    code returned is also ``state.status``. The state is ``w.y`` and its derivative ``w.f``
    (valid where ``state.known``: else the loop restarts first)."""
    st = state[0]
    st.hit_count = 0
    st.samples = 0
    t_prev = -1.0
    code = -1
    while code < 0:
        t = st.t
        if stalled(st, t, t_prev):
            code = STALLED
            break
        t_prev = t
        dc = st.control_dt
        at_control = dc > 0.0 and abs(st.control_next * dc - t) <= 1e-9 * max(1.0, t)
        if at_control:
            if st.control_next > st.control_last:
                code = CONTROL
                break
            taken = control(system, fns, st, t, w.y)
            if taken == HAND_BACK:
                code = CONTROL
                break
            st.control_next += 1
            if taken == BROKE:
                code = FAILED
                break
            if taken == CHANGED:
                st.known = 0
        how = AT_END
        if not st.known:
            n = start(system, fns, st, w)
            if n > 0:
                st.hit_count = n
                code = CONDITION
                break
            how = AT_END_EVALUATED  # (start's right-hand side at w.y the last evaluated)
        if st.sample_dt > 0.0 and abs(st.sample_next * st.sample_dt - t) <= 1e-9:
            # a sample at a control time (or where a step ended on it): after the control
            # step, from the state itself
            if st.samples >= w.rows.shape[0]:
                code = SAMPLES
                break
            record(system, fns, tab, t, Segment(t, t, 0.0, False, w.y, w.y, w.f, w.f, w.ks),
                   st, w, how)
        if t >= st.t_end:
            code = DONE
            break
        if st.python_rows and st.samples > 0:
            code = SAMPLES
            break
        t_target = st.t_end if dc <= 0.0 else min(st.t_end, st.control_next * dc)
        room = sample_room(st, w)
        if room < t_target - t:  # hand the samples over; with none to hand, a shorter step
            if st.samples > 0 or room <= 0.0:
                code = SAMPLES
                break
            t_target = t + room
        code = take_step(system, fns, tab, st, w, t, t_target)
    st.status = code
    return code
