"""Open Rails' physics tokens of an ``.eng`` or ``.wag`` mapped to an rrscore vehicle config.

Each token rrscore has a key for is read with its unit (:mod:`.units`) and put under
that key; where the file names the key's source, :attr:`ImportedVehicle.sources` says
which token (and line) it came from, for the comments of the written file. Tokens
without an rrscore key are collected in :attr:`ImportedVehicle.unmapped`. The token
table, with each unit conversion, is ``docs/openrails.md``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...model.config import Context, validate
from ...model.errors import ConfigError, each_error
from ...model.vehicle import VEHICLE_SCHEMA
from .stf import Block, StfError, Word, read_file
from .units import split_number, to_si

#: rrscore vehicle types an import writes: an engine drives with TableLoco, a wagon is an
#: unpowered car.
ENGINE_TYPE, WAGON_TYPE = "table_loco", "freight_car"
#: Axles assumed where the file gives no ORTSNumberAxles / ORTSNumberDriveAxles.
DEFAULT_AXLES = 4

# The tokens read, by section (lower case): each mapped token is recorded as consumed.
_WAGON_TOKENS = ("mass", "size", "wheelradius", "ortsnumberaxles", "ortsdavis_a",
                 "ortsdavis_b", "ortsdavis_c", "maxhandbrakeforce", "maxbrakeforce",
                 "coupling", "ortsadhesion")
_ENGINE_TOKENS = ("maxforce", "maxpower", "ortsmaxrailoutputpower",
                  "ortsmaxtractiveforcecurves", "dynamicbrakesmaximumforce",
                  "dynamicbrakeforcecurves", "dynamicbrakesminusablespeed",
                  "ortsnumberdriveaxles", "wheelradius")


@dataclass
class ImportedVehicle:
    """One vehicle file read: its rrscore ``[vehicle]`` table (with ``resistance``) and
    ``[params]`` (SI values), where each came from, its coupler (a train's coupling
    table, or None) and the tokens not mapped."""

    path: Path
    kind: str
    vehicle: dict[str, Any]
    params: dict[str, Any]
    sources: dict[str, str] = field(default_factory=dict)
    coupling: dict[str, Any] | None = None
    unmapped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class _Reader:
    """Reads tokens of one section, remembering which it used."""

    def __init__(self, section: Block, file: str, label: str) -> None:
        self.section, self.file, self.label = section, file, label
        self.used: set[str] = set()

    def block(self, name: str) -> Block | None:
        found = self.section.block(name)
        if found is not None:
            self.used.add(name.lower())
        return found

    def values(self, name: str, dims: tuple[str, ...], least: int = 1
               ) -> tuple[list[float], str] | None:
        """The first ``len(dims)`` values of the block ``name``, each read as its
        dimension (at least ``least`` of them), and where they came from; None without
        the block."""
        b = self.block(name)
        if b is None:
            return None
        words = b.flat_words()
        if len(words) < least:
            raise StfError(self.file, b.line, f"{b.name}: found {len(words)} values, expected "
                                              f"at least {least}")
        out = [to_si(w, d, self.file, b.name) for w, d in zip(words, dims, strict=False)]
        text = " ".join(w.text for w in words[:len(dims)])
        return out, f"{b.name} ( {text} ), {where(b, self.file)}"

    def value(self, name: str, dim: str) -> tuple[float, str] | None:
        got = self.values(name, (dim,))
        return None if got is None else (got[0][0], got[1])

    def unused(self, prefix: str = "") -> list[str]:
        names = [i.name for i in self.section.items
                 if isinstance(i, Block) and i.name and i.name.lower() not in self.used]
        return [prefix + n for n in dict.fromkeys(names)]


def where(block: Block, file: str) -> str:
    """``line N`` of ``block``, with the name of the file it came from where an include
    brought it in."""
    return f"line {block.line}" + (f" of {Path(block.file).name}" if block.file != file else "")


def _section(root: Block, name: str) -> Block | None:
    found = root.blocks(name)
    return found[0] if found else None


def read_vehicle(path: str | Path) -> ImportedVehicle:
    """Read the ``.eng`` or ``.wag`` at ``path`` into an :class:`ImportedVehicle`; a file
    without a ``Wagon`` block, or a token that cannot be read, is a :class:`StfError`."""
    p = Path(path)
    file = str(path)
    root = read_file(p)
    wagon = _section(root, "Wagon")
    if wagon is None:
        raise StfError(file, None, "found no 'Wagon ( ... )' block, expected an Open Rails "
                                   "or MSTS .eng or .wag file")
    engine = _section(root, "Engine")
    kind = "engine" if engine is not None else "wagon"
    w = _Reader(wagon, file, "Wagon")
    e = _Reader(engine, file, "Engine") if engine is not None else None
    out = ImportedVehicle(p, kind, {}, {})
    veh, src = out.vehicle, out.sources
    names = [i.text for i in wagon.items if isinstance(i, Word)]
    veh["type"] = ENGINE_TYPE if e else WAGON_TYPE
    veh["name"] = names[0] if names else p.stem

    def put(table: dict, key: str, got: tuple[float, str] | None, scale: float = 1.0,
            path: str | None = None) -> bool:
        if got is None:
            return False
        table[key] = got[0] * scale
        src[path or key] = got[1]
        return True

    if not put(veh, "empty_mass", w.value("Mass", "mass"), path="vehicle.empty_mass"):
        raise StfError(file, wagon.line, "Wagon: found no Mass ( ... ), expected the "
                                         "vehicle's mass")
    size = w.values("Size", ("length", "length", "length"), least=3)
    if size is None:
        raise StfError(file, wagon.line, "Wagon: found no Size ( width height length ), "
                                         "expected the vehicle's length")
    veh["length"] = size[0][2]
    src["vehicle.length"] = size[1] + " (the third value)"

    _axles(w, e, out)
    radius = (e.value("WheelRadius", "length") if e else None) or \
        w.value("WheelRadius", "length")
    if not put(veh, "wheel_diameter", radius, 2.0, "vehicle.wheel_diameter"):
        out.notes.append("no WheelRadius: rrscore's default wheel diameter (1.05 m)")
    _inertia(w, e, out)
    _resistance(w, out)
    if e is not None:
        _engine(e, w, out)
    else:
        put(out.params, "hand_brake_force", w.value("MaxHandbrakeForce", "force"),
            path="params.hand_brake_force")
    _coupling(w, out)
    out.unmapped = w.unused() + (e.unused("Engine.") if e else [])
    if e is None and w.section.block("MaxBrakeForce") is not None:
        out.notes.append("MaxBrakeForce of a car: rrscore's air brake is built from "
                         "cylinders, rigging and shoes, which the file does not give")
    _check(out, file)
    bst = wagon.block("BrakeSystemType")
    if bst is not None:
        words = " ".join(x.text for x in bst.flat_words())
        out.notes.append(f"BrakeSystemType ( {words} ): not mapped (rrscore's [vehicle.brake] "
                         "needs cylinder, reservoir and shoe data)")
    return out


def _check(out: ImportedVehicle, file: str) -> None:
    """Refuse, naming the token, a value rrscore's vehicle config would refuse (a mass of
    0, a wheel 4 m across) or a negative one for a plugin's params (forces, powers)."""
    try:
        validate({"vehicle": out.vehicle, "params": {}}, VEHICLE_SCHEMA, Context(file))
    except ConfigError as exc:
        first = each_error(exc)[0]
        key = first.key or ""
        line, token = _line_of(out.sources.get(key, ""))
        raise StfError(file, line, f"{token}gives {key} = {_shown(key, out)}, which rrscore "
                                   f"refuses ({first.message})") from None
    for key, value in out.params.items():
        values = value if isinstance(value, list) else [value]
        if any(v < 0 for v in values):
            line, token = _line_of(out.sources.get(f"params.{key}", ""))
            raise StfError(file, line, f"{token}gives params.{key} a negative value, "
                                       "expected none")


