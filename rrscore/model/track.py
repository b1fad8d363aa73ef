"""The route a train runs on: a 1-D profile of elements with grades, curves and speed limits.

Positions are metres along the route from its start, increasing in the
direction of travel. Grade, curvature and tunnels act on each vehicle averaged
over its length: the route keeps cumulative integrals of grade (that is,
elevation), of curve resistance (700/R and AREA forms) and of a tunnel
indicator (:class:`Track`), so the mean over ``[x - L/2, x + L/2]`` is a
difference of two lookups (:mod:`rrscore.physics.route`), exact for a
piecewise-constant profile.

Grades may instead come from a vertical profile (``[route.profile]``): points
of elevation joined by straight grades with parabolic vertical curves, or by a
cubic spline, or points of grade joined linearly. Curves may have transition
spirals. Where the grade or the curvature varies, the tables get knots every
``FINE_SPACING`` metres, with the elevation exact at each knot; the mean grade
over a vehicle is then in error by at most ``FINE_SPACING**2 / (8 R L)`` for a
vertical curve of radius ``R`` and a vehicle of length ``L`` (2e-7 for 0.5 m,
R = 10 km, L = 15 m).
"""

from __future__ import annotations

import math
from collections import namedtuple
from dataclasses import dataclass

import numpy as np

from .config import Context, Param, Section, TableList, source_context
from .formulas import CHORD_HALF_M, curve_specific, curve_specific_area

#: A route's cumulative tables as the simulation reads them
#: (:mod:`rrscore.physics.route`): ``knots`` (k,), ``cum`` (4, k) and ``slope`` (4, k) (per
#: interval between knots, 0 past the last) of the columns :data:`ELEVATION` (m),
#: :data:`CURVE` (700/R, N/kN times m), :data:`AREA` (N/kN times m) and :data:`TUNNEL` (m);
#: and the same as ``k + 1`` pieces that cover every position: piece ``j`` holds for
#: ``lo[j] <= x < hi[j]`` (the first from minus infinity to the first knot, the last from
#: the last knot on: the tables constant there), where column ``c`` is ``value[c, j] +
#: rate[c, j] * (x - base[j])``, or as one multiply-add, ``offset[c, j] + rate[c, j] * x``.
#: A lookup from the piece a position was in a moment ago is then two comparisons and a
#: multiply-add.
Track = namedtuple("Track", ["knots", "cum", "slope", "lo", "hi", "base", "value", "rate",
                             "offset"])
ELEVATION, CURVE, AREA, TUNNEL = 0, 1, 2, 3


def track_of(knots: np.ndarray, columns: np.ndarray) -> Track:
    """The :class:`Track` of cumulative ``columns`` (4, k) at ``knots``."""
    knots = np.ascontiguousarray(knots, dtype=float)
    cum = np.ascontiguousarray(columns, dtype=float)
    k = knots.size
    slope = np.zeros_like(cum)
    slope[:, :-1] = np.diff(cum, axis=1) / np.diff(knots)
    lo = np.concatenate([[-np.inf], knots])
    hi = np.concatenate([knots, [np.inf]])
    base = np.concatenate([knots[:1], knots])
    value = np.concatenate([cum[:, :1], cum], axis=1)
    rate = np.concatenate([np.zeros((cum.shape[0], 1)), slope[:, :k - 1],
                           np.zeros((cum.shape[0], 1))], axis=1)
    return Track(knots, cum, slope, lo, hi, base, np.ascontiguousarray(value),
                 np.ascontiguousarray(rate), np.ascontiguousarray(value - rate * base))

#: Steepest grade a route may have (rise over run): beyond rack railways' steepest.
MAX_GRADE = 0.25
#: Longest element and farthest position, m: every route on Earth is shorter.
MAX_LENGTH = 1e8

