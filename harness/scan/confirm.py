"""``scan PATH... --confirm -- COMMAND``: each static finding judged by a run of COMMAND under the
sanitizer (``address-reuse sanitize``), and the sanitizer's findings the reading of the source missed.

A finding is

- *confirmed* where the run met a stale key at it: a stale match compared at a line that uses the
  finding's cache, or in its file with the old key taken on its flow or at one of those lines;
- *stale keys dropped* where the run met stale keys at its line, or on its flow, only in lookups
  marked ``# address-reuse: validated`` that dropped the entry (a guard that works: safe);
- *reached without reuse* where keys were taken on its flow or at its lines (one of them, in its own
  file, was on the stack when a ``data_ptr()`` or ``id()`` was read) or equal keys met there, none stale: the run
  went there, and no address or id came back to it (a trial that says nothing either way);
- *not reached* where no key the sanitizer tracks was taken on its flow (the run never went there, or
  took ids only of objects that cannot be weakly referenced, which the sanitizer does not track).

The sanitizer's stale matches that no finding accounts for are listed apart: what the static
scan missed in the user's own code, a recall check on it.
"""

from __future__ import annotations

import os

from harness.sanitize.report import shown_path
from harness.scan.rules import Finding

CONFIRMED, DROPPED, REACHED, NOT_REACHED = "confirmed", "stale keys dropped", "reached without reuse", "not reached"


def _site(path: str, line: int) -> tuple[str, int]:
    return os.path.realpath(path), int(line)


def _uses(finding: Finding) -> set[tuple[str, int]]:
    """The lines that use the finding's cache (its lookups, stores, tests)."""
    return {_site(finding.path, line) for line in finding.lines or [finding.line]}


def _flow_sites(finding: Finding) -> set[tuple[str, int]]:
    """Its uses, and the lines of its flow in its own file (a helper that reads the address, shared
    by several caches, would say every one of them ran)."""
    here = _site(finding.path, finding.line)[0]
    return {site for step in finding.flow if (site := _site(step["path"], step["line"]))[0] == here} | _uses(finding)


def _accounts_for(uses: set, flow: set, stale: dict) -> bool:
    """Whether the sanitizer's stale match ``stale`` is at a finding (its ``uses`` and ``flow`` sites):
    compared at a line that uses its cache, or in its file with the old key taken on its flow."""
    compared = {_site(c["file"], c["line"]) for c in stale["compared"]}
    if compared & uses:
        return True
    taken = stale["old"]["taken"]
    here = next(iter(uses))[0]
    return bool(taken) and _site(taken[0]["file"], taken[0]["line"]) in flow \
        and any(file == here for file, _ in compared)


def _shown(site: dict) -> str:
    return f"{shown_path(site['file'])}:{site['line']}"


def judge(findings: list[Finding], merged: dict) -> list[str]:
    """Set each finding's ``run`` (and ``run_detail``) from the sanitized run ``merged``; the
    sanitizer's stale matches no finding accounts for, one line each."""
    taken_under = {_site(file, line) for file, line in merged.get("taken_under", [])}
    met_at = {_site(file, line) for file, line in merged.get("met_at", [])}
    validated_at = {_site(file, line) for file, line in merged.get("validated_at", [])}
    ran = met_at | taken_under
    accounted = set()
    for finding in findings:
        if finding.suppressed:
            continue
        uses, flow = _uses(finding), _flow_sites(finding)
        mine = [i for i, stale in enumerate(merged["findings"]) if _accounts_for(uses, flow, stale)]
        accounted.update(mine)
        if mine:
            stale = merged["findings"][mine[0]]
            lookups = dict.fromkeys(_shown(c) for i in mine for c in merged["findings"][i]["compared"])
            finding.run = CONFIRMED
            finding.run_detail = (f"a stale {stale['kind']} key met {sum(merged['findings'][i]['count'] for i in mine)} "
                                  f"time(s) at {', '.join(lookups)}; the old key taken at "
                                  f"{_shown(stale['old']['taken'][0])}, its object {stale['fate']}")
        elif dropped := sorted(flow & validated_at):
            finding.run = DROPPED
            finding.run_detail = (f"stale keys met at {', '.join(f'{shown_path(f)}:{n}' for f, n in dropped)} "
                                  "were dropped by the validated lookup there: safe")
        elif flow & ran:
            finding.run = REACHED
            finding.run_detail = "the run took keys on its flow and met no stale one here"
        else:
            finding.run = NOT_REACHED
            finding.run_detail = ("no key the sanitizer tracks was taken on its flow: the run did not go there, or "
                                  "took the id() of objects that cannot be weakly referenced, which it does not track")
    return [f"{_shown(stale['compared'][0])}: a stale {stale['kind']} key met {stale['count']} time(s), the old key "
            f"taken at {_shown(stale['old']['taken'][0])}: no finding of the scan is there"
            for i, stale in enumerate(merged["findings"]) if i not in accounted]