def _line_of(source: str) -> tuple[int | None, str]:
    """The line of a source ("Mass ( 0t ), line 2") and its token's text ("Mass ( 0t ): ")."""
    token, _, where = source.partition(", line ")
    number = where.split(" ")[0]
    if not number.isdigit() or " of " in where:  # (an included file's line: say which)
        return None, f"{source}: " if source else ""
    return int(number), f"{token}: "


def _shown(key: str, out: ImportedVehicle) -> str:
    node: Any = {"vehicle": out.vehicle}
    for part in key.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return f"{node:g}" if isinstance(node, int | float) else repr(node)


def _axles(w: _Reader, e: _Reader | None, out: ImportedVehicle) -> None:
    def count(reader: _Reader | None, name: str) -> tuple[int, str] | None:
        got = reader.values(name, ("number",)) if reader else None
        if got is None:
            return None
        n = got[0][0]
        if n != int(n) or not 0 <= n <= 32:
            b = reader.section.block(name)
            raise StfError(reader.file, b.line, f"{name}: found {n:g}, expected a whole "
                                                "number of axles, 0 to 32")
        return int(n), got[1]

    carried = count(w, "ORTSNumberAxles")
    if e is None:
        n = carried[0] if carried else DEFAULT_AXLES
        if carried:
            out.sources["vehicle.num_axis"] = carried[1]
        else:
            out.notes.append(f"no ORTSNumberAxles: {DEFAULT_AXLES} axles assumed")
        out.vehicle["num_axis"] = max(n, 1)
        return
    driven = count(e, "ORTSNumberDriveAxles")
    d = driven[0] if driven else DEFAULT_AXLES
    if driven:
        out.sources["params.drive_axles"] = driven[1]
    else:
        out.notes.append(f"no ORTSNumberDriveAxles: {DEFAULT_AXLES} driven axles assumed")
    out.params["drive_axles"] = max(d, 1)
    out.vehicle["num_axis"] = max(d, 1) + (carried[0] if carried else 0)
    out.sources["vehicle.num_axis"] = "ORTSNumberDriveAxles" + (
        " + ORTSNumberAxles (the axles not driven)" if carried else "")


