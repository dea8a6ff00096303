"""What a command line can name, without importing torch: ``--help`` answers at once,
and the choices are checked against these names before any model or cache is loaded.

The registries that implement them (``repro.serving.STRATEGIES``,
``repro.models.toy.PRESETS``, ``repro.guard.GRAD_MODES``) are built from these or are
checked against them by a test (tests/test_layout.py)."""

from __future__ import annotations

# The pipeline scenarios ``python -m harness repro`` and ``compare`` serve (repro.serving.STRATEGIES).
SCENARIOS = ("freed_address_reused", "natural_reuse", "storage_swapped", "persistent_buffer",
             "persistent_buffer_inference")
# Sizes of the toy model (repro.models.toy.PRESETS).
PRESETS = ("tiny", "helios")
# diffusers architectures (repro.models.diffusers_video.ARCHITECTURES); diffusers is imported only for these
REAL_MODELS = ("helios", "wan", "ltx", "allegro", "sana_video", "pixart", "sana")
MODELS = ("toy", *REAL_MODELS)
# The diffusers versions the real models are tested with; the same range as the
# ``diffusers`` extra in pyproject.toml (a test keeps the two equal).
DIFFUSERS_RANGE = ">=0.37,<0.43"
# Model dtypes a run may ask for: names of torch dtypes.
MODEL_DTYPES = ("float32", "bfloat16")

# Grad mode around every call into a cache: name -> the torch context manager's name.
GRAD_MODES = {"no_grad": "no_grad", "inference": "inference_mode", "enabled": "enable_grad"}
DEFAULT_TIMEOUT = 10.0  # seconds for one call of the cache
# Hygiene a cache promises beside safety; each asks for the checks of those before it, and more.
CONTRACTS = ("none", "bounded", "lru")
