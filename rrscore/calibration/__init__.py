"""Calibration: kinematic models from sensor logs, stop prediction, and fitting the
physics model's parameters to recorded drives.

* :mod:`.sensors`: sensor layouts, sensor logs (CSV), synthetic logs of simulated drives;
* :mod:`.kinematics`: seed 002's constant-acceleration formulas in closed form;
* :mod:`.estimation`: a log's estimates with their spread over repeated runs;
* :mod:`.model`: the calibrated kinematic model (TOML) and the stop predictor;
* :mod:`.fit`: least-squares fits of config parameters to a recorded drive.
"""