ELEMENT_SCHEMA = {
    "length": Param("m", doc="element length", min=0.0, exclusive_min=True, max=MAX_LENGTH),
    "grade": Param("1", 0.0, "rise over run; '+8 permille' climbs in the direction of travel",
                   min=-MAX_GRADE, max=MAX_GRADE),
    "radius": Param("m", 0.0, "curve radius; 0 means straight track", min=0.0),
    "degree": Param(kind=float, default=0.0, min=0.0, max=179.0,
                    doc="degree of curve in degrees, US chord definition (a 100 ft chord "
                        "subtends it), instead of radius: R = 50 ft / sin(degree / 2)"),
    "transition": Param("m", 0.0, "length of the transition spiral at each end of the "
                        "curve, inside the element: the curvature rises linearly from 0 "
                        "over it (a clothoid)", min=0.0),
    "speed_limit": Param("m/s", 0.0, "speed limit on the element; 0 means none", min=0.0,
                         max=200.0),
    "tunnel": Param(kind=bool, default=False, doc="the element is in a tunnel"),
}

POINT_SCHEMA = {
    "name": Param(kind=str, doc="name of the point (station, signal, sensor)"),
    "position": Param("m", doc="position along the route", min=-MAX_LENGTH, max=MAX_LENGTH),
}

PROFILE_POINT_SCHEMA = {
    "position": Param("m", doc="position along the route", min=-MAX_LENGTH, max=MAX_LENGTH),
    "elevation": Param("m", None, "height of the track (a point of vertical intersection "
                       "of the straight grades either side)", min=-1e4, max=1e4),
    "grade": Param("1", None, "grade at this position (instead of elevation); grades "
                   "between points are interpolated linearly", min=-MAX_GRADE, max=MAX_GRADE),
    "vertical_curve_radius": Param("m", 0.0, "radius of the parabolic vertical curve "
                                   "centred on this point of elevation; 0 = a sharp change "
                                   "of grade", min=0.0),
}

PROFILE_SCHEMA = {
    "interpolation": Param(kind=str, default="linear", choices=("linear", "spline"),
                           doc="between points of elevation: straight grades with the "
                               "points' vertical curves (linear), or a cubic spline "
                               "through the points, with smooth grade and curvature"),
    "points": TableList(PROFILE_POINT_SCHEMA, "points of the vertical profile, in order of "
                        "position; all give elevation or all give grade"),
}

ROUTE_SCHEMA = {
    "name": Param(kind=str, default="route", doc="route name"),
    "start_chainage": Param("m", 0.0, "the route's kilometre-post reading (chainage) at "
                            "position 0, such as '10 km'; plots show route km = "
                            "(start_chainage + position) / 1000", min=-MAX_LENGTH,
                            max=MAX_LENGTH),
    "chainage_direction": Param(kind=str, default="increasing",
                                choices=("increasing", "decreasing"),
                                doc="how the kilometre posts run as the position grows: "
                                    "'decreasing' where the route runs against them, route "
                                    "km = (start_chainage - position) / 1000"),
    "elements": TableList(ELEMENT_SCHEMA, "track elements, in order", min_items=1),
    "points": TableList(POINT_SCHEMA, "named points"),
    "profile": Section(PROFILE_SCHEMA, "vertical profile; when given, it sets the grades "
                       "and the elements give none"),
}
"""The ``[route]`` table of a route file (or a scenario's inline route)."""

#: Far enough beyond either end of the route that no train reaches it; the
#: profile is extended there with the grade of the end element.
_FAR = 1.0e7

#: Knot spacing where grade or curvature varies along the route (vertical curves,
#: splines, spirals), m.
FINE_SPACING = 0.5


def _context(table: dict, key: str) -> Context:
    """Where ``key`` of a route table came from, for errors (a bare table: ``route``)."""
    if "_source" in table:
        return source_context(table, key)
    return Context(None, "route").child(key)


def radius_of_degree(degree: float) -> float:
    """Radius of a curve of ``degree`` degrees, chord definition (100 ft chord), m."""
    return CHORD_HALF_M / math.sin(math.radians(degree) / 2.0)


def _fine(a: float, b: float) -> np.ndarray:
    """Knots from ``a`` to ``b`` every ``FINE_SPACING`` or closer, both ends included."""
    n = max(1, math.ceil((b - a) / FINE_SPACING))
    return np.linspace(a, b, n + 1)


