"""``rrs cab SCENARIO``: drive a scenario yourself, from the terminal, paced to real time.

The drive is the same :class:`~rrscore.Drive` as ``rrs drive`` (same outputs, same
driver program from the scenario); between control steps the cab

* reads the terminal's keys (raw, one character at a time: ``termios``/``tty``) and
  applies the lead vehicle's keys they are bound to (its plugin's ``key_bindings``,
  digits for keys without one). A terminal cannot tell when a key is let go, so a
  key *latches*: the first stroke presses it, the next releases it; a key the plugin
  declares a notch key (``notch_keys``) is pressed and released by each stroke, one
  notch or position a stroke. ``q`` quits;
* waits until wall-clock time catches up with simulated time divided by ``speedup``;
* redraws a text dashboard in the units a driver reads (km/h, kN, bar, kW, %): speed
  and limit, traction and brake force, the air brake's pressures (the pipe at the lead
  and at the rear, the lead's cylinder and equalizing reservoir), the lead vehicle's
  controls (levels between 0 and 1 as percentages), signals and states, in-train force
  extremes, and the keys.

Each key stroke is a driver event (``events.csv``: ``cab: press traction_up``).
"""

from __future__ import annotations

import os
import select
import sys
import termios
import time
import tty
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import numpy as np

from ..model.errors import RrsError
from ..model.events import Event
from ..run.drive import Drive, DriveResult
from ..run.plugins import RESERVED_KEYS
from ..run.scenario import Scenario

#: A signal's unit from its name's suffix (the house's convention: ``traction_force_N``).
SUFFIX_UNITS = {"_N": "N", "_W": "W", "_Pa": "Pa", "_mps": "m/s", "_mps2": "m/s^2",
                "_J": "J", "_m": "m", "_s": "s"}


def engineering(value: float, unit: str) -> str:
    """``value`` (SI, in ``unit``) as a driver reads it: km/h, kN, bar, kW or MW, MJ,
    percent for a level between 0 and 1 (``unit`` "%"), else the SI value and unit."""
    if not np.isfinite(value):
        return f"{value} {unit}".rstrip()
    if unit == "m/s":
        return f"{value * 3.6:.1f} km/h"
    if unit == "N":
        return f"{value / 1e3:.1f} kN"
    if unit == "Pa":
        return f"{value / 1e5:.2f} bar"
    if unit == "W":
        return f"{value / 1e6:.2f} MW" if abs(value) >= 1e6 else f"{value / 1e3:.0f} kW"
    if unit == "J":
        return f"{value / 1e6:.2f} MJ"
    if unit == "%":
        return f"{value * 100:.0f} %"
    return f"{value:.4g} {unit}".rstrip()


def unit_of(model, name: str) -> str:
    """The unit the dashboard shows ``name`` of a vehicle type in: a state's declared
    unit, a 0..1 control as "%", a signal's from its name's suffix, else none."""
    if name in model.states:
        return model.states[name].unit
    control = model.controls.get(name)
    if control is not None and not isinstance(control, str):
        return "%" if (control.low, control.high) == (0.0, 1.0) else ""
    return next((unit for suffix, unit in SUFFIX_UNITS.items() if name.endswith(suffix)), "")


def bindings(model) -> dict[str, str]:
    """Terminal character -> key of a vehicle type (its class, or anything with ``keys``
    and ``key_bindings``): its ``key_bindings``, then digits 1-9 (and letters after them)
    for keys without one, skipping characters in use."""
    out = {c: k for k, c in model.key_bindings.items()}
    spare = iter(c for c in "123456789abcdefghijklmnoprtuvxyz" if c not in out
                 and c not in RESERVED_KEYS)
    for key in model.keys:
        if key not in model.key_bindings:
            out[next(spare)] = key
    return out


@contextmanager
def raw_keys(fd: int):
    """Put the terminal ``fd`` into cbreak mode (keys arrive one by one, unechoed; Ctrl-C
    still interrupts) and restore it afterwards; nothing to do if it is not a terminal."""
    if not os.isatty(fd):
        yield
        return
    saved = termios.tcgetattr(fd)
    try:
        tty.setcbreak(fd)
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


