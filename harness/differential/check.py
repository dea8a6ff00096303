"""``python -m harness differential``: does anything in a pipeline follow an address,
or carry state from one request to the next?

The same back-to-back requests, same seeds, in four runs: two under an allocator
that never hands a freed address back (``repro.never_reuse``), one under the normal
allocator, and one, also never-reuse, that serves each request alone as the first of
a fresh process. The two never-reuse runs must agree bitwise (else the pipeline is
not deterministic and nothing can be concluded). Two axes per request:

- *address-dependent*: the normal run differs from the never-reuse run: some state
  in the pipeline followed where the allocator put a tensor;
- *carries state*: request k served after requests 0..k-1 differs from the same
  request served alone, both never-reuse, so no address can explain it.

No knowledge of the cache is needed. The pipeline is a model (``--model``, served
by ``repro.serving`` as a server serves it, the ``natural_reuse`` strategy) or a
plain function ``fn(prompt, seed)`` (``--call``), whose tensors' memory is tracked
per request to tell whether the allocator reused any, and whose tensor objects' ids are
recorded to tell whether an earlier request's came back. For a function, the normal run is
served again with its freed object slots shifted (``ID_SHIFTS``), so that a cache keyed by
``id()`` is exercised more often than by chance; and, function or model, once more under
``address-reuse sanitize --recycle-ids`` (``RECYCLED``), where a new object gets a dead one's id
and the sanitizer names the stale lookup in the run that shows whether an output changed. The
two never-reuse processes fill new memory with different bytes, so that memory read before it
is written shows as nondeterminism, never as an address dependence.

Three warm processes (``repro.warm``), one per allocator run, import the pipeline once
and run each job (``repro.stream.main``: a stream, or one request alone; the traced
re-runs of ``harness.differential.pinpoint``) in a fresh fork; the jobs write the runs' outputs to
files the parent compares. The second never-reuse process also serves the alone run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import shutil
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

import torch

from cache_impl.registry import exit_call
from harness.cli import prepare_run
from harness.differential import DEFAULT_CALL_TIMEOUT, DEFAULT_REQUESTS, DEFAULT_SEEDS, ID_SHIFTS, MAX_ID_SHIFT
from harness.environment import describe
from harness.report.metrics import frame_ssim
from harness.report.results import decode_clip, encode_clip, point_latest, write_atomic, write_json
from harness.run import case_requests
from repro import never_reuse, warm
from repro.callable import CallSpecError, as_outputs, resolve_call

NORMAL, NEVER_REUSE = "normal", "never_reuse"
# name, allocator
RUNS = (("never_reuse_a", NEVER_REUSE), ("never_reuse_b", NEVER_REUSE), ("normal", NORMAL), ("alone", NEVER_REUSE))
# The alone run (each request alone, a job each) is served by never_reuse_b's warm process:
# one process fewer importing the pipeline, seconds under the never-reuse allocator.
# never_reuse_a has a process of its own, so that the two never-reuse runs, and request 0
# alone and in a stream, still come from two processes (two hash seeds, two RNG states).
ALONE, ALONE_IN = "alone", "never_reuse_b"
# An id()-keyed cache follows the Python object, not its memory: it is hit with a stale entry only
# where the next request's key tensor object gets the id of the last one's, which depends on how
# many objects of its size were made and freed in between. For a function, the normal run is served
# again with its freed object slots shifted by each of these (``repro.stream.serve_call``), as jobs
# of the normal run's process; any of these runs differing from the never-reuse run is a divergence.


def shifted(shift: int) -> str:
    """The name of the normal run served with its freed object slots shifted by ``shift``."""
    return f"{NORMAL}{shift:+d}"


# The normal run once more, under address-reuse sanitize with --recycle-ids, as a job of the normal
# run's process: each new object whose id() is taken gets the id of the last dead object of its type,
# so an id-keyed entry that outlives its object meets a new one in every run, not by chance; and the
# sanitizer names the lookup where it met, in the very run that shows whether an output changed.
RECYCLED = "recycled"
# Where the normal run's output depended on addresses and the run with recycled ids met no stale
# key, the normal run is served again under the sanitizer, at the id shift of each run that
# diverged and then at others, up to this many: each re-run forks from the same warm process,
# and the sanitizer's own allocations move the heap, so the freed block may go to another tensor
# at one shift and not at another.
SANITIZED_TRIES = 3


def runs_of(job: dict) -> tuple:
    """(name, allocator, the warm process that serves it, id shift) of every run of ``job``."""
    base = tuple((name, allocator, ALONE_IN if name == ALONE else name, 0) for name, allocator in RUNS)
    shifts = tuple((shifted(k), NORMAL, NORMAL, k) for k in job.get("id_shifts", ()))
    return base + shifts + (((RECYCLED, NORMAL, NORMAL, 0),) if job.get("recycle_ids") else ())


# Per request, address axis: its output differs from the never-reuse run; or it does
# not, and some of its memory had held other content of an earlier request (clean);
# or no such reuse happened (inconclusive, never a pass). A reuse by the same content
# (the negative prompt again) cannot show a difference, but stale state can.
DIVERGED, CLEAN, INCONCLUSIVE = "diverged", "clean", "inconclusive"
# Per request, state axis: served after the earlier requests vs alone.
CARRIED, INDEPENDENT = "carried", "independent"
# Per run of the check.
ADDRESS_DEPENDENT, NONDETERMINISTIC = "address-dependent", "nondeterministic"
CARRIES_STATE, BOTH = "carries state", "address-dependent, carries state"
EXIT_CODES = {CLEAN: 0, ADDRESS_DEPENDENT: 1, INCONCLUSIVE: 3, NONDETERMINISTIC: 4, CARRIES_STATE: 5, BOTH: 6}
EXIT_USAGE = 2

# The normal run's glibc malloc gives memory freed at the top of its heap back at
# once, so the next allocation there gets the same address: freed addresses come back
# sooner, which is what the check needs to see. Set in the environment to override.
REUSE_PRONE_MALLOC = {"MALLOC_TRIM_THRESHOLD_": "0"}

BUILT_IN = "built-in"  # the cache column when nothing is attached: the model's own state
TITLE = "Differential check: normal vs never-reuse allocator, back to back vs alone"


class ChildFailed(RuntimeError):
    """A child process could not serve the requests (the message is one line)."""


# --- the parent: three warm processes, then compare -----------------------------------

# The two never-reuse processes fill new memory with different bytes: a pipeline that reads memory
# it never wrote differs between them (nondeterministic, nothing concluded), rather than from the
# normal run alone, which would blame an address for it.
FILL_BYTES = {"never_reuse_a": 0xBE, "never_reuse_b": 0x5A}


def child_environment(allocator: str, device: torch.device, run: str | None = None) -> dict:
    env = dict(os.environ)
    # The children import what this process imports (the project, a model's package).
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(p or os.getcwd() for p in sys.path))
    env["OMP_NUM_THREADS"] = "1"
    if allocator == NEVER_REUSE:
        env.update(never_reuse.environment(device, FILL_BYTES.get(run)))
    else:
        for key, value in REUSE_PRONE_MALLOC.items():
            env.setdefault(key, value)
    return env


def allocator_label(allocator: str, device: torch.device, run: str | None = None) -> str:
    env = child_environment(allocator, device)
    if allocator == NEVER_REUSE:
        fill = FILL_BYTES.get(ALONE_IN if run == ALONE else run)
        return "AddressSanitizer quarantine (LD_PRELOAD), PYTHONMALLOC=malloc" + (
            f", new memory filled with {fill:#x}" if fill is not None else "") + (
            ", PYTORCH_NO_CUDA_MEMORY_CACHING=1" if device.type == "cuda" else "")
    return " ".join(["glibc malloc", *(f"{k}={v}" for k, v in env.items() if k.startswith("MALLOC_"))])


# Checks inside shared_processes() keep their warm processes for the next check (the hunt's
# two checks of a cell, a minute of imports under the never-reuse allocator): the block's
# folder, and the processes and their device once started; None outside such a block.
_shared: dict | None = None


@contextlib.contextmanager
def shared_processes():
    """Checks in this block share their three warm processes: the first starts them, the
    rest reuse them, the block's end stops them. Every job still starts as a fresh process
    would (``repro.warm``), so each check concludes what it would alone; two checks'
    never-reuse runs share a hash seed, which no comparison across checks relies on."""
    global _shared
    outer, _shared = _shared, {"folder": Path(tempfile.mkdtemp(prefix="differential-warm-")), "processes": None}
    try:
        yield
    finally:
        for process in (_shared["processes"] or {}).values():
            process.stop()
        shutil.rmtree(_shared["folder"], ignore_errors=True)
        _shared = outer


def _start_processes(job: dict, device: torch.device, folder: Path) -> dict:
    """Three warm processes (``repro.warm``), each named after the run it serves and with
    that run's allocator (never_reuse_b also serves the alone run)."""
    (folder / "pipeline.json").write_text(json.dumps(job))
    processes = {}
    try:
        for name, allocator in RUNS:
            if name != ALONE:
                processes[name] = warm.WarmProcess(name, folder / "pipeline.json",
                                                   child_environment(allocator, device, name),
                                                   folder / f"{name}.log")
    except BaseException:
        for process in processes.values():
            process.stop()
        raise
    return processes


