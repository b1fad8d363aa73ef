"""The longest fixed step a train's couplings allow: an explicit method's step is stable
only while ``h |lambda|`` stays within its stability region for every mode ``lambda`` of
the train (:meth:`~rrscore.engine.tableau.Tableau.stability_radius`).

The fastest mode of a chain of bodies on couplings is bounded by Gershgorin's theorem:
for each vehicle ``i`` with the couplings ``j`` at its ends, the stiffness part
``omega^2 <= max_i 2 sum_j k_j / m_i`` and the damping part ``sigma <= max_i 2 sum_j c_j
/ m_i``. A mode ``lambda^2 + sigma lambda + omega^2 = 0`` has ``|lambda| = omega`` where
it oscillates and at most ``sigma`` where it does not: the estimate is the larger (exact
for damping in proportion to stiffness; an estimate otherwise). Each coupling's ``k``
and ``c`` are the largest slopes of its force law in deflection and in deflection rate,
probed over its travel (the free range and 0.3 m beyond each end, so a solid gear's
branch counts) from its model's starting states, with the deflection rate at rest and at
+-0.05 m/s (a friction gear's loading and unloading branches): its own function,
whatever the model.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..model.errors import PLUGIN_FAILURES, plugin_failure

#: The probe of each coupling's force law: deflections beyond its free range (m), points
#: over the whole travel, the deflection rates (m/s) and the differences' steps.
BEYOND = 0.3
POINTS = 241
RATES = (-0.05, 0.0, 0.05)
DELTA_D, DELTA_V = 1e-6, 1e-4


def coupling_slopes(model: Any, adapter: Any) -> tuple[np.ndarray, np.ndarray]:
    """The largest ``dF/dd`` (N/m) and ``dF/dd_dot`` (N*s/m) of each of ``model``'s
    couplings (its force function called through ``adapter``, as the loop calls it)."""
    lo, hi = model.free_range()
    n, k = model.count, len(model.states)
    rec = model.record
    stiff, damp = np.zeros(n), np.zeros(n)
    out_a, out_b = np.zeros(n), np.zeros(n)

    def force(d: np.ndarray, v: np.ndarray, out: np.ndarray, states: np.ndarray) -> None:
        adapter.force.call(d, v, rec.buffer, rec.layout, states, np.zeros_like(states), out)

    for f in np.linspace(0.0, 1.0, POINTS):
        d = (lo - BEYOND) + f * (hi - lo + 2 * BEYOND)
        init = model.initial_state(d)
        states = np.ascontiguousarray(np.array([init[s] for s in model.states]).reshape(k, n))
        for rate in RATES:
            v = np.full(n, rate)
            force(d - DELTA_D, v, out_a, states.copy())
            force(d + DELTA_D, v, out_b, states.copy())
            stiff = np.maximum(stiff, np.abs(out_b - out_a) / (2 * DELTA_D))
            force(d, v - DELTA_V, out_a, states.copy())
            force(d, v + DELTA_V, out_b, states.copy())
            damp = np.maximum(damp, np.abs(out_b - out_a) / (2 * DELTA_V))
    return stiff, damp


def fastest_mode(system: Any) -> tuple[float, str]:
    """The estimate of the largest ``|lambda|`` (1/s) over the modes of ``system``'s train
    on its couplings (see the module), and where it is reached, in words (0 and "": a
    single vehicle, no couplings)."""
    tr = system.train
    n = tr.count
    if n < 2:
        return 0.0, ""
    k, c = np.zeros(n - 1), np.zeros(n - 1)
    for (model, idx), adapter in zip(tr.couplings.groups, system.coupler_adapters,
                                     strict=True):
        try:
            k[idx], c[idx] = coupling_slopes(model, adapter)
        except PLUGIN_FAILURES as exc:  # (a plugin's model, probed before the drive)
            raise plugin_failure(f"coupler model {type(model).type_name!r} in force(), "
                                 "probed for the fixed step's limit", exc, 0.0) from exc
    ends_k, ends_c = np.zeros(n), np.zeros(n)
    ends_k[:-1] += k
    ends_k[1:] += k
    ends_c[:-1] += c
    ends_c[1:] += c
    omega = np.sqrt(2.0 * ends_k / tr.mass)
    sigma = 2.0 * ends_c / tr.mass
    rate = np.maximum(omega, sigma)
    i = int(np.argmax(rate))
    j = max((e for e in (i - 1, i) if 0 <= e < n - 1), key=lambda e: k[e] + c[e])
    where = (f"vehicle {i} of {tr.mass[i] / 1000:.4g} t on coupling {j}, up to "
             f"{k[j] / 1e6:.4g} MN/m and {c[j] / 1e3:.4g} kN*s/m")
    return float(rate[i]), where
