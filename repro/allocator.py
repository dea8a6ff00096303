"""Ways to make the allocator hand a freed address to the next request's tensor."""

from __future__ import annotations

import torch


class AddressArena:
    """Hands out *fresh* tensors at one fixed address, deterministically on any
    allocator (CPU or CUDA).

    Each tensor from :meth:`fresh` is a new object with its own version counter
    at 0 (made through DLPack, so it shares no counter with the arena or with
    earlier tensors) and holds its own content. That is exactly what the next
    request sees when the allocator recycles a freed address. A naive
    ``copy_`` into a shared view would bump a shared version counter and hide
    the bug.
    """

    def __init__(self, shape, dtype=None, device="cpu"):  # dtype None: torch's default
        self._buffer = torch.empty(shape, dtype=dtype, device=device)
        self.address = self._buffer.data_ptr()

    def fresh(self, content: torch.Tensor) -> torch.Tensor:
        """A new tensor at the arena's address holding ``content``. Under
        ``torch.inference_mode()`` it is an inference tensor (no version counter).
        The previous tensor from this arena must be dead, or it sees the new content."""
        return self.prepare(content)()

    def prepare(self, content: torch.Tensor):
        """Write ``content`` now; return a call that makes the fresh tensor later.
        That call allocates no Python object but the tensor itself, so when it
        directly follows the death of the previous tensor, CPython hands the new
        tensor the old one's memory: the same ``id()`` as well as the same address."""
        with torch.no_grad():
            self._buffer.copy_(content)
        capsule = torch.utils.dlpack.to_dlpack(self._buffer)
        return lambda: torch.utils.dlpack.from_dlpack(capsule)


class ReuseTracker:
    """Remembers the addresses of freed sources, so a natural trial can say
    whether the allocator really handed one back (and to whom)."""

    def __init__(self):
        self._freed: dict[int, str] = {}  # address -> label of the source that freed it

    def freed(self, address: int, label: str) -> None:
        # int(): comparing a freed address with a new one is the point here, so the
        # number is kept bare (``address-reuse sanitize`` follows data_ptr() values).
        self._freed[int(address)] = label

    def reused_from(self, address: int) -> str | None:
        """Label of the freed source that had this address, or None."""
        return self._freed.get(int(address))
