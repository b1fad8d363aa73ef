"""Vehicle plugins' own figures for the summary: each vehicle type's ``report(veh, s)``
(:class:`~rrscore.model.vehicle.VehicleModel`), called once at the drive's end with its
record and its states' final values (a diesel's fuel used, a battery's state of charge)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..model.errors import PLUGIN_FAILURES, plugin_failure


def vehicle_figures(system: Any, y: np.ndarray, t: float) -> tuple[list[dict[str, Any]],
                                                                   list[str]]:
    """Every reporting vehicle's figures, one dict each (``vehicle``: its place in the
    train, ``type``, then the plugin's figures), in train order, and a warning per plugin
    whose ``report`` failed (the summary is written all the same)."""
    figures: list[dict[str, Any]] = []
    warnings: list[str] = []
    for b_i, b in enumerate(system.train.batches):
        if b.cls.report is None:
            continue
        try:
            got = {name: np.broadcast_to(np.asarray(value, dtype=float), (b.count,))
                   for name, value in b.cls.report(b.record.view, system.states_of(y, b_i))
                   .items()}
        except PLUGIN_FAILURES as exc:
            warnings.append(str(plugin_failure(b.describe("report"), exc, t)))
            continue
        for r, index in enumerate(b.index):
            figures.append({"vehicle": int(index), "type": b.type_name,
                            **{name: float(value[r]) for name, value in got.items()}})
    figures.sort(key=lambda f: f["vehicle"])
    return figures, warnings
