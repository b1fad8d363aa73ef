"""Checks of the plugin API: what a vehicle or coupler plugin declares against what it does.

Three moments, each with a message that names the plugin and what is wrong:

* when the registry is built (:func:`class_problems`): every parameter's unit must
  be one rrscore knows, and a vehicle's ``key_bindings`` must bind declared keys to
  distinct single characters;
* after a vehicle model's ``setup`` (:func:`setup_problems`): every declared
  control must be an array attribute with one entry per vehicle;
* after a vehicle model's ``step`` (:func:`step_problems`): ``Q_r`` must hold
  magnitudes (>= 0) and, after the first step, every declared signal must have been
  written to ``out`` (one entry per vehicle).

After both, ``Q_a``, ``Q_r`` and ``adhesion_factor`` must still be float arrays of
their shapes: compiled passes read them.

``rrs plugins --check`` (:func:`check_registry`) exercises every installed vehicle type
and coupler model this way, with a vehicle built from default values.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..model.config import REQUIRED, Context, Param
from ..model.couplers import CouplerModel
from ..model.errors import RrsError
from ..reductions import any_set
from ..model.vehicle import VehicleModel

#: The vehicle table of a vehicle exercised with default values (``rrs plugins --check``,
#: the ``rrs_train`` fixture), for keys its caller does not name.
DEFAULT_VEHICLE: dict[str, Any] = {
    "empty_mass": "80 t", "length": "20 m", "num_axis": 4, "wheel_diameter": "1.05 m",
    "wheelset_inertia": "100 kg*m^2",
}


def vehicle_config(vehicle_type: str, params: dict[str, Any] | None = None,
                   **vehicle: Any) -> dict[str, Any]:
    """An inline vehicle config of ``vehicle_type`` with :data:`DEFAULT_VEHICLE` values,
    overridden by ``vehicle`` (``empty_mass="120 t"``, ``resistance={"formula": "none"}``),
    and the type's ``params``."""
    return {"vehicle": {"type": vehicle_type, **DEFAULT_VEHICLE, **vehicle},
            "params": dict(params or {})}


def setup_problems(model: VehicleModel) -> list[str]:
    """Declared controls that ``setup`` did not create as per-vehicle arrays, and outputs
    it replaced (as :func:`step_problems`)."""
    problems = _output_problems(model)
    for name in model.controls:
        value = getattr(model, name, None)
        if value is None:
            problems.append(f"control {name!r} is declared but the model has no attribute "
                            f"{name!r} (create it in setup(), one entry per vehicle)")
        elif np.shape(value) != (model.count,):
            problems.append(f"control {name!r} has shape {np.shape(value)}, expected "
                            f"({model.count},): one entry per vehicle")
    return problems


def _output_problems(model: VehicleModel) -> list[str]:
    """``Q_a``, ``Q_r`` or ``adhesion_factor`` replaced by something not of their shape
    and type (the framework reads them in compiled passes)."""
    n, k = model.count, model.num_axis
    return [f"{name} is {_described(value)}, expected a float array of shape {shape}: "
            f"assign into it ({name}[...] = ...) rather than replacing it"
            for name, value, shape in (("Q_a", model.Q_a, (n, k + 1)),
                                       ("Q_r", model.Q_r, (n, k + 1)),
                                       ("adhesion_factor", model.adhesion_factor, (n, k)))
            if not (type(value) is np.ndarray and value.shape == shape
                    and value.dtype == np.float64)]


def _described(value: object) -> str:
    if isinstance(value, np.ndarray):
        return f"a {value.dtype} array of shape {value.shape}"
    return f"a {type(value).__name__}"


