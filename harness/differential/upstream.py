"""A folder per finding of ``harness hunt`` that a library's maintainers can use
without this project: a standalone script (torch and the library only) that fails
with an assertion on the buggy path and passes with the fix, and a README with
expected vs actual, the place, the suggested fix and the check's verdict on it.

The script runs the same model and hook source as the check
(``repro.models.hunt_models``); the hunt runs it both ways and keeps the output.
"""

from __future__ import annotations

import ast
import inspect
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from harness.differential.check import ADDRESS_DEPENDENT, BOTH, CARRIES_STATE
from harness.report.results import write_atomic

SCRIPT = '''"""{hook} on a tiny {model} transformer, served back to back as a serving engine serves it:
a request served after others must equal the same request served alone on a fresh transformer.

    python repro.py         # requests back to back, no reset: fails (AssertionError) where it is buggy
    python repro.py --fix   # transformer._reset_stateful_cache() before each request: passes

Needs only torch and diffusers (found with diffusers {version}). Random weights from a tiny seeded
config, on the CPU; nothing is downloaded.
"""
import ctypes
import sys

import torch
from diffusers.hooks import *  # noqa: F403 - the hook's config and apply_*

# glibc: serve memory of 128 KiB and more from mappings of their own, given back at once, so the
# next request's text states can land where the last request's were, as on a busy server.
ctypes.CDLL(None).mallopt(-3, 128 * 1024)  # M_MMAP_THRESHOLD

TEXT = {text}  # text states per request, as a text encoder hands them over
TIMESTEPS = {timesteps}
REQUESTS = {requests}


def build():
    CURRENT = {{"t": 0.0}}  # the timestep being denoised, for hooks that ask for it
    torch.manual_seed(0)
{build}
    transformer.eval()
{recipe}
    return transformer, CURRENT, LATENTS


def serve(pipe, prompt, seed, reset):
    transformer, CURRENT, LATENTS = pipe
    if reset:
        transformer._reset_stateful_cache()
    text = torch.randn(TEXT, generator=torch.Generator().manual_seed(sum(map(ord, prompt))))
    address = text.data_ptr()
    x = torch.randn(LATENTS, generator=torch.Generator().manual_seed(seed))
    with torch.no_grad():
        for step in TIMESTEPS:
            CURRENT["t"] = step
            t = torch.tensor(step)
            with transformer.cache_context("cond"):
                {step}
            x = x - 0.2 * out
    return x, address


def main():
    fix = "--fix" in sys.argv
    pipe = build()
    served = [serve(pipe, prompt, seed, reset=fix) for prompt, seed in REQUESTS]
    for i, ((prompt, seed), (x, address)) in enumerate(zip(REQUESTS, served)):
        alone, _ = serve(build(), prompt, seed, reset=False)
        earlier = [j for j in range(i) if served[j][1] == address]
        landed = (f"its text states landed where request {{earlier[-1]}}'s had been ({{hex(address)}})" if earlier
                  else "its text states got an address no earlier request had")
        assert torch.equal(x, alone), (
            f"request {{i}} ({{prompt!r}}), served after {{i}} other request(s) on the same transformer, differs "
            f"from the same request served alone on a fresh one: max abs diff {{(x - alone).abs().max():.3g}}; "
            f"{{landed}}")
    print(f"OK: {{len(REQUESTS)}} requests served back to back equal the same requests served alone"
          + (" (with the reset per request)" if fix else ""))


if __name__ == "__main__":
    main()
'''

FIXES = {
    "address-dependent": "reset the hook's state before each request (`transformer._reset_stateful_cache()`, as "
                         "diffusers' own pipelines do) and, in the hook, stop keying state by `data_ptr()`: an "
                         "address names no content once the tensor that had it is freed. Key by the request "
                         "(the cache context) or keep a key and guard as `cache_impl`'s hardened design does "
                         "(a weak reference to the tensor and its version counter, checked on every hit).",
    "carries state": "reset the hook's state before each request (`transformer._reset_stateful_cache()`, as "
                     "diffusers' own pipelines do), or have the hook reset itself when a new request begins "
                     "(e.g. when the first denoising step comes round again), so an engine that keeps the "
                     "transformer between requests does not have to know.",
}


# What a finding's "Where" lists after the places driven, for the hooks and the recipes alike
NAMED = ("What the check named (a stale lookup with where its key was taken from the object that is gone; for "
         "state an earlier request or job left, where a later one read it and where it was left; and where the "
         "traced runs part)")


def script_source(model: str, hook: str) -> str:
    from repro.models import hunt_models
    import diffusers

    requests = [(p, s) for p, s in _requests()]
    return SCRIPT.format(hook=hook, model=model, version=diffusers.__version__, text=hunt_models.TEXT,
                         timesteps=hunt_models.TIMESTEPS, requests=requests,
                         build=textwrap.indent(hunt_models.MODELS[model]["build"], "    "),
                         recipe=textwrap.indent(hunt_models.RECIPES[hook], "    "),
                         step=hunt_models.MODELS[model]["step"])


