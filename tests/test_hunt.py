"""The hunt (``harness hunt diffusers``): the hook configurations come from the installed
diffusers, every cell gets a definite answer, and every finding gets a standalone script
that fails on the buggy path and passes with the fix. One pytest item per hook with
``--hunt``, so pytest-xdist spreads them (``pytest tests/test_hunt.py --hunt -n 2``); without
it, only the text K/V cache's cell runs."""

from __future__ import annotations

import dataclasses
import json
import re
import sys

import pytest

from harness.__main__ import main
from repro.recipes import LIBRARIES
from harness.differential import hunt
from harness.differential.hunt import Cell, applicability, table_markdown
from harness.differential.hunt import hunt_hook as hunt_hook_cells
from harness.differential.upstream import script_source
from repro import never_reuse
from repro.models import hunt_models

pytestmark = [pytest.mark.cpu]


@pytest.fixture
def diffusers_hooks():
    # Imported by the tests that need it, not at collection: seconds in every pytest worker.
    return pytest.importorskip("diffusers.hooks")


@pytest.mark.core_model
def test_the_hooks_are_read_from_the_installed_package(diffusers_hooks):
    hooks = hunt_models.hook_names()
    configs = {n for n, o in vars(diffusers_hooks).items() if n.endswith("Config") and dataclasses.is_dataclass(o)}
    assert configs and configs <= set(hooks)
    # An apply_* function with a config of its own is that config's row, not a second one.
    assert "apply_first_block_cache" not in hooks and "apply_group_offloading" in hooks
    # Every hook has a recipe or a reason it cannot serve here: none is silently left out.
    assert all(h in hunt_models.RECIPES or h in hunt_models.NOT_APPLICABLE for h in hooks), \
        [h for h in hooks if h not in hunt_models.RECIPES and h not in hunt_models.NOT_APPLICABLE]


@pytest.mark.diffusion
def test_a_hook_on_a_model_without_its_blocks_is_not_applicable_and_says_why(diffusers_hooks):
    why, _ = applicability("wan", "TextKVCacheConfig")  # it hooks NucleusMoE blocks only
    assert why and "hooked no block" in why
    why, places = applicability("nucleusmoe", "TextKVCacheConfig")
    assert why is None and any("text_kv_cache.py" in p for p in places)


@pytest.mark.core_model
def test_the_upstream_script_stands_alone(diffusers_hooks):
    source = script_source("nucleusmoe", "TextKVCacheConfig")
    compile(source, "repro.py", "exec")
    imports = {line.split()[1] for line in source.splitlines() if line.startswith(("import ", "from "))}
    assert imports <= {"ctypes", "sys", "torch", "diffusers.hooks"}, imports
    assert "harness" not in source and "repro.models" not in source


@pytest.mark.core_model
def test_a_library_with_nothing_to_hunt_is_one_line_and_exit_2(tmp_path, capsys):
    with pytest.raises(SystemExit) as exited:
        main(["hunt", "numpy", "--out", str(tmp_path / "hunt")])
    err = capsys.readouterr().err.strip()
    assert exited.value.code == 2 and len(err.splitlines()) == 1, err
    assert err.startswith("python -m harness hunt: error: nothing to hunt in 'numpy'"), err
    assert not (tmp_path / "hunt").exists()


@pytest.mark.core_model
def test_the_table_names_every_hook_and_model():
    cells = [Cell("A", "wan", "clean", "with reset: clean"), Cell("A", "nucleusmoe", "not served", "x"),
             Cell("B", "wan", "not applicable", "needs a | process group"),
             Cell("B", "nucleusmoe", "address-dependent", "with the reset per request: clean",
                  sites=["diffusers/hooks/x.py:9 (key taken at diffusers/hooks/x.py:3)"]),
             Cell("C", "wan", "carries state", "with the reset per request: clean")]
    table = table_markdown(cells, ["wan", "nucleusmoe"])
    assert table.count("\n") == 5 and "a / process group" in table
    # a finding's cell says where, or that no place was named
    assert "**address-dependent** at diffusers/hooks/x.py:9 (key taken at diffusers/hooks/x.py:3); with" in table
    assert "**carries state** at no place named; with" in table


