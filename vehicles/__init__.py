"""Vehicle models shipped with rrscore, installed as ``rrscore.vehicles`` and registered
through the ``rrscore`` entry-point group like any third-party plugin."""
