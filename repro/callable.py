"""A plain function as the pipeline under test: ``fn(prompt: str, seed: int)``.

What it returns becomes a dict of CPU tensors the differential check compares
bitwise: a tensor, a numpy array, a PIL image, a list of frames, or a dict of
those. Whatever looks like images (uint8, ``(..., H, W, 3)``) is also kept as
frames, compared by SSIM.
"""

from __future__ import annotations

import functools
import inspect

import numpy as np
import torch

from repro.spec import load_callable

WHAT_TO_RETURN = "return a tensor, a numpy array, a PIL image, a list of frames, or a dict of those"


class CallSpecError(ValueError):
    """A ``--call`` spec or return value that cannot be served (the message is one line)."""


def resolve_call(spec: str, kwargs: dict | None = None):
    """``package.module:fn`` -> the function (with ``kwargs`` bound, if any)."""
    fn = load_callable(spec, CallSpecError, f"--call {spec!r}", f"--call {spec!r}: expected package.module:function")
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # a builtin or an extension type: no signature to check, it is called as is
        signature = None
    if signature is not None:
        try:
            signature.bind("a prompt", 0, **(kwargs or {}))
        except TypeError as exc:
            raise CallSpecError(f"--call {spec}: must be fn(prompt, seed), called with a str and an int; "
                                f"{getattr(fn, '__name__', spec)}{signature} cannot be ({exc})") from None
    return functools.partial(fn, **kwargs) if kwargs else fn


def _tensor(value, where: str) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().clone()
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            raise CallSpecError(f"{where} is an array of Python objects: {WHAT_TO_RETURN}")
        return torch.from_numpy(np.ascontiguousarray(value).copy())
    if type(value).__module__.startswith("PIL."):
        return torch.from_numpy(np.asarray(value.convert("RGB")).copy())
    if isinstance(value, (list, tuple)) and value:
        parts = [_tensor(v, f"{where}[{i}]") for i, v in enumerate(value)]
        if any(p.shape != parts[0].shape or p.dtype != parts[0].dtype for p in parts):
            raise CallSpecError(f"{where}: the frames differ in shape or dtype: {WHAT_TO_RETURN}")
        return torch.stack(parts)
    kind = "None" if value is None else ("an empty list" if isinstance(value, (list, tuple)) else
                                         type(value).__name__)
    raise CallSpecError(f"{where} is {kind}: {WHAT_TO_RETURN}")


def as_outputs(value) -> dict[str, torch.Tensor]:
    """What ``fn`` returned -> name -> a CPU tensor of its own (nothing shared with ``fn``'s state)."""
    if isinstance(value, dict):
        if not value:
            raise CallSpecError(f"the function returned an empty dict: {WHAT_TO_RETURN}")
        return {str(k): _tensor(v, f"the function's output {k!r}") for k, v in value.items()}
    return {"output": _tensor(value, "the function's output")}


def frames_of(outputs: dict[str, torch.Tensor]) -> torch.Tensor | None:
    """The first output that looks like images, as ``(T, H, W, 3)`` uint8, else None."""
    for tensor in outputs.values():
        if tensor.dtype == torch.uint8 and tensor.dim() in (3, 4) and tensor.shape[-1] == 3 \
                and min(tensor.shape[-3:-1]) >= 7:  # SSIM's window needs 7x7
            return tensor if tensor.dim() == 4 else tensor.unsqueeze(0)
    return None