@contextlib.contextmanager
def warm_processes(job: dict, device: torch.device, folder: Path):
    """The check's warm processes: its own, stopped when the block ends, or inside
    :func:`shared_processes` the block's, kept while every job they were sent has ended."""
    shared = _shared
    if shared is not None and shared["processes"] is not None and shared["device"] == device:
        processes = shared["processes"]
    else:
        if shared is not None and shared["processes"] is not None:  # started for another device
            for process in shared["processes"].values():
                process.stop()
            shared["processes"] = None
        processes = _start_processes(job, device, shared["folder"] if shared is not None else folder)
    try:
        yield processes
    finally:
        idle = all(not p.pending and p.proc.poll() is None for p in processes.values())
        if shared is not None and idle:
            shared["processes"], shared["device"] = processes, device
        else:  # a job still running (a failure or a timeout stopped the check) is stopped with them
            if shared is not None:
                shared["processes"] = None
            for process in processes.values():
                process.stop()


def serve_runs(processes: dict, job: dict, folder: Path, timeout: float, progress=print) -> dict:
    """The four runs in the three processes; run name -> its outputs. A line as each run
    ends; :class:`ChildFailed` when one fails or is still going after ``timeout`` seconds."""
    started, jobs, names = time.perf_counter(), {}, {}  # run -> the files its jobs write; job label -> run
    shifts = {name: shift for name, _, _, shift in runs_of(job)}
    for name, allocator, process, shift in runs_of(job):
        # Each request alone is a job of its own; every other run is one job, its stream.
        parts = [[r] for r in job["requests"]] if name == ALONE else [job["requests"]]
        jobs[name] = []
        for i, requests in enumerate(parts):
            path = folder / f"{name}-{i}.json"
            path.write_text(json.dumps({**job, "requests": requests, "never_reuse": allocator == NEVER_REUSE,
                                        "id_shift": shift}))
            jobs[name].append(folder / f"{name}-{i}.pt")
            names[f"{name} run"] = name
            if name == RECYCLED:
                _submit_sanitized(processes[process], f"{name} run", "recycling_job", folder / "recycled-data",
                                  path, jobs[name][-1])
            else:
                processes[process].submit(f"{name} run", "repro.stream:main", [path, jobs[name][-1]])
    outputs = {}

    def collect(process, label):
        name = names[label]
        if name == ALONE and label in process.pending:
            return  # more requests alone to come
        parts = [torch.load(path, weights_only=True) for path in jobs[name]]
        outputs[name] = {**parts[0], "requests": [r for part in parts for r in part["requests"]],
                         "id_shift": shifts[name],
                         "never_reuse_active": all(part["never_reuse_active"] for part in parts),
                         "probe": {k: sum(part["probe"][k] for part in parts) for k in parts[0]["probe"]}}
        if name == RECYCLED:
            outputs[name]["sanitized"] = _sanitizer_saw(folder / "recycled-data")
        progress(f"  {name:22} done in {time.perf_counter() - started:.1f}s")

    try:
        warm.wait_for(processes.values(), timeout, collect)
    except warm.JobFailed as exc:
        raise ChildFailed(str(exc)) from None
    for name, allocator in RUNS:
        if allocator == NEVER_REUSE and not outputs[name]["never_reuse_active"]:
            raise ChildFailed(f"{name}: the never-reuse allocator was not active in the child process")
    return outputs


