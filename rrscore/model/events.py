"""Events of a drive as typed records: what happened, when, where, and a value.

Physical events (a wheel starting to slip, a coupler breaking, two cars
coupling) and the driver's actions are all :class:`Event` records. The drive
hands each one to the ``rrs_event`` hook as it happens; ``events.csv`` is one
such hook.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Event kinds and what they mean. ``value`` is in the unit given here.
KINDS = {
    "slip": "an axle's drive torque exceeds adhesion: it starts to spin (value: N demanded)",
    "slide": "an axle's brake exceeds adhesion: it starts to slide (value: N demanded)",
    "re-adhesion": "a slipping or sliding axle rolls again (value: slip velocity, m/s)",
    "wheel locked": "a sliding axle's wheels stop turning (value: vehicle speed, m/s)",
    "coupler break": "a coupler breaks in tension (value: force, N)",
    "coupled": "two vehicles meet slowly enough to couple (value: closing speed, m/s)",
    "impact": "two vehicles meet too fast to couple and part again (value: closing speed, m/s)",
    "buffer stop": "a car runs into a buffer stop at a track end (free cars, "
                   "rrscore.yard.freecars; value: peak force of the stop's spring, N)",
    "tension impact": "a coupled pair's slack runs out as its cars move apart (free cars, "
                      "rrscore.yard.freecars; value: opening speed, m/s)",
    "driver": "an action of the driver program (value: unused, NaN)",
}


@dataclass(frozen=True)
class Event:
    """One event.

    :param t: simulated time, s.
    :param kind: one of :data:`KINDS`.
    :param vehicle: train index of the vehicle concerned, or -1.
    :param axle: axle within that vehicle (0 = its first), or -1.
    :param coupling: coupling index (0 = behind the lead vehicle), or -1.
    :param value: the event's figure, in the unit :data:`KINDS` gives.
    :param detail: free text (the driver's action, for example).
    """

    t: float
    kind: str
    vehicle: int = -1
    axle: int = -1
    coupling: int = -1
    value: float = float("nan")
    detail: str = ""

    @property
    def where(self) -> str:
        """'vehicle 3 axle 1', 'coupling 7' or '' for messages and events.csv."""
        if self.coupling >= 0:
            return f"coupling {self.coupling}"
        if self.axle >= 0:
            return f"vehicle {self.vehicle} axle {self.axle}"
        if self.vehicle >= 0:
            return f"vehicle {self.vehicle}"
        return ""
