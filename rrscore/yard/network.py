"""A track network: tracks with profiles and plan geometry, joined by connections and
switches, ending at buffer stops (the ``[network]`` table of a network file).

Each track runs from its ``start`` end to its ``end`` end; a position on it is an
offset from its start, m. A switch joins three track ends: the ``points`` end (the
side of its toe) and two ``legs`` (the frog side), the first the ``normal`` position,
the second ``reverse``. A track end joined to nothing is a buffer stop.

With the switches set as they are, the network falls apart into **lines** (seed 001's
"routes"): paths a car can run along without a switch being thrown. A line strings its
tracks end to end, each forwards or backwards, and has one coordinate from 0 at its
first end; its profile is a :class:`~rrscore.model.track.Route`, so cars on it take their
grade and curve forces as the core takes them. A line ends at a buffer stop or at the
toe of a switch whose points lead elsewhere: a car that runs on there runs the switch
through (a trailing move against its position). Throwing a switch re-forms the lines.

Plan geometry gives each position coordinates (``x`` east, ``y`` north, m): a track is
a polyline (``points``) or a chain of straight and curved pieces (``plan``) from its
``start`` coordinates and ``heading``; a track without either continues from the track
end its start is joined to, in the same direction. Curved pieces give the track's curve
resistance when it has no profile ``elements`` of its own.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..model.config import (
    Context,
    Param,
    TableList,
    load_top_table,
    validate,
)
from ..model.errors import ConfigError
from ..model.track import ELEMENT_SCHEMA, MAX_GRADE, Route

#: A plan's arcs are drawn as chords no longer than this, m (for coordinates and plots).
ARC_CHORD = 1.0
#: Connected track ends may stand this far apart in the plan before it is an error, m.
JOIN_TOL = 0.5
#: Longest track, m: far longer than any yard's, short enough to draw and search.
MAX_TRACK = 1e5
#: Shortest track, m: a plan drawn any shorter has no extent to lay it on.
MIN_TRACK = 1e-3
#: Steps of the search for loops at any setting of the switches before it gives up (a
#: yard's ladders take a step per track and walk; only a knot of crossovers comes near).
LOOP_SEARCH_LIMIT = 200_000

PLAN_SCHEMA = {
    "line": Param("m", None, "a straight piece of this length", min=0.0, exclusive_min=True,
                  max=MAX_TRACK),
    "radius": Param("m", None, "a curved piece of this radius (with angle)", min=0.0,
                    exclusive_min=True, max=MAX_TRACK),
    "angle": Param(kind=float, default=None, min=-180.0, max=180.0,
                   doc="how far a curved piece turns, degrees: + to the left, - to the right"),
}

TRACK_SCHEMA = {
    "name": Param(kind=str, doc="track name (unique in the network)"),
    "length": Param("m", None, "track length; if left out, the length of its plan or of "
                    "its elements", min=0.0, exclusive_min=True, max=MAX_TRACK),
    "grade": Param("1", 0.0, "uniform grade from start to end, rise over run (when there "
                   "are no elements)", min=-MAX_GRADE, max=MAX_GRADE),
    "elements": TableList(ELEMENT_SCHEMA, "profile elements from the track's start (their "
                          "lengths add up to the track's)"),
    "start": Param("m", None, "plan coordinates of the start end, [x, y]", kind=list),
    "heading": Param(kind=float, default=None, min=-360.0, max=360.0,
                     doc="direction of the track at its start, degrees anticlockwise from "
                         "east (+x)"),
    "points": Param(kind=list, item=list, default=None,
                    doc="plan as a polyline, [[x, y], ...] in m, from start to end (instead "
                        "of start, heading and plan)"),
    "plan": TableList(PLAN_SCHEMA, "plan as straight and curved pieces from the start "
                      "(default: one straight piece)"),
}

SWITCH_SCHEMA = {
    "name": Param(kind=str, doc="switch name"),
    "points": Param(kind=str, doc="the track end at the switch's toe, 'track.end' or "
                    "'track.start'"),
    "legs": Param(kind=list, item=str, doc="the two track ends on the frog side: "
                  "[normal, reverse]"),
    "position": Param(kind=str, default="normal", choices=("normal", "reverse"),
                      doc="position at the start"),
    "panel": Param("m", 20.0, "length of the switch panel along the legs from the toe: a "
                   "car on it keeps the switch from being thrown", min=0.0),
}

NETWORK_SCHEMA = {
    "name": Param(kind=str, default="network", doc="network name"),
    "tracks": TableList(TRACK_SCHEMA, "tracks", min_items=1),
    "connections": TableList({
        "ends": Param(kind=list, item=str, doc="two track ends joined: ['a.end', 'b.start']"),
    }, "plain joints between two track ends"),
    "switches": TableList(SWITCH_SCHEMA, "switches"),
    "buffer_stops": TableList({
        "at": Param(kind=str, doc="track end, 'track.end' or 'track.start'"),
        "stiffness": Param("N/m", 2e6, "stiffness of the stop's spring: the peak force of "
                           "an impact at speed u of cars of mass M is u sqrt(k M)", min=0.0,
                           exclusive_min=True),
    }, "buffer stops (every track end joined to nothing is one; list it here to set its "
       "stiffness)"),
    "retarders": TableList({
        "name": Param(kind=str, doc="retarder name"),
        "track": Param(kind=str, doc="track it is on"),
        "from": Param("m", doc="offset of its beginning from the track's start", min=0.0),
        "to": Param("m", doc="offset of its end (beyond from)", min=0.0),
        "force": Param("N", doc="braking force on a car wholly inside it while the car is "
                       "faster than the exit speed", min=0.0, exclusive_min=True),
        "exit_speed": Param("m/s", None, "speed it brakes cars down to; left out, the yard "
                            "chooses one per cut (energy-height rule: the cut should reach "
                            "the cars on its destination track at the yard's "
                            "coupling_target)", min=0.0, max=10.0),
    }, "retarders: track brakes that slow cuts rolling through them"),
    "points": TableList({
        "name": Param(kind=str, doc="name of the point"),
        "track": Param(kind=str, doc="track it is on"),
        "offset": Param("m", doc="offset from the track's start", min=0.0),
    }, "named points (cuts report their speed at each)"),
}
"""The ``[network]`` table of a network file."""


@dataclass
class Track:
    """One track of a network: its length, profile elements and plan polyline."""

    name: str
    length: float
    elements: list[dict]
    xy: np.ndarray  # polyline vertices, (k, 2)
    s: np.ndarray  # distance along the polyline at each vertex (scaled to ``length``)

    def coords(self, offset: np.ndarray | float) -> np.ndarray:
        """Plan coordinates at ``offset`` from the start, (..., 2) m."""
        q = np.clip(offset, 0.0, self.length)
        return np.stack([np.interp(q, self.s, self.xy[:, 0]),
                         np.interp(q, self.s, self.xy[:, 1])], axis=-1)


@dataclass
class Switch:
    """A switch: its toe end, its two legs (normal, reverse) and its panel length."""

    name: str
    points: tuple[int, int]  # (track, end): end 0 = start, 1 = end
    legs: tuple[tuple[int, int], tuple[int, int]]
    position: int  # 0 normal, 1 reverse
    panel: float


@dataclass
class Line:
    """Tracks strung end to end that a car runs along with the switches as they are.

    ``tracks[k]`` runs forwards (from its start) where ``forward[k]``, and begins at
    line coordinate ``starts[k]``. Each end of the line is a buffer stop
    (``ends[e] = ("stop", stiffness)``) or the toe of a switch set against it
    (``("switch", index)``).
    """

    tracks: list[int]
    forward: list[bool]
    starts: np.ndarray
    lengths: np.ndarray  # of each track
    length: float
    ends: tuple[tuple[str, float], tuple[str, float]]
    route: Route

    def locate(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Track index and offset along that track of each line coordinate ``q``."""
        k, offset = self.locate_k(q)
        return np.asarray(self.tracks)[k], offset

    def locate_k(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Place on the line (index into :attr:`tracks`) and offset along that track of
        each line coordinate ``q``."""
        k = np.clip(np.searchsorted(self.starts, q, side="right") - 1, 0,
                    len(self.tracks) - 1)
        local = q - self.starts[k]
        offset = np.where(np.asarray(self.forward)[k], local, self.lengths[k] - local)
        return k, offset

    def coordinate(self, track: int, offset: float) -> float | None:
        """Line coordinate of a track offset, or None if the track is not on the line."""
        if track not in self.tracks:
            return None
        k = self.tracks.index(track)
        local = offset if self.forward[k] else self.lengths[k] - offset
        return float(self.starts[k] + local)


def _track(names: dict[str, int], name: str, ctx: Context) -> int:
    """The index of the track called ``name``."""
    if name not in names:
        raise ctx.error(f"found {name!r}, expected a track of the network")
    return names[name]


def _end(text: str, names: dict[str, int], ctx: Context) -> tuple[int, int]:
    """'track.end' or 'track.start' as (track index, end)."""
    track, _, end = text.rpartition(".")
    if track not in names or end not in ("start", "end"):
        raise ctx.error(f"found {text!r}, expected a track end 'name.start' or 'name.end' "
                        f"of a track of the network ({', '.join(list(names)[:12])})")
    return names[track], 0 if end == "start" else 1


def _plan_polyline(start, heading: float, pieces: list[dict], ctx: Context) -> np.ndarray:
    """Vertices of a chain of straight and curved pieces."""
    x, y = start
    th = math.radians(heading)
    out = [(x, y)]
    for i, p in enumerate(pieces):
        if (p["line"] is None) == (p["radius"] is None):
            raise ctx.child(i).error("expected either line = length or radius with angle")
        if p["line"] is not None:
            x += p["line"] * math.cos(th)
            y += p["line"] * math.sin(th)
            out.append((x, y))
            continue
        if p["angle"] is None or p["angle"] == 0.0:
            raise ctx.child(i).child("angle").error(
                f"found {p['angle']!r}, expected the angle the curve turns, degrees "
                "(+ left, - right)")
        r, turn = p["radius"], math.radians(p["angle"])
        n = max(2, math.ceil(r * abs(turn) / ARC_CHORD))
        side = math.copysign(1.0, turn)
        cx, cy = x - side * r * math.sin(th), y + side * r * math.cos(th)
        for k in range(1, n + 1):
            a = th + turn * k / n
            out.append((cx + side * r * math.sin(a), cy - side * r * math.cos(a)))
        th += turn
        x, y = out[-1]
    return np.array(out, dtype=float)


def _plan_elements(pieces: list[dict], grade: float) -> list[dict]:
    """Profile elements from plan pieces: their lengths and curve radii, one grade."""
    out = []
    for p in pieces:
        length = p["line"] if p["line"] is not None else p["radius"] * math.radians(
            abs(p["angle"]))
        out.append(_element(length, grade, p["radius"] or 0.0))
    return out


#: A route element's keys at their defaults (what a profile element left out takes).
_ELEMENT_DEFAULTS = {k: p.default for k, p in ELEMENT_SCHEMA.items() if k != "length"}


def _element(length: float, grade: float, radius: float = 0.0) -> dict:
    return {**_ELEMENT_DEFAULTS, "length": length, "grade": grade, "radius": radius}


class Network:
    """A checked track network (see the module docstring).

    :attr:`tracks`, :attr:`switches` (with their positions at the start),
    :attr:`stops` (buffer-stop stiffness by track end) and :attr:`points` (named
    points: track and offset). Switch positions that change during a run live in the
    run; :meth:`lines` forms the lines for any set of positions.
    """

    def __init__(self, table: dict) -> None:
        if "_source" in table:
            file, path, base_dir = table["_source"]
            root = Context(file, path, Path(base_dir))
        else:
            root = Context(None, "network")
        ctx = root.child("tracks")
        self.name: str = table["name"]
        self.track_index: dict[str, int] = {}
        for i, t in enumerate(table["tracks"]):
            if t["name"] in self.track_index:
                raise ctx.child(i).child("name").error(
                    f"found {t['name']!r} again, expected a name no other track has")
            self.track_index[t["name"]] = i
        self._track_names = [t["name"] for t in table["tracks"]]
        names = self.track_index

        # partners of each track end: plain connections, then switches
        self.joined: dict[tuple[int, int], tuple[int, int]] = {}
        taken: dict[tuple[int, int], str] = {}

        def claim(end: tuple[int, int], by: str, c: Context) -> None:
            if end in taken:
                raise c.error(f"found {self.end_name(end)}, which {taken[end]} already "
                              "uses; expected each track end in one joint")
            taken[end] = by

        for i, c in enumerate(table["connections"]):
            cc = root.child("connections").child(i).child("ends")
            if len(c["ends"]) != 2:
                raise cc.error(f"found {len(c['ends'])} ends, expected 2")
            a, b = (_end(e, names, cc.child(k)) for k, e in enumerate(c["ends"]))
            if a == b:
                raise cc.error(f"found {c['ends'][0]!r} twice, expected two different ends")
            for k, e in enumerate((a, b)):
                claim(e, f"connection {i}", cc.child(k))
            self.joined[a], self.joined[b] = b, a
        self.switches: list[Switch] = []
        self.switch_index: dict[str, int] = {}
        for i, s in enumerate(table["switches"]):
            sc = root.child("switches").child(i)
            if s["name"] in self.switch_index:
                raise sc.child("name").error(f"found {s['name']!r} again, expected a name "
                                             "no other switch has")
            toe = _end(s["points"], names, sc.child("points"))
            if len(s["legs"]) != 2:
                raise sc.child("legs").error(f"found {len(s['legs'])} track ends, expected "
                                             "2: [normal, reverse]")
            legs = tuple(_end(e, names, sc.child("legs").child(k))
                         for k, e in enumerate(s["legs"]))
            for k, e in enumerate((toe, *legs)):
                claim(e, f"switch {s['name']!r}", sc.child("points" if k == 0 else "legs"))
            self.switch_index[s["name"]] = i
            self.switches.append(Switch(s["name"], toe, legs,
                                        0 if s["position"] == "normal" else 1, s["panel"]))
        self._zones: dict[tuple[float, float], list] = {}  # conflict zones found so far
        #: The switch each switch end belongs to (its toe or a leg): one lookup instead of
        #: a pass over the switches wherever a track end is followed.
        self.switch_at: dict[tuple[int, int], int] = {
            end: k for k, sw in enumerate(self.switches) for end in (sw.points, *sw.legs)}
        self.stops: dict[tuple[int, int], float] = {}
        for i, b in enumerate(table["buffer_stops"]):
            bc = root.child("buffer_stops").child(i).child("at")
            end = _end(b["at"], names, bc)
            claim(end, "a buffer stop", bc)
            self.stops[end] = b["stiffness"]
        for t in range(len(table["tracks"])):
            for e in (0, 1):
                if (t, e) not in taken:
                    self.stops[(t, e)] = NETWORK_SCHEMA["buffer_stops"].schema[
                        "stiffness"].default
        self.tracks: list[Track] = self._build_tracks(table["tracks"], ctx)
        self.points: dict[str, tuple[int, float]] = {}
        for i, p in enumerate(table["points"]):
            pc = root.child("points").child(i)
            t = _track(names, p["track"], pc.child("track"))
            if p["offset"] > self.tracks[t].length:
                raise pc.child("offset").error(
                    f"found {p['offset']:g} m, expected at most the track's length "
                    f"({self.tracks[t].length:g} m)")
            self.points[p["name"]] = (t, p["offset"])
        self.retarders: list[dict] = []
        for i, r in enumerate(table["retarders"]):
            rc = root.child("retarders").child(i)
            t = _track(names, r["track"], rc.child("track"))
            if not r["from"] < r["to"] <= self.tracks[t].length:
                raise rc.child("to").error(
                    f"found {r['to']:g} m, expected beyond from ({r['from']:g} m) and at "
                    f"most the track's length ({self.tracks[t].length:g} m)")
            self.retarders.append({**r, "track": t})
        self.lines([s.position for s in self.switches], root)  # no loops as they are set
        self._refuse_loops(root)  # nor as they may be set

    # ------------------------------------------------------------------ geometry
    def _build_tracks(self, rows: list[dict], ctx: Context) -> list[Track]:
        """Lengths, profiles and plan polylines; tracks without a plan of their own
        continue from the end their start is joined to."""
        n = len(rows)
        built: list[Track | None] = [None] * n
        pending = list(range(n))
        while pending:
            placed = False
            for i in list(pending):
                r = rows[i]
                start, heading = r["start"], r["heading"]
                if r["points"] is None and (start is None or heading is None):
                    src = self._feeder(i)
                    if src is None or built[src] is None:
                        continue  # wait until the track it continues from is placed
                    t = built[src]
                    d = t.xy[-1] - t.xy[-2]
                    start = list(t.xy[-1]) if start is None else start
                    heading = (math.degrees(math.atan2(d[1], d[0])) if heading is None
                               else heading)
                built[i] = self._track(r, ctx.child(i), start, heading)
                pending.remove(i)
                placed = True
            if not placed:  # nothing to continue from: the first waiting track at the origin
                i = pending.pop(0)
                r = rows[i]
                built[i] = self._track(r, ctx.child(i), r["start"] or [0.0, 0.0],
                                       r["heading"] or 0.0)
        self._check_joints(built, ctx)
        return built  # type: ignore[return-value]

    def _feeder(self, i: int) -> int | None:
        """The track whose end the start of track ``i`` is joined to (a connection, or a
        switch's toe for a leg), if that track ends there."""
        partner = self.joined.get((i, 0))
        if partner is not None and partner[1] == 1:
            return partner[0]
        k = self.switch_at.get((i, 0))
        if k is not None and (i, 0) != self.switches[k].points \
                and self.switches[k].points[1] == 1:
            return self.switches[k].points[0]
        return None

    def _track(self, r: dict, c: Context, start, heading) -> Track:
        if start is not None and len(start) != 2:
            raise c.child("start").error(f"found {len(start)} numbers, expected 2: [x, y]")
        if r["points"] is not None:
            if r["plan"]:
                raise c.child("plan").error("found both points and plan, expected one")
            ok = len(r["points"]) >= 2 and all(
                len(p) == 2 and all(isinstance(v, int | float) and not isinstance(v, bool)
                                    and math.isfinite(v) and abs(v) < 1e7 for v in p)
                for p in r["points"])
            if not ok:
                raise c.child("points").error(f"found {r['points']!r}, expected at least "
                                              "two [x, y] pairs of numbers (m)")
            pts = np.asarray(r["points"], dtype=float)
            if (np.hypot(*np.diff(pts, axis=0).T) == 0.0).any():
                raise c.child("points").error("found the same point twice in a row, "
                                              "expected each point apart from the last")
            xy = pts
            elements = None
        else:
            pieces = r["plan"]
            if pieces:
                xy = _plan_polyline(start, heading, pieces, c.child("plan"))
                elements = _plan_elements(pieces, r["grade"])
            else:
                xy = None
                elements = None
        seg = np.hypot(*np.diff(xy, axis=0).T) if xy is not None else None
        plan_len = float(seg.sum()) if seg is not None else None
        if elements is not None:  # arcs drawn as chords: the pieces' own lengths count
            plan_len = float(sum(e["length"] for e in elements))
        els = [dict(e) for e in r["elements"]]
        el_len = float(sum(e["length"] for e in els)) if els else None
        length = r["length"] or plan_len or el_len
        if length is None:
            raise c.child("length").error("missing, expected a length (or a plan or "
                                          "elements that give one)")
        if length > MAX_TRACK:
            raise c.child("plan" if plan_len else "elements").error(
                f"found {length:g} m in all, expected a track of at most {MAX_TRACK:g} m")
        if length < MIN_TRACK:
            where = "length" if r["length"] else ("plan" if plan_len else "elements")
            raise c.child(where).error(f"found {length:g} m in all, expected a track of at "
                                       f"least {MIN_TRACK:g} m")
        for what, value in (("plan", plan_len), ("elements", el_len)):
            if value is not None and abs(value - length) > 1e-3:
                raise c.child(what if what != "plan" or r["points"] is None else "points").error(
                    f"found {value:.3f} m in all, expected the track's length, {length:.3f} m")
        if els:
            if r["grade"]:
                raise c.child("grade").error(f"found {r['grade']:g} with elements, expected "
                                             "grades from one place: grade or the elements")
            elements = els
        elif elements is None:
            elements = [_element(length, r["grade"])]
        if xy is None:
            th = math.radians(heading)
            xy = np.array([start, [start[0] + length * math.cos(th),
                                   start[1] + length * math.sin(th)]], dtype=float)
            seg = np.hypot(*np.diff(xy, axis=0).T)
        s = np.concatenate([[0.0], np.cumsum(seg)])
        s *= length / s[-1]  # chords of arcs: scaled onto the arc's length
        return Track(r["name"], float(length), elements, xy, s)

    def _check_joints(self, tracks: list[Track], ctx: Context) -> None:
        """Track ends joined together must meet in the plan."""
        def at(end: tuple[int, int]) -> np.ndarray:
            t = tracks[end[0]]
            return t.xy[-1] if end[1] else t.xy[0]

        pairs = [(a, b) for a, b in self.joined.items() if a < b]
        pairs += [(s.points, leg) for s in self.switches for leg in s.legs]
        for a, b in pairs:
            gap = float(np.hypot(*(at(a) - at(b))))
            if gap > JOIN_TOL:
                raise ctx.child(a[0]).error(
                    f"found {self.end_name(a)} at ({at(a)[0]:.1f}, {at(a)[1]:.1f}) m and "
                    f"{self.end_name(b)} at ({at(b)[0]:.1f}, {at(b)[1]:.1f}) m, {gap:.2f} m "
                    f"apart; expected joined ends to meet (within {JOIN_TOL} m): check "
                    "the tracks' start, heading, plan or points")

    def end_name(self, end: tuple[int, int]) -> str:
        """'track.start' or 'track.end'."""
        return f"{self._track_names[end[0]]}.{'end' if end[1] else 'start'}"

    # ------------------------------------------------------------------ topology
    def partner(self, end: tuple[int, int], positions: list[int]
                ) -> tuple[int, int] | tuple[str, float]:
        """What a track end leads to with the switches at ``positions``: another track
        end ``(track, end)``, or a line's end as :attr:`Line.ends` holds it: ``("stop",
        stiffness)`` (a buffer stop) or ``("switch", index)`` (the toe of a switch set
        against this leg)."""
        if end in self.joined:
            return self.joined[end]
        k = self.switch_at.get(end)
        if k is None:
            return ("stop", self.stops[end])
        s = self.switches[k]
        if end == s.points:
            return s.legs[positions[k]]
        return s.points if s.legs[positions[k]] == end else ("switch", k)

    def lines(self, positions: list[int], ctx: Context | None = None) -> list[Line]:
        """The lines the network falls into with the switches at ``positions``."""
        seen: set[int] = set()
        out: list[Line] = []
        for t0 in range(len(self.tracks)):
            if t0 in seen:
                continue
            seen.add(t0)
            chain = [(t0, True)]
            ends: list[tuple[str, float]] = []
            for direction in (1, 0):  # grow from t0's end, then from its start
                track, fwd = t0, direction == 1
                while True:
                    exit_end = (track, 1 if fwd else 0)
                    nxt = self.partner(exit_end, positions)
                    if isinstance(nxt[0], str):  # the line ends here
                        ends.append(nxt)
                        break
                    track, fwd = nxt[0], nxt[1] == 0
                    if track in seen:
                        c = ctx or Context(None, "network")
                        raise c.child("tracks").error(
                            f"found a loop of tracks through {self.tracks[track].name!r}; "
                            "expected tracks without loops (a loop line is not supported)")
                    seen.add(track)
                    if direction == 1:
                        chain.append((track, fwd))
                    else:
                        chain.insert(0, (track, not fwd))
            lengths, starts, route = self.chain_route(chain)
            out.append(Line([t for t, _ in chain], [f for _, f in chain], starts, lengths,
                            float(lengths.sum()), (ends[1], ends[0]), route))
        return out

    def _exits(self, end: tuple[int, int], setting: dict[int, int]
               ) -> list[tuple[tuple[int, int], dict[int, int]]]:
        """Where a car leaving by ``end`` may run on to, with the switch positions that
        takes (``setting``: those fixed so far, by switch index): a joined end; from a
        toe, either leg of a switch not yet set; from a leg, the toe, if the switch is
        (or can be) set to it."""
        if end in self.joined:
            return [(self.joined[end], setting)]
        k = self.switch_at.get(end)
        if k is None:
            return []  # a buffer stop
        sw = self.switches[k]
        if end == sw.points:
            legs = [setting[k]] if k in setting else [0, 1]
            return [(sw.legs[i], {**setting, k: i}) for i in legs]
        leg = sw.legs.index(end)
        return [(sw.points, {**setting, k: leg})] if setting.get(k, leg) == leg else []

    def _refuse_loops(self, ctx: Context) -> None:
        """Refuse a network where some setting of its switches closes a loop of tracks.

        :meth:`lines` refuses one at the setting it is given; this walks from every
        track's end along every way the switches allow, each switch set once (to the
        leg the walk takes), and stops at the first track met again. Walks branch only
        at toes not yet set, so a yard's ladders (trees) cost a walk per track; the
        search gives up after :data:`LOOP_SEARCH_LIMIT` steps, leaving :meth:`lines`
        to find a loop as switches are thrown."""
        steps = 0
        for t0 in range(len(self.tracks)):
            stack = [((t0, 1), frozenset((t0,)), {})]
            while stack:
                end, seen, setting = stack.pop()
                k = self.switch_at.get(end)
                if k is not None and k in setting and end in self.switches[k].legs \
                        and self.switches[k].legs[setting[k]] != end:
                    # back at a switch this walk went through, by its other leg: a
                    # reversing (balloon) loop, which no setting closes but a run-through
                    # does (the run would force the switch over and over)
                    sw = self.switches[k]
                    raise ctx.child("switches").child(k).child("legs").error(
                        f"found a loop of tracks from {self.end_name(sw.legs[setting[k]])} "
                        f"back to {self.end_name(end)}, the other leg of switch "
                        f"{sw.name!r}; expected tracks without loops (a reversing loop is "
                        "not supported)")
                for (track, enter), after in self._exits(end, setting):
                    if track in seen:
                        sw = self.switches
                        thrown = ", ".join(f"{sw[k].name!r} to {self.end_name(sw[k].legs[i])}"
                                           for k, i in sorted(after.items())
                                           if i != sw[k].position)
                        raise ctx.child("tracks").error(
                            f"found a loop of tracks through {self.tracks[track].name!r}"
                            + (f" with switch {thrown}" if thrown else "")
                            + "; expected tracks without loops at any setting of the "
                            "switches (a loop line is not supported)")
                    steps += 1
                    if steps > LOOP_SEARCH_LIMIT:
                        return
                    stack.append(((track, 1 - enter), seen | {track}, after))

    def chain_route(self, chain: list[tuple[int, bool]]) -> tuple[np.ndarray, np.ndarray, Route]:
        """Track lengths, start coordinates and profile of tracks strung end to end, each
        ``(track, forwards)``."""
        lengths = np.array([self.tracks[t].length for t, _ in chain])
        starts = np.concatenate([[0.0], np.cumsum(lengths)[:-1]])
        elements = []
        for t, fwd in chain:
            els = self.tracks[t].elements
            for e in (els if fwd else reversed(els)):
                e = dict(e)
                e["grade"] = e["grade"] if fwd else -e["grade"]
                elements.append(e)
        route = Route.from_config({"name": "+".join(self.tracks[t].name for t, _ in chain),
                                   "elements": elements, "points": []})
        return lengths, starts, route

    def neighbours(self, end: tuple[int, int]) -> list[tuple[int, int]]:
        """Every track end a car leaving by ``end`` may run on to, whatever the switches'
        positions (both legs from a toe)."""
        if end in self.joined:
            return [self.joined[end]]
        k = self.switch_at.get(end)
        if k is None:
            return []
        s = self.switches[k]
        return list(s.legs) if end == s.points else [s.points]

    def path(self, track: int, forward: bool, to: int) -> list[tuple[int, bool]] | None:
        """Tracks from ``track`` (run ``forward`` or back) to track ``to``, each
        ``(track, forwards)``; None if it cannot be reached that way."""
        stack = [[(track, forward)]]
        while stack:
            chain = stack.pop()
            t, fwd = chain[-1]
            if t == to:
                return chain
            for nt, ne in self.neighbours((t, 1 if fwd else 0)):
                if all(nt != c for c, _ in chain):
                    stack.append([*chain, (nt, ne == 0)])
        return None

    def switch_settings(self, chain: list[tuple[int, bool]]) -> list[tuple[int, int]]:
        """The switches a run along ``chain`` goes through and the position each must be
        in: ``(switch, position)`` in order."""
        out = []
        for (t, fwd), (u, ufwd) in zip(chain, chain[1:], strict=False):
            a, b = (t, 1 if fwd else 0), (u, 0 if ufwd else 1)
            k = self.switch_at.get(a)
            if k is not None and k == self.switch_at.get(b):  # through switch k: toe to leg
                s = self.switches[k]
                out.append((k, s.legs.index(b if a == s.points else a)))
        return out

    def directly_joined(self) -> set[tuple[int, int]]:
        """Pairs of tracks joined end to end (by a connection, or a switch's toe and a
        leg); a switch's two legs are not."""
        out = set()
        for a, b in self.joined.items():
            out |= {(a[0], b[0]), (b[0], a[0])}
        for s in self.switches:
            for leg in s.legs:
                out |= {(s.points[0], leg[0]), (leg[0], s.points[0])}
        return out

    def conflict_zones(self, width: float, margin: float = 0.3
                       ) -> list[tuple[int, float, float, int, float, float]]:
        """Where two tracks not joined end to end come closer than ``width`` (+ ``margin``)
        in the plan: ``(t, lo, hi, u, lo_u, hi_u)``, the stretch of track ``t`` (offsets
        ``lo`` to ``hi``) near the stretch of track ``u``. Cars in such zones on different
        lines can collide side-on (at a fouling point, or on tracks too close). Found
        through a grid of cells holding points every metre along each track, so the work
        grows with the network's length, not with its square (one point a metre, fewer
        on networks longer than 200 km, with the margin widened to match). Kept per
        width and margin: a network does not change, and each run of a yard asks again."""
        key = (width, margin)
        if key not in self._zones:
            self._zones[key] = self._find_conflict_zones(width, margin)
        return list(self._zones[key])

    def _find_conflict_zones(self, width: float, margin: float
                             ) -> list[tuple[int, float, float, int, float, float]]:
        if len(self.tracks) < 2:
            return []
        total = sum(t.length for t in self.tracks)
        spacing = max(1.0, total / 2e5)  # a point a metre, up to 200,000 of them
        # sampled points overstate a distance by at most half a spacing; the margin covers
        # a car's chord against a curved track (0.13 m for 14 m on 190 m)
        reach = width + margin + 0.5 * spacing
        pts, owner, offs = [], [], []
        for t, tr in enumerate(self.tracks):
            q = np.linspace(0.0, tr.length, max(2, math.ceil(tr.length / spacing) + 1))
            pts.append(tr.coords(q))
            owner.append(np.full(q.size, t))
            offs.append(q)
        xy, owner_a, off_a = np.concatenate(pts), np.concatenate(owner), np.concatenate(offs)
        cell = np.floor(xy / reach).astype(np.int64)
        cells: dict[tuple[int, int], list[int]] = {}
        tracks_in: dict[tuple[int, int], set[int]] = {}
        for i, (cx, cy) in enumerate(cell.tolist()):
            cells.setdefault((cx, cy), []).append(i)
            tracks_in.setdefault((cx, cy), set()).add(int(owner_a[i]))
        joined = self.directly_joined()
        spans: dict[tuple[int, int], list[float]] = {}
        around = [(dx, dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1)]
        for (cx, cy), here in cells.items():
            keys = [(cx + dx, cy + dy) for dx, dy in around if (cx + dx, cy + dy) in cells]
            if len(set().union(*(tracks_in[k] for k in keys))) < 2:
                continue  # one track alone around here: nothing to meet
            near = [j for k in keys for j in cells[k]]
            a = np.array(here)
            b = np.array(near)
            d = np.hypot(*(xy[a][:, None, :] - xy[b][None, :, :]).transpose(2, 0, 1))
            for i, j in zip(*np.nonzero(d < reach), strict=True):
                t, u = int(owner_a[a[i]]), int(owner_a[b[j]])
                if t >= u or (t, u) in joined:
                    continue
                z = spans.setdefault((t, u), [math.inf, -math.inf, math.inf, -math.inf])
                z[0], z[1] = min(z[0], off_a[a[i]]), max(z[1], off_a[a[i]])
                z[2], z[3] = min(z[2], off_a[b[j]]), max(z[3], off_a[b[j]])
        return [(t, z[0], z[1], u, z[2], z[3]) for (t, u), z in sorted(spans.items())]

    def xy(self, track: np.ndarray, offset: np.ndarray) -> np.ndarray:
        """Plan coordinates of each (track, offset), shape (n, 2)."""
        out = np.empty((len(track), 2))
        for t in np.unique(track):
            sel = track == t
            out[sel] = self.tracks[t].coords(offset[sel])
        return out

    def panel_of(self, k: int) -> list[tuple[int, float, float]]:
        """Where switch ``k``'s panel lies: (track, from offset, to offset) on each leg,
        and the toe itself on the points track."""
        s = self.switches[k]
        out = []
        for t, e in s.legs:
            length = self.tracks[t].length
            span = min(s.panel, length)
            out.append((t, 0.0, span) if e == 0 else (t, length - span, length))
        t, e = s.points
        toe = self.tracks[t].length if e == 1 else 0.0
        out.append((t, toe, toe))
        return out


def load_network(path: str | Path) -> Network:
    """Read and check a network file (a ``[network]`` table)."""
    table, ctx = load_top_table(path, "network")
    table = validate(table, NETWORK_SCHEMA, ctx)
    table["_source"] = (ctx.file, ctx.path, str(ctx.base_dir))
    return Network(table)


__all__ = ["NETWORK_SCHEMA", "Network", "Line", "Track", "Switch", "load_network",
           "ConfigError"]
