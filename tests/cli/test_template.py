"""`rrs new`: the generated plugin package installs, passes its own tests (written with
rrscore's fixtures) and is listed by `rrs plugins`."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from rrscore import RrsError
from rrscore.cli.main import main
from rrscore.cli.template import names, render

PY = sys.executable


def _run(*args, cwd=None):
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize(("kind", "name", "provides"), [
    ("vehicle", "tmpl_loco", "vehicle_types"),
    ("coupler", "tmpl_coupler", "coupler_models"),
])
def test_generated_package_installs_passes_its_tests_and_is_listed(tmp_path, capsys, kind,
                                                                   name, provides):
    dest = tmp_path / names(name)["dist"]
    assert main(["new", kind, name, "--dir", str(dest)]) == 0
    assert "pip install -e" in capsys.readouterr().out
    dist = names(name)["dist"]
    install = _run(PY, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                   "-e", str(dest))
    assert install.returncode == 0, install.stderr
    try:
        tests = _run(PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=dest)
        assert tests.returncode == 0, tests.stdout + tests.stderr
        assert " passed" in tests.stdout and "failed" not in tests.stdout
        listed = _run(PY, "-m", "rrscore.cli.main", "plugins", "--json")
        assert listed.returncode == 0, listed.stderr
        plugin = {p["name"]: p for p in json.loads(listed.stdout)}[name]
        assert plugin["provides"] == {provides: [name]}
        assert f"({dist} 0.1.0)" in plugin["source"]
        lint = _run(PY, "-m", "ruff", "check", "--isolated", "--select", "E,F,W,I,B,UP",
                    "--line-length", "100", ".", cwd=dest)
        assert lint.returncode == 0, lint.stdout
    finally:
        _run(PY, "-m", "pip", "uninstall", "-y", "-q", dist)
    assert name not in _run(PY, "-m", "rrscore.cli.main", "plugins").stdout


def test_template_documents_params_keys_controls_and_signals(tmp_path):
    files = render("vehicle", "doc_loco", tmp_path / "pkg")
    plugin = next(p for p in files if p.name == "plugin.py").read_text()
    for word in ("params = {", "keys = {", "controls = {", "signals = {", "key_bindings"):
        assert word in plugin
    assert "class DocLoco(rrscore.VehicleModel)" in plugin
    assert "rrs_doc_loco/plugin.py" in {f"{p.parent.name}/{p.name}" for p in files}


def test_bad_names_and_non_empty_directories_are_refused(tmp_path):
    with pytest.raises(RrsError, match="expected lower-case letters"):
        render("vehicle", "My-Loco", tmp_path / "a")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "x").write_text("")
    with pytest.raises(RrsError, match="exists and is not empty"):
        render("vehicle", "ok_name", tmp_path / "b")
