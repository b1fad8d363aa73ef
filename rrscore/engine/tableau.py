"""Explicit Runge-Kutta methods as data: a method is its Butcher tableau.

One step function (:mod:`rrscore.engine.stepper`) takes any :class:`Tableau`: the stage
coefficients ``a`` and nodes ``c``, the weights ``b`` of the solution, the weights
``e = b - b_hat`` of the embedded error estimate (none for a fixed-step method) and,
where the method has one, its continuous extension (``dense``, the polynomial in the
step's fraction ``s`` that weighs each stage); without one, the dense output is the
cubic Hermite between the step's ends. A method whose last stage is taken at the
step's end with the weights ``b`` (``fsal``: first same as last) gives the derivative
there for free; any other has it taken once the step is accepted.

The shipped methods are Dormand-Prince 5(4) (``rk45``, with Shampine's fourth-order
continuous extension), Bogacki-Shampine 3(2) (``rk23``) and the classical fixed-step
Runge-Kutta (``rk4``). A plugin adds another by returning a :class:`Tableau` from the
``rrs_solvers`` hook: it runs in the same compiled loop.
"""

from __future__ import annotations

import functools
from collections import namedtuple
from dataclasses import dataclass, field

import numpy as np

from ..model.hookspecs import hookimpl

#: A tableau as the compiled loop takes it: ``c`` (s,), ``a`` (s, s), ``b`` (s,), ``e``
#: (s,), ``dense`` (s, p) (zero columns: Hermite), and the scalars: whether the step is
#: adaptive, whether the last stage is the step's end (FSAL), the order ``q`` of the
#: error estimate (its steps scale by ``err**(-1/(q+1))``), the stages whose derivative
#: the step's end, its dense output or the next step reads (``needed``, 1.0/0.0).
Coefficients = namedtuple("Coefficients", ["c", "a", "b", "e", "dense", "needed", "adaptive",
                                           "fsal", "error_order", "stages"])


@dataclass(frozen=True)
class Tableau:
    """An explicit Runge-Kutta method.

    :param name: what ``solver.method`` calls it.
    :param a: the stage coefficients, row ``i`` the weights of stages ``0..i-1`` in
        stage ``i`` (a ragged lower triangle; row 0 is empty).
    :param b: the weights of the solution.
    :param c: the nodes (defaults to the row sums of ``a``).
    :param b_hat: the weights of the embedded solution of lower order (none: the method
        has a fixed step, ``solver.step``).
    :param error_order: the order ``q`` of the error estimate, ``O(h**(q+1))``.
    :param dense: per stage, the coefficients of ``s, s**2, ...`` in the continuous
        extension ``y(t0 + s h) = y0 + h * sum_i w_i(s) k_i``; none: cubic Hermite.
    """

    name: str
    a: tuple[tuple[float, ...], ...]
    b: tuple[float, ...]
    description: str = ""
    c: tuple[float, ...] | None = None
    b_hat: tuple[float, ...] | None = None
    error_order: int = 1
    dense: tuple[tuple[float, ...], ...] | None = None
    order: int = field(default=0, compare=False)

    def __post_init__(self) -> None:
        s = len(self.b)
        if len(self.a) != s or any(len(row) != i for i, row in enumerate(self.a)):
            raise ValueError(f"tableau {self.name!r}: a must be a lower triangle of "
                             f"{s} rows, row i holding i coefficients")
        if self.c is not None and len(self.c) != s:
            raise ValueError(f"tableau {self.name!r}: c has {len(self.c)} nodes for {s} stages")
        if self.b_hat is not None and len(self.b_hat) != s:
            raise ValueError(f"tableau {self.name!r}: b_hat has {len(self.b_hat)} weights "
                             f"for {s} stages")
        if self.dense is not None and len(self.dense) != s:
            raise ValueError(f"tableau {self.name!r}: dense has {len(self.dense)} rows "
                             f"for {s} stages")

    @property
    def stages(self) -> int:
        """How many stages a step evaluates (an FSAL method's last is the next one's
        first)."""
        return len(self.b)

    @property
    def adaptive(self) -> bool:
        """Whether the step size follows an error estimate (else it is ``solver.step``)."""
        return self.b_hat is not None

    @property
    def fsal(self) -> bool:
        """Whether the last stage is taken at the step's end with the weights ``b``."""
        s = len(self.b)
        last = (*self.a[-1], 0.0)
        return s > 1 and np.allclose(last, self.b, rtol=0, atol=1e-15) and \
            np.isclose(self.nodes()[-1], 1.0) and self.b[-1] == 0.0

    def stability(self, z: np.ndarray | complex) -> np.ndarray | complex:
        """The stability function ``R(z) = 1 + z b^T (I - z A)^-1 1``, a polynomial for an
        explicit method (``A^k`` vanishes from ``k = stages``): a step of ``y' = lambda y``
        multiplies ``y`` by ``R(h lambda)``."""
        s = self.stages
        a = np.zeros((s, s))
        for i, row in enumerate(self.a):
            a[i, :i] = row
        b, power = np.asarray(self.b, dtype=float), np.ones(s)
        coefficients = [1.0]
        for _ in range(s):  # b^T A^(j-1) 1, the coefficient of z^j
            coefficients.append(float(b @ power))
            power = a @ power
        return np.polynomial.polynomial.polyval(z, coefficients)

    @functools.lru_cache(maxsize=32)  # noqa: B019 (tableaus are few, frozen and kept)
    def stability_radius(self, resolution: float = 1e-3, largest: float = 8.0) -> float:
        """The radius of the largest half-disc of the left half-plane (``|z| <= r``,
        ``Re z <= 0``) within which ``|R(z)| <= 1``, to ``resolution`` (at most
        ``largest``): a fixed step ``h`` is stable for every mode whose ``|h lambda|``
        stays within it, whatever its damping (RK4: 2.61, where the imaginary axis alone
        would give 2.83)."""
        r = np.arange(resolution, largest, resolution)
        angles = np.linspace(np.pi / 2, np.pi, 181)
        unstable = np.abs(self.stability(r[None, :] * np.exp(1j * angles)[:, None])) \
            > 1.0 + 1e-12
        first = np.where(unstable.any(axis=1), unstable.argmax(axis=1), r.size)
        k = int(first.min())
        return float(r[k - 1]) if k > 0 else 0.0

    def nodes(self) -> np.ndarray:
        """The nodes ``c`` (the row sums of ``a`` where not given)."""
        if self.c is not None:
            return np.asarray(self.c, dtype=float)
        return np.array([float(sum(row)) for row in self.a])

    def coefficients(self) -> Coefficients:
        """The tableau as the compiled loop takes it."""
        s = self.stages
        a = np.zeros((s, s))
        for i, row in enumerate(self.a):
            a[i, :i] = row
        b = np.asarray(self.b, dtype=float)
        e = np.zeros(s) if self.b_hat is None else b - np.asarray(self.b_hat, dtype=float)
        dense = (np.zeros((s, 0)) if self.dense is None
                 else np.asarray(self.dense, dtype=float).reshape(s, -1))
        # stages whose derivative anything reads beyond the stages after them: the step's
        # end (b), the dense output, and an FSAL method's last stage (the next step's
        # first); an unread stage's energy flows need not be formed
        needed = (b != 0.0) | (dense != 0.0).any(axis=1)
        if self.fsal:
            needed[-1] = True
        return Coefficients(self.nodes(), a, b, e, np.ascontiguousarray(dense),
                            needed.astype(float), self.adaptive, self.fsal,
                            int(self.error_order), s)


