"""Where the runs of a differential check part, for its first diverging request on
each axis: the children serve again up to that request, with the tensor operations
of that request recorded (``harness.localise``), and the traces are compared.

- address axis: the request after the ones before it, under the never-reuse and
  under the normal allocator;
- state axis: the request after the ones before it, and the request alone in a
  fresh process, both never-reuse.

Each child runs this module as a script: ``python -m harness.pinpoint JOB.json OUT.json``.
For ``--call`` pipelines only (a ``--model`` one is served by a generator loop the
recorder is not wired into).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

from harness import localise
from repro import never_reuse
from repro.stream import serve_call

NOT_REPRODUCED = ("the traced re-runs did not diverge at any request (the allocator placed the tensors "
                  "elsewhere this time): no place named")


def _trace(fn, prompt, seed):
    value, trace = localise.record(fn, prompt, seed)
    return value, trace.to_json()


def child(job: dict) -> dict:
    """Serve ``job["requests"]``, tracing the positions ``job["traced"]``: position -> trace, and
    every request's outputs."""
    torch.set_num_threads(1)
    result = serve_call(job, job["requests"], tracer=_trace, traced=set(job["traced"]))
    return {"traces": {str(k): json.dumps(v) for k, v in result["traces"].items()},
            "outputs": [r["outputs"] for r in result["requests"]]}


def localise_findings(job: dict, requests: list, first: dict, env_of, timeout: float, progress=print) -> list[dict]:
    """``first``: axis -> position of its first diverging request. Runs the traced children
    (``env_of(allocator)`` gives each one's environment); returns one finding per axis."""
    address, state = first.get("address"), first.get("state")
    runs = {}  # name -> (allocator, requests, traced positions)
    upto = max(p for p in (address, state) if p is not None)
    # On the address axis every request is traced in both runs (the recorder allocates too, so
    # where the allocator puts things changes): the place is named at the first request where
    # the traced runs differ again.
    traced = set(range(len(requests))) if address is not None else set()
    upto = len(requests) - 1 if address is not None else upto
    runs["never_reuse"] = ("never_reuse", requests[:upto + 1], sorted(traced | ({state} - {None})))
    if address is not None:
        runs["normal"] = ("normal", requests, sorted(traced))
    if state is not None:
        runs["alone"] = ("never_reuse", [requests[state]], [0])
    started = time.perf_counter()
    traces = {}
    with tempfile.TemporaryDirectory(prefix="pinpoint-") as tmp:
        procs = {}
        try:
            for name, (allocator, served, traced) in runs.items():
                path = Path(tmp) / f"{name}.json"
                path.write_text(json.dumps({**job, "requests": served, "traced": traced,
                                           "never_reuse": allocator == "never_reuse"}))
                procs[name] = subprocess.Popen([sys.executable, "-m", "harness.pinpoint", str(path),
                                                str(Path(tmp) / f"{name}.out.pt")], env=env_of(allocator),
                                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            for name, proc in procs.items():
                _, err = proc.communicate(timeout=max(1.0, timeout - (time.perf_counter() - started)))
                if proc.returncode != 0:
                    lines = [line for line in err.splitlines() if line.strip()]
                    return [{"axis": "localisation", "place": f"the traced {name} run failed: "
                                                              f"{lines[-1] if lines else proc.returncode}"}]
                traces[name] = torch.load(Path(tmp) / f"{name}.out.pt", weights_only=True)
                progress(f"  traced {name:11} done in {time.perf_counter() - started:.1f}s")
        except subprocess.TimeoutExpired:
            return [{"axis": "localisation", "place": f"the traced runs did not finish in {timeout:.0f}s"}]
        finally:
            for proc in procs.values():
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
    findings = []
    if address is not None:
        again = next((i for i, (a, b) in enumerate(zip(traces["never_reuse"]["outputs"], traces["normal"]["outputs"]))
                      if a.keys() != b.keys() or not all(torch.equal(a[k], b[k]) for k in a)), None)
        if again is None:
            where = f"seed {requests[address][0]} request {requests[address][1]}"
            findings.append({"axis": "address-dependent", "request": where, "place": f"{where}: {NOT_REPRODUCED}",
                             "divergence": None})
        else:
            findings.append(_finding("address-dependent", requests[again], traces["never_reuse"]["traces"][str(again)],
                                     traces["normal"]["traces"][str(again)]))
    if state is not None:
        findings.append(_finding("carries state", requests[state], traces["alone"]["traces"]["0"],
                                 traces["never_reuse"]["traces"][str(state)]))
    return findings


def _finding(axis: str, request: list, reference: dict, suspect: dict) -> dict:
    d = localise.first_divergence(localise.Trace.from_json(json.loads(reference)),
                                  localise.Trace.from_json(json.loads(suspect)))
    where = f"seed {request[0]} request {request[1]}"
    if d is None:
        return {"axis": axis, "request": where, "place": f"{where}: {NOT_REPRODUCED}", "divergence": None}
    return {"axis": axis, "request": where, "place": d.format(), "divergence": d.to_json()}


def main(argv) -> int:
    job_path, out_path = argv
    job = json.loads(Path(job_path).read_text())
    if job.get("never_reuse") and not never_reuse.is_active():
        print("the never-reuse allocator did not load in the traced child", file=sys.stderr)
        return 2
    torch.save(child(job), out_path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
