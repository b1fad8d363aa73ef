"""ODE solvers as objects with a small step API (in the manner of scipy's ``OdeSolver``).

A solver holds ``t``, ``y`` and the derivative ``f`` at that point. ``step(t_bound)``
advances by one step that does not pass ``t_bound`` and returns ``(success, message)``;
on a numerical failure (step size underflow, a non-finite derivative or state, a
failed linear solve) it returns ``(False, message)`` and leaves ``t, y, f`` at the last
good point. Exceptions raised by the right-hand side itself propagate unchanged.
``dense(t)`` interpolates inside the last step with each method's own continuous
extension, for event location. ``reset`` restarts from a new state after a
discontinuity (a control update, an event). The loop that drives solvers, holds
control inputs and locates events is :mod:`rrscore.integrator`.

Shipped solvers: ``rk4`` (classical fixed step), ``rk45`` (Dormand–Prince 5(4),
adaptive) and ``ros23`` (Rosenbrock 2(3) of ode23s, adaptive, for stiff trains).
The adaptive ones measure the error in the max norm, optionally relative to a
reference motion (``reference``). Plugins add more through ``rrs_solvers``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from numba import njit

from .hookspecs import hookimpl

Rhs = Callable[[float, np.ndarray], np.ndarray]
Reference = Callable[[np.ndarray], np.ndarray]
if TYPE_CHECKING:  # scipy's sparse and linear algebra are imported where the methods
    # that form a Jacobian use them: they cost about 0.3 s at start-up (every `rrs`
    # command, every sweep worker), and rk45 and rk4 need neither
    import scipy.sparse

    Sparsity = scipy.sparse.spmatrix | scipy.sparse.sparray | np.ndarray

#: Smallest step, relative to ``max(1 s, |t|)``, before an adaptive solver gives up.
MIN_STEP = 1e-12


class StepFailure(Exception):
    """A numerical failure inside ``_step``; ``step`` turns it into ``(False, message)``."""


def _finite(a: np.ndarray) -> bool:
    return bool(np.isfinite(a).all())


# Compiled pieces of the explicit step (numba, cached on disk). With a compiled
# right-hand side, numpy's per-call overhead on these whole-state sums was a third of
# a Dormand-Prince step on a long train. They are plain loops, not BLAS: on a long train
# numpy's matrix products start BLAS threads, which on a busy machine made a 10,000-car
# drive a third slower than with one thread.


@njit(cache=True)
def _stage_state(y, h, coef, ks, m):  # pragma: no cover (compiled)
    """``y + h * (coef[:m] @ ks[:m])``, and whether every entry of it and of the stage
    ``ks[m - 1]`` it is the first to use is finite."""
    n = y.size
    for c in range(n):
        if not np.isfinite(ks[m - 1, c]):
            return np.empty(0), False
    acc = np.zeros(n)
    for j in range(m):  # row by row: the stages are rows of ks
        a = coef[j]
        for c in range(n):
            acc[c] += a * ks[j, c]
    finite = True
    for c in range(n):
        v = y[c] + h * acc[c]
        acc[c] = v
        finite = finite and np.isfinite(v)
    return acc, finite


@njit(cache=True)
def _weighted(h, coef, ks):  # pragma: no cover (compiled)
    """``h * (coef @ ks)``: the embedded error estimate from the stages."""
    out = np.zeros(ks.shape[1])
    for j in range(coef.size):
        a = coef[j]
        for c in range(out.size):
            out[c] += a * ks[j, c]
    for c in range(out.size):
        out[c] *= h
    return out


@njit(cache=True)
def _finite_1d(a):  # pragma: no cover (compiled)
    for v in a:
        if not np.isfinite(v):
            return False
    return True


@njit(cache=True)
def _max_ratio(err, atol, rtol, mag0, y1, ref1):  # pragma: no cover (compiled)
    """``max |err| / (atol + rtol * max(mag0, |y1 - ref1|))`` over entries with
    ``err != 0``."""
    worst = 0.0
    for c in range(err.size):
        a = abs(err[c])
        if a > 0.0:
            r = a / (atol[c] + rtol[c] * max(mag0[c], abs(y1[c] - ref1[c])))
            if not r <= worst:  # NaN wins, as in numpy's max
                worst = r
    return worst


class Solver:
    """Base class of solvers. Subclasses set ``name`` and implement ``_step``.

    :param fun: right-hand side ``f(t, y)``.
    :param t0, y0: initial time (s) and state.
    :param step: fixed step (fixed-step solvers) or first step (adaptive), s.
    :param rtol, atol: tolerances, scalars or arrays shaped like ``y``
        (adaptive solvers; ``atol = inf`` leaves a component uncontrolled).
    :param max_step: largest step an adaptive solver may take, s.
    :param reference: optional ``reference(y)``, a vector shaped like ``y`` subtracted
        from the state before ``rtol`` applies (adaptive solvers): for a train, the
        mean motion, so that relative motions are held to the same accuracy at any speed.
    :param jac_sparsity: structure of ``df/dy`` (a scipy.sparse matrix, or None for
        dense), used by solvers that form a Jacobian (``ros23``); others ignore it. A
        run works it out only for a solver class whose :attr:`uses_jacobian` is true
        (for a long train it costs more than a short drive).

    Attributes: ``t, y, f`` (``f`` is None until the next step computes it),
    ``t_old, y_old, f_old`` (start of the last step), ``h`` (next step size),
    ``nfev`` (right-hand side evaluations), ``nsteps`` (accepted steps),
    ``nrejected`` (rejected trial steps).

    To write a solver, implement ``_step(t, y, f, t_bound) -> (t1, y1, f1)`` for an
    accepted step, raising ``StepFailure`` on a numerical failure, and override
    ``dense`` if the method has a better interpolant than the cubic Hermite.
    """

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    adaptive: ClassVar[bool] = False
    #: Whether the method forms a Jacobian (and so wants ``jac_sparsity``).
    uses_jacobian: ClassVar[bool] = False

    def __init__(self, fun: Rhs, t0: float, y0: np.ndarray, *, step: float = 0.01,
                 rtol: float | np.ndarray = 1e-6, atol: float | np.ndarray = 1e-6,
                 max_step: float = np.inf, reference: Reference | None = None,
                 jac_sparsity: Sparsity | None = None) -> None:
        self.fun = fun
        self.h = float(step)
        self.rtol = rtol
        self.atol = atol
        self.max_step = max_step
        self.reference = reference
        self.jac_sparsity = jac_sparsity
        self.nfev = 0
        self.nsteps = 0
        self.nrejected = 0
        self.reset(t0, y0)

    def _eval(self, t: float, y: np.ndarray) -> np.ndarray:
        self.nfev += 1
        return self.fun(t, y)

    def reset(self, t: float, y: np.ndarray) -> None:
        """Restart at ``(t, y)``; the cached derivative is recomputed on the next step."""
        self.t = float(t)
        self.y = np.array(y, dtype=float)
        self.f: np.ndarray | None = None
        self.t_old = self.t
        self.y_old = self.y
        self.f_old: np.ndarray | None = None
        # (t0, y0, f0, t1, y1, f1, method data) of the last step, for dense output
        self._last: tuple | None = None
        self._pending: Any = None

    def step(self, t_bound: float) -> tuple[bool, str | None]:
        """Advance by one step, not beyond ``t_bound``.

        :return: ``(True, None)``, or ``(False, message)`` on a numerical failure, in
            which case ``t, y, f`` are those before the call.
        :raises ValueError: if ``t_bound`` is not after ``t``.
        """
        if not t_bound > self.t:
            raise ValueError(f"t_bound = {t_bound!r} s is not after t = {self.t!r} s")
        if self.f is None:
            f = self._eval(self.t, self.y)
            if not _finite(f):
                return False, f"non-finite derivative at t = {self.t:.6g} s"
            self.f = f
        t0, y0, f0 = self.t, self.y, self.f
        self._pending = None
        try:
            t1, y1, f1 = self._step(t0, y0, f0, t_bound)
        except StepFailure as exc:
            return False, str(exc)
        self._last = (t0, y0, f0, t1, y1, f1, self._pending)
        self.t_old, self.y_old, self.f_old = t0, y0, f0
        self.t, self.y, self.f = t1, y1, f1
        self.nsteps += 1
        return True, None

    def _step(self, t: float, y: np.ndarray, f: np.ndarray,
              t_bound: float) -> tuple[float, np.ndarray, np.ndarray]:
        raise NotImplementedError

    def dense(self, t: float) -> np.ndarray:
        """State at ``t`` inside the last step taken, by cubic Hermite interpolation.

        Before any step (or after ``reset``) it returns ``y``.
        """
        if self._last is None:
            return self.y.copy()
        t0, y0, f0, t1, y1, f1, _ = self._last
        h = t1 - t0
        s = (t - t0) / h
        h00 = (1 + 2 * s) * (1 - s) ** 2
        h10 = s * (1 - s) ** 2
        h01 = s * s * (3 - 2 * s)
        h11 = s * s * (s - 1)
        return h00 * y0 + h10 * h * f0 + h01 * y1 + h11 * h * f1

    def dense_derivative(self, t: float) -> np.ndarray:
        """Time derivative of :meth:`dense` at ``t`` (``f`` before any step)."""
        if self._last is None:
            return np.array(self.f if self.f is not None else self._eval(self.t, self.y))
        t0, y0, f0, t1, y1, f1, _ = self._last
        h = t1 - t0
        s = (t - t0) / h
        return ((6 * s * s - 6 * s) / h * (y0 - y1) + (3 * s * s - 4 * s + 1) * f0
                + (3 * s * s - 2 * s) * f1)


class RK4(Solver):
    """Classical 4th-order Runge–Kutta with a fixed step (``step``).

    Dense output is the cubic Hermite through both ends and their derivatives: RK4
    has no free continuous extension of its own order, and this is its natural
    third-order interpolant (error O(h^4) inside a step).
    """

    name = "rk4"
    description = "classical Runge-Kutta, fixed step"

    def _stage(self, t: float, y: np.ndarray) -> np.ndarray:
        k = self._eval(t, y)
        if not _finite(k):
            raise StepFailure(f"non-finite derivative at t = {t:.6g} s")
        return k

    def _step(self, t, y, f, t_bound):
        h = min(self.h, t_bound - t)
        k1 = f
        k2 = self._stage(t + h / 2, y + h / 2 * k1)
        k3 = self._stage(t + h / 2, y + h / 2 * k2)
        k4 = self._stage(t + h, y + h * k3)
        y1 = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        t1 = t_bound if t + h >= t_bound else t + h
        if not _finite(y1):
            raise StepFailure(f"non-finite state at t = {t1:.6g} s")
        return t1, y1, self._stage(t1, y1)


class _Adaptive(Solver):
    """Step-size control shared by the adaptive methods.

    The error of a trial step is measured in the max norm: the largest over
    components of ``|err| / (atol + rtol * max(|y0 - ref(y0)|, |y1 - ref(y1)|))``,
    ``ref`` being ``reference`` (zero without it); components with ``atol = inf``
    are uncontrolled. The step is accepted when that is at most 1, and the next one
    is scaled by ``0.9 * err**(-1/(q+1))``, ``q`` the order of the error estimate,
    between 0.2 and 5, and not above 1 right after a rejection (that would invite
    another). A trial with a non-finite stage or a singular matrix is retried with
    half the step. Subclasses implement ``_trial``.

    The max norm holds every component to its own tolerance (an RMS norm lets one
    hard component among many exceed it). The controller suits it as it suited RMS:
    on oscillators, two coupled masses and van der Pol it rejects 0-13 % of trials
    (RMS 0-16 %) for 5-10 % more evaluations than RMS at the same tolerance.
    """

    adaptive = True
    #: Order ``q`` of the error estimate: it is O(h**(q+1)).
    error_order: ClassVar[int] = 4
    SAFETY: ClassVar[float] = 0.9
    MIN_FACTOR: ClassVar[float] = 0.2
    MAX_FACTOR: ClassVar[float] = 5.0

    def _magnitude(self, y: np.ndarray) -> np.ndarray:
        return np.abs(y - self.reference(y) if self.reference is not None else y)

    def _error_norm(self, err: np.ndarray, mag0: np.ndarray, y1: np.ndarray) -> float:
        # an error of 0 counts 0 whatever the scale; under atol = inf any finite error does
        tols = self.__dict__.get("_tols")
        if tols is None or tols[0].size != err.size:
            tols = self._tols = tuple(np.ascontiguousarray(np.broadcast_to(
                np.asarray(a, dtype=float), err.shape)) for a in (self.atol, self.rtol))
        ref1 = self.reference(y1) if self.reference is not None else np.zeros(y1.size)
        return float(_max_ratio(err, *tols, mag0, y1, ref1))

    def _begin(self, t: float, y: np.ndarray, f: np.ndarray) -> None:
        """Prepare a step from ``(t, y)``, before its first trial."""

    def _on_reject(self, t: float, y: np.ndarray, f: np.ndarray) -> None:
        """A trial from ``(t, y)`` failed; called before the next one."""

    def _trial(self, t: float, y: np.ndarray, f: np.ndarray,
               h: float) -> tuple[np.ndarray, np.ndarray, np.ndarray] | str:
        """One trial step of size ``h``: ``(y1, f1, err)``, or why it could not be taken.

        Sets ``self._pending`` to what :meth:`dense` needs if the trial is accepted.
        """
        raise NotImplementedError

    def _step(self, t, y, f, t_bound):
        self._begin(t, y, f)
        mag0 = self._magnitude(y)
        exponent = -1.0 / (self.error_order + 1)
        rejected = False
        h = min(self.h, self.max_step)
        while True:
            last = t + h >= t_bound
            if last:
                h = t_bound - t
            trial = self._trial(t, y, f, h)
            if isinstance(trial, tuple) and not _finite_1d(trial[2].ravel()):
                trial = "non-finite error estimate"
            if isinstance(trial, str):
                why, factor = trial, 0.5
            else:
                y1, f1, err = trial
                why, norm = None, self._error_norm(err, mag0, y1)
                t1 = t_bound if last else t + h
                if norm <= 1.0:
                    if not last:
                        factor = (self.MAX_FACTOR if norm == 0 else
                                  min(self.MAX_FACTOR, self.SAFETY * norm ** exponent))
                        if rejected:
                            factor = min(factor, 1.0)
                        self.h = min(h * factor, self.max_step)
                    return t1, y1, f1
                factor = max(self.MIN_FACTOR, self.SAFETY * norm ** exponent)
            self.nrejected += 1
            rejected = True
            h *= factor
            if h < MIN_STEP * max(1.0, abs(t)):
                detail = f" ({why})" if why else ""
                raise StepFailure(f"step size underflow at t = {t:.6g} s{detail}")
            self._on_reject(t, y, f)


# Dormand–Prince 5(4) tableau (Dormand & Prince 1980).
_DP_C = np.array([0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1, 1])
_DP_A = [
    np.zeros(0),
    [1 / 5],
    [3 / 40, 9 / 40],
    [44 / 45, -56 / 15, 32 / 9],
    [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729],
    [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656],
    [35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84],
]
_DP_A = [np.array(row, dtype=float) for row in _DP_A]
_DP_C_FLOAT = tuple(float(c) for c in _DP_C)  # stage times as Python floats, for speed
_DP_B = np.array([35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0])
_DP_E = _DP_B - np.array(
    [5179 / 57600, 0, 7571 / 16695, 393 / 640, -92097 / 339200, 187 / 2100, 1 / 40]
)
# Continuous extension: y(t0 + s h) = y0 + h * K.T @ (_DP_P @ [s, s^2, s^3, s^4]).
# The order-4 conditions for every s, b(1) = _DP_B, b'(0) = e1 and b'(1) = e7 (the
# interpolant takes f at both ends) and b2 = 0 leave one free parameter (the system
# has rank 27 of 28); Shampine's (1986) value, as in Hairer-Norsett-Wanner's DOPRI5,
# fixes it near the least-squares minimum of the order-5 error terms.
_DP_P = np.array([
    [1, -8048581381 / 2820520608, 8663915743 / 2820520608, -12715105075 / 11282082432],
    [0, 0, 0, 0],
    [0, 131558114200 / 32700410799, -68118460800 / 10900136933, 87487479700 / 32700410799],
    [0, -1754552775 / 470086768, 14199869525 / 1410260304, -10690763975 / 1880347072],
    [0, 127303824393 / 49829197408, -318862633887 / 49829197408,
     701980252875 / 199316789632],
    [0, -282668133 / 205662961, 2019193451 / 616988883, -1453857185 / 822651844],
    [0, 40617522 / 29380423, -110615467 / 29380423, 69997945 / 29380423],
])


@njit(cache=True)
def dp_dense_weights(s):  # pragma: no cover (compiled)
    """The weights of the seven stages in the continuous extension at ``s`` (the step's
    fraction): ``_DP_P @ [s, s^2, s^3, s^4]`` as a plain loop, so the compiled step loop
    (:mod:`rrscore.steploop`) locates events on the very same values."""
    powers = np.array([s, s * s, s ** 3, s ** 4])
    out = np.zeros(7)
    for k in range(7):
        for p in range(4):
            out[k] += _DP_P[k, p] * powers[p]
    return out


def dp_dense(t: float, t0: float, h: float, y0: np.ndarray, ks: np.ndarray) -> np.ndarray:
    """The Dormand-Prince continuous extension at ``t`` in the step of size ``h`` from
    ``(t0, y0)`` whose seven stages are the rows of ``ks``."""
    return y0 + _weighted(h, dp_dense_weights((t - t0) / h), ks)


class DormandPrince45(_Adaptive):
    """Dormand–Prince 5(4): adaptive step with embedded error estimate (as ode45/RK45).

    The 5th-order solution is advanced; the step is accepted when the max norm of
    ``err / (atol + rtol * |y - reference(y)|)`` (the larger of both ends) is at most
    1, and the next one is scaled by ``0.9 * err**(-1/5)`` (between 0.2 and 5).
    Dense output is the method's free 4th-order continuous extension (Shampine),
    from the seven stages of the last step.
    """

    name = "rk45"
    description = "Dormand-Prince 5(4), adaptive with error control"
    error_order = 4

    def _trial(self, t, y, f, h):
        ks = np.empty((7, y.size))
        ks[0] = f
        for i in range(1, 6):
            # the stage state also checks the stage before it (ks[0] = f is checked)
            state, finite = _stage_state(y, h, _DP_A[i], ks, i)
            if not finite and i > 1 and not _finite_1d(ks[i - 1]):
                return "non-finite derivative in the trial step"
            ks[i] = self._eval(t + _DP_C_FLOAT[i] * h, state)
        y1, finite = _stage_state(y, h, _DP_B, ks, 6)
        if not finite:
            if not _finite_1d(ks[5]):
                return "non-finite derivative in the trial step"
            return "non-finite state in the trial step"
        ks[6] = self._eval(t + h, y1)
        if not _finite_1d(ks[6]):
            return "non-finite derivative in the trial step"
        self._pending = (h, ks)
        return y1, ks[6].copy(), _weighted(h, _DP_E, ks)

    def dense(self, t: float) -> np.ndarray:
        """State at ``t`` inside the last step taken, 4th order (``y`` before any step)."""
        if self._last is None:
            return self.y.copy()
        t0, y0, *_, (h, ks) = self._last
        return dp_dense(t, t0, h, y0, ks)

    def dense_derivative(self, t: float) -> np.ndarray:
        """Time derivative of :meth:`dense` at ``t`` (``f`` before any step)."""
        if self._last is None:
            return super().dense_derivative(t)
        t0, *_, (h, ks) = self._last
        s = (t - t0) / h
        return _weighted(1.0, _DP_P @ np.array([1.0, 2 * s, 3 * s * s, 4 * s ** 3]), ks)


def group_columns(sparsity: Sparsity) -> np.ndarray:
    """Colour the columns of a sparsity pattern so that no two of a colour share a row.

    Greedy, in column order: each column takes the smallest colour not used by a
    column it shares a row with. One right-hand side evaluation per colour then
    yields a finite-difference Jacobian.

    :param sparsity: ``(n, n)`` matrix (scipy.sparse or array); nonzeros mark entries
        of ``df/dy`` that may be nonzero.
    :return: colour of each column, integers from 0.
    """
    import scipy.sparse

    pattern = scipy.sparse.csc_matrix(sparsity, dtype=bool)
    pattern.eliminate_zeros()
    by_row = pattern.tocsr()
    n = pattern.shape[1]
    colour = np.full(n, -1, dtype=int)
    for j in range(n):
        rows = pattern.indices[pattern.indptr[j]:pattern.indptr[j + 1]]
        near = np.concatenate([by_row.indices[by_row.indptr[i]:by_row.indptr[i + 1]]
                               for i in rows]) if rows.size else np.zeros(0, dtype=int)
        used = np.unique(colour[near])
        used = used[used >= 0]
        free = np.flatnonzero(np.isin(np.arange(used.size + 1), used, invert=True))
        colour[j] = free[0]
    return colour


# Shampine & Reichelt's 2(3) Rosenbrock pair (MATLAB ode23s).
_ROS_D = 1.0 / (2.0 + np.sqrt(2.0))
_ROS_E32 = 6.0 + np.sqrt(2.0)


class Rosenbrock23(_Adaptive):
    """Rosenbrock 2(3) of Shampine and Reichelt (MATLAB's ode23s): stiff, L-stable.

    With ``W = I - h d J``, ``d = 1/(2 + sqrt 2)``, each step solves three linear
    systems and evaluates ``f`` twice: ``k1 = W\\f0``, ``F1 = f(y0 + h/2 k1)``,
    ``k2 = W\\(F1 - k1) + k1``, ``y1 = y0 + h k2``, ``k3 = W\\(f(y1) - e32 (k2 - F1)
    - 2 (k1 - f0))`` with ``e32 = 6 + sqrt 2``; the error estimate is
    ``h/6 (k1 - 2 k2 + k3)``. The problem is taken as autonomous within a step
    (``df/dt = 0``: the right-hand sides here hold their inputs over a step). Error control as
    :class:`DormandPrince45` (max norm, ``reference``), with ``err**(-1/3)``.
    Dense output: ``y0 + h [s(1-s)/(1-2d) k1 + s(s-2d)/(1-2d) k2]``.

    The Jacobian ``J`` is taken by forward differences (perturbation
    ``sqrt(eps) * max(|y|, 1)``), grouping structurally independent columns of
    ``jac_sparsity`` (:func:`group_columns`) so that it costs one evaluation of ``f``
    per colour (a chain of masses: 6), and is factored by sparse LU; without
    ``jac_sparsity`` it is dense and costs ``n`` evaluations. It is kept across
    accepted steps (the 2nd-order solution is a W-method: its order holds for any
    ``J``) and re-evaluated when ``reset`` is called or a step is rejected with a
    Jacobian from an earlier point; rejected trials from the point where it was
    taken reuse it. ``njev`` counts Jacobians; their evaluations are in ``nfev``;
    ``groups`` holds the colour of each column.
    """

    name = "ros23"
    description = "Rosenbrock 2(3) of ode23s, adaptive, for stiff problems"
    error_order = 2
    uses_jacobian = True

    def __init__(self, fun: Rhs, t0: float, y0: np.ndarray, *, step: float = 0.01,
                 rtol: float | np.ndarray = 1e-6, atol: float | np.ndarray = 1e-6,
                 max_step: float = np.inf, reference: Reference | None = None,
                 jac_sparsity: Sparsity | None = None) -> None:
        super().__init__(fun, t0, y0, step=step, rtol=rtol, atol=atol, max_step=max_step,
                         reference=reference, jac_sparsity=jac_sparsity)
        self.njev = 0
        n = self.y.size
        if self.jac_sparsity is None:
            self.groups: np.ndarray = np.arange(n)
            self._pattern = None
        else:
            import scipy.sparse

            pattern = scipy.sparse.csc_matrix(self.jac_sparsity, dtype=bool)
            if pattern.shape != (n, n):
                raise ValueError(f"jac_sparsity is {pattern.shape}, the state has {n} entries")
            self.groups = group_columns(pattern)
            pattern.eliminate_zeros()
            pattern.sort_indices()
            self._pattern = pattern
            self._nz_col = np.repeat(np.arange(n), np.diff(pattern.indptr))

    def reset(self, t: float, y: np.ndarray) -> None:
        """Restart at ``(t, y)``; the Jacobian is re-evaluated on the next step."""
        super().reset(t, y)
        self._jac: Any = None
        self._jac_fresh = False  # taken at the point the current step starts from
        self._lu: Any = None
        self._lu_key: tuple | None = None

    def _jacobian(self, t: float, y: np.ndarray, f: np.ndarray) -> None:
        self.njev += 1
        delta = (y + np.sqrt(np.finfo(float).eps) * np.maximum(np.abs(y), 1.0)) - y
        ncolours = int(self.groups.max(initial=-1)) + 1
        df = np.empty((ncolours, y.size))
        for c in range(ncolours):
            members = self.groups == c
            df[c] = self._eval(t, y + np.where(members, delta, 0.0)) - f
        if self._pattern is None:
            jac: Any = df.T / delta  # one column per colour, in order
        else:
            p, cols = self._pattern, self._nz_col
            data = df[self.groups[cols], p.indices] / delta[cols]
            jac = type(p)((data, p.indices, p.indptr), shape=p.shape)  # csc, as the pattern
        values = jac if self._pattern is None else jac.data
        if not _finite(values):
            raise StepFailure(f"non-finite Jacobian at t = {t:.6g} s")
        self._jac, self._jac_fresh, self._lu_key = jac, True, None

    def _begin(self, t, y, f):
        if self._jac is None:
            self._jacobian(t, y, f)
        else:
            self._jac_fresh = False

    def _on_reject(self, t, y, f):
        if not self._jac_fresh:
            self._jacobian(t, y, f)

    def _factor(self, h: float) -> bool:
        """Factor ``W = I - h d J``; False if it is singular."""
        key = (h, self.njev)
        if self._lu_key == key:
            return True
        self._lu_key = None
        import scipy.linalg
        import scipy.sparse
        import scipy.sparse.linalg

        n = self.y.size
        if self._pattern is None:
            w = np.eye(n) - (h * _ROS_D) * self._jac
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
                lu = scipy.linalg.lu_factor(w, check_finite=False)
            if not _finite(lu[0]) or np.any(np.diag(lu[0]) == 0):
                return False
            self._lu = lambda b: scipy.linalg.lu_solve(lu, b, check_finite=False)
        else:
            w = scipy.sparse.identity(n, format="csc") - (h * _ROS_D) * self._jac
            try:
                lu = scipy.sparse.linalg.splu(w.tocsc())
            except RuntimeError:  # "Factor is exactly singular"
                return False
            self._lu = lu.solve
        self._lu_key = key
        return True

    def _trial(self, t, y, f, h):
        if not self._factor(h):
            return "singular iteration matrix"
        solve = self._lu
        k1 = solve(f)
        f1 = self._eval(t + h / 2, y + h / 2 * k1)
        if not _finite(f1):
            return "non-finite derivative in the trial step"
        k2 = solve(f1 - k1) + k1
        y1 = y + h * k2
        if not _finite(y1):
            return "non-finite state in the trial step"
        f2 = self._eval(t + h, y1)
        if not _finite(f2):
            return "non-finite derivative in the trial step"
        k3 = solve(f2 - _ROS_E32 * (k2 - f1) - 2 * (k1 - f))
        self._pending = (h, k1, k2)
        return y1, f2, h / 6 * (k1 - 2 * k2 + k3)

    def dense(self, t: float) -> np.ndarray:
        """State at ``t`` inside the last step taken, 2nd order (``y`` before any step)."""
        if self._last is None:
            return self.y.copy()
        t0, y0, *_, (h, k1, k2) = self._last
        s = (t - t0) / h
        return y0 + h * (s * (1 - s) * k1 + s * (s - 2 * _ROS_D) * k2) / (1 - 2 * _ROS_D)

    def dense_derivative(self, t: float) -> np.ndarray:
        """Time derivative of :meth:`dense` at ``t`` (``f`` before any step)."""
        if self._last is None:
            return super().dense_derivative(t)
        t0, *_, (h, k1, k2) = self._last
        s = (t - t0) / h
        return ((1 - 2 * s) * k1 + (2 * s - 2 * _ROS_D) * k2) / (1 - 2 * _ROS_D)


def check_solver_type(cls: type) -> None:
    """Raise TypeError if ``cls`` is not a usable solver class."""
    if not (isinstance(cls, type) and issubclass(cls, Solver)):
        raise TypeError(f"{cls!r} is not a subclass of rrscore.Solver")
    if not cls.name:
        raise TypeError(f"{cls.__qualname__} has no name")


@hookimpl
def rrs_solvers() -> list[type]:
    """The shipped solvers."""
    return [RK4, DormandPrince45, Rosenbrock23]
