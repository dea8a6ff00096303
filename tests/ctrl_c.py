"""Ctrl-C as a terminal delivers it, whatever the test process inherited."""

from __future__ import annotations

import signal


def answers_ctrl_c() -> None:
    """``preexec_fn`` for a process a test interrupts: SIGINT back to its default. A shell
    starts a background job with SIGINT ignored, and the ignoring is inherited through every
    exec; a command started that way (pytest run with ``&``, a CI step) never sees the Ctrl-C
    the test sends, and the test would wait out its deadline."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
