"""Attach a cache design to a model's cross-attention, without editing the model.

Two stages, as in Helios' own cache:

    prompt embeddings --text projection--> projected states      [text stage, keyed by the embeddings]
    projected states  --to_k / to_v (or to_kv)--> K, V per block  [kv stage, keyed by the projected states]

It works on any ``torch.nn.Module`` laid out like a diffusers transformer with
cross-attention, and finds both stages itself (:func:`find_text_projection`,
:func:`cross_attention_modules`): the text projection modules (``caption_projection``,
``condition_embedder.text_embedder``, a ``caption_norm`` after it, ...) and the
cross-attention modules that project ``encoder_hidden_states`` through ``to_k``
and ``to_v`` (or a fused ``to_kv``). It only wraps those modules' ``forward`` with
instance attributes; ``detach()`` deletes them again, so the model is exactly
what it was (same parameters, same ``state_dict``, same classes).

Each text module has a cache of its own, keyed by its input: a hit returns the
cached output *object*, so the next stage finds the same tensor (or a new view of
it, as ``x.view(...)`` between two modules makes) and hits too, as in the real
model. Caching is on only without grad.
"""

from __future__ import annotations

import re
from typing import Callable, Sequence

import torch

AUTO = "auto"
# The last part of a text projection module's name in diffusers transformers:
# caption_projection (LTX-Video, Allegro, PixArt, Sana), caption_norm (Sana, after
# the projection), text_embedder (Wan, Helios: condition_embedder.text_embedder).
TEXT_NAME = re.compile(r"(caption|text|context|txt)_?(projection|proj|embedder|embedding|norm)")
MAX_NAMED = 6  # candidates an error message names


def cross_attention_modules(model: torch.nn.Module) -> list[torch.nn.Module]:
    """The cross-attention modules of a diffusers transformer, in block order:
    those flagged ``is_cross_attention``, else those named ``attn2``."""
    return [m for _, m in _cross_attention(model)]


def _cross_attention(model: torch.nn.Module) -> list[tuple[str, torch.nn.Module]]:
    named = list(model.named_modules())
    flagged = [(n, m) for n, m in named if getattr(m, "is_cross_attention", False)]
    found = flagged or [(n, m) for n, m in named if n.split(".")[-1] == "attn2"]
    return [(n, m) for n, m in found if hasattr(m, "to_kv") or (hasattr(m, "to_k") and hasattr(m, "to_v"))]


def find_text_projection(model: torch.nn.Module) -> list[str]:
    """The dotted names of the modules that turn the prompt embeddings into what
    the cross-attention sees, in the order the model registers them (the order it
    applies them in every listed architecture): modules named like a text
    projection (see ``TEXT_NAME``), outside the cross-attention and transformer
    blocks, none inside another. Empty when there is none: the blocks then see
    the embeddings themselves (Cosmos)."""
    attention = [n for n, _ in _cross_attention(model)]
    blocks = {n.rsplit(".", 1)[0] for n in attention if "." in n}  # a block holds its cross-attention
    found: list[str] = []
    for name, module in model.named_modules():
        if not name or not TEXT_NAME.fullmatch(name.split(".")[-1]) or not _parameterised(module):
            continue
        if any(name == b or name.startswith(b + ".") for b in blocks):
            continue
        if any(name.startswith(f + ".") for f in found):
            continue  # a part of a projection already found
        found.append(name)
    return found


def _parameterised(module: torch.nn.Module) -> bool:
    return any(True for _ in module.parameters()) or bool(list(module.children()))


def _attention_like(model: torch.nn.Module) -> list[str]:
    """Names of modules that look like attention, for an error message."""
    return [n for n, m in model.named_modules()
            if n and (hasattr(m, "to_k") or hasattr(m, "to_kv") or "attn" in n.split(".")[-1])]


