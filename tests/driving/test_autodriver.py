"""The built-in driver: holding the limits, braking ahead of lower ones, stopping at a point."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import CONFIGS, car_config

from rrscore.model.config import Context
from rrscore.model.errors import ConfigError
from rrscore.run.drive import Drive
from rrscore.run.scenario import scenario_from_table

LOCO = "vehicles/simple_loco.toml"


def _scenario(elements, cars, autodriver, points=(), **sections):
    table = {
        "train": {"vehicles": [{"config": LOCO},
                               {"config": "vehicles/freight_car_4axle.toml", "count": cars}],
                  "coupling": {"model": "spring_damper",
                               "params": {"stiffness": "20 MN/m", "damping": "200 kN*s/m",
                                          "slack": "11 mm"}}},
        "route": {"elements": elements, "points": list(points)},
        "autodriver": {"mode": "hold_limit", **autodriver},
        "output": {"sample_interval": 1.0},
        **sections,
    }
    return scenario_from_table(table, Context("<test>", "scenario", CONFIGS))


def _drive(sc):
    r = Drive(sc).run()
    s = r.series
    front = s["position_m"] + sc.train.half_length[0]
    return r, s["time_s"], front, s["speed_mps"]


def test_holds_the_limit_within_its_band_on_a_level_line():
    # 60 km/h with the default 1 m/s margin: once there, the speed stays between the
    # target less 0.3 m/s and the limit
    sc = _scenario([{"length": "20 km", "speed_limit": "60 km/h"}], 20, {},
                   start={"position": "1 km"}, stop={"max_time": "900 s"})
    _, t, _, v = _drive(sc)
    limit, target = 60 / 3.6, 60 / 3.6 - 1.0
    reached = np.argmax(v >= target - 0.3)
    assert reached > 0 and t[reached] < 600.0
    held = v[reached:]
    assert held.max() <= limit and held.min() >= target - 0.3


def test_brakes_ahead_of_a_lower_limit_and_speeds_up_when_the_rear_has_left_it():
    # 80 km/h, then 40 km/h over 1 km, then 80 again; the speed at the front never
    # exceeds the limit where the front is, and the train speeds up only once its rear
    # (about 300 m behind the front) has left the 40 km/h stretch
    elements = [{"length": "6 km", "speed_limit": "80 km/h"},
                {"length": "1 km", "speed_limit": "40 km/h"},
                {"length": "5 km", "speed_limit": "80 km/h"}]
    sc = _scenario(elements, 20, {"braking_deceleration": "0.1 m/s^2"},
                   start={"position": "500 m", "speed": "75 km/h"},
                   stop={"max_time": "700 s"})
    _, _, front, v = _drive(sc)
    limit = np.where((front > 6000) & (front < 7000), 40 / 3.6, 80 / 3.6)
    assert (v <= limit + 1e-9).all()
    rear = front - 2 * sc.train.half_length.sum()  # the train's length, slack aside
    slow = (rear > 5600) & (rear < 7000)  # the rear still on the 40 km/h stretch (or near)
    assert v[slow & (front > 6000)].max() <= 40 / 3.6 + 1e-9


@pytest.mark.parametrize("cars", [5, 20])
@pytest.mark.parametrize("speed_kmh", [40, 60, 80])
def test_stops_at_the_named_point(cars, speed_kmh):
    # cruising at the given speed, the train brakes on its curve and its front stops
    # within the tolerance (10 m) of the point
    sc = _scenario([{"length": "10 km", "speed_limit": "100 km/h"}], cars,
                   {"speed": f"{speed_kmh} km/h", "stop_at": "B",
                    "braking_deceleration": "0.1 m/s^2"},
                   points=[{"name": "B", "position": "4 km"}],
                   start={"position": "500 m", "speed": f"{speed_kmh - 1} km/h"},
                   stop={"max_time": "900 s", "standstill": True})
    r, _, front, v = _drive(sc)
    assert r.summary["stop_reason"] == "standstill"
    assert abs(front[-1] - 4000.0) <= 10.0
    assert v.max() <= speed_kmh / 3.6 + 0.3  # the cruising speed is a target, held to 0.3


def test_a_program_action_switches_the_driver_off_and_takes_over():
    sc = _scenario([{"length": "10 km"}], 5, {},
                   driver=[{"at_time": "60 s", "autodriver": False,
                            "set": {"traction_level": 0.0}}],
                   start={"position": "1 km"}, stop={"max_time": "120 s"})
    r, t, _, v = _drive(sc)
    # accelerating under the built-in driver, coasting (no traction) after 60 s
    assert v[t == 60.0][0] > v[t == 30.0][0] > 0.0
    traction = r.series["traction_force_N"]
    assert traction[t == 59.0][0] > 0.0 and (traction[t >= 60.0] == 0.0).all()
    assert v[-1] < v[t == 61.0][0]


def test_stop_point_must_be_a_point_of_the_route():
    with pytest.raises(ConfigError) as err:
        _scenario([{"length": "10 km"}], 5, {"stop_at": "nowhere"})
    assert err.value.key == "scenario.autodriver.stop_at"


def test_a_train_without_a_traction_control_is_refused():
    table = {"train": {"vehicles": [{"config": car_config()}]},
             "route": {"elements": [{"length": "1 km"}]},
             "autodriver": {"mode": "hold_limit"}}
    with pytest.raises(ConfigError) as err:
        scenario_from_table(table, Context("<test>", "scenario", CONFIGS))
    assert err.value.key == "scenario.autodriver.mode" and "traction_level" in err.value.message


def test_the_readme_demo_keeps_to_the_limits_and_stops_at_b():
    from conftest import shipped_drive

    from rrscore.run.scenario import load_scenario

    sc = load_scenario(CONFIGS / "scenarios" / "freight_50.toml")
    r = shipped_drive("freight_50")
    front, v = r.series["front_m"], r.series["speed_mps"]
    limit = np.array([sc.route.speed_limit(x) for x in front])
    assert (v <= limit).all()
    assert r.summary["stop_reason"] == "standstill"
    assert abs(front[-1] - sc.route.points["B"]) <= 10.0


def test_forty_km_drive_crosses_its_points_when_a_point_mass_integration_does():
    # 4 locomotives of 3.25 MW and 667.2 kN, 100 cars of 130 t, Davis resistance; 10 km
    # level, 5 km up 5 per mille, 10 km level, 5 km down 5 per mille, 10 km level, a
    # 20 m/s limit held 0.5 m/s below. The reference is the point-mass equation of the
    # same train integrated here with scipy: full power below the target, held at it
    # (power or brakes) unless even full power falls short; grade forces summed over
    # the vehicles where each stands, rigidly spaced.
    from conftest import G
    from scipy.integrate import solve_ivp

    f_max, power = 667.2e3, 3.25e6
    loco = {"vehicle": {"type": "simple_loco", "empty_mass": "200 t", "length": "22 m",
                        "num_axis": 6, "wheel_diameter": "1.1 m",
                        "wheelset_inertia": "300 kg*m^2",
                        "resistance": {"formula": "davis", "A": 3000.0, "B": 40.0, "C": 6.0,
                                       "starting": False},
                        "adhesion": {"formula": "constant", "psi": 0.6}},
            "params": {"F_max": f_max, "F_nom": f_max, "V_nom": power / f_max}}
    car = car_config(empty_mass="30 t", payload_mass="100 t", length="15 m",
                     resistance={"formula": "davis", "A": 1200.0, "B": 15.0, "C": 2.5,
                                 "starting": False})
    prof = [(0.0, 0.0), (10e3, 0.0), (15e3, 25.0), (25e3, 25.0), (30e3, 0.0), (40e3, 0.0)]
    elements = [{"length": b[0] - a[0], "grade": (b[1] - a[1]) / (b[0] - a[0]),
                 "speed_limit": 20.0} for a, b in zip(prof[:-1], prof[1:], strict=True)]
    marks = [10e3, 15e3, 25e3, 30e3, 35e3]
    table = {"train": {"vehicles": [{"config": loco, "count": 4},
                                    {"config": car, "count": 100}],
                       "coupling": {"model": "spring_damper",
                                    "params": {"stiffness": "50 MN/m",
                                               "damping": "500 kN*s/m", "slack": "0 mm"}}},
             "route": {"elements": elements,
                       "points": [{"name": f"km{m / 1e3:g}", "position": m} for m in marks]},
             "start": {"position": "100 m"},
             "autodriver": {"mode": "hold_limit", "margin": 0.5},
             "solver": {"control_step": "0.5 s"},
             "stop": {"max_time": "3000 s", "at_position": "36 km"},
             "output": {"sample_interval": 10.0}}
    sc = scenario_from_table(table, Context("<test>", "scenario", CONFIGS))
    r = Drive(sc).run()
    crossed = {p["position_m"]: p["time_s"] for p in r.summary["points"]}

    # the reference, from the numbers above only
    masses = np.array([200e3] * 4 + [130e3] * 100)
    lengths = np.array([22.0] * 4 + [15.0] * 100)
    offsets = np.cumsum(lengths) - lengths / 2  # front of the train to each centre
    m_eff = masses.sum() + 4 * 6 * 300 / 0.55**2 + 100 * 4 * 96 / 0.4785**2
    davis = np.array([4 * 3000 + 100 * 1200, 4 * 40 + 100 * 15, 4 * 6 + 100 * 2.5])
    px, pz = np.array(prof).T

    def elevation(x):
        return np.interp(x, px, pz)

    def accel(front, v):
        x = front - offsets
        grade = (elevation(x + lengths / 2) - elevation(x - lengths / 2)) / lengths
        gravity = -(masses * G * grade / np.sqrt(1 + grade**2)).sum()
        traction = 4 * min(f_max, power / max(v, 1e-9))
        a = (traction - davis @ [1.0, v, v * v] + gravity) / m_eff
        return a if (v < 19.5 or a < 0.0) else min(a, 0.0)

    front0 = 100.0 + 11.0
    ref = solve_ivp(lambda t, s: [s[1], accel(s[0], s[1])], (0.0, 3000.0), [front0, 0.0],
                    max_step=0.5, rtol=1e-8, atol=1e-8, dense_output=True,
                    events=[lambda t, s, m=m: s[0] - m for m in marks])
    expected = {m: float(ev[0]) for m, ev in zip(marks, ref.t_events, strict=True)}
    for m in marks:
        print(f"{m:.0f} m: {crossed[m]:.1f} s, reference {expected[m]:.1f} s")
        assert crossed[m] == pytest.approx(expected[m], rel=0.01), m


def _reference_target(front, rear, starts, ends, limits, margin, decel, cruise, stop_at):
    # the target speed written out with numpy, section by section: the reference
    under = (starts < front) & (ends > rear)
    here = float(limits[under].min(initial=np.inf)) - margin
    ahead = starts >= front
    curves = np.sqrt(np.maximum(limits[ahead] - margin, 0.0) ** 2
                     + 2.0 * decel * (starts[ahead] - front))
    target = min(here, float(curves.min(initial=np.inf)), cruise)
    if stop_at is not None:
        target = min(target, np.sqrt(2.0 * decel * max(stop_at - front, 0.0)))
    return max(target, 0.0)


def test_target_speed_is_the_lowest_limit_braking_curve_and_cruise_speed_anywhere():
    # 12 sections of random lengths and limits (a fifth without one); the driver's target
    # with its front anywhere on the route, with and without a cruising speed and a stop
    # point, is the formula to the bit
    from rrscore import Run

    rng = np.random.default_rng(11)
    lengths = rng.uniform(200.0, 3000.0, 12)
    limits = np.where(rng.uniform(size=12) < 0.2, np.inf, rng.uniform(8.0, 35.0, 12))
    elements = [{"length": float(n)} | ({"speed_limit": float(v)} if np.isfinite(v) else {})
                for n, v in zip(lengths, limits, strict=True)]
    stop = float(lengths.sum() - 500.0)
    for cruise, stop_at in ((np.inf, None), (12.0, stop)):  # the cruise speed binds in places
        auto = {"margin": 1.0, "braking_deceleration": 0.05}
        if stop_at is not None:
            auto |= {"speed": cruise, "stop_at": "S"}
        sc = _scenario(elements, 5, auto, points=[{"name": "S", "position": stop}])
        driver = Run(sc).driver.autodriver
        starts = np.asarray(sc.route.starts, dtype=float)
        ends = starts + sc.route.lengths
        assert ends[-1] == pytest.approx(lengths.sum(), rel=1e-12)
        for front in np.linspace(-100.0, ends[-1] + 100.0, 997):
            rear = front - 700.0
            want = _reference_target(front, rear, starts, ends, limits, 1.0, 0.05, cruise,
                                     stop_at)
            assert driver.target_speed(front, rear) == want, (front, cruise, stop_at)
