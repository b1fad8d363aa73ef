"""Every hook rrscore calls, declared once.

Plugins are modules (or objects) with functions marked ``@rrscore.hookimpl``
and named like a hook below. They are found through the ``rrscore``
entry-point group, through plugin directories, and the shipped vehicles and
plugins are registered the same way. Hooks are called once, at set-up, to
collect components; the simulation then calls those components directly, never
pluggy, inside its loop.
"""

from __future__ import annotations

import pluggy

PROJECT = "rrscore"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def rrs_vehicle_types() -> list[type]:
    """Called once when the plugin registry is built.

    :return: vehicle model classes (subclasses of :class:`rrscore.VehicleModel`)
        this plugin provides; each class's ``type_name`` is what vehicle configs
        put in ``vehicle.type``. Two plugins may not provide the same name.
    """


@hookspec
def rrs_coupler_models() -> list[type]:
    """Called once when the plugin registry is built.

    :return: coupler model classes (subclasses of :class:`rrscore.CouplerModel`);
        each ``type_name`` is what train configs put in ``coupling.model``.
    """


@hookspec
def rrs_solvers() -> list[type]:
    """Called once when the plugin registry is built.

    :return: solver classes (subclasses of :class:`rrscore.Solver`); each
        ``name`` is what scenarios put in ``solver.method``.
    """
