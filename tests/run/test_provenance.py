"""The summary says what ran: versions, the git revision, the plugins with their hashes
and the resolved scenario's hash, each checked against an outside answer (git itself,
the libraries' own versions, sha256 of the files)."""

from __future__ import annotations

import hashlib
import subprocess

import numba
import numpy
import pytest
import scipy
from conftest import CONFIGS

import rrscore
from rrscore import Drive, load_scenario
from rrscore.run.provenance import git_revision

LEVEL = CONFIGS / "scenarios" / "simple_loco_level.toml"


def test_the_summary_names_the_versions_and_the_resolved_scenario_s_hash(tmp_path):
    out = tmp_path / "out"
    summary = Drive(load_scenario(LEVEL).with_values({"stop.max_time": "3 s"})).run(
        out).summary
    p = summary["provenance"]
    assert p["rrscore"] == rrscore.__version__
    assert p["libraries"]["numpy"] == numpy.__version__
    assert p["libraries"]["scipy"] == scipy.__version__
    assert p["libraries"]["numba"] == numba.__version__
    # the same drive again is the same hash: the file the drive wrote hashes to it
    written = (out / "scenario.resolved.toml").read_bytes()
    assert p["scenario_sha256"] == hashlib.sha256(written).hexdigest()
    assert p["plugins"] == []  # rrscore's own alone


def test_a_plugin_directory_s_plugin_is_named_with_its_file_s_sha256(tmp_path):
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    source = "import rrscore\n\n@rrscore.hookimpl\ndef rrs_sample(t):\n    pass\n"
    (plugins / "watcher.py").write_text(source)
    scenario = load_scenario(LEVEL, plugin_dirs=[plugins]).with_values(
        {"stop.max_time": "2 s"})
    listed = Drive(scenario).run().summary["provenance"]["plugins"]
    assert listed == [{"name": f"watcher@{plugins}", "source": str(plugins / "watcher.py"),
                       "sha256": hashlib.sha256(source.encode()).hexdigest()}]


def _git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          check=True).stdout.strip()


def test_the_git_revision_is_what_git_says_checked_out(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    assert git_revision(repo) is None  # no work tree: an installed package
    try:
        _git(repo, "init", "-q", "-b", "main")
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("no git here")
    (repo / "f").write_text("x")
    _git(repo, "add", "f")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one")
    assert git_revision(repo) == _git(repo, "rev-parse", "HEAD")
    _git(repo, "pack-refs", "--all")  # the branch's ref now only in packed-refs
    assert git_revision(repo) == _git(repo, "rev-parse", "HEAD")
    _git(repo, "checkout", "-q", "--detach")
    assert git_revision(repo) == _git(repo, "rev-parse", "HEAD")
