"""The environment block every result file carries, and where the repository and its reports are.
Light: torch is imported by ``describe`` only."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPORTS = ROOT / "reports"


def git_revision() -> str:
    try:
        rev = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True,
                             text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return (rev + ("-dirty" if dirty else "")) if rev else "unknown"


def versions() -> dict:
    """The versions a result depends on: Python, torch, and diffusers where it is installed
    (read from the installed metadata: diffusers is not imported for this)."""
    try:
        diffusers = metadata.version("diffusers")
    except metadata.PackageNotFoundError:
        diffusers = None
    import torch
    return {"python": platform.python_version(), "torch": torch.__version__, "diffusers": diffusers}


def describe(device) -> dict:
    import torch
    if device.type == "cuda":
        name = torch.cuda.get_device_name(device)
        allocator = {"backend": "CUDA caching allocator",
                     "PYTORCH_CUDA_ALLOC_CONF": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
                     "PYTORCH_ALLOC_CONF": os.environ.get("PYTORCH_ALLOC_CONF", "")}
    else:
        name = platform.processor() or platform.machine()
        libc = " ".join(platform.libc_ver()).strip() or "unknown libc"
        allocator = {"backend": f"PyTorch CPU allocator over {libc} malloc",
                     **{k: v for k, v in os.environ.items() if k.startswith("MALLOC_")}}
    return {
        **versions(),
        "platform": platform.platform(),
        "device": str(device),
        "device_name": name,
        "cpu_count": os.cpu_count(),
        "allocator": allocator,
        "git_revision": git_revision(),
        "command": " ".join(sys.argv),
        "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
