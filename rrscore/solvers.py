"""ODE solvers as objects with a small step API (in the manner of scipy's ``OdeSolver``).

A solver holds ``t``, ``y`` and the derivative ``f`` at that point. ``step(t_bound)``
advances by one step that does not pass ``t_bound`` and keeps the previous point,
so :meth:`Solver.dense` can interpolate inside the last step (cubic Hermite) for
event location. ``reset`` restarts from a new state after a discontinuity (a
control update, an event). The loop that drives solvers, holds control inputs
and locates events is :mod:`rrscore.integrator`.

Shipped solvers: ``rk4`` (classical fixed step) and ``rk45`` (Dormand–Prince
5(4), adaptive with error control). Plugins add more through ``rrs_solvers``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import numpy as np

from .hookspecs import hookimpl

Rhs = Callable[[float, np.ndarray], np.ndarray]


class Solver:
    """Base class of solvers. Subclasses set ``name`` and implement ``_step``.

    :param fun: right-hand side ``f(t, y)``.
    :param step: fixed step (fixed-step solvers) or first step (adaptive), s.
    :param rtol, atol: tolerances, scalars or arrays shaped like ``y``
        (adaptive solvers; ``atol = inf`` leaves a component uncontrolled).
    :param max_step: largest step an adaptive solver may take, s.
    """

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    adaptive: ClassVar[bool] = False

    def __init__(self, fun: Rhs, t0: float, y0: np.ndarray, *, step: float = 0.01,
                 rtol: float | np.ndarray = 1e-6, atol: float | np.ndarray = 1e-6,
                 max_step: float = np.inf) -> None:
        self.fun = fun
        self.h = float(step)
        self.rtol = rtol
        self.atol = atol
        self.max_step = max_step
        #: Optional ``crossing(y0, y1) -> bool``: does the step cross a surface where the
        #: right-hand side jumps? An adaptive solver then returns the trial step as it is
        #: (its error estimate means nothing there) and the caller locates the surface.
        self.crossing: Callable[[np.ndarray, np.ndarray], bool] | None = None
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

    def step(self, t_bound: float) -> None:
        """Advance by one step, not beyond ``t_bound``."""
        if self.f is None:
            self.f = self._eval(self.t, self.y)
        t0, y0, f0 = self.t, self.y, self.f
        t1, y1, f1 = self._step(t0, y0, f0, t_bound)
        self.t_old, self.y_old, self.f_old = t0, y0, f0
        self.t, self.y, self.f = t1, y1, f1
        self.nsteps += 1

    def _step(self, t: float, y: np.ndarray, f: np.ndarray,
              t_bound: float) -> tuple[float, np.ndarray, np.ndarray]:
        raise NotImplementedError

    def dense(self, t: float) -> np.ndarray:
        """State at ``t`` inside the last step, by cubic Hermite interpolation."""
        h = self.t - self.t_old
        if h == 0.0:
            return self.y.copy()
        s = (t - self.t_old) / h
        h00 = (1 + 2 * s) * (1 - s) ** 2
        h10 = s * (1 - s) ** 2
        h01 = s * s * (3 - 2 * s)
        h11 = s * s * (s - 1)
        return h00 * self.y_old + h10 * h * self.f_old + h01 * self.y + h11 * h * self.f


class RK4(Solver):
    """Classical 4th-order Runge–Kutta with a fixed step (``step``)."""

    name = "rk4"
    description = "classical Runge-Kutta, fixed step"

    def _step(self, t, y, f, t_bound):
        h = min(self.h, t_bound - t)
        k1 = f
        k2 = self._eval(t + h / 2, y + h / 2 * k1)
        k3 = self._eval(t + h / 2, y + h / 2 * k2)
        k4 = self._eval(t + h, y + h * k3)
        y1 = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        t1 = t_bound if t + h >= t_bound else t + h
        return t1, y1, self._eval(t1, y1)


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
_DP_B = np.array([35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0])
_DP_E = _DP_B - np.array(
    [5179 / 57600, 0, 7571 / 16695, 393 / 640, -92097 / 339200, 187 / 2100, 1 / 40]
)


class DormandPrince45(Solver):
    """Dormand–Prince 5(4): adaptive step with embedded error estimate (as ode45/RK45).

    The step is accepted when the RMS of ``err / (atol + rtol * |y|)`` is at most
    1, and the next one is scaled by ``0.9 * err**(-1/5)`` (between 0.2 and 5).
    """

    name = "rk45"
    description = "Dormand-Prince 5(4), adaptive with error control"
    adaptive = True

    def _step(self, t, y, f, t_bound):
        ks = np.empty((7, y.size))
        ks[0] = f
        h = min(self.h, self.max_step)
        while True:
            last = t + h >= t_bound
            if last:
                h = t_bound - t
            for i in range(1, 7):
                ks[i] = self._eval(t + _DP_C[i] * h, y + h * (_DP_A[i] @ ks[:i]))
            y1 = y + h * (_DP_B[:6] @ ks[:6])
            ks[6] = self._eval(t + h, y1)
            scale = self.atol + self.rtol * np.maximum(np.abs(y), np.abs(y1))
            err = np.sqrt(np.mean(np.square(h * (_DP_E @ ks) / scale)))
            if err <= 1.0:
                factor = 5.0 if err == 0 else min(5.0, 0.9 * err ** -0.2)
                if not last:
                    self.h = min(h * factor, self.max_step)
                return (t_bound if last else t + h), y1, ks[6].copy()
            if self.crossing is not None and self.crossing(y, y1):
                return (t_bound if last else t + h), y1, ks[6].copy()
            self.nrejected += 1
            h *= max(0.2, 0.9 * err ** -0.2)
            if h < 1e-12 * max(1.0, abs(t)):
                raise FloatingPointError(f"step size underflow at t = {t:.6g} s")


def check_solver_type(cls: type) -> None:
    """Raise TypeError if ``cls`` is not a usable solver class."""
    if not (isinstance(cls, type) and issubclass(cls, Solver)):
        raise TypeError(f"{cls!r} is not a subclass of rrscore.Solver")
    if not cls.name:
        raise TypeError(f"{cls.__qualname__} has no name")


@hookimpl
def rrs_solvers() -> list[type]:
    """The shipped solvers."""
    return [RK4, DormandPrince45]
