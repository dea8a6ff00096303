"""Where the runs of a differential check part, for its first diverging request on
each axis: the children serve again up to that request, with the tensor operations
of that request recorded (``harness.differential.localise``), and the traces are compared.

- address axis: the request after the ones before it, under the never-reuse and
  under the normal allocator;
- state axis: first, which state the earlier requests left that the request met, where it
  was left and where it was read (``harness.differential.carried``), in the process that
  serves the request alone; where that names none, the request after the ones before it,
  and the request alone in a fresh process, both never-reuse, traced.

Each traced run is :func:`main` as a job of one of the check's warm processes (``repro.warm``):
``main([JOB.json, OUT.pt])``.
For ``--call`` pipelines only (a ``--model`` one is served by a generator loop the
recorder is not wired into).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import torch

from harness.differential import localise
from repro import never_reuse, warm
from repro.stream import serve_call

CARRIED = "the search for the state that carried"
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


def localise_findings(job: dict, requests: list, first: dict, processes: dict, folder: Path, timeout: float,
                      progress=print) -> list[dict]:
    """``first``: axis -> position of its first diverging request. Runs the traced jobs in
    ``processes`` (warm processes, ``repro.warm``, by run: ``never_reuse``, ``normal``,
    ``alone``), writing into ``folder``; returns one finding per axis. On the state axis the search
    for the state that carried runs first; the traced runs only where it named none."""
    address, state = first.get("address"), first.get("state")
    started, traces, carried = time.perf_counter(), {}, None
    runs = {}  # name -> (requests, traced positions)
    if address is not None:
        # Every request is traced in both runs (the recorder allocates too, so where the allocator
        # puts things changes): the place is named at the first request where the traced runs differ again.
        runs = {"never_reuse": (requests, list(range(len(requests)))), "normal": (requests, list(range(len(requests))))}
    carried_out = folder / "carried-out.json"
    if state is not None:
        carried_job = folder / "carried.json"
        carried_job.write_text(json.dumps({**job, "requests": requests[:state + 1], "timeout": timeout}))
        processes["alone"].submit(CARRIED, "harness.differential.carried:main", [carried_job, carried_out])
    try:
        _serve_traced(runs, job, processes, folder, timeout, traces, started, progress, also=("alone",) * (
            state is not None))
        if state is not None:
            carried = json.loads(carried_out.read_text())
            if not carried.get("named"):  # where the runs part is what is left to say
                more = {"alone": ([requests[state]], [0])}
                if address is None:
                    more["never_reuse"] = (requests[:state + 1], [state])
                _serve_traced(more, job, processes, folder, timeout, traces, started, progress)
    except warm.JobFailed as exc:
        return [{"axis": "localisation", "place": str(exc)}]
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
        where = f"seed {requests[state][0]} request {requests[state][1]}"
        finding = {"axis": "carries state", "request": where, "place": where, "divergence": None}
        if "alone" in traces:
            finding = _finding("carries state", requests[state], traces["alone"]["traces"]["0"],
                               traces["never_reuse"]["traces"][str(state)])
        findings.append(with_carried(finding, carried))
    return findings


def _serve_traced(runs: dict, job: dict, processes: dict, folder: Path, timeout: float, traces: dict,
                  started: float, progress, also: tuple = ()) -> None:
    """Serve ``runs`` (name -> (requests, traced positions)) traced, as jobs of ``processes``, into
    ``traces``; wait for them and for the jobs already sent to the processes named in ``also``."""
    names = {}  # job label -> run
    for name, (served, traced) in runs.items():
        path = folder / f"traced-{name}.json"
        path.write_text(json.dumps({**job, "requests": served, "traced": traced, "never_reuse": name != "normal"}))
        names[f"the traced {name} run"] = name
        processes[name].submit(f"the traced {name} run", "harness.differential.pinpoint:main",
                               [path, folder / f"traced-{name}.pt"])

    def collect(process, label):
        if label in names:
            traces[names[label]] = torch.load(folder / f"traced-{names[label]}.pt", weights_only=True)
        progress(f"  {label} done in {time.perf_counter() - started:.1f}s")
    warm.wait_for({processes[name] for name in (*runs, *also)}, timeout, collect)


def with_carried(finding: dict, carried: dict) -> dict:
    """The state-axis ``finding`` with what :mod:`harness.differential.carried` found: where the
    state was left and read are the finding's place, with where the traced runs part where they
    were traced (the search named none)."""
    from harness.sanitize.report import shown_path

    finding = {**finding, "carried": carried}
    if not carried.get("named"):
        finding["place"] += f" (the state that carried not named: {carried['why']})"
        return finding
    lines = []
    for s in carried["state"]:
        read, left = s["read"], s["left"]
        at = f"{shown_path(read['path'])}:{read['line']}" if read else "(no line names it)"
        through = f" (through {_shown_site(read['through'])})" if read and read.get("through") else ""
        written = f"{shown_path(left['path'])}:{left['line']} ({left['request']})" if left else "(no line seen)"
        lines.append(f"{at}: state an earlier request left, {s['state']} ({s['after'][:80]}; a fresh process has "
                     f"{s['alone'] or 'none'}), is read here{through}; it was left at {written}")
        if read and left:
            finding.setdefault("read", at)
            finding.setdefault("left", f"{shown_path(left['path'])}:{left['line']}")
    traced = f" The traced runs part at {finding['place']}" if finding.get("divergence") else ""
    finding["place"] = "; ".join(lines) + (f"; set back to what a fresh process has, the request gives its result "
                                           f"served alone ({carried['trials']} runs"
                                           + ("" if carried.get("complete", True) else
                                              "; the search stopped there: what is named may hold more than it "
                                              "needs") + ")." + traced)
    return finding


def _shown_site(site: str) -> str:
    """``path:line`` with the path as a reader finds it (``harness.sanitize.report.shown_path``)."""
    from harness.sanitize.report import shown_path
    path, line = site.rsplit(":", 1)
    return f"{shown_path(path)}:{line}"


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


