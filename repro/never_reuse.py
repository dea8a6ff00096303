"""An allocator that never hands a freed address back, for the black-box check.

AddressSanitizer's allocator keeps freed memory in a quarantine instead of
handing it to the next allocation. Preloaded into an uninstrumented Python (with
libstdc++ preloaded beside it, so its ``__cxa_throw`` interceptor finds the real
one) it runs torch on a CPU at about normal speed. ``PYTHONMALLOC=malloc`` routes
CPython's own objects through it too, so ``id()`` values are not recycled either.

On CUDA, ``PYTORCH_NO_CUDA_MEMORY_CACHING=1`` makes torch return device memory to
the driver on every free, but the driver may hand the same address out again:
that mode is unmeasured here, so a run there must show by :func:`reuse_probe`
that nothing was reused before its result can count.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import re
import shutil
import subprocess
from pathlib import Path

import torch

# ASan as an allocator, not as a checker: no leak report at exit, no complaint that
# it was not linked first, no ODR check on libraries that were never instrumented, no
# stack trace recorded per allocation (it slows every malloc). The quarantine holds
# 1 GiB of freed memory before it recycles any; the runs' own counts show if it did.
ASAN_OPTIONS = ("detect_leaks=0:verify_asan_link_order=0:detect_odr_violation=0:malloc_context_size=0:"
                "quarantine_size_mb=1024")
INSTALL_HINT = ("install AddressSanitizer's runtime (Debian/Ubuntu: apt-get install libasan8; "
                "Fedora: dnf install libasan)")
CUDA_UNMEASURED = ("CUDA never-reuse mode (PYTORCH_NO_CUDA_MEMORY_CACHING=1) is unmeasured: the driver may hand a "
                   "freed address out again, so a clean verdict needs the probe to show 0 reuses")
PROBE_TRIALS = 200


class NeverReuseUnavailable(RuntimeError):
    """The never-reuse allocator cannot be loaded here (the message is one line)."""


def find_library(name: str) -> Path | None:
    """The full path of ``lib<name>.so*`` for this machine: the loader's cache, then
    the compiler's own copy, then the usual library folders."""
    for found in (_from_ldconfig(name), _from_compiler(name), _from_folders(name)):
        if found is not None:
            return found
    return None


def _from_ldconfig(name: str) -> Path | None:
    ldconfig = shutil.which("ldconfig") or next((p for p in ("/sbin/ldconfig", "/usr/sbin/ldconfig")
                                                  if os.path.exists(p)), None)
    if ldconfig is None:
        return None
    try:
        listing = subprocess.run([ldconfig, "-p"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    wide = ctypes.sizeof(ctypes.c_void_p) == 8  # take the 64-bit entry ("libc6,x86-64") on a 64-bit Python
    pattern = re.compile(rf"^\s*lib{re.escape(name)}\.so[.\d]*\s+\(([^)]*)\)\s+=>\s+(\S+)\s*$")
    for line in listing.splitlines():
        m = pattern.match(line)
        if m and ("64" in m[1]) == wide and os.path.exists(m[2]):
            return Path(m[2])
    return None


def _from_compiler(name: str) -> Path | None:
    for cc in ("gcc", "cc"):
        if shutil.which(cc) is None:
            continue
        try:
            text = subprocess.run([cc, f"-print-file-name=lib{name}.so"], capture_output=True, text=True,
                                  timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            continue
        if os.path.isabs(text) and os.path.exists(text):
            return Path(os.path.realpath(text))  # the linker's symlink -> the versioned library
    return None


def _from_folders(name: str) -> Path | None:
    soname = ctypes.util.find_library(name)  # e.g. "libasan.so.8", without a folder
    if not soname:
        return None
    for folder in ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/lib64", "/usr/lib", "/lib"):
        candidate = Path(folder) / soname
        if candidate.exists():
            return candidate
    return None


# ASan fills only the first 4 KiB of an allocation by default; all of it (up to 2 GiB: the flag
# is an int, and a larger value silently turns filling off), so that memory a pipeline reads
# without writing holds the fill byte, not whatever the kernel or an earlier allocation left there.
MAX_FILL = (1 << 31) - 1


def environment(device: torch.device, fill_byte: int | None = None) -> dict[str, str]:
    """Variables that put a child process on the never-reuse allocator; ``fill_byte``: every new
    allocation (but calloc's) is filled with it. Raises :class:`NeverReuseUnavailable` when a
    library is missing."""
    asan = find_library("asan")
    if asan is None:
        raise NeverReuseUnavailable(f"AddressSanitizer's runtime (libasan.so) was not found: {INSTALL_HINT}")
    stdcxx = find_library("stdc++")
    if stdcxx is None:
        raise NeverReuseUnavailable("libstdc++.so.6 was not found: install the C++ runtime (Debian: libstdc++6)")
    preload = " ".join([str(asan), str(stdcxx), os.environ.get("LD_PRELOAD", "")]).strip()
    env = {"LD_PRELOAD": preload, "ASAN_OPTIONS": ASAN_OPTIONS, "PYTHONMALLOC": "malloc"}
    if fill_byte is not None:
        env["ASAN_OPTIONS"] += f":malloc_fill_byte={fill_byte}:max_malloc_fill_size={MAX_FILL}"
    if device.type == "cuda":
        # The CUDA driver maps memory where ASan's shadow gap is protected by default.
        env["ASAN_OPTIONS"] += ":protect_shadow_gap=0"
        env["PYTORCH_NO_CUDA_MEMORY_CACHING"] = "1"
    return env


def is_active() -> bool:
    """Whether this process runs on AddressSanitizer's allocator (the preload took)."""
    return hasattr(ctypes.CDLL(None), "__asan_init")


def reuse_probe(device: torch.device, trials: int = PROBE_TRIALS) -> dict:
    """How often this process's allocators hand a just-freed address straight back:
    Python object ids, host tensor memory and, on CUDA, device memory (``trials`` each)."""

    def handed_back(make, where) -> int:
        """How often an object made right after another was freed takes its place."""
        same = 0
        for _ in range(trials):  # bare numbers (int): meeting a freed address again is the point here
            obj = make()
            before = int(where(obj))
            del obj
            obj = make()
            same += int(where(obj)) == before
            del obj
        return same

    address = torch.Tensor.data_ptr
    result = {"trials": trials,
              "object_ids": handed_back(lambda: torch.zeros(3), id),
              "host_addresses": handed_back(lambda: torch.empty(1 << 16), address)}
    if device.type == "cuda":
        result["device_addresses"] = handed_back(lambda: torch.empty(1 << 16, device=device), address)
    return result