def _inertia(w: _Reader, e: _Reader | None, out: ImportedVehicle) -> None:
    adhesion = w.section.block("ORTSAdhesion")
    axle = None
    if adhesion is not None:
        wheelset = adhesion.block("Wheelset")
        axle = wheelset.block("Axle") if wheelset is not None else None
    inertia = axle.block("ORTSInertia") if axle is not None else None
    if inertia is None:
        return
    w.used.add("ortsadhesion")  # (its other settings: rrscore's adhesion laws are its own)
    words = inertia.flat_words()
    if not words:
        raise StfError(w.file, inertia.line, "ORTSInertia: found no value, expected a moment "
                                             "of inertia")
    total = to_si(words[0], "inertia", w.file, "ORTSInertia")
    # Open Rails models the (driven) axles as one: its inertia is shared over them
    shared = int(out.params.get("drive_axles") or out.vehicle["num_axis"])
    out.vehicle["wheelset_inertia"] = total / shared
    out.sources["vehicle.wheelset_inertia"] = (f"ORTSAdhesion ( Wheelset ( Axle ( ORTSInertia "
                                               f"( {words[0].text} ) ) ) ), line "
                                               f"{inertia.line}, over {shared} axles")


def _resistance(w: _Reader, out: ImportedVehicle) -> None:
    got = {k: w.value(f"ORTSDavis_{k}", d) for k, d in
           (("A", "force"), ("B", "davis_b"), ("C", "davis_c"))}
    res: dict[str, Any] = {}
    if any(got.values()):
        res["formula"] = "davis"
        for k, v in got.items():
            res[k] = v[0] if v else 0.0
            if v:
                out.sources[f"vehicle.resistance.{k}"] = v[1]
        res["starting"] = False
    else:
        res["formula"] = "loco_power" if out.vehicle["type"] == ENGINE_TYPE else \
            "freight_4axle_roller"
        out.notes.append(f"no ORTSDavis_A/B/C: rrscore's {res['formula']!r} resistance formula")
    out.vehicle["resistance"] = res


