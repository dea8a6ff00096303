"""Ctrl-C before a command starts. The entry points' first ``import torch`` takes
seconds, before ``harness.cli.run_command`` can answer the signal; an interrupt there
ends the same way: one line and exit 130. This module imports nothing heavy."""

from __future__ import annotations

import contextlib
import sys

EXIT_INTERRUPTED = 130  # Ctrl-C: one line, nothing half-written, reports/latest* unchanged (128 + SIGINT)


@contextlib.contextmanager
def interrupted_is_one_line(prog: str):
    """Around an entry point's imports: Ctrl-C there prints ``prog: interrupted`` and
    exits 130 (nothing has been written yet), instead of a traceback."""
    try:
        yield
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        raise SystemExit(EXIT_INTERRUPTED) from None
