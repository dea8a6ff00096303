"""Output: text (``path:line:col: CODE message``, as flake8 and ruff print), JSON, SARIF 2.1.0."""

from __future__ import annotations

import json
from dataclasses import asdict

from harness.sarif import SARIF_SCHEMA, sarif_uri
from harness.scan.confirm import CONFIRMED, DROPPED, NOT_REACHED, REACHED
from harness.scan.rules import CODES, Finding
from harness.scan.runner import ScanResult

TOOL = "harness scan"


def guards_line(f: Finding) -> str:
    missing = f"; missing: {', '.join(f.missing)}" if f.missing else ""
    return f"guards: {', '.join(f.guards) or 'none'}{missing}; suggests {f.level}"


def flow_lines(f: Finding) -> list[str]:
    """``path:line: what happens there`` per step, source first, sink last."""
    return [f"{step['path']}:{step['line']}: {step['text']}" for step in f.flow]


def text(result: ScanResult) -> str:
    out = []
    for f in result.findings:
        if not f.counts:
            continue
        out.append(f"{f.path}:{f.line}:{f.col}: {f.code} {f.message}")
        out.append(f"    key: {'; '.join(f.key)}")
        out.append(f"    {guards_line(f)}")
        if f.why:
            out.append(f"    why: {f.why}")
        out += [f"    flow: {line}" for line in flow_lines(f)]
        out += [f"    note: {n}" for n in f.notes]
        if f.audit:
            out.append(f"    check: {f.audit}")
        if f.run:
            out.append(f"    run: {f.run}: {f.run_detail}")
    safe = [f for f in result.findings if f.safe and not f.suppressed]
    for f in safe:  # one line each: a reader sees what was judged safe, and why
        out.append(f"{f.path}:{f.line}:{f.col}: safe ({f.code}): {f.safe}" + (f"; run: {f.run}" if f.run else ""))
    for path, reason in result.skipped:
        out.append(f"{path}: skipped, {reason}")
    out += run_lines(result)
    shown = sum(f.counts for f in result.findings)
    suppressed = sum(bool(f.suppressed) for f in result.findings)
    out.append(f"{shown} finding(s) in {result.files} file(s)"
               + (f", {len(safe)} safe (not counted)" if safe else "")
               + (f", {suppressed} suppressed" if suppressed else "")
               + (f", {len(result.skipped)} file(s) skipped" if result.skipped else ""))
    return "\n".join(out) + "\n"


def run_lines(result: ScanResult) -> list[str]:
    """With --confirm: how the findings fared in the run, and the sanitizer's stale matches the scan missed."""
    if result.run is None:
        return []
    shown = [f for f in result.findings if f.counts]
    tally = ", ".join(f"{sum(f.run == word for f in shown)} {word}" for word in (CONFIRMED, DROPPED, REACHED, NOT_REACHED))
    lines = [f"the run ({' '.join(result.run['command'])}, exit {result.run['exit_status']}, sanitizer verdict "
             f"{result.run['verdict']}): {tally}"]
    missed = result.run["missed"]
    lines += ([f"the sanitizer's stale matches no finding accounts for ({len(missed)}):"] if missed else
              ["every stale match the sanitizer saw is at a finding"])
    return lines + [f"    {line}" for line in missed]


def as_json(result: ScanResult) -> str:
    return json.dumps({
        "files": result.files,
        "findings": [asdict(f) for f in result.findings],
        "skipped": [{"path": p, "reason": r} for p, r in result.skipped],
        **({"run": result.run} if result.run is not None else {}),
    }, indent=2) + "\n"


def sarif(result: ScanResult) -> str:
    codes = list(CODES)
    rules = [{"id": code, "name": code, "shortDescription": {"text": CODES[code]},
              "defaultConfiguration": {"level": "warning"}} for code in codes]
    results = []
    for f in result.findings:
        text_lines = [f.message, f"key: {'; '.join(f.key)}", guards_line(f), *([f"why: {f.why}"] if f.why else []),
                      *([f"safe: {f.safe}"] if f.safe else []), *f.notes]
        if f.audit:
            text_lines.append(f"check: {f.audit}")
        entry = {
            "ruleId": f.code,
            "ruleIndex": codes.index(f.code),
            # A safe one is a check that passed (SARIF's kind "pass" takes level "none").
            **({"kind": "pass", "level": "none"} if f.safe else {"level": "warning"}),
            "message": {"text": "\n".join(text_lines)},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": sarif_uri(f.path)},
                "region": {"startLine": f.line, "startColumn": f.col}}}],
            "properties": {"key": f.key, "guards": f.guards, "missingGuards": f.missing, "suggestedLevel": f.level,
                           **({"audit": f.audit} if f.audit else {}), **({"safe": f.safe} if f.safe else {}),
                           **({"run": f.run, "runDetail": f.run_detail} if f.run else {})},
        }
        if f.flow:
            entry["codeFlows"] = [{"threadFlows": [{"locations": [
                {"location": {"physicalLocation": {"artifactLocation": {"uri": sarif_uri(step["path"])},
                                                   "region": {"startLine": max(step["line"], 1),
                                                              "startColumn": max(step["col"], 1)}},
                              "message": {"text": step["text"]}}}
                for step in f.flow]}]}]
        if f.suppressed:
            entry["suppressions"] = [{"kind": "inSource", "justification": f.suppressed}]
        results.append(entry)
    notifications = [{"level": "warning", "message": {"text": f"skipped, {reason}"},
                      "locations": [{"physicalLocation": {"artifactLocation": {"uri": sarif_uri(path)}}}]}
                     for path, reason in result.skipped]
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": TOOL, "rules": rules}},
            "invocations": [{"executionSuccessful": True, "toolExecutionNotifications": notifications}],
            "results": results,
        }],
    }
    return json.dumps(log, indent=2) + "\n"


FORMATS = {"text": text, "json": as_json, "sarif": sarif}