@pytest.mark.core_model
def test_only_a_difference_the_hook_can_explain_is_a_finding():
    # A check that could not run, or a model that differs from itself, gets no upstream report.
    for word, finding, unchecked in [("address-dependent", True, False), ("carries state", True, False),
                                     ("address-dependent, carries state", True, False), ("failed", False, True),
                                     ("nondeterministic", False, True), ("clean", False, False),
                                     ("inconclusive", False, False), ("not applicable", False, False)]:
        cell = Cell("A", "wan", word)
        assert (cell.finding, cell.unchecked) == (finding, unchecked), word


needs_asan = pytest.mark.skipif(never_reuse.find_library("asan") is None, reason="libasan not found")


# Where a hook's state that outlives a request is read by the next request, and where an earlier one
# left it: (file, what the line reads) for each (line numbers move between versions; the text does not).
HOOK_STATE = {
    # a block's step counter, not reset: the next request counts on from where the last one stopped
    "FasterCacheConfig": (("diffusers/hooks/faster_cache.py", "self.state.iteration"),
                          ("diffusers/hooks/faster_cache.py", "self.state.iteration += 1")),
    "PyramidAttentionBroadcastConfig": (("diffusers/hooks/pyramid_attention_broadcast.py", "self.state.iteration"),
                                        ("diffusers/hooks/pyramid_attention_broadcast.py", "self.state.iteration += 1")),
    # the state kept per cache context, made by the first request and handed to the next as it is
    "FirstBlockCacheConfig": (("diffusers/hooks/hooks.py", "return self._state_cache[name]"),
                              ("diffusers/hooks/hooks.py", "self._state_cache[name] = ")),
    "TaylorSeerCacheConfig": (("diffusers/hooks/hooks.py", "return self._state_cache[name]"),
                              ("diffusers/hooks/hooks.py", "self._state_cache[name] = ")),
}


@needs_asan
@pytest.mark.diffusion
@pytest.mark.slow  # about 40 s: a real diffusers model through two differential checks and the upstream scripts
def test_hunt_cell(diffusers_hooks, hunt_hook, tmp_path):
    if hunt_hook not in hunt_models.hook_names():
        pytest.skip(f"the installed diffusers ships no {hunt_hook}")
    cells = hunt_hook_cells(hunt_hook, list(hunt_models.MODELS), tmp_path, every_model=False,
                            progress=lambda line: None)
    served = [c for c in cells if c.outcome not in ("not applicable", "not served")]
    assert len(served) <= 1
    for c in cells:
        assert c.outcome != "failed", (c.hook, c.model, c.reasons)
        if c.outcome == "not applicable":
            assert c.why
    for c in served:
        if not c.finding:
            continue
        # A finding must be fixed by the documented reset, and shown so by a script outside this project.
        assert c.verdicts["reset"] == "clean", c.reasons
        from harness.differential.upstream import write_upstream
        folder = write_upstream(c, tmp_path / "upstream")
        assert c.upstream["buggy_exit"] == 1, (folder / "run-buggy.txt").read_text()
        assert "AssertionError" in (folder / "run-buggy.txt").read_text()
        assert c.upstream["fixed_exit"] == 0, (folder / "run-fixed.txt").read_text()
        if c.hook == "TextKVCacheConfig":  # keyed by data_ptr(): the sanitizer names the lookup in diffusers' hook
            lookup = [p for p in c.localised if "a stale address match, confirmed" in p]
            assert lookup and "diffusers/hooks/text_kv_cache.py" in lookup[0].split(": a stale")[0], c.localised
            assert "encoder_hidden_states.data_ptr()" in lookup[0]
            assert lookup[0].split("address: ", 1)[1] in (folder / "README.md").read_text()
        if c.outcome.startswith("carries state"):  # where the next request reads the hook's state, and where it was left
            (read_file, read_text), (left_file, left_text) = HOOK_STATE[c.hook]
            named = re.findall(r"(\S+:\d+): state an earlier request left, (\S+) .*?, is read here; it was left at "
                               r"(\S+:\d+)", " ".join(c.localised))
            assert named and all(read_file in read and read_text in _source_line(read) and left_file in left
                                 and left_text in _source_line(left) for read, _, left in named), (c.localised, named)
            # the README names the state as the script's own code reaches it
            readme = (folder / "README.md").read_text()
            assert all(f"{read}: state an earlier request left, transformer." in readme for read, _, _ in named), readme


# --- a library's workflows: repro.recipes ----------------------------------------------------


