"""rrscore's own outputs, each a plugin on the drive's lifecycle hooks (registered by
import, as third-party output plugins are registered by entry point or directory):

* :mod:`~rrscore.outputs.timeseries`: ``timeseries.csv`` and ``coupler_forces.csv``,
  row by row;
* :mod:`~rrscore.outputs.eventlog`: ``events.csv``, event by event;
* :mod:`~rrscore.outputs.plots`: ``speed.png`` and ``force_envelope.png`` at the end;
* :mod:`~rrscore.outputs.summary`: ``scenario.resolved.toml`` at the start and
  ``summary.json`` last of all.

Each writes only when the drive has an output directory (``drive.out_dir``).
"""
