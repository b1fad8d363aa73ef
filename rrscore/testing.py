"""Testing vehicle and coupler plugins: a pytest plugin with fixtures and assertion helpers.

Installed with rrscore and loaded by pytest through the ``pytest11`` entry point, so
any project's tests can use the fixtures without importing anything::

    def test_my_loco_reaches_40_kmh(rrs_train):
        train = rrs_train("my_loco", F_max="200 kN")            # one vehicle, default config
        result = train.drive([(0, "set traction_level=1")], max_time="60 s")
        assert result.speed_at(30.0) > 40 / 3.6

A *key program* is a list of ``(time, action)`` pairs; an action is
``"press KEY"``, ``"release KEY"``, ``"set NAME=VALUE"`` (several separated by
spaces after ``set``), or a dict in the form of a scenario's ``[[scenario.driver]]``
table (without ``at_time``). Times are in seconds.

The helpers (:func:`assert_curve_close` and the methods of :class:`TestDrive`) work on
plain arrays, so they serve tests that drive scenarios from files as well.
:func:`assert_compiled` (fixture ``rrs_compiled``) checks that numba compiles a plugin's
functions, which otherwise run in Python, correct but many times slower::

    def test_my_loco_runs_compiled(rrs_compiled):
        rrs_compiled(MyLoco)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from .cli.plugincheck import adapters_of, describe_adapter, vehicle_config
from .jit import UNCOMPILED
from .model.config import Context
from .run.drive import Drive, DriveResult
from .run.scenario import Scenario, scenario_from_table

Program = Sequence[tuple[float, "str | Mapping[str, Any]"]]


def parse_action(action: str | Mapping[str, Any]) -> dict[str, Any]:
    """One key-program action as a ``[[scenario.driver]]`` table without its trigger:
    ``"press KEY"``, ``"release KEY"``, ``"set a=1 b=0.5"`` or a dict given as it is."""
    if not isinstance(action, str):
        return dict(action)
    verb, _, rest = action.strip().partition(" ")
    if verb in ("press", "release") and rest.strip():
        return {verb: rest.strip()}
    if verb == "set" and rest.strip():
        controls = {}
        for item in rest.split():
            name, eq, value = item.partition("=")
            if not eq:
                raise ValueError(f"key program: {action!r}: expected set NAME=VALUE")
            controls[name] = float(value)
        return {"set": controls}
    raise ValueError(f"key program: {action!r}: expected 'press KEY', 'release KEY' or "
                     "'set NAME=VALUE'")


def program_actions(program: Program, vehicle: int = 0) -> list[dict[str, Any]]:
    """A key program as ``[[scenario.driver]]`` tables for ``vehicle``."""
    out = []
    for t, action in program:
        table = parse_action(action)
        table.setdefault("vehicle", vehicle)
        out.append({"at_time": float(t), **table})
    return out


def interp_at(x: np.ndarray, y: np.ndarray, at: float | np.ndarray) -> np.ndarray | float:
    """``y`` at ``at`` by linear interpolation over increasing ``x``; ValueError outside."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    a = np.asarray(at, float)
    if a.size and (a.min() < x[0] - 1e-9 or a.max() > x[-1] + 1e-9):
        raise ValueError(f"{a.min():g}..{a.max():g} is outside the recorded {x[0]:g}..{x[-1]:g}")
    out = np.interp(a, x, y)
    return float(out) if out.ndim == 0 else out


def assert_curve_close(x: Sequence[float], y: Sequence[float], ref_x: Sequence[float],
                       ref_y: Sequence[float], rtol: float = 0.0, atol: float = 0.0,
                       what: str = "curve") -> None:
    """Assert that the curve ``(x, y)`` (increasing ``x``) matches a reference curve at
    every reference point: ``|y(ref_x) - ref_y| <= atol + rtol * |ref_y|``. The message
    names the worst point, what was found and what was expected."""
    ref_x, ref_y = np.asarray(ref_x, float), np.asarray(ref_y, float)
    got = np.atleast_1d(interp_at(np.asarray(x, float), np.asarray(y, float), ref_x))
    allowed = atol + rtol * np.abs(ref_y)
    excess = np.abs(got - ref_y) - allowed
    k = int(np.argmax(excess))
    if excess[k] > 0:
        bad = int((excess > 0).sum())
        raise AssertionError(
            f"{what}: {bad} of {len(ref_x)} reference points off; worst at x = {ref_x[k]:g}: "
            f"found {got[k]:.6g}, expected {ref_y[k]:.6g} +- {allowed[k]:.3g} "
            f"(atol {atol:g}, rtol {rtol:g})")