@pytest.mark.core_model
def test_hunt_options_for_diffusers_hooks_are_refused_for_a_library_of_recipes(tmp_path, capsys):
    with pytest.raises(SystemExit) as exited:
        main(["hunt", "torch", "--hook", "X", "--out", str(tmp_path / "hunt")])
    err = capsys.readouterr().err.strip()
    assert exited.value.code == 2 and len(err.splitlines()) == 1 and "a hunt in torch runs its recipes" in err, err
    assert not (tmp_path / "hunt").exists()


def recipes_of(library: str):
    """The library's recipe module; the test is skipped where the library is not installed."""
    from repro.recipes import load

    pytest.importorskip(library)
    return load(library)


@pytest.mark.core_model
@pytest.mark.parametrize("library", list(LIBRARIES))
def test_every_recipe_names_places_scan_proposes_and_runs_as_a_call(library):
    from repro.callable import resolve_call
    from repro.recipes import MODES

    module = recipes_of(library)
    assert module.LIBRARY == library
    proposed = {":".join(p.split(":", 2)[:2]) for p in hunt.proposed_places(library, module.SCAN)}
    for recipe in module.RECIPES:
        assert recipe.drives, recipe.__name__
        for place in set(recipe.drives) - proposed:  # read in the source: a line of code in the installed package
            assert _source_line(f"{library}/{place}").strip(), place
        for mode in MODES:
            assert callable(resolve_call(f"{module.__name__}:{recipe.__name__}/{mode}"))


@pytest.mark.core_model
@pytest.mark.parametrize("library", list(LIBRARIES))
def test_every_recipe_script_stands_alone_without_the_projects_marks(library):
    import ast

    from harness.differential.upstream import library_script_source

    module = recipes_of(library)
    for recipe in module.RECIPES:
        tree = ast.parse(library_script_source(module, recipe, "0", "carries state"))
        imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        named = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        assert not any(m and m.startswith("repro") for m in imported), (recipe.__name__, imported)
        assert not named & {"drives", "place", "as_calls"}, recipe.__name__  # marks spanning lines are gone whole
        assert recipe.__name__ in {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}


@pytest.mark.core_model
def test_a_place_is_found_by_its_code_where_a_release_moved_it(tmp_path, monkeypatch):
    from repro.recipes import place

    package = tmp_path / "movinglib"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "core.py").write_text("def put(m, k):\n    m[k] = 1\n\ndef get(m, k):\n    return m[k]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert place("movinglib", "core.py", "m[k] = 1") == "core.py:2"
    assert place("movinglib", "core.py", "def get(m, k):\nreturn m[k]") == "core.py:4"
    (package / "core.py").write_text("# a release adds a line\ndef put(m, k):\n    m[k] = 1\n")
    assert place("movinglib", "core.py", "m[k] = 1") == "core.py:3"
    with pytest.raises(LookupError, match="is not there"):
        place("movinglib", "core.py", "m[k] = 2")
    (package / "core.py").write_text("m[k] = 1\nm[k] = 1\n")
    with pytest.raises(LookupError, match=r"found 2 times, not once \(at lines \[1, 2\]\)"):
        place("movinglib", "core.py", "m[k] = 1")


@pytest.mark.core_model
def test_a_library_that_is_not_installed_is_one_line_naming_what_to_install(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "bitsandbytes", None)  # import bitsandbytes raises ImportError
    monkeypatch.delitem(sys.modules, "repro.recipes.bitsandbytes_workflows", raising=False)
    with pytest.raises(SystemExit) as exited:
        main(["hunt", "bitsandbytes", "--out", str(tmp_path / "hunt")])
    err = capsys.readouterr().err.strip()
    assert exited.value.code == 2 and len(err.splitlines()) == 1, err
    assert "cannot import bitsandbytes" in err and "pip install 'bitsandbytes'" in err, err
    assert not (tmp_path / "hunt").exists()


def _stand_in(library: str, files: dict, tmp_path, monkeypatch, request) -> None:
    """A package named ``library`` of ``files`` ({path: text}) first on the path, none of the real one
    imported; and none of the stand-in left imported after the test, where a later one would take it
    for the installed library."""
    for path, text in files.items():
        (tmp_path / library / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / library / path).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))

    def imported() -> list:
        return [m for m in sys.modules if m in (library, f"repro.recipes.{library}_workflows")
                or m.startswith(f"{library}.")]
    for name in imported():
        monkeypatch.delitem(sys.modules, name)
    # runs before monkeypatch puts the real modules back: its teardown was registered first
    request.addfinalizer(lambda: [sys.modules.pop(name) for name in imported()])


