"""A car rolling down a hump against the energy-height method of hump-yard design
(seed 004): v^2 = v0^2 + 2 g k (drop - w s), with the rotating-mass coefficient
k = 1 / (1 + 0.42 n / m) (n axles, m tonnes) and the specific resistance w."""

from __future__ import annotations

import math

import pytest
from conftest import CONFIGS, G, car_config, make_scenario

from rrscore import Drive

HALF = 13.92 / 2  # the test car's half length, m
# the hump's elements (configs/routes/hump.toml): start, length, grade
ELEMENTS = [(0.0, 300.0, 0.008), (300.0, 60.0, -0.040), (360.0, 40.0, -0.030),
            (400.0, 120.0, -0.020), (520.0, 40.0, -0.012), (560.0, 250.0, -0.008),
            (810.0, 800.0, -0.0015)]


def height(x: float) -> float:
    """Height of the track at ``x`` along it, m: each element rises its length times
    the sine of its slope."""
    h = 0.0
    for start, length, grade in ELEMENTS:
        run = min(max(x - start, 0.0), length)
        h += run * grade / math.sqrt(1.0 + grade * grade)
    return h


@pytest.mark.parametrize("w_per_mille", [1.0, 2.5])
def test_a_car_reaches_each_point_of_the_hump_at_the_energy_height_speed(w_per_mille):
    # the car starts wholly on the steep descent at 1.7 m/s, its front 14 m past the crest
    mass, axles, v0 = 92500.0, 4, 1.7
    w = w_per_mille / 1000.0
    resistance = {"formula": "davis", "A": w * mass * G, "B": 0.0, "C": 0.0,
                  "starting": False}
    sc = make_scenario([{"config": car_config(resistance=resistance)}],
                       start={"position": "314 m", "speed": v0}, stop={"max_time": 600.0},
                       output={"sample_interval": 1.0})
    sc = sc.with_values({"route": str(CONFIGS / "routes" / "hump.toml")})
    r = Drive(sc).run()
    passed = {p["point"]: p["speed_mps"] for p in r.summary["points"]}
    k = 1.0 / (1.0 + 0.42 * axles / (mass / 1000.0))
    c0 = 314.0 - HALF  # the car's centre at the start
    for point in ("retarder 1", "retarder 2", "switch zone", "class track"):
        position = {"retarder 1": 380.0, "retarder 2": 540.0, "switch zone": 685.0,
                    "class track": 1000.0}[point]
        c = position - HALF  # the centre when the front passes the point
        drop = height(c0) - height(c)
        expected = math.sqrt(v0 * v0 + 2.0 * G * k * (drop - w * (c - c0)))
        # the rule's 0.42 t per axle against the car's 96 kg m^2 on 0.4785 m (0.4193 t):
        # 1.5e-5 apart in speed; the issue asks for 2 %
        assert passed[point] == pytest.approx(expected, rel=1e-4), point


def test_the_event_engine_rolls_a_cut_down_the_hump_as_the_core_and_the_rule_say():
    # three coupled cars pushed past the crest, then free (yard.freecars on the profile):
    # the speeds at the points agree with the energy-height method and the core
    from rrscore.model.track import Route
    from rrscore.yard.freecars import CarsOnRoute

    w, v0 = 1.5e-3, 1.7
    resistance = {"formula": "davis", "A": w * 92500.0 * G, "B": 0.0, "C": 0.0,
                  "starting": False}
    sc = make_scenario([{"config": car_config(resistance=resistance), "count": 3}],
                       start={"position": "342 m", "speed": v0}, stop={"max_time": 600.0})
    sc = sc.with_values({"route": str(CONFIGS / "routes" / "hump.toml")})
    core = {p["point"]: p["speed_mps"] for p in Drive(sc).run().summary["points"]}
    route = Route.from_config(sc.config["route"])
    cut = CarsOnRoute(sc.train, route, front=342.0, speed=v0, step=0.1)
    cut.advance(300.0)
    k = 1.0 / (1.0 + 0.42 * 4 / 92.5)
    c0 = 342.0 - 3 * HALF  # the cut's middle (its centre of mass) at the start
    for point, position in (("switch zone", 685.0), ("class track", 1000.0)):
        c = position - 3 * HALF
        # wholly on one grade at these points: the cut's centre of mass drops as a car's
        rule = math.sqrt(v0 * v0 + 2.0 * G * k * (height(c0) - height(c) - w * (c - c0)))
        assert cut.passages[point]["speed_mps"] == pytest.approx(rule, rel=0.02), point
        assert cut.passages[point]["speed_mps"] == pytest.approx(core[point], rel=0.01)
    assert cut.cars.joined.all()  # coupled, they stay together
