"""Writing an output file whole or not at all: into a temporary file in the same directory,
synced, then renamed over the file. A full disk, a failing writer or a signal leaves the
file as it was (or absent), never half written or empty."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any


def replace_whole(path: str | Path, write: Callable[[IO[bytes]], None]) -> None:
    """Have ``write`` fill a temporary file, then put it in ``path``'s place."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_atomically(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path``, whole or not at all."""
    replace_whole(path, lambda fh: fh.write(text.encode("utf-8")))


def save_figure(fig: Any, path: str | Path, **options: Any) -> None:
    """Save a matplotlib figure to ``path`` (its format from the suffix), whole or not at
    all; ``options`` go to ``savefig``."""
    fmt = Path(path).suffix.lstrip(".") or "png"
    replace_whole(path, lambda fh: fig.savefig(fh, format=fmt, **options))
