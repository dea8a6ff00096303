"""Back-to-back requests in this process, recorded for the differential check
(``harness.differential.check``), which runs :func:`main` as a job of a warm process
(``repro.warm``, set up by :func:`prepare`): ``main([JOB.json, OUT.pt])``.

The pipeline is a model (``job["model"]``, served by ``repro.serving`` as a server
serves it: fresh prompt sources, freed at the end of each request, the allocator
decides where the next ones go) or a plain function (``job["call"]``,
``fn(prompt, seed)``). Per request: its outputs, frames when there are images,
and which memory of an earlier request its tensors landed on, by then freed.

A request served alone is a job of its own: a job whose requests are that one.
"""

from __future__ import annotations

import builtins
import hashlib
import io
import json
import sys
from collections import Counter
from pathlib import Path

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from cache_impl import resolve
from repro import never_reuse
from repro.callable import as_outputs, frames_of, resolve_call
from repro.models import import_model, load_model
from repro.serving import STRATEGIES, serve


def digest(tensor: torch.Tensor) -> str:
    """What a source holds, to tell a reuse by other content from one by the same."""
    raw = tensor.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()
    return hashlib.sha256(raw).hexdigest()[:16]


def _request_label(request) -> str:
    seed, index = request[0], request[1]
    return f"seed {seed} request {index}"


def serve_model(job: dict, requests: list) -> dict:
    """Serve ``requests`` (``[seed, index, prompt, request_seed]`` each) through
    ``job["model"]`` with ``job["cache"]`` attached (None: the model as it is)."""
    device = torch.device(job["device"])
    dtype = getattr(torch, job["dtype"]) if job["dtype"] else None
    model = load_model(job["model"], device, steps=job["steps"], dtype=dtype)
    if job["cache"]:  # else the model runs as it is, with whatever caches it has built in
        model.install_caches(resolve(job["cache"]))
    held: dict[int, tuple[str, str]] = {}  # address -> (label of the last source there, its digest)
    contents: dict[str, str] = {}  # role -> digest of the current request's source

    def record_contents(index, sources):
        contents.update({role: digest(src) for role, src in sources.items()})
        return None  # no K/V observer: the check looks at outputs only

    stream = serve(model, STRATEGIES["natural_reuse"](model), [(prompt, rseed) for _, _, prompt, rseed in requests],
                   on_request_start=record_contents)
    served = []
    for request, req in zip(requests, stream):
        seed, index, prompt, rseed = request
        reused = [{"role": role, "previous": held[address][0], "other_content": held[address][1] != contents[role]}
                  for role, address in req.addresses.items() if address in held]
        for role, address in req.addresses.items():
            held[address] = (f"{_request_label(request)} ({role})", contents[role])
        served.append({"seed": seed, "request": index, "request_seed": rseed, "prompt": prompt,
                       "addresses": {role: hex(a) for role, a in req.addresses.items()}, "reused": reused,
                       "sources": len(req.addresses),
                       "outputs": {"latents": req.latents.detach().cpu()}, "frames": req.frames})
    return {"model": model.describe(), "requests": served}


class NewAllocations(TorchDispatchMode):
    """The memory each tensor operation allocates: an output whose storage is none of
    its inputs' (views and in-place results are not new memory). Made by
    :func:`new_allocations`, which picks this class or :class:`NewAllocationsUnderCompile`."""

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        # torch wraps a mode's __torch_dispatch__ so that torch.compile never compiles it;
        # the wrapper imports torch._dynamo at the first operation: 1 s, 3 s under the
        # never-reuse allocator, in every child. Only a pipeline that compiles needs it.
        return False

    def __init__(self):
        super().__init__()
        self.addresses: set[int] = set()
        self.ids: dict[int, None] = {}  # id() of each new tensor object, in the order made

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        tensors = [t for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)]
        inputs = {_storage(t) for t in tensors}
        # torch.tensor() and from_numpy() make their tensor before dispatch: lift_fresh hands it on.
        # Ids and addresses as bare numbers (int): meeting a freed one again is what is counted.
        input_ids = set() if func is torch.ops.aten.lift_fresh.default else {_object_id(t) for t in tensors}
        for t in tree_leaves(out):
            if isinstance(t, torch.Tensor):
                address = _storage(t)
                if address and address not in inputs:
                    self.addresses.add(address)
                key = _object_id(t)
                if key not in input_ids:  # an in-place result is its input, not a new object
                    self.ids[key] = None
        return out


class NewAllocationsUnderCompile(NewAllocations):
    """The same, with torch's wrapper: torch.compile never compiles the recording."""

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        return True

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # defined here, so that torch wraps it
        return super().__torch_dispatch__(func, types, args, kwargs)


def new_allocations() -> NewAllocations:
    """A recorder for the next call of the pipeline: the wrapped one once torch._dynamo
    is loaded (a pipeline that compiles loads it at import, or in its first call, where
    torch.compile may then compile the recording too: it records the same, only slower)."""
    return NewAllocationsUnderCompile() if "torch._dynamo" in sys.modules else NewAllocations()


