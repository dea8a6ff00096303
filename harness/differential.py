"""``python -m harness differential``: does anything in a pipeline follow an address?

The same back-to-back requests, same seeds, in three fresh processes: two under an
allocator that never hands a freed address back (``repro.never_reuse``) and one
under the normal allocator. The two never-reuse runs must agree bitwise (else the
pipeline is not deterministic and nothing can be concluded). Where the normal run
differs from them, some state in the pipeline followed where the allocator put a
tensor. No knowledge of the cache is needed: whatever the model has built in runs
as it is (``--cache`` attaches a registered design, to demonstrate).

The requests are served as a server serves them (the ``natural_reuse`` source
strategy): fresh prompt sources, freed after each request, the allocator decides.
A forced strategy would reuse addresses under both allocators alike. The seeds'
requests form one stream through one model, as a server's requests do.

Each child process runs ``repro.stream`` as a script and writes its outputs to a
file the parent compares.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

from harness.cli import DTYPES, prepare_run
from harness.environment import describe
from harness.metrics import compare_outputs
from harness.results import decode_clip, encode_clip, point_latest, write_atomic, write_json
from harness.run import case_requests
from repro import never_reuse

NORMAL, NEVER_REUSE = "normal", "never_reuse"
RUNS = (("never_reuse_a", NEVER_REUSE), ("never_reuse_b", NEVER_REUSE), ("normal", NORMAL))

# Per request: its output differs from the never-reuse run; or it does not, and one of
# its sources landed where another content had been (clean); or no such reuse
# happened (inconclusive, never a pass). A reuse by the same content (the negative
# prompt again) cannot show a difference, but stale state from an older holder can.
DIVERGED, CLEAN, INCONCLUSIVE = "diverged", "clean", "inconclusive"
# Per run of the check.
ADDRESS_DEPENDENT, NONDETERMINISTIC = "address-dependent", "nondeterministic"
EXIT_CODES = {CLEAN: 0, ADDRESS_DEPENDENT: 1, INCONCLUSIVE: 3, NONDETERMINISTIC: 4}

# The normal run's glibc malloc gives memory freed at the top of its heap back at
# once, so the next allocation there gets the same address: freed addresses come back
# sooner, which is what the check needs to see. Set in the environment to override.
REUSE_PRONE_MALLOC = {"MALLOC_TRIM_THRESHOLD_": "0"}

DEFAULT_SEEDS = (0, 1, 2)
DEFAULT_REQUESTS = 4
BUILT_IN = "built-in"  # the cache column when nothing is attached: the model's own state
TITLE = "Differential check: normal allocator vs never-reuse allocator"


class ChildFailed(RuntimeError):
    """A child process could not serve the requests (the message is one line)."""


# --- the parent: three children, then compare ----------------------------------------

def child_environment(allocator: str, device: torch.device) -> dict:
    env = dict(os.environ)
    # The children import what this process imports (the project, a model's package).
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(p or os.getcwd() for p in sys.path))
    env["OMP_NUM_THREADS"] = "1"
    if allocator == NEVER_REUSE:
        env.update(never_reuse.environment(device))
    else:
        for key, value in REUSE_PRONE_MALLOC.items():
            env.setdefault(key, value)
    return env


def allocator_label(allocator: str, device: torch.device) -> str:
    env = child_environment(allocator, device)
    if allocator == NEVER_REUSE:
        return "AddressSanitizer quarantine (LD_PRELOAD), PYTHONMALLOC=malloc" + (
            ", PYTORCH_NO_CUDA_MEMORY_CACHING=1" if device.type == "cuda" else "")
    return " ".join(["glibc malloc", *(f"{k}={v}" for k, v in env.items() if k.startswith("MALLOC_"))])


def run_children(job: dict, device: torch.device, folder: Path) -> dict:
    """Start the three runs at once; return run name -> its outputs."""
    procs = {}
    for name, allocator in RUNS:
        job_path = folder / f"{name}.json"
        job_path.write_text(json.dumps({**job, "never_reuse": allocator == NEVER_REUSE}))
        procs[name] = subprocess.Popen(
            [sys.executable, "-m", "repro.stream", str(job_path), str(folder / f"{name}.pt")],
            env=child_environment(allocator, device), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    outputs, failures = {}, []
    for name, proc in procs.items():
        try:
            _, err = proc.communicate()
        except BaseException:  # interrupted: no child outlives the run
            for child in procs.values():
                child.kill()
            raise
        if proc.returncode != 0:
            lines = [line for line in err.splitlines() if line.strip()]
            failures.append(f"{name} run failed (exit {proc.returncode}): {lines[-1] if lines else 'no message'}")
        else:
            outputs[name] = torch.load(folder / f"{name}.pt", weights_only=True)
    if failures:
        raise ChildFailed(failures[0])
    for name, allocator in RUNS:
        if allocator == NEVER_REUSE and not outputs[name]["never_reuse_active"]:
            raise ChildFailed(f"{name}: the never-reuse allocator was not active in the child process")
    return outputs


def first_disagreement(a: list[dict], b: list[dict]) -> dict | None:
    """The first request where two never-reuse runs differ (latents or frames)."""
    for x, y in zip(a, b):
        if not (torch.equal(x["latents"], y["latents"]) and torch.equal(x["frames"], y["frames"])):
            return x
    return None


def request_record(reference: dict, normal: dict) -> dict:
    """Compare one request of the normal run with the same request of the never-reuse run."""
    outputs = compare_outputs(reference["latents"], reference["frames"], normal["latents"], normal["frames"])
    conclusive = any(r["other_content"] for r in normal["reused"])
    diverged = not outputs["latents_equal"] or not torch.equal(reference["frames"], normal["frames"])
    verdict = DIVERGED if diverged else (CLEAN if conclusive else INCONCLUSIVE)
    return {"seed": normal["seed"], "request": normal["request"], "request_seed": normal["request_seed"],
            "prompt": normal["prompt"], "address_reused": bool(normal["reused"]),
            "reused_by_other_content": conclusive, "addresses": normal["addresses"],
            "reused": normal["reused"], "never_reuse_addresses": reference["addresses"],
            "never_reuse_reused": reference["reused"], **outputs, "verdict": verdict}


def allocator_summary(outputs: dict, device: torch.device) -> dict:
    """Per run: the allocator, how many sources landed on a freed address, the probe."""
    summary = {}
    for name, allocator in RUNS:
        requests = outputs[name]["requests"]
        summary[name] = {
            "allocator": allocator_label(allocator, device),
            "sources": sum(len(r["addresses"]) for r in requests),
            "sources_on_freed_address": sum(len(r["reused"]) for r in requests),
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
            return f"{name}: {s['sources_on_freed_address']} source(s) landed on a freed address"
        probe = s["probe"]
        reused = {k: probe[k] for k in ("object_ids", "host_addresses", "device_addresses") if probe.get(k)}
        if reused:
            note = f" ({never_reuse.CUDA_UNMEASURED})" if device.type == "cuda" else ""
            return f"{name}: the probe saw freed addresses handed back ({reused} of {probe['trials']}){note}"
    return None


def overall_verdict(records: list[dict], unproven: str | None) -> tuple[str, str]:
    """(verdict, one line saying why)."""
    diverged = [r for r in records if r["verdict"] == DIVERGED]
    clean = [r for r in records if r["verdict"] == CLEAN]
    if diverged:
        first = diverged[0]
        reused = "" if first["address_reused"] else \
            " (none of its sources landed on a freed address: other state followed one)"
        return ADDRESS_DEPENDENT, (f"{len(diverged)}/{len(records)} requests differ from the never-reuse run; first: "
                                   f"seed {first['seed']} request {first['request']} ({first['prompt']!r}), "
                                   f"min SSIM {first['ssim_min']:.2f}{reused}")
    if unproven:
        return INCONCLUSIVE, f"no request diverged, but the reference is not proven never-reuse: {unproven}"
    if clean:
        return CLEAN, (f"{len(clean)} conclusive request(s) (a source on an address freed by other content), "
                       f"none differ; {len(records) - len(clean)} inconclusive")
    return INCONCLUSIVE, f"no source landed on an address freed by other content in {len(records)} requests"


# --- results and report -----------------------------------------------------------

def build_results(plan, cache: str | None, outputs: dict, seconds: float) -> dict:
    device = plan.device
    summary = allocator_summary(outputs, device)
    spec = next(iter(plan.models))
    results = {"title": TITLE, "kind": "differential", "environment": describe(device),
               "plan": {"model": spec, "cache": cache or BUILT_IN, "seeds": plan.seeds, "requests": plan.requests,
                        "steps": plan.steps, "prompts": list(plan.prompts), "source_strategy": "natural_reuse"},
               "model": outputs["normal"]["model"], "allocators": summary, "records": [], "clips": {}}
    results["environment"]["seconds"] = round(seconds, 2)
    a, b = outputs["never_reuse_a"]["requests"], outputs["never_reuse_b"]["requests"]
    disagreement = first_disagreement(a, b)
    if disagreement is not None:
        results["verdict"] = NONDETERMINISTIC
        results["reason"] = (f"the two never-reuse runs differ at seed {disagreement['seed']} request "
                             f"{disagreement['request']}: the pipeline is not deterministic, nothing can be concluded")
        return results
    records = [request_record(ref, normal) for ref, normal in zip(a, outputs["normal"]["requests"])]
    results["records"] = records
    results["verdict"], results["reason"] = overall_verdict(records, reference_unproven(summary, device))
    first = next((i for i, r in enumerate(records) if r["verdict"] == DIVERGED), None)
    if first is not None:
        results["first_diverged"] = {k: records[first][k] for k in ("seed", "request", "prompt")}
        results["clips"]["first_diverged"] = {"never_reuse": encode_clip(a[first]["frames"]),
                                              "normal": encode_clip(outputs["normal"]["requests"][first]["frames"])}
    return results


def describe_reuse(reused: list[dict]) -> str:
    """'positive at seed 0 request 1 (negative); ...', or '-' when nothing was reused."""
    return "; ".join(f"{u['role']} at {u['previous']}" + ("" if u["other_content"] else " (same content)")
                     for u in reused) or "-"


def build_blocks(results: dict, files: dict) -> list:
    """The report's blocks; the media they show go into ``files`` (name -> bytes)."""
    # Imported here: the report pulls in matplotlib, which the command line needs only now.
    from harness.report import Code, Figure, Heading, Para, Table, encode_gif, side_by_side

    plan, env = results["plan"], results["environment"]
    blocks: list = [Heading(results["title"], 1), Para(
        f"Model {plan['model']}, cache: {plan['cache']}; {plan['requests']} requests per seed for seeds "
        f"{', '.join(map(str, plan['seeds']))}, served back to back in one stream, on {env['device']} "
        f"({env['device_name']}), torch {env['torch']}, git {env['git_revision']}. The same requests ran in three "
        f"fresh processes: twice under an allocator that never hands a freed address back, once under the normal "
        f"allocator. A request whose sources did not land on an address freed by other content is inconclusive, "
        f"never a pass.")]
    blocks += [Heading("Verdict"), Para(f"{results['verdict']}: {results['reason']}")]
    blocks += [Heading("Allocators"), Table(
        ["run", "allocator", "sources on a freed address", "probe: same id() / host address" +
         (" / device address" if "device_addresses" in results["allocators"]["normal"]["probe"] else "")],
        [[name, s["allocator"], f"{s['sources_on_freed_address']}/{s['sources']}",
          " / ".join(f"{s['probe'][k]}" for k in ("object_ids", "host_addresses", "device_addresses")
                     if k in s["probe"]) + f" of {s['probe']['trials']}"]
         for name, s in results["allocators"].items()])]
    if results["records"]:
        blocks += [Heading("Requests"), Para(
            "Each request of the normal run against the same request of a never-reuse run: latents bitwise "
            "(torch.equal), SSIM of the decoded frames, and which earlier source had held the address its "
            "sources landed on."), Table(
            ["seed", "request", "prompt", "sources on a freed address", "latents equal", "min SSIM", "verdict"],
            [[str(r["seed"]), str(r["request"]), r["prompt"],
              describe_reuse(r["reused"]),
              "yes" if r["latents_equal"] else "no", f"{r['ssim_min']:.2f}", r["verdict"]]
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
    from harness.report import render_html, render_markdown

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


# --- the command ------------------------------------------------------------------

def add_arguments(p) -> None:
    from harness.cli import MAX_REQUESTS, MAX_STEPS, count_argument, seed_argument
    p.add_argument("--model", required=True, metavar="NAME",
                   help="toy, helios, wan, or package.module:factory for your own")
    p.add_argument("--cache", metavar="SPEC", default=None,
                   help="attach this cache design first, to demonstrate (default: the model as it is, "
                        "with whatever caches it has built in)")
    p.add_argument("--requests", type=count_argument(MAX_REQUESTS), default=DEFAULT_REQUESTS,
                   help=f"requests per seed (default {DEFAULT_REQUESTS})")
    p.add_argument("--seed", nargs="+", type=seed_argument, default=list(DEFAULT_SEEDS),
                   help="seeds; their requests are served in one stream "
                        f"(default: {' '.join(map(str, DEFAULT_SEEDS))})")
    p.add_argument("--steps", type=count_argument(MAX_STEPS), default=None, help="denoise steps (default: the model's)")
    p.add_argument("--dtype", choices=list(DTYPES), default=None, help="model dtype (default: the model's)")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                   help="auto: CUDA when available, else CPU")
    p.add_argument("--out", type=Path, default=None,
                   help="output folder (default: reports/<run-id>, with reports/latest pointing at it)")
    p.set_defaults(preset="tiny", threads=1, scenario=None)


def _one_model(args):
    """prepare_run checks lists of models for duplicates; the differential check serves one."""
    return argparse.Namespace(**{**vars(args), "model": [args.model]})


def _give_up(message: str, out: Path, existed: bool) -> int:
    """One line, exit 2, and no output folder left behind that this run made."""
    if not existed and out.is_dir() and not any(out.iterdir()):
        out.rmdir()
    print(f"error: {message}", file=sys.stderr)
    return 2


def main(parser, args) -> int:
    existed = args.out is not None and args.out.exists()
    plan, out, update_latest = prepare_run(parser, _one_model(args), [args.cache] if args.cache else [],
                                           {args.model: ["natural_reuse"]})
    try:
        never_reuse.environment(plan.device)
    except never_reuse.NeverReuseUnavailable as exc:
        return _give_up(str(exc), out, existed)
    requests = [[seed, index, prompt, rseed] for seed in plan.seeds
                for index, (prompt, rseed) in enumerate(case_requests(plan.prompts, seed, plan.requests))]
    job = {"model": args.model, "cache": args.cache, "device": str(plan.device), "steps": plan.steps,
           "dtype": args.dtype, "requests": requests}
    print(f"serving {args.model} ({args.cache or 'as it is'}): {plan.requests} requests per seed for seeds "
          f"{' '.join(map(str, plan.seeds))}, on {plan.device}, in three processes (never-reuse x2, normal)",
          flush=True)
    if plan.device.type == "cuda":
        print(f"note: {never_reuse.CUDA_UNMEASURED}", flush=True)
    started = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory(prefix="differential-") as tmp:
            outputs = run_children(job, plan.device, Path(tmp))
    except ChildFailed as exc:
        return _give_up(str(exc), out, existed)
    results = build_results(plan, args.cache, outputs, time.perf_counter() - started)
    write_results(out, results)
    if update_latest:
        point_latest(out, kind="differential")
    for r in results["records"]:
        reused = describe_reuse(r["reused"])
        print(f"  seed {r['seed']} request {r['request']}: {r['verdict']:12} latents "
              f"{'equal' if r['latents_equal'] else 'differ'}, min SSIM {r['ssim_min']:.2f}, freed address: {reused}")
    for name, s in results["allocators"].items():
        p = s["probe"]
        print(f"  {name:14} sources on a freed address {s['sources_on_freed_address']}/{s['sources']}; probe: same "
              f"id() {p['object_ids']}/{p['trials']}, same host address {p['host_addresses']}/{p['trials']}"
              + (f", same device address {p['device_addresses']}/{p['trials']}" if "device_addresses" in p else ""))
    print(f"{results['verdict'].upper()}: {results['reason']}")
    print(f"{results['environment']['seconds']}s; report: {out / 'report.md'}  {out / 'report.html'}")
    return EXIT_CODES[results["verdict"]]