#: Dormand & Prince (1980), 5(4), with Shampine's (1986) fourth-order continuous
#: extension, as in Hairer, Norsett & Wanner's DOPRI5.
DORMAND_PRINCE = Tableau(
    "rk45",
    a=((),
       (1 / 5,),
       (3 / 40, 9 / 40),
       (44 / 45, -56 / 15, 32 / 9),
       (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
       (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656),
       (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84)),
    b=(35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0.0),
    b_hat=(5179 / 57600, 0.0, 7571 / 16695, 393 / 640, -92097 / 339200, 187 / 2100,
           1 / 40),
    c=(0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0),
    error_order=4,
    order=5,
    description="Dormand-Prince 5(4), adaptive with error control",
    dense=(
        (1.0, -8048581381 / 2820520608, 8663915743 / 2820520608, -12715105075 / 11282082432),
        (0.0, 0.0, 0.0, 0.0),
        (0.0, 131558114200 / 32700410799, -68118460800 / 10900136933,
         87487479700 / 32700410799),
        (0.0, -1754552775 / 470086768, 14199869525 / 1410260304,
         -10690763975 / 1880347072),
        (0.0, 127303824393 / 49829197408, -318862633887 / 49829197408,
         701980252875 / 199316789632),
        (0.0, -282668133 / 205662961, 2019193451 / 616988883, -1453857185 / 822651844),
        (0.0, 40617522 / 29380423, -110615467 / 29380423, 69997945 / 29380423)),
)

#: Bogacki & Shampine (1989), 3(2), FSAL; dense output: cubic Hermite (its own).
BOGACKI_SHAMPINE = Tableau(
    "rk23",
    a=((), (1 / 2,), (0.0, 3 / 4), (2 / 9, 1 / 3, 4 / 9)),
    b=(2 / 9, 1 / 3, 4 / 9, 0.0),
    b_hat=(7 / 24, 1 / 4, 1 / 3, 1 / 8),
    c=(0.0, 1 / 2, 3 / 4, 1.0),
    error_order=2,
    order=3,
    description="Bogacki-Shampine 3(2), adaptive with error control",
)

#: The classical fourth-order Runge-Kutta method, fixed step (``solver.step``).
CLASSICAL = Tableau(
    "rk4",
    a=((), (1 / 2,), (0.0, 1 / 2), (0.0, 0.0, 1.0)),
    b=(1 / 6, 1 / 3, 1 / 3, 1 / 6),
    c=(0.0, 1 / 2, 1 / 2, 1.0),
    order=4,
    description="classical Runge-Kutta, fixed step",
)


def check_tableau(obj: object) -> None:
    """Raise TypeError if ``obj`` is not a usable solver (a :class:`Tableau`)."""
    if not isinstance(obj, Tableau):
        raise TypeError(f"{obj!r} is not an rrscore.Tableau")
    if not obj.name:
        raise TypeError(f"{obj!r} has no name")


@hookimpl
def rrs_solvers() -> list[Tableau]:
    """The shipped methods: rk45, rk23 and rk4."""
    return [DORMAND_PRINCE, BOGACKI_SHAMPINE, CLASSICAL]