class _Profile:
    """Elevation along the route from the ``[route.profile]`` table.

    :meth:`elevation` is exact anywhere; ``knots`` are where its grade changes,
    with fine knots where the grade varies continuously; beyond the first and
    last points the end grades continue.
    """

    def __init__(self, table: dict, ctx: Context) -> None:
        pts = table["points"]
        pctx = ctx.child("points")
        if len(pts) < 2:
            raise pctx.error(f"found {len(pts)} points, expected at least 2")
        x = np.array([p["position"] for p in pts])
        if not np.all(np.diff(x) > 0):
            i = int(np.argmin(np.diff(x))) + 1
            raise pctx.child(i).child("position").error(
                f"found {x[i]:g} m after {x[i - 1]:g} m, expected positions that increase")
        has_elev = [p["elevation"] is not None for p in pts]
        for i, p in enumerate(pts):
            if has_elev[i] == (p["grade"] is not None):
                found = "both elevation and grade" if has_elev[i] else "neither"
                raise pctx.child(i).error(f"found {found}, expected elevation or grade")
            if has_elev[i] != has_elev[0]:
                raise pctx.child(i).error(
                    "found a point of another kind than the first, expected all points to "
                    "give elevation or all to give grade")
            r = p["vertical_curve_radius"]
            if r and (not has_elev[0] or table["interpolation"] == "spline"):
                raise pctx.child(i).child("vertical_curve_radius").error(
                    f"found {r:g} m, expected vertical curves only on points of elevation "
                    "with interpolation = 'linear' (elsewhere the grade varies smoothly "
                    "already)")
        spline = table["interpolation"] == "spline"
        # imported on use: only profiles of grade points or splines need it, and it costs
        # 0.2 s at start-up (every `rrs` command, every sweep worker)
        import scipy.interpolate

        self.lo, self.hi = float(x[0]), float(x[-1])
        self._curves: list[tuple[float, float, float, float, float]] = []
        if not has_elev[0]:  # grade points: integrate the grade curve, 0 m at the first
            g = np.array([p["grade"] for p in pts])
            curve = (scipy.interpolate.CubicSpline(x, g) if spline
                     else scipy.interpolate.make_interp_spline(x, g, k=1))
            self._inside = curve.antiderivative()
            self._inside_shift = -float(self._inside(x[0]))
            self.knots = _fine(self.lo, self.hi)
            self.end_grades = (float(g[0]), float(g[-1]))
        elif spline:
            z = np.array([p["elevation"] for p in pts])
            self._inside, self._inside_shift = scipy.interpolate.CubicSpline(x, z), 0.0
            self.knots = _fine(self.lo, self.hi)
            self.end_grades = (float(self._inside(x[0], 1)), float(self._inside(x[-1], 1)))
        else:
            z = np.array([p["elevation"] for p in pts])
            grades = np.diff(z) / np.diff(x)
            knots = [x]
            prev_end = -np.inf
            for i in range(1, len(x) - 1):
                # A parabola of length R |g2 - g1| centred on the point:
                # y = y_a + g1 s + (g2 - g1) s^2 / (2 Lc), s from its start a.
                lc = pts[i]["vertical_curve_radius"] * abs(grades[i] - grades[i - 1])
                if lc == 0.0:
                    continue
                a, b = x[i] - lc / 2, x[i] + lc / 2
                if a < max(prev_end, x[i - 1]) - 1e-9 or b > x[i + 1] + 1e-9:
                    raise pctx.child(i).child("vertical_curve_radius").error(
                        f"found {pts[i]['vertical_curve_radius']:g} m, which needs a vertical "
                        f"curve {lc:g} m long ({a:g} m to {b:g} m), expected it to fit "
                        "between the neighbouring points and their curves")
                prev_end = b
                self._curves.append((a, b, z[i] - grades[i - 1] * lc / 2, grades[i - 1],
                                     (grades[i] - grades[i - 1]) / (2 * lc)))
                knots.append(_fine(a, b))
            self._xz, self._z = x, z
            self._inside, self._inside_shift = self._broken_line, 0.0
            self.knots = np.unique(np.concatenate(knots))
            self.end_grades = (float(grades[0]), float(grades[-1]))
        self.z_lo = float(self._inside(self.lo)) + self._inside_shift
        self.z_hi = float(self._inside(self.hi)) + self._inside_shift

    def _broken_line(self, q: np.ndarray) -> np.ndarray:
        """Straight grades between points of elevation, with their vertical curves."""
        z = np.interp(q, self._xz, self._z)
        for a, b, y_a, g1, c in self._curves:
            s = q - a
            z = np.where((q > a) & (q < b), y_a + g1 * s + c * s * s, z)
        return z

    def elevation(self, q: np.ndarray) -> np.ndarray:
        """Exact elevation at ``q`` (m), the end grades continued beyond the points."""
        q = np.asarray(q, dtype=float)
        z = np.asarray(self._inside(np.clip(q, self.lo, self.hi)), dtype=float)
        z = z + self._inside_shift
        z = np.where(q < self.lo, self.z_lo + self.end_grades[0] * (q - self.lo), z)
        return np.where(q > self.hi, self.z_hi + self.end_grades[1] * (q - self.hi), z)


