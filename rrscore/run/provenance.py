"""What ran: the summary's ``provenance``, so that a result can be traced and repeated.

rrscore's version (and the git revision of its source tree, when it runs from one), the
Python and library versions, every plugin outside rrscore with its package's version or
its files' SHA-256, and the SHA-256 of the resolved scenario (the ``scenario.resolved.
toml`` a drive writes: the same hash, the same drive).
"""

from __future__ import annotations

import functools
import hashlib
import platform
from importlib import metadata
from pathlib import Path
from typing import Any

#: The libraries whose versions a result depends on.
LIBRARIES = ("numpy", "scipy", "numba", "llvmlite", "pluggy")


@functools.lru_cache(maxsize=1)
def environment() -> dict[str, Any]:
    """rrscore's version and git revision, Python's and the libraries' versions (the
    same for every drive of a process)."""
    versions = {}
    for name in ("rrscore", *LIBRARIES):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return {"rrscore": versions.pop("rrscore"),
            "rrscore_git_revision": git_revision(Path(__file__).resolve().parents[2]),
            "python": platform.python_version(), "libraries": versions}


def git_revision(root: Path) -> str | None:
    """The commit checked out in ``root`` (read from ``.git``, no git needed); None where
    ``root`` is no git work tree (an installed package)."""
    git = root / ".git"
    try:
        if git.is_file():  # a worktree: "gitdir: PATH"
            git = Path(git.read_text().split(":", 1)[1].strip())
        head = (git / "HEAD").read_text().strip()
        if not head.startswith("ref: "):
            return head
        ref = head[5:]
        common = git / "commondir"
        base = (git / common.read_text().strip()).resolve() if common.is_file() else git
        for where in (git, base):
            if (where / ref).is_file():
                return (where / ref).read_text().strip()
        packed = base / "packed-refs"
        for line in packed.read_text().splitlines() if packed.is_file() else ():
            if line.endswith(f" {ref}"):
                return line.split()[0]
    except (OSError, IndexError):
        pass
    return None


def files_hash(path: Path) -> str | None:
    """SHA-256 of a plugin's file (as ``sha256sum`` gives it), or of a package directory's
    Python files (each one's path within it, then its bytes, in order of the paths); None
    if it cannot be read."""
    digest = hashlib.sha256()
    try:
        if not path.is_dir():
            return hashlib.sha256(path.read_bytes()).hexdigest()
        for f in sorted(path.rglob("*.py")):
            digest.update(str(f.relative_to(path)).encode())
            digest.update(f.read_bytes())
    except OSError:
        return None
    return digest.hexdigest()


def plugins(registry: Any) -> list[dict[str, Any]]:
    """Every plugin outside rrscore: its name and source, and its version (an installed
    package's) or its files' hash (a plugin directory's)."""
    out = []
    for info in registry.plugins:
        if info.source.startswith("built in"):
            continue
        entry = {"name": info.name, "source": info.source}
        if info.version is not None:
            entry["version"] = info.version
        elif Path(info.source).exists():  # a plugin directory's file or package
            entry["sha256"] = files_hash(Path(info.source))
        out.append(entry)
    return out


def provenance(scenario: Any) -> dict[str, Any]:
    """The summary's ``provenance`` for a drive of ``scenario``."""
    resolved = scenario.resolved_toml.encode("utf-8")
    return {**environment(), "plugins": plugins(scenario.registry),
            "scenario_sha256": hashlib.sha256(resolved).hexdigest()}