def assert_compiled(cls: type) -> None:
    """Assert that numba compiles every function of the vehicle type or coupler model
    ``cls`` (``step``, ``rates``, ``on_input``; ``force``); the message names each that
    runs in Python instead, and why (as ``rrs plugins -v`` does). Under
    ``NUMBA_DISABLE_JIT`` nothing is compiled: the test is skipped."""
    if UNCOMPILED:
        pytest.skip("NUMBA_DISABLE_JIT is set: nothing is compiled")
    adapters = adapters_of(cls)
    if not adapters:
        raise AssertionError(f"{cls!r} is not a vehicle type or coupler model class")
    slow = [describe_adapter(name, a) for name, a in adapters.items() if not a.compiled]
    if slow:
        raise AssertionError(f"{cls.__qualname__}: " + "; ".join(slow))


class TestDrive:
    """The outcome of a test drive, with the questions plugin tests ask of it. All values
    in SI units; ``series`` has the time-series columns (``speed_mps``, ``v0_<signal>``)."""

    __test__ = False  # not a test class, though its name starts with Test

    def __init__(self, result: DriveResult, drive: Drive) -> None:
        self.result = result
        self.drive = drive
        self.summary = result.summary
        self.series = result.series
        self.events = result.events

    @property
    def time(self) -> np.ndarray:
        """Sample times, s."""
        return self.series["time_s"]

    def signal(self, name: str) -> np.ndarray:
        """A column of the time series: ``"speed_mps"``, or a vehicle signal as ``"v0_name"``
        or just ``"name"`` (the lead vehicle's)."""
        if name in self.series:
            return self.series[name]
        if f"v0_{name}" in self.series:
            return self.series[f"v0_{name}"]
        raise KeyError(f"no signal {name!r}; recorded: {', '.join(self.series)}")

    def value_at(self, name: str, t: float) -> float:
        """Signal ``name`` at time ``t`` (s), interpolated between samples."""
        return interp_at(self.time, self.signal(name), t)

    def speed_at(self, t: float) -> float:
        """The lead vehicle's speed at time ``t``, m/s."""
        return self.value_at("speed_mps", t)

    def distance_at(self, t: float) -> float:
        """Distance the lead vehicle has run from the start to time ``t``, m."""
        return self.value_at("position_m", t) - float(self.series["position_m"][0])

    def time_to_speed(self, speed: float) -> float:
        """First time the lead vehicle reaches ``speed`` (m/s), interpolated; ValueError if
        it never does."""
        v = np.abs(self.series["speed_mps"])
        k = int(np.argmax(v >= speed))
        if v[k] < speed:
            raise ValueError(f"the speed never reached {speed:g} m/s (max {v.max():g})")
        if k == 0:
            return float(self.time[0])
        return float(np.interp(speed, v[k - 1:k + 1], self.time[k - 1:k + 1]))

    def distance_to_stop(self, after: float = 0.0) -> float:
        """Distance (m) the lead vehicle runs from time ``after`` until it stands still
        (speed below 0.01 m/s); ValueError if it does not stop."""
        v = np.abs(self.series["speed_mps"])
        later = self.time >= after - 1e-9
        stopped = later & (v < 0.01)
        if not stopped.any():
            raise ValueError(f"the train did not stop after t = {after:g} s")
        k = int(np.argmax(stopped))
        return float(self.series["position_m"][k] - self.value_at("position_m", after))

    def at_speed(self, name: str, speed: float) -> float:
        """Signal ``name`` when the lead vehicle first passes ``speed`` (m/s), e.g. the
        traction force at 40 km/h; interpolated in time."""
        return self.value_at(name, self.time_to_speed(speed))

    def coupler_extremes(self) -> tuple[float, float]:
        """Largest coupler tension and largest compression (both >= 0, N) of the drive."""
        return (self.summary["max_coupler_tension_N"], self.summary["max_coupler_compression_N"])

    def assert_matches(self, name: str, ref_t: Sequence[float], ref_values: Sequence[float],
                       rtol: float = 0.0, atol: float = 0.0, against: str = "time_s") -> None:
        """Assert signal ``name`` follows a reference curve given at times ``ref_t`` (or at
        values of the column ``against``, such as ``"speed_mps"``) within the tolerances;
        see :func:`assert_curve_close`."""
        assert_curve_close(self.signal(against), self.signal(name), ref_t, ref_values,
                           rtol, atol, what=name)