def _bytes(t: torch.Tensor) -> torch.Tensor:
    return t.contiguous().reshape(-1).view(torch.uint8)  # bitwise: NaN equals the same NaN


def compare_requests(reference: dict, other: dict) -> dict:
    """Outputs bitwise (and the largest difference), frames by SSIM when there are any."""
    a, b = reference["outputs"], other["outputs"]
    same_layout = a.keys() == b.keys() and all(a[k].shape == b[k].shape and a[k].dtype == b[k].dtype for k in a)
    equal = same_layout and all(torch.equal(_bytes(a[k]), _bytes(b[k])) for k in a)
    if equal:
        max_abs = 0.0
    elif same_layout:
        max_abs = max(((a[k].double() - b[k].double()).abs().max().item() for k in a if a[k].numel()), default=0.0)
    else:
        max_abs = math.inf
    fa, fb = reference["frames"], other["frames"]
    ssim = None
    if fa is not None and fb is not None and fa.shape == fb.shape:
        ssim = round(min(frame_ssim(fa.numpy(), fb.numpy())), 6)
    return {"outputs_equal": equal, "max_abs_err": max_abs if math.isfinite(max_abs) else None, "ssim_min": ssim}


def _ids_reused(request: dict) -> int:
    return sum(u["count"] for u in request.get("ids_reused", ()))


def request_record(reference: dict, normal: dict, alone: dict, shifted_runs: dict | None = None) -> dict:
    """One request: the normal run, and the same run at each id shift (``shifted_runs``: run
    name -> its request), against the never-reuse run (address axis); the never-reuse run
    against the same request served alone (state axis). The difference and the memory reuse
    shown are the first diverging run's (else the normal run's); ``diverged_in`` names every run
    that differs. Memory or an object id of an earlier request, in any of the runs, makes it conclusive."""
    normals = {NORMAL: normal, **(shifted_runs or {})}
    compared = {name: compare_requests(reference, r) for name, r in normals.items()}
    diverged_in = [name for name, c in compared.items() if not c["outputs_equal"]]
    shown = diverged_in[0] if diverged_in else NORMAL
    address, shown_reused = compared[shown], normals[shown]["reused"]
    by_memory = any(u["other_content"] for r in normals.values() for u in r["reused"])
    # An object id of an earlier request handed out again exercises what is keyed by id(), as memory
    # freed by other content exercises what is keyed by address.
    by_id = {name: _ids_reused(r) for name, r in normals.items()}
    conclusive = by_memory or any(by_id.values())
    verdict = DIVERGED if diverged_in else (CLEAN if conclusive else INCONCLUSIVE)
    state = compare_requests(alone, reference)
    state["verdict"] = INDEPENDENT if state["outputs_equal"] else CARRIED
    return {"seed": normal["seed"], "request": normal["request"], "request_seed": normal["request_seed"],
            "prompt": normal["prompt"], "address_reused": bool(shown_reused),
            "reused_by_other_content": by_memory, "addresses": normal["addresses"],
            "reused": shown_reused, "ids_reused": normal.get("ids_reused", []), "objects": normal.get("objects"),
            "ids_reused_by_run": by_id, "diverged_in": diverged_in,
            "never_reuse_addresses": reference["addresses"], "never_reuse_reused": reference["reused"],
            "never_reuse_ids_reused": reference.get("ids_reused", []),
            **address, "verdict": verdict, "state": state}


def _on_freed(request: dict) -> int:
    return sum(u.get("count", 1) for u in request["reused"])


