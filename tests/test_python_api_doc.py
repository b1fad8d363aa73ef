"""docs/python-api.md runs as written: its examples are doctests, run from a folder that
holds the repository's configs/ (what they write goes there, not into the repository)."""

from __future__ import annotations

import doctest
import os

import pytest
from conftest import REPO

pytest.importorskip("pandas")
pytest.importorskip("pyarrow")


def test_python_api_doc_examples_run_as_written(tmp_path, monkeypatch) -> None:
    (tmp_path / "configs").symlink_to(REPO / "configs")
    monkeypatch.chdir(tmp_path)
    result = doctest.testfile(
        os.fspath(REPO / "docs" / "python-api.md"), module_relative=False,
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, report=True)
    assert result.attempted > 30
    assert result.failed == 0
