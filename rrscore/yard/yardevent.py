"""The events of a yard drive: rows of its ``events.csv``, and what the ``rrs_event``
hook gets in a yard drive."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass
class YardEvent:
    """One event of a yard drive (a row of events.csv)."""

    t: float
    kind: str
    cut: str = ""
    vehicle: int = -1
    other_cut: str = ""
    other_vehicle: int = -1
    track: str = ""
    offset: float = math.nan
    speed: float = math.nan
    value: float = math.nan
    detail: str = ""

    @property
    def where(self) -> str:
        """'cut 'a' vehicle 2 on track 'main'', as a train drive's events say where they
        happened (for plugins on ``rrs_event``, whichever drive they serve)."""
        parts = []
        if self.cut:
            parts.append(f"cut {self.cut!r}" + (f" vehicle {self.vehicle}"
                                                if self.vehicle >= 0 else ""))
        if self.track:
            parts.append(f"on track {self.track!r}")
        return " ".join(parts)