def allocator_summary(outputs: dict, device: torch.device) -> dict:
    """Per run: the allocator, how many tracked tensors landed on a freed address, how many
    tensor objects got the id of an earlier request's, the probe."""
    summary, allocators = {}, dict(RUNS)
    for name in [n for n, _ in RUNS] + [n for n in outputs if n not in allocators]:
        requests, shift = outputs[name]["requests"], outputs[name].get("id_shift", 0)
        summary[name] = {
            "allocator": allocator_label(allocators.get(name, NORMAL), device, name) + (
                f"; freed object slots shifted by {shift:+d} before each request" if shift else "") + (
                "; under address-reuse sanitize --recycle-ids (a new object gets the id of the last dead one "
                "of its type)" if name == RECYCLED else ""),
            "sources": sum(r["sources"] for r in requests),
            "sources_on_freed_address": sum(_on_freed(r) for r in requests),
            "objects": sum(r.get("objects") or 0 for r in requests),
            "objects_with_earlier_id": sum(_ids_reused(r) for r in requests),
            "probe": outputs[name]["probe"],
        }
    return summary


def reference_unproven(summary: dict, device: torch.device) -> str | None:
    """Why the never-reuse runs cannot serve as the reference for a clean verdict, if so."""
    for name, allocator in RUNS:
        if allocator != NEVER_REUSE:
            continue
        s = summary[name]
        if s["sources_on_freed_address"]:
            return f"{name}: {s['sources_on_freed_address']} tensor(s) landed on a freed address"
        if s["objects_with_earlier_id"]:
            return f"{name}: {s['objects_with_earlier_id']} tensor object(s) got the id of an earlier request's"
        probe = s["probe"]
        reused = {k: probe[k] for k in ("object_ids", "host_addresses", "device_addresses") if probe.get(k)}
        if reused:
            note = f" ({never_reuse.CUDA_UNMEASURED})" if device.type == "cuda" else ""
            return f"{name}: the probe saw freed addresses handed back ({reused} of {probe['trials']}){note}"
    return None


def _where(r: dict) -> str:
    return f"seed {r['seed']} request {r['request']} ({r['prompt']!r})"


def _difference(d: dict) -> str:
    parts = [f"max abs diff {d['max_abs_err']:.3g}" if d["max_abs_err"] is not None else "outputs differ in shape"]
    if d["ssim_min"] is not None:
        parts.append(f"min SSIM {d['ssim_min']:.2f}")
    return ", ".join(parts)


def overall_verdict(records: list[dict], unproven: str | None) -> tuple[str, str]:
    """(verdict, one line saying why)."""
    diverged = [r for r in records if r["verdict"] == DIVERGED]
    carried = [r for r in records if r["state"]["verdict"] == CARRIED]
    clean = [r for r in records if r["verdict"] == CLEAN]
    reasons = []
    if diverged:
        first = diverged[0]
        runs = first.get("diverged_in") or [NORMAL]
        # The one run named first is the one whose difference is shown, so a rerun can start there.
        runs = f" in {runs[0]}" + (f" (and {', '.join(runs[1:])})" if runs[1:] else "") if runs != [NORMAL] else ""
        reused = "" if first["address_reused"] or any(first.get("ids_reused_by_run", {}).values()) else \
            " (none of its tracked memory landed on a freed address, no tensor object got an earlier id: other " \
            "state followed one)"
        reasons.append(f"{len(diverged)}/{len(records)} requests differ from the never-reuse run; first: "
                       f"{_where(first)}{runs}, {_difference(first)}{reused}")
    if carried:
        first = carried[0]
        reasons.append(f"{len(carried)}/{len(records)} requests served after the others differ from the same "
                       f"request served alone (never-reuse both); first: {_where(first)}, "
                       f"{_difference(first['state'])}")
    if diverged or carried:
        verdict = BOTH if diverged and carried else (ADDRESS_DEPENDENT if diverged else CARRIES_STATE)
        return verdict, "; ".join(reasons)
    if unproven:
        return INCONCLUSIVE, f"no request diverged, but the reference is not proven never-reuse: {unproven}"
    if clean:
        return CLEAN, (f"{len(clean)} conclusive request(s) (memory freed by other content reused, or a tensor "
                       f"object given an earlier request's id), none differ on either axis; "
                       f"{len(records) - len(clean)} inconclusive")
    return INCONCLUSIVE, (f"no tracked tensor landed on memory freed by other content, and no tensor object got an "
                          f"earlier request's id, in {len(records)} requests")


def first_positions(records: list[dict]) -> dict:
    """axis -> position of its first diverging request, for the axes that diverged."""
    first = {}
    for i, r in enumerate(records):
        if r["verdict"] == DIVERGED:
            first.setdefault("address", i)
        if r["state"]["verdict"] == CARRIED:
            first.setdefault("state", i)
    return first


# --- results and report -----------------------------------------------------------

UNSET_HINT = (f" (the two processes fill new memory with different bytes, {', '.join(f'{b:#x}' for b in FILL_BYTES.values())}:"
              " reading memory that was never written, torch.empty's, differs there too)")


def nondeterminism(outputs: dict) -> str | None:
    """Why the never-reuse runs cannot be compared with anything, if so."""
    a, b = outputs["never_reuse_a"]["requests"], outputs["never_reuse_b"]["requests"]
    for x, y in zip(a, b):
        if not compare_requests(x, y)["outputs_equal"]:
            return (f"the two never-reuse runs differ at {_where(x)}: the pipeline is not deterministic, "
                    f"nothing can be concluded{UNSET_HINT}")
    first, alone = a[0], outputs["alone"]["requests"][0]
    if not compare_requests(first, alone)["outputs_equal"]:
        return (f"the first request differs between two fresh never-reuse processes ({_where(first)}): the "
                f"pipeline is not deterministic, nothing can be concluded{UNSET_HINT}")
    return None