@pytest.mark.core_model
def test_a_library_whose_import_fails_is_one_line_saying_so(tmp_path, capsys, monkeypatch, request):
    # Installed, but its import raises (as transformers does beside a huggingface-hub of another release).
    _stand_in("peft", {"__init__.py": 'raise RuntimeError("huggingface-hub>=2.4.0 is required")\n'},
              tmp_path, monkeypatch, request)
    with pytest.raises(SystemExit) as exited:
        main(["hunt", "peft", "--out", str(tmp_path / "hunt")])
    err = capsys.readouterr().err.strip()
    assert exited.value.code == 2 and len(err.splitlines()) == 1, err
    assert "cannot import peft: it is installed, but importing it raised RuntimeError: huggingface-hub" in err, err
    assert not (tmp_path / "hunt").exists()


@pytest.mark.core_model
def test_a_release_without_the_code_a_recipe_drives_is_one_line_naming_it(tmp_path, capsys, monkeypatch, request):
    # A stand-in bitsandbytes whose optim/optimizer.py lacks the lines the recipes name (as older
    # releases of accelerate lack one hooks.py line its recipes drive); its recipes need no other library.
    _stand_in("bitsandbytes", {"__init__.py": "", "optim/__init__.py": "",
                               "optim/optimizer.py": "self.mng.pid2config = {}\n"}, tmp_path, monkeypatch, request)
    with pytest.raises(SystemExit) as exited:
        main(["hunt", "bitsandbytes", "--out", str(tmp_path / "hunt")])
    err = capsys.readouterr().err.strip()
    assert exited.value.code == 2 and len(err.splitlines()) == 1, err
    assert "the bitsandbytes recipes do not fit the installed release: bitsandbytes/optim/optimizer.py:" in err, err
    assert "is not there" in err and not (tmp_path / "hunt").exists()


@pytest.mark.core_model
def test_accelerates_tied_params_map_goes_stale_on_a_load_and_the_sanitizer_names_the_lookup():
    # The hunt's cell shows it only when glibc hands the freed weight's block to a later weight
    # (most runs, not all); twenty loads under the sanitizer meet it every time.
    from test_sanitize import _sanitize

    recipes_of("accelerate")
    shipped, fixed = (_sanitize("--", sys.executable, "accelerate_tied_loads.py", *how) for how in ((), ("fix",)))
    assert shipped.returncode == 1, shipped.stderr[-2000:]
    lookup = re.search(r"matched at \S*accelerate/utils/modeling\.py:(\d+) in set_module_tensor_to_device", shipped.stderr)
    assert lookup and "tied_params_map" in _source_line(f"accelerate/utils/modeling.py:{lookup[1]}"), shipped.stderr[-2000:]
    assert fixed.returncode == 0 and "no stale address match" in fixed.stderr, fixed.stderr[-2000:]
    assert fixed.stdout.strip() == "0 of 20 loads wrong"


# What each library's hunt must find, per recipe: the verdict with no reset, and what the source
# lines of the named places read (line numbers move between versions; what is written there does
# not): for a stale lookup, (its file, its line's text) and (the file and text of the line its key
# was taken at); for state kept under a key that is no address, where the traced runs part.
HUNT_FINDINGS = {
    "torch": {
        "grad_scaler_trials": ("address-dependent", ("torch/amp/grad_scaler.py", "_per_optimizer_states[id(optimizer)]"),
                               ("torch/amp/grad_scaler.py", "_per_optimizer_states[id(optimizer)]")),
        "parametrized_checkpoints": ("address-dependent", ("torch/nn/utils/parametrize.py", "_cache.get(key)"),
                                     ("torch/nn/utils/parametrize.py", "key = (id(module), tensor_name)")),
        # stale (address, version) keys are met, and skipped: what they name was saved by a graph that is gone
        "saved_tensor_mutations": ("clean", (None, None), None),
    },
    "bitsandbytes": {
        "frozen_layer_trials": ("address-dependent", ("bitsandbytes/optim/optimizer.py", "pid2config[id(p)]"),
                                ("bitsandbytes/optim/optimizer.py", "self.pid2config[id(p)] = key_value_dict")),
        # carried: where the next model's optimizer reads the setting, and where the first model's left it
        "embedding_sweep": ("carries state", ("bitsandbytes/optim/optimizer.py", "(gindex, pindex) in self.mng.index2config"),
                            ("bitsandbytes/optim/optimizer.py", "self.mng.index2config[(gindex, pindex)] = ")),
    },
    "accelerate": {
        # The map is seeded by the recipe, as dispatch_model seeds it: the key is taken there. The
        # check sees it only where glibc hands the freed weight's block to a later weight, which it
        # does in most runs, not all (a clean cell then; the sanitizer test above meets it always).
        "tied_checkpoint_loads": (("address-dependent", "clean"), ("accelerate/utils/modeling.py", "tied_params_map"),
                                  ("repro/recipes/accelerate_workflows.py", ".data_ptr(): {}")),
        "offloaded_models": ("clean", (None, None), None),
    },
    "transformers": {"detr_sweep": ("clean", (None, None), None)},
    # carried: where the next model's wrapping first reads the config's target modules, and where the
    # first model's resolved "all-linear" into them
    "peft": {"all_linear_sweep": ("carries state", ("peft/tuners/tuners_utils.py", 'getattr(peft_config, "target_modules"'),
                                  ("peft/tuners/tuners_utils.py", "peft_config.target_modules = "))},
}


