"""Every hook rrscore calls, declared once.

Plugins are modules (or objects) with functions marked ``@rrscore.hookimpl``
and named like a hook below. rrscore's own plugins (SimpleLoco, the freight
car, the coupler models, the solvers, the outputs) are registered by import
(:data:`rrscore.run.plugins.DEFAULT_PLUGINS`); others are found through the
``rrscore`` entry-point group and plugin directories.

Plugin directories and trust: importing a plugin runs its code, so a scenario's or
yard's ``plugin_dirs`` may name only folders inside the tree of that file's own folder
(judged after symlinks and ``..``): anything else is a config error naming the key,
before any plugin is imported, unless the user passes ``--allow-plugin-dirs`` (in
Python, ``allow_plugin_dirs=True`` to ``rrscore.load_scenario``, ``drive``,
``validate_file``; they refuse by default, like the command line, since a shared file
is as untrusted there). ``rrs validate`` imports no config's own plugin folder unless
allowed: it checks what needs none of their plugins and names, on its one line, the
vehicle types, coupler models or solver it left unchecked. Folders the user names
(``--plugins DIR``, ``RRS_PLUGIN_PATH``, ``plugin_dirs=`` from Python) are imported
wherever they are. A drive's ``scenario.resolved.toml`` names its plugin folders by
absolute path, so running it again from its output folder needs
``--allow-plugin-dirs``.

Two kinds of hooks:

* components (``rrs_vehicle_types``, ``rrs_coupler_models``, ``rrs_solvers``):
  called once, when the registry is built, to collect classes; the simulation
  then calls those classes' objects directly, never pluggy, inside its loop;
* the drive's lifecycle (``rrs_drive_start``, ``rrs_sample``, ``rrs_sample_rows``,
  ``rrs_event``, ``rrs_drive_end``): called by every drive, for outputs and
  monitoring.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    import numpy as np

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
def rrs_solvers() -> list:
    """Called once when the plugin registry is built.

    :return: explicit Runge-Kutta methods as :class:`rrscore.Tableau` objects (a method
        is its Butcher tableau; the one compiled loop steps them all); each ``name`` is
        what scenarios put in ``solver.method``.
    """


# --- the drive's lifecycle ---------------------------------------------------------------
# Called by every drive, in this order: rrs_drive_start once, then rrs_sample for each row
# of the time series and rrs_event for each event as they happen, then rrs_drive_end once,
# however the drive ends (a stop condition, Ctrl-C, a failing plugin or solver). The
# outputs rrscore writes (timeseries.csv, events.csv, summary.json, the plots) are
# themselves plugins on these hooks (rrscore.outputs). A plugin keeps what it needs for
# one drive in ``drive.store[its name]``: several drives may run at once. A plugin that
# raises ends the drive, named in its error; the other plugins still get that call, the
# final row and rrs_drive_end (rrscore.lifecycle).


@hookspec
def rrs_drive_start(drive) -> None:
    """Called once before a drive's first step.

    :param drive: the :class:`rrscore.Drive`; ``drive.scenario``, ``drive.out_dir``
        (a directory, or None when no files are wanted), ``drive.columns`` (the
        time-series column names), ``drive.store`` (a dict for plugins' own use).
        A yard drive calls the same hooks with a
        :class:`~rrscore.yard.yarddrive.YardDrive`: its rows are each cut's front in
        plan and its speed (no ``sample_states``), its events
        :class:`~rrscore.yard.yardevent.YardEvent` (``t``, ``kind``, ``where``,
        ``value``, ``detail`` as an Event's), its result a
        :class:`~rrscore.yard.yarddrive.YardResult` (``summary``).
    """


@hookspec
def rrs_sample(drive, t: float, row: list[float]) -> None:
    """Called for each sampled row of the time series, in time order.

    :param drive: the :class:`rrscore.Drive` (see ``rrs_drive_start``);
        ``drive.sample_state`` is the state vector at this row.
    :param t: simulated time of the row, s.
    :param row: the values, in the order of ``drive.columns`` (SI units).
    """


@hookspec
def rrs_sample_rows(drive, t: np.ndarray, rows: np.ndarray) -> None:
    """Called for each block of rows of the time series, in time order, once
    ``rrs_sample`` has been called for each of them: a writer that takes rows in blocks
    (as ``timeseries.csv`` does) costs the drive far less than one called row by row.
    A block is the rows one call of the compiled step loop recorded (up to a few
    dozen), or a single row where the drive samples in Python.

    :param drive: the :class:`rrscore.Drive` (see ``rrs_drive_start``);
        ``drive.sample_states()`` gives the state vectors at these rows, one row each
        (formed at the first call: most writers need none).
    :param t: simulated times of the rows, s (an array).
    :param rows: the values, one row each, in the order of ``drive.columns`` (SI units;
        a 2-D array).
    """


@hookspec
def rrs_event(drive, event) -> None:
    """Called for each event soon after it happens, in time order.

    :param drive: the :class:`rrscore.Drive` (see ``rrs_drive_start``).
    :param event: an :class:`rrscore.Event` (slip, coupling, driver action, ...).
    """


@hookspec
def rrs_drive_end(drive, result) -> None:
    """Called once when the drive has ended, whatever ended it.

    :param drive: the :class:`rrscore.Drive` (see ``rrs_drive_start``).
    :param result: the :class:`rrscore.DriveResult`: ``summary`` (its
        ``stop_reason`` says why the drive ended), ``series``, ``events``. A plugin
        may add keys to ``result.summary`` (before ``summary.json`` is written,
        which happens last) and write files into ``drive.out_dir``.
    """