def _resolve_text(model: torch.nn.Module, text_projection) -> list[str]:
    if text_projection is None:
        return []
    if text_projection == AUTO:
        return find_text_projection(model)
    names = [text_projection] if isinstance(text_projection, str) else list(text_projection)
    for name in names:
        try:
            model.get_submodule(name)
        except AttributeError:
            seen = find_text_projection(model)
            raise ValueError(f"{type(model).__name__} has no module {name!r} (text projection candidates: "
                             f"{', '.join(seen[:MAX_NAMED]) or 'none'})") from None
    return names


def _resolve_attention(model: torch.nn.Module, cross_attention) -> list[torch.nn.Module]:
    attention = cross_attention if cross_attention is not None else cross_attention_modules(model)
    if not attention:
        seen = _attention_like(model)
        listed = ", ".join(seen[:MAX_NAMED]) + (f" (+{len(seen) - MAX_NAMED} more)" if len(seen) > MAX_NAMED else "")
        raise ValueError(f"{type(model).__name__}: no cross-attention module with to_k/to_v or to_kv "
                         f"(flagged is_cross_attention or named attn2); attention modules seen: {listed or 'none'}")
    return attention


class CrossAttentionCache:
    """The handle :func:`attach_cross_attention_cache` returns.

    ``stats``: ``text_hits``, ``text_misses``, ``kv_hits``, ``kv_misses``.
    ``observe``: ``None`` or a call ``observe(block, k, v)`` made with the K/V each
    cross-attention really uses (cached or computed), so a caller can check them.
    ``enabled``: ``False`` runs the model cache-free while attached.
    """

    def __init__(self, model, factory: Callable, max_size: int, text_projection, cross_attention: list | None):
        self.model = model
        self.attention = _resolve_attention(model, cross_attention)
        self.text_names = _resolve_text(model, text_projection)
        self.text_modules = [model.get_submodule(name) for name in self.text_names]
        self.text_caches = [factory(max_size=max_size) for _ in self.text_modules]
        self.kv_caches = [factory(max_size=max_size) for _ in self.attention]
        self.stats = {"text_hits": 0, "text_misses": 0, "kv_hits": 0, "kv_misses": 0}
        self.observe: Callable | None = None
        self.enabled = True
        self._wrapped: list[torch.nn.Module] = []
        # The K/V of a cross-attention call, found when one projection runs and
        # handed to the other (to_k and to_v are two calls on one source).
        self._pending: dict[int, tuple] = {}
        try:
            for module, cache in zip(self.text_modules, self.text_caches):
                self._wrap(module, self._text_forward(module.forward, cache))
            for block, attn in enumerate(self.attention):
                if getattr(attn, "fused_projections", False) and hasattr(attn, "to_kv"):
                    self._wrap(attn.to_kv, self._fused_forward(block))
                else:
                    self._wrap(attn.to_k, self._split_forward(block, 0))
                    self._wrap(attn.to_v, self._split_forward(block, 1))
        except ValueError:
            self.detach()  # all or nothing: no half-attached model
            raise

    # -- public ------------------------------------------------------------------

    def caches(self) -> list:
        return [*self.text_caches, *self.kv_caches]

    def clear(self) -> None:
        for cache in self.caches():
            cache.clear()
        self._pending.clear()

    def detach(self) -> None:
        """Restore the model exactly: remove every wrapper, drop the caches."""
        for module in self._wrapped:
            del module.forward  # the instance attribute; the class's forward shows again
        self._wrapped.clear()
        self.clear()

    def compute_kv(self, embeddings: torch.Tensor) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """The K/V per block for these prompt embeddings, cache-free: ground truth."""
        return _own_kv(self.text_modules, self.attention, embeddings)

    # -- wrappers ----------------------------------------------------------------

    def _wrap(self, module: torch.nn.Module, forward: Callable) -> None:
        if "forward" in vars(module):
            raise ValueError(f"{type(module).__name__} already has a forward attribute (a cache attached twice?)")
        module.forward = forward
        self._wrapped.append(module)

    def _caching(self) -> bool:
        return self.enabled and not torch.is_grad_enabled()

    def _text_forward(self, compute: Callable, cache) -> Callable:
        def forward(states, *args, **kwargs):
            if args or kwargs or not self._caching():
                return compute(states, *args, **kwargs)
            value = cache.get(states)
            if value is not None:
                self.stats["text_hits"] += 1
                return value
            self.stats["text_misses"] += 1
            value = compute(states)
            cache.put(states, value)
            return value
        return forward

    def _lookup(self, block: int, projected: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The K/V for one cross-attention call: cached, or computed and cached."""
        if not self._caching():
            kv = _project(self.attention[block], projected)
        else:
            cache = self.kv_caches[block]
            kv = cache.get(projected)
            if kv is not None:
                self.stats["kv_hits"] += 1
            else:
                self.stats["kv_misses"] += 1
                kv = _project(self.attention[block], projected)
                cache.put(projected, kv)
        if self.observe is not None:
            self.observe(block, *kv)
        return kv

    def _split_forward(self, block: int, index: int) -> Callable:
        """to_k (index 0) or to_v (index 1): the first of the pair looks up (K, V);
        the second takes its half, if it comes for the same tensor object."""
        def forward(projected):
            pending = self._pending.pop(block, None)
            if pending is not None and pending[0] is projected and pending[1] == index:
                return pending[2]
            kv = self._lookup(block, projected)
            self._pending[block] = (projected, 1 - index, kv[1 - index])
            return kv[index]
        return forward

    def _fused_forward(self, block: int) -> Callable:
        # The cache holds K and V apart (what the check compares); a fused model gets
        # them joined again, one copy of the prompt's K/V per call.
        def forward(projected):
            return torch.cat(self._lookup(block, projected), dim=-1)
        return forward


def _original(module: torch.nn.Module) -> Callable:
    """The module's own forward, past any wrapper attached to the instance."""
    return type(module).forward.__get__(module)


def _project(attn: torch.nn.Module, projected: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """One cross-attention's K and V of the projected states, as the model computes them."""
    if getattr(attn, "fused_projections", False) and hasattr(attn, "to_kv"):
        return tuple(_original(attn.to_kv)(projected).chunk(2, dim=-1))
    return _original(attn.to_k)(projected), _original(attn.to_v)(projected)


def _own_kv(text_modules: list, attention: list, embeddings: torch.Tensor) -> list[tuple[torch.Tensor, torch.Tensor]]:
    projected = embeddings
    for module in text_modules:  # in the order the model applies them
        projected = _original(module)(projected)
    return [_project(attn, projected) for attn in attention]


def cross_attention_kv(model: torch.nn.Module, embeddings: torch.Tensor,
                       text_projection: str | Sequence[str] | None = AUTO, cross_attention: list | None = None) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """The K/V of every cross-attention for these prompt embeddings, computed
    cache-free whether or not a cache is attached: the ground truth a cached
    model's K/V must equal."""
    text_modules = [model.get_submodule(name) for name in _resolve_text(model, text_projection)]
    return _own_kv(text_modules, _resolve_attention(model, cross_attention), embeddings)


def attach_cross_attention_cache(model: torch.nn.Module, factory: Callable, max_size: int = 2,
                                 text_projection: str | Sequence[str] | None = AUTO,
                                 cross_attention: list | None = None) -> CrossAttentionCache:
    """Put ``factory(max_size=...)`` caches on ``model``'s cross-attention.

    ``factory``: a cache design (``cache_impl.resolve(spec)``).
    ``text_projection``: ``"auto"`` (found by :func:`find_text_projection`), the
    dotted name of the module that projects the prompt embeddings or a list of
    them in the order the model applies them, or ``None`` (the blocks see the
    embeddings themselves).
    ``cross_attention``: the cross-attention modules, in block order (default:
    found by :func:`cross_attention_modules`).

    Raises ValueError, in one line naming the candidates seen, when the model has
    no cross-attention or no module of a given name.

    Returns a :class:`CrossAttentionCache`; ``detach()`` restores the model.
    """
    return CrossAttentionCache(model, factory, max_size, text_projection, cross_attention)
