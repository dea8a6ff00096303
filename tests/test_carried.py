"""Which state an earlier request left that a later one met (harness.differential.carried): the
jobs are written in tests/carried_cases/jobs.py, each line to be named marked ``# left: JOB`` or
``# read: JOB``; state the result never reads must not be named, and state out of reach is said
to be."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.cpu, pytest.mark.core_model]
ROOT = Path(__file__).resolve().parents[1]
JOBS = ROOT / "tests" / "carried_cases" / "jobs.py"
PROMPTS = {"rewritten_settings": ("a b", "a b c"), "settings_by_position": ("scaled up", "plain"),
           "memo_beside_noise": ("red", "green"), "in_a_closure": ("red", "green"), "independent": ("red", "green"),
           "running_mean": ("red", "green"), "online_scorer": ("learn red", "green"),
           "turn_counter": ("hello", "again"), "precision_switch": ("precise", "plain"),
           "two_settings_among_noise": ("first", "second"), "engine_in_a_cache": ("red", "green"),
           "engine_in_a_class_cache": ("red", "green")}


def marked(kind: str, job: str) -> int:
    """The line of the jobs' file marked ``# kind: job``."""
    lines = [i + 1 for i, text in enumerate(JOBS.read_text().splitlines())
             if re.search(rf"#.*\b{kind}: {job}\b", text)]
    assert len(lines) == 1, (kind, job)
    return lines[0]


@pytest.fixture(scope="module")
def searched(tmp_path_factory) -> dict:
    """Each job's search, run as the check runs it (a job of a process that has imported the code,
    ``repro.warm``), all in one interpreter."""
    folder = tmp_path_factory.mktemp("carried")
    script = ["import sys", "from harness.differential import carried"]
    for name, prompts in PROMPTS.items():
        job = folder / f"{name}.json"
        job.write_text(json.dumps({"call": f"carried_cases.jobs:{name}", "timeout": 120,
                                   "requests": [[0, i, p, 0] for i, p in enumerate(prompts)]}))
        script.append(f"carried.main([{str(job)!r}, {str(folder / f'{name}.out.json')!r}])")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "tests"), str(ROOT)])}
    done = subprocess.run([sys.executable, "-c", "\n".join(script)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return {name: json.loads((folder / f"{name}.out.json").read_text()) for name in PROMPTS}


@pytest.mark.parametrize("job, state, how", [
    ("rewritten_settings", "carried_cases.jobs.SETTINGS.layers", "write"),  # a shorthand resolved in place
    ("settings_by_position", "carried_cases.jobs.Manager._instance.by_position[0]", "remove"),  # in a singleton
    ("memo_beside_noise", "carried_cases.jobs._SEEN['first']", "remove"),  # beside a log and a counter
    ("running_mean", "carried_cases.jobs.RUNNING", "values"),  # a tensor changed in place
    ("online_scorer", "carried_cases.jobs.SCORER.weight", "values"),  # a model's weight, read through the module
    ("turn_counter", "carried_cases.jobs._TURNS.__len__()", "cut"),  # a list that grows
    # set by setattr in a helper, on the instance over its class's: removed, the class's is read again
    ("precision_switch", "carried_cases.jobs.PRECISION.dtype", "remove"),
    # an engine built by the first job and kept in a functools cache: narrowed to the entry deep in it
    ("engine_in_a_cache", "carried_cases.jobs._engine('small').stages[1].blocks[1].memory.by_context['cond']",
     "remove"),
    ("engine_in_a_class_cache",
     "carried_cases.jobs._Engines.load('small').stages[0].blocks[1].memory.by_context['cond']", "remove"),
])
def test_the_state_that_carried_is_named_where_it_was_left_and_where_it_was_read(searched, job, state, how):
    found = searched[job]
    assert found["named"], found
    (named,) = found["state"]  # that and nothing else: not the singleton, not the log, not the counter
    assert (named["state"], named["how"]) == (state, how)
    for site, kind in (("left", "left"), ("read", "read")):
        assert Path(named[site]["path"]) == JOBS and named[site]["line"] == marked(kind, job), (site, named)
    assert named["left"]["request"] == "seed 0 request 0" and named["read"]["request"] == "seed 0 request 1"


def test_two_states_that_both_matter_are_named_and_the_many_entries_nothing_reads_are_not(searched):
    found = searched["two_settings_among_noise"]
    assert found["named"] and found["complete"] and found["differences"] >= 150, found.get("why")
    named = {s["state"]: s for s in found["state"]}
    assert set(named) == {"carried_cases.jobs._FIRST['flag']", "carried_cases.jobs._KNOBS.inner['knob']"}
    flag, knob = named["carried_cases.jobs._FIRST['flag']"], named["carried_cases.jobs._KNOBS.inner['knob']"]
    assert flag["left"]["line"] == marked("left", "two_settings_among_noise") == knob["left"]["line"] - 1
    assert flag["read"]["line"] == knob["read"]["line"] == marked("read", "two_settings_among_noise")


def test_a_singleton_made_on_demand_is_narrowed_to_the_entry_that_mattered(searched):
    # The first search finds that setting the manager back to None (as a fresh process has it) gives
    # the result served alone; the manager the request makes alone has no entry at position 0.
    found = searched["settings_by_position"]
    assert found["differences"] >= 1 and found["trials"] >= 3
    assert found["state"][0]["after"] == "2.0" and found["state"][0]["alone"] is None


def test_state_out_of_reach_is_said_to_be_and_nothing_is_named(searched):
    found = searched["in_a_closure"]
    assert not found["named"] and "was found in the state imported modules reach" in found["why"]


def test_a_job_that_does_not_depend_on_what_was_left_gets_nothing_named(searched):
    found = searched["independent"]  # it leaves a log behind: a difference, never read
    assert not found["named"] and "gave its result served alone" in found["why"]
