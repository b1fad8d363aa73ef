"""Coupler models shipped with rrscore."""

from __future__ import annotations

import numpy as np

from rrscore import CouplerModel, Param, hookimpl


class SpringDamper(CouplerModel):
    """Linear spring and damper behind a free slack.

    Within ``|d| <= slack/2`` the coupler carries nothing; beyond it, at
    engagement ``e = d -+ slack/2``, the force is ``stiffness * e + damping *
    d_dot * min(|e| / damping_ramp, 1)``. The damper takes hold over the first
    ``damping_ramp`` of travel, as a contact does, so the force is continuous when
    the slack closes (a damper that engaged at once would bounce the coupler
    in and out of contact). With ``slack = 0`` it is a plain spring-damper.
    """

    type_name = "spring_damper"
    description = "linear spring-damper with free slack"
    params = {
        "stiffness": Param("N/m", 2e7, "spring stiffness once the slack is taken up", min=0.0),
        "damping": Param("N*s/m", 2e5, "viscous damping once the slack is taken up", min=0.0),
        "slack": Param("m", 0.011, "total free slack (half each side of neutral)", min=0.0),
        "damping_ramp": Param("m", 0.001, "travel over which the damper takes hold", min=0.0,
                              exclusive_min=True),
    }

    def setup(self) -> None:
        self.half = self.p["slack"] / 2.0
        self.rigid = self.half == 0.0

    def force(self, d, d_dot):
        engaged = d - np.minimum(np.maximum(d, -self.half), self.half)
        ramp = np.minimum(np.abs(engaged) / self.p["damping_ramp"], 1.0)
        contact = np.where(self.rigid, 1.0, ramp)
        return self.p["stiffness"] * engaged + self.p["damping"] * d_dot * contact

    def free_range(self):
        return -self.half, self.half.copy()

    def kinks(self):
        k = np.stack([-self.half, self.half], axis=1)
        return np.where(self.half[:, None] > 0, k, np.nan)


@hookimpl
def rrs_coupler_models():
    return [SpringDamper]
