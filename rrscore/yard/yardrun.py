"""One run of a yard scenario: cuts of cars on a network, stepped by the free-car engine.

With the switches as they are, the network falls into lines (:meth:`Network.lines`);
the cars on each line are one :class:`~rrscore.yard.freecars.FreeCars`, which moves them from
event to event: contacts, couplings, impacts, tension at full slack, stops, buffer
stops. Lines do not interact along the track, so each advances on its own. Every
``step`` the run renews each car's forces where it stands (grade and curve from the
line's profile, running and starting resistance, hand brakes and chocks, retarders,
locomotives and winches), carries out the actions and the route setting that are due
and throws switches, which re-forms the lines (the cars keep their places, speeds and
couplings).

A line that ends at the toe of a switch set against it is open there: a car that
reaches it runs the switch through. The run then either stops or forces the switch over
(``run_through``) and goes on from that instant. After each step, cars on different
lines are checked for coming closer than the clearance width (a side collision), through
a grid of cells so that the cost stays near-linear in the number of cars; cars of one
line are not (seed 001). Side collisions and points passed are found at step ends, so
to within a step's run (0.1 s at 5 m/s is 0.5 m).
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np

from ..model.track import CURVE
from ..physics import resistance
from ..physics.route import elevation, mean_rate
from .freecars import FreeCars, profile_forces
from .network import Line, Network
from .yardevent import YardEvent

#: A move is done braking, and holds, below this speed, m/s.
HOLD_SPEED = 0.05
#: Slowest exit speed a retarder chooses for a cut, m/s: it should not stop the cut.
MIN_EXIT_SPEED = 0.5


def _segment_distance(p1, q1, p2, q2) -> float:
    """Least distance between segments p1-q1 and p2-q2 in the plane."""
    d1, d2, r = q1 - p1, q2 - p2, p1 - p2
    a, e, f = d1 @ d1, d2 @ d2, d2 @ r
    c, b = d1 @ r, d1 @ d2
    denom = a * e - b * b
    s = np.clip((b * f - c * e) / denom, 0.0, 1.0) if denom > 1e-12 else 0.0
    t = (b * s + f) / e if e > 1e-12 else 0.0
    if t < 0.0:
        t, s = 0.0, np.clip(-c / a, 0.0, 1.0) if a > 1e-12 else 0.0
    elif t > 1.0:
        t, s = 1.0, np.clip((b - c) / a, 0.0, 1.0) if a > 1e-12 else 0.0
    return float(np.hypot(*((p1 + d1 * s) - (p2 + d2 * t))))


class YardRun:
    """The state of one yard drive: switch positions, lines, cars, moves, events.

    :meth:`advance` runs it on; :attr:`events` lists what happened; :meth:`report` is
    the summary per cut. The scenario is never written to.

    :param scenario: a :class:`~rrscore.yard.yard.YardScenario` (not imported here:
        :func:`~rrscore.yard.yard.yard_from_table` builds a run to check a yard, so
        :mod:`rrscore.yard.yard` comes after this module).
    """

    def __init__(self, scenario) -> None:
        self.scenario = sc = scenario
        cfg = sc.config
        self.net: Network = sc.network
        cars = sc.cars
        self.n = cars.length.size
        self.half = 0.5 * cars.length
        self.t = 0.0
        self.dt = cfg["step"]
        self.positions = [s.position for s in self.net.switches]
        self.forced: list[str] = []
        self.events: list[YardEvent] = []
        self.stop_reason: str | None = None
        self._cached = None
        self._joined_tracks = self.net.directly_joined()
        self._zones = self.net.conflict_zones(cfg["clearance_width"])
        cut_of = cars.cut
        self.hand_brake = np.zeros(self.n, dtype=bool)
        self.chock = np.zeros(self.n, dtype=bool)
        first = np.searchsorted(cut_of, np.arange(len(sc.cut_names)))
        self.first_car = first
        for k, cut in enumerate(cfg["cuts"]):
            self.hand_brake[first[k] + np.asarray(cut["hand_brakes"], dtype=int)] = True
            self.chock[first[k] + np.asarray(cut["chocks"], dtype=int)] = True
        self.coupled = {(c, c + 1) for c, ok in cars.inner_coupled.items() if ok}

        # where each car stands: each cut laid back from its front along its line
        lines = self.net.lines(self.positions)
        track = np.empty(self.n, dtype=int)
        offset = np.empty(self.n)
        tspeed = np.empty(self.n)
        face = np.empty(self.n)  # +1: the car's front faces its track's end
        for k, cut in enumerate(cfg["cuts"]):
            t0 = self.net.track_index[cut["track"]]
            line = next(ln for ln in lines if t0 in ln.tracks)
            kk = line.tracks.index(t0)
            sign = (1.0 if cut["facing"] == "end" else -1.0) * (1.0 if line.forward[kk] else -1.0)
            q = line.coordinate(t0, cut["front"])
            members = np.flatnonzero(cut_of == k)
            # bunched: the cars touch; neutral and stretched open each joint's slack
            share = {"bunched": 0.0, "neutral": 0.5, "stretched": 1.0}[cut["slack"]]
            opened = np.array([share * cars.inner_slack[c] for c in members[:-1]])
            back = np.concatenate([[0.0], np.cumsum(cars.length[members][:-1] + opened)])
            centre = q - sign * (back + self.half[members])
            tr, off = line.locate(centre)
            fwd = np.array([line.forward[line.tracks.index(t)] for t in tr])
            track[members], offset[members] = tr, off
            face[members] = sign * np.where(fwd, 1.0, -1.0)
            tspeed[members] = cut["speed"] * face[members]
            bad = (centre - self.half[members] < -1e-9) | (centre + self.half[members]
                                                           > line.length + 1e-9)
            if bad.any():
                raise ValueError(f"cut {cut['name']!r} does not fit on its line of tracks "
                                 f"({line.route.name}): it runs past a track end")
        self._form(track, offset, tspeed, face, at_start=True)

        self.moves = [dict(m, phase="wait", car=int(first[sc.cut_names.index(m["cut"])]
                                                     + m["vehicle"]))
                      for m in cfg["moves"]]
        self._actions = sorted(cfg["actions"], key=lambda a: a["at"])
        self._next_action = 0
        # route setting: each cut's switches, and each switch's queue of cuts
        self.route_of: dict[int, list[tuple[int, int]]] = {}
        self.queue: dict[int, list[int]] = defaultdict(list)
        self._seen: set[tuple[int, int]] = set()
        self.misrouted: set[int] = set()
        for k, cut in enumerate(cfg["cuts"]):
            if cut["destination"] is None:
                continue
            chain = self._path_of(k, self.net.track_index[cut["destination"]])
            if chain is None:
                raise ValueError(f"cut {cut['name']!r} cannot reach track "
                                 f"{cut['destination']!r} from where it stands")
            self.route_of[k] = self.net.switch_settings(chain)
            for s, _ in self.route_of[k]:
                self.queue[s].append(k)
        self.targets: dict[tuple[int, int], float] = {}
        self.passages: dict[int, dict[str, dict[str, float]]] = defaultdict(dict)
        self.first_contact: dict[int, YardEvent] = {}
        self.max_speed = float(np.abs(tspeed).max()) if self.n else 0.0
        self._overlaps: set[tuple[int, int]] = set(self._side_pairs())
        for a, b in sorted(self._overlaps):
            self._log(YardEvent(0.0, "fouling", *self._who(a), *self._who(b),
                                detail="cars closer than the clearance width at the start"))

    # ------------------------------------------------------------------ lines
    def _form(self, track: np.ndarray, offset: np.ndarray, tspeed: np.ndarray,
              face: np.ndarray, at_start: bool = False) -> None:
        """Lines for the switches' positions now, and a free-car engine on each, from
        each car's track, offset, speed along its track and the way it faces its track
        (+1 towards the track's end)."""
        cars = self.scenario.cars
        self.lines: list[Line] = self.net.lines(self.positions)
        where = {t: (li, k) for li, ln in enumerate(self.lines) for k, t in enumerate(ln.tracks)}
        q = np.empty(self.n)
        v = np.empty(self.n)
        line_of = np.empty(self.n, dtype=int)
        #: +1 where a car's front faces increasing coordinates of its line: fixed while the
        #: lines stand, whichever way the tracks under the car run
        self.line_face = np.empty(self.n)
        for c in range(self.n):
            li, k = where[int(track[c])]
            ln = self.lines[li]
            fwd = ln.forward[k]
            q[c] = ln.starts[k] + (offset[c] if fwd else ln.lengths[k] - offset[c])
            v[c] = tspeed[c] if fwd else -tspeed[c]
            self.line_face[c] = face[c] if fwd else -face[c]
            line_of[c] = li
        self.members: list[np.ndarray] = []
        self.engines: list[FreeCars | None] = []
        for li, ln in enumerate(self.lines):
            m = np.flatnonzero(line_of == li)
            m = m[np.argsort(q[m], kind="stable")]
            self.members.append(m)
            if m.size == 0:
                self.engines.append(None)
                continue
            a, b = m[:-1], m[1:]
            inner = (cars.cut[a] == cars.cut[b]) & (np.abs(a - b) == 1)
            lo = np.minimum(a, b)
            slack = np.where(inner, [cars.inner_slack.get(int(i), 0.0) for i in lo],
                             0.5 * (cars.slack[a] + cars.slack[b]))
            speed = np.where(inner, [cars.inner_speed.get(int(i), 0.0) for i in lo],
                             np.minimum(cars.coupling_speed[a], cars.coupling_speed[b]))
            coupled = np.array([(int(i), int(j)) in self.coupled or (int(j), int(i))
                                in self.coupled for i, j in zip(a, b, strict=True)], bool)
            stops, stiff, open_ = [], [], []
            for e, pos in ((0, 0.0), (1, ln.length)):
                kind, value = ln.ends[e]
                stops.append(pos)
                stiff.append(value if kind == "stop" else 1.0)
                open_.append(kind == "switch")
            try:
                eng = FreeCars(q[m], cars.length[m], cars.mass[m], v[m], 0.0, 0.0,
                               coupled=coupled, slack=slack, coupling_speed=speed,
                               restitution=self.scenario.config["restitution"],
                               buffer_stops=tuple(stops), buffer_stiffness=tuple(stiff),
                               open_ends=tuple(open_), t=self.t)
            except ValueError as exc:
                if at_start:
                    raise ValueError(f"on tracks {ln.route.name}: {exc}") from None
                raise RuntimeError(f"cars overlap on tracks {ln.route.name} after a switch "
                                   f"was thrown: {exc}") from None
            self.engines.append(eng)
        self._seen_log = [0] * len(self.engines)
        self._cached = None
        self._regions = self._switch_regions()
        self._zone_regions = self._conflict_regions()
        self._runs_of = [self._runs(li) for li in range(len(self.lines))]
        self._line_of, self._place = line_of, np.empty(self.n, dtype=int)
        for m in self.members:
            self._place[m] = np.arange(m.size)
        # per line: (retarder, track's place in the line, its stretch in line coordinates)
        self._retarders_on = [
            [(r_i, ln.tracks.index(r["track"]),
              *sorted((ln.coordinate(r["track"], r["from"]), ln.coordinate(r["track"], r["to"]))))
             for r_i, r in enumerate(self.net.retarders) if r["track"] in ln.tracks]
            for ln in self.lines]
        self._points = []
        for li in range(len(self.lines)):
            pts = self._point_coordinates(li)
            self._points.append((list(pts), np.array(list(pts.values()))) if pts else None)

    def _state(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Each car's track, offset, speed along its track, and the way it faces that
        track, +1 towards its end (kept until the cars move or the lines change). A car
        keeps its way along its line; the track under it may run either way."""
        if self._cached is not None:
            return self._cached
        track = np.empty(self.n, dtype=int)
        offset = np.empty(self.n)
        tspeed = np.empty(self.n)
        face = np.empty(self.n)
        for ln, m, eng in zip(self.lines, self.members, self.engines, strict=True):
            if eng is None:
                continue
            k, off = ln.locate_k(eng.x)
            tr, fwd = np.asarray(ln.tracks)[k], np.asarray(ln.forward)[k]
            v = eng.v
            track[m], offset[m] = tr, off
            tspeed[m] = np.where(fwd, v, -v)
            face[m] = np.where(fwd, self.line_face[m], -self.line_face[m])
        self._cached = (track, offset, tspeed, face)
        return self._cached

    def _locate_car(self, c: int) -> tuple[int, int]:
        """Car ``c``'s line and its place among the line's cars (kept while lines stand)."""
        return int(self._line_of[c]), int(self._place[c])

    # ------------------------------------------------------------------ switches
    def _switch_regions(self) -> list[list[tuple[int, float, float]]]:
        """Per switch: (line, lo, hi) of its panel and toe in line coordinates."""
        out = []
        for k in range(len(self.net.switches)):
            regs = []
            for t, a, b in self.net.panel_of(k):
                for li, ln in enumerate(self.lines):
                    if t in ln.tracks:
                        qa, qb = ln.coordinate(t, a), ln.coordinate(t, b)
                        regs.append((li, min(qa, qb), max(qa, qb)))
            out.append(regs)
        return out

    def occupants(self, k: int) -> set[int]:
        """Cars standing on switch ``k``'s panel or over its toe."""
        out: set[int] = set()
        for li, lo, hi in self._regions[k]:
            eng = self.engines[li]
            if eng is None:
                continue
            x = eng.x
            h = self.half[self.members[li]]
            i0 = np.searchsorted(x + h, lo - 1e-6)
            i1 = np.searchsorted(x - h, hi + 1e-6, side="right")
            out.update(int(c) for c in self.members[li][i0:i1])
        return out

    def throw(self, k: int, position: int, forced: bool = False) -> bool:
        """Throw switch ``k``; refused (False) while a car stands on it, unless forced."""
        if self.positions[k] == position:
            return True
        if not forced and self.occupants(k):
            return False
        self._reform_with(k, position)
        s = self.net.switches[k]
        self._log(YardEvent(self.t, "switch", track=self.net.tracks[s.points[0]].name,
                            detail=f"{s.name} to {('normal', 'reverse')[position]}"
                            + (" (run through: damaged)" if forced else "")))
        return True

    def _reform_with(self, k: int, position: int) -> None:
        state = self._state()
        was, self.positions[k] = self.positions[k], position
        try:
            self._form(*state)
        except RuntimeError:  # cars would overlap: the lines as they stood, then say so
            self.positions[k] = was
            self._form(*state)
            raise

    # ------------------------------------------------------------------ events
    def _who(self, c: int) -> tuple[str, int]:
        cars = self.scenario.cars
        return self.scenario.cut_names[cars.cut[c]], int(cars.index[c])

    def _log(self, ev: YardEvent) -> None:
        self.events.append(ev)

    def _where(self, li: int, q: float) -> tuple[str, float]:
        tr, off = self.lines[li].locate(np.array([q]))
        return self.net.tracks[int(tr[0])].name, float(off[0])

    def _collect(self, li: int) -> None:
        """Turn the new events of line ``li``'s engine into yard events."""
        eng, m = self.engines[li], self.members[li]
        for e in eng.log[self._seen_log[li]:]:
            if e.coupling >= 0:
                a, b = int(m[e.coupling]), int(m[e.coupling + 1])
                if e.kind == "coupled":
                    self.coupled.add((min(a, b), max(a, b)))
                q = 0.5 * (eng.x[e.coupling] + eng.x[e.coupling + 1])
                track, off = self._where(li, q)
                ev = YardEvent(e.t, e.kind, *self._who(b), *self._who(a), track, off,
                               speed=e.value)
                if e.kind == "coupled":
                    for mv in self.moves:
                        if mv["until_coupled"] and mv["phase"] == "drive" and \
                                mv["cut"] in (ev.cut, ev.other_cut) and ev.cut != ev.other_cut:
                            other = ev.other_cut if mv["cut"] == ev.cut else ev.cut
                            self._done(mv, f"coupled to {other}", e.t)
                if e.kind in ("coupled", "impact"):
                    cars = self.scenario.cars
                    for c, other in ((a, b), (b, a)):
                        k = int(cars.cut[c])
                        if cars.cut[other] != k and k not in self.first_contact:
                            self.first_contact[k] = ev
            else:
                c = int(m[e.vehicle])
                track, off = self._where(li, eng.x[e.vehicle])
                ev = YardEvent(e.t, e.kind, *self._who(c), track=track, offset=off,
                               speed=math.nan, value=e.value, detail=e.detail)
            self._log(ev)
        self._seen_log[li] = len(eng.log)

    # ------------------------------------------------------------------ forces
    def _forces(self) -> None:
        cars = self.scenario.cars
        for li, (ln, m, eng) in enumerate(zip(self.lines, self.members, self.engines,
                                              strict=True)):
            if eng is None:
                continue
            x, v = eng.x, eng.v
            force, friction = profile_forces(ln.route, x, self.half[m], v, cars.weight[m],
                                             tuple(c[m] for c in cars.c),
                                             tuple(s[m] for s in cars.start))
            eng.force[:] = force
            eng.friction[:] = (friction + self.hand_brake[m] * cars.hand_brake_force[m]
                               + self.chock[m] * cars.chock_force[m]
                               + self._retarders(li, x, v))
        for mv in self.moves:
            self._move_force(mv)

    def _retarders(self, li: int, x: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Each car's retarder force: while its cut is faster than the speed the retarder
        aims at, the cut is braked, with the retarder's force on each car in proportion
        to the share of it inside, or less where that would take the cut below the speed
        within the step."""
        out = np.zeros(x.size)
        ln, m = self.lines[li], self.members[li]
        cars = self.scenario.cars
        for r_i, k, qa, qb in self._retarders_on[li]:
            r = self.net.retarders[r_i]
            h = self.half[m]
            inside = np.clip(np.minimum(x + h, qb) - np.maximum(x - h, qa), 0.0, None)
            cut_of = cars.cut[m]
            for cut in np.unique(cut_of[inside > 0.0]):
                cut = int(cut)
                mine = cut_of == cut
                vm = float(v[mine].mean())  # the cut's: it brakes as one
                speed = abs(vm)
                plan = self.targets.get((r_i, cut))
                if plan is None:
                    plan = self._exit_plan(r, cut, vm * (1 if ln.forward[k] else -1) >= 0)
                    self.targets[(r_i, cut)] = plan
                    self._log(YardEvent(self.t, "retarder", self.scenario.cut_names[cut],
                                        track=self.net.tracks[r["track"]].name,
                                        speed=speed, value=plan(None),
                                        detail=f"{r['name']}: exit speed "
                                               f"{plan(None):.2f} m/s"))
                # the offset of the cut's leading end along the retarder's track
                lead = float((x[mine] + h[mine]).max() if vm >= 0 else (x[mine] - h[mine]).min())
                local = lead - ln.starts[k]
                offset = local if ln.forward[k] else ln.lengths[k] - local
                target = plan(offset)
                if speed > target:
                    sel = mine & (inside > 0.0)
                    full = r["force"] * inside[sel] / (2.0 * h[sel])
                    need = float(cars.mass[m][mine].sum()) * (speed - target) / self.dt
                    out[sel] = full * min(1.0, need / float(full.sum()))
        return out

    def _exit_plan(self, r: dict, cut: int, forward: bool):
        """The speed retarder ``r`` aims at for ``cut`` (running ``forward`` along its
        track or not), as a function of where the cut's leading end is on the track
        (``None``: at the retarder's far end): its own exit speed, or by the
        energy-height rule the speed from which the cut, rolling on, meets the cars on
        its destination track (or that track's far buffer stop) at the yard's coupling
        target: ``v^2 = v_c^2 + 2 (R s - W dh) / M`` over the run ``s`` left and the
        drop ``dh`` on the way (resistance ``R`` at ``v_c`` with the curves, weight ``W``,
        effective mass ``M``)."""
        length = self.net.tracks[r["track"]].length
        end = r["to"] if forward else r["from"]
        if r["exit_speed"] is not None:
            return lambda offset: r["exit_speed"]
        cfg = self.scenario.config
        dest = cfg["cuts"][cut]["destination"]
        d = None if dest is None else self.net.track_index[dest]
        chain = None if d is None else self.net.path(r["track"], forward, d)
        if chain is None:
            return lambda offset: math.inf
        _, starts, route = self.net.chain_route(chain)
        track, offset, tspeed, _ = self._state()
        cars = self.scenario.cars
        members = np.flatnonzero(cars.cut == cut)
        # where the cars on the destination track will stand: packed against its far end
        # (with the cuts that passed this retarder for it before), or the nearest one that
        # stands already, if it is nearer
        last_fwd = chain[-1][1]
        length_d = self.net.tracks[d].length
        others = np.flatnonzero((track == d) & (cars.cut != cut))
        queued = [k for (ri, k) in self.targets if self.net.retarders[ri] is r and k != cut
                  and cfg["cuts"][k]["destination"] == dest]
        coming = np.flatnonzero(np.isin(cars.cut, queued) & (track != d))
        packed = length_d - cars.length[others].sum() - cars.length[coming].sum()
        still = others[np.abs(tspeed[others]) < cfg["stop"]["standstill_speed"]]
        if last_fwd:
            near = min([packed, *(offset[still] - self.half[still])])
        else:
            near = max([length_d - packed, *(offset[still] + self.half[still])])
        q_couple = starts[-1] + (near if last_fwd else length_d - near)
        v_c = cfg["coupling_target"]
        weight = float(cars.weight[members].sum())
        mass_eff = float(cars.mass[members].sum())
        running = float(resistance.quadratic_force(v_c, *(c[members] for c in cars.c)).sum())
        h_couple = float(elevation(route.track, q_couple))

        def target(at: float | None) -> float:
            q = (end if forward else length - end) if at is None else \
                (at if forward else length - at)
            run = q_couple - q
            if run <= 0.0:
                return 0.0
            curve = float(mean_rate(route.track, CURVE, np.array([0.5 * (q + q_couple)]),
                                    np.array([0.5 * run]))[0])
            drop = float(elevation(route.track, q)) - h_couple
            resist = running + curve * weight * 1e-3
            v2 = v_c * v_c - 2.0 * (weight * drop - resist * run) / mass_eff
            return math.sqrt(max(v2, MIN_EXIT_SPEED ** 2))

        return target

    def _move_force(self, mv: dict) -> None:
        if mv["phase"] == "wait":
            if self.t < mv["start"] - 1e-9:
                return
            mv["phase"] = "drive"
            self._log(YardEvent(self.t, "move", mv["cut"], mv["vehicle"], speed=mv["speed"],
                                detail=f"{mv['kind']} drives at {mv['speed']:.2f} m/s"))
        c = mv["car"]
        li, i = self._locate_car(c)
        eng = self.engines[li]
        sign = float(self.line_face[c])
        brake = mv["brake_force"] if mv["brake_force"] is not None else mv["max_force"]
        v_cut = float(eng.v[i]) * sign
        if mv["phase"] == "drive" and mv["until_time"] is not None \
                and self.t >= mv["until_time"] - 1e-9:
            self._done(mv, "time")
        if mv["phase"] == "hold":
            eng.friction[i] += brake
            return
        target = mv["speed"] if mv["phase"] == "drive" else 0.0
        if mv["phase"] == "brake" and abs(v_cut) < HOLD_SPEED:
            mv["phase"] = "hold"
            eng.friction[i] += brake
            return
        i0, i1 = eng.group_span(i)
        mass = float(eng.mass[i0:i1].sum())
        along = float(eng.force[i0:i1].sum()) * sign  # gravity, in the cut's direction
        fr = float(eng.friction[i0:i1].sum())
        direction = math.copysign(1.0, v_cut if abs(v_cut) > 1e-6 else (target or 1.0))
        need = mass * (target - v_cut) / mv["response_time"] - along + direction * fr
        push = need * direction
        if push >= 0.0 and (target * direction > 0.0 or abs(v_cut) > 1e-6):
            eng.force[i] += sign * direction * min(push, mv["max_force"])
        else:
            eng.friction[i] += min(-push, brake) if push < 0.0 else 0.0

    def _done(self, mv: dict, why: str, t: float | None = None) -> None:
        mv["phase"] = "brake"
        self._log(YardEvent(self.t if t is None else t, "move", mv["cut"], mv["vehicle"],
                            detail=f"{mv['kind']} stops ({why})"))

    # ------------------------------------------------------------------ controls
    def _controls(self) -> None:
        """Actions due, and route setting."""
        while self._next_action < len(self._actions) and \
                self._actions[self._next_action]["at"] <= self.t + 1e-9:
            a = self._actions[self._next_action]
            self._next_action += 1
            if a["switch"] is not None:
                k = self.net.switch_index[a["switch"]]
                if not self.throw(k, 0 if a["position"] == "normal" else 1):
                    self._log(YardEvent(self.t, "switch refused", detail=f"{a['switch']}: a "
                                        "car stands on it"))
            else:
                k = self.scenario.cut_names.index(a["cut"])
                members = np.flatnonzero(self.scenario.cars.cut == k)
                has = self.scenario.cars.hand_brake_force[members] > 0.0
                self.hand_brake[members[has]] = a["hand_brakes"]
                self._log(YardEvent(self.t, "hand brakes", a["cut"],
                                    detail="on" if a["hand_brakes"] else "off"))
        self._route_setting()

    def _route_setting(self) -> None:
        for k, q in self.queue.items():
            while q:
                cut = q[0]
                on = {int(self.scenario.cars.cut[c]) for c in self.occupants(k)}
                want = dict(self.route_of[cut])[k]
                if cut in on:
                    if (cut, k) not in self._seen and self.positions[k] != want:
                        self._misrouted(cut, k)
                        continue
                    self._seen.add((cut, k))
                    break
                if (cut, k) in self._seen:  # it has passed: the next cut's turn
                    q.pop(0)
                    continue
                if self.positions[k] != want and not on:
                    self.throw(k, want)
                break

    def _misrouted(self, cut: int, k: int) -> None:
        self.misrouted.add(cut)
        for q in self.queue.values():
            if cut in q:
                q.remove(cut)
        self._log(YardEvent(self.t, "misrouted", self.scenario.cut_names[cut],
                            detail=f"{self.net.switches[k].name} was not set for it"))

    def _path_of(self, cut: int, to: int) -> list[tuple[int, bool]] | None:
        """Tracks from where the cut's leading end stands to track ``to``: it leads
        towards its front, unless a move drives it backwards."""
        cfg = self.scenario.config
        name = cfg["cuts"][cut]["name"]
        back = any(m["cut"] == name and m["speed"] < 0 for m in cfg["moves"])
        members = np.flatnonzero(self.scenario.cars.cut == cut)
        lead = members[-1] if back else members[0]
        track, _, _, face = self._state()
        forward = (face[lead] > 0) != back
        return self.net.path(int(track[lead]), bool(forward), to)

    # ------------------------------------------------------------------ geometry
    def vehicle_ends(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Where each car's front and rear are: front track (index into the network's
        tracks), front offset, rear track, rear offset (m from the track's start). A cut
        may span several tracks, and so may a car over a joint."""
        ft, fo = np.empty(self.n, dtype=int), np.empty(self.n)
        rt, ro = np.empty(self.n, dtype=int), np.empty(self.n)
        for ln, m, eng in zip(self.lines, self.members, self.engines, strict=True):
            if eng is None:
                continue
            reach = self.line_face[m] * self.half[m]
            ft[m], fo[m] = ln.locate(eng.x + reach)
            rt[m], ro[m] = ln.locate(eng.x - reach)
        return ft, fo, rt, ro

    def car_ends(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Plan coordinates of each car's two ends (n, 2) each, and the track it is on."""
        p = np.empty((self.n, 2))
        q = np.empty((self.n, 2))
        for li, m in enumerate(self.members):
            if m.size:
                p[m], q[m] = self._ends(li, np.arange(m.size))
        return p, q, self._state()[0]

    def _conflict_regions(self) -> list[tuple[int, float, float, int, float, float]]:
        """The network's conflict zones in line coordinates: (line, lo, hi) twice."""
        where = {t: li for li, ln in enumerate(self.lines) for t in ln.tracks}
        out = []
        for t, a0, a1, u, b0, b1 in self._zones:
            lt, lu = where[t], where[u]
            if lt == lu:
                continue
            qa = sorted((self.lines[lt].coordinate(t, a0), self.lines[lt].coordinate(t, a1)))
            qb = sorted((self.lines[lu].coordinate(u, b0), self.lines[lu].coordinate(u, b1)))
            out.append((lt, qa[0], qa[1], lu, qb[0], qb[1]))
        return out

    def _cars_in(self, li: int, lo: float, hi: float) -> np.ndarray:
        """Local indices of the cars of line ``li`` reaching into [lo, hi]."""
        eng = self.engines[li]
        if eng is None:
            return np.zeros(0, dtype=int)
        x, h = eng.x, self.half[self.members[li]]
        i0 = np.searchsorted(x + h, lo)
        i1 = np.searchsorted(x - h, hi, side="right")
        return np.arange(i0, i1)

    def _ends(self, li: int, local: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Plan coordinates of the two ends of line ``li``'s cars ``local``."""
        ln, eng = self.lines[li], self.engines[li]
        x, h = eng.x[local], self.half[self.members[li][local]]
        ta, oa = ln.locate(x - h)
        tb, ob = ln.locate(x + h)
        return self.net.xy(ta, oa), self.net.xy(tb, ob)

    def _side_pairs(self) -> list[tuple[int, int]]:
        """Pairs of cars on different lines closer than the clearance width. Only cars in
        the network's conflict zones (found once, through a grid of cells) are tested,
        so the cost grows with the cars near fouling points, not with all pairs."""
        w = self.scenario.config["clearance_width"]
        found = set()
        for lt, a0, a1, lu, b0, b1 in self._zone_regions:
            ct = self._cars_in(lt, a0, a1)
            if ct.size == 0:
                continue
            cu = self._cars_in(lu, b0, b1)
            if cu.size == 0:
                continue
            pt, qt = self._ends(lt, ct)
            pu, qu = self._ends(lu, cu)
            for i, a in enumerate(self.members[lt][ct]):
                for j, b in enumerate(self.members[lu][cu]):
                    if _segment_distance(pt[i], qt[i], pu[j], qu[j]) < w:
                        found.add((int(min(a, b)), int(max(a, b))))
        return sorted(found)

    def fouling(self) -> dict[int, list[str]]:
        """For each car that fouls another track (stands closer than the clearance width
        to its centre line), the tracks it fouls."""
        p, q, track = self.car_ends()
        w = self.scenario.config["clearance_width"]
        out: dict[int, list[str]] = {}
        for t, tr in enumerate(self.net.tracks):
            a, b = tr.xy[:-1], tr.xy[1:]
            box_lo = np.minimum(a, b).min(axis=0) - w
            box_hi = np.maximum(a, b).max(axis=0) + w
            near = np.flatnonzero(((np.minimum(p, q) <= box_hi) & (np.maximum(p, q) >= box_lo))
                                  .all(axis=1))
            for c in near:
                if track[c] == t or (int(track[c]), t) in self._joined_tracks:
                    continue
                if any(_segment_distance(p[c], q[c], a[j], b[j]) < w for j in range(len(a))):
                    out.setdefault(int(c), []).append(tr.name)
        return out

    # ------------------------------------------------------------------ stepping
    def advance(self, t_end: float) -> str | None:
        """Run on to ``t_end`` (or until a stop condition); returns the stop reason, or
        None if it reached ``t_end``."""
        stop = self.scenario.config["stop"]
        while self.t < t_end - 1e-12 and self.stop_reason is None:
            self._controls()
            self._forces()
            t_next = min(self.t + self.dt, t_end)
            t0, engines = self.t, list(self.engines)
            x0 = [e.x if e is not None else None for e in engines]
            self._step_to(t_next)
            if self.stop_reason is not None:
                break
            if engines == self.engines:  # the lines stood: compare line coordinates
                self._passages(x0, t0)
                self._moves_reached(x0)
            after = self._state()
            self.max_speed = max(self.max_speed, float(np.abs(after[2]).max()))
            self._check_sides()
            if stop["standstill"] and all(m["phase"] == "hold" for m in self.moves) and \
                    self.max_speed > stop["standstill_speed"] and \
                    all(e is None or e.at_rest(stop["standstill_speed"])
                        for e in self.engines):
                self.stop_reason = "standstill"
        if self.stop_reason is None and self.t >= stop["max_time"] - 1e-9:
            self.stop_reason = "max_time"
        return self.stop_reason

    def _step_to(self, t_next: float) -> None:
        """Advance every line to ``t_next``; a car reaching a switch set against it ends
        the step there for all lines (they are re-run from the step's start)."""
        start_state = self._state()
        start_coupled = set(self.coupled)
        forces = [(e.force.copy(), e.friction.copy()) if e is not None else None
                  for e in self.engines]
        earliest, line_hit = t_next, None
        for li, eng in enumerate(self.engines):
            if eng is None:
                continue
            eng.advance(t_next)
            if eng.reached is not None and eng.t < earliest:
                earliest, line_hit = eng.t, li
        self._cached = None
        if line_hit is None:
            for li, eng in enumerate(self.engines):
                if eng is not None:
                    self._collect(li)
            self.t = t_next
            return
        # again from the start of the step, every line to the instant of the run-through
        self.coupled = start_coupled
        self._form(*start_state)
        for eng, f in zip(self.engines, forces, strict=True):
            if eng is not None:
                eng.force[:], eng.friction[:] = f
        for li, eng in enumerate(self.engines):
            if eng is not None:
                eng.advance(earliest)
                self._collect(li)
        self._cached = None
        self.t = earliest
        eng = self.engines[line_hit]
        end = 0 if eng.reached == "rear" else 1
        k = int(self.lines[line_hit].ends[end][1])
        c = int(self.members[line_hit][0 if end == 0 else -1])
        s = self.net.switches[k]
        track, off = self._where(line_hit, eng.x[0 if end == 0 else -1])
        speed = abs(float(eng.v[0 if end == 0 else -1]))
        self._log(YardEvent(self.t, "run-through", *self._who(c), track=track, offset=off,
                            speed=speed, detail=f"{s.name} set against it"))
        if self.scenario.config["run_through"] == "stop":
            self.stop_reason = f"run-through of switch {s.name}"
            return
        leg = next(i for i, (t, _) in enumerate(s.legs)
                   if t == self.lines[line_hit].tracks[0 if end == 0 else -1])
        try:
            self.throw(k, leg, forced=True)
        except RuntimeError:  # forced over under a car standing across its points
            self.stop_reason = f"run-through of switch {s.name} under a standing car"
            return
        self.forced.append(s.name)

    def _check_sides(self) -> None:
        pairs = set(self._side_pairs())
        new = sorted(pairs - self._overlaps)
        self._overlaps = pairs
        _, _, tspeed, _ = self._state()
        for a, b in new:
            rel = abs(tspeed[a]) + abs(tspeed[b])
            self._log(YardEvent(self.t, "side collision", *self._who(a), *self._who(b),
                                track=self.net.tracks[self._state()[0][a]].name,
                                speed=rel, detail="cars on different lines closer than "
                                "the clearance width"))
        if new and self.scenario.config["side_collision"] == "stop":
            self.stop_reason = "side collision"

    def _point_coordinates(self, li: int) -> dict[str, float]:
        ln = self.lines[li]
        return {name: ln.coordinate(t, o) for name, (t, o) in self.net.points.items()
                if t in ln.tracks}

    def _runs(self, li: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The cuts on line ``li`` in order, where each one's cars begin among the line's
        cars, and how many it has there (cars do not pass each other on a line)."""
        cut = self.scenario.cars.cut[self.members[li]]
        if cut.size == 0:
            return cut, np.zeros(0, dtype=int), np.zeros(0, dtype=int)
        starts = np.flatnonzero(np.concatenate([[True], cut[1:] != cut[:-1]]))
        counts = np.diff(np.concatenate([starts, [cut.size]]))
        return cut[starts], starts, counts

    def _passages(self, x0: list, t0: float) -> None:
        """Named points the cuts' leading ends passed in the last step (each cut's
        first passage; its time interpolated within the step, its speed the step's mean)."""
        if self.t <= t0:
            return
        for li, (m, eng) in enumerate(zip(self.members, self.engines, strict=True)):
            if eng is None or not self._points[li]:
                continue
            names, p = self._points[li]
            cuts, starts, counts = self._runs_of[li]
            x1, h = eng.x, self.half[m]
            v = np.add.reduceat(eng.v, starts) / counts
            ahead = v >= 0.0
            a = np.where(ahead, np.maximum.reduceat(x0[li] + h, starts),
                         np.minimum.reduceat(x0[li] - h, starts))
            b = np.where(ahead, np.maximum.reduceat(x1 + h, starts),
                         np.minimum.reduceat(x1 - h, starts))
            cross = ((a[:, None] - p) * (b[:, None] - p) <= 0.0) & (a != b)[:, None]
            for i, j in zip(*np.nonzero(cross), strict=True):
                k, name = int(cuts[i]), names[j]
                if name in self.passages[k]:
                    continue
                w = (p[j] - a[i]) / (b[i] - a[i])
                self.passages[k][name] = {"time_s": t0 + w * (self.t - t0),
                                          "speed_mps": abs(b[i] - a[i]) / (self.t - t0)}

    def _moves_reached(self, x0: list) -> None:
        for mv in self.moves:
            if mv["phase"] != "drive" or mv["until_point"] is None:
                continue
            li, i = self._locate_car(mv["car"])
            names, coordinates = self._points[li] or ((), ())  # formed with the lines
            p = coordinates[names.index(mv["until_point"])] \
                if mv["until_point"] in names else None
            if p is not None and (x0[li][i] - p) * (self.engines[li].x[i] - p) <= 0.0:
                self._done(mv, f"at {mv['until_point']}")

    # ------------------------------------------------------------------ report
    def report(self) -> list[dict]:
        """Per cut: where it ended, whether on its destination, its first meeting with
        another cut (coupling or impact speed), speeds at the named points, gap to what
        stands ahead if it stopped short, tracks it fouls, run-throughs."""
        cfg = self.scenario.config
        cars = self.scenario.cars
        track, offset, tspeed, _ = self._state()
        fouls = self.fouling()
        out = []
        for k, name in enumerate(self.scenario.cut_names):
            m = np.flatnonzero(cars.cut == k)
            tracks = sorted({self.net.tracks[int(t)].name for t in track[m]})
            dest = cfg["cuts"][k]["destination"]
            contact = self.first_contact.get(k)
            coupled_to = sorted({self.scenario.cut_names[cars.cut[j if i in m else i]]
                                 for i, j in self.coupled
                                 if (i in m) != (j in m)})
            gap = self._gap_ahead(k, track, offset)
            row = {
                "cut": name,
                "vehicles": int(m.size),
                "destination": dest or "",
                "tracks": tracks,
                "on_destination": dest is not None and tracks == [dest],
                "misrouted": k in self.misrouted,
                "coupling_speed_mps": None if contact is None else contact.speed,
                "met_by": None if contact is None else contact.kind,
                "coupled_to": coupled_to,
                "stopped_short": bool(dest is not None and math.isfinite(gap) and gap > 1.0),
                "gap_ahead_m": None if not math.isfinite(gap) else round(gap, 3),
                "points": self.passages.get(k, {}),
                "fouls": sorted({t for c in m for t in fouls.get(int(c), [])}),
                "run_throughs": [e.detail.split()[0] for e in self.events
                                 if e.kind == "run-through" and e.cut == name],
                "final_speed_mps": float(np.abs(tspeed[m]).max()),
            }
            out.append(row)
        return out

    def _gap_ahead(self, k: int, track: np.ndarray, offset: np.ndarray) -> float:
        """Distance from a cut to the nearest car or buffer stop ahead of it on its
        line, in the direction of its destination (towards its front otherwise)."""
        cars = self.scenario.cars
        m = np.flatnonzero(cars.cut == k)
        li, i0 = self._locate_car(int(m[0]))
        eng, members = self.engines[li], self.members[li]
        local = np.flatnonzero(np.isin(members, m))
        sign = float(self.line_face[m[0]])
        x, h = eng.x, self.half[members]
        ln = self.lines[li]
        if sign > 0:
            j = local.max()
            face = x[j] + h[j]
            if j + 1 < len(members):
                return float(x[j + 1] - h[j + 1] - face)
            return ln.length - face if ln.ends[1][0] == "stop" else math.inf
        j = local.min()
        face = x[j] - h[j]
        if j > 0:
            return float(face - x[j - 1] - h[j - 1])
        return face if ln.ends[0][0] == "stop" else math.inf
