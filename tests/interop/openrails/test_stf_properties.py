"""Property-based attack on the Open Rails import (hypothesis): any bytes, and any text
built of STF's own pieces, are either imported or refused with one line naming the file;
never a traceback. ``RRS_PROPERTY_SCALE`` (say 20) runs more examples."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rrscore.interop.openrails import import_file
from rrscore.interop.openrails.stf import StfError

SCALE = max(1, int(os.environ.get("RRS_PROPERTY_SCALE", "1")))

#: Pieces of STF files: blocks, tokens of each kind, numbers with and without units,
#: comments, strings (closed or not), includes, and junk.
PIECES = st.sampled_from([
    "(", ")", " ", "\n", "\t", '"', '"x"', "+", "Wagon", "Engine", "Mass", "Size", "80t-uk",
    "3000kW", "1e999", "-5", "0.5", "abc", "#", "#Mass", "comment", "Skip", "include",
    '"../x.inc"', "ORTSMaxTractiveForceCurves", "DynamicBrakeForceCurves", "Coupling",
    "Spring", "Stiffness", "r0", "Break", "ORTSDavis_A", "ORTSNumberAxles", "ORTSInertia",
    "ORTSAdhesion", "Wheelset", "Axle", "1", "0", "2.5", "10mph", "kN", "lbf/in", "é", "\0",
    "SIMISA@@@@@@@@@@JINX0D0t______", "Train", "TrainCfg", "WagonData", "EngineData", "Flip",
])


def _attack(data: bytes, suffix: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"junk{suffix}"
        path.write_bytes(data)
        try:
            import_file(path)
        except StfError as exc:
            message = str(exc)
            assert "\n" not in message
            assert message.startswith(str(path)) or str(Path(tmp)) in message


@settings(max_examples=300 * SCALE, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(pieces=st.lists(PIECES, max_size=60), suffix=st.sampled_from([".eng", ".wag", ".con"]),
       encoding=st.sampled_from(["utf-8", "utf-16", "cp1252-ish"]))
def test_text_of_stf_pieces_imports_or_is_one_error_line(pieces, suffix, encoding):
    text = " ".join(pieces)
    data = (text.encode("utf-16") if encoding == "utf-16" else
            text.encode("utf-8") if encoding == "utf-8" else text.encode("latin-1", "replace"))
    _attack(data, suffix)


@settings(max_examples=200 * SCALE, deadline=None)
@given(data=st.binary(max_size=400), suffix=st.sampled_from([".eng", ".wag", ".con"]))
def test_random_bytes_import_or_are_one_error_line(data, suffix):
    _attack(data, suffix)


@settings(max_examples=200 * SCALE, deadline=None)
@given(body=st.lists(st.sampled_from(["Mass ( 80t-uk )", "Size ( 3m 4m 20m )",
                                      "ORTSNumberAxles ( 4 )", "WheelRadius ( 18in )",
                                      "ORTSDavis_A ( 300lbf )", "Coupling ( Spring ( r0 ( ) ) )",
                                      "Coupling ( Spring ( Stiffness ( 1e6 ) ) )",
                                      "MaxHandbrakeForce ( x )", "Mass ( )"]), max_size=8),
       engine=st.lists(st.sampled_from([
           "MaxPower ( 1MW )", "MaxForce ( 300kN )", "ORTSNumberDriveAxles ( 99 )",
           "ORTSMaxTractiveForceCurves ( 1 ( 0 1 ) )", "ORTSMaxTractiveForceCurves ( x )",
           "ORTSMaxTractiveForceCurves ( 0.5 ( 0 10 5 ) )", "DynamicBrakeForceCurves ( )",
           "DynamicBrakesMinUsableSpeed ( 5 )"]), max_size=6))
def test_well_formed_files_with_odd_values_import_or_are_one_error_line(body, engine):
    text = "Wagon ( " + " ".join(body) + " )\nEngine ( " + " ".join(engine) + " )\n"
    _attack(text.encode(), ".eng")
