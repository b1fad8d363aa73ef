"""Argument checks shared by the formula libraries (resistance, adhesion)."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np


def result(x: np.ndarray) -> float | np.ndarray:
    """Return a Python float for 0-d results, the array otherwise."""
    return float(x) if np.ndim(x) == 0 else x


def finite(name: str, value: object) -> float:
    """Coerce a config number to float, rejecting bools, non-numbers and non-finite values."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    x = float(value)
    if not math.isfinite(x):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return x


def by_name(*items: Any) -> dict[str, Any]:
    """A registry of formula records, keyed by their ``name``."""
    return {item.name: item for item in items}


def check_params(formula: str, allowed: tuple[str, ...],
                 params: Mapping[str, Any] | None) -> dict[str, Any]:
    """Require exactly the names in ``allowed``; name what is missing or unknown."""
    given = dict(params or {})
    unknown = sorted(set(given) - set(allowed))
    missing = [p for p in allowed if p not in given]
    if unknown or missing:
        problems = []
        if missing:
            problems.append(f"missing {', '.join(missing)}")
        if unknown:
            problems.append(f"unknown {', '.join(map(str, unknown))}")
        expected = ", ".join(allowed) if allowed else "no params"
        raise ValueError(f"formula {formula!r}: {'; '.join(problems)} (expected: {expected})")
    return given
