"""The dtypes the audit makes sources of: every one torch defines that CPU torch can fill.

The list is torch's own (every ``torch.dtype`` the ``torch`` module names), not one written
here, so a dtype a new torch adds is drawn the day it exists. A source needs values the audit
can write into it (request n's content) and read back as numbers (the value a model would
cache is computed from them, in a wider dtype where CPU torch has no arithmetic for it);
the dtypes CPU torch cannot do that with are left out, each with why (``LEFT_OUT``, shown in
docs/audit.md).
"""

from __future__ import annotations

import functools
import warnings

import torch

EVERYDAY = ("float32", "float16", "bfloat16")  # what text encoders hand a cache: first, where order matters


def name_of(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _why_left_out(dtype: torch.dtype) -> str | None:
    """Why the audit cannot make sources of ``dtype`` here, or None."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # complex32: "experimental", said at every tensor made
        try:
            memory = torch.empty(4, dtype=dtype)
        except (RuntimeError, TypeError, NotImplementedError):
            return "CPU torch cannot allocate it"
        try:
            memory.copy_(torch.arange(4))
        except (RuntimeError, TypeError, NotImplementedError):
            return "CPU torch cannot write numbers into it (packed bits, sub-byte or quantized values)"
        try:
            memory.to(torch.complex128 if dtype.is_complex else torch.float64)
        except (RuntimeError, TypeError, NotImplementedError):
            return "CPU torch cannot read it as numbers"
    return None


def _defined() -> list[torch.dtype]:
    """Every dtype torch names, once each (``torch.float`` is ``torch.float32``)."""
    return sorted({value for value in vars(torch).values() if isinstance(value, torch.dtype)}, key=name_of)


LEFT_OUT = {name_of(d): why for d in _defined() if (why := _why_left_out(d)) is not None}
DTYPES = EVERYDAY + tuple(name for name in map(name_of, _defined()) if name not in LEFT_OUT and name not in EVERYDAY)


@functools.lru_cache(maxsize=None)
def readable(name: str, bits: str = "neg") -> bool:
    """Can CPU torch read a tensor of dtype ``name`` with the lazy ``bits`` ("conj", "neg",
    "conj neg" or "none") set? (no negation of bool, float8 or uint16-64; no conj and neg at
    once of complex32)"""
    t = torch.zeros(1, dtype=getattr(torch, name))
    if "conj" in bits:
        t = t.conj()
    if "neg" in bits:
        t = torch._neg_view(t)
    try:
        t.resolve_conj().resolve_neg()
    except (RuntimeError, NotImplementedError):
        return False
    return True


NEGATABLE = frozenset(name for name in DTYPES if readable(name, "neg"))


def gradable(dtype: torch.dtype) -> bool:
    """Can a tensor of ``dtype`` require grad? (floating point of two bytes or more, or complex)"""
    return dtype.is_complex or (dtype.is_floating_point and dtype.itemsize > 1)


def kind(dtype: torch.dtype) -> tuple:
    return dtype.is_complex, dtype.is_floating_point, dtype is torch.bool, dtype.is_signed


def alike(dtype: torch.dtype, among: tuple = DTYPES) -> list[torch.dtype]:
    """The other dtypes of ``among`` with ``dtype``'s item size, each reading the same bytes as
    another type, most alike first: of its kind (complex, floating, bool, signed) alike in all,
    then in the first of these, ... (int64: uint64, then float64, then complex64)."""
    def likeness(other):
        same = [a == b for a, b in zip(kind(other), kind(dtype))]
        return (all(same[:2]), *same)
    others = [getattr(torch, n) for n in among if getattr(torch, n) is not dtype
              and getattr(torch, n).itemsize == dtype.itemsize]
    return sorted(others, key=likeness, reverse=True)


# One dtype of the same item size to read a source as (``.view(sibling)``), the most alike.
SIBLING = {name: name_of(others[0]) for name in DTYPES if (others := alike(getattr(torch, name)))}

__all__ = ["DTYPES", "EVERYDAY", "LEFT_OUT", "NEGATABLE", "SIBLING", "alike", "gradable", "kind", "name_of", "readable"]
