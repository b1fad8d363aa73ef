"""Flow through ports and the pipe's wave speed against the gas laws by hand."""

from __future__ import annotations

import math

import pytest

from rrscore.physics.pneumatics import ATMOSPHERE, CRITICAL, LINEAR, port_flow, wave_speed


def test_a_choked_port_passes_the_critical_mass_flow():
    # 0.5 MPa gauge into the air: choked. m = Cd A p sqrt(gamma/(R T)) (2/(gamma+1))^3, with
    # (gamma + 1)/(2 (gamma - 1)) = 3 for gamma = 1.4.
    area = math.pi * 0.02**2 / 4
    p = 0.5e6 + ATMOSPHERE
    expected = 0.8 * area * p * math.sqrt(1.4 / (287.05 * 293.15)) * (2 / 2.4) ** 3
    assert port_flow(0.5e6, 0.0, area) == pytest.approx(expected, rel=1e-12)
    assert CRITICAL == pytest.approx(0.5283, abs=1e-4)


def test_flow_is_antisymmetric_and_stops_at_equal_pressures():
    assert port_flow(0.3e6, 0.5e6, 1e-4) == -port_flow(0.5e6, 0.3e6, 1e-4)
    assert port_flow(0.4e6, 0.4e6, 1e-4) == 0.0
    assert port_flow(0.4e6, 0.0, 0.0) == 0.0


def test_subsonic_flow_follows_the_ellipse_and_joins_the_linear_part_continuously():
    up = 0.5e6 + ATMOSPHERE
    choked = port_flow(0.5e6, 0.0, 1e-4)
    down = 0.8 * up
    x = (0.8 - CRITICAL) / (1 - CRITICAL)
    assert port_flow(0.5e6, down - ATMOSPHERE, 1e-4) == pytest.approx(
        choked * math.sqrt(1 - x * x), rel=1e-12)
    edge = (1 - LINEAR) * up - ATMOSPHERE
    assert port_flow(0.5e6, edge + 1e-6, 1e-4) == pytest.approx(
        port_flow(0.5e6, edge - 1e-6, 1e-4), rel=1e-6)


def test_a_plain_pipe_carries_a_wave_at_the_speed_of_sound():
    area = math.pi * 0.032**2 / 4
    speed = wave_speed(10.0, 10.0 / area, 10.0 * area)
    assert speed == pytest.approx(math.sqrt(1.4 * 287.05 * 293.15), rel=1e-12)  # 343.2 m/s