def _requests() -> list[tuple[str, int]]:
    """The requests the check served in the hunt (its seeds, prompts in turn)."""
    from harness.differential import HUNT_REQUESTS, HUNT_SEEDS
    from harness.run import case_requests
    from repro.models.toy import DEFAULT_PROMPTS
    return [r for seed in HUNT_SEEDS for r in case_requests(DEFAULT_PROMPTS, int(seed), int(HUNT_REQUESTS))]


def run_script(folder: Path, *args: str) -> tuple[int, str]:
    """Run the script as a maintainer would, in a plain environment; (exit code, its output)."""
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "PYTHONMALLOC", "ASAN_OPTIONS")}
    env["OMP_NUM_THREADS"] = "1"
    proc = subprocess.run([sys.executable, "-W", "ignore", "repro.py", *args], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=600)
    lines = [line for line in (proc.stdout + proc.stderr).splitlines()
             if line.strip() and "Warning" not in line and "warnings.warn" not in line]
    return proc.returncode, "\n".join(lines[-12:])


def write_upstream(cell, folder: Path) -> Path:
    """The finding's folder: repro.py, its two runs' output, README.md."""
    import diffusers

    places = "\n".join(f"- `{p}`" for p in cell.places) or "- (no hook found on the transformer)"
    from repro.models.hunt_models import as_in_script
    localised = "\n".join(f"- `{as_in_script(p, cell.model, cell.hook)}`" for p in cell.localised)

    def readme(buggy_code, buggy_out, fixed_code, fixed_out):
        return f"""# {cell.hook} on {cell.model}: {cell.outcome}

diffusers {diffusers.__version__}, a tiny `{cell.model}` transformer (random weights from a seeded config, CPU),
{cell.hook} enabled, {len(_requests())} requests served back to back on one transformer, as a serving engine that
keeps its transformer serves them, without `_reset_stateful_cache()` between requests.

## Expected
Each request's output equals the same request served alone on a fresh transformer (and does not depend on where
the allocator put its tensors).

## Actual
{cell.reasons.get("no-reset", "")}

`python repro.py` (exit {buggy_code}):
```
{buggy_out}
```

## Where
The hooks {cell.hook} installs, whose state outlives a request:
{places}
{(NAMED + ":" + chr(10) + localised) if localised else ""}

## Suggested fix
{FIXES.get(cell.outcome.split(",")[0], FIXES["carries state"])}

With the reset before each request, `python repro.py --fix` (exit {fixed_code}):
```
{fixed_out}
```
and the same check says **{cell.verdicts.get("reset")}**: {cell.reasons.get("reset", "")}

## Reproduce the check
```
{cell.commands.get("no-reset", "")}
{cell.commands.get("reset", "")}
```
"""
    return _write_finding(cell, folder, script_source(cell.model, cell.hook), readme)


def _write_finding(cell, folder: Path, script: str, readme) -> Path:
    """A finding's folder: ``repro.py``, its runs as shipped and with ``--fix`` (each one's output
    kept), and ``README.md``, ``readme(buggy_code, buggy_out, fixed_code, fixed_out)``."""
    folder.mkdir(parents=True, exist_ok=True)
    write_atomic(folder / "repro.py", script.encode())
    runs = []
    for name, args in (("buggy", ()), ("fixed", ("--fix",))):
        code, out = run_script(folder, *args)
        write_atomic(folder / f"run-{name}.txt", f"$ python repro.py{''.join(' ' + a for a in args)}\n{out}\n"
                                                 f"(exit {code})\n".encode())
        runs += [code, out]
    write_atomic(folder / "README.md", readme(*runs).encode())
    cell.upstream = {"folder": str(folder), "buggy_exit": runs[0], "fixed_exit": runs[2]}
    return folder


# --- a library's workflows (repro.recipes) ----------------------------------------------------

LIBRARY_DRIVER = '''

# --- the driver -------------------------------------------------------------------------------
# Jobs run back to back in this one process, as a search, a notebook or a server runs them; each
# job is compared with the same job run with the reset (no state kept from earlier jobs).{rounds_why}
ROUNDS = {rounds}


def main():
    fix = "--fix" in sys.argv
    if fix:
        {fix_call}
    for round_ in range(ROUNDS):
        for prompt in PROMPTS:
            actual = {recipe}(prompt, round_)
            expected = {recipe}(prompt, round_, reset=True)
            assert torch.equal(actual, expected), (
                f"round {{round_}}, job {{prompt!r}}: served after earlier jobs it differs from the same job with no "
                f"state kept from them (max abs diff {{(actual - expected).abs().max():.3g}}): the state kept at "
                f"{place} ({library} {version}) {cause}")
    print(f"OK: {{ROUNDS}} rounds of {{len(PROMPTS)}} jobs, each equal to the same job with no state kept"
          + (" (with the fix)" if fix else ""))


if __name__ == "__main__":
    main()
'''


