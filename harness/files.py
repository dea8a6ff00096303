"""Files written whole or not at all (light: no torch)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["check_writable", "write_atomic"]


def write_atomic(path: Path, data: bytes | str) -> None:
    """Write to a temporary file beside ``path``, then rename it over ``path``; an
    interrupt on the way leaves ``path`` as it was and no temporary file."""
    path = Path(path)
    raw = data.encode() if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; a report is meant to be shared
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def check_writable(folder: Path) -> None:
    """Raise OSError unless a file can be made in ``folder``: asked before a run, so that a
    place the results cannot go is said first, not after the work."""
    tempfile.TemporaryFile(dir=folder).close()