def step_problems(model: VehicleModel, first: bool) -> list[str]:
    """``Q_a``, ``Q_r`` or ``adhesion_factor`` not of their shapes, negative ``Q_r``
    entries and, on the ``first`` step, declared signals not written."""
    problems = _output_problems(model)
    if problems:  # the checks below, and the compiled passes after them, need these
        return problems
    negative = model.Q_r < 0
    if any_set(negative):
        row, col = (int(i) for i in np.argwhere(negative)[0])
        what = "body resistance" if col == 0 else f"brake torque on axle {col - 1}"
        problems.append(f"Q_r[{row}, {col}] ({what}) = {model.Q_r[row, col]:g} is negative: "
                        "Q_r holds magnitudes (>= 0) that oppose motion; put driving forces "
                        "in Q_a")
    if first:
        for name in model.signals:
            if name not in model.out:
                problems.append(f"signal {name!r} is declared but step() never writes "
                                f"self.out[{name!r}]")
            elif np.shape(model.out[name]) != (model.count,):
                problems.append(f"signal {name!r} has shape {np.shape(model.out[name])}, "
                                f"expected ({model.count},): one entry per vehicle")
    return problems


def check_vehicle_type(registry, type_name: str) -> list[str]:
    """Build one vehicle of ``type_name`` from default values, run it for a second with each
    of its keys pressed in turn, compare its ``step_kernel`` (if any) with its ``step``
    there and its ``control_kernel`` (if any) with its ``set_control``, and return the
    problems found (a skip is reported too)."""
    from ..controlsteps import control_kernel_problems, kernel_problems
    from ..run.scenario import scenario_from_table
    from ..run.drive import Drive

    cls = registry.vehicle_types[type_name]
    missing = [k for k, p in cls.params.items() if isinstance(p, Param) and p.default is REQUIRED]
    if missing:
        return [f"not exercised: parameters without a default: {', '.join(missing)}"]
    table = {"train": {"vehicles": [{"config": vehicle_config(type_name)}]},
             "route": {"elements": [{"length": "10 km"}]},
             "stop": {"max_time": 0.25 * (len(cls.keys) + 1)},
             "driver": [{"at_time": 0.25 * (i + 1), "press": k} for i, k in enumerate(cls.keys)]}
    try:
        scenario = scenario_from_table(table, Context("<rrs plugins --check>", "scenario"),
                                       registry)
        drive = Drive(scenario)
        drive.run()
    except RrsError as exc:
        return [str(exc)]
    # a compiled step must be the step: from the state the keys left, at a few speeds
    run = drive.run_
    model = run.train.batches[0].model
    return kernel_problems(model, run.t, run.control_step) + control_kernel_problems(model)


def check_coupler_model(cls: type[CouplerModel]) -> list[str]:
    """Build ``cls`` for one coupling from default values and check that its force law gives
    one finite force per coupling across +-0.2 m of deflection."""
    missing = [k for k, p in cls.params.items() if isinstance(p, Param) and p.default is REQUIRED]
    if missing:
        return [f"not exercised: parameters without a default: {', '.join(missing)}"]
    n = 41
    try:
        model = cls([{k: p.default for k, p in cls.params.items()}] * n)
        d = np.linspace(-0.2, 0.2, n)
        s = model.initial_state(d)
        from types import SimpleNamespace
        f = np.asarray(model.force(d, np.zeros(n), SimpleNamespace(**s)))
    except Exception as exc:
        return [f"force() raised {type(exc).__name__}: {exc}"]
    if f.shape != (n,):
        return [f"force() returned shape {f.shape} for {n} couplings, expected ({n},)"]
    if not np.isfinite(f).all():
        return ["force() returned a non-finite force"]
    return []


def check_registry(registry) -> dict[tuple[str, str], list[str]]:
    """Problems of every vehicle type and coupler model, by ``(kind, name)``."""
    out = {}
    for name in sorted(registry.vehicle_types):
        out[("vehicle type", name)] = check_vehicle_type(registry, name)
    for name, cls in sorted(registry.coupler_models.items()):
        out[("coupler model", name)] = check_coupler_model(cls)
    return out
