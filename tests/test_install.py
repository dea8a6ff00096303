"""The harness as a package in a user's environment: its extras, the hints it prints,
and an install into a second environment that keeps its own diffusers."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from harness import how_to_run
from repro.models import DIFFUSERS_RANGE

tomllib = pytest.importorskip("tomllib", reason="Python 3.11 reads pyproject.toml")

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
OTHER_DIFFUSERS = "0.37.1"  # the oldest release in the tested range; `make test` runs the newest


@pytest.mark.core_model
@pytest.mark.cpu
def test_diffusers_and_the_video_writer_are_extras_with_the_tested_range():
    project = PYPROJECT["project"]
    assert not [d for d in project["dependencies"] if re.match(r"(diffusers|imageio-ffmpeg)\b", d)]
    assert project["optional-dependencies"]["diffusers"] == [f"diffusers{DIFFUSERS_RANGE}"]
    assert project["optional-dependencies"]["video"] == ["imageio-ffmpeg"]
    lowest = re.search(r">=([\d.]+)", DIFFUSERS_RANGE).group(1)
    assert OTHER_DIFFUSERS.startswith(lowest + "."), "the second environment tests the range's lower end"


@pytest.mark.core_model
@pytest.mark.cpu
def test_the_makefile_installs_every_extra():
    """`make test` and `make repro` install what the tests and the real models need; make
    test-all and make hunt add the libraries the hunt drives."""
    installs = [line for line in (ROOT / "Makefile").read_text().splitlines() if "pip install" in line and "-e" in line]
    assert installs, "the Makefile installs the project nowhere"
    extras = [set(re.search(r'"\.\[([\w,]+)\]"', line).group(1).split(",")) for line in installs]
    assert set().union(*extras) == set(PYPROJECT["project"]["optional-dependencies"]), installs
    assert {"test", "diffusers", "video"} in extras and {"hunt"} in extras, installs


@pytest.mark.cpu
def test_the_command_in_the_hints_runs(tmp_path):
    """The command scan's hint prints (``how_to_run``) starts the harness from another folder."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([*shlex.split(how_to_run()), "--help"], capture_output=True, text=True, cwd=ROOT,
                          env=env, timeout=120)
    assert done.returncode == 0 and "audit" in done.stdout, done.stderr[-2000:]


def _pypi_reachable() -> bool:
    try:
        socket.create_connection(("pypi.org", 443), timeout=5).close()
        return True
    except OSError:
        return False


def _run(cmd, **kwargs):
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kwargs)
    assert done.returncode == 0, f"{shlex.join(map(str, cmd))} exited {done.returncode}:\n" \
                                 f"{done.stdout[-2000:]}{done.stderr[-2000:]}"
    return done


def _shared_without_the_hunt_extra(folder: Path) -> Path:
    """This environment's packages as one folder of links, less the libraries of the 'hunt' extra:
    a user's environment has its torch, not the libraries this one holds for the hunt (which
    would meet the user's diffusers and its own huggingface-hub, of another release)."""
    hunt = {re.split(r"[<>=!~;\[ ]", r, maxsplit=1)[0].lower() for r in PYPROJECT["project"]["optional-dependencies"]["hunt"]}
    folder.mkdir()
    for site in (p for p in sys.path if p.endswith("site-packages")):
        for entry in Path(site).iterdir():
            if entry.name.split("-")[0].lower() not in hunt and not (folder / entry.name).exists():
                (folder / entry.name).symlink_to(entry)
    return folder


@pytest.mark.cpu
@pytest.mark.diffusion
@pytest.mark.slow  # a pip install into a fresh environment
def test_installs_into_an_environment_with_another_diffusers_and_leaves_it(tmp_path):
    """A user's environment: their torch (this one's, seen through a .pth file, so nothing
    big is downloaded) and their diffusers, another release of the tested range. pip installs
    the harness there without touching that diffusers, and the installed console command
    serves the real Helios transformer with it."""
    if not _pypi_reachable():
        pytest.skip(f"PyPI is unreachable: cannot install diffusers=={OTHER_DIFFUSERS} into a second environment")
    env_dir = tmp_path / "user-env"
    venv.create(env_dir, with_pip=False)  # pip, setuptools and torch come from this environment
    python = env_dir / "bin" / "python"
    purelib = _run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
    Path(purelib, "shared-with-tests.pth").write_text(str(_shared_without_the_hunt_extra(tmp_path / "shared")))
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the checkout is not on the path

    # The user's environment, with its diffusers, before the harness comes.
    _run([python, "-m", "pip", "install", "-q", f"diffusers=={OTHER_DIFFUSERS}"], env=clean, cwd=tmp_path)
    # The harness from a copy of the sources (pip builds a local project in its folder).
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    for package in ("cache_impl", "repro", "harness"):
        shutil.copytree(ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__"))
    _run([python, "-m", "pip", "install", "-q", "--no-build-isolation", str(source)], env=clean, cwd=tmp_path)

    # The diffusers release installed here and the file `import diffusers` loads, read without
    # importing it (that is torch's start-up; the compare run below imports it and serves with it).
    where = json.loads(_run([python, "-c", "import importlib.metadata, importlib.util, json, harness; print(json.dumps("
                                           "[importlib.metadata.version('diffusers'), "
                                           "importlib.util.find_spec('diffusers').origin, harness.__file__]))"],
                            env=clean, cwd=tmp_path).stdout)
    assert where[0] == OTHER_DIFFUSERS, "installing the harness changed the environment's diffusers"
    assert where[1].startswith(str(env_dir)), f"diffusers imports from {where[1]}, not the environment's own"
    assert where[2].startswith(str(env_dir)), f"harness imported from {where[2]}, not the installed package"

    out = tmp_path / "run"
    done = _run([env_dir / "bin" / "address-reuse", "compare", "--before", "fingerprint", "--after", "weakref",
                 "--model", "helios", "--scenario", "freed_address_reused", "--seed", "0", "--requests", "2",
                 "--steps", "1", "--out", str(out)], env=clean, cwd=tmp_path)
    assert "PASS: after (weakref) contaminated none" in done.stdout, done.stdout[-2000:]
    results = json.loads((out / "results.json").read_text())
    fingerprint = [r for r in results["records"] if r["cache"] == "fingerprint"]
    assert any(r["verdict"] == "contaminated" for r in fingerprint), "the pre-fix cache showed no bug"
