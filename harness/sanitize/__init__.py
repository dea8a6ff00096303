"""A runtime sanitizer for address and identity keys (docs/sanitize.md).

Three ways to use it:

- ``address-reuse sanitize [options] -- COMMAND [ARGS...]`` runs any command with tracking on
  in every Python process it starts (:mod:`harness.sanitize.command`);
- ``pytest --address-sanitize``: findings per test, a terminal summary section, and
  ``--address-sanitize-fail`` to fail the test that produced one (:mod:`harness.pytest_plugin`);
- in Python, for a notebook or a server's debug mode::

      from harness.sanitize import sanitizing
      with sanitizing() as run:
          serve_two_requests()
      print(run.text())          # or run.findings, run.verdict

Lookups that reject a stale entry after matching it are marked with
``# address-reuse: validated`` on the line, or run inside ``with validated():``.

This module imports nothing heavy: the runtime patches torch only once the process imports it.
"""

from __future__ import annotations

from harness.sanitize import runtime
from harness.sanitize.runtime import PRAGMA, Address, validated

__all__ = ["PRAGMA", "Address", "Run", "sanitizing", "validated"]


class Run:
    """What a :func:`sanitizing` block saw: its own matches and counts, not the process's."""

    def __init__(self, merged: dict):
        self.data = merged

    @property
    def findings(self) -> list[dict]:
        return self.data["findings"]

    @property
    def verdict(self) -> str:
        """``stale``, ``clean`` (no match, and addresses or ids came back) or ``inconclusive``."""
        return self.data["verdict"]

    def text(self) -> str:
        from harness.sanitize.report import text
        return text(self.data)


def difference(before: dict, after: dict) -> dict:
    """What happened between two :func:`runtime.snapshot` calls of one process."""
    from harness.sanitize.report import merge

    seen = {_places(f): f["count"] for f in before["findings"]}
    compared_before = {(_places(f), c["file"], c["line"]): c["count"] for f in before["findings"] for c in f["compared"]}
    findings = []
    for finding in after["findings"]:
        grown = finding["count"] - seen.get(_places(finding), 0)
        if grown <= 0:
            continue
        sites = []
        for site in finding["compared"]:
            count = site["count"] - compared_before.get((_places(finding), site["file"], site["line"]), 0)
            if count > 0:
                sites.append(dict(site, count=count))
        findings.append(dict(finding, count=grown, compared=sites))
    delta = {k: after[k] - before[k] for k in ("keys_taken", "came_back", "validated")}
    return merge([dict(delta, findings=findings)])


def _places(finding: dict) -> tuple:
    """Where the two keys were taken: what a finding is deduplicated by."""
    return tuple(tuple((f["file"], f["line"]) for f in finding[key]["taken"]) for key in ("old", "new"))


class sanitizing:
    """``with sanitizing(label) as run:`` tracks addresses and ids in this process for the
    block; ``run`` holds what the block saw once it ends. Nested blocks and a sanitizer that is
    already on (``address-reuse sanitize``, the pytest option) are fine: each block reports its
    own share."""

    def __init__(self, label: str | None = None):
        self.label = label
        self.run: Run | None = None

    def __enter__(self) -> Run:
        self.previous_label = runtime._state.label
        runtime.start(self.label)
        self.before = runtime.snapshot()
        self.run = Run({"findings": [], "verdict": "inconclusive"})
        return self.run

    def __exit__(self, *exc) -> bool:
        runtime.settle()
        after = runtime.snapshot()
        runtime.set_label(self.previous_label)
        runtime.stop()
        self.run.data = difference(self.before, after)
        return False
