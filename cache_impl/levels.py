"""Guarantee levels of a tensor-keyed cache: the one vocabulary for "level".

A cache at level L never returns a value computed from other data in any
situation of class L or below (README, "Guarantee levels"):

    L0  only within one live request (the fingerprint key alone)
    L1  also when a source is freed and its address reused (liveness guard)
    L2  also when a live source's storage is swapped or rebound, even back to
        its old address (referent recheck of fingerprint and storage identity)
    L3  also when a live source's content is rewritten with no version bump
        (request-scoped invalidation)
"""

from __future__ import annotations

import enum


class Level(enum.IntEnum):
    """Ordered, so ``reached >= required`` reads as it should; prints as ``L2``."""

    L0 = 0
    L1 = 1
    L2 = 2
    L3 = 3

    def __str__(self) -> str:
        return self.name

    __repr__ = __str__  # argparse names choices by repr

    @classmethod
    def parse(cls, text) -> "Level":
        """``"L2"``, ``2`` or a Level -> Level; ValueError with one line otherwise."""
        if isinstance(text, cls):
            return text
        if isinstance(text, str) and text in cls.__members__:
            return cls[text]
        if isinstance(text, int) and not isinstance(text, bool) and text in cls._value2member_map_:
            return cls(text)
        raise ValueError(f"unknown level {text!r}: use one of {', '.join(cls.__members__)}")


LEVELS = tuple(Level)


def level_below(failed_levels) -> Level | None:
    """The highest level under every failed one (L3 when none failed); None when L0 failed."""
    lowest = min(failed_levels, default=None)
    if lowest is None:
        return Level.L3
    return Level(lowest - 1) if lowest > Level.L0 else None