def build_results(plan, label: str, cache: str | None, outputs: dict, seconds: float) -> dict:
    device = plan.device
    summary = allocator_summary(outputs, device)
    results = {"title": TITLE, "kind": "differential", "environment": describe(device),
               "plan": {"model": label, "cache": cache or BUILT_IN, "seeds": plan.seeds, "requests": plan.requests,
                        "steps": plan.steps, "prompts": list(plan.prompts), "source_strategy": "natural_reuse"},
               "model": outputs["normal"]["model"], "allocators": summary, "records": [], "clips": {}}
    results["environment"]["seconds"] = round(seconds, 2)
    why = nondeterminism(outputs)
    if why is not None:
        results["verdict"], results["reason"] = NONDETERMINISTIC, why
        return results
    a, normal, alone = (outputs[n]["requests"] for n in ("never_reuse_a", "normal", "alone"))
    others = [n for n in summary if n not in dict(RUNS)]  # the normal run at each id shift
    records = [request_record(x, y, z, {n: outputs[n]["requests"][i] for n in others})
               for i, (x, y, z) in enumerate(zip(a, normal, alone))]
    results["records"] = records
    results["verdict"], results["reason"] = overall_verdict(records, reference_unproven(summary, device))
    first = next((i for i, r in enumerate(records) if r["verdict"] == DIVERGED), None)
    if first is not None:
        run = records[first]["diverged_in"][0]
        results["first_diverged"] = {**{k: records[first][k] for k in ("seed", "request", "prompt")}, "run": run,
                                     "id_shift": outputs[run].get("id_shift", 0),
                                     "id_shifts": list(dict.fromkeys(outputs[name].get("id_shift", 0)
                                                                     for name in records[first]["diverged_in"]))}
        suspect = outputs[run]["requests"][first]
        if a[first]["frames"] is not None and suspect["frames"] is not None:
            results["clips"]["first_diverged"] = {"never_reuse": encode_clip(a[first]["frames"]),
                                                  "normal": encode_clip(suspect["frames"])}
    carried = next((i for i, r in enumerate(records) if r["state"]["verdict"] == CARRIED), None)
    if carried is not None:
        results["first_carried"] = {k: records[carried][k] for k in ("seed", "request", "prompt")}
    return results


def describe_reuse(reused: list[dict]) -> str:
    """'positive at seed 0 request 1 (negative); ...', or '-' when nothing was reused."""
    return "; ".join(f"{u['role']} at {u['previous']}" + ("" if u["other_content"] else " (same content)")
                     for u in reused) or "-"


def describe_ids(record: dict) -> str:
    """How many of the request's tensor objects got an earlier request's id: 'normal 3/40',
    then each shifted run's count ('normal+1 2, ...'); '-' for a model (its objects are not recorded)."""
    if record.get("objects") is None:
        return "-"
    counts = record.get("ids_reused_by_run", {})
    shifts = ", ".join(f"{name} {n}" for name, n in counts.items() if name != NORMAL)
    return f"{NORMAL} {counts.get(NORMAL, 0)}/{record['objects']}" + (f"; {shifts}" if shifts else "")


def _diverged_in(record: dict) -> str:
    return ", ".join(record.get("diverged_in", [])) or "-"


def _ssim(value) -> str:
    return "-" if value is None else f"{value:.2f}"


def build_blocks(results: dict, files: dict) -> list:
    """The report's blocks; the media they show go into ``files`` (name -> bytes)."""
    # Imported here: the report pulls in matplotlib, which the command line needs only now.
    from harness.report.render import Code, Figure, Heading, Para, Table, encode_gif, side_by_side

    plan, env = results["plan"], results["environment"]
    blocks: list = [Heading(results["title"], 1), Para(
        f"Pipeline {plan['model']}, cache: {plan['cache']}; {plan['requests']} requests per seed for seeds "
        f"{', '.join(map(str, plan['seeds']))}, served back to back in one stream, on {env['device']} "
        f"({env['device_name']}), torch {env['torch']}, git {env['git_revision']}. The same requests ran four times, "
        f"each job a fresh fork of a process that had only imported the pipeline: twice under an allocator that "
        f"never hands a freed address back, once under the normal allocator (for a function, again at each shift "
        f"of its freed object slots), and once never-reuse with each request served alone. A request none of whose "
        f"memory landed where other content had been, and none of whose tensor objects got an earlier request's id, "
        f"is inconclusive on the address axis, never a pass.")]
    blocks += [Heading("Verdict"), Para(f"{results['verdict']}: {results['reason']}")]
    for finding in results.get("localised", []):
        blocks += [Para(f"{finding['axis']}: {finding['place']}")]
    blocks += [Heading("Allocators"), Table(
        ["run", "allocator", "tracked tensors on a freed address", "tensor objects with an earlier id",
         "probe: same id() / host address" +
         (" / device address" if "device_addresses" in results["allocators"]["normal"]["probe"] else "")],
        [[name, s["allocator"], f"{s['sources_on_freed_address']}/{s['sources']}",
          f"{s['objects_with_earlier_id']}/{s['objects']}" if s.get("objects") else "-",
          " / ".join(f"{s['probe'][k]}" for k in ("object_ids", "host_addresses", "device_addresses")
                     if k in s["probe"]) + f" of {s['probe']['trials']}"]
         for name, s in results["allocators"].items()])]
    if results["records"]:
        blocks += [Heading("Requests"), Para(
            "Address axis: each request of the normal run against the same request of a never-reuse run (outputs "
            "bitwise, SSIM of frames when there are any), and which earlier request had held the memory it landed "
            "on; for a function, how many of its tensor objects got the id of an earlier request's tensor object, "
            "in the normal run and in each run with its freed object slots shifted, and which of those runs "
            "differ. State axis: the never-reuse run's request against the same request served alone."), Table(
            ["seed", "request", "prompt", "freed memory reused", "earlier object ids", "outputs equal", "differ in",
             "min SSIM", "address axis", "alone: equal", "state axis"],
            [[str(r["seed"]), str(r["request"]), r["prompt"], describe_reuse(r["reused"]), describe_ids(r),
              "yes" if r["outputs_equal"] else "no", _diverged_in(r), _ssim(r["ssim_min"]), r["verdict"],
              "yes" if r["state"]["outputs_equal"] else "no", r["state"]["verdict"]]
             for r in results["records"]])]
    clip = results["clips"].get("first_diverged")
    if clip:
        first = results["first_diverged"]
        panels = [(f"never-reuse allocator\n{first['prompt']}", decode_clip(clip["never_reuse"])),
                  ("normal allocator\nDIVERGED", decode_clip(clip["normal"]))]
        name = "gifs/first-diverged.gif"
        files[name] = encode_gif(side_by_side(panels))
        blocks += [Heading("First diverging request"),
                   Para(f"Seed {first['seed']}, request {first['request']} ({first['prompt']!r}): never-reuse "
                        f"allocator | normal allocator, frames in step."),
                   Figure(name, "never-reuse allocator | normal allocator")]
    blocks += [Heading("Environment"), Code(json.dumps(env, indent=1))]
    return blocks


