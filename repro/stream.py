"""One stream of back-to-back requests in this process, recorded for the
differential check (``harness.differential``), which runs this module as a script
in fresh child processes: ``python -m repro.stream JOB.json OUT.pt``.

The requests are served as a server serves them (the ``natural_reuse`` source
strategy): fresh prompt sources, freed at the end of each request, the allocator
decides where the next ones go. Per request: latents, frames, where each source
lived, and which earlier source had held that address (by then freed), with or
without the same content.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import torch

from cache_impl import resolve
from repro import never_reuse
from repro.models import load_model
from repro.serving import STRATEGIES, serve


def digest(tensor: torch.Tensor) -> str:
    """What a source holds, to tell a reuse by other content from one by the same."""
    raw = tensor.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()
    return hashlib.sha256(raw).hexdigest()[:16]


def serve_recorded(job: dict) -> dict:
    """Serve ``job["requests"]`` (``[seed, index, prompt, request_seed]`` each) through
    ``job["model"]`` with ``job["cache"]`` attached (None: the model as it is)."""
    torch.set_num_threads(1)  # one thread: the same reductions in the same order in every run
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

    requests = job["requests"]
    stream = serve(model, STRATEGIES["natural_reuse"](model), [(prompt, rseed) for _, _, prompt, rseed in requests],
                   on_request_start=record_contents)
    served = []
    for (seed, index, prompt, rseed), req in zip(requests, stream):
        reused = [{"role": role, "previous": held[address][0], "other_content": held[address][1] != contents[role]}
                  for role, address in req.addresses.items() if address in held]
        for role, address in req.addresses.items():
            held[address] = (f"seed {seed} request {index} ({role})", contents[role])
        served.append({"seed": seed, "request": index, "request_seed": rseed, "prompt": prompt,
                       "addresses": {role: hex(a) for role, a in req.addresses.items()}, "reused": reused,
                       "latents": req.latents.detach().cpu(), "frames": req.frames})
    return {"never_reuse_active": never_reuse.is_active(), "probe": never_reuse.reuse_probe(device),
            "model": model.describe(), "requests": served}


def main(argv) -> int:
    job_path, out_path = argv
    job = json.loads(Path(job_path).read_text())
    if job["never_reuse"] and not never_reuse.is_active():
        print("the never-reuse allocator did not load in the child process (the loader refused the "
              f"LD_PRELOAD of libasan): {never_reuse.INSTALL_HINT}", file=sys.stderr)
        return 2
    torch.save(serve_recorded(job), out_path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