def _object_id(obj) -> int:
    """The object's id as CPython gives it. Under a sanitizer that wraps ``id()`` (and says so with
    ``__wrapped__``, as functools.wraps does), the recorder's own calls take no keys and draw no
    recycled ids: the pipeline's calls alone do."""
    return getattr(builtins.id, "__wrapped__", builtins.id)(obj)


def _storage(t: torch.Tensor) -> int:
    try:
        storage = t.untyped_storage()
        return int(storage.data_ptr()) if storage.nbytes() else 0
    except (RuntimeError, NotImplementedError):  # no storage (a tensor subclass, meta)
        return 0


def _count_by_label(keys, held: dict) -> list[tuple[str, int]]:
    """(label, how many of ``keys`` ``held`` gives that label), in order of first appearance."""
    return list(Counter(held[key] for key in keys if key in held).items())


def serve_call(job: dict, requests: list, tracer=None, traced=()) -> dict:
    """Serve ``requests`` by calling ``job["call"]`` as ``fn(prompt, request_seed)``, back to back.
    The requests at positions ``traced`` are called as ``tracer(fn, prompt, seed)``, which returns
    (the value, a JSON-able trace): ``result["traces"]`` maps the position to it.

    ``job["id_shift"]`` (default 0) moves which freed object slot each request's tensor objects
    get. CPython hands a new object the slot of its size most recently freed, so whether the next
    request's key tensor object gets the last one's id (and an ``id()``-keyed cache its stale
    entry) depends on how many objects of that size were made and freed in between. Before each
    request, a shift k > 0 makes k small tensors and keeps them to the end (the request's objects
    take slots further down); k < 0 frees -k tensors made before the first request (the request's
    first objects take those, the rest slots further up)."""
    fn = resolve_call(job["call"], job.get("call_kwargs"))
    shift = job.get("id_shift", 0)
    kept = [torch.empty(0) for _ in range(-shift * len(requests))]  # freed -shift before each request
    held: dict[int, str] = {}  # address -> the request whose tensor last held it
    held_ids: dict[int, str] = {}  # id() -> the request whose tensor object last had it
    served, traces = [], {}
    for position, request in enumerate(requests):
        seed, index, prompt, rseed = request
        log = new_allocations()
        if shift > 0:
            kept.extend(torch.empty(0) for _ in range(shift))
        elif shift < 0:
            del kept[shift:]
        if position in traced:  # the recorder alone: its line tracer would name the log's frames
            value, traces[position] = tracer(fn, prompt, rseed)
        else:
            with log:
                value = fn(prompt, rseed)
        outputs = as_outputs(value)
        del value
        label = _request_label(request)
        # Requests differ in prompt or seed, so memory of an earlier one held other content.
        reused = [{"role": f"{n} tensor(s)", "previous": previous, "other_content": True, "count": n}
                  for previous, n in _count_by_label(log.addresses, held)]
        # An id() is never two living objects' at once: one of an earlier request's means that object is gone.
        ids_reused = [{"previous": previous, "count": n} for previous, n in _count_by_label(log.ids, held_ids)]
        held.update(dict.fromkeys(log.addresses, label))
        held_ids.update(dict.fromkeys(log.ids, label))
        served.append({"seed": seed, "request": index, "request_seed": rseed, "prompt": prompt,
                       "addresses": {}, "reused": reused, "sources": len(log.addresses),
                       "ids_reused": ids_reused, "objects": len(log.ids),
                       "outputs": outputs, "frames": frames_of(outputs)})
    return {"model": {"name": job["call"]}, "requests": served, "traces": traces}


def serve_requests(job: dict, requests: list) -> dict:
    torch.set_num_threads(1)  # one thread: the same reductions in the same order in every run
    return (serve_call if job.get("call") else serve_model)(job, requests)


def prepare(job: dict) -> None:
    """Import what serving ``job`` needs, and what torch loads on first use (torch.save; for a
    function, the dispatch mode that records its memory), building and calling nothing of the
    pipeline: what each job of a warm process (``repro.warm``) then starts from."""
    if job.get("call"):
        resolve_call(job["call"], job.get("call_kwargs"))  # imports only: the module's state starts empty
        with new_allocations():
            torch.zeros(2) + 1
    else:
        import_model(job["model"])
    torch.save({"x": torch.zeros(1)}, io.BytesIO())


def main(argv) -> int:
    job_path, out_path = argv
    job = json.loads(Path(job_path).read_text())
    if job["never_reuse"] and not never_reuse.is_active():
        print("the never-reuse allocator did not load in the child process (the loader refused the "
              f"LD_PRELOAD of libasan): {never_reuse.INSTALL_HINT}", file=sys.stderr)
        return 2
    result = serve_requests(job, job["requests"])
    result["never_reuse_active"] = never_reuse.is_active()
    result["probe"] = never_reuse.reuse_probe(torch.device(job["device"]))
    torch.save(result, out_path)
    return 0