@dataclass
class Route:
    """A route profile built from a validated ``[route]`` table."""

    name: str
    starts: np.ndarray  # start position of each element, m
    lengths: np.ndarray
    grades: np.ndarray  # ratio (0 where a vertical profile sets the grades)
    radii: np.ndarray  # m, 0 = straight
    speed_limits: np.ndarray  # m/s, 0 = none
    tunnels: np.ndarray  # bool
    points: dict[str, float]
    transitions: np.ndarray | None = None  # spiral length at each end of a curve, m
    profile: _Profile | None = None
    start_chainage: float = 0.0  # kilometre-post reading at position 0, m
    chainage_sign: float = 1.0  # -1: the kilometre posts decrease as the position grows

    @classmethod
    def from_config(cls, route: dict) -> Route:
        """Build from the normalised ``route`` table (see ``ROUTE_SCHEMA``); a
        :class:`~rrscore.errors.ConfigError` names the key of an inconsistent value."""
        els = route["elements"]
        ectx = _context(route, "elements")
        lengths = np.array([e["length"] for e in els])
        radii = np.array([e["radius"] for e in els])
        transitions = np.array([e.get("transition", 0.0) for e in els])
        for i, e in enumerate(els):
            degree = e.get("degree", 0.0)
            if degree:
                if e["radius"]:
                    raise ectx.child(i).child("degree").error(
                        f"found degree = {degree:g} and radius = {e['radius']:g} m, expected "
                        "one of them")
                radii[i] = radius_of_degree(degree)
            if transitions[i] and not radii[i]:
                raise ectx.child(i).child("transition").error(
                    f"found {transitions[i]:g} m on straight track, expected a transition "
                    "only on a curve (radius or degree)")
            if 2 * transitions[i] > lengths[i]:
                raise ectx.child(i).child("transition").error(
                    f"found {transitions[i]:g} m, expected at most half the element "
                    f"({lengths[i] / 2:g} m): a spiral at each end fits inside it")
        profile = None
        if route.get("profile") and route["profile"]["points"]:
            profile = _Profile(route["profile"], _context(route, "profile"))
            for i, e in enumerate(els):
                if e["grade"]:
                    raise ectx.child(i).child("grade").error(
                        f"found {e['grade']:g} with a [route.profile], expected grades from "
                        "one place: the profile or the elements")
        starts = np.concatenate([[0.0], np.cumsum(lengths)[:-1]])
        obj = cls(
            name=route["name"],
            starts=starts,
            lengths=lengths,
            grades=np.array([e["grade"] for e in els]),
            radii=radii,
            speed_limits=np.array([e["speed_limit"] for e in els]),
            tunnels=np.array([e["tunnel"] for e in els], dtype=bool),
            points={p["name"]: p["position"] for p in route["points"]},
            transitions=transitions,
            profile=profile,
            start_chainage=float(route.get("start_chainage", 0.0)),
            chainage_sign=-1.0 if route.get("chainage_direction") == "decreasing" else 1.0,
        )
        obj._build_integrals()
        return obj

    @property
    def length(self) -> float:
        """Total route length, m."""
        return float(self.starts[-1] + self.lengths[-1])

    def _curvature_factor(self, idx: np.ndarray, mid: np.ndarray) -> np.ndarray:
        """Share of each element's full curvature at ``mid``: 0 to 1 along its spirals."""
        if self.transitions is None or not self.transitions.any():
            return np.ones(mid.size)
        t = self.transitions[idx]
        s = mid - self.starts[idx]
        with np.errstate(divide="ignore", invalid="ignore"):
            ramp = np.minimum(s, self.lengths[idx] - s) / t
        return np.where(t > 0, np.clip(ramp, 0.0, 1.0), 1.0)

    def _build_integrals(self) -> None:
        # Knots at every element boundary (and where grade or curvature varies, fine
        # knots) plus far-away end points; each rate is constant, or linear, between
        # knots, so the cumulative integrals are exact there and np.interp reads them.
        bounds = np.concatenate([self.starts, [self.length]])
        inner = [bounds]
        if self.transitions is not None:
            for i in np.flatnonzero(self.transitions > 0):
                a, t, b = self.starts[i], self.transitions[i], bounds[i + 1]
                inner += [_fine(a, a + t), _fine(b - t, b)]
        if self.profile is not None:
            inner.append(self.profile.knots)
        inner = np.unique(np.concatenate(inner))
        self._knots = np.concatenate([[min(inner[0], 0.0) - _FAR], inner,
                                      [max(inner[-1], self.length) + _FAR]])
        seg = np.diff(self._knots)
        mid = 0.5 * (self._knots[:-1] + self._knots[1:])
        on_route = (mid >= 0.0) & (mid <= self.length)
        # Beyond the ends the end elements' grades continue; nothing else does.
        idx = np.clip(np.searchsorted(self.starts, mid, side="right") - 1, 0,
                      len(self.starts) - 1)
        if self.profile is None:
            self._elevation = np.concatenate([[0.0], np.cumsum(self.grades[idx] * seg)])
        else:
            self._elevation = self.profile.elevation(self._knots)
        self._elevation -= np.interp(0.0, self._knots, self._elevation)

        # Curve resistance at each segment's middle: exact for 700/R, whose rate is
        # linear along a spiral; AREA's (0.4 D) is nearly so over a fine segment.
        kappa = np.where(self.radii[idx] > 0, 1.0 / np.where(self.radii[idx] > 0,
                                                              self.radii[idx], 1.0), 0.0)
        kappa = np.where(on_route, kappa * self._curvature_factor(idx, mid), 0.0)
        radius = np.where(kappa > 0, 1.0 / np.where(kappa > 0, kappa, 1.0), 0.0)
        curve_cum = np.concatenate([[0.0], np.cumsum(curve_specific(radius) * seg)])

        # AREA curve resistance has no chord-definition degree below R = 15.24 m, and
        # curve_specific_area raises there. A route is still valid for 700/R vehicles, so
        # such elements get a placeholder 0 here and check_area_curves() refuses them for
        # AREA vehicles (the dynamics checks in refresh(), never in the right-hand side).
        r = np.abs(self.radii)
        straight = (r == 0.0) | np.isinf(r)
        self.area_undefined = np.flatnonzero(~straight & ~(r >= CHORD_HALF_M))
        #: Any curved element; on a straight route every curve resistance is nothing.
        self.has_curves = bool((~straight).any())
        area = curve_specific_area(np.where(radius >= CHORD_HALF_M, radius, 0.0))
        # Beyond the ends there is no tunnel: a train running off the route is in open air.
        tunnel = np.where(on_route, self.tunnels[idx], False).astype(float)
        area_cum = np.concatenate([[0.0], np.cumsum(area * seg)])
        tunnel_cum = np.concatenate([[0.0], np.cumsum(tunnel * seg)])
        #: Any element in a tunnel; without one, tunnel factors never apply.
        self.has_tunnel = bool(self.tunnels.any())
        #: The cumulative tables the simulation reads.
        self.track = track_of(self._knots, np.stack([self._elevation, curve_cum, area_cum,
                                                      tunnel_cum]))

    def check_area_curves(self) -> None:
        """Raise ValueError if a curve is too tight for the AREA formula (R < 15.24 m).

        Call once before reading AREA curve resistance for a vehicle: on such elements the
        table's AREA column is a placeholder 0, not a resistance.
        """
        if self.area_undefined.size:
            bad = ", ".join(f"{i} (R = {self.radii[i]:g} m)" for i in self.area_undefined[:5])
            raise ValueError(
                f"route {self.name!r}: element {bad} is too tight for AREA curve resistance, "
                f"which needs R >= {CHORD_HALF_M:g} m (100 ft chord); use curve = 'russian'"
            )

    def element_index(self, x: float) -> int:
        """Index of the element containing ``x`` (clamped to the route)."""
        i = int(np.searchsorted(self.starts, x, side="right")) - 1
        return min(max(i, 0), len(self.starts) - 1)

    def speed_limit(self, x: float) -> float:
        """Speed limit at ``x``, m/s; ``inf`` where there is none."""
        lim = float(self.speed_limits[self.element_index(x)])
        return lim if lim > 0 else math.inf

    def speed_limits_at(self, x: np.ndarray) -> np.ndarray:
        """:meth:`speed_limit` at each of the positions ``x``, m/s."""
        i = np.searchsorted(self.starts, x, side="right") - 1
        np.maximum(i, 0, out=i)  # (np.clip costs more than the lookup here)
        np.minimum(i, len(self.starts) - 1, out=i)
        lim = self.speed_limits[i].astype(float)
        lim[lim <= 0] = math.inf
        return lim

    def route_km(self, x: np.ndarray) -> np.ndarray:
        """Positions ``x`` (m from the route's start) as route kilometres, the route's own
        kilometre posts: ``(start_chainage + x) / 1000``, or ``(start_chainage - x) /
        1000`` where they decrease (``chainage_direction``)."""
        return (self.start_chainage + self.chainage_sign * np.asarray(x, dtype=float)) / 1000.0

    def grade_at(self, x: np.ndarray) -> np.ndarray:
        """Grade (rise over run) of the track at each position ``x``, from the elevation
        table (exact for a piecewise-constant profile; on a vertical curve, the grade of the
        fine interval holding ``x``)."""
        x = np.asarray(x, dtype=float)
        knots, slope = self.track.knots, self.track.slope[ELEVATION]
        i = np.clip(np.searchsorted(knots, x, side="right") - 1, 0, knots.size - 2)
        return slope[i]

    def curvature_at(self, x: np.ndarray) -> np.ndarray:
        """Curvature 1/R (1/m) of the track at each position ``x``, 0 on straight track and
        off the route, rising linearly along transition spirals."""
        x = np.asarray(x, dtype=float)
        idx = np.clip(np.searchsorted(self.starts, x, side="right") - 1, 0,
                      len(self.starts) - 1)
        r = self.radii[idx]
        kappa = np.where(r > 0, 1.0 / np.where(r > 0, r, 1.0), 0.0)
        on_route = (x >= 0.0) & (x <= self.length)
        return np.where(on_route, kappa * self._curvature_factor(idx, x), 0.0)

    def position_of(self, name: str, ctx: Context | None = None) -> float:
        """Position of a named point. A name the route lacks is a KeyError, or with
        ``ctx`` (where a config names it) a ConfigError listing the route's points."""
        if ctx is not None and name not in self.points:
            raise ctx.error(f"found {name!r}, expected a point of the route: "
                            + (", ".join(self.points) or "(the route has none)"))
        return self.points[name]