def write_results(folder: Path, results: dict) -> None:
    """results.json, report.md, report.html (and the GIF of the first diverging request)."""
    from harness.report.render import render_html, render_markdown

    write_json(folder / "results.json", results)
    files: dict = {}
    blocks = build_blocks(results, files)
    for name, data in files.items():
        (folder / name).parent.mkdir(exist_ok=True)
        write_atomic(folder / name, data)
    write_atomic(folder / "report.md", render_markdown(blocks))
    write_atomic(folder / "report.html", render_html(blocks, files, results["title"]))


def rerender(folder: Path) -> bool:
    """Re-render the report in ``folder`` from its results.json if a differential check
    wrote it; False (nothing done) for any other folder."""
    path = Path(folder) / "results.json"
    try:
        results = json.loads(path.read_text())
    except (OSError, ValueError):  # unreadable, not text, not JSON
        return False  # the ordinary report says what is wrong with it
    if not isinstance(results, dict) or results.get("kind") != "differential":
        return False
    try:
        write_results(Path(folder), results)
    except (KeyError, TypeError) as exc:
        raise ValueError(f"{path}: not a complete differential results file ({exc!r} missing or malformed)") from None
    return True


# --- the pre-flight call --------------------------------------------------------------

def preflight(spec: str, prompt: str, seed: int, timeout: float, kwargs: dict | None = None) -> float:
    """Import and call ``spec`` once in this process, before any long work; returns the
    seconds it took. Raises :class:`CallSpecError` (one line) when it cannot serve."""
    box: dict = {}

    def call():
        started = time.perf_counter()
        try:
            box["outputs"] = as_outputs(resolve_call(spec, kwargs)(prompt, seed))
        except BaseException as exc:  # noqa: BLE001 - whatever it does, the user gets one line
            box["error"] = exc
        box["seconds"] = time.perf_counter() - started

    worker = threading.Thread(target=call, daemon=True)  # a call that hangs is left behind, the command ends
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise CallSpecError(f"--call {spec}: the first call ({prompt!r}, {seed}) did not return in {timeout:g}s "
                            f"(raise --call-timeout if it is only slow)")
    exc = box.get("error")
    if isinstance(exc, CallSpecError):
        raise CallSpecError(f"--call {spec}: {exc}") if not str(exc).startswith("--call") else exc
    if isinstance(exc, SystemExit):
        raise CallSpecError(f"--call {spec}: the function called {exit_call(exc)} instead of returning")
    if exc is not None:
        frames = traceback.extract_tb(exc.__traceback__)
        at = f" at {frames[-1].filename}:{frames[-1].lineno}" if frames else ""
        raise CallSpecError(f"--call {spec}: the function raised {type(exc).__name__}: {exc}{at}")
    return box["seconds"]


# --- the command ------------------------------------------------------------------

def read_prompts(parser, path: Path | None) -> tuple[str, ...] | None:
    if path is None:
        return None
    try:
        prompts = tuple(line.strip() for line in path.read_text().splitlines() if line.strip())
    except (OSError, UnicodeDecodeError) as exc:
        parser.error(f"--prompts {path}: cannot read it ({getattr(exc, 'strerror', None) or exc})")
    if not prompts:
        parser.error(f"--prompts {path}: no prompt in it (one a line)")
    return prompts


def _give_up(parser, message: str, out: Path, existed: bool) -> int:
    """One line, exit 2, and no output folder left behind that this run made."""
    if not existed and out.is_dir() and not any(out.iterdir()):
        out.rmdir()
    print(f"{parser.prog}: error: {message}", file=sys.stderr)
    return EXIT_USAGE


def main(parser, args) -> int:
    existed = args.out is not None and args.out.exists()
    try:
        return check(parser, args)
    except KeyboardInterrupt:  # the children are stopped; leave no empty folder this run made
        out = args.out
        if out is not None and not existed and out.is_dir() and not any(out.iterdir()):
            out.rmdir()
        raise


