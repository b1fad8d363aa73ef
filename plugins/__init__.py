"""Plugins shipped with rrscore (coupler models, ...), installed as ``rrscore.plugins`` and
registered through the ``rrscore`` entry-point group like any third-party plugin."""
