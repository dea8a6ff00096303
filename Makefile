# Two commands do all set-up: `make repro` and `make test`.
#
#   TORCH_SPEC=...   what pip installs for torch in the fresh .venv (default: the CPU
#                    build pinned below; e.g. TORCH_SPEC='torch==2.13.0' or a CUDA wheel)
#   PY=/path/python  use an existing environment (a GPU box that already has torch)
#                    instead of .venv; the project and its test extra are installed into it
PYTHON ?= python3
VENV ?= .venv
TORCH_SPEC ?= torch==2.13.0
PYTEST_ARGS ?=
# setuptools warns on every editable install that a folder named like a package could
# shadow it; the repo is laid out that way on purpose. That one warning only.
QUIET_EDITABLE := PYTHONWARNINGS="ignore:Editable installation"

ifdef PY
ENV_PY := $(PY)
STAMP := .env-external.stamp
ACTIVATE_HINT :=
else
ENV_PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
ACTIVATE_HINT := (or activate it first: . $(VENV)/bin/activate)
endif

# Reinstall when pyproject.toml changes or TORCH_SPEC differs from the last install.
ifneq ($(shell cat $(STAMP) 2>/dev/null),$(TORCH_SPEC) $(PY))
$(STAMP): FORCE
endif

.PHONY: env test test-all repro report bench selfcheck hunt FORCE
env: $(STAMP)

$(STAMP): pyproject.toml
ifdef PY
	$(PY) -c "import torch" || { echo "error: PY=$(PY) has no torch; install it there or drop PY to use .venv"; exit 2; }
	$(QUIET_EDITABLE) $(PY) -m pip install -q -e ".[test,diffusers,video]"
else
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q --upgrade pip
	$(VENV)/bin/python -m pip install -q "$(TORCH_SPEC)"
	$(QUIET_EDITABLE) $(VENV)/bin/python -m pip install -q -e ".[test,diffusers,video]"
endif
	echo "$(TORCH_SPEC) $(PY)" > $@
	@echo "the tools: $(dir $(ENV_PY))address-reuse ... or $(ENV_PY) -m harness ... $(ACTIVATE_HINT)"

# The libraries `hunt` drives besides torch and diffusers (the 'hunt' extra: bitsandbytes,
# accelerate, transformers, peft), installed for the hunt and for make test-all, which runs their
# tests. Not for make test: diffusers imports accelerate, bitsandbytes and transformers wherever
# they are installed, about 2.5 s more in each of the many processes that import it; their tests
# skip there, and say so.
HUNT_STAMP := $(if $(PY),.env-external-hunt.stamp,$(VENV)/.hunt-installed)
$(HUNT_STAMP): $(STAMP)
	$(QUIET_EDITABLE) $(ENV_PY) -m pip install -q -e ".[hunt]"
	touch $@

# Bytecode caches on for the run, even where the environment sets PYTHONDONTWRITEBYTECODE:
# the suite starts many Python processes (workers, command lines, snippets, pytest in pytest),
# and without __pycache__ each compiles every module it imports and pytest rewrites every test
# and plugin module again, run after run (collecting the suite, under load: 4.1 CPU-s without, 2.4 with).
#
# make test leaves out the tests marked slow (end to end, 10 s or more each on a 2-core machine);
# make test-all, which CI runs, includes them. A -m in PYTEST_ARGS replaces the default selection.
TEST_MARKERS ?= not slow
test: $(STAMP)
	PYTHONDONTWRITEBYTECODE= $(ENV_PY) -m pytest -n auto --dist worksteal -m "$(TEST_MARKERS)" $(PYTEST_ARGS)

test-all: $(HUNT_STAMP)
	$(MAKE) test TEST_MARKERS=

# Ctrl-C: a tool prints its one line and exits 130 (harness/interrupt.py); make would add its own
# "*** [target] Error 130" line and exit 2. So on 130 the recipe passes the interrupt on to make,
# which then stops without a word and exits 130, as after any Ctrl-C. The recipe's shell traps
# SIGINT (its child still gets the default), so that a Ctrl-C ends the tool, not the shell around it;
# and it ends only once make is in its SIGINT handler (make's /proc status no longer lists SIGINT as
# caught): a recipe reaped before that would count as a success. Where make ignores SIGINT (started
# from a background job) or /proc cannot tell, the exit stays 130 with make's line.
# Usage: $(call interruptible,COMMAND) as the recipe; make still shows COMMAND before running it.
interruptible = @$(info $(1))trap : INT; $(1) || { code=$$?; [ $$code -eq 130 ] && $(make_interrupted) && exit 0; \
	exit $$code; }
make_interrupted = [ -r /proc/$$PPID/status ] && ! $(call make_sigint,Ign) && kill -INT $$PPID && \
	for _ in $$(seq 100); do $(call make_sigint,Cgt) || break; sleep 0.1; done && ! $(call make_sigint,Cgt)
make_sigint = grep -q '^Sig$(1):.*[2367abef]$$' /proc/$$PPID/status

# The default matrix: the toy in every pipeline scenario and the real Helios
# transformer (diffusers, tiny) in three, x every design, seeds 0 and 1, on CUDA when
# available, else CPU. REPRO_ARGS adds options, e.g. REPRO_ARGS='--model helios wan'.
REPRO_ARGS ?=
repro: $(STAMP)
	$(call interruptible,$(ENV_PY) -m harness repro $(REPRO_ARGS))

# Re-render reports/latest (or REPORT_DIR) from its results.json, without re-running.
REPORT_DIR ?= reports/latest
report: $(STAMP)
	$(call interruptible,$(ENV_PY) -m harness report $(REPORT_DIR))

# Costs per design, side by side in one run: reports/bench/bench.json and bench.md.
bench: $(STAMP)
	$(call interruptible,$(ENV_PY) -m harness bench)

# How we know the harness catches bugs: mutation kill rate, concurrency, memory.
selfcheck: $(STAMP)
	$(call interruptible,$(ENV_PY) -m harness selfcheck)

# Every hook configuration the installed diffusers ships, on tiny transformers, through the
# differential check with and without the documented reset: the table, and a folder per finding.
# HUNT_LIBRARY=torch (or bitsandbytes, accelerate, transformers, peft) runs that library's
# workflows (repro/recipes) instead.
HUNT_LIBRARY ?= diffusers
HUNT_ARGS ?=
hunt: $(HUNT_STAMP)
	$(call interruptible,$(ENV_PY) -m harness hunt $(HUNT_LIBRARY) $(HUNT_ARGS))