def check(parser, args) -> int:
    if args.call and (args.cache or args.steps or args.dtype):
        parser.error("--cache, --steps and --dtype apply to --model only")
    if args.id_shifts is not None and not args.call:
        parser.error("--id-shifts applies to --call only (a model's tensor objects are not recorded)")
    id_shifts = list(ID_SHIFTS) if args.id_shifts is None else args.id_shifts
    if not args.call_timeout > 0:
        parser.error("--call-timeout must be a positive number of seconds")
    if any(abs(k) > MAX_ID_SHIFT for k in id_shifts):
        parser.error(f"--id-shifts: each shift must be between -{MAX_ID_SHIFT} and {MAX_ID_SHIFT}")
    prompts = read_prompts(parser, args.prompts)
    existed = args.out is not None and args.out.exists()
    models = {args.model: ["natural_reuse"]} if args.model else {}
    plan, out, update_latest = prepare_run(parser, argparse.Namespace(**{**vars(args), "model": list(models)}),
                                           [args.cache] if args.cache else [], models)
    if prompts:
        plan.prompts = prompts
    try:
        never_reuse.environment(plan.device)
    except never_reuse.NeverReuseUnavailable as exc:
        return _give_up(parser, str(exc), out, existed)
    requests = [[seed, index, prompt, rseed] for seed in plan.seeds
                for index, (prompt, rseed) in enumerate(case_requests(plan.prompts, seed, plan.requests))]
    timings = {}
    if args.call:
        started = time.perf_counter()
        print(f"pre-flight: one call of {args.call} in this process", flush=True)
        try:
            preflight(args.call, requests[0][2], requests[0][3], args.call_timeout)
        except CallSpecError as exc:
            return _give_up(parser, str(exc), out, existed)
        timings["pre-flight"] = time.perf_counter() - started
    # a model's tensor objects are not recorded: shifted runs are for a function only
    id_shifts = list(dict.fromkeys(k for k in id_shifts if k)) if args.call else []
    job = {"model": args.model, "call": args.call, "cache": args.cache, "device": str(plan.device),
           "steps": plan.steps, "dtype": args.dtype, "requests": requests,
           "id_shifts": id_shifts, "recycle_ids": args.recycle_ids}
    label = args.call or args.model
    print(f"serving {label} ({args.cache or 'as it is'}): {plan.requests} requests per seed for seeds "
          f"{' '.join(map(str, plan.seeds))}, on {plan.device}, in three warm processes (never-reuse; normal"
          + (f", then again with its freed object slots shifted by "
             f"{' '.join(f'{k:+d}' for k in job['id_shifts'])}" if job["id_shifts"] else "")
          + (", then with dead objects' ids recycled under the sanitizer" if job["recycle_ids"] else "")
          + "; never-reuse, each request alone and back to back), each run in a fresh fork", flush=True)
    if plan.device.type == "cuda":
        print(f"note: {never_reuse.CUDA_UNMEASURED}", flush=True)
    started = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory(prefix="differential-") as tmp, \
                warm_processes(job, plan.device, Path(tmp)) as processes:
            # never_reuse_b serves every request twice: alone, then in the stream
            outputs = serve_runs(processes, job, Path(tmp), args.call_timeout * 2 * len(requests) + 60)
            timings["serve"] = time.perf_counter() - started
            results = build_results(plan, label, args.cache, outputs, sum(timings.values()))
            first = first_positions(results["records"])
            shift = results.get("first_diverged", {}).get("id_shift", 0)
            recycled = outputs.get(RECYCLED, {}).get("sanitized")
            if recycled is not None and recycled["findings"]:
                # named in the run that shows whether they changed an output: no re-run needed
                results["sanitized"] = recycled
                results["localised"] = stale_matches(recycled, RECYCLED, any(
                    RECYCLED in r.get("diverged_in", ()) for r in results["records"]))
            elif "address" in first:
                started = time.perf_counter()
                diverged = results["first_diverged"]["id_shifts"]
                shifts = list(dict.fromkeys([*diverged, 0, *ID_SHIFTS]))[:SANITIZED_TRIES]
                for attempt, id_shift in enumerate(shifts, 1):
                    print(f"localising: the normal run again, under address-reuse sanitize (id shift {id_shift}, "
                          f"{attempt}/{len(shifts)})", flush=True)
                    results["sanitized"] = sanitized_rerun({**job, "id_shift": id_shift}, processes["normal"],
                                                           Path(tmp), args.call_timeout * len(requests) + 60, attempt)
                    if results["sanitized"]["findings"]:
                        break
                results["localised"] = stale_matches(results["sanitized"], NORMAL, True)
                timings["sanitize"] = time.perf_counter() - started
            if any(f.get("confirmed") for f in results.get("localised", [])):
                # the sanitizer named the lookup on the path of the wrong output: what the trace
                # adds is for what it cannot see
                first.pop("address", None)
            if first and args.call:
                from harness.differential.pinpoint import localise_findings
                started = time.perf_counter()
                print("localising: serving again up to the first diverging request with tracing on", flush=True)
                # In the processes the runs came from; the request alone in the one that served no stream alone
                runs = {"never_reuse": processes[ALONE_IN], "normal": processes["normal"],
                        "alone": processes["never_reuse_a"]}
                # at the id shift of the first run that diverged, in both traced runs: the same code path
                traced = localise_findings({**job, "id_shift": shift}, requests, first, runs, Path(tmp),
                                           args.call_timeout * len(requests) + 60)
                results["localised"] = results.get("localised", []) + traced
                timings["localise"] = time.perf_counter() - started
            results["environment"]["seconds"] = round(sum(timings.values()), 2)
    except ChildFailed as exc:
        return _give_up(parser, str(exc), out, existed)
    results["environment"]["phases"] = {k: round(v, 2) for k, v in timings.items()}
    started = time.perf_counter()
    write_results(out, results)
    timings["report"] = time.perf_counter() - started
    if update_latest:
        point_latest(out, kind="differential")
    print_summary(results)
    print(f"{' '.join(f'{k} {v:.1f}s' for k, v in timings.items())}; report: {out / 'report.md'}  "
          f"{out / 'report.html'}")
    return EXIT_CODES[results["verdict"]]