class Cab:
    """Paces a drive to real time, applies key strokes and draws the dashboard.

    :param drive: the :class:`~rrscore.Drive` to run (not started yet).
    :param speedup: simulated seconds per wall-clock second.
    :param fd: where key strokes come from (a terminal or a pipe).
    :param screen: where the dashboard goes.
    :param clock: wall-clock time in seconds (for tests).
    """

    REDRAW_S = 0.1

    def __init__(self, drive: Drive, speedup: float = 1.0, fd: int = 0,
                 screen: IO[str] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if not speedup > 0:
            raise RrsError(f"--speedup: found {speedup:g}, expected a number > 0")
        self.drive = drive
        self.speedup = speedup
        self.fd = fd
        self.screen = screen or sys.stdout
        self.clock = clock
        tr = drive.train
        #: The lead vehicle's type (its batch of the train, its plugin's class) and row.
        self.b = int(tr.batch_of[0])
        self.batch = tr.batches[self.b]
        self.model = self.batch.cls
        self.row = np.array([tr.row_of[0]])
        self.bindings = bindings(self.model)
        self.latched: set[str] = set()
        self.quit = False
        self._eof = False
        self._start = 0.0
        self._drawn = -1.0

    # ------------------------------------------------------------------ keys
    def read_keys(self) -> str:
        """The characters typed since the last call (never waits)."""
        chars = ""
        while not self._eof and select.select([self.fd], [], [], 0)[0]:
            data = os.read(self.fd, 64)
            if not data:
                self._eof = True
            chars += data.decode("utf-8", "replace")
        return chars

    def stroke(self, char: str) -> None:
        """Act on one typed character: quit, press and release a notch key (one notch a
        stroke), or latch/unlatch any other key bound to it."""
        if char in RESERVED_KEYS:
            self.quit = True
            return
        key = self.bindings.get(char)
        if key is None:
            return
        run = self.drive.run_
        # as a driver program's press or release: the key's row set, the plugin's on_input
        if key in self.model.notch_keys:
            run.system.set_input(self.b, self.row, key, 1.0, run.t)
            run.system.set_input(self.b, self.row, key, 0.0, run.t)
            detail = f"cab: notch {key}"
        else:
            pressed = key not in self.latched
            run.system.set_input(self.b, self.row, key, 1.0 if pressed else 0.0, run.t)
            (self.latched.add if pressed else self.latched.discard)(key)
            detail = f"cab: {'press' if pressed else 'release'} {key}"
        run.system.log.append(Event(run.t, "driver", vehicle=0, detail=detail))

    # ---------------------------------------------------------------- pacing
    def tick(self, fraction: float, t: float, speed: float) -> None:
        """The drive's progress call-back, at every control step: keys, dashboard, pace."""
        for char in self.read_keys():
            self.stroke(char)
        if self.quit:
            self.drive.run_.stop("quit")
        now = self.clock()
        if now - self._drawn >= self.REDRAW_S or fraction >= 1.0 or self.quit:
            self.draw()
            self._drawn = now
        delay = self._start + t / self.speedup - self.clock()
        if delay > 0 and not self.quit:
            time.sleep(delay)

    def run(self, out: str | Path) -> DriveResult:
        """Drive to a stop condition (or ``q``), writing the usual outputs to ``out``."""
        with raw_keys(self.fd):
            self._start = self.clock()
            self.draw()
            result = self.drive.run(out, progress=self.tick, chunk=self.drive.run_.control_step)
        self.screen.write("\n")
        self.screen.flush()
        return result

    # ------------------------------------------------------------- dashboard
    def dashboard(self) -> list[str]:
        """The dashboard's lines."""
        run, system, cls = self.drive.run_, self.drive.dyn, self.model
        tr = self.drive.train
        y = run.y
        x, v = y[system.sx], y[system.sv]
        front = float(x[0] + tr.half_length[0])
        limit = self.drive.scenario.route.speed_limit(front)
        # the lead's brakes as placed: its body resistance and its axles' brake torques
        # (the plugin's and the air brake's) at the rims
        ax = system.sys.axles
        lead = tr.axle_vehicle == 0
        brake = float(system.inputs.body_resist[0]
                      + (ax.brake[lead] * ax.inv_radius[lead]).sum())
        lines = [
            f"rrs cab: {self.drive.scenario.config['name']}   x{self.speedup:g} real time",
            "",
            f"time      {run.t:9.1f} s         distance {float(x[0]) - run.x0:10.0f} m",
            f"speed     {engineering(abs(float(v[0])), 'm/s'):>14s}   limit    "
            + (f"{engineering(limit, 'm/s'):>14s}" if np.isfinite(limit) else "      none"),
            f"traction  {engineering(float(system.traction_force().sum()), 'N'):>14s}   "
            f"brake    {engineering(brake, 'N'):>14s}",
        ]
        lines.extend(self.air_lines())
        # the lead's controls (levels the keys move), signals and states, from its record
        # (the states as its last control step read them)
        record, r = self.batch.record, int(self.row[0])
        for name in dict.fromkeys([*cls.controls, *cls.signals, *cls.states]):
            shown = engineering(float(record.row(name)[r]), unit_of(cls, name))
            lines.append(f"  {name:28s} {shown:>14s}")
        if tr.count > 1:
            f = system.coupler_forces(y)
            mon = system.sys.monitor
            lines.append(f"in-train  now: {f.max() / 1e3:8.1f} kN tension "
                         f"{max(0.0, -f.min()) / 1e3:8.1f} kN compression")
            lines.append(f"          max: {mon.tension.max() / 1e3:8.1f} kN tension "
                         f"{mon.compression.max() / 1e3:8.1f} kN compression")
        lines.append("")
        for char, key in self.bindings.items():
            mark = "[held]" if key in self.latched else ""
            lines.append(f"  {char}  {key:20s} {mark:7s} {cls.keys[key]}")
        lines.append("  q  quit (outputs are written)")
        return lines

    def air_lines(self) -> list[str]:
        """The air brake's pressures, gauge: the pipe at the lead and at the rear, the
        lead's cylinder and equalizing reservoir (none without an air brake)."""
        air, t = self.drive.dyn.air, self.drive.run_.t
        if not air.on:
            return []
        pipe = air.signal("brake_pipe_Pa", t)
        cylinder = air.signal("brake_cylinder_Pa", t)
        equalizing = air.signal("equalizing_reservoir_Pa", t)
        return [f"brake pipe {engineering(float(pipe[0]), 'Pa'):>13s}   "
                f"at the rear {engineering(float(pipe[-1]), 'Pa'):>10s}",
                f"cylinder  {engineering(float(cylinder[0]), 'Pa'):>14s}   "
                f"equalizing {engineering(float(equalizing[0]), 'Pa'):>11s}"]

    def draw(self) -> None:
        """Redraw the dashboard in place (ANSI: home, clear)."""
        self.screen.write("\x1b[H\x1b[J" + "\n".join(self.dashboard()) + "\n")
        self.screen.flush()


def cab(scenario: Scenario, out: str | Path, speedup: float = 1.0, fd: int = 0,
        screen: IO[str] | None = None) -> DriveResult:
    """Drive ``scenario`` from the terminal ``fd``, paced to ``speedup`` x real time."""
    return Cab(Drive(scenario), speedup, fd, screen).run(out)