class TestTrain:
    """A train to drive in tests, built in a line by the :func:`rrs_train` fixture.
    :meth:`scenario` gives the checked :class:`~rrscore.Scenario`; :meth:`drive` runs it."""

    __test__ = False

    def __init__(self, vehicles: list[dict[str, Any]], coupling: Mapping[str, Any] | None,
                 route: list[dict[str, Any]], plugin_dirs: Iterable[str | Path],
                 base: Path) -> None:
        self.vehicles = vehicles
        self.coupling = coupling
        self.route = route
        self.plugin_dirs = [str(Path(d).resolve()) for d in plugin_dirs]
        self.base = base

    def scenario(self, program: Program = (), max_time: float | str = "60 s",
                 signals: Sequence[str] = (), **sections: Any) -> Scenario:
        """The checked scenario: this train, the key program on the lead vehicle, the lead's
        ``signals`` recorded (its own plugin signals by default); ``sections`` are further
        ``[scenario]`` tables (``start={"speed": "60 km/h"}``, ``stop={...}``)."""
        table: dict[str, Any] = {
            "name": "test drive",
            "train": {"vehicles": self.vehicles,
                      **({"coupling": dict(self.coupling)} if self.coupling else {})},
            "route": {"elements": self.route},
            "plugin_dirs": self.plugin_dirs,
            "driver": program_actions(program),
        }
        stop = {"max_time": max_time, **sections.pop("stop", {})}
        table["stop"] = stop
        output = {"sample_interval": "0.1 s", **sections.pop("output", {})}
        table.update(sections)
        sc_signals = list(signals)
        if not sc_signals and "vehicle_signals" not in output:
            # record the lead's own signals: checking needs the scenario, so look first
            probe = scenario_from_table({**table, "output": output},
                                        Context("<rrs_train>", "scenario", self.base))
            lead = probe.train.batches[0].cls
            sc_signals = ["speed_mps", "traction_force_N", *lead.signals, *lead.states]
        if sc_signals:
            output = {"vehicle_signals": sc_signals, **output}
        output.setdefault("vehicles", [0])
        table["output"] = output
        return scenario_from_table(table, Context("<rrs_train>", "scenario", self.base))

    def drive(self, program: Program = (), max_time: float | str = "60 s",
              out: str | Path | None = None, **sections: Any) -> TestDrive:
        """Run the train with a key program until ``max_time`` (or another stop condition
        in ``stop={...}``); write the usual outputs to ``out`` if given."""
        d = Drive(self.scenario(program, max_time, **sections))
        return TestDrive(d.run(out), d)


def make_train(vehicle: str | Path | Mapping[str, Any], *, count: int = 1,
               vehicle_table: Mapping[str, Any] | None = None,
               cars: int = 0, car: str | Path | Mapping[str, Any] | None = None,
               coupling: Mapping[str, Any] | None = None, grade: float | str = 0.0,
               length: str = "50 km", plugin_dirs: Iterable[str | Path] = (),
               base: str | Path = ".", **params: Any) -> TestTrain:
    """A test train in one line.

    :param vehicle: a vehicle type name (``"simple_loco"``: a default vehicle config,
        :data:`rrscore.cli.plugincheck.DEFAULT_VEHICLE`, with ``vehicle_table`` overrides and
        the type's ``params``), a path to a vehicle TOML file, or an inline vehicle config.
    :param count: how many of them lead the train.
    :param cars: how many ``car`` vehicles follow (a type name, path or config;
        the shipped freight car by default, given inline).
    :param coupling: the train's ``[train.coupling]`` table.
    :param grade: the route's grade (a ratio as a number, 0.005, or with a unit, "5 permille").
    :param params: the vehicle type's parameters, with units (``F_max="450 kN"``).
    """
    def entry(v: Any, n: int, p: Mapping[str, Any], table: Mapping[str, Any] | None) -> dict:
        if isinstance(v, Mapping):
            config: Any = dict(v)
        elif str(v).endswith(".toml"):
            config = str(Path(v).resolve())
        else:
            config = vehicle_config(str(v), p, **dict(table or {}))
        return {"config": config, "count": n}

    vehicles = [entry(vehicle, count, params, vehicle_table)]
    if cars:
        car = car if car is not None else {"vehicle": {
            "type": "freight_car", "empty_mass": "23 t", "payload_mass": "69.5 t",
            "length": "13.92 m", "num_axis": 4, "wheel_diameter": "0.957 m",
            "wheelset_inertia": "96 kg*m^2"}}
        vehicles.append(entry(car, cars, {}, None))
    return TestTrain(vehicles, coupling, [{"length": length, "grade": grade}], plugin_dirs,
                     Path(base).resolve())


def pytest_configure(config: pytest.Config) -> None:
    """rrscore's engine calls plugins' functions as first-class function values, which
    numba calls experimental and warns of at each compile: on purpose, so not in every
    plugin project's test report."""
    config.addinivalue_line("filterwarnings", "ignore:First-class function type:"
                            "numba.core.errors.NumbaExperimentalFeatureWarning")


@pytest.fixture
def rrs_train():
    """Factory fixture: ``rrs_train("my_loco", F_max="200 kN", cars=10)`` builds a
    :class:`TestTrain` (see :func:`make_train` for every argument)."""
    return make_train


@pytest.fixture
def rrs_curve():
    """The reference-curve assertion :func:`assert_curve_close`, as a fixture."""
    return assert_curve_close


@pytest.fixture
def rrs_compiled():
    """The assertion :func:`assert_compiled` (a plugin's functions run compiled), as a
    fixture."""
    return assert_compiled