# What the driver's failure says, and why it serves many rounds, by the cell's finding.
_SCRIPT_CAUSE = {
    CARRIES_STATE: ("was carried from an earlier job into this one", ""),
    ADDRESS_DEPENDENT: ("was met by a new object through a dead one's id() or address",
                        "\n# An id() or an address is handed to a new object only when CPython or the allocator puts it\n"
                        "# where a dead one was, which they do now and then, so the jobs are served for up to ROUNDS\n"
                        "# rounds, with a new seed each round."),
}
_SCRIPT_CAUSE[BOTH] = _SCRIPT_CAUSE[ADDRESS_DEPENDENT]
# State carried from job to job shows in the first round; an id() or address met again only now
# and then: the scripts of every address-dependent finding so far failed by round 38 (most by 13).
_SCRIPT_ROUNDS = {CARRIES_STATE: 10, ADDRESS_DEPENDENT: 300, BOTH: 300}


def _marks(node: ast.AST) -> list[ast.AST]:
    """What of ``node`` is this project's, not the recipe's: the ``repro.recipes`` import, the
    module's ``__getattr__``, a function's ``@drives(...)``."""
    if isinstance(node, ast.ImportFrom) and node.module == "repro.recipes":
        return [node]
    if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__getattr__" for t in node.targets):
        return [node]
    if isinstance(node, ast.FunctionDef):
        return [d for d in node.decorator_list
                if isinstance(d, ast.Call) and isinstance(d.func, ast.Name) and d.func.id == "drives"]
    return []


def _without_marks(source: str) -> str:
    """A recipe module's source without this project's marks, found in the syntax tree, so that a
    mark may span lines."""
    dropped = {number for node in ast.walk(ast.parse(source)) for mark in _marks(node)
               for number in range(mark.lineno, mark.end_lineno + 1)}  # a decorator's lines start after its "@"
    return "".join(line for number, line in enumerate(source.splitlines(keepends=True), 1) if number not in dropped)


def library_script_source(module, recipe, version: str, finding: str) -> str:
    """The recipe's module as a script of its own (torch and the library only): its source with
    this project's imports and marks taken out, and the driver above, whose failure says what
    ``finding`` (the cell's outcome) means."""
    source = _without_marks(inspect.getsource(module))
    header = (f'"""{recipe.__name__}: {inspect.getdoc(recipe).splitlines()[0]}\n\n'
              f"    python repro.py         # fails (AssertionError) at the first job that differs from itself with no state kept\n"
              + (f"    python repro.py --fix   # the library patched with {recipe.fix.__name__}(): passes\n\n" if recipe.fix
                 else "    (no fix is known for this yet)\n\n") +
              f"Needs only torch{'' if module.LIBRARY == 'torch' else ' and ' + module.LIBRARY} "
              f"(found with {module.LIBRARY} {version}).\n"
              f'"""\nimport sys\n')
    body = source.split('"""', 2)[2]  # the module's own docstring is replaced by the header
    cause, rounds_why = _SCRIPT_CAUSE[finding]
    return header + body.rstrip() + "\n" + LIBRARY_DRIVER.format(
        rounds=_SCRIPT_ROUNDS[finding], rounds_why=rounds_why, cause=cause, recipe=recipe.__name__,
        fix_call=f"{recipe.fix.__name__}()" if recipe.fix else 'sys.exit("no fix is known for this yet")',
        place=", ".join(recipe.drives), library=module.LIBRARY, version=version)


def write_library_upstream(cell, module, recipe, version: str, folder: Path) -> Path:
    """The finding's folder for a recipe: repro.py, its two runs' output, README.md."""
    named = "\n".join(f"- `{p}`" for p in cell.localised) or "- (the sanitizer saw no stale lookup)"

    def readme(buggy_code, buggy_out, fixed_code, fixed_out):
        return f"""# {module.LIBRARY} {version}: {recipe.__name__}: {cell.outcome}

{inspect.getdoc(recipe)}

## Expected
Each job's result equals the same job's with no state kept from earlier jobs (and does not depend on which
id() or address the allocator gave its objects).

## Actual
{cell.reasons.get("no-reset", "")}

`python repro.py` (exit {buggy_code}):
```
{buggy_out}
```

## Where
The places this workflow drives: {", ".join(f"`{p}`" for p in cell.places)}. {NAMED}:
{named}

## Suggested fix
{inspect.getdoc(recipe.fix) if recipe.fix else "None known yet."}

`python repro.py --fix` (exit {fixed_code}):
```
{fixed_out}
```
With the fix the check says **{cell.verdicts.get("fixed")}**; with the reset ({cell.verdicts.get("reset")}).

## Reproduce the check
```
{chr(10).join(cell.commands.values())}
```
"""
    return _write_finding(cell, folder, library_script_source(module, recipe, version, cell.outcome), readme)
