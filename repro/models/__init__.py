"""Video models behind one small interface (:class:`VideoModel`): the toy Helios and
real diffusers architectures. ``load_model(spec, ...)`` builds one by name or from
``package.module:factory``."""

from __future__ import annotations

import importlib.util

import torch

from repro.choices import DIFFUSERS_RANGE, MODELS, REAL_MODELS  # noqa: F401 - the model names, kept light
from repro.models.base import STATS, Observer, VideoModel
from repro.spec import load_callable



class ModelSpecError(ValueError):
    """A model spec that names nothing buildable (one line, for the command line)."""


def load_model(spec: str, device: torch.device, steps: int | None = None, preset: str = "tiny",
               dtype: torch.dtype | None = None) -> VideoModel:
    """Build the model ``spec`` names: ``toy``, one of ``REAL_MODELS``, or
    ``package.module:factory``, a callable ``factory(device=..., steps=..., dtype=...)``
    (``None`` meaning its default) that returns a :class:`VideoModel`."""
    if spec == "toy":
        from repro.models.toy import ToyHelios, preset as toy_preset
        cfg = toy_preset(preset, **({"steps": steps} if steps else {}), **({"dtype": dtype} if dtype else {}))
        return ToyHelios(cfg, device)
    if preset != "tiny":
        raise ModelSpecError(f"--preset {preset} applies to the toy model only")
    if spec in REAL_MODELS:
        _require_diffusers(spec)
        try:
            from repro.models.diffusers_video import build
        except ImportError as exc:  # installed, but a version without the classes these models use
            raise ModelSpecError(_diffusers_hint(spec, f"the installed diffusers does not have them ({exc})")) from None
        return build(spec, device, steps, dtype)
    factory = _factory(spec)
    try:
        model = factory(device=device, steps=steps, dtype=dtype)
    except TypeError as exc:  # not called the way a model factory is
        raise ModelSpecError(f"model {spec!r}: factory(device=, steps=, dtype=) failed: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - a user's factory may raise anything; one line says what
        raise ModelSpecError(f"model {spec!r}: the factory raised {type(exc).__name__}: {exc}") from None
    if not isinstance(model, VideoModel):
        raise ModelSpecError(f"model {spec!r}: the factory returned {type(model).__name__}, not a VideoModel")
    model.name = spec if not model.name else model.name
    return model


def check_model_spec(spec: str) -> None:
    """Fail early, in one line, on a spec that cannot name a model (nothing is built)."""
    if spec in REAL_MODELS:
        _require_diffusers(spec)
    if spec in MODELS:
        return
    _factory(spec)


def import_model(spec: str) -> None:
    """Import what building ``spec`` needs, building nothing (a warm process does this once)."""
    if spec == "toy":
        import repro.models.toy  # noqa: F401
    elif spec in REAL_MODELS:
        _require_diffusers(spec)
        import repro.models.diffusers_video  # noqa: F401
    else:
        _factory(spec)


def _require_diffusers(spec: str) -> None:
    """Find diffusers without importing it (an import takes seconds)."""
    if importlib.util.find_spec("diffusers") is None:
        raise ModelSpecError(_diffusers_hint(spec, "diffusers is not installed"))


def _diffusers_hint(spec: str, why: str) -> str:
    return (f"model {spec!r} needs diffusers{DIFFUSERS_RANGE}: {why}; install it with "
            f"pip install 'diffusers{DIFFUSERS_RANGE}' (make repro and make test do, in .venv)")


def _factory(spec: str):
    return load_callable(spec, ModelSpecError, f"model {spec!r}",
                         f"unknown model {spec!r}: choose {', '.join(MODELS)} or package.module:factory")


__all__ = ["DIFFUSERS_RANGE", "MODELS", "REAL_MODELS", "STATS", "ModelSpecError", "Observer", "VideoModel",
           "check_model_spec", "import_model", "load_model"]