def sanitized_rerun(job: dict, process: warm.WarmProcess, folder: Path, timeout: float, attempt: int = 1) -> dict:
    """The normal run's stream served again, as a job of the normal run's warm ``process``, under
    ``address-reuse sanitize``: what the sanitizer saw (``harness.sanitize.report.merge``'s summary)."""
    path = folder / f"sanitized-{attempt}.json"
    path.write_text(json.dumps({**job, "never_reuse": False}))
    _submit_sanitized(process, "sanitized normal run", "job", folder / f"sanitized-data-{attempt}", path,
                      folder / f"sanitized-{attempt}.pt")
    try:
        warm.wait_for([process], timeout)
    except warm.JobFailed as exc:
        raise ChildFailed(str(exc)) from None
    return _sanitizer_saw(folder / f"sanitized-data-{attempt}")


def _submit_sanitized(process: warm.WarmProcess, label: str, entry: str, data: Path, job_path: Path,
                      out: Path) -> None:
    """Serve the stream job at ``job_path`` in ``process`` as a job of the sanitizer
    (``harness.sanitize.command``'s ``entry``: plain, or with recycled ids), which writes what
    it saw into the folder ``data``."""
    data.mkdir(exist_ok=True)
    process.submit(label, f"harness.sanitize.command:{entry}", [data, "repro.stream:main", job_path, out])


def _sanitizer_saw(data: Path) -> dict:
    """What the sanitized jobs that wrote into ``data`` saw, merged."""
    from harness.sanitize.report import merge, read_folder
    return merge(read_folder(data))


def stale_matches(sanitized: dict, run: str, diverged: bool) -> list[dict]:
    """A localised finding per stale address match the sanitizer saw in ``run`` (the normal run
    served again, or the run with recycled ids): the lookup, where its old key was taken, and from
    what. Confirmed when ``run``'s output diverged from the never-reuse run's: the match happened on
    the path of a wrong output."""
    from harness.sanitize.report import shown_path

    seen = ({NORMAL: "the normal run's output diverged", RECYCLED: "the run with recycled ids diverged"}[run]
            if diverged else "the run with recycled ids, whose outputs did not change")
    places: dict[str, dict] = {}  # one line per lookup and the two frames that took the old key
    for f in sanitized["findings"]:
        lookup, key, taken = f["compared"][0], "an id()" if f["kind"] == "id" else "a data_ptr()", f["old"]["taken"]
        where = "".join(f"{' at' if not i else ', called from'} {shown_path(t['file'])}:{t['line']} ({t['source']})"
                        for i, t in enumerate(taken[:2]))
        place = (f"{shown_path(lookup['file'])}:{lookup['line']}: a stale address match"
                 f"{', confirmed' if diverged else ''} ({seen}): {key} key met one of an object that is gone, "
                 f"{f['fate']}; the old key was taken{where}")
        entry = places.setdefault(place, {"lookup": f"{shown_path(lookup['file'])}:{lookup['line']}", "count": 0,
                                          "key_taken": f"{shown_path(taken[0]['file'])}:{taken[0]['line']}"
                                          if taken else None})
        entry["count"] += f["count"]
    found = [{"axis": "address", "by": "sanitizer", "confirmed": diverged, "run": run, "lookup": e["lookup"],
              "key_taken": e["key_taken"], "place": f"{place}; {e['count']}x"} for place, e in places.items()]
    if not found:
        seen = (f"{sanitized['keys_taken']:,} keys taken, {sanitized['came_back']:,} came back"
                if sanitized["processes"] else "no process reported")
        found.append({"axis": "address", "by": "sanitizer", "confirmed": False, "run": run,
                      "place": f"the sanitizer saw no stale address match in a normal re-run ({seen}): the key "
                               "is not a data_ptr() or id() it can follow (hashed, bit operations, taken in C++), "
                               "or the allocator placed the tensors elsewhere this time"})
    return found


def print_summary(results: dict) -> None:
    for r in results["records"]:
        print(f"  seed {r['seed']} request {r['request']}: address {r['verdict']:12} state "
              f"{r['state']['verdict']:11} outputs {'equal' if r['outputs_equal'] else 'differ'}, "
              f"min SSIM {_ssim(r['ssim_min'])}, freed memory reused: {describe_reuse(r['reused'])}; "
              f"tensor objects with an earlier request's id: {describe_ids(r)}"
              + (f"; differ in {_diverged_in(r)}" if r.get("diverged_in") else ""))
    for name, s in results["allocators"].items():
        p = s["probe"]
        objects = f"tensor objects with an earlier id {s['objects_with_earlier_id']}/{s['objects']}; " \
            if s.get("objects") else ""
        print(f"  {name:14} tracked tensors on a freed address {s['sources_on_freed_address']}/{s['sources']}; "
              f"{objects}"
              f"probe: same id() {p['object_ids']}/{p['trials']}, same host address {p['host_addresses']}/"
              f"{p['trials']}" + (f", same device address {p['device_addresses']}/{p['trials']}"
                                  if "device_addresses" in p else ""))
    for finding in results.get("localised", []):
        print(f"{finding['place']}")
    print(f"{results['verdict'].upper()}: {results['reason']}")
