"""The README's promises that can be checked without running them: its two commands each
set up a fresh environment, CI runs its test command, and its example error is real."""

from __future__ import annotations

import re
import subprocess
import sys

from bad_inputs import REPO

README = (REPO / "README.md").read_text()


def _commands() -> list[str]:
    section = README.split("## Two commands", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)\n```", section, re.S)


def test_each_of_the_two_commands_sets_up_a_fresh_environment():
    commands = _commands()
    assert len(commands) == 2
    for command in commands:
        assert command.startswith("python3 -m venv --clear .venv && ")


def test_ci_runs_the_readmes_test_command():
    test_command = _commands()[1]
    ci = (REPO / ".ci" / "run").read_text()
    assert test_command.replace("pip install ", "pip install -q ") in ci


def test_the_example_config_error_is_what_rrs_prints_for_that_file(tmp_path):
    line = re.search(r"^rrs: error: (\S+): vehicle\.empty_mass: found '-5 t'.*$", README, re.M)
    assert line is not None
    named = REPO / line.group(1)
    assert named.is_file()
    broken = tmp_path / named.name
    broken.write_text(re.sub(r'(?m)^empty_mass = .*$', 'empty_mass = "-5 t"', named.read_text()))
    proc = subprocess.run([sys.executable, "-m", "rrscore.cli.main", "validate", broken.name],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip() == line.group(0).replace(line.group(1), broken.name)
