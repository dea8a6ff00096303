"""What the SARIF 2.1.0 outputs of ``scan`` and ``sanitize`` share (light: no torch)."""

from __future__ import annotations

from pathlib import Path

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"


def sarif_uri(path: str) -> str:
    p = Path(path)
    return p.as_uri() if p.is_absolute() else p.as_posix()