def _source_line(site: str) -> str:
    import linecache
    import site as site_packages
    from pathlib import Path

    path, line = site.rsplit(":", 1)
    for root in [*site_packages.getsitepackages(), str(Path(__file__).parents[1])]:
        if (text := linecache.getline(f"{root}/{path}", int(line))):
            return text
    raise AssertionError(f"no source line at {site}")


@needs_asan
@pytest.mark.slow  # about 90 s a library: two recipes through six differential checks, two scripts run both ways
@pytest.mark.parametrize("library", list(HUNT_FINDINGS))
def test_hunt_names_each_finding_where_it_is_and_the_reset_and_the_fix_clean(library, tmp_path, capsys):
    module = recipes_of(library)
    code = main(["hunt", library, "--out", str(tmp_path / "hunt")])
    printed = capsys.readouterr().out
    results = json.loads((tmp_path / "hunt" / "results.json").read_text())
    cells = {c["hook"]: c for c in results["cells"]}
    assert set(cells) == {r.__name__ for r in module.RECIPES}
    assert code == (hunt.EXIT_FINDINGS if any(Cell(**c).finding for c in cells.values()) else 0), printed
    for recipe, (verdict, (path, text), key) in HUNT_FINDINGS[library].items():
        cell = cells[recipe]
        fix = {"fixed": "clean"} if getattr(module, recipe).fix else {}
        accepted = verdict if isinstance(verdict, tuple) else (verdict,)
        assert cell["verdicts"]["no-reset"] in accepted, cell["reasons"]
        assert cell["verdicts"] == {"no-reset": cell["verdicts"]["no-reset"], "reset": "clean", **fix}, cell["reasons"]
        if cell["verdicts"]["no-reset"] == "clean":
            assert not cell["upstream"]
            continue
        row = next(line for line in printed.splitlines() if line.startswith(f"| {recipe} |"))
        named = key and re.findall(rf"({re.escape(path)}:\d+) \((?:key taken|left) at ({re.escape(key[0])}:\d+)", row)
        if key and not named and isinstance(verdict, tuple):  # seen by chance: the sanitizer's re-runs may not meet it
            assert "the runs part at" in row or "not named: the sanitizer's runs met no stale key" in row, row
        elif key:  # the stale lookup and where its key was taken from the object that is gone; or where
            # state an earlier job left is read, and where it was left
            assert named and any(text in _source_line(lookup) and key[1] in _source_line(taken)
                                 for lookup, taken in named), (row, named)
        else:
            raise AssertionError(f"{recipe}: a finding is expected with both its sites")
        # Its script for upstream (torch and the library only) fails as shipped and passes with the fix.
        folder = tmp_path / "hunt" / "upstream" / recipe
        assert (cell["upstream"]["buggy_exit"], cell["upstream"]["fixed_exit"]) == (1, 0), \
            (folder / "run-buggy.txt").read_text() + (folder / "run-fixed.txt").read_text()
        assert "AssertionError" in (folder / "run-buggy.txt").read_text()
        script = (folder / "repro.py").read_text()
        assert "repro" not in script.replace("repro.py", "") and "harness" not in script
    if library == "torch":  # every place scan proposes is driven, and the table says so
        assert not results["undriven"] and "Every place scan proposes that can be reached here is driven." in printed
    assert (tmp_path / "hunt" / "table.md").read_text().startswith(f"# Hunt: {library} ")
