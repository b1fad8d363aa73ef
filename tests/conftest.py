"""Builders shared by the tests: scenarios from inline tables, using the shipped configs."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest

import rrscore
from rrscore.model.config import Context
from rrscore.run.scenario import Scenario, scenario_from_table

REPO = Path(__file__).resolve().parents[1]
CONFIGS = REPO / "configs"
G = 9.80665


def make_scenario(vehicles: list[dict[str, Any]], elements: list[dict[str, Any]] | None = None,
                  coupling: dict[str, Any] | None = None, registry=None,
                  points: list[dict[str, Any]] | None = None, **sections: Any) -> Scenario:
    """A scenario whose train and route are inline; vehicle configs are relative to configs/."""
    table: dict[str, Any] = {
        "train": {"vehicles": vehicles, **({"coupling": coupling} if coupling else {})},
        "route": {"elements": elements or [{"length": "50 km"}], "points": points or []},
        **sections,
    }
    return scenario_from_table(table, Context("<test>", "scenario", CONFIGS), registry)


class VehiclePlugin:
    """A plugin object that provides the given vehicle classes, for
    ``load_registry(extra=[VehiclePlugin(cls)])``."""

    def __init__(self, *classes: type) -> None:
        self.classes = list(classes)

    @rrscore.hookimpl
    def rrs_vehicle_types(self) -> list[type]:
        return self.classes


def falling_posts_drive(out: Path) -> Path:
    """SimpleLoco run 5 s at 10 m/s from 900 m into a 5 km route whose kilometre posts
    fall from km 10 (``chainage_direction = "decreasing"``), written to ``out``."""
    table = {"train": {"vehicles": [{"config": "vehicles/simple_loco.toml"}]},
             "route": {"start_chainage": "10 km", "chainage_direction": "decreasing",
                       "elements": [{"length": "5 km"}]},
             "start": {"position": "900 m", "speed": 10.0},
             "stop": {"max_time": 5.0}, "output": {"sample_interval": 1.0}}
    rrscore.Drive(scenario_from_table(table, Context("<test>", "scenario", CONFIGS))).run(out)
    return out


def car_config(**vehicle: Any) -> dict[str, Any]:
    """An inline freight-car config with overrides for the [vehicle] table."""
    base = {
        "type": "freight_car", "empty_mass": "23 t", "payload_mass": "69.5 t",
        "length": "13.92 m", "num_axis": 4, "wheel_diameter": "0.957 m",
        "wheelset_inertia": "96 kg*m^2",
    }
    base.update(vehicle)
    return {"vehicle": base}


@pytest.fixture
def scenario_builder():
    return make_scenario


@functools.cache
def shipped_drive(name: str):
    """The whole drive of a shipped scenario (``configs/scenarios/NAME.toml``), run once per
    test session: several tests check different things of the same long drives."""
    from rrscore import Drive, load_scenario

    return Drive(load_scenario(CONFIGS / "scenarios" / f"{name}.toml")).run()
