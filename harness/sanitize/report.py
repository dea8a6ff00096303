"""What a sanitized run found: the per-process data merged, a verdict, and the three outputs
(text for stderr, JSON, SARIF 2.1.0 with a code flow per finding: taken, freed, taken again,
matched)."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

from harness.files import write_atomic
from harness.sarif import SARIF_SCHEMA, sarif_uri

__all__ = ["FORMATS", "merge", "read_folder", "summary", "text", "verdict", "write_atomic"]

TOOL = "address-reuse sanitize"
RULE = "stale-address-match"

# Verdicts and their exit codes (also docs/sanitize.md and the command's --help).
EXIT_CLEAN = 0  # no stale match, and addresses or ids did come back: the run could have shown one
EXIT_STALE = 1  # a stale address match
EXIT_USAGE = 2  # bad usage, or the command cannot start
EXIT_INCONCLUSIVE = 3  # no stale match, but no tracked address or id ever came back: nothing was tested
EXIT_COMMAND_FAILED = 4  # the command itself failed (no stale match): its status is said in one line
VERDICTS = {"stale": EXIT_STALE, "clean": EXIT_CLEAN, "inconclusive": EXIT_INCONCLUSIVE}


def merge(snapshots: list[dict]) -> dict:
    """One process's data or many (a command's children): counters summed, findings merged by
    the places the two keys were taken, their comparison sites and counts added up."""
    merged = {"processes": len(snapshots), "keys_taken": 0, "came_back": 0, "validated": 0, "recycled": 0,
              "findings": []}
    by_places: dict[str, dict] = {}
    ran: dict[str, set] = {"taken_under": set(), "met_at": set(), "validated_at": set()}  # file:line sites
    for snap in snapshots:
        for counter in ("keys_taken", "came_back", "validated", "recycled"):
            merged[counter] += snap.get(counter, 0)
        for sites, kept_sites in ran.items():
            kept_sites.update(tuple(site) for site in snap.get(sites, []))
        for finding in snap.get("findings", []):
            key = json.dumps([finding["old"]["taken"], finding["new"]["taken"]], sort_keys=True)
            kept = by_places.get(key)
            if kept is None:
                by_places[key] = copy.deepcopy(finding)
                continue
            kept["count"] += finding["count"]
            for label in finding["labels"]:
                if label not in kept["labels"]:
                    kept["labels"].append(label)
            for site in finding["compared"]:
                same = [c for c in kept["compared"] if (c["file"], c["line"]) == (site["file"], site["line"])]
                if same:
                    same[0]["count"] += site["count"]
                    same[0]["marked_but_kept"] |= site["marked_but_kept"]
                else:
                    kept["compared"].append(dict(site))
    merged["findings"] = sorted(by_places.values(), key=lambda f: -f["count"])
    merged.update({sites: sorted(kept_sites) for sites, kept_sites in ran.items()})
    merged["verdict"] = verdict(merged)
    return merged


def verdict(merged: dict) -> str:
    if merged["findings"]:
        return "stale"
    return "clean" if merged["came_back"] else "inconclusive"


def read_folder(folder: Path) -> list[dict]:
    """The data files the processes of one run wrote (a file cut short by a killed process is skipped)."""
    snapshots = []
    for path in sorted(Path(folder).glob("*.json")):
        try:
            snapshots.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue
    return snapshots


# --- text ----------------------------------------------------------------------------------------


def shown_path(path: str) -> str:
    """A path as a reader finds it: relative under the working folder, from the package down
    inside an installed environment."""
    try:
        relative = os.path.relpath(path)
        if not relative.startswith(".."):
            return relative
    except ValueError:
        pass
    for marker in ("site-packages/", "dist-packages/"):
        if marker in path:
            return path.split(marker, 1)[1]
    return path


def _object(about: dict) -> str:
    if "shape" in about:
        return f"a tensor {tuple(about['shape'])} {about['dtype'].replace('torch.', '')} on {about['device']}"
    if "nbytes" in about:
        return f"a {about['type']} of {about['nbytes']} bytes on {about['device']}"
    return f"a {about.get('type', 'object')}"


# Frames of the test runner below a test: where a key was taken ends at the test function.
RUNNER_FRAMES = ("/_pytest/", "/pluggy/")


def _stack_lines(frames: list[dict]) -> list[str]:
    shown = []
    for f in frames:
        if any(marker in f["file"] for marker in RUNNER_FRAMES):
            break
        shown.append(f)
    return [f"      #{i} {shown_path(f['file'])}:{f['line']} in {f['function']}" + (f"   {f['source']}" if f["source"] else "")
            for i, f in enumerate(shown)]


def describe(finding: dict) -> list[str]:
    """One finding as ASan prints one: what, where they met, where each key was taken."""
    what = "an id()" if finding["kind"] == "id" else "a data_ptr()"
    times = f", {finding['count']} times" if finding["count"] > 1 else ""
    lines = [f"STALE ADDRESS MATCH: {what} key of an object that is gone met a new one of equal value "
             f"{finding['value']:#x}{times}"]
    for site in finding["compared"]:
        kept = "  (marked validated, but the stale entry was kept)" if site["marked_but_kept"] else ""
        lines.append(f"  matched at {shown_path(site['file'])}:{site['line']} in {site['function']}"
                     f" ({site['count']}x){kept}" + (f"\n      {site['source']}" if site["source"] else ""))
    lines.append(f"  old key taken from {_object(finding['old']['object'])}, since {finding['fate']}:")
    lines += _stack_lines(finding["old"]["taken"])
    lines.append(f"  new key taken from {_object(finding['new']['object'])}:")
    lines += _stack_lines(finding["new"]["taken"])
    if finding["labels"]:
        lines.append(f"  in: {', '.join(finding['labels'])}")
    return lines


def summary(merged: dict) -> str:
    counts = (f"{merged['keys_taken']:,} keys taken, {merged['came_back']:,} addresses or ids came back, "
              f"{merged['validated']:,} stale matches on validated lookups that dropped the entry"
              + (f"; {merged['recycled']:,} ids of dead objects handed to new ones (--recycle-ids)"
                 if merged.get("recycled") else ""))
    found = merged["findings"]
    if found:
        matches = sum(f["count"] for f in found)
        return f"{TOOL}: {matches} stale address match(es) at {len(found)} place(s); {counts}"
    if merged["verdict"] == "clean":
        return f"{TOOL}: no stale address match; {counts}"
    return (f"{TOOL}: INCONCLUSIVE: no tracked address or id ever came back, so a stale match could not "
            f"happen; {counts}")


def text(merged: dict) -> str:
    lines = []
    for finding in merged["findings"]:
        lines += describe(finding) + [""]
    lines.append(summary(merged))
    return "\n".join(lines) + "\n"


# --- machine-readable ---------------------------------------------------------------------------


def as_json(merged: dict) -> str:
    return json.dumps(merged, indent=2) + "\n"


def _location(frame: dict, message: str) -> dict:
    return {"physicalLocation": {"artifactLocation": {"uri": sarif_uri(frame["file"])},
                                 "region": {"startLine": max(frame["line"], 1)}},
            "message": {"text": message}}


def sarif(merged: dict) -> str:
    results = []
    for finding in merged["findings"]:
        old, new, matched = finding["old"], finding["new"], finding["compared"][0]
        flow = []
        if old["taken"]:
            flow.append({"location": _location(old["taken"][0], f"old key taken from {_object(old['object'])}")})
        flow.append({"location": {"message": {"text": f"the old referent: {finding['fate']}"}}})
        if new["taken"]:
            flow.append({"location": _location(new["taken"][0], f"new key taken from {_object(new['object'])}")})
        flow.append({"location": _location(matched, "the two keys met here: a stale address match")})
        results.append({
            "ruleId": RULE,
            "ruleIndex": 0,
            "level": "error",
            "message": {"text": "\n".join(describe(finding))},
            "locations": [_location(site, f"matched {site['count']}x") for site in finding["compared"]],
            "relatedLocations": [dict(_location(frame, "old key taken here"), id=i)
                                 for i, frame in enumerate(old["taken"])],
            "codeFlows": [{"threadFlows": [{"locations": flow}]}],
            "properties": {"kind": finding["kind"], "count": finding["count"], "labels": finding["labels"],
                           "fate": finding["fate"]},
        })
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": TOOL, "rules": [{
                "id": RULE, "name": "StaleAddressMatch",
                "shortDescription": {"text": "an address or id of an object that is gone met a new one of "
                                             "equal value in a comparison (a cache lookup)"},
                "defaultConfiguration": {"level": "error"}}]}},
            "invocations": [{"executionSuccessful": True}],
            "results": results,
            "properties": {k: merged[k] for k in ("verdict", "keys_taken", "came_back", "validated", "recycled",
                                                  "processes")},
        }],
    }
    return json.dumps(log, indent=2) + "\n"


FORMATS = {"text": text, "json": as_json, "sarif": sarif}