def _curves(reader: _Reader, name: str, out: ImportedVehicle, keys: tuple[str, str, str]
            ) -> None:
    b = reader.block(name)
    if b is None:
        return
    notches: list[tuple[float, list[tuple[float, float]]]] = []
    for item in b.items:
        if isinstance(item, Word):
            raise StfError(reader.file, item.line, f"{name}: found {item.text!r}, expected "
                                                   "a notch block: throttle ( speed force ...)")
        parsed = split_number(item.name)
        if parsed is None or parsed[1] or not 0.0 <= parsed[0] <= 1.0:
            raise StfError(reader.file, item.line, f"{name}: found {item.name!r} before '(', "
                                                   "expected a throttle setting from 0 to 1")
        words = item.flat_words()
        if len(words) % 2 or not words:
            raise StfError(reader.file, item.line, f"{name}: notch {item.name}: found "
                                                   f"{len(words)} numbers, expected pairs of "
                                                   "speed and force")
        pts = [(to_si(words[k], "speed", reader.file, name),
                to_si(words[k + 1], "force", reader.file, name))
               for k in range(0, len(words), 2)]
        for k in range(1, len(pts)):
            if pts[k][0] < pts[k - 1][0]:
                raise StfError(reader.file, words[2 * k].line, f"{name}: notch {item.name}: "
                                                              f"found speed {words[2 * k].text} "
                                                              "after a higher one, expected "
                                                              "speeds in increasing order")
        if any(s < 0 or f < 0 for s, f in pts):
            raise StfError(reader.file, item.line, f"{name}: notch {item.name}: found a "
                                                   "negative speed or force, expected none")
        notches.append((parsed[0], pts))
    notches.sort(key=lambda n: n[0])
    level, speed, force = keys
    out.params[level] = [n for n, pts in notches for _ in pts]
    out.params[speed] = [s for _, pts in notches for s, _ in pts]
    out.params[force] = [f for _, pts in notches for _, f in pts]
    for key in keys:
        out.sources[f"params.{key}"] = f"{b.name} ( ... ), line {b.line}, " \
                                       f"{len(notches)} notches"


def _engine(e: _Reader, w: _Reader, out: ImportedVehicle) -> None:
    params, src = out.params, out.sources

    def put(key: str, got: tuple[float, str] | None) -> None:
        if got is not None:
            params[key] = got[0]
            src[f"params.{key}"] = got[1]

    put("max_force", e.value("MaxForce", "force"))
    rail = e.value("ORTSMaxRailOutputPower", "power")
    power = e.value("MaxPower", "power")
    put("max_power", rail or power)
    if rail and power:
        out.notes.append("MaxPower read, superseded by ORTSMaxRailOutputPower (the power at "
                         "the rail)")
    _curves(e, "ORTSMaxTractiveForceCurves", out, ("curve_throttle", "curve_speed",
                                                    "curve_force"))
    put("dynamic_brake_force", e.value("DynamicBrakesMaximumForce", "force"))
    _curves(e, "DynamicBrakeForceCurves", out, ("dynamic_brake_curve_level",
                                                 "dynamic_brake_curve_speed",
                                                 "dynamic_brake_curve_force"))
    put("dynamic_brake_min_speed", e.value("DynamicBrakesMinUsableSpeed", "speed"))
    put("brake_force", w.value("MaxBrakeForce", "force"))
    if "max_force" not in params and "curve_force" not in params:
        out.notes.append("neither MaxForce nor ORTSMaxTractiveForceCurves: the locomotive "
                         "has no tractive force")


def _coupling(w: _Reader, out: ImportedVehicle) -> None:
    coupling = w.block("Coupling")
    if coupling is None:
        return
    spring = coupling.block("Spring")
    used = {"spring"}
    params: dict[str, float] = {}
    result: dict[str, Any] = {"model": "spring_damper"}
    found = []
    if spring is not None:
        for token, key, dim in (("Stiffness", "stiffness", "stiffness"),
                                ("Damping", "damping", "davis_b"),
                                ("r0", "slack", "length"),
                                ("Break", "break_force", "force")):
            b = spring.block(token)
            if b is None:
                continue
            words = b.flat_words()
            if not words:
                raise StfError(w.file, b.line, f"{token}: found no value, expected "
                                               f"{'one or two values'}")
            value = to_si(words[0], dim, w.file, token)
            found.append(f"{token} ( {words[0].text} ... ), {where(b, w.file)}")
            if key == "break_force":
                result[key] = value
            else:
                params[key] = value
        skipped = [b.name for b in spring.items if isinstance(b, Block) and b.name.lower() not in
                   ("stiffness", "damping", "r0", "break")]
        out.notes.extend(f"Coupling.Spring.{n}: not mapped" for n in skipped)
    skipped = [b.name for b in coupling.items if isinstance(b, Block) and b.name.lower()
               not in used]
    out.notes.extend(f"Coupling.{n}: not mapped" for n in dict.fromkeys(skipped))
    if params or "break_force" in result:
        result["params"] = params
        out.coupling = result
        out.sources["coupling"] = "Coupling ( Spring ( " + "; ".join(found) + " ) )"
