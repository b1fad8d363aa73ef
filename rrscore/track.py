"""The route a train runs on: a 1-D profile of elements with grades, curves and speed limits.

Positions are metres along the route from its start, increasing in the
direction of travel. Grade, curvature and tunnels act on each vehicle averaged
over its length: the route keeps cumulative integrals of grade (that is,
elevation), of curve resistance (700/R and AREA forms) and of a tunnel
indicator, so the mean over ``[x - L/2, x + L/2]`` is a difference of two
interpolations, exact for a piecewise-constant profile and cheap for whole
arrays of vehicles.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .config import Param, TableList
from .resistance import CHORD_HALF_M, curve_specific, curve_specific_area

try:  # the C routines behind np.interp, without its argument checks (hot path)
    from numpy._core.multiarray import interp as _interp
    from numpy._core.multiarray import interp_complex as _interp_complex
except ImportError:  # pragma: no cover - other numpy layouts
    _interp = _interp_complex = np.interp

ELEMENT_SCHEMA = {
    "length": Param("m", doc="element length", min=0.0, exclusive_min=True),
    "grade": Param("1", 0.0, "rise over run; '+8 permille' climbs in the direction of travel"),
    "radius": Param("m", 0.0, "curve radius; 0 means straight track", min=0.0),
    "speed_limit": Param("m/s", 0.0, "speed limit on the element; 0 means none", min=0.0),
    "tunnel": Param(kind=bool, default=False, doc="the element is in a tunnel"),
}

POINT_SCHEMA = {
    "name": Param(kind=str, doc="name of the point (station, signal, sensor)"),
    "position": Param("m", doc="position along the route"),
}

ROUTE_SCHEMA = {
    "name": Param(kind=str, default="route", doc="route name"),
    "elements": TableList(ELEMENT_SCHEMA, "track elements, in order", min_items=1),
    "points": TableList(POINT_SCHEMA, "named points"),
}
"""The ``[route]`` table of a route file (or a scenario's inline route)."""

#: Far enough beyond either end of the route that no train reaches it; the
#: profile is extended there with the grade of the end element.
_FAR = 1.0e7


@dataclass
class Route:
    """A route profile built from a validated ``[route]`` table."""

    name: str
    starts: np.ndarray  # start position of each element, m
    lengths: np.ndarray
    grades: np.ndarray  # ratio
    radii: np.ndarray  # m, 0 = straight
    speed_limits: np.ndarray  # m/s, 0 = none
    tunnels: np.ndarray  # bool
    points: dict[str, float]

    @classmethod
    def from_config(cls, route: dict) -> Route:
        """Build from the normalised ``route`` table (see ``ROUTE_SCHEMA``)."""
        els = route["elements"]
        lengths = np.array([e["length"] for e in els])
        starts = np.concatenate([[0.0], np.cumsum(lengths)[:-1]])
        obj = cls(
            name=route["name"],
            starts=starts,
            lengths=lengths,
            grades=np.array([e["grade"] for e in els]),
            radii=np.array([e["radius"] for e in els]),
            speed_limits=np.array([e["speed_limit"] for e in els]),
            tunnels=np.array([e["tunnel"] for e in els], dtype=bool),
            points={p["name"]: p["position"] for p in route["points"]},
        )
        obj._build_integrals()
        return obj

    @property
    def length(self) -> float:
        """Total route length, m."""
        return float(self.starts[-1] + self.lengths[-1])

    def _build_integrals(self) -> None:
        # Knots at every element boundary plus far-away end points; the
        # cumulative integrals are piecewise linear between knots, so np.interp
        # evaluates them exactly.
        bounds = np.concatenate([self.starts, [self.length]])
        self._knots = np.concatenate([[-_FAR], bounds, [self.length + _FAR]])
        rate_grade = np.concatenate([[self.grades[0]], self.grades, [self.grades[-1]]])
        rate_curve = np.concatenate([[0.0], curve_specific(self.radii), [0.0]])
        seg = np.diff(self._knots)
        self._elevation = np.concatenate([[0.0], np.cumsum(rate_grade * seg)])
        self._curve_cum = np.concatenate([[0.0], np.cumsum(rate_curve * seg)])
        self._elevation -= np.interp(0.0, self._knots, self._elevation)
        # Both integrals in one complex table: one interpolation serves grade and curve.
        self._both = self._elevation + 1j * self._curve_cum

        # AREA curve resistance has no chord-definition degree below R = 15.24 m, and
        # curve_specific_area raises there. A route is still valid for 700/R vehicles, so
        # such elements get a placeholder 0 here and check_area_curves() refuses them for
        # AREA vehicles (the dynamics checks in refresh(), never in the right-hand side).
        r = np.abs(self.radii)
        straight = (r == 0.0) | np.isinf(r)
        self.area_undefined = np.flatnonzero(~straight & ~(r >= CHORD_HALF_M))
        area = curve_specific_area(np.where(straight | (r >= CHORD_HALF_M), r, 0.0))
        rate_area = np.concatenate([[0.0], area, [0.0]])
        # Beyond the ends there is no tunnel: a train running off the route is in open air.
        rate_tunnel = np.concatenate([[0.0], self.tunnels.astype(float), [0.0]])
        self._area_cum = np.concatenate([[0.0], np.cumsum(rate_area * seg)])
        self._tunnel_cum = np.concatenate([[0.0], np.cumsum(rate_tunnel * seg)])
        # Same trick as _both: one complex interpolation serves AREA curves and tunnels,
        # and the dynamics asks for it only when a vehicle needs either.
        self._extra = self._area_cum + 1j * self._tunnel_cum
        #: Any element in a tunnel; without one, tunnel factors never apply.
        self.has_tunnel = bool(self.tunnels.any())

    def _mean(self, cumulative: np.ndarray, x: np.ndarray,
              half_length: np.ndarray) -> np.ndarray:
        """Mean rate of a cumulative table over ``[x - h, x + h]``: a difference of two
        interpolations (complex tables carry two integrals at once)."""
        interp = _interp_complex if np.iscomplexobj(cumulative) else _interp
        k = self._knots
        return (interp(x + half_length, k, cumulative) - interp(x - half_length, k, cumulative)) / (
            2.0 * half_length
        )

    def elevation(self, x: np.ndarray | float) -> np.ndarray:
        """Height of the track at ``x`` relative to the route start, m."""
        return np.interp(x, self._knots, self._elevation)

    def mean_grade(self, x: np.ndarray, half_length: np.ndarray) -> np.ndarray:
        """Grade averaged over ``[x - h, x + h]`` for arrays of vehicles (ratio)."""
        return self._mean(self._elevation, x, half_length)

    def mean_curve_specific(self, x: np.ndarray, half_length: np.ndarray) -> np.ndarray:
        """Curve resistance 700/R (N/kN) averaged over ``[x - h, x + h]``."""
        return self._mean(self._curve_cum, x, half_length)

    def mean_grade_and_curve(self, x: np.ndarray,
                             half_length: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`mean_grade` and :meth:`mean_curve_specific` together, at half the cost."""
        mean = self._mean(self._both, x, half_length)
        return mean.real, mean.imag

    def check_area_curves(self) -> None:
        """Raise ValueError if a curve is too tight for the AREA formula (R < 15.24 m).

        Call once before using :meth:`mean_area_and_tunnel` for AREA vehicles: on such
        elements its curve part is a placeholder 0, not a resistance.
        """
        if self.area_undefined.size:
            bad = ", ".join(f"{i} (R = {self.radii[i]:g} m)" for i in self.area_undefined[:5])
            raise ValueError(
                f"route {self.name!r}: element {bad} is too tight for AREA curve resistance, "
                f"which needs R >= {CHORD_HALF_M:g} m (100 ft chord); use curve = 'russian'"
            )

    def mean_curve_area(self, x: np.ndarray, half_length: np.ndarray) -> np.ndarray:
        """AREA curve resistance (N/kN, 0.8 lbf/ton per degree) averaged over ``[x - h, x + h]``.

        Raises ValueError if the route has a curve with R < 15.24 m (see
        :meth:`check_area_curves`).
        """
        self.check_area_curves()
        return self._mean(self._area_cum, x, half_length)

    def mean_tunnel_fraction(self, x: np.ndarray, half_length: np.ndarray) -> np.ndarray:
        """Fraction of ``[x - h, x + h]`` that lies in tunnel elements (0 to 1)."""
        return self._mean(self._tunnel_cum, x, half_length)

    def mean_area_and_tunnel(self, x: np.ndarray,
                             half_length: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`mean_curve_area` and :meth:`mean_tunnel_fraction` in one interpolation.

        The hot-path form: it does not check the radii, so call :meth:`check_area_curves`
        once first if the AREA part is used.
        """
        mean = self._mean(self._extra, x, half_length)
        return mean.real, mean.imag

    def element_index(self, x: float) -> int:
        """Index of the element containing ``x`` (clamped to the route)."""
        i = int(np.searchsorted(self.starts, x, side="right")) - 1
        return min(max(i, 0), len(self.starts) - 1)

    def speed_limit(self, x: float) -> float:
        """Speed limit at ``x``, m/s; ``inf`` where there is none."""
        lim = float(self.speed_limits[self.element_index(x)])
        return lim if lim > 0 else math.inf

    def position_of(self, name: str) -> float:
        """Position of a named point; KeyError if the route has no such point."""
        return self.points[name]
