"""How rrscore compiles (rrscore/jit.py): laws that serve Python and compiled code alike,
structs read in compiled code, table views, generic functions, and the compile clock."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from conftest import car_config, make_scenario
from numba import njit

from rrscore import Drive, jit
from rrscore.jit import UNCOMPILED, compile_notice, compile_seconds, law, table

needs_numba = pytest.mark.skipif(UNCOMPILED, reason="NUMBA_DISABLE_JIT: nothing compiles")


@law
def _hypot_law(a, b):  # pragma: no cover (compiled)
    return (a * a + b * b) ** 0.5


@njit
def _hypots(a, b):  # pragma: no cover (compiled)
    out = 0.0
    for i in range(a.size):
        out += _hypot_law(a[i], b[i])
    return out


def test_a_law_broadcasts_over_arrays_from_python_and_is_a_call_in_compiled_code():
    a, b = np.array([3.0, 5.0, 8.0]), np.array([4.0, 12.0, 15.0])
    np.testing.assert_array_equal(_hypot_law(a, b), [5.0, 13.0, 17.0])
    assert _hypot_law(3.0, 4.0) == 5.0
    assert _hypots(a, b) == 35.0
    assert _hypot_law(a[:, None], b[None, :]).shape == (3, 3)


@njit
def _table_sum(flat, start, rows, cols):  # pragma: no cover (compiled)
    view = table(flat, start, rows, cols)
    view[1, 0] = -1.0  # a view: writes through
    return view[1, 2] + view.shape[0] * 100 + view.shape[1] * 1000


def test_a_table_is_the_reshaped_view_of_its_stretch_in_python_and_compiled():
    flat = np.arange(20.0)
    expected = flat[3:11].reshape(2, 4)
    np.testing.assert_array_equal(table(flat, 3, 2, 4), expected)
    assert _table_sum(flat, 3, 2, 4) == expected[1, 2] + 200 + 4000
    assert flat[7] == -1.0


@needs_numba
def test_compile_time_counts_compiling_and_not_code_already_compiled():
    @njit  # a function of its own: no cache, so numba compiles it here
    def cube(x):
        return x * x * x

    before = compile_seconds()
    assert cube(3.0) == 27.0
    assert compile_seconds() > before

    scenario = make_scenario([{"config": car_config(), "count": 2}], start={"speed": "20 km/h"},
                             stop={"max_time": 2.0})
    Drive(scenario).run()  # whatever it needs is compiled (or loaded) now
    summary = Drive(scenario).run().summary
    assert summary["compile_time_s"] == 0.0  # the same code again: nothing compiled


@needs_numba
def test_compile_notice_is_called_once_when_numba_compiles_and_not_for_compiled_code():
    calls: list[str] = []

    @njit  # functions of their own: no cache, so numba compiles them here
    def square(x):
        return x * x

    @njit
    def twice(x):
        return square(x) + square(x)

    with compile_notice(lambda: calls.append("first")):
        assert twice(3.0) == 18.0  # two functions compiled, one nested in the other
        assert square(2.0) == 4.0
    assert calls == ["first"]
    with compile_notice(lambda: calls.append("second")):
        assert twice(1.0) == 2.0  # compiled already: no notice
    assert calls == ["first"]

    @njit
    def cube(x):
        return x * x * x

    assert cube(2.0) == 8.0  # outside the block: the second notice is gone with it
    assert calls == ["first"]


def test_a_failing_compile_notice_does_not_stop_the_compile():
    def broken() -> None:
        raise OSError("stderr closed")

    @njit
    def half(x):
        return x / 2

    with compile_notice(broken):
        assert half(3.0) == 1.5


def test_each_installation_keeps_its_generated_modules_apart(tmp_path) -> None:
    package = Path(jit.__file__).parent
    assert jit.installation_tag() == jit.installation_tag(package)  # the same each time
    assert jit.cache_dir().name == jit.installation_tag()
    copy = tmp_path / "rrscore"  # the same release installed elsewhere (another venv)
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    tag = jit.installation_tag(copy)
    assert tag != jit.installation_tag()
    assert jit.installation_tag(copy) == tag
    # another version in the same place: a module added, or one changed
    (copy / "engine" / "newwatch.py").write_text('"""a module the other lacks"""\n')
    added = jit.installation_tag(copy)
    assert added != tag
    with open(copy / "jit.py", "a") as fh:
        fh.write("\n")
    assert jit.installation_tag(copy) not in (tag, added)
